"""A document's run sent out: OTLP JSON spans with GenAI attributes, or the request as a chat completions body.

`export_otlp` writes one trace: a root `invoke_agent` span, one `chat` span per model turn (each plan
message, each assistant message the model wrote, and the solution), and under each turn one span per call
that ran (`execute_tool`, or `invoke_agent` for a delegated call). A turn's input is the request as the model
received it at that point (`compose_request`, what `render` shows); its output the calls and final output.
Ids come from the document's content, so the same document exports to the same trace. The root span carries
the document itself (`DOCUMENT`): the turns' inputs are rendered requests, from which no import can give back
the messages they were rendered from.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import contextdeck

from ..calls._outputs import utc_now
from ..calls._record import read_record
from ..document import _json
from ..document._document import Document
from ..document._view import Messages
from ..models._prompt import prompt_of
from ..protocol._messages import Form, body_of, classify, payload_of, text_of
from ..request._request import Request, compose_request
from ..request._sent import api_parts, sent_messages
from ._chat import SPAN_SETTINGS
from ._parts import comes_back, genai_parts, openinference_contents, text_parts

Registry = dict[str, dict[str, Any]]  # tool name -> schema, as `load_tools` gives it

DOCUMENT = "contextdeck.document"  # the root span's attribute holding the exported document's JSON
TURN_INDEX = "contextdeck.message_index"  # a turn's plan or assistant message; a call's last message
OUTPUT_PATH = "contextdeck.output_path"  # a call's `_outputPath`
# A turn whose reply's text is the JSON text of its one value (its output, or an assistant's content), not a text
OUTPUT_JSON = "contextdeck.output_json"
INPUT_JSON = "contextdeck.input_json"  # the input messages (their indices) whose text is their content's JSON text
SCHEMA = "contextdeck.schema"  # the document's own `schema` (the request's output schema), as its JSON text
RESULT = "gen_ai.tool.call.result"
RESULT_JSON = "contextdeck.result_json"  # a tool span whose result is the JSON text of a value, not a text
_CLIENT, _INTERNAL = 3, 1
# GenAI's required discriminator of model and agent spans: ContextDeck asks its models through OpenAI's chat
# completions API (an OpenAI-compatible server is "openai" too, by the conventions' "best knowledge" rule).
PROVIDER = "openai"


@dataclass
class _Clock:
    """Times for spans: the recorded ones, else 1 ms after the last one seen (the export's time at first)."""

    last: int = 0
    start: int = 0

    def at(self, iso: Any) -> int | None:
        if not isinstance(iso, str):
            return None
        try:
            moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        nanos = int(moment.timestamp() * 1_000_000) * 1000
        return nanos if 0 <= nanos <= _LATEST else None  # (OTLP's times are unsigned 64-bit nanoseconds)

    def span(self, start: int | None, seconds: float | None = None, end: int | None = None) -> tuple[int, int]:
        begin = start if start is not None else (self.last + 1_000_000 if self.last else self.start)
        finish = end if end is not None and end >= begin else begin + int((seconds or 0.001) * 1e9)
        begin, finish = (min(max(moment, 0), _LATEST) for moment in (begin, finish))  # (a latency past its date)
        self.last = max(self.last, finish)
        return begin, finish


# The latest time OTLP can say: a span past it (a date in year 2554 or later) is no time it can carry.
_LATEST = 2**64 - 1


@dataclass
class _Trace:
    trace_id: str
    spans: list[dict[str, Any]] = field(default_factory=list)
    # Per text message (its index): whether it goes as its JSON text (`_inputs`), judged once, not at each turn
    as_json: dict[int, bool] = field(default_factory=dict)

    def span_id(self, label: str) -> str:
        return hashlib.sha256(f"{self.trace_id}/{label}".encode()).hexdigest()[:16]

    def add(self, label: str, name: str, parent: str | None, times: tuple[int, int], kind: int,
            attributes: dict[str, Any], error: str | None = None) -> str:
        span_id = self.span_id(label)
        span: dict[str, Any] = {"traceId": self.trace_id, "spanId": span_id}
        if parent is not None:
            span["parentSpanId"] = parent
        span.update(name=name, kind=kind, startTimeUnixNano=str(times[0]), endTimeUnixNano=str(times[1]),
                    attributes=[_attribute(key, value) for key, value in attributes.items() if value is not None])
        span["status"] = {"code": 2, "message": error} if error is not None else {"code": 1}
        self.spans.append(span)
        return span_id


# OTLP's integers are 64-bit: a collector refuses a whole request holding a larger one. A larger integer (a seed
# a person wrote) goes out as its digits, which the import reads back as the number.
_INT64 = (-(2**63), 2**63 - 1)


def _attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int) and _INT64[0] <= value <= _INT64[1]:
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return {"key": key, "value": {"arrayValue": {"values": [{"stringValue": item} for item in value]}}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else _json_text(value)}}


@dataclass(frozen=True)
class _Turn:
    index: int | None  # the plan or assistant message; None for the solution
    at: int  # the request it answered: the first `at` messages
    calls: list[Any]
    output: Any
    audit: dict[str, Any]
    text: str | list[Any] | None = None  # an assistant message's text, or its content parts as the API takes them
    text_json: bool = False  # `text` is the JSON text of the assistant's content (`_said`)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def turns_of(document: Document) -> list[_Turn]:
    """The model turns a document records, in order: plan messages, assistant messages, the solution."""
    context = document.context
    turns: list[_Turn] = []
    # An assistant's text right before its plan: one turn with it (a content of null too: the request ends before it).
    said: tuple[str | list[Any] | None, bool] | None = None
    for index in range(len(context)):
        message = context[index]
        info = context.info(index)
        audit = _dict(body_of(message).get("_model"))
        if info.form is Form.PLAN:
            plan = body_of(message)
            # (the text before it is the same reply: the request it answered ends before that text)
            at = index - 1 if said is not None else index
            turns.append(_Turn(index, at, _list(plan.get("plan")), plan.get("output"), audit, *(said or (None,))))
            said = None
            continue
        if said is not None:
            turns.append(_Turn(index - 1, index - 1, [], None, {}, *said))
            said = None
        if info.form is Form.TEXT and text_of(message)[0] == "assistant":
            content = text_of(message)[1]
            # No content is no text part, as both conventions say none: not the text `null`, which a viewer shows.
            text = _said("assistant", content) if content is not None else (None, False)
            if audit:
                turns.append(_Turn(index, index, [], None, audit, *text))
            else:
                said = text
    if said is not None:
        turns.append(_Turn(len(context) - 1, len(context) - 1, [], None, {}, *said))
    solution = document.solution
    if isinstance(solution, list):
        solution = {"calls": solution, "output": None}
    if isinstance(solution, dict):
        turns.append(_Turn(None, len(context), _list(solution.get("calls")), solution.get("output"),
                           _dict(solution.get("_model"))))
    return turns


COLLECTOR_LIMIT = 4 * 2**20  # bytes: the OpenTelemetry Collector's gRPC receiver takes no bigger request by default


def collector_warning(size: int) -> str | None:
    """What to say of an OTLP export of `size` bytes, which a collector set as it comes would refuse; else None."""
    if size <= COLLECTOR_LIMIT:
        return None
    return (f"the export is {_bytes(size)}: an OTLP collector refuses a request over {_bytes(COLLECTOR_LIMIT)} "
            "unless its receiver is set to take more")


def _bytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB".replace(".0 ", " ") if size >= 2**20 else f"{size / 2**10:.0f} KiB"


def export_otlp(document: Document, *, name: str | None = None, tools: Registry | None = None,
                carry_document: bool = True) -> dict[str, Any]:
    """The document's run as an OTLP JSON `ExportTraceServiceRequest` (hex ids, as the OTLP file format).
    `carry_document=False` leaves the copy of the document off the root span: the import then reads the run
    from the spans (a big document is most of the export, and collectors limit a request's size)."""
    value = document.to_json()
    trace = _Trace(trace_id_of(value))
    clock = _Clock()
    clock.start = _first_time(document, clock) or clock.at(utc_now()) or 0
    agent = name or (Path(document.path).stem if document.path is not None else "contextdeck")
    root_times: list[int] = []
    root = trace.span_id("root")
    for n, turn in enumerate(turns_of(document)):
        _turn_spans(document, turn, n, trace, root, clock, tools)
    for span in trace.spans:
        root_times += [int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])]
    times = (min(root_times), max(root_times)) if root_times else clock.span(None)
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": PROVIDER, "gen_ai.agent.name": agent,
                  "openinference.span.kind": "AGENT"}
    if carry_document:
        attributes[DOCUMENT] = _json.dumps(value, indent=False)
    trace.add("root", f"invoke_agent {agent}", None, times, _INTERNAL, attributes)
    trace.spans.insert(0, trace.spans.pop())
    return {"resourceSpans": [{
        "resource": {"attributes": [_attribute("service.name", "contextdeck")]},
        "scopeSpans": [{"scope": {"name": "contextdeck", "version": contextdeck.__version__}, "spans": trace.spans}],
    }]}


def _first_time(document: Document, clock: _Clock) -> int | None:
    """The earliest time the document records (a reply's `date` less its latency, a run's start, a `_date`):
    where spans recorded without a time begin, so that none lies outside the run (a year after it, at the
    export's time, before the spans it holds)."""
    found: list[int] = []
    for message in [*document.context.messages, _dict(document.solution)]:
        body = body_of(message)
        audit, run = _dict(body.get("_model")), _dict(body.get("_run"))
        latency = audit.get("latency_ms")
        answered = clock.at(audit.get("date"))
        if answered is not None and isinstance(latency, int | float) and not isinstance(latency, bool):
            answered -= int(latency * 1e6)
        found += [moment for moment in (answered, clock.at(run.get("started")), clock.at(body.get("_date")))
                  if moment is not None]
    return min(found, default=None)


def trace_id_of(value: Any) -> str:
    """The trace id of a document's export, from its content (`Document.to_json`): the same document, the same
    trace, and an import can tell the document a trace carries is the one it was exported from."""
    content = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _turn_spans(document: Document, turn: _Turn, n: int, trace: _Trace, root: str, clock: _Clock,
                tools: Registry | None) -> None:
    context = document.context
    request = compose_request(context, document.schema, at=turn.at, tools=tools)
    audit = turn.audit
    model = audit.get("model") if isinstance(audit.get("model"), str) else request.config.get("model")
    usage = _dict(audit.get("usage"))
    end = clock.at(audit.get("date"))
    latency = audit.get("latency_ms")
    seconds = latency / 1000 if isinstance(latency, int | float) and not isinstance(latency, bool) else None
    start = end - int(seconds * 1e9) if end is not None and seconds is not None else None
    times = clock.span(start, seconds, end)
    ids = [_call_id(call, n, k) for k, call in enumerate(turn.calls)]
    sent, marked = _inputs(context, request, trace.as_json)
    output, as_json = _said(None, turn.output) if turn.output is not None else (None, False)
    said = [content for content in (turn.text, output) if content is not None]  # the reply's text, then its output
    calls = [{"type": "tool_call", "id": ids[k], "name": call.get("_tool") if isinstance(call, dict) else None,
              "arguments": _parameters(call)} for k, call in enumerate(turn.calls)]
    finish = "tool_calls" if turn.calls else "stop"
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER,
        # (every turn asks for the solution schema, `json_schema`: what `export_openai` writes as its format)
        "gen_ai.output.type": "json",
        "gen_ai.request.model": request.config.get("model") if isinstance(request.config.get("model"), str) else model,
        **{f"gen_ai.request.{key}": request.config.get(key) for key in SPAN_SETTINGS},
        "gen_ai.response.model": model,
        "gen_ai.response.id": audit.get("id") if isinstance(audit.get("id"), str) else None,
        "gen_ai.response.finish_reasons": [audit.get("finish_reason") or finish],
        "gen_ai.usage.input_tokens": usage.get("prompt_tokens", usage.get("input_tokens")),
        "gen_ai.usage.output_tokens": usage.get("completion_tokens", usage.get("output_tokens")),
        "gen_ai.input.messages": [{"role": message["role"], "parts": genai_parts(message["content"])}
                                  for message in sent],
        "gen_ai.output.messages": [{"role": "assistant", "parts": [
            *(part for content in said for part in genai_parts(content)), *calls], "finish_reason": finish}],
        "gen_ai.tool.definitions": [_definition(tool.name, tool.item) for tool in request.tools] or None,
        TURN_INDEX: turn.index,
        INPUT_JSON: marked or None,
        OUTPUT_JSON: True if len(said) == 1 and (as_json or turn.text_json) else None,  # (the reply is one value)
        SCHEMA: _json_text(document.schema) if document.schema is not None else None,  # (other tools ignore it)
        **_openinference_turn(sent, model, usage, said, turn.calls, ids, request.tools),
    }
    label = f"turn {n}"
    named = attributes["gen_ai.request.model"] or model
    span = trace.add(label, f"chat {named or ''}".strip(), root, times, _CLIENT, attributes)
    if turn.index is None and not turn.calls:
        return
    record = read_record(context, list(turn.calls), turn.index) if turn.calls else None
    for k, call in enumerate(turn.calls):
        entry = record.of(k) if record is not None else None
        if entry is None or not isinstance(call, dict):
            continue
        _call_span(document, call, k, ids[k], entry, trace, span, clock, label)


def _call_span(document: Document, call: dict[str, Any], k: int, call_id: str, entry: Any, trace: _Trace,
               parent: str, clock: _Clock, label: str) -> None:
    context = document.context
    run = entry.audit
    last = entry.last[-1]
    started = clock.at(run.get("started"))
    seconds = run.get("seconds") if isinstance(run.get("seconds"), int | float) else None
    ended = clock.at(context[last.position].get("_date"))
    times = clock.span(started if started is not None else ended, seconds,
                       ended if started is None or seconds is None else None)
    results = [_value_of(context[e.position]) for e in entry.last if e.output]
    # A text result is that text; any other value its JSON text, marked, so that the import gives back a text that
    # reads as JSON as the text it was (as a turn's output, `OUTPUT_JSON`).
    value = (results[0] if len(results) == 1 else results) if results else None
    marked = bool(results) and not isinstance(value, str)
    result = _json_text(value) if marked else value
    delegate = _delegate_of(document, call)
    error = entry.error
    message = str(error.get("message", error)) if isinstance(error, dict) else None
    attributes = {
        "gen_ai.operation.name": "invoke_agent" if delegate else "execute_tool",
        "gen_ai.provider.name": PROVIDER if delegate else None,
        "gen_ai.agent.name": delegate,
        "gen_ai.tool.name": call.get("_tool"),
        "gen_ai.tool.type": None if delegate else "function",
        # (conditionally required on a failed operation: the error's own type, else the conventions' fallback)
        "error.type": (_error_type(error) if message is not None else None),
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": _parameters(call),
        RESULT: result,
        RESULT_JSON: marked or None,
        OUTPUT_PATH: call.get("_outputPath"),
        TURN_INDEX: last.position,
        "openinference.span.kind": "AGENT" if delegate else "TOOL",
        "tool.name": call.get("_tool"),
        "tool.parameters": _parameters(call),
        "input.value": _parameters(call),
        "input.mime_type": "application/json",
        "output.value": result,
    }
    name = f"invoke_agent {delegate}" if delegate else f"execute_tool {call.get('_tool')}"
    trace.add(f"{label} call {k}", name, parent, times, _INTERNAL, attributes, message)


def _error_type(error: Any) -> str:
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) and kind else "_OTHER"


def _openinference_turn(messages: list[dict[str, Any]], model: Any, usage: dict[str, Any], said: list[str | list[Any]],
                        calls: list[Any], ids: list[str], tools: Any) -> dict[str, Any]:
    """The same turn in OpenInference's attributes (Phoenix, Arize read these): flattened messages and tools."""
    found: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": model}
    for key, name in (("prompt_tokens", "prompt"), ("completion_tokens", "completion"), ("total_tokens", "total")):
        found[f"llm.token_count.{name}"] = usage.get(key)
    for n, message in enumerate(messages):
        found[f"llm.input_messages.{n}.message.role"] = message["role"]
        if isinstance(message["content"], list):
            found |= openinference_contents(f"llm.input_messages.{n}", message["content"])
        else:
            found[f"llm.input_messages.{n}.message.content"] = message["content"]
    reply = "llm.output_messages.0.message"
    found[f"{reply}.role"] = "assistant"
    if any(isinstance(content, list) for content in said):  # (content parts: a text as a text part among them)
        found |= openinference_contents("llm.output_messages.0", [part for content in said
                                                                   for part in text_parts(content)])
    elif said:
        found[f"{reply}.content"] = "\n".join(content for content in said if isinstance(content, str))
    for k, call in enumerate(calls):
        found[f"{reply}.tool_calls.{k}.tool_call.id"] = ids[k]
        found[f"{reply}.tool_calls.{k}.tool_call.function.name"] = call.get("_tool") if isinstance(call, dict) else None
        found[f"{reply}.tool_calls.{k}.tool_call.function.arguments"] = _parameters(call)
    for k, tool in enumerate(tools):
        definition = _definition(tool.name, tool.item)
        found[f"llm.tools.{k}.tool.json_schema"] = {"type": "function", "function": {
            key: value for key, value in definition.items() if key != "type"}}
    return found


def _said(role: str | None, content: Any) -> tuple[str | list[Any], bool]:
    """A message's content (of `role`; None: a turn's output, of any role) as a trace says it, and whether that is its
    JSON text: a text as it is; content parts the API takes, each of which comes back as it is (`comes_back`) and not
    texts alone (which every import reads as one text), as those parts (a trace viewer shows an image as an image);
    any other value as its JSON text, which the span marks, so that the import gives back the value it was."""
    if isinstance(content, str):
        return content, False
    parts = api_parts(role, content)
    if parts is not None and all(map(comes_back, parts)) and any(part["type"] != "text" for part in parts):
        return parts, False
    return _json_text(content), True


def _inputs(context: Messages, request: Request, as_json: dict[int, bool]) -> tuple[list[dict[str, Any]], list[int]]:
    """The request's messages as the model was sent them (`sent_messages`: a message of content parts as those parts),
    and the indices of those whose text is the JSON text of their content: a content that `_said` gives as its JSON
    goes as the JSON text `render` shows of it. `as_json` keeps what was judged of each text message."""
    sent = sent_messages(context, request)
    marked: list[int] = []
    for n, rendered in enumerate(request.messages):
        if rendered.form != "text":
            continue
        source = rendered.sources[0]
        if source not in as_json:
            content = text_of(context[source])[1]
            as_json[source] = not isinstance(content, str) and _said(rendered.role, content)[1]
        if as_json[source]:
            # A null content is rendered as no text; its JSON text is what the import gives back as null.
            sent[n] = {**sent[n], "content": rendered.text or _json_text(None)}
            marked.append(n)
    return sent, marked


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _value_of(message: dict[str, Any]) -> Any:
    info = classify(message)
    write = info.write
    return write.value if write is not None and write.problem is None else payload_of(message)


def _delegate_of(document: Document, call: dict[str, Any]) -> str | None:
    own = call.get("_delegate")
    if isinstance(own, str) and own:
        return own
    for definition_index in range(len(document.context)):
        message = body_of(document.context[definition_index])
        tool = message.get("tool") if message.get("type") == "tool" else None
        schema = tool.get(call.get("_tool")) if isinstance(tool, dict) else None
        if isinstance(schema, dict) and isinstance(schema.get("_delegate"), str):
            return str(schema["_delegate"])
    return None


def _call_id(call: Any, turn: int, k: int) -> str:
    """A call's id: the kind it writes (as import names it after the model's call id), else turn and place."""
    path = call.get("_outputPath") if isinstance(call, dict) else None
    if isinstance(path, str) and path.startswith("†") and all(c not in path for c in ".|& "):
        return path[1:]
    return f"call_{turn + 1}_{k + 1}"


def _parameters(call: Any) -> dict[str, Any]:
    return {key: value for key, value in call.items() if not key.startswith("_")} if isinstance(call, dict) else {}


def _definition(name: str, item: Any) -> dict[str, Any]:
    schema = dict(item) if isinstance(item, dict) else {}
    description = schema.pop("description", None)
    # `_`-properties (`_tool`, `_outputPath`) are the protocol's, not the function's: no argument carries them.
    properties = {key: value for key, value in _dict(schema.get("properties")).items() if not key.startswith("_")}
    required = [key for key in _list(schema.get("required")) if not str(key).startswith("_")]
    parameters = {**schema, "properties": properties, **({"required": required} if required else {})}
    if not required:
        parameters.pop("required", None)
    return {"type": "function", "name": name, "description": description, "parameters": parameters}


def empty_request(body: dict[str, Any], at: int | None, length: int, later: str) -> str | None:
    """Why the body `export_openai` gave for the first `at` of `length` messages is not to be written, or None:
    the API refuses a body whose `messages` is empty, and a file that cannot be sent says nothing true about the
    run. `later` says how to cut further on (the command's `--at`, the window's cursor)."""
    if body["messages"]:
        return None
    cut = f"as of its first {at} message(s)" if at is not None else "of the document"
    hint = f" ({later} past the first text)" if at is not None and at < length else ""
    return (f"the request {cut} holds no message for the model, and a chat completions body needs at least one: "
            f"nothing written{hint}")


def export_openai(document: Document, *, at: int | None = None, model: str | None = None,
                  tools: Registry | None = None) -> dict[str, Any]:
    """The request at `at` (all messages when None) as a chat completions body: what `render --json` shows,
    in that API's shape, asking for the composed solution schema as ContextDeck asks for it (`json_schema`); a
    message of content parts (a text and an image) as those parts (`sent_messages`)."""
    request = compose_request(document.context, document.schema, at=at, tools=tools)
    chosen = model or request.config.get("model")
    body = prompt_of(document.context, request).body("json_schema")
    return {**({"model": chosen} if isinstance(chosen, str) else {}), **body}
