"""The tests' quick profile: `HYPOTHESIS_PROFILE=dev` caps every property test's examples."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


def test_the_dev_profile_caps_the_examples_a_test_asks_for() -> None:
    """`HYPOTHESIS_PROFILE=dev` runs a test whose own settings ask for 600 examples with 10 (tests/conftest.py)."""
    test = "tests/engine/resolve/test_patch.py::test_a_write_that_leaves_the_difference_alone_acts_the_same"
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:pytest-qt", test,
         "--hypothesis-show-statistics"],
        cwd=ROOT, env={**os.environ, "HYPOTHESIS_PROFILE": "dev"}, capture_output=True, text=True, check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"\b10 passing", ran.stdout), ran.stdout


def test_a_long_hunt_multiplies_the_examples_every_test_asks_for(request: pytest.FixtureRequest,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`CONTEXTDECK_PROPERTY_TIMES=3` runs a test that asks for the default 100 examples with 300; the dev
    profile's cap wins over it (tests/conftest.py). In this process, through the conftest's own collection hook:
    the test above runs pytest afresh for the dev profile, which is how both reach a test."""
    conftest = next(plugin for plugin in request.config.pluginmanager.get_plugins()
                    if Path(getattr(plugin, "__file__", "")) == ROOT / "tests" / "conftest.py")
    monkeypatch.setattr(conftest, "TIMES", 3)  # what CONTEXTDECK_PROPERTY_TIMES=3 sets as the conftest is read

    def examples(**extra: str) -> int:
        ran: list[int] = []

        @settings(settings.get_profile("default"), database=None)  # the default 100 examples
        @given(st.integers())
        def asks_for_the_default(number: int) -> None:
            ran.append(number)

        for name in ("HYPOTHESIS_PROFILE", *extra):
            monkeypatch.delenv(name, raising=False)
        for name, value in extra.items():
            monkeypatch.setenv(name, value)
        conftest.pytest_collection_modifyitems([SimpleNamespace(obj=asks_for_the_default)])
        asks_for_the_default()
        return len(ran)

    assert examples() == 300
    assert examples(HYPOTHESIS_PROFILE="dev") == 10


def test_ci_runs_a_fixed_set_of_examples() -> None:
    """With CI=true (as `.ci/run` is run) the property tests are derandomized, so a clean checkout that passed
    passes again; elsewhere they search at random (tests/conftest.py)."""
    probe = "import conftest, hypothesis; print(hypothesis.settings.default.derandomize)"
    env = {key: value for key, value in os.environ.items() if key not in ("HYPOTHESIS_PROFILE", "CI")}

    def derandomized(**extra: str) -> str:
        ran = subprocess.run([sys.executable, "-c", probe], cwd=ROOT / "tests", env={**env, **extra},
                             capture_output=True, text=True, check=True)
        return ran.stdout.strip()

    assert derandomized(CI="true") == "True"
    assert derandomized() == "False"
