"""OTLP JSON as spans: the OTLP file format's (hex ids) or protobuf's JSON mapping (base64 ids, camelCase, enum
names), one export request a line or an array of them, log records naming a span as its events, and the spans
OpenTelemetry Python's console exporter prints. What the spans record is `_otlp`'s to read.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from ._chat import listed
from ._problems import Step, TraceError, Warned, few
from ._read import Record, Values, is_console_span

LLM_OPERATIONS = frozenset(("chat", "text_completion", "generate_content", "responses"))
_VALUE_KEYS = {"stringValue": "s", "string_value": "s", "intValue": "i", "int_value": "i", "doubleValue": "d",
               "double_value": "d", "boolValue": "b", "bool_value": "b", "arrayValue": "a", "array_value": "a",
               "kvlistValue": "k", "kvlist_value": "k", "bytesValue": "y", "bytes_value": "y"}
_ERROR = (2, "STATUS_CODE_ERROR")


@dataclass(frozen=True)
class Span:
    trace: str
    id: str
    parent: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: tuple[tuple[str, int, dict[str, Any]], ...]
    error: str | None
    # Its file and line: several files may be read as one (not compared: a span an exporter delivered again is one)
    file: str = field(default="", compare=False)
    line: int | None = field(default=None, compare=False)
    # The parent id as written (JSON) when it is no valid id: a span left out for such an id may be the one it names
    unread_parent: str | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        return f"span {self.id}"

    @property
    def role(self) -> str | None:
        """`llm`, `tool`, or None for the spans around them (agents, chains)."""
        kind = self.attributes.get("openinference.span.kind")
        operation = self.attributes.get("gen_ai.operation.name")
        if operation is None:  # OpenLLMetry (Traceloop) names a model call's kind in `llm.request.type`
            operation = self.attributes.get("llm.request.type")
        if kind == "LLM" or (isinstance(operation, str) and operation in LLM_OPERATIONS):
            return "llm"
        if kind == "TOOL" or operation == "execute_tool":
            return "tool"
        if kind == "AGENT" or operation in ("invoke_agent", "create_agent") \
                or self.attributes.get("traceloop.span.kind") == "agent":
            return "agent"
        return None

    @property
    def agent_name(self) -> str:
        named = self.attributes.get("gen_ai.agent.name")
        return named if isinstance(named, str) and named else self.name or self.id


def _get(value: Any, *keys: str) -> Any:
    if not isinstance(value, dict):
        return None
    return next((value[key] for key in keys if key in value), None)


def _id(raw: Any, size: int) -> str | None:
    """A trace or span id as lower-case hex: hex as the OTLP file format writes it, or protobuf JSON's base64."""
    if not isinstance(raw, str) or not raw:
        return None
    if len(raw) == size * 2:
        try:
            bytes.fromhex(raw)
        except ValueError:
            pass
        else:
            return None if raw.strip("0") == "" else raw.lower()
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded.hex() if len(decoded) == size and any(decoded) else None


def _value(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    for key, tag in _VALUE_KEYS.items():
        if key in raw:
            found = raw[key]
            if tag == "i":
                return _integer(found)
            if tag == "a":
                return [_value(item) for item in listed(_get(found, "values"))]
            if tag == "k":
                return _attributes(_get(found, "values"))
            return found
    return None


def _integer(raw: Any) -> Any:
    """OTLP JSON writes 64-bit integers as strings; one that is not a number stays as it was written."""
    if isinstance(raw, int | str) and not isinstance(raw, bool):
        try:
            return int(raw)
        except ValueError:
            return raw
    return raw


def _attributes(raw: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in listed(raw):
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            found[item["key"]] = _value(item.get("value"))
    return found


def _nanos(raw: Any) -> int:
    """A time in nanoseconds as OTLP writes it (an unsigned 64-bit integer, or its digits); 0 (none) for anything
    else."""
    if isinstance(raw, bool):
        return 0
    try:
        nanos = int(raw)
    except (TypeError, ValueError, OverflowError):
        return 0
    return nanos if 0 <= nanos < 2**64 else 0


def spans_of(values: Values, warnings: list[Warned], step: Step) -> list[Span]:
    """The file's spans, each with the events its log records name it for (`resourceLogs`: an instrumentation may
    write a model call's messages as log records, which then come in the same file as its spans). A span without a
    valid span or trace id is left out, said in `warnings` with its trace when it names one, so that only that
    trace's contexts say it (format.md §10); the spans under it stay under the nearest span above it that is kept
    (`_reparented`). A file none of whose spans can be read is refused with the first one's fault. `step` before
    each span is read."""
    spans: list[Span] = []
    left_out: list[_Left] = []
    logged: dict[tuple[str, str], dict[tuple[str, int, str], None]] = {}
    for record in values.records():
        value = record.value
        if is_console_span(value):
            step()
            _keep(_span(value, record), spans, left_out)
            continue
        logs = _get(value, "resourceLogs", "resource_logs") if isinstance(value, dict) else None
        for batch in listed(logs):
            for scope in listed(_get(batch, "scopeLogs", "scope_logs")):
                for record_of_log in listed(_get(scope, "logRecords", "log_records")):
                    _log_event(record_of_log, logged)
        batches = _get(value, "resourceSpans", "resource_spans") if isinstance(value, dict) else None
        if not isinstance(batches, list) and logs is None:
            raise TraceError(record.file, "expected an OTLP trace: an object with 'resourceSpans'",
                             record.where or None, record.line)
        for batch in listed(batches):
            for scope in listed(_get(batch, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")):
                for raw in listed(_get(scope, "spans")):
                    step()
                    _keep(_span(raw, record), spans, left_out)
    if not spans and left_out:
        raise left_out[0].fault
    if not spans:
        raise TraceError(values.name, "the trace holds no spans" + (
            " (only log records: give the file of the spans they belong to with them, or put both in one file)"
            if logged else ""))
    spans = _reparented(spans, left_out, warnings)
    return [_with_logged(span, logged.get((span.trace, span.id))) for span in spans]


@dataclass(frozen=True)
class _Left:
    """A span left out: its trace (None: it names none), why, the id its children name it by (as written, when it is
    no valid id: `"zz"`), and the parent it names (the same way)."""

    trace: str | None
    fault: TraceError
    key: str | None
    parent: str | None  # a valid id
    unread_parent: str | None = None  # one that is not, as written

    @property
    def above(self) -> str | None:
        return self.parent or self.unread_parent


def _reparented(spans: list[Span], left_out: list[_Left], warnings: list[Warned]) -> list[Span]:
    """The spans, each under the nearest span above it that is kept: a span whose parent was left out goes under
    that one's parent (and so on up), and each span left out says where its children went; a parent id that is no
    valid id and names no span read as a top-level span, said. Span ids are a trace's own: a span left out is
    looked for in the child's trace, and by its id alone when it names no trace."""
    # (a batch an exporter retried holds its spans twice: each is said once, and counted once as a child)
    unique: dict[tuple[str | None, ...], _Left] = {}
    for left in left_out:
        unique.setdefault((left.trace, left.key, left.above, left.fault.reason), left)
    left_out = list(unique.values())
    # The spans left out, keyed once by (their trace or None, id); one whose id a kept span has (in its trace, or in
    # any for a span of none) is not: its children name the kept one
    kept_ids = {place for span in spans for place in ((span.trace, span.id), (None, span.id))}
    gone: dict[tuple[str | None, str | None], _Left] = {
        (left.trace, left.key): left for left in left_out if left.key is not None
        and (left.trace, left.key) not in kept_ids}

    def left_of(trace: str, key: str | None) -> _Left | None:
        return gone.get((trace, key)) or gone.get((None, key))

    nearest: dict[tuple[str, str | None], str | None] = {}  # per span left out, the nearest span kept above it

    def kept_above(trace: str, left: _Left | None) -> str | None:
        chain: list[_Left] = []
        while left is not None and (trace, left.key) not in nearest:
            nearest[trace, left.key] = None  # (parent ids that loop end where they loop: at the top)
            chain.append(left)
            left = left_of(trace, left.above)
        found = nearest[trace, left.key] if left is not None else chain[-1].parent
        nearest.update(((trace, each.key), found) for each in chain)
        return found

    children: dict[tuple[str | None, str | None], dict[tuple[str, str], tuple[Span, str | None]]] = {}
    kept: list[Span] = []
    for span in spans:
        parent = left_of(span.trace, span.parent or span.unread_parent)
        if parent is None:
            if span.parent is None and span.unread_parent is not None:
                warnings.append(Warned(span.file, f"its parent span id {span.unread_parent} is not valid: read as "
                                       "a top-level span", _named(span), span.line, trace=span.trace))
            kept.append(span)
            continue
        ancestor = kept_above(span.trace, parent)
        children.setdefault((parent.trace, parent.key), {}).setdefault((span.trace, span.id), (span, ancestor))
        kept.append(dataclasses.replace(span, parent=ancestor, unread_parent=None))
    for left in left_out:
        under = list(children.get((left.trace, left.key), {}).values())
        fault = left.fault
        warnings.append(Warned(fault.path, fault.reason + ": left out" + _children_said(under), fault.where,
                               fault.line, fault.column, trace=left.trace))
    return kept


def _children_said(under: list[tuple[Span, str | None]]) -> str:
    if not under:
        return ""
    ids = few([span.id for span, _ in under])
    ancestor = under[0][1]
    where = (f"read under span {ancestor}, the nearest span above it that is kept" if ancestor is not None
             else "read as top-level spans: no span above it is kept")
    return f"; the span(s) under it ({ids}) are {where}"


def _named(span: Span) -> str:
    called = f" ({span.name})" if span.name else ""
    return f"span {span.id}{called} of trace {span.trace}"


def _log_event(record: Any, logged: dict[tuple[str, str], dict[tuple[str, int, str], None]]) -> None:
    """A log record naming a span, kept as that span's event: its name (`eventName`, or the older `event.name`
    attribute), its time, and its attributes with its body's (the older GenAI events hold the message there)."""
    if not isinstance(record, dict):
        return
    trace, span_id = _id(_get(record, "traceId", "trace_id"), 16), _id(_get(record, "spanId", "span_id"), 8)
    attributes = _attributes(record.get("attributes"))
    name = _get(record, "eventName", "event_name") or attributes.get("event.name")
    if trace is None or span_id is None or not isinstance(name, str):
        return  # a log line of the program's, not an event of a span
    body = _value(record.get("body"))
    content = {**(body if isinstance(body, dict) else {}), **attributes}
    moment = _nanos(_get(record, "timeUnixNano", "time_unix_nano") or _get(record, "observedTimeUnixNano",
                                                                             "observed_time_unix_nano"))
    # (as JSON text, so that a record delivered twice is one event; in the file's order, for those of one time)
    logged.setdefault((trace, span_id), {})[name, moment, json.dumps(content, sort_keys=True)] = None


def _with_logged(span: Span, logged: dict[tuple[str, int, str], None] | None) -> Span:
    if not logged:
        return span
    events = tuple((name, moment, json.loads(content)) for name, moment, content in sorted(logged, key=lambda e: e[1]))
    return dataclasses.replace(span, events=span.events + events)


def _keep(span: Span | _Left, spans: list[Span], left_out: list[_Left]) -> None:
    if isinstance(span, Span):
        spans.append(span)
    else:
        left_out.append(span)


def _span(raw: Any, record: Record) -> Span | _Left:
    """The span, or why it is left out, with its trace when it names one: an id no span could be named by (a
    TraceError, not raised)."""
    name, line = record.file, record.line
    if not isinstance(raw, dict):
        raise TraceError(name, "a span is not an object", record.where or None, line)
    if is_console_span(raw):
        raw = _as_otlp(raw)
    written = _get(raw, "spanId", "span_id")
    span_id = _id(written, 8)
    shown = span_id or (json.dumps(written) if written else "without an id")
    called = f" ({raw['name']})" if isinstance(raw.get("name"), str) and raw["name"] else ""
    trace = _id(_get(raw, "traceId", "trace_id"), 16)
    where = ": ".join(part for part in (record.where, f"span {shown}{called}") if part)
    written_parent = _get(raw, "parentSpanId", "parent_span_id")
    parent = _id(written_parent, 8)
    unread_parent = json.dumps(written_parent) if parent is None and _names_a_span(written_parent) else None
    if span_id is None:
        of_trace = f" of trace {trace}" if trace else ""
        return _Left(trace, TraceError(name, "the span has no valid span id", where + of_trace, line),
                     json.dumps(written) if _names_a_span(written) else None, parent, unread_parent)
    if trace is None:
        return _Left(None, TraceError(name, "the span has no trace id: it belongs to no trace", where, line),
                     span_id, parent, unread_parent)
    status: dict[str, Any] = raw["status"] if isinstance(raw.get("status"), dict) else {}
    events = tuple((str(event.get("name", "")), _nanos(_get(event, "timeUnixNano", "time_unix_nano")),
                    _attributes(event.get("attributes")))
                   for event in listed(raw.get("events")) if isinstance(event, dict))
    error = None
    if status.get("code") in _ERROR:
        error = str(status.get("message") or "") or next(
            (str(attrs.get("exception.message")) for kind, _, attrs in events if kind == "exception"),
            "the tool failed")
    start = _nanos(_get(raw, "startTimeUnixNano", "start_time_unix_nano"))
    end = _nanos(_get(raw, "endTimeUnixNano", "end_time_unix_nano"))
    return Span(trace, span_id, parent, str(raw.get("name", "")), start, end, _attributes(raw.get("attributes")),
                events, error, name, line, unread_parent)


def _names_a_span(raw: Any) -> bool:
    """Whether an id as written names some span: anything but none, an empty text, or an id of zeros (OTLP's
    way of saying no parent), in hex or in base64."""
    if raw is None or raw == "":
        return False
    if isinstance(raw, str):
        try:
            zeros = raw.strip("0") == "" or not any(base64.b64decode(raw, validate=True))
        except (binascii.Error, ValueError):
            zeros = False
        return not zeros
    return True


def _as_otlp(raw: dict[str, Any]) -> dict[str, Any]:
    """A console exporter's span in OTLP JSON's shape: its ids (`0x` hex) as hex, its times (ISO 8601 text) as
    nanoseconds, its attributes and its events' (plain objects) as key-value lists, its status as a code."""
    context: dict[str, Any] = raw["context"]
    status = raw["status"] if isinstance(raw.get("status"), dict) else {}
    return {"traceId": _unprefixed(context.get("trace_id")), "spanId": _unprefixed(context.get("span_id")),
            "parentSpanId": _unprefixed(raw.get("parent_id")), "name": raw.get("name"),
            "startTimeUnixNano": _iso_nanos(raw.get("start_time")), "endTimeUnixNano": _iso_nanos(raw.get("end_time")),
            "attributes": _key_values(raw.get("attributes")),
            "events": [{"name": event.get("name", ""), "timeUnixNano": _iso_nanos(event.get("timestamp")),
                        "attributes": _key_values(event.get("attributes"))}
                       for event in listed(raw.get("events")) if isinstance(event, dict)],
            "status": {"code": 2 if status.get("status_code") == "ERROR" else 0, "message": status.get("description")}}


def _unprefixed(raw: Any) -> Any:
    return raw.removeprefix("0x") if isinstance(raw, str) else raw


def _key_values(raw: Any) -> list[dict[str, Any]]:
    # (a plain value is read as itself: `_value` takes what is no OTLP `AnyValue` as it is)
    return [{"key": key, "value": value} for key, value in raw.items()] if isinstance(raw, dict) else []


def _iso_nanos(raw: Any) -> int:
    """ISO 8601 text (`2026-11-30T07:54:16.527698Z`) as nanoseconds since the epoch; 0 when it is none."""
    try:
        moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00")) if isinstance(raw, str) else None
    except ValueError:
        return 0
    if moment is None or moment.tzinfo is None:
        return 0
    return (moment - _EPOCH) // dt.timedelta(microseconds=1) * 1000


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
