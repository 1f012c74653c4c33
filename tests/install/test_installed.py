"""What users install: the wheel built from the checkout's files, installed into a fresh venv outside it, and run
from another folder (no checkout on any path). Slow-ish (a build and an install from pip's cache): one build for
the whole module."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from contextdeck import __version__

# One worker runs the whole module, so the wheel is built once even when the suite runs on several (-n).
pytestmark = pytest.mark.xdist_group("installed wheel")
ROOT = Path(__file__).resolve().parents[2]
# The checkout's folders and the package they are installed as (setup.py maps them).
FOLDERS = {"packaging/contextdeck": "contextdeck", "engine": "contextdeck/engine", "gui": "contextdeck/gui",
           "resources": "contextdeck/resources"}


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    package: Path  # site-packages/contextdeck
    elsewhere: Path  # a folder outside the checkout, the commands' working folder
    env: dict[str, str]

    def run(self, *argv: str, program: str = "contextdeck") -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / program), *argv], cwd=self.elsewhere, env=self.env,
                              capture_output=True, text=True, timeout=300, check=False)


def tracked_files() -> list[Path]:
    """The checkout's files as a clean checkout of this tree would have them (committed or about to be)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [Path(name) for name in listed if name and (ROOT / name).is_file()]


@pytest.fixture(scope="session")  # (one build per worker even when another module's test runs between two of these)
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    source = base / "source"  # a clean copy: no build/, no .venv, no stale egg-info leaks into the wheel
    for name in tracked_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    stale = source / "build" / "lib" / "contextdeck" / "engine" / "_moved_away.py"  # an earlier build's module
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--wheel-dir", str(base / "dist"), str(source)], check=True)
    [wheel] = (base / "dist").glob("contextdeck-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # this venv's pip installs into the fresh one (--python): the dependencies come from pip's cache
    subprocess.run([*pip, "--python", str(venv / "bin" / "python"), "install", "--no-compile", str(wheel)], check=True)
    [package] = (venv / "lib").glob("python3*/site-packages/contextdeck")
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    # As a user's environment: none of the checkout's, and bytecode written (into the new venv) as Python does by
    # default, so that each command does not compile the package and its dependencies again (installed with
    # --no-compile: compiled as they are imported).
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONTEXTDECK_BLOCK_QT", "PYTHONDONTWRITEBYTECODE",
                          "PYTHONPYCACHEPREFIX")}
    # the user's folders, to see what the window leaves behind
    env |= {"HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config"),
            "XDG_DATA_HOME": str(base / "data"), "XDG_STATE_HOME": str(base / "state"),
            "XDG_CACHE_HOME": str(base / "cache"), "QT_QPA_PLATFORM": "offscreen"}
    return Installed(wheel, venv, package, elsewhere, env)


def test_the_wheel_holds_every_file_of_the_package(installed: Installed) -> None:
    """Every module, subpackage and resource of the four folders is in the wheel (examples/delegates/ too),
    and the manual (README.md, docs/) is copied in for Help; nothing else (no module left in build/lib by an
    earlier build)."""
    names = {name for name in zipfile.ZipFile(installed.wheel).namelist() if name.startswith("contextdeck/")}
    expected = {f"{FOLDERS[folder]}/{name.relative_to(folder)}"
                for name in tracked_files() for folder in FOLDERS if name.is_relative_to(folder)}
    manual = {f"contextdeck/resources/manual/{name}" for name in tracked_files()
              if name == Path("README.md") or name.parts[0] == "docs"}
    assert expected - names == set()
    assert manual - names == set()
    assert names - expected - manual == set()
    assert "contextdeck/resources/examples/delegates/Researcher.json" in names


def test_every_import_is_declared(installed: Installed) -> None:
    """Each third-party module the package imports belongs to a distribution it declares (jsonschema installs
    referencing today, but that is no promise)."""
    metadata = zipfile.ZipFile(installed.wheel).read(f"{installed.wheel.name.split('-')[0]}-{__version__}"
                                                     ".dist-info/METADATA").decode()
    declared = {_normal(re.split(r"[ ;<>=!~\[]", line.removeprefix("Requires-Dist: "))[0])
                for line in metadata.splitlines() if line.startswith("Requires-Dist: ") and "extra ==" not in line}
    owners = packages_distributions()
    undeclared = {}
    for module in installed.package.rglob("*.py"):
        if "examples" in module.parts:
            continue  # the examples are the user's code, run by the engine, not imported by the package
        for top in _imports(module):
            if top in sys.stdlib_module_names or top == "contextdeck":
                continue
            distributions = {_normal(name) for name in owners.get(top, [top])}
            if not distributions & declared:
                undeclared[top] = module.relative_to(installed.package)
    assert undeclared == {}


def test_version(installed: Installed) -> None:
    """`contextdeck --version` and `python -m contextdeck --version` name the installed version."""
    assert installed.run("--version").stdout == f"contextdeck {__version__}\n"
    assert installed.run("-m", "contextdeck", "--version", program="python").stdout == f"contextdeck {__version__}\n"
    assert installed.run("--help", program="contextdeck-gui").stdout.startswith("usage: contextdeck gui")


def test_validate_and_run_the_bundled_examples(installed: Installed) -> None:
    """`contextdeck examples` lists the installed examples; each validates; the refund example runs with its
    activities, and the delegates example finds its delegate beside it."""
    listed = installed.run("examples")
    examples = [Path(line) for line in listed.stdout.splitlines()]
    assert listed.returncode == 0
    assert examples
    assert all(path.is_relative_to(installed.package) and path.is_file() for path in examples)
    report = installed.package / "resources" / "examples" / "delegates" / "report.json"
    assert report in examples
    for example in examples:
        checked = installed.run("validate", str(example))
        assert (checked.returncode, checked.stderr) == (0, ""), example
    folder = installed.package / "resources" / "examples"
    ran = installed.run("run", str(folder / "refund_workflow.json"), "--activities",
                        str(folder / "refund_activities.py"), "--now", "2026-03-01T10:00:00Z", "--out", "out.json")
    assert ran.returncode == 0, ran.stderr
    assert "4 call(s) run" in ran.stderr
    assert (installed.elsewhere / "out.json").stat().st_size > (folder / "refund_workflow.json").stat().st_size
    delegated = installed.run("run", str(report), "--out", "report-out.json")
    assert "waits for the output of its delegate 'Researcher'" in delegated.stderr


def test_the_window_renders_and_leaves_nothing_behind(installed: Installed) -> None:
    """`contextdeck gui --screenshot` renders the bundled example offscreen (icons and all the GUI's
    modules load from the installed package), and writes nothing into the user's folders."""
    shot = installed.elsewhere / "shot.png"
    made = installed.run("gui", "--screenshot", str(shot))
    assert made.returncode == 0, made.stderr
    picture = QImage(str(shot))
    assert (picture.width(), picture.height()) >= (1000, 600)
    left = [path for folder in ("config", "data", "state", "cache") for path in
            (installed.elsewhere.parent / folder).rglob("*") if path.is_file()]
    assert left == []


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found
