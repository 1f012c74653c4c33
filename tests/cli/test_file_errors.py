"""Every file the command line reads that is not JSON is said one way: `FILE:LINE:COLUMN: reason`, with the same
reason for a document, a turn, a dataset, a baseline, a trace, a cassette and a tool registry (format.md §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextdeck._cli import main

# What each input is given as, and the command that reads it (`{}` is the bad file).
READERS = {
    "document": (".json", ["validate", "{}"]),
    "JSON Lines document": (".jsonl", ["validate", "{}"]),
    "turn": (".json", ["run", "doc.json", "--turn", "{}"]),
    "dataset": (".jsonl", ["eval", "doc.json", "--inputs", "{}", "--dry-run"]),
    "baseline": (".jsonl", ["eval", "doc.json", "--inputs", "cases.jsonl", "--dry-run", "--baseline", "{}"]),
    "trace": (".json", ["import", "{}"]),
    "trace log": (".jsonl", ["import", "{}"]),
    "cassette": (".jsonl", ["ask", "doc.json", "--llm", "http://127.0.0.1:9", "--model", "m", "--cassette", "{}",
                            "--replay"]),
    "tool registry": (".json", ["validate", "doc.json", "--tools", "{}"]),
}

# A second line that breaks (the first opens the array, or is blank in JSON Lines), and what is said of it.
BROKEN = {
    "a syntax error": (b'{"input": {"q": 2},, "x": 1}', "2:20: Expecting property name enclosed in double quotes"),
    "a byte that is not UTF-8": (b'{"input": {"q": "caf\xe9"}}', "2:21: not valid UTF-8 (byte 0xe9)"),
}


@pytest.mark.parametrize("broken", BROKEN)
@pytest.mark.parametrize("reader", READERS)
def test_a_file_that_is_not_json_is_said_at_its_line_and_column_by_every_reader(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str,
        broken: str) -> None:
    """A document, a turn, a dataset, an experiment's results, a trace, a cassette and a tool registry file that
    does not parse are each refused (exit 1) with the file, the line and the column of the fault, and the same
    words for the same fault."""
    monkeypatch.chdir(tmp_path)
    Path("doc.json").write_text(json.dumps([{"type": "input", "input": {"q": 1}}]), encoding="utf-8")
    Path("cases.jsonl").write_text('{"input": {"q": 1}}\n', encoding="utf-8")
    suffix, argv = READERS[reader]
    line, said = BROKEN[broken]
    text = b"[\n" + line + b"]\n" if suffix == ".json" else b"\n" + line + b"\n"
    folder = Path("tools") if reader == "tool registry" else Path(".")
    folder.mkdir(exist_ok=True)
    bad = folder / f"bad{suffix}"
    bad.write_bytes(text)
    code = main([str(folder if reader == "tool registry" else bad) if part == "{}" else part for part in argv])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{bad}:{said}\n" in err


# A whole first line each JSON Lines reader takes.
FIRST = {"JSON Lines document": {"type": "text", "text": "hi"}, "dataset": {"input": {"q": 1}},
         "baseline": {"status": "passed"}, "trace log": {"request": {"messages": [{"role": "user", "content": "hi"}]}}}


@pytest.mark.parametrize("reader", [reader for reader, (suffix, _) in READERS.items() if reader != "cassette"])
def test_a_file_cut_short_is_said_to_end_early_by_every_reader(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    """A file that stops inside a string is said to end early, at the string's place; in JSON Lines, that the lines
    before it can be read without it. (A cassette's cut last line is its last answer, asked again: models.md.)"""
    monkeypatch.chdir(tmp_path)
    Path("doc.json").write_text(json.dumps([{"type": "input", "input": {"q": 1}}]), encoding="utf-8")
    Path("cases.jsonl").write_text('{"input": {"q": 1}}\n', encoding="utf-8")
    suffix, argv = READERS[reader]
    first = b"[" if suffix == ".json" else json.dumps(FIRST[reader]).encode()
    folder = Path("tools") if reader == "tool registry" else Path(".")
    folder.mkdir(exist_ok=True)
    bad = folder / f"bad{suffix}"
    bad.write_bytes(first + b'\n{"a": "cut sh')
    code = main([str(folder if reader == "tool registry" else bad) if part == "{}" else part for part in argv])
    err = capsys.readouterr().err
    rest = "; without this last line, the lines before it can be read" if suffix == ".jsonl" else ""
    assert code == 1
    assert f"{bad}:2:7: Unterminated string starting at (the file ends early: truncated?{rest})\n" in err


@pytest.mark.parametrize("text", ['[{"type": "text", "text": "a"]\n',
                                  '{"context": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}}\n'])
def test_a_whole_file_with_a_bracket_that_closes_the_wrong_opener_does_not_end_early(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    """A `]` closing a `{` (or a `}` closing a `[`) is a mistake in a file that is all there: said at its place,
    never as a file cut short, however many brackets are left open when counted."""
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    code = main(["validate", str(bad)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{bad}:1:" in err
    assert "ends early" not in err
