"""Documents (SPEC 1): three shapes, faithful round trips, and clear errors for bad files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import ContentError, Context, Document, DocumentError, Shape, load_document, parse_document
from contextdeck.engine.document import _json
from contextdeck.engine.document._json import MAX_DEPTH

MESSAGES = [
    {"type": "text", "role": "system", "text": "Привет, 世界 — ✓ †"},
    {"zeta": 1, "type": "state", "alpha": {"z": 1, "a": [1.0, 1e300, -0.0, 123456789012345678901234567890]}},
    {"type": "data", "kind": "user", "data": {"big": -(2**64), "f": 0.1, "n": None, "t": True}},
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def shapes(tmp_path: Path) -> dict[Shape, tuple[Path, object]]:
    request = {"solution": {"calls": [], "output": None}, "context": MESSAGES, "schema": {"type": "object"}, "x": 1}
    return {
        Shape.ARRAY: (write(tmp_path, "a.json", json.dumps(MESSAGES, ensure_ascii=False)), MESSAGES),
        Shape.REQUEST: (write(tmp_path, "r.json", json.dumps(request, indent=4)), request),
        Shape.JSONL: (write(tmp_path, "l.jsonl", "".join(json.dumps(m) + "\n" for m in MESSAGES)), MESSAGES),
    }


def saved_value(path: Path, shape: Shape) -> object:
    text = path.read_text(encoding="utf-8")
    if shape is Shape.JSONL:
        return [json.loads(line) for line in text.split("\n") if line]
    return json.loads(text)


@pytest.mark.parametrize("shape", list(Shape))
def test_unedited_save_keeps_value_shape_and_key_order(tmp_path, shape) -> None:
    """Load then save gives the same JSON value in the same shape with keys in the same order."""
    path, original = shapes(tmp_path)[shape]
    document = load_document(path)
    assert document.shape is shape
    out = tmp_path / ("out" + path.suffix)
    document.save(out)
    # json.dumps keeps key order and tells 1.0 from 1: equal text means equal value and equal order.
    assert json.dumps(saved_value(out, shape)) == json.dumps(original)


@pytest.mark.parametrize("shape", list(Shape))
def test_save_twice_is_byte_identical(tmp_path, shape) -> None:
    """A saved document, loaded and saved again, is written byte for byte the same."""
    path, _ = shapes(tmp_path)[shape]
    first = load_document(path)
    first.save(tmp_path / ("one" + path.suffix))
    again = load_document(tmp_path / ("one" + path.suffix))
    again.save(tmp_path / ("two" + path.suffix))
    assert (tmp_path / ("one" + path.suffix)).read_bytes() == (tmp_path / ("two" + path.suffix)).read_bytes()


def test_numbers_keep_their_type_and_value(tmp_path) -> None:
    """1.0 stays a float, 1e300 stays 1e300, integers beyond 64 bits stay exact."""
    path, _ = shapes(tmp_path)[Shape.ARRAY]
    alpha = load_document(path).context[1]["alpha"]["a"]
    assert [type(v) for v in alpha] == [float, float, float, int]
    assert alpha[1] == 1e300
    assert alpha[3] == 123456789012345678901234567890


def test_request_keeps_schema_solution_and_other_keys(tmp_path) -> None:
    """A saved request exposes its schema and solution, and keeps unknown keys where they were."""
    document = load_document(shapes(tmp_path)[Shape.REQUEST][0])
    assert document.schema == {"type": "object"}
    assert document.solution == {"calls": [], "output": None}
    assert list(document.to_json()) == ["solution", "context", "schema", "x"]


def test_an_edit_changes_only_what_was_edited(tmp_path) -> None:
    """After replacing one message, every other message saves exactly as it was loaded."""
    path, original = shapes(tmp_path)[Shape.ARRAY]
    document = load_document(path)
    document.context.replace(0, {"type": "text", "text": "edited"})
    document.save()
    saved = saved_value(path, Shape.ARRAY)
    assert saved[0] == {"type": "text", "text": "edited"}
    assert json.dumps(saved[1:]) == json.dumps(original[1:])


def test_a_byte_order_mark_is_accepted(tmp_path) -> None:
    """A file that starts with a UTF-8 byte order mark loads like one without it."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(MESSAGES).encode())
    assert load_document(path).context.messages == MESSAGES


def test_jsonl_skips_blank_lines_and_takes_crlf(tmp_path) -> None:
    """Blank lines are ignored and Windows line ends are fine in JSON Lines."""
    path = tmp_path / "w.jsonl"
    path.write_bytes(b'{"type":"text","text":"a"}\r\n\r\n{"type":"state","data":1}\r\n')
    assert len(load_document(path).context) == 2


def test_empty_documents_load() -> None:
    """An empty array and an empty JSON Lines file are empty contexts."""
    assert len(parse_document(b"[]").context) == 0
    assert len(parse_document(b"", jsonl=True).context) == 0


# -- errors -----------------------------------------------------------------------------------


def error_of(raw: bytes, jsonl: bool = False) -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        parse_document(raw, "doc.json", jsonl=jsonl)
    return caught.value


@pytest.mark.parametrize(
    ("raw", "line", "column"),
    [
        (b'[\n  {"type": "text",\n   "text": "a",,}\n]', 3, 16),
        (b'[{"type": "text"}', 1, 18),
        (b'[{"type": "t\xc3\xa9", "x": tru}]', 1, 22),
        (b"[1, NaN]", 1, 5),
        (b"[1e400]", 1, 2),
        (b"", 1, 1),
    ],
)
def test_malformed_json_names_line_and_column(raw, line, column) -> None:
    """Malformed JSON is refused with the file, the line and the column (columns count characters)."""
    error = error_of(raw)
    assert (error.path, error.line, error.column) == ("doc.json", line, column)
    assert str(error).startswith(f"doc.json:{line}:{column}: ")


@pytest.mark.parametrize(("raw", "line", "column", "byte"), [
    (b'[{"type": "text", "text": "\xff"}]', 1, 28, "0xff"),
    (b'[{"type": "text", "text": "ok"},\n {"type": "text", "text": "caf\xe9"}]', 2, 31, "0xe9"),
    ('[{"type": "text", "text": "\u00e9t\u00e9"},\n\n  "\u00fc'.encode() + b"\xc3", 3, 5, "0xc3"),  # cut-off
])
def test_invalid_utf8_is_refused_at_its_line_and_column(raw: bytes, line: int, column: int, byte: str) -> None:
    """Bytes that are not UTF-8 are reported where they are (columns count the characters before them),
    with the byte, not at 1:1 and not as a UnicodeDecodeError."""
    error = error_of(raw)
    assert (error.line, error.column) == (line, column)
    assert error.reason == f"not valid UTF-8 (byte {byte})"


def test_invalid_utf8_in_json_lines_is_refused_at_its_line() -> None:
    """In JSON Lines the line is the file's line."""
    error = error_of(b'{"type": "text", "text": "ok"}\n{"type": "text", "text": "caf\xe9"}\n', jsonl=True)
    assert (error.line, error.column) == (2, 30)


@pytest.mark.parametrize(
    ("raw", "index", "words"),
    [
        (b'[{"type": "text"}, 5]', 1, "got a number"),
        (b'[{"type": "text"}, {"text": "a"}]', 1, "'type'"),
        (b'[{"type": ""}]', 0, "'type'"),
        (b'[{"type": 3}]', 0, "'type'"),
        (b'{"context": [[]]}', 0, "got an array"),
        (b'[{"type": "state"}, {"_tool": "summarize", "_scopes": ["state"]}]', 1,  # 015's "Context and Call"
         "this is a call: calls go in a plan message's 'plan' or the solution's 'calls'"),
    ],
)
def test_bad_messages_name_their_index(raw, index, words) -> None:
    """A message that is not an object with a string type is refused, naming its index."""
    error = error_of(raw)
    assert error.message_index == index
    assert words in error.reason
    assert f"message {index}" in str(error)


def test_jsonl_errors_name_the_line() -> None:
    """In JSON Lines, malformed JSON and bad messages both name the line of the file."""
    raw = b'{"type": "text"}\n\n{"type": "text", oops}\n'
    assert (error_of(raw, jsonl=True).line, error_of(raw, jsonl=True).column) == (3, 18)
    bad = error_of(b'{"type": "text"}\n\n[1]\n', jsonl=True)
    assert (bad.line, bad.message_index) == (3, 1)


@pytest.mark.parametrize(
    ("raw", "words"),
    [(b'{"messages": []}', "'context'"), (b'{"context": {}}', "'context'"), (b'"text"', "array of messages")],
)
def test_wrong_top_level_is_refused(raw, words) -> None:
    """A top level that is neither an array nor an object with a context array is refused."""
    assert words in error_of(raw).reason


IMPORTED = "which is imported, not opened (contextdeck import; in the window, File → Import Trace…)"
EXCHANGE = {"request": {"model": "m", "messages": [{"role": "user", "content": "Hi"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "Hello"}}]}}


@pytest.mark.parametrize(
    ("raw", "jsonl", "said"),
    [(json.dumps(EXCHANGE).encode(), False, "an OpenAI exchange"),
     (json.dumps(EXCHANGE["request"]).encode(), False, "an OpenAI exchange"),
     (b'{"resourceSpans": [{"scopeSpans": []}]}', False, "an OTLP trace"),
     (f"{json.dumps(EXCHANGE)}\n{json.dumps(EXCHANGE)}\n".encode(), True, "an OpenAI exchange"),  # a log of them
     (json.dumps([EXCHANGE, EXCHANGE]).encode(), False, "an OpenAI exchange")],
)
def test_a_trace_opened_as_a_document_says_it_is_imported(raw: bytes, jsonl: bool, said: str) -> None:
    """An agent's trace opened as a document says what it is and that it is imported, after the fault at its place:
    told only that a saved request needs a 'context', a user did not learn that Import Trace reads it."""
    error = error_of(raw, jsonl=jsonl)
    assert error.reason.endswith(f"; this is {said}, {IMPORTED}")
    assert error_of(b'{"schema": {}}').reason == "a saved request needs a 'context' array of messages"


def test_very_deep_nesting_is_a_clear_error() -> None:
    """100,000 levels of nesting give a DocumentError with a position, not a RecursionError."""
    error = error_of(b"[" * 100_000 + b"]" * 100_000)
    assert "nesting deeper than" in error.reason
    assert (error.line, error.column) == (1, MAX_DEPTH + 1)


def test_nesting_between_the_limits_is_refused_too() -> None:
    """Nesting that the parser could read but the writer could not save is refused at load."""
    error = error_of(b'[{"type":"state","data":' + b"[" * 400 + b"]" * 400 + b"}]")
    assert "nesting deeper than" in error.reason


@pytest.mark.parametrize(("raw", "jsonl", "place", "outer"), [
    (b'[{"type":"text","text":"x","k":' + b"[" * 252 + b"]" * 252 + b"}]", False, (1, 31 + 252), "a level"),
    (b'{"type":"state","data":' + b'{"a":' * 252 + b"1" + b"}" * 253, True, (1, 23 + 251 * 5 + 1), "2 levels"),
])
def test_a_message_a_saved_request_could_not_hold_is_refused_where_it_crosses(raw, jsonl, place, outer) -> None:
    """Within the file's 254 levels but deeper than a saved request holds the message (a bare array is a level
    shallower, a JSON Lines line two): a DocumentError at the bracket that crosses, with the message's index, never
    the context's own ContentError (which the command line took for an error of its own)."""
    error = error_of(raw, jsonl=jsonl)
    assert ((error.line, error.column), error.message_index) == (place, 0)
    assert error.reason == (f"nesting deeper than {MAX_DEPTH} levels once saved as a request "
                            f"({{\"context\": [...]}} puts {outer} around {'a line' if jsonl else 'the messages'})")


def test_nesting_at_the_limit_loads_and_saves() -> None:
    """A document exactly MAX_DEPTH deep loads, resolves and saves."""
    inner = MAX_DEPTH - 3  # the array of messages, the message, its data
    raw = b'[{"type":"state","data":' + b"[" * inner + b"]" * inner + b"}]"
    document = parse_document(raw)
    assert document.context.resolve("†state").found
    assert json.loads(document.dumps()) == json.loads(raw)


def test_huge_integer_beyond_python_limits_is_a_clear_error() -> None:
    """An integer with more digits than Python converts is refused with a position, not a crash."""
    assert "digits" in error_of(b"[" + b"1" * 5000 + b"]").reason


def test_long_digit_runs_in_strings_are_read_once_and_long_numbers_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string's own digits (OTLP's nanosecond timestamps) never send a file to the slower exact reader; a number
    of 19 digits or more always does, and comes back exact, where the fast reader would make it a float."""
    slow: list[str] = []
    exact = _json._fallback
    monkeypatch.setattr(_json, "_fallback", lambda text, *where: (slow.append(text), exact(text, *where))[1])
    stamps = b'[{"timeUnixNano": "1733040000000000000", "id": "x"}, "12345678901234567890"]'
    assert _json.parse(stamps)[0]["timeUnixNano"] == "1733040000000000000"
    assert not slow
    for number in (18446744073709551616, -18446744073709551617, 10**25):
        assert _json.parse(f'{{"n": {number}, "t": "1733040000000000000"}}'.encode())["n"] == number
    assert len(slow) == 3
    assert _json.parse(b'["abc 18446744073709551616"]') == ["abc 18446744073709551616"]


def test_a_huge_file_loads(tmp_path) -> None:
    """A 50 MB document loads completely (speed is measured in the benchmarks, not here)."""
    message = json.dumps({"type": "state", "data": {"blob": "x" * 1000}})
    count = 50_000
    path = write(tmp_path, "huge.json", "[" + ",".join([message] * count) + "]")
    assert path.stat().st_size > 50_000_000
    assert len(load_document(path).context) == count


def test_unreadable_file_names_the_file(tmp_path) -> None:
    """A missing file or a folder gives a DocumentError naming it."""
    with pytest.raises(DocumentError, match=r"nope\.json"):
        load_document(tmp_path / "nope.json")
    with pytest.raises(DocumentError, match=re.escape(str(tmp_path))):
        load_document(tmp_path)


def test_a_failed_load_changes_nothing(tmp_path) -> None:
    """A load that fails leaves the file and the document the user had open exactly as they were."""
    path, _ = shapes(tmp_path)[Shape.ARRAY]
    document = load_document(path)
    before = json.dumps(document.to_json())
    broken = write(tmp_path, "broken.json", '[{"type": "text"}, 7]')
    with pytest.raises(DocumentError):
        load_document(broken)
    assert broken.read_text() == '[{"type": "text"}, 7]'
    assert json.dumps(document.to_json()) == before


def test_context_refuses_non_messages() -> None:
    """The API refuses a message that is not an object with a non-empty string type."""
    ctx = Context()
    with pytest.raises(TypeError):
        ctx.append([1])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ctx.append({"type": ""})
    assert len(ctx) == 0


def test_save_is_atomic_and_leaves_no_temporary_files(tmp_path) -> None:
    """A save that fails (a read-only file) keeps the old file intact; a save that works leaves only the
    document."""
    path, _ = shapes(tmp_path)[Shape.ARRAY]
    before = path.read_bytes()
    document = load_document(path)
    document.context.append({"type": "state", "data": {"more": 1}})
    path.chmod(0o444)
    with pytest.raises(PermissionError):
        document.save()
    assert path.read_bytes() == before
    path.chmod(0o644)
    document.save()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "l.jsonl", "r.json"]


def test_a_lone_surrogate_is_kept_and_written_back_as_an_escape() -> None:
    """orjson refuses "\\ud800" but it is valid JSON: it loads and saves as the same escaped string."""
    raw = b'[{"type": "state", "data": "\\ud800", "n": 18446744073709551616}]'
    document = parse_document(raw)
    assert document.context[0]["data"] == "\ud800"
    assert json.loads(document.dumps()) == json.loads(raw)
    assert "\\ud800" in document.dumps()


def test_deep_nesting_is_refused_on_the_slow_path_too() -> None:
    """A document the standard library parses (a lone surrogate) is still held to the depth limit."""
    error = error_of(b'["\\ud800",' + b"[" * 2000 + b"]" * 2000 + b"]")
    assert "nesting deeper than" in error.reason
    assert error.column == len('["\\ud800",') + MAX_DEPTH


def test_duplicate_keys_keep_the_last_value() -> None:
    """In an object with a repeated key the last value wins, as in JavaScript's JSON.parse."""
    assert parse_document(b'[{"type": "state", "data": 1, "data": 2}]').context[0] == {"type": "state", "data": 2}


@pytest.mark.parametrize(
    ("data", "where", "reason"),
    [({"n": 10**5000}, "$.data.n", "an integer of more than 4300 digits"),
     ({"n": float("nan")}, "$.data.n", "nan is not a JSON number"),
     ({"s": {1, 2}}, "$.data.s", "set is not a JSON value"),
     ({1: "a"}, "$.data", "a key that is not a string: int")],
)
def test_content_that_could_not_be_saved_is_refused_at_the_edit(data, where, reason) -> None:
    """What a save could not write (or a load read back) never enters the document: a ContentError with the
    message index, the path and the reason, and the context unchanged (a save used to fail for ever after)."""
    ctx = Context([{"type": "state", "data": {}}])
    with pytest.raises(ContentError) as caught:
        ctx.append({"type": "state", "data": data})
    assert (caught.value.message_index, caught.value.path, caught.value.reason) == (1, where, reason)
    assert len(ctx) == 1


def test_a_cycle_and_deep_nesting_are_refused_at_the_edit() -> None:
    """A value that contains itself, and one nested past the depth a saved request can hold, are refused."""
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    deep: list[Any] = []
    for _ in range(MAX_DEPTH):
        deep = [deep]
    ctx = Context([{"type": "state", "data": {}}])
    with pytest.raises(ContentError, match=r"message 0: \$\.data\[0\]: the value contains itself"):
        ctx.replace(0, {"type": "state", "data": cyclic})
    with pytest.raises(ContentError, match=r"levels\): nesting deeper than 254 levels"):
        ctx.replace(0, {"type": "state", "data": deep})
    assert ctx[0] == {"type": "state", "data": {}}


_SCALARS = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
            | st.floats(allow_nan=False, allow_infinity=False))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                                max_size=3),
                       max_leaves=12)


@settings(max_examples=60)
@given(messages=st.lists(st.builds(lambda data, note: {"type": "state", "data": data, "note": note}, _VALUES, _VALUES),
                         max_size=4),
       envelope=st.dictionaries(st.sampled_from(["schema", "solution", "model", "z"]), _VALUES, max_size=3),
       shape=st.sampled_from(list(Shape)))
def test_pieces_join_into_the_whole_document(messages: list[dict[str, Any]], envelope: dict[str, Any],
                                             shape: Shape) -> None:
    """Saved a message at a time (so a writer thread leaves the window room), the file is byte for byte what
    serialising the whole document at once gives; recovery's compact pieces hold the same value."""
    document = Document(Context(messages), shape, envelope.get("schema"), envelope.get("solution"), None,
                        dict(envelope))
    pieces = list(document.pieces())
    if shape is Shape.JSONL:
        assert "".join(pieces) == "".join(_json.dumps(message, indent=False) + "\n" for message in messages)
        return
    assert "".join(pieces) == _json.dumps(document.to_json()) + "\n"
    assert json.loads("".join(document.pieces(indent=False))) == json.loads("".join(pieces))
    assert len(pieces) >= len(messages)  # never one piece for the whole document
