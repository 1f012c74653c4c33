"""OpenTelemetry traces: the exchanges and tool runs their spans (`_spans`) record.

Two conventions are read: OpenTelemetry's GenAI semantic conventions (`gen_ai.*` attributes, and the older
`gen_ai.*.message` events) and OpenInference (`llm.*`, `input.value`, `openinference.span.kind`). A model
span becomes an exchange, a tool span a `ToolRun`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import attrs

from ..document._document import Document, Shape, parse_document
from ..protocol._errors import DocumentError, file_place
from ..protocol._values import segment_index
from ._build import line_up
from ._chat import (
    ROLES,
    SPAN_SETTINGS,
    ChatMessage,
    Exchange,
    ToolCall,
    ToolRun,
    arguments_of,
    iso,
    iso_precise,
    listed,
    openai_exchange,
    other_choices,
)
from ._export import DOCUMENT, INPUT_JSON, OUTPUT_JSON, OUTPUT_PATH, RESULT_JSON, SCHEMA, TURN_INDEX, trace_id_of
from ._jsontext import json_text, marked_json
from ._parts import chat_part, openinference_part
from ._problems import Located, Step, TraceError, Warned, fault_at_span, go_on, grouped, said_of
from ._read import Reading, Values, named_contexts, none_named
from ._responses import is_responses_request, responses_exchange
from ._spans import Span, spans_of


def read_otlp(values: Values, only: str | None = None, step: Step = go_on) -> Reading:
    """One context per trace, in the order traces first appear: its model spans' exchanges, its tool runs.

    A trace whose model spans do not line up as one conversation, but do under each agent span (sub-agents
    with conversations of their own), gives one context per agent, labelled `TRACE/AGENT`. ContextDeck's own
    export gives back the document it carries (`_carried`). `step` before each span and each model span's exchange
    is read.
    """
    reading = Reading()
    traces: dict[str, list[Span]] = {}
    seen: dict[tuple[str, str], Span] = {}
    for span in spans_of(values, reading.warnings, step):
        first = seen.setdefault((span.trace, span.id), span)
        if first is span:
            traces.setdefault(span.trace, []).append(span)
        elif first != span:  # a span delivered again as it was (exporters retry) is the same span
            earlier = file_place(first.file, first.line) if first.line or first.file != span.file else ""
            raise TraceError(span.file, "the span id appears twice with different contents" + (
                f" (first at {earlier})" if earlier else ""), f"{span.where} of trace {span.trace}", span.line)
    reading.traces = {trace: len(_innermost([span for span in spans if span.role == "llm"], spans))
                      for trace, spans in traces.items()}
    chosen = traces
    if only is not None:  # `TRACE/AGENT` or the start of a trace id
        chosen = {trace: traces[trace] for trace in named_contexts(only.split("/", 1)[0], list(traces))}
        if not chosen:
            raise TraceError(values.name, none_named(only, _contexts_listed(traces, values.name, step)))
    # A span left out of a trace of no other span is the file's to say, whichever traces are chosen: every context
    # carries it, as the window's (which reads them all) do.
    reading.warnings[:] = [attrs.evolve(warning, trace=None) if warning.trace not in traces else warning
                           for warning in reading.warnings]
    traces = chosen
    for trace, spans in traces.items():
        reading.places[trace] = {span.id: (span.file or values.name, span.line) for span in spans}
        try:
            _read_trace(reading, trace, spans, values.name, step)
        except (TraceError, Located) as problem:
            fault = fault_at_span(problem, values.name, reading.places[trace]) if isinstance(problem, Located) \
                else problem
            if len(traces) < 2:
                raise fault from None
            # the other traces may import: say which one failed and how to choose another
            others = [other for other in traces if other != trace]
            hint = (f" (in trace {trace}, one of the file's {len(traces)} traces: import another with --trace ID: "
                    f"{', '.join(others[:3])}{', ...' if len(others) > 3 else ''})")
            raise attrs.evolve(fault, reason=fault.reason + hint) from None
    if not reading.contexts:
        why = "; ".join(said.removeprefix(f"{values.name}: ") for said in grouped(map(said_of, reading.warnings)))
        others = [f"{trace} ({count} model turn(s))" for trace, count in reading.traces.items()
                  if count and trace not in traces]
        if others:  # the trace chosen holds none, others do: not "no trace"
            raise TraceError(values.name, f"--trace {only}: {why}; the file's traces with model turns: "
                             f"{', '.join(others[:5])}{', ...' if len(others) > 5 else ''}: choose one with --trace")
        raise TraceError(values.name, "no trace holds a model span: " + why)
    return reading


def _contexts_listed(traces: dict[str, list[Span]], name: str, step: Step) -> list[str]:
    """The contexts the file's traces give, for a `--trace` that names none of them: a trace that cannot be read is
    named by its id, its fault not the one asked about."""
    labels: list[str] = []
    for trace, spans in traces.items():
        own = Reading()
        try:
            _read_trace(own, trace, spans, name, step)
        except (TraceError, Located):
            labels.append(trace)
            continue
        labels += [label for label, _ in own.contexts]
    return labels


def _read_trace(reading: Reading, trace: str, spans: list[Span], name: str, step: Step) -> None:
    """One trace's contexts into `reading`."""
    # In time, once: the turns and the agents' contexts come in the order they ran, whatever order an exporter's
    # batches wrote the spans in.
    ordered = sorted(spans, key=_in_order)
    models = _innermost([span for span in ordered if span.role == "llm"], spans)
    carried = _carried(trace, spans, name, reading.warnings)
    outermost = _outermost_agent(spans)
    if outermost is not None:
        reading.names[trace] = outermost
    if carried is not None:
        reading.contexts.append((trace, []))
        reading.carried[trace] = carried, len(models)
        return
    if models:
        reading.files[trace] = models[0].file or name
    if not models:
        # (the trace's own: the file's other contexts name it as one with no model spans, `Reading.traces`)
        reading.warnings.append(Warned(name, "no model spans (neither GenAI nor OpenInference): left out",
                                       f"trace {trace}", trace=trace))
        return
    tools = [span for span in ordered if span.role == "tool"]
    if len(models) > 1 and any(TURN_INDEX in span.attributes for span in models):
        exchanges, runs = _group(models, tools, name, step, replayed=True)
        reading.contexts.append((trace, _replayed(exchanges, models, runs)))
        reading.runs[trace] = runs
        reading.warnings.append(Warned(
            models[0].file or name, "ContextDeck's export without its document: each turn's input is the request as "
            "rendered, so the run is read from the first turn's input, each turn's calls and the results their tool "
            "spans recorded (a message added between turns, not by a call, is not read back)", f"trace {trace}",
            trace=trace))
        return
    for label, (group, runs) in _contexts(trace, models, tools, spans, name, step).items():
        reading.contexts.append((label, group))
        reading.runs[label] = runs
        if label != trace and not label.endswith("/outside any agent"):  # a context per agent: its own name
            reading.names[label] = label[len(trace) + 1:]


Group = tuple[list[Exchange], list[ToolRun]]


def _outermost_agent(spans: list[Span]) -> str | None:
    """The name of the agent the trace is a run of: its outermost agent span's (the first begun, of those with no
    agent span above them), as `gen_ai.agent.name` or the span's name says it; None when no agent span names one."""
    found = [span for span in spans if span.role == "agent"]
    above = _agents_of(found, spans)
    agents = sorted((span for span in found if above[span.id] is None), key=lambda span: span.start)
    for span in agents:
        named = span.agent_name.removeprefix("invoke_agent ").removeprefix("create_agent ").strip()
        if named and named != span.id:
            return named
    return None


def _carried(trace: str, spans: list[Span], name: str, warnings: list[Warned]) -> Document | None:
    """The document ContextDeck's export carries on its root span, when the trace is that document's export
    (its id is the document's: `trace_id_of`). A turn's recorded input is the request as rendered, from which
    the messages cannot be read back; any other trace, or one whose document was changed or cut since, is read
    from its spans."""
    root = next((span for span in spans if span.parent is None and DOCUMENT in span.attributes), None)
    if root is None:
        return None
    text = root.attributes[DOCUMENT]
    try:
        if not isinstance(text, str):
            raise DocumentError(name, "not a JSON text")
        document = parse_document(text.encode("utf-8", "surrogatepass"), name)
        if trace_id_of(document.to_json()) != trace:
            raise DocumentError(name, "not the document this trace was exported from")
    except DocumentError as problem:
        warnings.append(Warned(root.file or name, f"the ContextDeck document it carries cannot be used "
                               f"({problem.reason}): the trace is read from its spans", root.where, root.line,
                               trace=trace))
        return None
    return Document(document.context, Shape.REQUEST, document.schema, document.solution, None, document.envelope)


def _contexts(trace: str, models: list[Span], tools: list[Span], spans: list[Span], name: str,
              step: Step) -> dict[str, Group]:
    whole = _group(models, tools, name, step)
    agents = _agents_of(models + tools, spans)
    by_agent: dict[str | None, tuple[list[Span], list[Span]]] = {}
    for span in models:
        by_agent.setdefault(agents[span.id], ([], []))[0].append(span)
    for span in tools:
        if agents[span.id] in by_agent:
            by_agent[agents[span.id]][1].append(span)
    try:
        line_up(whole[0])
    except Located:
        if len(by_agent) < 2:
            raise
        named = {span.id: span.agent_name for span in spans}
        return {f"{trace}/{named[agent] if agent else 'outside any agent'}": _group(own, runs, name, step)
                for agent, (own, runs) in by_agent.items()}
    return {trace: whole}


def _in_order(span: Span) -> tuple[int, int]:
    return span.start, span.end


def _group(models: list[Span], tools: list[Span], name: str, step: Step, replayed: bool = False) -> Group:
    """The model spans' exchanges and the tool runs, both in time. `replayed`: ContextDeck's own turns, whose inputs
    after the first are not read (each holds the conversation so far, rendered; `_replayed` gives it instead)."""
    exchanges: list[Exchange] = []
    for span in models:
        step()
        try:
            exchange = exchange_of_span(span, inputs=not (replayed and exchanges))
        except Located as problem:
            raise problem.within(span.file or name, line=span.line) from None
        exchanges.append(dataclasses.replace(exchange, file=Path(span.file).name) if span.file else exchange)
    return exchanges, [tool_run(span) for span in tools]


def _replayed(exchanges: list[Exchange], models: list[Span], runs: list[ToolRun]) -> list[Exchange]:
    """The exchanges of ContextDeck's own turns (`models`, in order), exported without its document: each turn's
    recorded input is the request as rendered (plans and data as user text), which no import reads back as calls.
    Each is given instead the first turn's input, then every earlier turn's reply and the results of its calls, as
    the tool spans under that turn recorded them; a call keeps the output path its span names (`OUTPUT_PATH`)."""
    under: dict[str | None, dict[str | None, ToolRun]] = {}  # per model span, the tool runs under it by call id
    for run in runs:
        under.setdefault(run.within, {}).setdefault(run.call_id, run)
    conversation = list(exchanges[0].messages)
    replayed: list[Exchange] = []
    for exchange, model in zip(exchanges, models, strict=True):
        ran = under.get(model.id, {})
        reply = exchange.reply
        if reply is not None and reply.tool_calls:
            reply = dataclasses.replace(reply, tool_calls=tuple(_with_path(call, ran.get(call.id))
                                                                for call in reply.tool_calls))
        replayed.append(dataclasses.replace(exchange, messages=tuple(conversation), reply=reply))
        if reply is None:
            continue
        conversation.append(reply)
        conversation += [ChatMessage("tool", done.result, tool_call_id=call.id) for call in reply.tool_calls
                         if (done := ran.get(call.id)) is not None and done.error is None and done.has_result]
    return replayed


def _with_path(call: ToolCall, run: ToolRun | None) -> ToolCall:
    path = run.output_path if run is not None else None
    return dataclasses.replace(call, arguments={**call.arguments, "_outputPath": path}) if path is not None else call


def _agents_of(found: list[Span], spans: list[Span]) -> dict[str, str | None]:
    """Each span's nearest agent span above it (None: none)."""
    by_id = {span.id: span for span in spans}
    agents: dict[str, str | None] = {}
    for span in found:
        parent, hops, agent = span.parent, 0, None
        while parent is not None and parent in by_id and hops < 256:
            if by_id[parent].role == "agent":
                agent = parent
                break
            parent, hops = by_id[parent].parent, hops + 1
        agents[span.id] = agent
    return agents


def _innermost(models: list[Span], spans: list[Span]) -> list[Span]:
    """Model spans without a model span inside (a framework's span around the SDK's records the same call)."""
    parents = {span.id: span.parent for span in spans}
    model_ids = {span.id for span in models}
    outer: set[str] = set()
    for span in models:
        above: set[str] = set()
        parent, hops = span.parent, 0
        while parent is not None and parent != span.id and hops < 256:
            above.add(parent)
            parent, hops = parents.get(parent), hops + 1
        if parent != span.id:  # parent ids that loop back to the span (a broken exporter) hold nothing
            outer |= above & model_ids
    return [span for span in models if span.id not in outer]


# -- model spans ------------------------------------------------------------------------------------


def exchange_of_span(span: Span, inputs: bool = True) -> Exchange:
    """The span's exchange; without `inputs`, the recorded request messages (GenAI's or OpenInference's, which
    ContextDeck's export writes) are not read: its reply, tools and facts only."""
    try:
        return _exchange_of_span(_with_details(span), inputs)
    except Located as problem:
        if problem.where is None:  # found in the span's attributes, where no message is known yet
            raise Located(problem.reason, span.where) from None
        raise


# GenAI's opt-in event carrying a model call's messages (and its other attributes) instead of the span's attributes.
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


def _with_details(span: Span) -> Span:
    """The span with the attributes its details event records and it does not (its messages, when they were
    recorded on the event): read as its own."""
    found = next((attributes for name, _, attributes in span.events if name == DETAILS_EVENT), None)
    return dataclasses.replace(span, attributes={**found, **span.attributes}) if found else span


def _exchange_of_span(span: Span, inputs: bool) -> Exchange:
    attributes = span.attributes
    latency = round((span.end - span.start) / 1e6, 3) if span.end >= span.start > 0 else None
    date = iso_precise(span.end) if span.end else None
    body = json_text(attributes.get("input.value"))
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        response = json_text(attributes.get("output.value"))
        response = response if isinstance(response, dict) and "choices" in response else None
        exchange = openai_exchange(body, response, span.where, latency_ms=latency, date=date)
        if exchange.reply is None:
            exchange = _replace_reply(exchange, _openinference_messages(attributes, "llm.output_messages"), span)
    elif is_responses_request(body) and inputs:  # OpenInference around the Responses API: its bodies as they went
        response = json_text(attributes.get("output.value"))
        response = response if isinstance(response, dict) and "output" in response else None
        exchange = responses_exchange(body, response, span.where, latency_ms=latency)
        exchange = dataclasses.replace(exchange, date=date or exchange.date)
        if exchange.reply is None:
            exchange = _replace_reply(exchange, _openinference_messages(attributes, "llm.output_messages"), span)
    elif any(key.startswith("llm.input_messages.") for key in attributes):
        request = {"messages": _openinference_messages(attributes, "llm.input_messages") if inputs else [],
                   "tools": _openinference_tools(attributes)}
        exchange = _replace_reply(openai_exchange(request, None, span.where, latency_ms=latency, date=date),
                                  _openinference_messages(attributes, "llm.output_messages"), span)
    elif any(key.startswith("gen_ai.prompt.") for key in attributes):
        request = {"messages": _openllmetry_messages(attributes, "gen_ai.prompt"),
                   "tools": _openllmetry_tools(attributes)}
        exchange = _replace_reply(openai_exchange(request, None, span.where, latency_ms=latency, date=date),
                                  _openllmetry_messages(attributes, "gen_ai.completion"), span)
    else:
        messages, reply = _genai_messages(span, inputs)
        request = {"messages": messages, "tools": _genai_tools(attributes)}
        exchange = _replace_reply(openai_exchange(request, None, span.where, latency_ms=latency, date=date),
                                  reply, span)
    return _with_span_facts(exchange, span)


def _replace_reply(exchange: Exchange, replies: list[dict[str, Any]], span: Span) -> Exchange:
    if not replies:
        return exchange
    reply = openai_exchange({"messages": replies[:1]}, None, f"{span.where}: response").messages[0]
    reasoning = replies[0].get("reasoning")
    if isinstance(reasoning, str):
        reply = dataclasses.replace(reply, reasoning=reasoning)
    finish = replies[0].get("finish_reason")  # (the choice's own: a GenAI output message's, a choice event's)
    if isinstance(finish, str) and exchange.finish_reason is None:
        exchange = dataclasses.replace(exchange, finish_reason=finish)
    # Each output message is a choice (`n` > 1, a candidate): the first is the reply, the others are said, and
    # the one a later request goes on from is the reply instead.
    others = other_choices([{"message": other, "finish_reason": other.get("finish_reason")} for other in replies[1:]],
                            f"{span.where}: response")
    return dataclasses.replace(exchange, reply=reply, choices=len(replies), others=tuple(others))


def _with_span_facts(exchange: Exchange, span: Span) -> Exchange:
    """Model, usage and finish reason from the span's attributes where the bodies did not say."""
    attributes = span.attributes
    model = exchange.model if exchange.reply is not None and exchange.model else None
    model = model or _first_str(attributes, "gen_ai.response.model", "llm.model_name", "gen_ai.request.model")
    usage = exchange.usage or _usage(attributes)
    reasons = attributes.get("gen_ai.response.finish_reasons")
    outputs = listed(json_text(attributes.get("gen_ai.output.messages"), "gen_ai.output.messages"))
    said = [message.get("finish_reason") for message in outputs if isinstance(message, dict)]  # GenAI's, per message
    finish = exchange.finish_reason or _first_str(attributes, "llm.finish_reason",
                                                  "gen_ai.completion.0.finish_reason") or next(
        (reason for reason in (*listed(reasons), *said) if isinstance(reason, str)), None)
    settings = dict(exchange.settings)
    request_model = _first_str(attributes, "gen_ai.request.model")
    if "model" not in settings and request_model:
        settings["model"] = request_model
    for key in SPAN_SETTINGS:
        found = attributes.get(f"gen_ai.request.{key}")
        if found is not None and key not in settings:
            settings[key] = _number(found, whole=key in _WHOLE_SETTINGS)
    exchange = dataclasses.replace(
        exchange, settings=settings, model=model or exchange.model, usage=usage, finish_reason=finish,
        response_id=exchange.response_id or _first_str(attributes, "gen_ai.response.id"),
        schema=exchange.schema if SCHEMA not in attributes else json_text(attributes[SCHEMA], SCHEMA, where=span.where),
        exported=any(key in attributes for key in (TURN_INDEX, SCHEMA, INPUT_JSON, OUTPUT_JSON)))
    marked = {n for n in listed(json_text(attributes.get(INPUT_JSON), INPUT_JSON, where=span.where))
              if isinstance(n, int) and not isinstance(n, bool)}
    return marked_json(exchange, marked, attributes.get(OUTPUT_JSON) is True, span.where)


def _first_str(attributes: dict[str, Any], *keys: str) -> str | None:
    return next((attributes[key] for key in keys if isinstance(attributes.get(key), str)), None)


def _usage(attributes: dict[str, Any]) -> dict[str, Any] | None:
    pairs = (("prompt_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")),
             ("completion_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                                    "llm.token_count.completion")),
             ("total_tokens", ("llm.token_count.total",)))
    usage = {name: _number(next(attributes[key] for key in keys if key in attributes), whole=True)
             for name, keys in pairs if any(key in attributes for key in keys)}
    counts = [usage.get(name) for name in ("prompt_tokens", "completion_tokens")]
    if "total_tokens" not in usage and all(isinstance(n, int) and not isinstance(n, bool) for n in counts):
        usage["total_tokens"] = sum(counts)
    return usage or None


_WHOLE_SETTINGS = ("max_tokens", "seed")


def _number(value: Any, *, whole: bool) -> Any:
    """A number an attribute holds as another kind (OTLP JSON writers differ: a count as a double or as text, a
    temperature as text) as the number it is: `whole`, an integer; anything else as it was."""
    if isinstance(value, str):
        text = value.strip()
        try:
            number = int(text) if text.lstrip("-").isdigit() else float(text)
        except ValueError:
            return value
        if not math.isfinite(number):  # `NaN`, `Infinity`: no JSON number, and no count or setting
            return value
        value = number
    if whole and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# Roles as frameworks name them on spans (LangChain's `human` and `ai`, Gemini's `model`), in any case: the chat
# role each stands for. Any other role stays as it is, and is refused where it is read.
_ROLES = {"human": "user", "ai": "assistant", "model": "assistant", **{role: role for role in ROLES}}


def _role(raw: Any) -> Any:
    return _ROLES.get(raw.lower(), raw) if isinstance(raw, str) else raw


# OpenInference flattens lists into numbered attributes: `llm.input_messages.0.message.role`.


def _flattened(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The numbered items, in order. A number left out is refused: a message left out would shift every later
    one, and the turn would no longer be what the model saw (attributes dropped by a limit or a processor)."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        number, _, rest = key[len(prefix) + 1:].partition(".")
        if number.isascii() and number.isdigit() and rest:  # (`²` is a digit to Python, no number to a trace)
            items.setdefault(segment_index(number), {})[rest] = value
    missing = next((n for n in range(len(items)) if n not in items), None)
    if missing is not None:
        raise Located(f"{prefix}.{missing} is not recorded, but {prefix}.{max(items)} is: the span's attributes "
                      "were cut (an attribute count limit?)")
    return [items[n] for n in sorted(items)]


def _openinference_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for item in _flattened(attributes, prefix):
        message: dict[str, Any] = {"role": _role(item.get("message.role"))}
        if "message.content" in item:
            message["content"] = item["message.content"]
        parts = _flattened(item, "message.contents")
        if parts and "content" not in message:
            message["content"] = [openinference_part(part) for part in parts]
        calls = _flattened(item, "message.tool_calls")
        if calls:
            message["tool_calls"] = [{"id": call.get("tool_call.id", ""), "type": "function", "function": {
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments", "{}")}} for call in calls]
        for key in ("tool_call_id", "name"):
            if f"message.{key}" in item:
                message[key] = item[f"message.{key}"]
        messages.append(message)
    return messages


def _openinference_tools(attributes: dict[str, Any]) -> list[Any]:
    tools = []
    for item in _flattened(attributes, "llm.tools"):
        schema = json_text(item.get("tool.json_schema"), "llm.tools.N.tool.json_schema")
        if isinstance(schema, dict):
            tools.append(schema)
    return tools


# OpenLLMetry (Traceloop) flattens the messages of its own older GenAI attributes: `gen_ai.prompt.0.role`.


def _openllmetry_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    given = "assistant" if prefix == "gen_ai.completion" else None  # (a completion's role goes without saying)
    for item in _flattened(attributes, prefix):
        message: dict[str, Any] = {"role": _role(item.get("role", given))}
        content = item.get("content")
        parts = json_text(content) if isinstance(content, str) and content.startswith("[{") else None
        is_parts = isinstance(parts, list) and all(isinstance(part, dict) and "type" in part for part in parts)
        message["content"] = parts if is_parts else content  # multimodal content: its parts, written as JSON
        calls = _flattened(item, "tool_calls")
        if calls:
            message["tool_calls"] = [{"id": call.get("id", ""), "type": "function", "function": {
                "name": call.get("name"), "arguments": call.get("arguments", "{}")}} for call in calls]
        if "tool_call_id" in item:
            message["tool_call_id"] = item["tool_call_id"]
        messages.append(message)
    return messages


def _openllmetry_tools(attributes: dict[str, Any]) -> list[Any]:
    named = "llm.request.functions.N.parameters"
    return [{"type": "function", "function": {"name": item.get("name"), "description": item.get("description"),
                                              "parameters": json_text(item.get("parameters"), named)}}
            for item in _flattened(attributes, "llm.request.functions") if isinstance(item.get("name"), str)]


# GenAI semantic conventions: `gen_ai.input.messages` (JSON, messages of parts), or one event per message.


def _genai_messages(span: Span, read: bool = True) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The span's input messages (none unless `read`) and its output messages, as chat messages."""
    attributes = span.attributes
    messages: list[dict[str, Any]] = []
    instructions = json_text(attributes.get("gen_ai.system_instructions"), "gen_ai.system_instructions")
    if isinstance(instructions, list) and instructions:
        messages.append({"role": "system", "content": _parts_text(instructions)})
    elif instructions is None and isinstance(attributes.get("gen_ai.system_instructions"), str) \
            and attributes["gen_ai.system_instructions"].strip():  # written as the text itself, not as parts
        messages.append({"role": "system", "content": attributes["gen_ai.system_instructions"]})
    # (ContextDeck's later turns are not read: `exchange_of_span`)
    inputs = json_text(attributes.get("gen_ai.input.messages"), "gen_ai.input.messages") if read else []
    outputs = json_text(attributes.get("gen_ai.output.messages"), "gen_ai.output.messages")
    if isinstance(inputs, list):
        for message in inputs:
            messages.extend(_from_parts(message, span))
        replies = [reply for message in listed(outputs) for reply in _from_parts(message, span)] \
            if isinstance(outputs, list) else []
        return messages, replies
    return _genai_events(span)


def _parts_text(parts: list[Any]) -> str:
    return "\n".join(str(part.get("content", "")) for part in parts if isinstance(part, dict))


def _from_parts(message: Any, span: Span) -> list[dict[str, Any]]:
    """One GenAI message of parts as chat messages: text and tool calls, and one tool message per response."""
    if not isinstance(message, dict):
        raise Located("a message of gen_ai.input.messages is not an object", span.where)
    parts = [part for part in listed(message.get("parts")) if isinstance(part, dict)]
    # The reply's reasoning is not content: the next request does not send it back, so kept as content the
    # reply would not line up with the request repeating it.
    thoughts = [part for part in parts if part.get("type") == "reasoning"]
    parts = [part for part in parts if part.get("type") != "reasoning"]
    responses = [part for part in parts if part.get("type") == "tool_call_response"]
    if responses:
        return [{"role": "tool", "tool_call_id": str(part.get("id", "")),
                 "content": _as_text(part.get("response", part.get("result")))} for part in responses]
    texts = [part for part in parts if part.get("type") == "text"]
    calls = [part for part in parts if part.get("type") == "tool_call"]
    others = [part for part in parts if part.get("type") not in ("text", "tool_call")]
    # No text part is no content (null), as OpenInference's absent `message.content`; a text part "" is a text.
    content = (_parts_text(texts) if texts else None) if not others else [
        chat_part(part) for part in parts if part not in calls]
    chat: dict[str, Any] = {"role": _role(message.get("role")), "content": content}
    if calls:
        chat["tool_calls"] = [{"id": str(call.get("id", "")), "type": "function", "function": {
            "name": call.get("name"), "arguments": _as_text(call.get("arguments"))}} for call in calls]
    if thoughts:
        chat["reasoning"] = _parts_text(thoughts)
    if isinstance(message.get("finish_reason"), str):  # (an output message's: the choice's own)
        chat["finish_reason"] = message["finish_reason"]
    return [chat]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _genai_events(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The older conventions' span events: one per message (`gen_ai.user.message`, ..., `gen_ai.choice`), its
    body as attributes or as the JSON of `gen_ai.event.content` (Azure AI Inference, Semantic Kernel); before
    them, `gen_ai.content.prompt` and `gen_ai.content.completion` holding the messages as OpenAI's JSON."""
    messages: list[dict[str, Any]] = []
    replies: list[dict[str, Any]] = []
    for name, _, attributes in span.events:
        body = json_text(attributes.get("gen_ai.event.content"), f"{name}: gen_ai.event.content")
        body = body if isinstance(body, dict) else attributes
        if name in ("gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message"):
            message: dict[str, Any] = {"role": name.split(".")[1], "content": body.get("content")}
            calls = json_text(body.get("tool_calls"), f"{name}: tool_calls")
            if isinstance(calls, list) and calls:
                message["tool_calls"] = calls
            messages.append(message)
        elif name == "gen_ai.tool.message":
            messages.append({"role": "tool", "tool_call_id": str(body.get("id", "")),
                             "content": _as_text(body.get("content")) if "content" in body else None})
        elif name == "gen_ai.choice":
            found = json_text(body.get("message"), f"{name}: message")
            if isinstance(found, dict):
                finish = body.get("finish_reason")  # (the choice's, beside its message, as an output message's)
                replies.append({"role": "assistant", **found, **({"finish_reason": finish}
                                                                   if isinstance(finish, str) else {})})
        elif name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            held = json_text(attributes.get(name.replace("content.", "")), name.replace("content.", ""))
            said = [item for item in listed(held) if isinstance(item, dict)]
            (messages if name.endswith("prompt") else replies).extend(
                {"role": "assistant", **item} if name.endswith("completion") else item for item in said)
    if not messages:
        raise Located("the model span records no messages (is capturing message content switched off? or are they "
                      "log records this file does not hold? give their file with it)", span.where)
    if all(message.get("content") is None and not message.get("tool_calls") for message in messages):
        raise Located("the model span's message events record no content (is capturing message content "
                      "switched off?)", span.where)
    return messages, replies


def _genai_tools(attributes: dict[str, Any]) -> list[Any]:
    found = json_text(attributes.get("gen_ai.tool.definitions"), "gen_ai.tool.definitions")
    return found if isinstance(found, list) else []


# -- tool spans -------------------------------------------------------------------------------------


def tool_run(span: Span) -> ToolRun:
    attributes = span.attributes
    call_id = _first_str(attributes, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    name = _first_str(attributes, "gen_ai.tool.name", "tool.name")
    raw_arguments = attributes.get("gen_ai.tool.call.arguments", attributes.get("tool.parameters"))
    try:
        arguments = arguments_of(raw_arguments, span.where) if raw_arguments is not None else None
    except Located:
        arguments = None
    result_keys = ("gen_ai.tool.call.result", "output.value")
    has_result = any(key in attributes for key in result_keys)
    result = next((attributes[key] for key in result_keys if key in attributes), None)
    seconds = round((span.end - span.start) / 1e9, 6) if span.end >= span.start > 0 else None
    path = attributes.get(OUTPUT_PATH)
    return ToolRun(span.where, call_id, name, arguments, result, has_result,
                   iso_precise(span.start) if span.start else None, seconds,
                   iso(span.end / 1e9) if span.end else None, span.error, span.parent,
                   path if isinstance(path, str) else None,
                   attributes.get(RESULT_JSON) is True if TURN_INDEX in attributes else None)
