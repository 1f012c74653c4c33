"""OpenAI Responses API exchanges: a request's `instructions` and `input` items, and its response's `output` items,
read as the chat completions messages they stand for (docs/format.md §10).

A reply's items (its text, its `function_call`s) make one assistant message, and the next request's input repeats
them as items again, so both go through `_messages` and line up as a chat log does. A request that goes on from an
earlier response (`previous_response_id`) sends only what is new; `line_up` puts the conversation before it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..protocol._messages import part_text
from ._chat import SETTINGS, Exchange, arguments_of, failure, openai_exchange, server_events
from ._problems import Located, inside

# Items the server runs itself (web search, a computer, code, MCP): no call of the agent's to plan, left out.
_BUILT_IN = ("web_search_call", "file_search_call", "computer_call", "computer_call_output", "code_interpreter_call",
             "image_generation_call", "local_shell_call", "local_shell_call_output", "mcp_call", "mcp_list_tools",
             "mcp_approval_request", "mcp_approval_response", "shell_call", "shell_call_output", "apply_patch_call",
             "apply_patch_call_output")
# The finish reason a chat completion would give for an incomplete response's reason.
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
_ENDED = ("response.completed", "response.incomplete", "response.failed")


def is_responses_request(body: Any) -> bool:
    return isinstance(body, dict) and "messages" not in body and "input" in body


def responses_exchange(body: dict[str, Any], response: Any, where: str, *,
                       latency_ms: float | None = None) -> Exchange:
    """An exchange from a Responses API request body and, optionally, its response (or its streamed events)."""
    raw = body["input"]
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise Located("the request's 'input' is neither a text nor a list of items", where)
    instructions = body.get("instructions")
    messages = [{"role": "system", "content": instructions}] if isinstance(instructions, str) and instructions else []
    left_out: list[tuple[str, str, str]] = []
    messages += _messages(items, where, "input item", left_out)
    request: dict[str, Any] = {"messages": messages, "tools": body.get("tools"),
                               **{key: body[key] for key in SETTINGS if key in body and key != "tool_choice"}}
    if isinstance(body.get("tool_choice"), str):  # (an object names a tool in another shape than chat's)
        request["tool_choice"] = body["tool_choice"]
    if body.get("max_output_tokens") is not None:
        request["max_completion_tokens"] = body["max_output_tokens"]
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
        request["reasoning_effort"] = reasoning["effort"]
    form = body.get("text", {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(form, dict) and form.get("type") == "json_schema":
        request["response_format"] = {"type": "json_schema", "json_schema": {"schema": form.get("schema")}}
    answer, thought = _completion(response, inside(where, "response"), left_out) if response is not None \
        else (None, None)
    exchange = dataclasses.replace(openai_exchange(request, answer, where, latency_ms=latency_ms),
                                   left_out=tuple(left_out))
    if thought and exchange.reply is not None:
        exchange = dataclasses.replace(exchange, reply=dataclasses.replace(exchange.reply, reasoning=thought))
    continues = body.get("previous_response_id")
    return dataclasses.replace(exchange, continues=continues) if isinstance(continues, str) and continues \
        else exchange


def _messages(items: list[Any], where: str, label: str, left_out: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Items as chat messages: a reply's text and the function calls after it are one assistant message. An item of
    a type not known (OpenAI adds them) is left out, said in `left_out` (its place, what it is, the item as text)."""
    messages: list[dict[str, Any]] = []
    for n, item in enumerate(items):
        place = inside(where, f"{label} {n}")
        if not isinstance(item, dict):
            raise Located(f"the {label} is not an object", place)
        kind = item.get("type", "message")
        if kind == "message":
            content, refusal = _content(item.get("content"))
            message: dict[str, Any] = {"role": item.get("role"), "content": content}
            if refusal is not None:
                message["refusal"] = refusal
            last = messages[-1] if messages else None
            if last is not None and last.get("role") == "assistant" == message["role"]:
                _join(last, message)  # one reply's several message items (text around a built-in tool's call)
            else:
                messages.append(message)
        elif kind == "function_call":
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise Located("the function call has no name", place)
            call_id = item.get("call_id")
            call = {"id": call_id if isinstance(call_id, str) else "", "type": "function", "function": {
                "name": name, "arguments": arguments_of(item.get("arguments"), inside(place, name))}}
            last = messages[-1] if messages else None
            if last is not None and last.get("role") == "assistant":  # the reply's text, or its earlier calls
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise Located("the function call output has no 'call_id' naming the call it answers", place)
            output, _ = _content(item.get("output"))
            messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
        elif kind == "item_reference":
            raise Located(f"an item_reference ({item.get('id')!r}): the item it names is stored on OpenAI's server, "
                          "not in the file", place)
        elif kind == "custom_tool_call":
            raise Located("a custom tool call: only function calls are read (a custom tool's free-form input has no "
                          "parameters to plan a call with)", place)
        elif kind != "reasoning" and kind not in _BUILT_IN:  # (reasoning is not sent back as content)
            named = f" ({item['id']!r})" if isinstance(item.get("id"), str) else ""
            said = f"an item of type {kind!r}{named}, which ContextDeck does not read: left out"
            left_out.append((place, said, json.dumps(item, sort_keys=True, default=str)))
    return messages


def _join(reply: dict[str, Any], message: dict[str, Any]) -> None:
    """A message of the same reply added to it: its content parts after the reply's, its refusal and tool calls
    after the reply's."""
    if reply.get("content") is None:
        reply["content"] = message.get("content")
    elif message.get("content") is not None:
        reply["content"] = _parts(reply["content"]) + _parts(message["content"])
    refusals = [text for text in (reply.get("refusal"), message.get("refusal")) if text is not None]
    if refusals:
        reply["refusal"] = "\n".join(refusals)
    if message.get("tool_calls"):
        reply.setdefault("tool_calls", []).extend(message["tool_calls"])


def _parts(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [{"type": "text", "text": content}] \
        if isinstance(content, str) else [content]


def _content(content: Any) -> tuple[Any, str | None]:
    """A message's content as chat completions writes it (text parts as `text`, an image by its URL), and its
    refusal; a text as it is."""
    if not isinstance(content, list):
        return content, None
    parts: list[Any] = []
    refusals: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        text = part_text(part)
        if text is not None:
            parts.append({"type": "text", "text": text})
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            refusals.append(part["refusal"])
        elif kind == "input_image" and isinstance(part.get("image_url") or part.get("file_id"), str):
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url") or part["file_id"]}})
        else:
            parts.append(part)
    return (parts or None), ("\n".join(refusals) if refusals else None)


def _completion(response: Any, where: str, left_out: list[tuple[str, str, str]]) -> tuple[dict[str, Any], str | None]:
    """The response as a chat completion (its output items as the reply), and what its reasoning items
    summarise."""
    if isinstance(response, list | str):
        response = _streamed(response, where)
    if not isinstance(response, dict):
        raise Located("the response is not a JSON object", where)
    if failure(response) is not None:
        return {"error": response["error"]}, None
    if response.get("status") == "failed":
        return {"error": "the response failed"}, None
    output = response.get("output")
    if not isinstance(output, list):
        raise Located("the response has no 'output' list (a chat completions response, to a Responses API "
                      "request?)", where)
    # The API has no `n`: whatever the output's items say is one reply.
    reply: dict[str, Any] = {"role": "assistant", "content": None}
    for message in _messages(output, where, "output item", left_out):
        _join(reply, message)
    calls = bool(reply.get("tool_calls"))
    reason = response.get("incomplete_details", {}).get("reason") if response.get("status") == "incomplete" \
        and isinstance(response.get("incomplete_details"), dict) else None
    finish = _INCOMPLETE.get(reason, reason) if reason is not None else "tool_calls" if calls else "stop"
    completion: dict[str, Any] = {
        "choices": [{"index": 0, "message": reply, "finish_reason": finish}]}
    for key, their in (("id", "id"), ("created", "created_at"), ("model", "model")):
        if response.get(their) is not None:
            completion[key] = response[their]
    usage = response.get("usage")
    if isinstance(usage, dict):
        completion["usage"] = {"prompt_tokens": usage.get("input_tokens"),
                               "completion_tokens": usage.get("output_tokens"),
                               "total_tokens": usage.get("total_tokens")}
    thoughts = [_summary(item) for item in output if isinstance(item, dict) and item.get("type") == "reasoning"]
    return completion, "\n".join(thought for thought in thoughts if thought) or None


def _summary(item: dict[str, Any]) -> str:
    """What a reasoning item's summary says (its `summary_text` parts)."""
    parts = item.get("summary")
    return "\n".join(part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)) \
        if isinstance(parts, list) else ""


def _streamed(events: list[Any] | str, where: str) -> Any:
    """The response a stream of events ends with (`response.completed`, or `.incomplete`, `.failed`)."""
    if isinstance(events, str):
        events = server_events(events, where)
    ended = [event for event in events if isinstance(event, dict) and event.get("type") in _ENDED]
    if not ended:
        raise Located("the streamed events hold no response.completed (nor .incomplete, .failed): the stream "
                      "was cut?", where)
    return ended[-1].get("response")
