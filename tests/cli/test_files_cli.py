"""`run --out` keeps the file's mode and links, says a full or read-only disk in words, and a run that fails
keeps what it made."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextdeck._cli import main

DOC = [{"type": "state", "data": {}},
       {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.a", "_output": 1}]}]


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main(["run", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC, ensure_ascii=False))
    return path


def test_out_keeps_the_mode_of_the_file(capsys, doc: Path, tmp_path: Path) -> None:
    """`--out` over a 0644 file leaves it 0644 (it became 0600)."""
    out = tmp_path / "out.json"
    out.write_text("[]")
    out.chmod(0o644)
    assert run(capsys, doc, "--out", out)[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert len(json.loads(out.read_text())) == 3


def test_out_writes_through_a_symbolic_link(capsys, doc: Path, tmp_path: Path) -> None:
    """`--out link` writes the link's target; the link stays (it was replaced by a plain file)."""
    real = tmp_path / "real.json"
    real.write_text("[]")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert run(capsys, doc, "--out", link)[0] == 0
    assert link.is_symlink()
    assert len(json.loads(real.read_text())) == 3


def test_a_full_disk_is_said_in_words(capsys, doc: Path, full_disk: Path) -> None:
    """ENOSPC: exit 1, "No space left on device" and the file named, no traceback, the old file whole."""
    big = json.loads(doc.read_text())
    big[0]["data"] = {"text": "x" * 200_000}
    doc.write_text(json.dumps(big, ensure_ascii=False))
    out = full_disk / "doc.json"
    old = out.read_bytes()
    code, _, err = run(capsys, doc, "--out", out)
    assert code == 1
    assert f"contextdeck: cannot write {out}: No space left on device" in err
    assert out.read_bytes() == old
    assert [p.name for p in full_disk.iterdir()] == ["doc.json"]


def test_a_read_only_file_system_is_said_in_words(capsys, doc: Path, read_only_disk: Path) -> None:
    """EROFS: exit 1, "Read-only file system", no traceback."""
    out = read_only_disk / "doc.json"
    code, _, err = run(capsys, doc, "--out", out)
    assert code == 1
    assert f"contextdeck: cannot write {out}: Read-only file system" in err


def test_a_read_only_file_is_refused(capsys, doc: Path, tmp_path: Path) -> None:
    """A file without write permission is not replaced by `--out`."""
    out = tmp_path / "out.json"
    out.write_text("[]")
    out.chmod(0o444)
    code, _, err = run(capsys, doc, "--out", out)
    assert code == 1
    assert f"contextdeck: cannot write {out}: the file is read-only" in err
    assert out.read_text() == "[]"


ACTIVITIES = """
from contextdeck.engine import activity

@activity("first")
def first(call, tool, context):
    return "made"

@activity("huge")
def huge(call, tool, context):
    return 10 ** 5000

class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message")

@activity("unprintable")
def unprintable(call, tool, context):
    raise Unprintable()
"""


def test_a_result_that_could_not_be_saved_keeps_what_ran(tmp_path: Path) -> None:
    """An activity returning 10**5000 after another call ran: the first output is written, the failure is said
    in a line, no traceback (the whole output was lost before)."""
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps([
        {"type": "state", "data": {}},
        {"type": "plan", "plan": [{"_tool": "first", "_outputPath": "†state.a"},
                                  {"_tool": "huge", "after": "†state.a", "_outputPath": "†state.b"}]},
    ], ensure_ascii=False))
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, "-m", "contextdeck", "run", str(doc), "--activities",
                           str(tmp_path / "acts.py"), "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert "digits" in done.stderr
    written = json.loads(out.read_text())
    assert (written[2]["kind"], written[2]["data"]) == ("state", {"a": "made"})


def test_an_exception_that_cannot_be_printed_is_named(tmp_path: Path) -> None:
    """An activity raising an exception whose `__str__` raises: the call fails, named by its class."""
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps([{"type": "state", "data": {}},
                               {"type": "plan", "plan": [{"_tool": "unprintable", "_outputPath": "†state.a"}]}],
                              ensure_ascii=False))
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    done = subprocess.run([sys.executable, "-m", "contextdeck", "run", str(doc), "--activities",
                           str(tmp_path / "acts.py")], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert "Unprintable" in done.stderr
    assert json.loads(done.stdout)[-1]["type"] == "error"


def test_a_run_stopped_by_an_error_writes_what_it_made(capsys, monkeypatch, doc: Path, tmp_path: Path) -> None:
    """An error that is no call's own stops the run: the outputs made so far are written first, then the
    error is one line, exit 1 (it was a traceback, and nothing was written)."""
    from contextdeck import _cli

    original = _cli._drive

    async def drive_then_fail(execution: Any, steps: Any) -> int:
        await original(execution, steps)
        raise RuntimeError("the disk controller caught fire")

    monkeypatch.setattr(_cli, "_drive", drive_then_fail)
    out = tmp_path / "out.json"
    code, _, err = run(capsys, doc, "--steps", 5, "--out", out)
    assert code == 1
    assert err == ("contextdeck: the run stopped: RuntimeError: the disk controller caught fire "
                   f"(what it had made is written to {out})\n")
    assert json.loads(out.read_text())[2]["data"] == {"a": 1}


def test_an_internal_error_is_one_line(capsys, monkeypatch, doc: Path) -> None:
    """A bug of ours ends in one line and exit 70, never a traceback."""
    from contextdeck import _cli

    def broken(args: Any) -> int:
        raise KeyError("nowhere")

    monkeypatch.setattr(_cli, "_validate", broken)
    monkeypatch.delenv("CONTEXTDECK_TRACEBACK", raising=False)
    code = main(["validate", str(doc)])
    assert code == 70
    assert capsys.readouterr().err == ("contextdeck: internal error: KeyError: 'nowhere' "
                                       "(set CONTEXTDECK_TRACEBACK=1 to see where)\n")
