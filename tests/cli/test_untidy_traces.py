"""Untidy traces as teams have them, through `contextdeck import` and back out (format.md §10).

Each file in untidy_traces/ is a shape the public formats allow and tidy examples leave out: a streamed reply,
several choices, a refusal, a failed request, content parts, a tool message answering an id no call made, a
Responses API log chained by `previous_response_id`, OTLP spans out of order from two traces with other value
kinds and no end times, an array of export requests with the messages on GenAI's details event, and what
OpenTelemetry Python's console exporter prints. An import says what it kept and what it left out, or what and
where it cannot take; what it imports exports as OTLP and imports again.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck._cli import main

HERE = Path(__file__).parent / "untidy_traces"

# file, extra arguments, exit code, what the command says (each in its standard error, in order)
CASES = [
    ("streamed_chunks.json", [], 0, ["imported streamed_chunks.json (openai): 1 model turn(s)"]),
    ("streamed_events.json", [], 0, ["imported streamed_events.json (openai): 1 model turn(s)"]),
    ("chunks_without_request.jsonl", [], 1, [
        "line 1: a chat completions response (chat.completion.chunk) without the request it answers"]),
    ("refusal_of_two_choices.json", [], 0, [
        "warning: {file}: the response holds 2 choices: the first is the reply, the others are left out",
        "warning: {file}: the model refused (\"I can't help with that.\"): no final output",
        "imported refusal_of_two_choices.json (openai)"]),
    ("failed_then_retried.jsonl", [], 0, [
        "warning: {file}: line 2: the request failed (Rate limit reached): the run goes on from the next one",
        "imported failed_then_retried.jsonl (openai-log): 3 model turn(s), 2 call(s)"]),
    ("content_parts.json", [], 0, ["imported content_parts.json (openai): 2 model turn(s), 1 call(s)"]),
    ("tool_id_mismatch.json", [], 1, [
        "{file}: message 5: a tool message answers call 'call_B', which no earlier assistant message made (the calls "
        "waiting for a result: 'call_b' (get_weather))"]),
    ("responses_chained.jsonl", [], 0, ["imported responses_chained.jsonl (openai-log): 2 model turn(s), 1 call(s)"]),
    ("responses_chained_alone.json", [], 1, [
        "{file}: the request goes on from response 'resp_1' (previous_response_id), which is not the reply of the "
        "exchange before it"]),
    ("otlp_two_traces_untidy.json", [], 1, ["the file holds 2 traces, one context each: choose one with --trace"]),
    ("otlp_two_traces_untidy.json", ["--trace", "aaaa"], 0, [
        "imported trace aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa (otlp): 2 model turn(s), 2 call(s)"]),
    ("otlp_array_details_event.json", [], 0, [
        "imported trace 5b8efff798038103d269b633813fc60c (otlp): 2 model turn(s)"]),
    ("console_spans.txt", [], 0, [
        "warning: {file}: tool get_weather has no recorded definition: its schema is inferred from its calls",
        "(otlp): 2 model turn(s), 1 call(s)"]),
]


def run(capsys: Any, *argv: Any) -> tuple[int, str]:
    code = main([*map(str, argv)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("name", "extra", "code", "said"), CASES, ids=[f"{c[0]}{' '.join(c[1])}" for c in CASES])
def test_an_untidy_trace_imports_or_says_what_and_where(capsys: Any, tmp_path: Path, name: str, extra: list[str],
                                                          code: int, said: list[str]) -> None:
    source = HERE / name
    out = tmp_path / "doc.json"
    got, err = run(capsys, "import", source, "--out", out, *extra)
    assert got == code, err
    at = 0
    for words in said:
        found = err.find(words.format(file=source), at)
        assert found >= 0, f"{words!r} not in {err!r}"
        at = found + 1
    assert out.exists() == (code == 0)
    if code:
        return
    trace = tmp_path / "doc.otlp.json"
    assert run(capsys, "export", out, "--format", "otlp-json", "--out", trace)[0] == 0
    again = tmp_path / "again.json"
    assert run(capsys, "import", trace, "--out", again)[0] == 0
    assert again.read_bytes() == out.read_bytes()  # the export carries the document: back as it was


def spoiled(raw: bytes, at: int, junk: bytes, how: str) -> bytes:
    """The file cut at `at`, or `junk` written over it there, or a JSON line of another shape put in after it."""
    at %= max(len(raw), 1)
    if how == "cut":
        return raw[:at]
    if how == "junk":
        return raw[:at] + junk + raw[at + len(junk):]
    return raw.rstrip(b"\n") + b"\n" + junk + b"\n"


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(sorted({case[0] for case in CASES})), st.integers(0, 100_000),
       st.sampled_from([b"\xff", b"\x00", b"]", b"}", b'"', b"[1]", b'{"resourceSpans": 1}', b'{"messages": []}',
                        b"\xc3\x28", b"NaN", b'{"spanId": "zz"}', b"\n\n[", b"1e999"]),
       st.sampled_from(["cut", "junk", "line"]))
def test_a_spoiled_untidy_trace_imports_or_is_refused_in_words(name: str, at: int, junk: bytes, how: str) -> None:
    """Each untidy file cut short, garbled, or with a line of another shape after it, through `contextdeck import`:
    it imports (exit 0) or is refused (exit 1), every line the command says being its own words that name the
    file, and never a traceback."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / name
        source.write_bytes(spoiled((HERE / name).read_bytes(), at, junk, how))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["import", str(source), "--out", str(Path(folder) / "doc.json")])
    said = err.getvalue().splitlines()
    assert code in (0, 1), said
    assert said
    assert all(line.startswith("contextdeck: ") for line in said), said
    assert all(str(source) in line for line in said if not line.startswith("contextdeck: imported ")), said
