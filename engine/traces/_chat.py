"""Chat exchanges in one shape, whatever wrote them: OpenAI bodies, OpenInference or GenAI spans.

An `Exchange` is one request the model received (its messages and tools) and, when known, its reply, with
what the reply cost. Every reader turns its input into exchanges; `lineup` and `build` do the rest once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..document._json import parse as json_parse
from ..protocol._messages import CHAT_ROLES, content_text
from ._composed import read_composed
from ._problems import Located, inside

ROLES = CHAT_ROLES
# Settings of the model call worth keeping as a preset (001's "LLM config"); the rest of a body is the request.
SETTINGS = ("model", "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "stop",
            "frequency_penalty", "presence_penalty", "reasoning_effort", "parallel_tool_calls", "tool_choice")
# Of them, those a GenAI span carries as `gen_ai.request.<name>`: read on import, written on export.
SPAN_SETTINGS = ("temperature", "top_p", "max_tokens", "seed", "frequency_penalty", "presence_penalty")


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for: its id, the function's name, its arguments (a JSON object)."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatMessage:
    """One chat message: `content` is text, or a list of parts when some are not text (an image)."""

    role: str
    content: Any
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    refusal: str | None = None  # the model's refusal (chat completions' `refusal`), its content then null
    reasoning: str | None = None  # what a reply says it thought (GenAI's `reasoning` parts): never sent back

    @cached_property
    def key(self) -> tuple[Any, ...]:
        """What must be equal for a later request to repeat this message (SDKs add and drop nulls)."""
        calls = tuple((call.id, call.name, _canonical(call.arguments)) for call in self.tool_calls)
        return self.role, _canonical(self.content or self.refusal or ""), calls, self.tool_call_id

    def describe(self) -> str:
        if self.tool_calls:
            return f"{self.role} calling " + ", ".join(f"{call.name} ({call.id})" for call in self.tool_calls)
        text = self.content if isinstance(self.content, str) else _canonical(self.content)
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"{self.role} {text!r}"


@dataclass(frozen=True)
class Exchange:
    """One request and its reply. `where` names it in its file (`line 3`, `span 1f2e…`)."""

    where: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[tuple[str, dict[str, Any]], ...] = ()
    reply: ChatMessage | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    schema: Any = None  # the response_format's JSON Schema, when one was asked for
    model: str | None = None
    usage: dict[str, Any] | None = None
    latency_ms: float | None = None
    date: str | None = None  # when the reply came (ISO 8601 UTC)
    finish_reason: str | None = None
    response_id: str | None = None
    choices: int = 1  # how many the response held (`n` > 1): the first is the reply
    others: tuple[tuple[ChatMessage, str | None], ...] = ()  # the other choices that read, with their finish reason
    failed: str | None = None  # the error recorded instead of a response (a rate limit, a server error)
    continues: str | None = None  # Responses API: the response it goes on from (`previous_response_id`)
    # What of it was not read, for a warning: its place, what it was, and the item as text (one item, one warning)
    left_out: tuple[tuple[str, str, str], ...] = ()
    file: str = ""  # the file it is in, where a trace is read from several (a span's: `Span.file`)
    # ContextDeck's own export, which marks each text it wrote as a value's JSON text (read back as that value): any
    # other text of it is a text, whatever the schema asked for
    exported: bool = False
    # The tools read from the solution schema ContextDeck composed (`read_composed`): the document's own, written
    # back as they were, without the `_outputPath` an imported function is given
    composed_tools: frozenset[str] = frozenset()

    def summary(self, source: str) -> dict[str, Any]:
        """The reply's audit in short, as `_model` holds a model's answer (docs/models.md)."""
        found = {"model": self.model, "usage": self.usage, "latency_ms": self.latency_ms, "date": self.date,
                 "finish_reason": self.finish_reason, "id": self.response_id,
                 "refusal": self.reply.refusal if self.reply is not None else None,
                 "reasoning": self.reply.reasoning if self.reply is not None else None,
                 "source": f"{self.file or source} {self.where}".strip()}
        return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class ToolRun:
    """A tool's execution seen in a trace (a tool span): which call, when, and what it returned."""

    where: str
    call_id: str | None
    name: str | None
    arguments: dict[str, Any] | None
    result: Any
    has_result: bool  # False when the span kept no result
    started: str | None
    seconds: float | None
    ended: str | None
    error: str | None = None
    within: str | None = None  # the span it ran under: ContextDeck's export puts a call under its turn's
    output_path: str | None = None  # the call's `_outputPath`, as ContextDeck's export records it
    # ContextDeck's export: whether the result is a value's JSON text (else a text, whatever it reads as); None:
    # another tool's span, whose text is read as JSON when it holds an object or an array
    result_json: bool | None = None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def iso(seconds: float) -> str | None:
    """Unix seconds as ISO 8601 UTC, to the second as `_date` is written; None for a time no date can say (a log's
    milliseconds where seconds belong: year 57,000)."""
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return None


def iso_precise(nanos: int) -> str | None:
    """Unix nanoseconds as ISO 8601 UTC, to the millisecond; None as `iso`."""
    second = iso(nanos // 1_000_000_000)
    return None if second is None else second[:-1] + f".{(nanos // 1_000_000) % 1000:03d}Z"


# -- OpenAI chat completions ------------------------------------------------------------------------


def arguments_of(raw: Any, where: str) -> dict[str, Any]:
    """A tool call's arguments: JSON text (or an object) holding a JSON object."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        raise Located(f"the arguments are {type(raw).__name__}, not JSON text", where)
    try:
        value = json_parse(raw)
    except ValueError as error:
        raise Located(f"the arguments are not JSON ({error}): {raw[:80]!r}", where) from None
    if not isinstance(value, dict):
        raise Located(f"the arguments are not a JSON object: {raw[:80]!r}", where)
    return value


def openai_message(raw: Any, where: str) -> ChatMessage:
    """One message of a chat completions body (request or reply)."""
    if not isinstance(raw, dict):
        raise Located(f"expected a message object, got {type(raw).__name__}", where)
    role = raw.get("role")
    if role is None:
        raise Located(f"the message has no role; expected one of {', '.join(ROLES)}", where)
    if role not in ROLES:
        raise Located(f"unknown role {role!r}; expected one of {', '.join(ROLES)}", where)
    calls: list[ToolCall] = []
    given = raw.get("tool_calls") or []
    if not isinstance(given, list):
        raise Located("'tool_calls' is not a list", where)
    for n, call in enumerate(given):
        function = call.get("function") if isinstance(call, dict) else None
        kind = call.get("type") if isinstance(call, dict) else None
        if function is None and isinstance(kind, str) and kind != "function":
            raise Located(f"tool call {n} is of type {kind!r}: only function calls are read (a custom tool's "
                          "free-form input has no parameters to plan a call with)", where)
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise Located(f"tool call {n} has no function name", where)  # (no tool is named '': nothing to plan)
        call_id = call.get("id")
        calls.append(ToolCall(call_id if isinstance(call_id, str) else "", function["name"],
                              arguments_of(function.get("arguments"), f"{where}: tool call {n} ({function['name']})")))
    legacy = raw.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str) and legacy["name"]:
        # A `function` message answers it by `name`, its only id.
        calls.append(ToolCall(legacy["name"], legacy["name"],
                              arguments_of(legacy.get("arguments"), f"{where}: function_call")))
    tool_call_id = raw.get("tool_call_id")
    if role == "tool" and not isinstance(tool_call_id, str):
        raise Located("a tool message needs a 'tool_call_id' naming the call it answers", where)
    name = raw.get("name")
    refusal = raw.get("refusal")
    return ChatMessage(role if role != "function" else "tool", content_text(raw.get("content")), tuple(calls),
                       tool_call_id if isinstance(tool_call_id, str) else (name if role == "function" else None),
                       name if isinstance(name, str) and role != "function" else None,
                       refusal if isinstance(refusal, str) and refusal else None)


def tool_schema(function: dict[str, Any]) -> dict[str, Any]:
    """A function definition as a protocol tool schema (002): its description, then its parameter schema."""
    parameters = function.get("parameters")
    schema: dict[str, Any] = {}
    if isinstance(function.get("description"), str):
        schema["description"] = function["description"]
    schema.update(parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}})
    return schema


def openai_tools(body: dict[str, Any], where: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    found: list[tuple[str, dict[str, Any]]] = []
    for n, tool in enumerate(listed(body.get("tools"))):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(tool, dict) and function is None and isinstance(tool.get("name"), str):
            function = tool  # the flat form (`{"type": "function", "name": ...}`)
        if not isinstance(function, dict):
            continue  # a built-in tool (web search, ...): nothing to call by name
        found.append(_function_tool(function, inside(where, f"tool {n}")))
    found.extend(_function_tool(function, inside(where, f"function {n}"))
                 for n, function in enumerate(listed(body.get("functions"))) if isinstance(function, dict))
    return tuple(found)


def _function_tool(function: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """A function definition's name and schema; one without a name, or whose parameters are no schema object,
    is refused rather than imported as a tool nothing can call or with a schema it does not have."""
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise Located("a function tool needs a non-empty string 'name'", where)
    if function.get("parameters") is not None and not isinstance(function["parameters"], dict):
        raise Located(f"the parameters of {name!r} are not a JSON Schema object", where)
    return name, tool_schema(function)


def listed(value: Any) -> list[Any]:
    """A list as it is; anything else (a value where a list belongs, in a broken file) as no items."""
    return value if isinstance(value, list) else []


def response_schema(body: dict[str, Any]) -> Any:
    form = body.get("response_format")
    if isinstance(form, dict) and form.get("type") == "json_schema":
        inner = form.get("json_schema")
        if isinstance(inner, dict):
            return inner.get("schema")
    return None


def openai_exchange(body: Any, response: Any, where: str, *, latency_ms: float | None = None,
                    date: str | None = None) -> Exchange:
    """An exchange from a chat completions request body and, optionally, its response."""
    if not isinstance(body, dict):
        raise Located("the request is not a JSON object", where)
    messages = body.get("messages")
    if not isinstance(messages, list) and ("choices" in body or body.get("object") in _RESPONSES):
        raise Located(f"a chat completions response ({body.get('object') or 'choices'}) without the request it "
                      "answers: nothing to line up; log each request with its response, as {\"request\": ..., "
                      "\"response\": ...}", where)
    if not isinstance(messages, list):
        raise Located("the request has no 'messages' array", where)
    parsed = tuple(openai_message(message, inside(where, f"message {n}"))
                   for n, message in enumerate(messages))
    settings = {key: body[key] for key in SETTINGS if key in body}
    schema, composed, left_out = read_composed(response_schema(body), where)
    exchange = Exchange(where, parsed, openai_tools(body, where) + composed, settings=settings, schema=schema,
                        model=body.get("model") if isinstance(body.get("model"), str) else None,
                        latency_ms=latency_ms, date=date, left_out=left_out,
                        composed_tools=frozenset(name for name, _ in composed))
    if response is None:
        return exchange
    return _with_response(exchange, response, where)


def _with_response(exchange: Exchange, response: Any, where: str) -> Exchange:
    if isinstance(response, list | str):  # streamed: its chunks, or the server-sent events' text
        response = streamed(response, inside(where, "response"))
    if not isinstance(response, dict):
        raise Located("the response is not a JSON object", where)
    failed = failure(response)
    if failed is not None:  # the request failed: the API's error body, a log's, a stream's
        return dataclasses.replace(exchange, failed=failed)
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise Located("the response has no 'choices'", where)
    choice = choices[0]
    reply = openai_message(choice.get("message"), inside(where, "response"))
    created = response.get("created")
    usage = response.get("usage")
    return dataclasses.replace(
        exchange, reply=reply,
        model=response.get("model") if isinstance(response.get("model"), str) else exchange.model,
        usage=usage if isinstance(usage, dict) else None,
        date=exchange.date or (iso(created) if isinstance(created, int | float) and not isinstance(created, bool)
                               else None),
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        response_id=response.get("id") if isinstance(response.get("id"), str) else None,
        choices=len(choices), others=tuple(other_choices(choices[1:], where)),
    )


def other_choices(choices: list[Any], where: str) -> list[tuple[ChatMessage, str | None]]:
    """The choices after the first, those that read as a reply (the next request may repeat one of them)."""
    found = []
    for n, choice in enumerate(choices, start=1):
        try:
            message = openai_message(choice.get("message") if isinstance(choice, dict) else None,
                                     inside(where, f"choice {n}"))
        except Located:
            continue  # (only ever read if a later request repeats it; one that does not read is none of them)
        finish = choice.get("finish_reason")
        found.append((message, finish if isinstance(finish, str) else None))
    return found


def failure(response: Any) -> str | None:
    """The error a response (or a log's line) records instead of a reply, in short; None when it records none
    (`"error": null`, as the Responses API writes on every response, is none)."""
    if not isinstance(response, dict) or response.get("error") is None:
        return None
    return _error_text(response["error"])


def _error_text(error: Any) -> str:
    """An error as a log or the API records it (`{"message": ..., "type": ...}`, or text), in short."""
    said = error.get("message") if isinstance(error, dict) else error
    text = said if isinstance(said, str) else json.dumps(error, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


_RESPONSES = ("chat.completion", "chat.completion.chunk")


def streamed(chunks: list[Any] | str, where: str) -> dict[str, Any]:
    """A streamed response (`chat.completion.chunk`s, as a list or as the server-sent events' text) as the one
    completion its chunks make: each choice's content and refusal joined, its tool calls put together by `index`
    (their arguments come in pieces), its last finish reason; the id, model and time of the first chunk that has
    them, the usage of the last. A chunk's `error` (a stream the server broke off) is the completion's; a stream
    whose choices never got a finish reason, and says no error, was cut, and is refused."""
    if isinstance(chunks, str):
        chunks = server_events(chunks, where)
    completion: dict[str, Any] = {}
    choices: dict[int, dict[str, Any]] = {}
    for n, chunk in enumerate(chunks):
        if not isinstance(chunk, dict):
            raise Located(f"chunk {n} is not a JSON object", where)
        completion.update({key: chunk[key] for key in ("id", "created", "model")
                           if key not in completion and chunk.get(key) is not None})
        if isinstance(chunk.get("usage"), dict):
            completion["usage"] = chunk["usage"]
        if chunk.get("error") is not None:
            completion["error"] = chunk["error"]
        for choice in listed(chunk.get("choices")):
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            index = choice.get("index")
            made = choices.setdefault(index if isinstance(index, int) else 0,
                                      {"message": {"role": "assistant", "content": None}, "calls": {}})
            _add_delta(made, delta)
            if isinstance(choice.get("finish_reason"), str):
                made["finish_reason"] = choice["finish_reason"]
    if completion.get("error") is None and not any("finish_reason" in made for made in choices.values()):
        raise Located("no choice of the streamed chunks has a finish_reason: the stream was cut?", where)
    completion["choices"] = [
        {"index": index, "message": {**made["message"], **({"tool_calls": [
            made["calls"][n] for n in sorted(made["calls"])]} if made["calls"] else {})},
         "finish_reason": made.get("finish_reason")}
        for index, made in sorted(choices.items())]
    return completion


def _add_delta(made: dict[str, Any], delta: dict[str, Any]) -> None:
    """One chunk's delta added to the choice it continues."""
    message = made["message"]
    if isinstance(delta.get("role"), str):
        message["role"] = delta["role"]
    for key in ("content", "refusal"):
        if isinstance(delta.get(key), str):
            message[key] = (message.get(key) or "") + delta[key]
    for piece in listed(delta.get("tool_calls")):
        if not isinstance(piece, dict):
            continue
        index = piece.get("index")
        call = made["calls"].setdefault(index if isinstance(index, int) else len(made["calls"]), {
            "id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        if isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        function = piece.get("function")
        for key in ("name", "arguments"):
            if isinstance(function, dict) and isinstance(function.get(key), str):
                call["function"][key] += function[key]


def server_events(text: str, where: str) -> list[Any]:
    """The JSON of each `data:` line of server-sent events, up to `[DONE]`."""
    found: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("data:"):
            continue  # `event:`, `id:`, comments, the blank lines between events
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            found.append(json_parse(data))
        except ValueError as error:
            raise Located(f"line {number} of its events is not JSON ({error})", where) from None
    return found
