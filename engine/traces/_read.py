"""Reading a file to import: which format it is, its JSON values with their lines, OpenAI exchanges and logs."""

from __future__ import annotations

import gzip
import heapq
import itertools
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..document._document import Document, jsonl_lines
from ..document._json import BOM, JSONSyntaxError, file_reason, not_utf8
from ..document._json import parse as json_parse
from ..protocol._errors import DocumentError
from ._build import build, line_up
from ._chat import Exchange, ToolRun, failure, openai_exchange
from ._jsontext import json_text
from ._problems import (
    Located,
    Said,
    SpanPlaces,
    Step,
    TraceError,
    Warned,
    fault_at_span,
    go_on,
    grouped,
    said,
    said_of,
    warning_at_span,
)
from ._responses import is_responses_request, responses_exchange

FORMATS = ("openai", "openai-log", "otlp")


@dataclass(frozen=True)
class Imported:
    """One context made from the input: the document, what it came from, and what did not quite fit."""

    document: Document
    format: str
    label: str  # the trace id for OTLP, else the file's name
    warnings: tuple[str, ...] = ()
    turns: int = 0
    # What the context is called: the agent's name where the trace names one, else the file's name without its
    # suffixes (`weather.otlp.json` → `weather`). An untitled document exports under it.
    name: str = ""


def contexts_held(imported: list[Imported]) -> str:
    """What a file held, in words: a trace whose agents each had a conversation of their own is several
    contexts (`TRACE/AGENT`), so contexts are counted, and traces only when they are what was counted."""
    if len(imported) == 1:
        return "one context"
    traces = {item.label.split("/")[0] for item in imported}
    if len(traces) == len(imported):
        return f"{len(imported)} traces, one context each"
    return (f"{len(imported)} contexts from {len(traces)} trace{'s' if len(traces) > 1 else ''}, one per agent "
            "with a conversation of its own")


def named_contexts(asked: str, labels: Sequence[str]) -> list[str]:
    """The labels `--trace` names (`TRACE` or `TRACE/AGENT`), in any case: those whose trace id starts as its trace
    does and, with `/`, whose agent's name starts as its agent does (`5b8e/res` names `5b8e…/researcher`); of
    those, the one whose agent's name is the one given, when one is (`5b8e/research` names `…/research` alone)."""
    trace, slash, agent = asked.lower().partition("/")
    found: list[str] = []
    exact: list[str] = []
    for label in labels:
        own_trace, _, own_agent = label.lower().partition("/")
        if own_trace.startswith(trace) and (not slash or own_agent.startswith(agent)):
            found.append(label)
            if slash and own_agent == agent:
                exact.append(label)
    return exact if len(exact) == 1 else found


def none_named(asked: str, labels: Sequence[str]) -> str:
    """Why `--trace` chose no context: it names none of `labels`, which it lists."""
    return f"--trace {asked!r} matches no context; the file holds: {', '.join(labels)}"


@dataclass(frozen=True)
class Record:
    """One value of a file to read, with its place: its file, its line (JSON Lines) and, in a JSON array of export
    requests, which one (`request 2`)."""

    value: Any
    file: str
    line: int | None
    where: str


@dataclass(frozen=True)
class Values:
    """The JSON values of a file: one (a JSON file) or one per non-blank line (JSON Lines)."""

    values: list[Any]
    lines: list[int] | None = None  # each value's line, for JSON Lines
    name: str = "<input>"
    more: tuple[Values, ...] = ()  # further OTLP files read with it as one (a trace's log records in a file apart)

    def where(self, n: int) -> str:
        return f"line {self.lines[n]}" if self.lines is not None else ""

    @property
    def array(self) -> list[Any] | None:
        """The items when the file is one JSON array (of exchanges, or of OTLP export requests); else None."""
        if self.lines is None and len(self.values) == 1 and isinstance(self.values[0], list):
            return self.values[0]
        return None

    def records(self) -> list[Record]:
        """The values of this file and of `more`, each with its place; a JSON array (of export requests) as its
        items."""
        records: list[Record] = []
        for part in (self, *self.more):
            if part.array is not None:
                records += [Record(value, part.name, None, f"request {n}") for n, value in enumerate(part.array)]
            else:
                records += [Record(value, part.name, None if part.lines is None else part.lines[n], "")
                            for n, value in enumerate(part.values)]
        return records


@dataclass
class Reading:
    """What one reader produced: exchanges per context, warnings."""

    contexts: list[tuple[str, list[Exchange]]] = field(default_factory=list)
    warnings: list[Warned] = field(default_factory=list)  # each of one trace's, or of the file's
    runs: dict[str, list[ToolRun]] = field(default_factory=dict)  # per context: its tool spans, in order
    # Per context: the document a ContextDeck export carries, taken as it is, and its model turns.
    carried: dict[str, tuple[Document, int]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # per context: the agent the trace names, when it does
    files: dict[str, str] = field(default_factory=dict)  # per trace: the file its first model span was read from
    # Every trace of the file, read or not (`--trace` reads the ones it names), with its model spans: each context
    # names the others, so that a file says what it holds whichever context is imported
    traces: dict[str, int] = field(default_factory=dict)
    places: dict[str, SpanPlaces] = field(default_factory=dict)  # per trace read: where its spans are


def _text(raw: bytes, name: str) -> bytes:
    """The file's text: a gzip file (a rotated log, `.jsonl.gz`) decompressed, UTF-16 with its byte order mark
    (what Windows PowerShell's `>` writes) as UTF-8; a binary file said as such, since a JSON error about its
    bytes (and a guess that it was truncated) would mislead."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise TraceError(name, f"a gzip file that cannot be decompressed ({error})") from None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            raw = raw.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as error:
            read = raw[: error.start].decode("utf-16")  # the characters before it: its line and column
            line, column = read.count("\n") + 1, len(read) - read.rfind("\n")
            raise TraceError(name, f"a UTF-16 text that cannot be read ({error.reason})", line=line,
                             column=column) from None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        bad = not_utf8(raw)
        # No JSON text holds a control byte other than white space: such a file is binary, not text in another
        # encoding.
        binary = any(byte < 0x20 and byte not in b"\t\n\r" for byte in raw[:4096])
        said = (": a binary file, not a JSON or JSON Lines text (OTLP protobuf? ContextDeck reads OTLP JSON)"
                if binary else "")
        raise TraceError(name, bad.reason + said, line=bad.line, column=bad.column) from None
    return raw


def read_values(raw: bytes, name: str, step: Step = go_on) -> Values:
    """The file as one JSON value, else as JSON Lines; a file that is neither says where it breaks, as every
    command says it (`file_reason`, `jsonl_lines`). `step` before each line or object of several is read."""
    if not raw.removeprefix(BOM).strip():  # a place past its last line would only puzzle
        raise TraceError(name, "the file is empty: nothing to import")
    if raw.removeprefix(BOM).lstrip().startswith((b"data:", b"event:")):
        raise TraceError(name, "the server-sent events of a streamed response, without the request they answer: "
                         "nothing to line up; log each request with its response, as {\"request\": ..., "
                         "\"response\": ...} (the response may be the events' text or their chunks)")
    try:
        return Values([json_parse(raw)], None, name)
    except JSONSyntaxError as whole:
        concatenated = _concatenated(raw, name, step)
        if concatenated is not None:
            return concatenated
        first_line_end = raw.find(b"\n")
        if first_line_end < 0 or not _parses(raw[:first_line_end]):  # no first line of JSON: not JSON Lines
            raise TraceError(name, file_reason(whole, raw), line=whole.line, column=whole.column) from None
    try:
        lines, values = jsonl_lines(raw, name, step)
    except DocumentError as error:
        raise TraceError(name, error.reason, line=error.line, column=error.column) from None
    return Values(values, lines, name)


def _concatenated(raw: bytes, name: str, step: Step) -> Values | None:
    """Objects printed one after another, each from a line `{` to a line `}` (OpenTelemetry Python's console
    exporter writes its spans so), with the line each begins on; None when the text is not several such objects."""
    pieces = raw.removeprefix(BOM).split(b"\n")
    values: list[Any] = []
    lines: list[int] = []
    start: int | None = None
    for number, line in enumerate(pieces, start=1):
        text = line.rstrip()
        if start is None and text:
            if text != b"{":
                return None
            start = number
        elif start is not None and text == b"}":
            step()
            values.append(_parsed(b"\n".join(pieces[start - 1:number]), name, start, last=False))
            lines.append(start)
            start = None
    if start is not None and values:  # the last one unclosed: cut (a console still writing), or said so if not
        values.append(_parsed(b"\n".join(pieces[start - 1:]), name, start, last=True))
        lines.append(start)
    return Values(values, lines, name) if len(values) > 1 else None


def _parsed(text: bytes, name: str, start: int, *, last: bool) -> Any:
    """One of `_concatenated`'s objects, or the error placed in the file, said as every file's (`file_reason`)."""
    try:
        return json_parse(text)
    except JSONSyntaxError as error:
        reason = file_reason(error, text, last=last,
                             after=f"without the object from line {start}, the ones before it can be read")
        raise TraceError(name, reason, line=start + error.line - 1, column=error.column) from None


def _parses(text: bytes) -> bool:
    try:
        json_parse(text)
    except JSONSyntaxError:
        return False
    return True


_OTLP_KEYS = ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")


def is_console_span(value: Any) -> bool:
    """A span as OpenTelemetry Python's console exporter writes it (`ReadableSpan.to_json`), not in OTLP's shape."""
    return isinstance(value, dict) and isinstance(value.get("context"), dict) and "name" in value


def detect(values: Values) -> str:
    """The format of the input: an OTLP trace, one OpenAI exchange, or a log of them."""
    first = values.values[0] if values.values else None
    leading = values.array[0] if values.array else first  # an array's first item: an exchange, or an OTLP request
    if (isinstance(leading, dict) and any(key in leading for key in _OTLP_KEYS)) or is_console_span(leading):
        return "otlp"
    if values.lines is not None or values.array is not None:
        return "openai-log"
    if isinstance(first, dict) and ("messages" in first or "request" in first or is_responses_request(first)):
        return "openai"
    raise TraceError(values.name, "not a format ContextDeck imports: expected an OpenAI chat completions or "
                     "Responses API request (an object with 'messages' or 'input', or {'request', 'response'}), a "
                     "JSON Lines log of them, or an OTLP JSON trace (an object with 'resourceSpans')")


def exchange_of(value: Any, where: str) -> Exchange:
    """An exchange from a request body, or from `{"request": ..., "response": ...}` (with `latency_ms`): a chat
    completions one, or a Responses API one."""
    request, response, latency = value, None, None
    body = _body(value.get("request"), "request", where) if isinstance(value, dict) else None
    if isinstance(body, dict):
        request, response = body, _body(value.get("response"), "response", where)
        latency = value.get("latency_ms")
        latency = latency if isinstance(latency, int | float) and not isinstance(latency, bool) else None
        if response is None and failure(value) is not None:  # a request that failed, logged with its error
            response = {"error": value["error"]}
    if is_responses_request(request):
        return responses_exchange(request, response, where, latency_ms=latency)
    return openai_exchange(request, response, where, latency_ms=latency)


def _body(value: Any, name: str, where: str) -> Any:
    """A body a log wrote as its JSON text (as a proxy keeps the bytes it sent) as that JSON, refused by `name` when
    it does not parse (a logger's length limit cut it: read as text, it would be said as some other fault); anything
    else as it is (a streamed response's events are text too, which does not start as an object)."""
    if isinstance(value, str) and value.lstrip()[:1] == "{":
        return json_text(value, name, limit="a logger's length limit", where=where or None)
    return value


def read_openai(values: Values) -> Reading:
    if len(values.values) != 1:
        raise TraceError(values.name, f"expected one exchange, found {len(values.values)}: import it as a log "
                         "(--from openai-log)")
    exchange = exchange_of(values.values[0], "")
    if not exchange.messages and exchange.reply is None:  # (the API refuses it too) an empty document, else
        raise TraceError(values.name, "the request holds no messages and no reply: nothing to import")
    return Reading([(Path(values.name).name, [exchange])])


def read_log(values: Values, step: Step = go_on) -> Reading:
    items = values.values
    where = values.where
    if values.array is not None:  # a JSON array of exchanges
        items = values.array

        def where(n: int) -> str:
            return f"exchange {n}"

    if not items:
        raise TraceError(values.name, "the log holds no exchanges")
    exchanges: list[Exchange] = []
    for n, item in enumerate(items):
        step()
        exchanges.append(exchange_of(item, where(n)))
    return Reading([(Path(values.name).name, exchanges)])


def build_all(reading: Reading, format: str, name: str, step: Step = go_on) -> list[Imported]:
    """One `Imported` per context, each with the warnings of its own trace and the file's (format.md §10), every
    one said with its file first (`said`)."""
    imported: list[Imported] = []
    source = Path(name).name
    # Grouped once: a file of many traces has as many contexts as warnings, and each context takes its own.
    by_trace: dict[str | None, list[tuple[int, Said]]] = {}
    for n, warning in enumerate(reading.warnings):
        by_trace.setdefault(warning.trace, []).append((n, said_of(warning)))
    for label, exchanges in reading.contexts:
        called = reading.names.get(label) or stem_of(source)
        trace = label.split("/", 1)[0]
        warnings = [*map(said_of, _other_traces(reading.traces, trace, name)),
                    *(said for _, said in heapq.merge(by_trace.get(None, []), by_trace.get(trace, [])))]
        if label in reading.carried:
            document, turns = reading.carried[label]
            imported.append(Imported(document, format, label, tuple(grouped(warnings)), turns, called))
            continue
        file = reading.files.get(trace, name)
        places = reading.places.get(trace, {})  # (an exchange's place is its span's: its own file and line)
        try:
            conversation = line_up(exchanges, step)
            document = build(conversation, source, reading.runs.get(label))
        except Located as problem:
            raise fault_at_span(problem, name, places) from None
        # Every turn the model took, the replies and those a request repeats (010: each is one turn of the loop).
        turns = sum(1 for message in conversation.messages if message.role == "assistant")
        warnings += [said_of(warning_at_span(warning, file, places))
                     for warning in left_out(exchanges) + conversation.warnings]
        imported.append(Imported(document, format, label, tuple(grouped(warnings)), turns, called))
    return imported


def _other_traces(traces: dict[str, int], trace: str, name: str) -> list[str]:
    """The note naming the file's traces other than `trace`, which the context does not hold: the same words whether
    every trace was read (the window) or only the one `--trace` names."""
    count = len(traces) - (trace in traces)
    if not count:
        return []
    # (only the first few made: a file of many traces has as many contexts)
    named = itertools.islice((f"{other} ({f'{models} model turn(s)' if models else _NO_MODEL_SPANS})"
                              for other, models in traces.items() if other != trace), _NAMED)
    listed = ", ".join(named) + (f", and {count - _NAMED} more" if count > _NAMED else "")
    return [said(name, f"the file holds {count} other trace(s), not imported with this context: {listed}")]


_NAMED = 5  # the other traces a note names; the rest are counted
_NO_MODEL_SPANS = "no GenAI or OpenInference model spans: nothing to import"


def left_out(exchanges: list[Exchange]) -> list[str]:
    """What the exchanges did not read, each said once at its first place: a log's next request repeats the
    conversation so far, and with it an item left out before."""
    places: dict[tuple[str, str], list[str]] = {}
    for exchange in exchanges:
        for place, what, item in exchange.left_out:
            places.setdefault((what, item), []).append(place)
    return [f"{found[0]}: {what}" + (f" (and where {len(found) - 1} later request(s) repeat it)" if found[1:] else "")
            for (what, _item), found in places.items()]


# The suffixes a trace is written with, those File → Import offers among them (`.ndjson`, `.txt`, `.log`).
_SUFFIXES = (".gz", ".jsonl", ".ndjson", ".json", ".txt", ".log", ".otlp", ".openai", ".trace")


def stem_of(file: str) -> str:
    """A file's name without the suffixes a trace's name is written with: `run.openai.jsonl.gz` → `run`."""
    stem = Path(file).name
    while (cut := next((suffix for suffix in _SUFFIXES if stem.lower().endswith(suffix)), None)) is not None \
            and len(stem) > len(cut):
        stem = stem[:-len(cut)]
    return stem


def import_trace(path: str | os.PathLike[str], format: str | None = None, trace: str | None = None, *,
                 more: Sequence[str | os.PathLike[str]] = (), step: Step = go_on) -> list[Imported]:
    """The contexts a file holds: one for an OpenAI exchange or log, one per trace for OTLP (only the traces
    whose id starts as `trace` does, when any does: another trace's faults do not stop the one asked for).
    `more`: further OTLP files read with it as one (the log records of its spans, written by a logs exporter to a
    file of their own). `step` is called as each unit of the input is read (a file, a line of JSON Lines, a span,
    an exchange): an exception it raises ends the import there, as it is (the window's Cancel stops a read so).

    Raises TraceError naming the file and the line, message or span when the input cannot be read.
    """
    _together(format, len(more))
    files = [Path(path), *map(Path, more)]
    raws: list[tuple[bytes, str]] = []
    for file in files:
        step()
        try:
            raws.append((file.read_bytes(), str(file)))
        except OSError as error:
            raise TraceError(str(file), error.strerror or str(error)) from None
    (raw, name), *rest = raws
    return import_bytes(raw, name, format, trace, more=rest, step=step)


def _together(format: str | None, more: int) -> None:
    """Several files are one OTLP trace's (its spans, its log records): another format is refused before any is
    read, since each of its files is a context of its own."""
    if more and format not in (None, "otlp"):
        raise TraceError("--from", f"{format}: only OTLP files are read together (a trace's spans and the log "
                         f"records of them): import each {format} file on its own")


def import_bytes(raw: bytes, name: str, format: str | None = None, trace: str | None = None, *,
                 more: Sequence[tuple[bytes, str]] = (), step: Step = go_on) -> list[Imported]:
    if format is not None and format not in FORMATS:
        raise TraceError(name, f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    _together(format, len(more))
    values = read_values(_text(raw, name), name, step)
    chosen = format or detect(values)
    if more:
        parts = [values, *(read_values(_text(extra, other), other, step) for extra, other in more)]
        kinds = [chosen, *(format or detect(part) for part in parts[1:])]  # (the first's is `chosen`)
        for part, kind in zip(parts, kinds, strict=True):
            if kind != "otlp":
                raise TraceError(part.name, "not an OTLP JSON trace: only OTLP files are read together (a trace's "
                                 "spans and the log records of them)")
        values, chosen = Values(values.values, values.lines, name, tuple(parts[1:])), "otlp"
    try:
        if chosen == "otlp":
            from ._otlp import read_otlp

            reading = read_otlp(values, trace, step)
        elif chosen == "openai":
            reading = read_openai(values)
        else:
            reading = read_log(values, step)
        return build_all(reading, chosen, name, step)
    except Located as problem:
        raise problem.within(name) from None
