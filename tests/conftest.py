"""Shared test set-up: the offscreen platform, and (for the headless run) a Qt that cannot be imported."""

from __future__ import annotations

import importlib.abc
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
_QT_MODULES = ("PySide6", "shiboken6", "qasync")


class _BlockQt(importlib.abc.MetaPathFinder):
    """Makes `import PySide6` fail, so the engine's tests prove the engine needs no Qt."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.split(".")[0] in _QT_MODULES:
            raise ImportError(f"{fullname} is blocked: the engine must not need Qt")
        return None


if os.environ.get("CONTEXTDECK_BLOCK_QT"):
    if any(name.split(".")[0] in _QT_MODULES for name in sys.modules):
        raise RuntimeError("Qt was imported before the block could be installed")
    sys.meta_path.insert(0, _BlockQt())


# A quick loop while working: `HYPOTHESIS_PROFILE=dev make test-engine-headless` (or the same variable before
# any pytest command) runs every property test with at most DEV_EXAMPLES examples, even those whose own
# `@settings` ask for hundreds. Without the variable every test runs as many examples as it asks for.
DEV_EXAMPLES = 10
settings.register_profile("dev", max_examples=DEV_EXAMPLES, deadline=None)
# CI (CI=true, as `.ci/run` is run) gates on a fixed set of examples: a run that passed on a clean checkout
# passes again there, and a landing never hangs on an example nobody has seen. The random search for new
# examples is every other run's job (and CONTEXTDECK_PROPERTY_EXAMPLES / the test's own settings for a long one).
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
# No profile has a deadline: an example's time is the machine's load as much as the code's (a loaded machine failed
# examples of 0.3 ms at 297 ms), and what the code costs is measured by the benchmarks, never by a test.
settings.register_profile("local", deadline=None)
_PROFILE = "ci" if os.environ.get("CI", "").lower() == "true" else "local"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", _PROFILE))


# A long hunt: `CONTEXTDECK_PROPERTY_TIMES=10` before any pytest command runs every property test with ten times
# the examples it asks for (its own `@settings`, or the profile's), without a deadline: on a loaded machine a
# slow example is not what the hunt looks for. Off (1) by default; the dev profile's cap wins over it.
TIMES = int(os.environ.get("CONTEXTDECK_PROPERTY_TIMES", "1"))


def _grouped(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`, the tests of an `xdist_group` go to one worker as one unit, scheduled first: the
    group's name after `@` in each test's id. pytest-xdist writes it into `item._nodeid`, which pytest 9 no
    longer reads (the id is `item._id`): every test of a group was its own unit, on whichever worker was free,
    and the installed wheel was built on each worker."""
    if not getattr(config.option, "loadgroup", False):  # (set on xdist's workers only)
        return
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid.rpartition("]")[2]:  # (not already: an xdist that reaches the id)
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]


class _Groups:
    @pytest.hookimpl(trylast=True)  # (after xdist's own hook: `_grouped` sees whether it reached the id)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        _grouped(config, items)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Groups(), "contextdeck-xdist-groups")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under the dev profile, caps the examples of tests whose own settings ask for more; with
    CONTEXTDECK_PROPERTY_TIMES, multiplies every test's examples."""
    dev = os.environ.get("HYPOTHESIS_PROFILE") == "dev"
    if not dev and TIMES <= 1:
        return
    done: set[int] = set()  # a parametrized test's items share one function: multiplied once
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        own = getattr(test, "_hypothesis_internal_use_settings", None)  # where @given keeps a test's settings
        if own is None or id(test) in done:
            continue
        done.add(id(test))
        if dev:
            wanted = settings(own, max_examples=min(own.max_examples, DEV_EXAMPLES))
        else:
            wanted = settings(own, max_examples=own.max_examples * TIMES, deadline=None)
        test._hypothesis_internal_use_settings = wanted  # type: ignore[union-attr]


@pytest.fixture
def fake_llm() -> Iterator[Any]:
    """An OpenAI-compatible server on 127.0.0.1 with scripted replies (tests/fake_llm.py)."""
    # Imported before a window asks: the window imports the SDK on a worker thread while the test's wait runs,
    # seconds on a loaded machine, longer than the waits (on the GUI thread the wait itself was held up).
    import openai  # noqa: F401

    from fake_llm import FakeLLM

    with FakeLLM() as server:
        yield server


@pytest.fixture
def examples() -> Path:
    """The folder of bundled example documents."""
    return EXAMPLES


def _mount(target: Path, options: str) -> bool:
    """Mount a tmpfs at `target` (root on Linux only); False where that cannot be done."""
    import shutil
    import subprocess

    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    return done.returncode == 0


@contextmanager
def _tmpfs(folder: Path, *, read_only: bool) -> Iterator[Path]:
    """A 64 KiB tmpfs at `folder` holding `doc.json` (a small document), read-only if asked; skips the test
    where it cannot be mounted (only root on Linux can)."""
    import subprocess

    if not _mount(folder, "size=64k"):
        pytest.skip("needs root and mount (a tmpfs of 64 KiB)")
    try:
        (folder / "doc.json").write_text('[{"type": "state", "data": {}}]\n')
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB file system holding `doc.json`, with a little room left."""
    with _tmpfs(tmp_path / "full", read_only=False) as folder:
        yield folder


@pytest.fixture
def full_device(tmp_path: Path) -> Path:
    """A character device like /dev/full (every write fails with ENOSPC), made in `tmp_path`: a test never writes
    to /dev itself. Skips where device nodes cannot be made (only root on Linux can)."""
    device = tmp_path / "full"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except (OSError, AttributeError):
        pytest.skip("needs root to make a device node")
    return device


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a read-only file system holding `doc.json`."""
    with _tmpfs(tmp_path / "ro", read_only=True) as folder:
        yield folder
