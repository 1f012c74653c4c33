"""The command line introduces itself."""

import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_help_lists_every_subcommand() -> None:
    """`contextdeck --help` succeeds and names each subcommand."""
    result = subprocess.run(
        [sys.executable, "-m", "contextdeck", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    for command in ("resolve", "render", "validate", "gui"):
        assert command in result.stdout


def test_gui_without_a_display_says_so() -> None:
    """`contextdeck gui` with no display and no platform chosen exits 1 with a clear message, not a Qt abort."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "contextdeck", "gui"], capture_output=True, text=True, env=env, check=False, timeout=60
    )
    assert result.returncode == 1
    assert "no display" in result.stderr


def test_version_names_the_package_version() -> None:
    """`contextdeck --version` prints the version (an error exit 2 before) and exits 0."""
    from contextdeck import __version__

    result = subprocess.run([sys.executable, "-m", "contextdeck", "--version"], capture_output=True, text=True,
                            check=False)
    assert (result.returncode, result.stdout) == (0, f"contextdeck {__version__}\n")


def test_the_window_program_names_its_version_too(capsys) -> None:
    """`contextdeck-gui --version` (`gui --version`) prints the version and exits 0, as `contextdeck --version`
    does: it was a usage error showing the other command's usage."""
    from contextdeck import __version__
    from contextdeck._cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["gui", "--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"contextdeck {__version__}\n"


def test_examples_lists_the_bundled_documents() -> None:
    """`contextdeck examples` prints the path of every bundled example document, each one a file."""
    result = subprocess.run([sys.executable, "-m", "contextdeck", "examples"], capture_output=True, text=True,
                            check=True)
    paths = [Path(line) for line in result.stdout.splitlines()]
    assert "refund_workflow.json" in [path.name for path in paths]
    assert [path.parent.name + "/" + path.name for path in paths if path.parent.name == "delegates"] == [
        "delegates/Researcher.json", "delegates/report.json"]
    assert all(path.is_file() for path in paths)
