"""The stepwise parser (a message at a time, for a responsive window) reads every document as the engine does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import DocumentError, parse_document
from contextdeck.gui._stepwise import Cancelled, parse_stepwise

CASES = [
    b"[]",
    b"  [ ]  \n",
    b'[{"type":"text","text":"hi"}]',
    b'[{"type":"state","n":123456789012345678901234567890}]',
    b'[{"type":"state","n":1.5e300,"u":"\\u00e9\\ud83d\\ude00 caf\xc3\xa9","z":-0.0}]',
    b'[{"type":"state","a":1,"a":2}]',
    b'{"schema":{"type":"object"},"context":[{"type":"text","text":"x"}],"extra":[1,2]}',
    b'{"context":[],"context":[{"type":"text","text":"later"}]}',
    b'{"context":[{"type":"text","text":"x"}],"solution":{"calls":[],"output":null}}',
    b"\xef\xbb\xbf[]",
    b'{"context":[],"n":1234567,"m":-0.5e10}',
    b'[{"type":"state","x":' + b"[" * 250 + b"]" * 250 + b"}]",
]

BAD = [
    b"",
    b"[",
    b'[{"type":"text"},]',
    b'[{"type":"text"}] trailing',
    b'[{"type":"state","x":NaN}]',
    b'[{"type":"state","x":Infinity}]',
    b'[{"type":"text","text":"\xff"}]',
    b'[{"type":"state","x":1e400}]',
    b'[{"type":"state","x":' + b"[" * 300 + b"]" * 300 + b"}]",
    b'{"context":[], "schema":' + b"[" * 300 + b"]" * 300 + b"}",
    b"[5]",
    b'[{"text":"no type"}]',
    b'{"schema":{}}',
    b'{"context":{}}',
    b'"just a string"',
    b"[" * 100_000 + b"]" * 100_000,
]


def stepwise(raw: bytes, *, jsonl: bool = False):
    return parse_stepwise(raw, "doc.json", jsonl=jsonl, path=None, report=lambda _: None, cancelled=lambda: False)


def same(a, b) -> bool:
    return (json.dumps(a.to_json()), a.shape, json.dumps(a.schema), json.dumps(a.solution)) == (
        json.dumps(b.to_json()), b.shape, json.dumps(b.schema), json.dumps(b.solution))


@pytest.mark.parametrize("raw", CASES)
def test_reads_what_the_engine_reads(raw: bytes) -> None:
    """Valid documents give the same messages, shape, schema and solution as the engine's parse."""
    assert same(stepwise(raw), parse_document(raw, "doc.json"))


@pytest.mark.parametrize("raw", BAD)
def test_refuses_with_the_engines_own_error(raw: bytes) -> None:
    """A malformed document raises exactly the engine's DocumentError (file, line, column, message index)."""
    with pytest.raises(DocumentError) as engine:
        parse_document(raw, "doc.json")
    with pytest.raises(DocumentError) as ours:
        stepwise(raw)
    assert str(ours.value) == str(engine.value)


@pytest.mark.parametrize(
    "raw", [b'{"type":"text","text":"a"}\n\n{"type":"state","x":1}\n', b'{"type":"text"}\n{oops\n', b"[1]\n"]
)
def test_json_lines_read_and_fail_as_the_engine_does(raw: bytes) -> None:
    """JSON Lines give the engine's messages, or its error naming the line."""
    try:
        expected = parse_document(raw, "doc.json", jsonl=True)
    except DocumentError as error:
        with pytest.raises(DocumentError, match=re.escape(str(error))):
            stepwise(raw, jsonl=True)
    else:
        assert same(stepwise(raw, jsonl=True), expected)


JSON_LINES = [b'{"type":"text","text":"a"}\n\n{"type":"state","x":1}\n', b'{"type":"text"}\n{oops\n', b"[1]\n",
              b'{"type":"text","text":"a"}\r\n   \n{"type":"text","text":"\xc3\xa9"}', b'\n\n{"type":"text"}\n[2]']


@pytest.mark.parametrize("size", [1, 3, 7])
@pytest.mark.parametrize("raw", JSON_LINES)
def test_json_lines_read_in_chunks_as_the_engine_reads_them(raw: bytes, size: int) -> None:
    """The loader's chunks are split into lines a chunk at a time, never joined: the same messages, or the
    engine's error naming the same line."""
    chunks = [raw[start:start + size] for start in range(0, len(raw), size)]

    def read() -> object:
        return parse_stepwise(chunks, "doc.json", jsonl=True, path=None, report=lambda _: None,
                              cancelled=lambda: False)

    reads_as_the_engine(raw, read, jsonl=True)


def test_the_examples_read_the_same(examples: Path) -> None:
    """Every bundled example parses to the engine's document."""
    for example in sorted(examples.glob("*.json")):
        raw = example.read_bytes()
        assert same(stepwise(raw), parse_document(raw, example.name)), example.name


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
messages = st.dictionaries(st.text(max_size=5), json_values, max_size=4).map(lambda m: {**m, "type": "state"})


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, max_size=6), st.sampled_from([None, 2]), st.booleans(), st.integers(1, 40))
def test_any_document_reads_the_same(values, indent, request, size) -> None:
    """Generated documents (any JSON in messages, either shape, any layout) read as the engine reads them,
    whole or handed over in decoded parts."""
    document = {"schema": {"a": 1}, "context": values} if request else values
    raw = json.dumps(document, indent=indent, ensure_ascii=False).encode("utf-8")
    expected = parse_document(raw, "doc.json")
    assert same(stepwise(raw), expected)
    in_pieces = parse_stepwise(raw, "doc.json", jsonl=False, path=None, report=lambda _: None,
                               cancelled=lambda: False, parts=in_parts(raw, size))
    assert same(in_pieces, expected)


def test_progress_rises_and_cancel_stops() -> None:
    """Progress grows to near the whole; a cancel between messages raises Cancelled."""
    raw = json.dumps([{"type": "text", "text": str(number)} for number in range(5000)]).encode()
    seen: list[float] = []
    parse_stepwise(raw, "big.json", jsonl=False, path=None, report=seen.append, cancelled=lambda: False)
    assert seen == sorted(seen)
    assert len(seen) > 5
    assert seen[-1] > 0.9
    with pytest.raises(Cancelled):
        parse_stepwise(raw, "big.json", jsonl=False, path=None, report=lambda _: None, cancelled=lambda: True)


def reads_as_the_engine(raw: bytes, read: Any, *, jsonl: bool = False) -> None:
    """`read()` gives the engine's document for `raw`, or fails with the engine's own error, word for word."""
    try:
        expected = parse_document(raw, "doc.json", jsonl=jsonl)
    except DocumentError as error:
        message = str(error)
        with pytest.raises(DocumentError) as raised:
            read()
        assert str(raised.value) == message
        return
    assert same(read(), expected)


def in_parts(raw: bytes, size: int) -> list[str]:
    text = raw.decode("utf-8")
    return [text[start:start + size] for start in range(0, len(text), size)]


@pytest.mark.parametrize("size", [1, 3, 64])
@pytest.mark.parametrize("raw", CASES[:-1] + BAD[:-1])
def test_a_document_read_through_a_small_window_reads_the_same(raw: bytes, size: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader hands over the text decoded a chunk at a time and the reader never joins it whole: a value
    cut at any place between two parts (a number, a string, a key) reads as the engine reads it, and a bad
    document fails with the engine's own error."""
    from contextdeck.gui import _stepwise

    monkeypatch.setattr(_stepwise, "WINDOW", 4)
    try:
        parts = in_parts(raw, size)
    except UnicodeDecodeError:
        parts = None  # the loader hands over no text then
    def read() -> object:
        return parse_stepwise(raw, "doc.json", jsonl=False, path=None, report=lambda _: None,
                              cancelled=lambda: False, parts=parts)

    reads_as_the_engine(raw, read)


def test_the_window_stays_a_few_parts_long(monkeypatch: pytest.MonkeyPatch) -> None:
    from contextdeck.gui import _stepwise

    longest = [0]
    slide = _stepwise._Reader.slide

    def watched(reader: _stepwise._Reader, index: int, least: int) -> int:
        moved = slide(reader, index, least)
        longest[0] = max(longest[0], len(reader.text))
        return moved

    monkeypatch.setattr(_stepwise._Reader, "slide", watched)
    raw = json.dumps([{"type": "text", "text": "é" * number} for number in range(3000)]).encode()
    parts = in_parts(raw, 1 << 14)
    document = parse_stepwise(raw, "big.json", jsonl=False, path=None, report=lambda _: None,
                              cancelled=lambda: False, parts=parts)
    assert len(document.context) == 3000
    assert len(parts) > 200
    assert longest[0] <= _stepwise.WINDOW + 2 * (1 << 14)


def test_a_number_cut_between_two_parts_is_read_whole_by_the_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not by falling back on the engine's whole-file parse: the window grows until the number has ended."""
    from contextdeck.gui import _stepwise

    monkeypatch.setattr(_stepwise, "WINDOW", 4)
    monkeypatch.setattr(_stepwise, "parse_document", lambda *_, **__: pytest.fail("fell back on the engine"))
    raw = b'{"context":[],"n":1234567,"m":-0.5e10}'
    document = parse_stepwise(raw, "doc.json", jsonl=False, path=None, report=lambda _: None,
                              cancelled=lambda: False, parts=in_parts(raw, 3))
    assert document.envelope == {"context": [], "n": 1234567, "m": -0.5e10}
