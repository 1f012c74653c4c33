"""Importing OpenAI Responses API exchanges and logs: input and output items read as the chat messages they stand
for, `previous_response_id` chains, streamed events (docs/format.md §10)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_traces import attrs, jsonl, span

from contextdeck.engine import TraceError, import_bytes

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city", "strict": True,
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                          "additionalProperties": False}}
USER = {"role": "user", "content": "Weather in Paris?"}
THOUGHT = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "The weather tool."}]}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather",
        "arguments": "{\"city\":\"Paris\"}", "status": "completed"}
RESULT = {"type": "function_call_output", "call_id": "call_a", "output": "{\"sky\": \"sunny\"}"}
ANSWER = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "Sunny in Paris.", "annotations": []}]}


def response(response_id: str, *output: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": response_id, "object": "response", "created_at": 1764320000, "status": "completed",
            "model": "gpt-4.1-2025-04-14", "error": None, "incomplete_details": None, "output": list(output),
            "usage": {"input_tokens": 30, "output_tokens": 10, "total_tokens": 40}, **extra}


def request(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1", "instructions": "Be brief.", "input": list(items), "tools": [WEATHER], **extra}


def stateless() -> list[dict[str, Any]]:
    """A run logged request by request, each sending the whole conversation back (`store: false`)."""
    return [{"request": request(USER), "response": response("resp_1", THOUGHT, CALL)},
            {"request": request(USER, THOUGHT, CALL, RESULT), "response": response("resp_2", ANSWER)}]


def test_a_responses_log_is_read_as_the_chat_it_stands_for() -> None:
    """Instructions are the system message, a reply's function calls a plan, their outputs the calls' outputs, the
    last reply the final output; reasoning is the turn's `_model.reasoning`, never content; usage in chat's names."""
    [imported] = import_bytes(jsonl(stateless()), "run.jsonl")
    messages = imported.document.context.messages
    assert messages[0] == {"type": "preset", "model": "gpt-4.1"}
    assert list(messages[1]["tool"]) == ["get_weather"]
    assert messages[2:4] == [{"role": "system", "content": "Be brief."}, USER]
    assert messages[4]["plan"] == [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†call_a"}]
    assert messages[4]["_model"]["reasoning"] == "The weather tool."
    assert messages[4]["_model"]["usage"] == {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40}
    assert (messages[5]["kind"], messages[5]["data"]) == ("call_a", {"sky": "sunny"})
    assert imported.document.solution["output"] == "Sunny in Paris."
    assert (imported.turns, imported.warnings) == (2, ())


def test_a_request_going_on_from_the_reply_before_it_is_read_as_the_whole_conversation() -> None:
    """`previous_response_id` sends only what is new: the same run as the stateless log; one whose earlier response
    the file does not hold is refused, saying the conversation is on the server."""
    chained = stateless()
    chained[1]["request"] = request(RESULT, previous_response_id="resp_1")
    plain = import_bytes(jsonl(stateless()), "run.jsonl")[0].document
    assert import_bytes(jsonl(chained), "run.jsonl")[0].document.to_json() == plain.to_json()
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(chained[1]).encode(), "ex.json")
    assert str(caught.value).startswith("ex.json: the request goes on from response 'resp_1' "
                                        "(previous_response_id), which is not the reply of the exchange before it")


def test_a_streamed_response_is_the_response_its_events_end_with() -> None:
    """The events of a streamed response, as a list or as server-sent events' text: the response of its
    `response.completed` event; a stream without one is refused as cut."""
    events = [{"type": "response.created", "response": response("resp_2", status="in_progress")},
              {"type": "response.output_text.delta", "delta": "Sunny"},
              {"type": "response.completed", "response": response("resp_2", ANSWER)}]
    plain = import_bytes(jsonl(stateless()), "run.jsonl")[0].document.to_json()
    text = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events)
    for streamed in (events, text):
        lines = stateless()
        lines[1]["response"] = streamed
        assert import_bytes(jsonl(lines), "run.jsonl")[0].document.to_json() == plain
    lines[1]["response"] = events[:2]
    with pytest.raises(TraceError, match=r"^run.jsonl: line 2: response: the streamed events hold no "
                                         r"response.completed"):
        import_bytes(jsonl(lines), "run.jsonl")


def test_an_incomplete_or_failed_response_is_said() -> None:
    """`incomplete` at the token limit is a reply cut short; `failed` a request that failed, with its message."""
    lines = stateless()
    lines[1]["response"] = response("resp_2", ANSWER, status="incomplete",
                                    incomplete_details={"reason": "max_output_tokens"})
    assert import_bytes(jsonl(lines), "run.jsonl")[0].warnings == (
        "run.jsonl: line 2: the last reply was cut at its token limit: its output may be incomplete (finish_reason "
        "'length')",)
    lines[1]["response"] = response("resp_2", status="failed", error={"code": "server_error", "message": "Boom."})
    assert import_bytes(jsonl(lines), "run.jsonl")[0].warnings == (
        "run.jsonl: line 2: the request failed (Boom.): the run ends with it unanswered",)


def test_a_response_fails_when_its_error_is_not_null_in_both_apis() -> None:
    """Both readers ask the same: a response whose `error` is not null failed (a Responses one with its output
    too); `"error": null` is no failure (a chat body holding only that is refused for its missing choices)."""
    lines = stateless()
    lines[1]["response"] = response("resp_2", error={"message": "Boom."})
    assert import_bytes(jsonl(lines), "run.jsonl")[0].warnings == (
        "run.jsonl: line 2: the request failed (Boom.): the run ends with it unanswered",)
    chat = {"request": {"model": "m", "messages": [USER]}, "response": {"error": None}}
    with pytest.raises(TraceError, match=r"^ex.json: the response has no 'choices'$"):
        import_bytes(json.dumps(chat).encode(), "ex.json")


def test_input_parts_are_read_as_chat_parts() -> None:
    """An image part is chat's `image_url`, text parts are text, a refused reply is a refusal; the server's own
    tools (web search) are left out, as a built-in tool is in a chat request."""
    image = {"role": "user", "content": [{"type": "input_text", "text": "What is it?"},
                                         {"type": "input_image", "image_url": "https://x/cat.png", "detail": "auto"}]}
    searched = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    refused = {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't."}]}
    body = {"request": request(image, tools=[{"type": "web_search"}]), "response": response("r", searched, refused)}
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    assert imported.document.context.messages[-1] == {"role": "user", "content": [
        {"type": "text", "text": "What is it?"}, {"type": "image_url", "image_url": {"url": "https://x/cat.png"}}]}
    assert imported.document.solution["_model"]["refusal"] == "I can't."


@pytest.mark.parametrize(("item", "message"), [
    ({"type": "item_reference", "id": "msg_0"}, "ex.json: input item 1: an item_reference ('msg_0'): the item it "
                                                "names is stored on OpenAI's server, not in the file"),
    ({"type": "custom_tool_call", "call_id": "c", "name": "shell", "input": "ls"},
     "ex.json: input item 1: a custom tool call: only function calls are read"),
    ({"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": "{city"},
     "ex.json: input item 1: get_weather: the arguments are not JSON"),
    ({"type": "function_call_output", "output": "x"}, "ex.json: input item 1: the function call output has no "
                                                      "'call_id' naming the call it answers"),
    (5, "ex.json: input item 1: the input item is not an object"),
])
def test_an_item_that_cannot_be_read_is_named_by_its_place(item: Any, message: str) -> None:
    body = {"request": request(USER, copy.deepcopy(item)), "response": response("r", ANSWER)}
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(body).encode(), "ex.json")
    assert str(caught.value).startswith(message)


def test_an_item_of_a_type_not_known_is_left_out_with_a_warning_said_once_at_its_first_place() -> None:
    """OpenAI adds item types: one ContextDeck does not know is left out, the rest of the log read; the warning names
    its line, item and type (and its id), once for the item however many later requests repeat it (format.md §10)."""
    seen = {"type": "hologram", "id": "hg_1", "shape": "cube"}
    other = {"type": "hologram", "id": "hg_2", "shape": "cone"}
    log = [{"request": request(USER), "response": response("resp_1", THOUGHT, seen, CALL)},
           {"request": request(USER, THOUGHT, seen, CALL, RESULT, other), "response": response("resp_2", ANSWER)}]
    [imported] = import_bytes(jsonl(log), "run.jsonl")
    assert imported.warnings == (
        "run.jsonl: line 1: response: output item 1: an item of type 'hologram' ('hg_1'), which ContextDeck does not "
        "read: left "
        "out (and where 1 later request(s) repeat it)",
        "run.jsonl: line 2: input item 5: an item of type 'hologram' ('hg_2'), which ContextDeck does not read: left "
        "out")
    assert imported.document.to_json() == import_bytes(jsonl(stateless()), "run.jsonl")[0].document.to_json()


def test_several_message_items_of_one_reply_are_one_reply() -> None:
    """The Responses API has no `n`: a reply's text before and after a built-in tool's call is one reply, its texts
    joined, no choice left out; the next request repeating its items lines up with it."""
    def said(text: str, item_id: str) -> dict[str, Any]:
        return {**ANSWER, "id": item_id, "content": [{"type": "output_text", "text": text, "annotations": []}]}

    searched = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    items = [said("Let me search.", "msg_1"), searched, said("Here is the news.", "msg_2")]
    again = {"role": "user", "content": "Thanks. More?"}
    lines = [{"request": request(USER), "response": response("resp_1", *items)},
             {"request": request(USER, *items, again), "response": response("resp_2", ANSWER)}]
    [imported] = import_bytes(jsonl(lines), "run.jsonl")
    assert imported.warnings == ()
    assert imported.document.context.messages[4]["content"] == "Let me search.\nHere is the news."
    assert imported.document.context.messages[5] == again
    [alone] = import_bytes(json.dumps(lines[0]).encode(), "ex.json")
    assert (alone.warnings, alone.document.solution["output"]) == ((), "Let me search.\nHere is the news.")


def test_a_chat_completion_given_as_a_responses_reply_is_refused() -> None:
    body = {"request": request(USER), "response": {"choices": [{"message": {"role": "assistant", "content": "Hi"}}]}}
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(body).encode(), "ex.json")
    assert str(caught.value) == ("ex.json: response: the response has no 'output' list (a chat completions response, "
                                 "to a Responses API request?)")


def without_audit(messages: Any) -> list[Any]:
    """The messages without what says where and when each came from (a log's lines, a trace's spans)."""
    return [{key: value for key, value in message.items() if key not in ("_model", "_date", "_run")}
            for message in messages]


def test_an_openinference_span_around_the_responses_api_is_read_from_its_bodies() -> None:
    """OpenInference records the Responses API's request and response bodies as `input.value` and `output.value`:
    each model span is that exchange, and the trace is the run the log of the same exchanges gives."""
    spans = [span(f"{n + 1:016x}", "Response", n * 100, n * 100 + 50, attrs(
        openinference__span__kind="LLM", input__value=line["request"], output__value=line["response"]))
        for n, line in enumerate(stateless())]
    [traced] = import_bytes(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), "t.json")
    [logged] = import_bytes(jsonl(stateless()), "run.jsonl")
    assert without_audit(traced.document.context.messages) == without_audit(logged.document.context.messages)
    assert traced.document.solution["output"] == "Sunny in Paris."
    assert traced.document.context.messages[4]["_model"]["reasoning"] == "The weather tool."
