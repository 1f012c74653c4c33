"""The repository's commit-msg hook keeps subjects at most 72 characters; `make hooks` installs it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / ".githooks" / "commit-msg"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh repository whose hooks are this one's, with a file staged."""
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "test@example.invalid")
    _git(tmp_path, "config", "user.name", "Test")
    _git(tmp_path, "config", "core.hooksPath", str(HOOK.parent))
    (tmp_path / "file.txt").write_text("x\n", encoding="utf-8")
    _git(tmp_path, "add", "file.txt")
    return tmp_path


def test_a_subject_of_72_characters_is_committed(repo: Path) -> None:
    subject = "é" * 72  # characters, not bytes
    made = _git(repo, "commit", "-q", "-m", subject, "-m", "The why, in the body, " * 10)
    assert made.returncode == 0, made.stderr
    assert _git(repo, "log", "--format=%s").stdout.strip() == subject


def test_a_longer_subject_is_refused_with_its_length(repo: Path) -> None:
    made = _git(repo, "commit", "-q", "-m", "x" * 73)
    assert made.returncode != 0
    assert "73 characters, at most 72" in made.stderr
    assert _git(repo, "rev-parse", "-q", "--verify", "HEAD").returncode != 0  # nothing was committed


def test_the_hook_reads_the_first_line_that_is_not_a_comment(tmp_path: Path) -> None:
    message = tmp_path / "message"
    message.write_text("# " + "c" * 100 + "\n\nShort subject\n\n" + "b" * 200 + "\n", encoding="utf-8")
    assert subprocess.run([str(HOOK), str(message)], check=False).returncode == 0
    message.write_text("# comment\n" + "s" * 80 + "\n", encoding="utf-8")
    assert subprocess.run([str(HOOK), str(message)], capture_output=True, check=False).returncode == 1


def test_make_hooks_installs_them_and_is_harmless_outside_a_checkout(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("needs make")
    outside = tmp_path / "outside"
    outside.mkdir()
    # Run from a folder with no git checkout above it: nothing to install, no error.
    made = subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "hooks"], cwd=outside, capture_output=True, text=True,
        check=False, env={"PATH": "/usr/bin:/bin", "GIT_CEILING_DIRECTORIES": str(tmp_path)},
    )
    assert made.returncode == 0, made.stderr
    inside = tmp_path / "inside"
    inside.mkdir()
    _git(inside, "init", "-q")
    made = subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "hooks"], cwd=inside, capture_output=True, text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert _git(inside, "config", "core.hooksPath").stdout.strip() == ".githooks"
