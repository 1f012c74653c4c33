"""The stepwise parser (a message at a time, for a responsive window) reads every document as the engine does."""

from __future__ import annotations

import json
from pathlib import Path

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
]

BAD = [
    b"",
    b"[",
    b'[{"type":"text"},]',
    b'[{"type":"text"}] trailing',
    b'[{"type":"state","x":NaN}]',
    b'[{"type":"state","x":Infinity}]',
    b"\xef\xbb\xbf[]",
    b'[{"type":"text","text":"\xff"}]',
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
        with pytest.raises(DocumentError, match=str(error).replace("(", r"\(").replace(")", r"\)")):
            stepwise(raw, jsonl=True)
    else:
        assert same(stepwise(raw, jsonl=True), expected)


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
@given(st.lists(messages, max_size=6), st.sampled_from([None, 2]), st.booleans())
def test_any_document_reads_the_same(values, indent, request) -> None:
    """Generated documents (any JSON in messages, either shape, any layout) read as the engine reads them."""
    document = {"schema": {"a": 1}, "context": values} if request else values
    raw = json.dumps(document, indent=indent, ensure_ascii=False).encode("utf-8")
    assert same(stepwise(raw), parse_document(raw, "doc.json"))


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
