"""Importing OpenAI exchanges, logs and OTLP traces into documents; redaction; exporting runs (format.md §10)."""

from __future__ import annotations

import base64
import copy
import gzip
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from contextdeck.engine import (
    Execution,
    Imported,
    Redaction,
    Status,
    TraceError,
    compose_request,
    export_openai,
    export_otlp,
    import_bytes,
    import_trace,
    parse_document,
    redact_document,
    request_prompt,
    validate,
)

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
# What every imported tool's calls say: where the result goes (docs/format.md §10).
OUTPUT_PATH = {"type": "string", "pattern": "^†",
               "description": "where the result goes, for you to read: a kind of its own, as †result_1"}
SYSTEM = {"role": "system", "content": "You are a weather bot."}
DEVELOPER = {"role": "developer", "content": "Answer in one sentence."}
USER = {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]}


def call(call_id: str, city: str) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": json.dumps({"city": city})}
    return {"id": call_id, "type": "function", "function": function}


def response(message: dict[str, Any], created: int = 1764320000, finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": created, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}}


def exchange() -> dict[str, Any]:
    """One request with its history (two tool calls answered) and the final reply."""
    return {"request": {"model": "gpt-4o-mini", "temperature": 0.2, "tools": [WEATHER], "messages": [
        SYSTEM, DEVELOPER, USER,
        {"role": "assistant", "content": None, "tool_calls": [call("call_a", "Paris"), call("call_b", "Rome")]},
        {"role": "tool", "tool_call_id": "call_a", "content": "{\"sky\": \"sunny\", \"celsius\": 21}"},
        {"role": "tool", "tool_call_id": "call_b", "content": "rainy all day"},
    ]}, "response": response({"role": "assistant", "content": "Paris is sunny, Rome is rainy."})}


def log_lines() -> list[dict[str, Any]]:
    """Three exchanges of one run; the server reuses the id `call_1` for every call, as some do."""
    first = [SYSTEM, USER]
    ask_paris = {"role": "assistant", "content": None, "tool_calls": [call("call_1", "Paris")]}
    ask_rome = {"role": "assistant", "content": "Now Rome.", "tool_calls": [call("call_1", "Rome")]}
    second = [*first, ask_paris, {"role": "tool", "tool_call_id": "call_1", "content": "{\"sky\": \"sunny\"}"}]
    third = [*second, ask_rome, {"role": "tool", "tool_call_id": "call_1", "content": "{\"sky\": \"rain\"}"}]
    return [
        {"request": {"model": "m", "tools": [WEATHER], "messages": first},
         "response": response(ask_paris, 1764320000, "tool_calls"), "latency_ms": 812},
        {"request": {"model": "m", "tools": [WEATHER], "messages": second},
         "response": response({**ask_rome, "refusal": None}, 1764320005, "tool_calls")},
        {"request": {"model": "m", "tools": [WEATHER], "messages": third},
         "response": response({"role": "assistant", "content": "Sunny, then rain."}, 1764320010)},
    ]


def jsonl(lines: list[Any]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def problems(document: Any) -> list[str]:
    found = validate(document.context, document.solution, schema=document.schema)
    return [str(problem) for problem in found if problem.severity == "error"]


# -- one exchange -----------------------------------------------------------------------------------


def test_an_exchange_renders_every_text_and_result_and_offers_its_tools() -> None:
    """An imported exchange validates; the model reads every system, developer and user text and each tool
    result; the function is offered as a tool; each tool call is done with its output."""
    [imported] = import_bytes(json.dumps(exchange()).encode(), "ex.json")
    document = imported.document
    assert imported.format == "openai"
    assert problems(document) == []
    request = compose_request(document.context, document.schema)
    text = request.text()
    for seen in ("You are a weather bot.", "Answer in one sentence.", "Weather in Paris and Rome?",
                 '"sky": "sunny"', '"celsius": 21', "rainy all day"):
        assert seen in text
    assert [(message.role, message.form) for message in request.messages[:3]] == [
        ("system", "text"), ("developer", "text"), ("user", "text")]
    assert [tool.name for tool in request.tools] == ["get_weather"]
    execution = Execution(document.context, document.solution)
    assert [state.status for state in execution.states] == [Status.DONE, Status.DONE]
    outputs = [document.context[execution.record.of(n).last[-1].position] for n in range(2)]
    assert [output["data"] for output in outputs] == [{"sky": "sunny", "celsius": 21}, "rainy all day"]
    assert outputs[0]["_call"] == {"_tool": "get_weather", "city": "Paris", "_outputPath": "†call_a"}
    assert document.solution["output"] == "Paris is sunny, Rome is rainy."
    assert document.solution["_model"]["usage"]["total_tokens"] == 59
    assert document.solution["_model"]["model"] == "gpt-4o-mini-2024-07-18"


def test_an_exchange_keeps_its_settings_schema_and_tool_schemas() -> None:
    """Model settings become a preset, the response format's schema the document's, a function's parameters
    its tool schema (with its description); the final JSON answer is parsed as the output."""
    body = exchange()
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}
    body["request"]["response_format"] = {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}
    body["response"]["choices"][0]["message"]["content"] = json.dumps({"summary": "Mixed."})
    document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
    assert document.context[0] == {"type": "preset", "model": "gpt-4o-mini", "temperature": 0.2}
    assert document.context[1] == {"type": "tool", "tool": {"get_weather": {
        "description": "Weather in a city", "type": "object",
        "properties": {"city": {"type": "string"}, "_outputPath": OUTPUT_PATH}, "required": ["city", "_outputPath"]}}}
    assert document.schema == schema
    assert document.solution["output"] == {"summary": "Mixed."}
    assert problems(document) == []


def test_a_request_without_response_ends_where_the_model_would_answer() -> None:
    """A bare request body: no solution, so the next thing to do is ask the model."""
    body = exchange()["request"]
    document = import_bytes(json.dumps(body).encode(), "req.json")[0].document
    assert document.solution is None
    assert document.dumps().count('"type": "plan"') == 1


def test_a_reply_asking_for_tools_is_the_solution_to_run() -> None:
    """A reply that calls tools, with no results yet: its calls are the solution, waiting to run."""
    body = {"request": {"model": "m", "tools": [WEATHER], "messages": [SYSTEM, USER]},
            "response": response({"role": "assistant", "content": None, "tool_calls": [call("c9", "Oslo")]})}
    document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
    assert document.solution["calls"] == [{"_tool": "get_weather", "city": "Oslo", "_outputPath": "†c9"}]
    assert document.solution["output"] is None
    execution = Execution(document.context, document.solution)
    assert [state.status for state in execution.states] == [Status.WAITING_FOR_OUTPUT]


def test_arguments_that_look_like_references_stay_text() -> None:
    """A model's argument that starts with † is a literal (written ††), never read as a reference."""
    body = exchange()
    body["request"]["messages"][3]["tool_calls"][0]["function"]["arguments"] = json.dumps({"city": "†state.x"})
    document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
    plan = next(message for message in document.context.messages if message.get("type") == "plan")
    assert plan["plan"][0]["city"] == "††state.x"
    assert problems(document) == []


# -- logs -------------------------------------------------------------------------------------------


def test_a_log_lines_up_turn_by_turn_into_one_context() -> None:
    """Each request repeats the one before with its reply: one context, one plan per turn, each output
    after its plan with `_call` as called and `_date` from the reply; reused ids get distinct kinds."""
    [imported] = import_bytes(jsonl(log_lines()), "run.jsonl")
    document = imported.document
    assert (imported.format, imported.turns, imported.warnings) == ("openai-log", 3, ())
    types = [message.get("type", message.get("role")) for message in document.context.messages]
    assert types == ["preset", "tool", "system", "user", "plan", "data", "assistant", "plan", "data"]
    first, second = document.context[4], document.context[7]
    assert first["plan"] == [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†call_1"}]
    assert second["plan"] == [{"_tool": "get_weather", "city": "Rome", "_outputPath": "†call_2_1"}]
    assert first["_model"]["latency_ms"] == 812
    assert first["_model"]["source"] == "run.jsonl line 1"
    assert document.context[5]["_call"] == first["plan"][0]
    assert document.context[5]["_date"] == "2025-11-28T08:53:20Z"
    assert document.context[8]["data"] == {"sky": "rain"}
    assert document.context[6] == {"role": "assistant", "content": "Now Rome."}
    assert document.solution["output"] == "Sunny, then rain."
    assert problems(document) == []
    text = compose_request(document.context).text()
    assert '"sky": "sunny"' in text
    assert '"sky": "rain"' in text
    assert [state.status for state in Execution(document.context, document.solution).states] == [Status.DONE]


def test_a_log_that_does_not_line_up_says_where() -> None:
    """A request that changes an earlier message is refused with its line and the message that differs."""
    lines = log_lines()
    lines[2]["request"]["messages"][1] = {"role": "user", "content": "Something else"}
    with pytest.raises(TraceError) as caught:
        import_bytes(jsonl(lines), "run.jsonl")
    assert str(caught.value) == ("run.jsonl: line 3: message 1 does not repeat the conversation so far: expected "
                                 "user 'Weather in Paris and Rome?', found user 'Something else'; an agent that "
                                 "trims or summarises its history does not line up: import the exchanges before "
                                 "this one, or this one alone")


def test_a_retried_request_drops_the_reply_it_replaced() -> None:
    """The same request sent again without the earlier reply is a retry: a warning, and the reply left out."""
    lines = log_lines()
    lines.insert(1, copy.deepcopy(lines[0]))
    [imported] = import_bytes(jsonl(lines), "run.jsonl")
    assert imported.warnings == ("run.jsonl: line 2: repeats the request of line 1 without its reply: taken as a "
                                 "retry, "
                                 "the reply of line 1 is left out",)
    assert sum(message.get("type") == "plan" for message in imported.document.context.messages) == 2


def test_a_request_logged_without_its_response_is_said() -> None:
    """A log line with the request and an error instead of a response (HTTP 429, say), then the same request
    answered: the run is the answered one, and a warning names the line that has no response."""
    lines = log_lines()
    lines.insert(0, {"request": lines[0]["request"], "error": {"status": 429, "message": "Rate limit"}})
    [imported] = import_bytes(jsonl(lines), "run.jsonl")
    assert imported.warnings == ("run.jsonl: line 1: the request failed (Rate limit): the run goes on from the next "
                                 "one",)
    plain = import_bytes(jsonl(log_lines()), "run.jsonl")[0].document
    assert imported.document.dumps().replace("line 2", "line 1").replace("line 3", "line 2").replace(
        "line 4", "line 3") == plain.dumps()  # the same run, its sources one line further down


def test_a_response_that_is_an_error_is_said_not_refused() -> None:
    """The API's error body as the response (`{"error": {...}}`, no choices): the request failed, which a warning
    says with the error's message, wherever it is in the log; a last one ends the run with its request unanswered;
    a line with no response and no error says only that none is recorded."""
    lines = log_lines()
    failed = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
    lines.insert(1, {"request": lines[1]["request"], "response": failed})
    lines.append({"request": {"model": "m", "messages": [*lines[-1]["request"]["messages"],
                                                         lines[-1]["response"]["choices"][0]["message"],
                                                         {"role": "user", "content": "And Oslo?"}]},
                  "response": {"error": "overloaded"}})
    lines.insert(0, {"request": lines[0]["request"]})
    [imported] = import_bytes(jsonl(lines), "run.jsonl")
    assert imported.warnings == (
        "run.jsonl: line 1: no response is recorded (a request that failed, an error logged instead?): the run goes "
        "on from "
        "the next one",
        "run.jsonl: line 3: the request failed (The server had an error while processing your request.): the run goes "
        "on from "
        "the next one",
        "run.jsonl: line 6: the request failed (overloaded): the run ends with it unanswered")
    assert imported.document.context.messages[-1] == {"role": "user", "content": "And Oslo?"}
    assert imported.document.solution is None


def streamed_chunks() -> list[dict[str, Any]]:
    """`response(...)` asking for get_weather in Paris and Rome, streamed: the calls' arguments in pieces, the two
    calls interleaved, the usage in a last chunk without choices (`stream_options.include_usage`)."""
    def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764320000,
                "model": "gpt-4o-mini-2024-07-18", "choices": choices, **extra}

    def piece(index: int, arguments: str, **call: Any) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, **call, "function": {
            **({"name": "get_weather"} if call else {}), "arguments": arguments}}]}

    return [chunk({"role": "assistant", "content": None}), chunk(piece(0, "", id="call_a", type="function")),
            chunk(piece(0, '{"city": ')), chunk(piece(1, '{"ci', id="call_b", type="function")),
            chunk(piece(0, '"Paris"}')), chunk(piece(1, 'ty": "Rome"}')), chunk({}, "tool_calls"),
            chunk(None, usage={"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59})]


def test_a_streamed_response_imports_as_the_completion_its_chunks_make() -> None:
    """A response logged as its chunks, or as the server-sent events' text, is the completion they make: the
    same document as the whole response; chunks or events without their request are refused, saying so."""
    request = {"model": "gpt-4o-mini", "tools": [WEATHER], "messages": [SYSTEM, USER]}
    whole = response({"role": "assistant", "content": None, "tool_calls": [call("call_a", "Paris"),
                                                                            call("call_b", "Rome")]},
                     finish="tool_calls")
    chunks = streamed_chunks()
    events = "".join(f"data: {json.dumps(item)}\n\n" for item in chunks) + "data: [DONE]\n\n"
    [plain] = import_bytes(json.dumps({"request": request, "response": whole}).encode(), "ex.json")
    for streamed in (chunks, events):
        [imported] = import_bytes(json.dumps({"request": request, "response": streamed}).encode(), "ex.json")
        assert imported.document.to_json() == plain.document.to_json()
    with pytest.raises(TraceError, match=r"^c.jsonl: line 1: a chat completions response \(chat.completion.chunk\) "
                                         "without the request it answers"):
        import_bytes(jsonl(chunks), "c.jsonl")
    with pytest.raises(TraceError, match=r"^c.txt: the server-sent events of a streamed response, without the"):
        import_bytes(events.encode(), "c.txt")
    with pytest.raises(TraceError, match=r"^ex.json: response: chunk 1 is not a JSON object"):
        import_bytes(json.dumps({"request": request, "response": [chunks[0], 5]}).encode(), "ex.json")


def test_a_stream_broken_off_by_an_error_is_a_failed_request_and_a_cut_one_is_refused() -> None:
    """A stream whose server broke off with an error chunk is a request that failed (its text so far is no
    reply), an error chunk alone too; a stream that ends with no finish reason and no error was cut: refused."""
    request = {"model": "m", "messages": [SYSTEM, USER]}

    def chunk(content: str, finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764320000, "model": "m",
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}

    error = {"error": {"message": "overloaded", "type": "server_error"}}
    for stream in ([chunk("He"), error], [error]):
        [imported] = import_bytes(json.dumps({"request": request, "response": stream}).encode(), "ex.json")
        assert imported.warnings == ("ex.json: the request failed (overloaded): the run ends with it unanswered",)
        assert imported.document.solution is None
    with pytest.raises(TraceError, match=r"^ex.json: response: no choice of the streamed chunks has a "
                                         r"finish_reason: the stream was cut\?"):
        import_bytes(json.dumps({"request": request, "response": [chunk("He"), chunk("llo")]}).encode(), "ex.json")
    [whole] = import_bytes(json.dumps({"request": request, "response": [chunk("He"), chunk("llo", "stop")]}).encode(),
                           "ex.json")
    assert whole.document.solution["output"] == "Hello"


def test_bodies_logged_as_their_json_text_are_read_as_the_bodies() -> None:
    """A proxy's log keeps the request and the response as the JSON text it sent and received: read as the bodies
    that text holds (a streamed response's events, text too, as before)."""
    lines = log_lines()
    texts = [{**line, "request": json.dumps(line["request"]), "response": json.dumps(line["response"])}
             for line in lines]
    plain = import_bytes(jsonl(lines), "run.jsonl")[0].document
    assert import_bytes(jsonl(texts), "run.jsonl")[0].document.to_json() == plain.to_json()


def test_a_body_logged_as_json_text_that_does_not_parse_is_refused_by_name() -> None:
    """A body written as JSON text that breaks is refused naming it, said as cut short when it ends inside a value
    (a logger's length limit), rather than read as text and said as some other fault."""
    lines = log_lines()
    cut = [lines[0], {**lines[1], "response": json.dumps(lines[1]["response"])[:40]}]
    with pytest.raises(TraceError, match=r"^run.jsonl: line 2: response is not JSON \(.*\): its value was cut short "
                                         r"\(a logger's length limit\?\)$"):
        import_bytes(jsonl(cut), "run.jsonl")
    broken = [lines[0], {**lines[1], "request": "{model: m}"}]
    with pytest.raises(TraceError, match=r"^run.jsonl: line 2: request is not JSON \(.*\): it was written as no "
                                         "JSON$"):
        import_bytes(jsonl(broken), "run.jsonl")


def test_a_last_reply_cut_at_its_token_limit_is_said() -> None:
    """finish_reason 'length': the output may be a cut text (no valid JSON); a warning says so at import,
    before validate finds the output breaks the schema."""
    body = exchange()
    body["response"]["choices"][0].update(finish_reason="length", message={"role": "assistant",
                                                                           "content": "Paris is sun"})
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    assert imported.warnings == ("ex.json: the last reply was cut at its token limit: its output may be incomplete "
                                 "(finish_reason 'length')",)


def test_a_response_of_several_choices_says_which_was_taken() -> None:
    """`n` > 1: the first choice is the reply (the one a run goes on with), and a warning says the others
    were left out."""
    body = exchange()
    first = body["response"]["choices"][0]
    body["response"]["choices"].append({**first, "index": 1, "message": {"role": "assistant", "content": "Other."}})
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    assert imported.document.solution["output"] == "Paris is sunny, Rome is rainy."
    assert imported.warnings == ("ex.json: the response holds 2 choices: the first is the reply, the others are left "
                                 "out",)


def test_the_choice_the_next_request_repeats_is_the_reply() -> None:
    """An agent that asks for several choices and goes on from one that is not the first: the run lines up with the
    choice the next request repeats, which is the reply (with its own finish reason), and the warning names it."""
    first = [SYSTEM, {"role": "user", "content": "A slogan?"}]
    several = response({"role": "assistant", "content": "Sunny days."}, finish="stop")
    several["choices"].append({"index": 1, "message": {"role": "assistant", "content": "Rain or shine."},
                               "finish_reason": "length"})
    second = [*first, {"role": "assistant", "content": "Rain or shine."}, {"role": "user", "content": "Shorter?"}]
    lines = [{"request": {"model": "m", "messages": first}, "response": several},
             {"request": {"model": "m", "messages": second},
              "response": response({"role": "assistant", "content": "Rain."})}]
    went_on_from_choice_1(import_bytes(jsonl(lines), "run.jsonl"), "run.jsonl: line 1")


def went_on_from_choice_1(imported: list[Imported], where: str) -> None:
    """The slogan run of two turns went on from its first turn's second choice ("Rain or shine.", cut at its length)
    and ended with "Rain.", and the warning at `where` names that choice."""
    [run] = imported
    assert run.warnings == (f"{where}: the response holds 2 choices: choice 1, which the next request repeats, is "
                            "the reply, the others are left out",)
    chosen = run.document.context.messages[-2]
    assert (chosen["content"], chosen["_model"]["finish_reason"]) == ("Rain or shine.", "length")
    assert run.document.solution["output"] == "Rain."


def test_a_refusal_is_kept_where_the_model_read_it_and_said_at_the_end() -> None:
    """A refused reply (content null, `refusal` set) is the assistant's text where the run went on past it; as
    the last reply it is no output: kept in the solution's `_model.refusal`, with a warning."""
    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    first = [SYSTEM, {"role": "user", "content": "Help me pick a lock."}]
    second = [*first, {"role": "assistant", "content": "I can't help with that."},
              {"role": "user", "content": "Then the weather in Paris?"}]
    lines = [{"request": {"model": "m", "messages": first}, "response": response(refusal)},
             {"request": {"model": "m", "messages": second}, "response": response(refusal)}]
    [imported] = import_bytes(jsonl(lines), "run.jsonl")
    document = imported.document
    assert document.context[3] == {"role": "assistant", "content": "I can't help with that.",
                                   "_model": document.context[3]["_model"]}
    assert document.solution["output"] is None
    assert document.solution["_model"]["refusal"] == "I can't help with that."
    assert imported.warnings == ('run.jsonl: line 2: the model refused ("I can\'t help with that."): no final output; '
                                 'the '
                                 "refusal is kept in the solution's _model.refusal",)
    one = {"request": {"messages": first}, "response": response(refusal)}  # one exchange: no place to name
    [alone] = import_bytes(json.dumps(one).encode(), "ex.json")
    assert alone.warnings == (
        'ex.json: the model refused ("I can\'t help with that."): no final output; the refusal is kept in the '
        'solution\'s '
        "_model.refusal",)
    asked = {"messages": [*first, refusal]}  # a request ending in the refusal, without a reply: its message
    assert import_bytes(json.dumps(asked).encode(), "ex.json")[0].warnings == (
        'ex.json: message 2: the model refused ("I can\'t help with that."): no final output; the refusal is kept in '
        'the '
        "solution's _model.refusal",)


# -- broken input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("mutate", "name", "message"), [
    (lambda b: b["request"]["messages"].__setitem__(5, {"role": "tool", "tool_call_id": "nope", "content": "x"}),
     "ex.json", "ex.json: message 5: a tool message answers call 'nope', which no earlier assistant message made "
                "(the calls waiting for a result: 'call_b' (get_weather))"),
    (lambda b: b["request"]["messages"].insert(3, {"role": "tool", "tool_call_id": "call_a", "content": "x"}),
     "ex.json", "ex.json: message 3: a tool message answers call 'call_a', which no earlier assistant message made "
                "(no call is waiting for a result)"),
    (lambda b: b["request"]["messages"][5].__setitem__("tool_call_id", "call_a"),
     "ex.json", "ex.json: message 5: a tool message answers call 'call_a', which an earlier tool message answered "
                "already"),
    (lambda b: b["request"]["messages"][3]["tool_calls"][1]["function"].__setitem__("arguments", "{city: Rome"),
     "ex.json", "ex.json: message 3: tool call 1 (get_weather): the arguments are not JSON"),
    (lambda b: b["request"]["messages"][3]["tool_calls"][1]["function"].__setitem__("arguments", "[1]"),
     "ex.json", "ex.json: message 3: tool call 1 (get_weather): the arguments are not a JSON object"),
    (lambda b: b["request"]["messages"][3]["tool_calls"][1]["function"].__setitem__("name", ""),
     "ex.json", "ex.json: message 3: tool call 1 has no function name"),
    (lambda b: b["request"]["messages"].__setitem__(0, {"role": "robot", "content": "x"}),
     "ex.json", "ex.json: message 0: unknown role 'robot'"),
    (lambda b: b["request"]["messages"][4].pop("tool_call_id"),
     "ex.json", "ex.json: message 4: a tool message needs a 'tool_call_id'"),
    (lambda b: b.__setitem__("response", {"choices": []}), "ex.json", "ex.json: the response has no 'choices'"),
    (lambda b: b["request"]["messages"][3]["tool_calls"].__setitem__(0, {
        "id": "c", "type": "custom", "custom": {"name": "shell", "input": "ls"}}),
     "ex.json", "ex.json: message 3: tool call 0 is of type 'custom': only function calls are read"),
    (lambda b: b["request"]["tools"].__setitem__(0, {"type": "function", "function": {"name": ""}}),
     "ex.json", "ex.json: tool 0: a function tool needs a non-empty string 'name'"),
    (lambda b: b["request"]["tools"].__setitem__(0, {"type": "function", "function": {"parameters": {}}}),
     "ex.json", "ex.json: tool 0: a function tool needs a non-empty string 'name'"),
    (lambda b: b["request"]["tools"].__setitem__(0, {"type": "function", "function": {"name": "f", "parameters": 5}}),
     "ex.json", "ex.json: tool 0: the parameters of 'f' are not a JSON Schema object"),
])
def test_broken_exchanges_name_the_message(mutate: Any, name: str, message: str) -> None:
    """Each kind of bad input is a TraceError naming the file and the message."""
    body = exchange()
    mutate(body)
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(body).encode(), name)
    assert str(caught.value).startswith(message)


def test_a_call_no_message_answers_is_said() -> None:
    """The API refuses a request whose tool call has no tool message; a log that lost one imports with the call
    kept without an output (latent), and a warning naming the call."""
    body = exchange()
    del body["request"]["messages"][5]
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    assert imported.warnings == ("ex.json: tool call 'call_b' (get_weather) has no result, in a later message or a "
                                 "tool "
                                 "span: the call is kept without an output",)
    assert [m["_call"]["city"] for m in imported.document.context.messages if m.get("type") == "data"] == ["Paris"]


def test_an_inferred_tool_takes_its_output_path_as_every_imported_tool_does() -> None:
    """A call whose arguments name `_outputPath` (a model that saw the protocol) of a tool with no definition:
    the inferred schema still requires the `†` path the import writes, not `_outputPath: {}`."""
    ask = {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {
        "name": "lookup", "arguments": json.dumps({"q": "cat", "_outputPath": "somewhere"})}}]}
    body = {"messages": [USER, ask, {"role": "tool", "tool_call_id": "a", "content": "a cat"}]}
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    tool = next(m for m in imported.document.context.messages if m.get("type") == "tool")["tool"]["lookup"]
    assert tool["properties"] == {"q": {}, "_outputPath": OUTPUT_PATH}
    assert tool["required"] == ["_outputPath"]
    assert problems(imported.document) == []
    assert imported.warnings[-1] == ("ex.json: message 1: tool call 0 (lookup) gives _outputPath 'somewhere', which "
                                     "is not "
                                     "one destination (†kind.path): its result is written to †a instead")


def test_an_output_path_the_model_gave_is_where_its_result_is_written() -> None:
    """008: a call's `_outputPath` says where its result goes. One the model gave, naming one destination, is
    kept in the plan and the result is written there (with no warning); a branching one is replaced by the
    call's own kind, and a warning says so where it was read."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}, "_outputPath": {"type": "string"}}}
    ask = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": json.dumps(
            {"q": "cat", "_outputPath": "†state.found.cat"})}},
        {"id": "b", "type": "function", "function": {"name": "lookup", "arguments": json.dumps(
            {"q": "dog", "_outputPath": "†state.dog || †state.none"})}}]}
    body = {"request": {"tools": [{"type": "function", "function": {"name": "lookup", "parameters": schema}}],
                        "messages": [USER, ask, {"role": "tool", "tool_call_id": "a", "content": "a cat"},
                                     {"role": "tool", "tool_call_id": "b", "content": "a dog"}]},
            "response": response({"role": "assistant", "content": "Both found."})}
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    context = imported.document.context
    plan = next(m for m in context.messages if m.get("type") == "plan")["plan"]
    assert [call["_outputPath"] for call in plan] == ["†state.found.cat", "†b"]
    outputs = [m for m in context.messages if m.get("type") == "data"]
    assert [(m["kind"], m["data"], m["_outputPath"]) for m in outputs] == [
        ("state", {"found": {"cat": "a cat"}}, "†state.found.cat"), ("b", "a dog", "†b")]
    assert context.resolve("†state.found.cat").value == "a cat"
    assert imported.warnings == ("ex.json: message 1: tool call 1 (lookup) gives _outputPath '†state.dog || "
                                 "†state.none', "
                                 "which is not one destination (†kind.path): its result is written to †b instead",)
    assert problems(imported.document) == []


def test_every_turn_the_model_took_is_counted_those_a_request_repeats_too() -> None:
    """A turn is a turn of the loop (010) whether it is the reply or repeated in the request: a request holding
    one assistant turn, with its reply, is two; without a reply, one (it once said 0 turns and 2 calls)."""
    [imported] = import_bytes(json.dumps(exchange()).encode(), "ex.json")
    assert imported.turns == 2
    [alone] = import_bytes(json.dumps(exchange()["request"]).encode(), "ex.json")
    assert alone.turns == 1


def test_a_result_is_written_as_the_call_says_in_its_instance_with_its_method() -> None:
    """A call the model gave `_instance` and `_outputMethod` (a model that saw the protocol) has its result written
    as a run would write it: in that instance's layer (013), with that method (008), not globally as a `set`."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}, "_outputPath": {"type": "string"}}}

    def asked(call_id: str, q: str) -> dict[str, Any]:
        arguments = {"q": q, "_outputPath": "†state.found", "_outputMethod": "push", "_instance": "①"}
        return {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": json.dumps(arguments)}}

    body = {"request": {"tools": [{"type": "function", "function": {"name": "lookup", "parameters": schema}}],
                        "messages": [USER, {"role": "assistant", "content": None,
                                            "tool_calls": [asked("a", "cat"), asked("b", "dog")]},
                                     {"role": "tool", "tool_call_id": "a", "content": "a cat"},
                                     {"role": "tool", "tool_call_id": "b", "content": "a dog"}]},
            "response": response({"role": "assistant", "content": "Both found."})}
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    context = imported.document.context
    assert context.resolve("†state.found", "①").value == ["a cat", "a dog"]
    assert context.resolve("†state.found").found is False
    assert problems(imported.document) == []


def test_tool_call_ids_repeated_in_one_turn_are_said_where_they_are_read() -> None:
    """Two calls of one assistant turn with one id: the tool messages answer them in order, and a warning names
    the message and the two calls (an id reused in a later turn, as some servers do, is not warned)."""
    ask = {"role": "assistant", "content": None, "tool_calls": [call("call_1", "Paris"), call("call_1", "Rome")]}
    later = {"role": "assistant", "content": None, "tool_calls": [call("call_1", "Oslo")]}
    body = {"request": {"tools": [WEATHER], "messages": [
        USER, ask, {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_1", "content": "rainy"},
        later, {"role": "tool", "tool_call_id": "call_1", "content": "snow"}]},
        "response": response({"role": "assistant", "content": "Done."})}
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    assert imported.warnings == ("ex.json: message 1: tool calls 0 and 1 (get_weather) share the id 'call_1': the "
                                 "results "
                                 "answering it are taken in the calls' order",)
    outputs = [m for m in imported.document.context.messages if m.get("type") == "data"]
    assert [(m["_call"]["city"], m["data"]) for m in outputs] == [("Paris", "sunny"), ("Rome", "rainy"),
                                                                   ("Oslo", "snow")]


def test_a_legacy_function_call_is_answered_by_its_function_message() -> None:
    """The older API: an assistant `function_call`, answered by a `function` message naming it; a call of the
    same function in a later turn is answered by the next `function` message."""
    ask = [{"role": "assistant", "content": None, "function_call": {"name": "get_weather",
                                                                    "arguments": json.dumps({"city": city})}}
           for city in ("Paris", "Rome")]
    answers = [{"role": "function", "name": "get_weather", "content": sky} for sky in ("sunny", "rainy")]
    body = {"functions": [WEATHER["function"]], "messages": [USER, ask[0], answers[0], ask[1], answers[1]]}
    [imported] = import_bytes(json.dumps(body).encode(), "legacy.json")
    outputs = [m for m in imported.document.context.messages if m.get("type") == "data"]
    assert [(m["_call"]["city"], m["data"]) for m in outputs] == [("Paris", "sunny"), ("Rome", "rainy")]
    assert problems(imported.document) == []


def test_a_truncated_file_says_so_with_its_place() -> None:
    """A file cut in the middle of its last line (a log) or of its value (one exchange) is named as truncated."""
    raw = jsonl(log_lines())
    cut = raw[: raw.rindex(b"\n", 0, len(raw) - 1) + 40]
    with pytest.raises(TraceError) as caught:
        import_bytes(cut, "run.jsonl")
    assert re.match(r"run\.jsonl:3:\d+: Unterminated string", str(caught.value))  # as every command says a place
    assert str(caught.value).endswith("(the file ends early: truncated?; without this last line, the lines "
                                      "before it can be read)")
    whole = json.dumps(exchange(), indent=1).encode()
    with pytest.raises(TraceError) as caught:
        import_bytes(whole[:200], "ex.json")
    assert "truncated?" in str(caught.value)
    assert re.match(r"ex\.json:\d+:\d+: Unterminated string", str(caught.value))


def test_a_gzipped_or_utf16_log_is_read_and_a_binary_file_is_named_as_such() -> None:
    """A rotated log (`.jsonl.gz`) and one in UTF-16 (Windows PowerShell's `>`) import as the log does; a
    binary file (OTLP protobuf) is said to be one, never "not JSON ... truncated?" about its bytes."""
    raw = jsonl(log_lines())
    [plain] = import_bytes(raw, "run.jsonl")
    [zipped] = import_bytes(gzip.compress(raw), "run.jsonl")
    assert zipped.document.to_json() == plain.document.to_json()
    windows = raw.decode().replace("\n", "\r\n").encode("utf-16")  # PowerShell's `>`: UTF-16 with its mark
    assert import_bytes(windows, "run.jsonl")[0].document.to_json() == plain.document.to_json()
    with pytest.raises(TraceError) as caught:
        import_bytes(b"\n\x8f\x02\n\x1d\n\x0cservice.name\x12\r\n\x0btravel", "trace.pb")
    assert str(caught.value) == ("trace.pb:2:1: not valid UTF-8 (byte 0x8f): a binary file, not a JSON or JSON Lines "
                                 "text (OTLP protobuf? ContextDeck reads OTLP JSON)")
    with pytest.raises(TraceError, match=r"run\.jsonl\.gz: a gzip file that cannot be decompressed"):
        import_bytes(gzip.compress(raw)[:30], "run.jsonl.gz")


def test_a_broken_line_inside_a_log_is_not_called_truncated() -> None:
    raw = jsonl(log_lines()).replace(b'"model": "m", "tools"', b'"model": "m" "tools"', 1)
    with pytest.raises(TraceError) as caught:
        import_bytes(raw, "run.jsonl")
    assert re.match(r"run\.jsonl:1:\d+: Expecting ',' delimiter$", str(caught.value))
    assert "truncated" not in str(caught.value)


@pytest.mark.parametrize("raw", [b"", b"\n\n  \r\n", b"\xef\xbb\xbf\n", gzip.compress(b"", mtime=0)])
def test_an_empty_file_is_said_to_be_empty(raw: bytes) -> None:
    with pytest.raises(TraceError) as caught:
        import_bytes(raw, "run.jsonl")
    assert str(caught.value) == "run.jsonl: the file is empty: nothing to import"


def test_a_request_of_no_messages_is_refused_rather_than_an_empty_document() -> None:
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps({"model": "m", "messages": [], "tools": [WEATHER]}).encode(), "ex.json")
    assert str(caught.value) == "ex.json: the request holds no messages and no reply: nothing to import"


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(TraceError, match="not a format ContextDeck imports"):
        import_bytes(b'{"hello": 1}', "x.json")
    with pytest.raises(TraceError, match="unknown format 'csv'"):
        import_bytes(b"{}", "x.json", "csv")


# -- OTLP with GenAI semantic conventions ---------------------------------------------------------


def attrs(**values: Any) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        key = key.replace("__", ".")
        if isinstance(value, int):
            out.append({"key": key, "value": {"intValue": str(value)}})
        else:
            out.append({"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}})
    return out


TRACE = "5b8efff798038103d269b633813fc60c"


def span(span_id: str, name: str, start: int, end: int, attributes: list[Any], **extra: Any) -> dict[str, Any]:
    base = 1764320000 * 10**9
    return {"traceId": TRACE, "spanId": span_id, "parentSpanId": "eee19b7ec3c1b174", "name": name,
            "startTimeUnixNano": str(base + start * 10**6), "endTimeUnixNano": str(base + end * 10**6),
            "attributes": attributes, **extra}


def genai_trace() -> dict[str, Any]:
    """Two chat spans and two tool spans as the GenAI semantic conventions write them; the second tool's
    result is only in its span (the trace ends before the next request)."""
    user = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris, then Rome?"}]}
    ask = {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "get_weather",
                                           "arguments": {"city": "Paris"}}]}
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "t1", "response": {"sky": "sunny"}}]}
    ask2 = {"role": "assistant", "parts": [{"type": "tool_call", "id": "t2", "name": "get_weather",
                                            "arguments": {"city": "Rome"}}]}
    tools = [{"type": "function", "name": "get_weather", "description": "Weather in a city",
              "parameters": WEATHER["function"]["parameters"]}]
    system = [{"type": "text", "content": "You are a weather bot."}]
    spans = [
        span("1111111111111111", "chat m", 0, 500, attrs(
            gen_ai__operation__name="chat", gen_ai__request__model="m", gen_ai__response__model="m-1",
            gen_ai__usage__input_tokens=40, gen_ai__usage__output_tokens=5, gen_ai__system_instructions=system,
            gen_ai__input__messages=[user], gen_ai__output__messages=[ask], gen_ai__tool__definitions=tools)),
        span("2222222222222222", "execute_tool get_weather", 510, 530, attrs(
            gen_ai__operation__name="execute_tool", gen_ai__tool__name="get_weather", gen_ai__tool__call__id="t1")),
        span("3333333333333333", "chat m", 600, 900, attrs(
            gen_ai__operation__name="chat", gen_ai__request__model="m", gen_ai__system_instructions=system,
            gen_ai__input__messages=[user, ask, answer], gen_ai__output__messages=[ask2],
            gen_ai__tool__definitions=tools)),
        span("4444444444444444", "execute_tool get_weather", 910, 950, attrs(
            gen_ai__operation__name="execute_tool", gen_ai__tool__name="get_weather", gen_ai__tool__call__id="t2",
            gen_ai__tool__call__result='{"sky": "rain"}')),
        span("5555555555555555", "execute_tool get_weather", 960, 970, attrs(
            gen_ai__operation__name="execute_tool", gen_ai__tool__name="get_weather"),
            status={"code": 2, "message": "boom"}),
    ]
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "agent"}, "spans": spans}]}]}


def test_a_genai_turns_finish_reason_is_read_from_its_output_message_too() -> None:
    """GenAI writes `finish_reason` on each output message; a chat span without the span-level
    `gen_ai.response.finish_reasons` keeps it all the same in the turn's `_model`."""
    trace = genai_trace()
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for attribute in spans[0]["attributes"]:
        if attribute["key"] == "gen_ai.output.messages":
            said = json.loads(attribute["value"]["stringValue"])
            said[0]["finish_reason"] = "tool_calls"
            attribute["value"]["stringValue"] = json.dumps(said)
    [imported] = import_bytes(json.dumps(trace).encode(), "trace.json")
    plans = [message for message in imported.document.context.messages if message.get("type") == "plan"]
    assert plans[0]["_model"]["finish_reason"] == "tool_calls"
    assert "finish_reason" not in plans[1]["_model"]  # said nowhere: none


def test_a_genai_turn_going_on_from_a_later_output_message_takes_it_as_the_reply() -> None:
    """A chat span of several output messages whose next request repeats the second: that one is the reply (with
    its own finish reason), as for a chat completions response of several choices, not a retry."""
    def said(role: str, text: str, **extra: Any) -> dict[str, Any]:
        return {"role": role, "parts": [{"type": "text", "content": text}], **extra}

    first = [said("user", "A slogan?")]
    spans = [
        span("1111111111111111", "chat m", 0, 500, attrs(
            gen_ai__operation__name="chat", gen_ai__request__model="m", gen_ai__input__messages=first,
            gen_ai__output__messages=[said("assistant", "Sunny days.", finish_reason="stop"),
                                      said("assistant", "Rain or shine.", finish_reason="length")])),
        span("2222222222222222", "chat m", 600, 900, attrs(
            gen_ai__operation__name="chat", gen_ai__request__model="m",
            gen_ai__input__messages=[*first, said("assistant", "Rain or shine."), said("user", "Shorter?")],
            gen_ai__output__messages=[said("assistant", "Rain.")])),
    ]
    trace = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "agent"}, "spans": spans}]}]}
    went_on_from_choice_1(import_bytes(json.dumps(trace).encode(), "trace.json"),
                          "trace.json: span 1111111111111111")


def test_a_genai_turn_of_several_output_messages_says_the_others_were_left_out() -> None:
    """Each of GenAI's output messages is a choice (`n` > 1): the first is the reply, and a warning at the span
    says the others were left out, as for a chat completions response of several choices."""
    trace = genai_trace()
    chat = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][2]
    other = {"role": "assistant", "parts": [{"type": "text", "content": "Rome is rainy."}], "finish_reason": "stop"}
    for item in chat["attributes"]:
        if item["key"] == "gen_ai.output.messages":
            item["value"]["stringValue"] = json.dumps([*json.loads(item["value"]["stringValue"]), other])
    [imported] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert "t.json: span 3333333333333333: the response holds 2 choices: the first is the reply, the others are left " \
           "out" in imported.warnings
    assert imported.document.context.messages[-2]["plan"][0]["city"] == "Rome"


@pytest.mark.parametrize("kind", ["stringValue", "doubleValue"])
def test_counts_and_settings_of_another_value_kind_are_read_as_numbers(kind: str) -> None:
    """OTLP writers differ in the kind of an attribute's value: token counts and settings given as text, or as
    doubles, are the numbers they say (the window counts tokens only when they are integers); a text that is no
    number, or no finite one, stays as it was."""
    trace = genai_trace()
    [plain] = import_bytes(json.dumps(trace).encode(), "t.json")
    chat = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    chat["attributes"] += attrs(gen_ai__request__temperature="0.25", gen_ai__request__seed="7",
                                gen_ai__request__top_p="NaN")
    for item in chat["attributes"]:
        if "intValue" in item["value"]:
            count = item["value"].pop("intValue")
            item["value"][kind] = count if kind == "stringValue" else float(count)
    [other] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert other.document.context.messages[4]["_model"]["usage"] == \
        plain.document.context.messages[4]["_model"]["usage"] == {"prompt_tokens": 40, "completion_tokens": 5,
                                                                   "total_tokens": 45}
    assert other.document.context.messages[0] == {"type": "preset", "model": "m", "temperature": 0.25, "seed": 7,
                                                  "top_p": "NaN"}
    other.document.dumps()  # (a NaN would not save)


@pytest.mark.parametrize("key", ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                                 "gen_ai.tool.definitions"])
def test_a_json_attribute_cut_by_a_length_limit_is_refused_naming_it(key: str) -> None:
    """An SDK's attribute length limit cuts a JSON value short: the turn would not be what the model saw, so it is
    refused naming the attribute and the likely limit, never read as no messages (capture off), no reply, no
    instructions or no tools."""
    trace = genai_trace()
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["attributes"]:
        if item["key"] == key:
            item["value"]["stringValue"] = item["value"]["stringValue"][:12]
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(trace).encode(), "t.json")
    assert re.fullmatch(rf"t.json: span 3333333333333333: {key} is not JSON \(.*\): its value was cut short \(an "
                        r"attribute length limit, such as OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT\?\)", str(caught.value))


def test_a_tool_result_cut_short_is_kept_as_its_text_and_said() -> None:
    """A tool span's result cut by an attribute length limit is JSON that ends inside a value: kept as its text
    (it is what the trace holds), with a warning that the model read more than that."""
    trace = genai_trace()
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"][3]["attributes"]:
        if item["key"] == "gen_ai.tool.call.result":
            item["value"]["stringValue"] = '{"sky": "ra'
    [imported] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert imported.document.context.messages[-1]["data"] == '{"sky": "ra'
    assert "t.json: span 4444444444444444: the result of tool call 't2' (get_weather) is JSON cut short (an " \
           "attribute length limit?): kept as its text, which is not all the model read" in imported.warnings


def test_system_instructions_written_as_their_text_are_the_system_message() -> None:
    """`gen_ai.system_instructions` is a list of parts; one written as the text itself is that text, not left out."""
    trace = genai_trace()
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for attribute in item["attributes"]:
            if attribute["key"] == "gen_ai.system_instructions":
                attribute["value"]["stringValue"] = "You are a weather bot."
    [plain] = import_bytes(json.dumps(genai_trace()).encode(), "t.json")
    [text] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert text.document.to_json() == plain.document.to_json()


def test_roles_as_frameworks_name_them_are_the_chat_roles() -> None:
    """LangChain's `Human` and `AI`, Gemini's `model`, a role in capitals: the chat role each stands for; a role that
    stands for none is refused naming it."""
    trace = genai_trace()
    named = {"user": "Human", "assistant": "AI", "tool": "TOOL"}
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for attribute in item["attributes"]:
            if attribute["key"] in ("gen_ai.input.messages", "gen_ai.output.messages"):
                messages = json.loads(attribute["value"]["stringValue"])
                for n, message in enumerate(messages):
                    message["role"] = named[message["role"]] if n % 2 == 0 else message["role"].capitalize()
                attribute["value"]["stringValue"] = json.dumps(messages)
    [plain] = import_bytes(json.dumps(genai_trace()).encode(), "t.json")
    [framed] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert framed.document.to_json() == plain.document.to_json()
    chat = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    [output] = [item for item in chat["attributes"] if item["key"] == "gen_ai.output.messages"]
    output["value"]["stringValue"] = output["value"]["stringValue"].replace('"AI"', '"model"')
    assert import_bytes(json.dumps(trace).encode(), "t.json")[0].document.to_json() == plain.document.to_json()
    output["value"]["stringValue"] = output["value"]["stringValue"].replace('"model"', '"narrator"')
    with pytest.raises(TraceError, match=r"^t.json: span 1111111111111111: response: message 0: unknown role "
                                         r"'narrator'"):
        import_bytes(json.dumps(trace).encode(), "t.json")


def test_genai_messages_on_the_details_event_are_read_as_the_spans() -> None:
    """GenAI's `gen_ai.client.inference.operation.details` event may carry a turn's messages instead of its span's
    attributes: the trace imports as the one that records them on the span."""
    trace = genai_trace()
    [plain] = import_bytes(json.dumps(trace).encode(), "t.json")
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        moved = [a for a in item["attributes"] if a["key"].endswith(("messages", "instructions"))]
        item["attributes"] = [a for a in item["attributes"] if a not in moved]
        if moved:
            item["events"] = [{"name": "gen_ai.client.inference.operation.details",
                               "timeUnixNano": item["endTimeUnixNano"], "attributes": moved}]
    [details] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert details.document.to_json() == plain.document.to_json()


def test_a_genai_replys_reasoning_is_its_turns_audit_not_its_content() -> None:
    """A reply's `reasoning` part, which the next request does not repeat, leaves the turns lined up (no
    retry, each plan its own `_model`) and is kept in that turn's `_model.reasoning`."""
    trace = genai_trace()
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for attribute in spans[0]["attributes"]:
        if attribute["key"] == "gen_ai.output.messages":
            said = json.loads(attribute["value"]["stringValue"])
            said[0]["parts"].insert(0, {"type": "reasoning", "content": "Paris first."})
            attribute["value"]["stringValue"] = json.dumps(said)
    [imported] = import_bytes(json.dumps(trace).encode(), "trace.json")
    assert not any("retry" in warning for warning in imported.warnings)
    plans = [message for message in imported.document.context.messages if message.get("type") == "plan"]
    assert [plan["_model"]["source"] for plan in plans] == ["trace.json span 1111111111111111",
                                                            "trace.json span 3333333333333333"]
    assert plans[0]["_model"]["reasoning"] == "Paris first."
    assert plans[0]["plan"] == [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†t1"}]


def test_a_genai_trace_becomes_one_context_with_calls_outputs_and_times() -> None:
    """Chat spans become turns, tool spans the calls' outputs with `_date` and `_run` from their times; a
    result only the tool span kept is written; a tool nobody asked for is a warning."""
    [imported] = import_bytes(json.dumps(genai_trace()).encode(), "trace.json")
    document = imported.document
    assert (imported.format, imported.label, imported.turns) == ("otlp", TRACE, 2)
    assert imported.warnings == ("trace.json: span 5555555555555555: tool get_weather ran (call without an id), but "
                                 "no model "
                                 "turn asked for it: left out",)
    assert problems(document) == []
    messages = document.context.messages
    outputs = [message for message in messages if message.get("type") == "data"]
    assert [output["data"] for output in outputs] == [{"sky": "sunny"}, {"sky": "rain"}]
    assert outputs[0]["_date"] == "2025-11-28T08:53:20Z"
    assert outputs[0]["_run"] == {"call": 0, "started": "2025-11-28T08:53:20.510Z", "seconds": 0.02}
    assert document.solution is None  # the trace ends after the tools ran: the model is to be asked next
    plan = next(message for message in messages if message.get("type") == "plan")
    assert plan["_model"]["model"] == "m-1"
    assert plan["_model"]["usage"]["total_tokens"] == 45
    assert plan["_model"]["latency_ms"] == 500.0
    text = compose_request(document.context).text()
    assert "You are a weather bot." in text
    assert "Weather in Paris, then Rome?" in text
    assert '"sky": "rain"' in text


def test_tools_called_without_a_recorded_definition_are_offered_all_the_same() -> None:
    """`gen_ai.tool.definitions` is opt-in: a trace without it still offers each tool its turns called, with
    the parameters those calls used, so validate finds no unknown tool and a model can call it again."""
    trace = genai_trace()
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        item["attributes"] = [a for a in item["attributes"] if a["key"] != "gen_ai.tool.definitions"]
    [imported] = import_bytes(json.dumps(trace).encode(), "trace.json")
    document = imported.document
    found = validate(document.context, document.solution, schema=document.schema)
    assert [str(problem) for problem in found] == []
    [tool] = compose_request(document.context, document.schema).tools
    assert tool.name == "get_weather"
    assert list(tool.item["properties"]) == ["_tool", "city", "_outputPath"]
    assert "trace.json: tool get_weather has no recorded definition: its schema is inferred from its calls" \
        in imported.warnings


def body(**content: Any) -> list[dict[str, Any]]:
    """An event's body as Azure AI Inference and Semantic Kernel write it: the JSON of `gen_ai.event.content`."""
    return attrs(gen_ai__event__content=content)


@pytest.mark.parametrize("events", [
    [{"name": "gen_ai.system.message", "attributes": attrs(content="Be brief.")},
     {"name": "gen_ai.user.message", "attributes": attrs(content="Hi")},
     {"name": "gen_ai.choice", "attributes": attrs(message={"content": "Hello!"}, finish_reason="stop")}],
    [{"name": "gen_ai.system.message", "attributes": body(role="system", content="Be brief.")},
     {"name": "gen_ai.user.message", "attributes": body(role="user", content="Hi")},
     {"name": "gen_ai.choice", "attributes": body(message={"content": "Hello!"}, finish_reason="stop", index=0)}],
    [{"name": "gen_ai.content.prompt", "attributes": attrs(gen_ai__prompt=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])},
     {"name": "gen_ai.content.completion", "attributes": attrs(gen_ai__completion=[{"content": "Hello!"}])}],
], ids=["attributes", "event-content", "prompt-completion"])
def test_genai_events_are_read_too(events: list[dict[str, Any]]) -> None:
    """The older conventions, one span event per message (its body as attributes, or as the JSON of
    `gen_ai.event.content`) or the whole prompt and completion in two events, give the same turns; a choice event's
    finish reason is the turn's."""
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "chat m", 0, 10, attrs(gen_ai__operation__name="chat"), events=events)]}]}]}
    document = import_bytes(json.dumps(trace).encode(), "t.json")[0].document
    assert document.context.messages[-2:] == [{"role": "system", "content": "Be brief."},
                                              {"role": "user", "content": "Hi"}]
    assert document.solution["output"] == "Hello!"
    choice = next((event for event in events if event["name"] == "gen_ai.choice"), None)
    assert document.solution["_model"].get("finish_reason") == ("stop" if choice else None)


def test_genai_events_written_as_log_records_are_read_with_their_spans() -> None:
    """The official OpenAI instrumentation writes a turn's messages as log records (`resourceLogs`) naming its span:
    with the spans in the same file, they are that span's events, read in time, each once however often delivered;
    a program's own log lines (no span, no event name) are left alone; logs without their spans say so."""
    def record(name: str, at: int, content: dict[str, Any], named_as: str) -> dict[str, Any]:
        found: dict[str, Any] = {"timeUnixNano": str(1764320000 * 10**9 + at), "traceId": TRACE,
                                 "spanId": "1111111111111111", "attributes": attrs(gen_ai__system="openai"),
                                 "body": {"kvlistValue": {"values": attrs(**content)}}}
        if named_as == "field":
            found["eventName"] = name
        else:
            found["attributes"] += attrs(event__name=name)
        return found

    records = [record("gen_ai.user.message", 2, {"content": "Hi"}, "field"),
               record("gen_ai.system.message", 1, {"content": "Be brief."}, "attribute"),
               record("gen_ai.choice", 3, {"index": 0, "finish_reason": "stop", "message": {"content": "Hello!"}},
                      "field"),
               {"timeUnixNano": "5", "body": {"stringValue": "HTTP Request: POST /v1/chat/completions"}}]
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "chat m", 0, 10, attrs(gen_ai__operation__name="chat"))]}]}]}
    for lines in ([spans, logs], [logs, spans, logs]):
        [imported] = import_bytes(jsonl(lines), "t.jsonl")
        assert imported.document.context.messages[-2:] == [{"role": "system", "content": "Be brief."},
                                                           {"role": "user", "content": "Hi"}]
        assert imported.document.solution["output"] == "Hello!"
        assert imported.document.solution["_model"]["finish_reason"] == "stop"
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(logs).encode(), "logs.json")
    assert str(caught.value) == ("logs.json: the trace holds no spans (only log records: give the file of the spans "
                                 "they belong to with them, or put both in one file)")


def test_log_records_in_a_file_apart_from_their_spans_are_read_with_them(tmp_path: Path) -> None:
    """A logs exporter writes to a file of its own: given with the spans' file (`import spans.json logs.jsonl`), the
    two are read as one (format.md §10); a place in the later file is named by it; only OTLP files join."""
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"timeUnixNano": "1", "traceId": TRACE, "spanId": "1111111111111111", "eventName": "gen_ai.user.message",
         "body": {"kvlistValue": {"values": attrs(content="Hi")}}},
        {"timeUnixNano": "2", "traceId": TRACE, "spanId": "1111111111111111", "eventName": "gen_ai.choice",
         "body": {"kvlistValue": {"values": attrs(index=0, finish_reason="stop", message={"content": "Hello!"})}}}]}]}]}
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "chat m", 0, 10, attrs(gen_ai__operation__name="chat"))]}]}]}
    (tmp_path / "spans.json").write_text(json.dumps(spans))
    (tmp_path / "logs.jsonl").write_text(json.dumps(logs) + "\n" + json.dumps({"resourceSpans": [{"scopeSpans": [
        {"spans": [{"spanId": "zz", "name": "chat m"}]}]}]}) + "\n")
    [imported] = import_trace(tmp_path / "spans.json", more=[tmp_path / "logs.jsonl"])
    assert imported.document.context.messages[-1] == {"role": "user", "content": "Hi"}
    assert imported.document.solution["output"] == "Hello!"
    logs_file = tmp_path / "logs.jsonl"
    assert imported.warnings == (f'{logs_file}:2: span "zz" (chat m): the span has no valid span id: left out',)
    [reversed_order] = import_trace(logs_file, more=[tmp_path / "spans.json"])  # the span's own file, named
    assert reversed_order.document.solution["_model"]["source"] == "spans.json span 1111111111111111"
    assert imported.document.solution["_model"]["source"] == "spans.json span 1111111111111111"
    with pytest.raises(TraceError) as caught:
        import_trace(tmp_path / "spans.json")
    assert "records no messages" in str(caught.value)
    (tmp_path / "not_otlp.jsonl").write_text(json.dumps(logs) + "\n[1]\n")
    with pytest.raises(TraceError) as caught:  # a fault in the later file: that file and line
        import_trace(tmp_path / "spans.json", more=[tmp_path / "not_otlp.jsonl"])
    assert str(caught.value) == (f"{tmp_path / 'not_otlp.jsonl'}:2: expected an OTLP trace: an object with "
                                 "'resourceSpans'")
    twice = {"resourceSpans": [{"scopeSpans": [{"spans": [span("1111111111111111", "chat n", 0, 10, {})]}]}]}
    (tmp_path / "twice.jsonl").write_text(json.dumps(logs) + "\n" + json.dumps(twice) + "\n")
    with pytest.raises(TraceError) as caught:
        import_trace(tmp_path / "spans.json", more=[tmp_path / "twice.jsonl"])
    assert str(caught.value) == (f"{tmp_path / 'twice.jsonl'}:2: span 1111111111111111 of trace {TRACE}: the span id "
                                 f"appears twice with different contents (first at {tmp_path / 'spans.json'})")
    for format in ("openai", "openai-log"):  # refused before any file is read (their names are not even opened)
        with pytest.raises(TraceError) as caught:
            import_trace(tmp_path / "none.json", format, more=[tmp_path / "none.jsonl"])
        assert str(caught.value) == (f"--from: {format}: only OTLP files are read together (a trace's spans and "
                                     f"the log records of them): import each {format} file on its own")
    (tmp_path / "chat.json").write_text(json.dumps({"messages": [{"role": "user", "content": "Hi"}]}))
    with pytest.raises(TraceError) as caught:
        import_trace(tmp_path / "spans.json", more=[tmp_path / "chat.json"])
    assert str(caught.value) == (f"{tmp_path / 'chat.json'}: not an OTLP JSON trace: only OTLP files are read "
                                 "together (a trace's spans and the log records of them)")


def test_an_openllmetry_trace_is_read_from_its_flattened_prompt_and_completion() -> None:
    """OpenLLMetry (Traceloop) marks a model span with `llm.request.type` and flattens its messages into
    `gen_ai.prompt.N.*` and `gen_ai.completion.N.*`, its tools into `llm.request.functions.N.*`: the same
    turns, calls and results as the GenAI conventions give."""
    parameters = json.dumps(WEATHER["function"]["parameters"])
    common = {"llm__request__type": "chat", "gen_ai__request__model": "m", "gen_ai__prompt__0__role": "user",
              "gen_ai__prompt__0__content": "Weather in Paris?", "llm__request__functions__0__name": "get_weather",
              "llm__request__functions__0__parameters": parameters}
    asked = {"gen_ai__completion__0__role": "assistant", "gen_ai__completion__0__finish_reason": "tool_calls",
             "gen_ai__completion__0__tool_calls__0__id": "t1",
             "gen_ai__completion__0__tool_calls__0__name": "get_weather",
             "gen_ai__completion__0__tool_calls__0__arguments": '{"city": "Paris"}'}
    history = {"gen_ai__prompt__1__role": "assistant", "gen_ai__prompt__1__tool_calls__0__id": "t1",
               "gen_ai__prompt__1__tool_calls__0__name": "get_weather",
               "gen_ai__prompt__1__tool_calls__0__arguments": '{"city": "Paris"}',
               "gen_ai__prompt__2__role": "tool", "gen_ai__prompt__2__tool_call_id": "t1",
               "gen_ai__prompt__2__content": '[{"sky": "sunny"}]'}
    spans = [span("1111111111111111", "openai.chat", 0, 500, attrs(**common, **asked)),
             span("2222222222222222", "openai.chat", 600, 900, attrs(**common, **history,
                  gen_ai__completion__0__content="Sunny.", gen_ai__completion__0__finish_reason="stop"))]
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    document = import_bytes(json.dumps(trace).encode(), "t.json")[0].document
    assert problems(document) == []
    messages = document.context.messages
    assert messages[1]["tool"]["get_weather"]["required"] == ["city", "_outputPath"]
    plan = next(message for message in messages if message.get("type") == "plan")
    assert plan["plan"] == [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†t1"}]
    assert plan["_model"]["finish_reason"] == "tool_calls"
    assert next(message for message in messages if message.get("kind") == "t1")["data"] == [{"sky": "sunny"}]
    assert document.solution["output"] == "Sunny."


def test_a_span_without_a_valid_trace_or_span_id_is_left_out_with_a_warning_naming_it() -> None:
    """format.md §10: no span can name a span without a valid id, and the rest of the trace reads without it: it is
    left out, said in a warning with its id (as written), its name and its trace (of a trace of no other span:
    the file's, said whichever trace is chosen); a file none of whose spans has one is refused with the first one's
    fault."""
    trace = genai_trace()
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    del spans[2]["traceId"]
    spans[4]["spanId"] = "zz"
    spans.append({"traceId": "cd" * 16, "spanId": "yy", "name": "chat n"})  # another trace's
    [imported] = import_bytes(json.dumps(trace).encode(), "trace.json")
    assert imported.warnings == (
        "trace.json: span 3333333333333333 (chat m): the span has no trace id: it belongs to no trace: left out",
        f'trace.json: span "zz" (execute_tool get_weather) of trace {TRACE}: the span has no valid span id: left out',
        f'trace.json: span "yy" (chat n) of trace {"cd" * 16}: the span has no valid span id: left out',
        "trace.json: span 4444444444444444: tool get_weather ran (call t2), but no model turn asked for it: left out")
    [chosen] = import_bytes(json.dumps(trace).encode(), "trace.json", trace=TRACE[:6])
    assert chosen.warnings == imported.warnings
    assert imported.turns == 1
    assert imported.document.context[-1]["plan"] == [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†t1"}]
    for each in spans:
        each.pop("traceId", None)
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(trace).encode(), "trace.json")
    assert str(caught.value) == "trace.json: span 1111111111111111 (chat m): the span has no trace id: it belongs " \
                                "to no trace"


def openinference_trace(**flattened: Any) -> bytes:
    attributes = {"openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant",
                  "llm.output_messages.0.message.content": "Sunny."} | flattened
    items = [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "ChatCompletion", 0, 500, items)]}]}]}).encode()


def test_flattened_messages_with_a_number_left_out_are_refused_with_the_attribute() -> None:
    """Attributes dropped on the way (a limit, a collector's processor): a message left out would shift the later
    ones and the turn would not be what the model saw, so it is refused, named by the attribute, not by a shifted
    index."""
    whole = {"llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Be brief.",
             "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": "Weather?"}
    [imported] = import_bytes(openinference_trace(**whole), "t.json")
    assert "Weather?" in compose_request(imported.document.context).text()
    cut = {key: value for key, value in whole.items() if ".0." not in key}
    with pytest.raises(TraceError) as caught:
        import_bytes(openinference_trace(**cut), "t.json")
    assert str(caught.value) == ("t.json: span 1111111111111111: llm.input_messages.0 is not recorded, but "
                                 "llm.input_messages.1 is: the span's attributes were cut (an attribute count "
                                 "limit?)")
    del whole["llm.input_messages.1.message.role"]
    with pytest.raises(TraceError) as caught:
        import_bytes(openinference_trace(**whole), "t.json")
    assert str(caught.value) == ("t.json: span 1111111111111111: message 1: the message has no role; expected one "
                                 "of system, developer, user, assistant, tool, function")


def test_a_flattened_attribute_numbered_otherwise_is_no_message() -> None:
    """Only ASCII digits number a flattened message: `²` (a digit to Python) is another attribute, left alone, and a
    number of thousands of digits is a message left out before it, refused as one: never Python's error."""
    whole = {"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Weather?",
             "llm.input_messages.\u00b2.message.role": "user"}
    [imported] = import_bytes(openinference_trace(**whole), "t.json")
    assert "Weather?" in compose_request(imported.document.context).text()
    huge = {**whole, "llm.input_messages." + "1" * 5000 + ".message.role": "user"}
    with pytest.raises(TraceError, match=r"llm\.input_messages\.1 is not recorded"):
        import_bytes(openinference_trace(**huge), "t.json")


def test_a_genai_message_with_an_image_keeps_its_parts_as_chat_writes_them() -> None:
    """GenAI's parts of a message that is not all text are chat's: text as `text`, an image by URI or by its bytes
    (a data URL) as `image_url`, a file by its id as `file`, as an OpenInference or a chat completions import holds
    the same message."""
    asked = {"role": "user", "parts": [
        {"type": "text", "content": "Which is bigger?"},
        {"type": "uri", "modality": "image", "mime_type": "image/png", "uri": "https://x/a.png"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBORw0KGgo="},
        {"type": "file", "modality": "document", "file_id": "file-1"}]}
    reply = {"role": "assistant", "parts": [{"type": "text", "content": "The first."}], "finish_reason": "stop"}
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [span("1111111111111111", "chat m", 0, 10, attrs(
        gen_ai__operation__name="chat", gen_ai__input__messages=[asked], gen_ai__output__messages=[reply]))]}]}]}
    [imported] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert imported.document.context.messages[-1]["content"] == [
        {"type": "text", "text": "Which is bigger?"}, {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "file", "file": {"file_id": "file-1"}}]


def test_an_openinference_image_part_keeps_its_url() -> None:
    """`message.contents` with an image (`message_content.image.image.url`) keeps the image as the chat API
    writes it, not as an empty text part."""
    prefix = "llm.input_messages.0.message.contents"
    [imported] = import_bytes(openinference_trace(**{
        "llm.input_messages.0.message.role": "user",
        f"{prefix}.0.message_content.type": "text", f"{prefix}.0.message_content.text": "What is this?",
        f"{prefix}.1.message_content.type": "image",
        f"{prefix}.1.message_content.image.image.url": "https://example.com/cat.png"}), "t.json")
    user = next(m for m in imported.document.context.messages if m.get("role") == "user")
    assert user["content"] == [{"type": "text", "text": "What is this?"},
                               {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]


def test_a_model_span_without_messages_says_why() -> None:
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "chat m", 0, 10, attrs(gen_ai__operation__name="chat"))]}]}]}
    with pytest.raises(TraceError, match="span 1111111111111111: the model span records no messages"):
        import_bytes(json.dumps(trace).encode(), "t.json")


def test_message_events_without_content_say_why_instead_of_empty_messages() -> None:
    """Events whose content was not captured (or is in a place not read) are refused, never imported as
    empty messages."""
    events = [{"name": "gen_ai.user.message", "attributes": attrs(gen_ai__system="openai")},
              {"name": "gen_ai.choice", "attributes": attrs(finish_reason="stop")}]
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "chat m", 0, 10, attrs(gen_ai__operation__name="chat"), events=events)]}]}]}
    with pytest.raises(TraceError, match="span 1111111111111111: the model span's message events record no "
                                         "content"):
        import_bytes(json.dumps(trace).encode(), "t.json")


def test_each_trace_is_its_own_context() -> None:
    """Two traces in one file: two documents, labelled by trace id, in the order they appear."""
    trace = genai_trace()
    other = copy.deepcopy(trace["resourceSpans"][0])
    for item in other["scopeSpans"][0]["spans"]:
        item["traceId"] = "a" * 32
    trace["resourceSpans"].append(other)
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert [item.label for item in imported] == [TRACE, "a" * 32]


def _with_a_broken_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """`trace` and a second trace (all `a`s) whose spans record no messages."""
    broken = copy.deepcopy(trace["resourceSpans"][0])
    for item in broken["scopeSpans"][0]["spans"]:
        item["traceId"] = "a" * 32
        item["attributes"] = [a for a in item["attributes"] if "messages" not in a["key"]
                              and "instructions" not in a["key"]]
    trace["resourceSpans"].append(broken)
    return trace


def test_a_trace_asked_for_imports_when_another_trace_in_the_file_is_broken() -> None:
    """`--trace ID` reads only the traces it names: another trace's fault (a span that records no messages) is
    said when that trace is read, and does not stop the one asked for."""
    trace = _with_a_broken_trace(genai_trace())
    raw = json.dumps(trace).encode()
    with pytest.raises(TraceError) as caught:
        import_bytes(raw, "t.json")
    assert str(caught.value).endswith(f"records no messages (is capturing message content switched off? or are they "
                                      f"log records this file does not hold? give their file with it) (in trace "
                                      f"{'a' * 32}, one of the file's 2 traces: import another with --trace ID: "
                                      f"{TRACE})")
    [imported] = import_bytes(raw, "t.json", trace=TRACE[:6])
    assert (imported.label, imported.turns) == (TRACE, 2)
    with pytest.raises(TraceError, match="records no messages"):
        import_bytes(raw, "t.json", trace="aaaa")


def test_a_trace_id_that_names_no_trace_is_said_whatever_fault_another_trace_has() -> None:
    """`--trace ID` that names none of the file's traces is said so, with the contexts the file holds (a broken
    trace by its id), not as the fault of a trace it did not ask for."""
    trace = _with_a_broken_trace(genai_trace())
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(trace).encode(), "t.json", trace="zz")
    assert str(caught.value) == f"t.json: --trace 'zz' matches no context; the file holds: {TRACE}, {'a' * 32}"


def test_a_json_array_of_otlp_requests_is_read_as_their_spans() -> None:
    """Some tools save the export requests they received as one JSON array: its spans are read as the collector's
    file of one request a line is; an item that is no request is named by its place in the array."""
    trace = genai_trace()
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    [plain] = import_bytes(json.dumps(trace).encode(), "t.json")
    halves = [{"resourceSpans": [{"scopeSpans": [{"spans": part}]}]} for part in (spans[:2], spans[2:])]
    [listed] = import_bytes(json.dumps(halves).encode(), "t.json")
    assert listed.format == "otlp"
    assert listed.document.to_json() == plain.document.to_json()
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps([*halves, {"spans": []}]).encode(), "t.json")
    assert str(caught.value) == "t.json: request 2: expected an OTLP trace: an object with 'resourceSpans'"


def console_spans(formatter: Any = None) -> str:
    """What OpenTelemetry Python's ConsoleSpanExporter prints for a GenAI run of two turns and a tool: each span's
    `to_json()`, pretty-printed one after another (or as `formatter` writes it)."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    out = io.StringIO()
    provider = sdk.TracerProvider()
    options = {"formatter": formatter} if formatter is not None else {}
    provider.add_span_processor(export.SimpleSpanProcessor(export.ConsoleSpanExporter(out=out, **options)))
    tracer = provider.get_tracer("agent")
    user = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
    ask = {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "get_weather",
                                           "arguments": {"city": "Paris"}}]}
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "t1", "response": {"sky": "sunny"}}]}
    said = {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}], "finish_reason": "stop"}
    with tracer.start_as_current_span("invoke_agent weather") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"})
        for inputs, outputs in (([user], [ask]), ([user, ask, answer], [said])):
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                     "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 5,
                                     "gen_ai.input.messages": json.dumps(inputs),
                                     "gen_ai.output.messages": json.dumps(outputs)})
            if outputs == [ask]:
                with tracer.start_as_current_span("execute_tool get_weather") as tool:
                    tool.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                                         "gen_ai.tool.call.id": "t1", "gen_ai.tool.call.result": '{"sky": "sunny"}'})
    return out.getvalue()


def test_the_python_console_exporters_spans_are_read_as_a_trace() -> None:
    """Spans as OpenTelemetry Python's ConsoleSpanExporter prints them (ids in `context`, ISO times, attributes as an
    object), pretty-printed one after another or one a line, import as that trace; a print cut in its last span
    says where, and that the spans before it can be imported."""
    printed = console_spans()
    [imported] = import_bytes(printed.encode(), "console.txt")
    assert (imported.format, imported.name, imported.turns) == ("otlp", "weather", 2)
    assert imported.warnings == ("console.txt: tool get_weather has no recorded definition: its schema is inferred "
                                 "from its calls",)
    messages = imported.document.context.messages
    assert messages[-2]["plan"] == [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†t1"}]
    assert messages[-2]["_model"]["usage"] == {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}
    assert (messages[-1]["data"], messages[-1]["_run"]["started"][:2]) == ({"sky": "sunny"}, "20")
    assert imported.document.solution["output"] == "Sunny."
    [lines] = import_bytes(console_spans(lambda span: span.to_json(indent=None) + "\n").encode(), "console.jsonl")
    assert (lines.turns, lines.document.solution["output"]) == (2, "Sunny.")
    assert lines.document.context.messages[-2]["plan"] == messages[-2]["plan"]
    cut = printed[:printed.rindex('"attributes"')]
    with pytest.raises(TraceError) as caught:
        import_bytes(cut.encode(), "console.txt")
    start = printed[:printed.rindex("\n{\n")].count("\n") + 2
    assert re.match(rf"console.txt:\d+:\d+: [A-Z].* \(the file ends early: truncated\?; without the object from "
                    rf"line {start}, the ones before it can be read\)$", str(caught.value))


def test_a_span_delivered_twice_is_read_once() -> None:
    """Exporters retry and collectors deliver at least once: a span repeated as it was is the same span, not a
    retried request; the same span id with other contents is refused with its id."""
    trace = genai_trace()
    [once] = import_bytes(json.dumps(trace).encode(), "t.json")
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    trace["resourceSpans"].append({"scopeSpans": [{"spans": [copy.deepcopy(spans[2]), copy.deepcopy(spans[1])]}]})
    [twice] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert (twice.turns, twice.warnings) == (once.turns, once.warnings)
    assert twice.document.to_json() == once.document.to_json()
    trace["resourceSpans"][-1]["scopeSpans"][0]["spans"][0]["name"] = "chat other"
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(trace).encode(), "t.json")
    assert str(caught.value) == (f"t.json: span 3333333333333333 of trace {TRACE}: the span id appears twice with "
                                 "different contents")
    lines = jsonl([genai_trace(), {"resourceSpans": trace["resourceSpans"][-1:]}])
    with pytest.raises(TraceError) as caught:  # each on a line of its own: both places said
        import_bytes(lines, "t.jsonl")
    assert str(caught.value) == (f"t.jsonl:2: span 3333333333333333 of trace {TRACE}: the span id appears twice "
                                 "with different contents (first at t.jsonl:1)")


@pytest.mark.parametrize("parents", [{0: "1111111111111111"}, {0: "3333333333333333", 2: "1111111111111111"}])
def test_a_model_span_whose_parents_loop_back_to_it_is_still_a_turn(parents: dict[int, str]) -> None:
    """A span is not inside itself: a parent id that loops back (a broken exporter) leaves no turn out."""
    trace = genai_trace()
    [plain] = import_bytes(json.dumps(trace).encode(), "t.json")
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for index, parent in parents.items():
        spans[index]["parentSpanId"] = parent
    [looped] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert looped.turns == plain.turns == 2


# -- redaction --------------------------------------------------------------------------------------


def test_redaction_replaces_values_and_keeps_the_document_meaning_the_same() -> None:
    """Emails, API keys and named fields are replaced everywhere; property names of schemas and the names
    the protocol reads stay; calls still match their outputs."""
    body = exchange()
    body["request"]["messages"][2] = {"role": "user", "content": "I am alex@example.com, key sk-abcdefghijklmnop1234"}
    body["request"]["messages"][4]["content"] = json.dumps({"sky": "sunny", "token": "t0p-secret"})
    document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
    redacted, count = redact_document(document, Redaction.parse(["emails,api-keys", "token,city"]))
    text = redacted.dumps()
    for secret in ("alex@example.com", "sk-abcdefghijklmnop1234", "t0p-secret", '"city": "Paris"'):
        assert secret not in text
    assert count == 6  # the user text, the token, the city in both plan calls and both `_call`s
    assert redacted.context[4] == {"role": "user", "content": "I am [redacted], key [redacted]"}
    assert redacted.context[1]["tool"]["get_weather"]["properties"] == {"city": {"type": "string"},
                                                                        "_outputPath": OUTPUT_PATH}
    states = Execution(redacted.context, redacted.solution).states
    assert [state.status for state in states] == [Status.DONE, Status.DONE]
    assert "alex@example.com" in document.dumps()  # the original is untouched


def test_a_bad_redaction_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="not a regular expression"):
        Redaction.parse(["/(unclosed/"])
    assert Redaction.parse(["/a,b/"]).patterns[0].pattern == "a,b"


# -- export -----------------------------------------------------------------------------------------


def parse_otlp(value: dict[str, Any]) -> Any:
    """Parse OTLP JSON with opentelemetry-proto; OTLP JSON writes ids in hex where protobuf's JSON uses base64."""
    trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
    json_format = pytest.importorskip("google.protobuf.json_format")
    copied = copy.deepcopy(value)
    for batch in copied["resourceSpans"]:
        for scope in batch["scopeSpans"]:
            for item in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        item[key] = base64.b64encode(bytes.fromhex(item[key])).decode()
    return json_format.Parse(json.dumps(copied), trace_service.ExportTraceServiceRequest())


def span_attributes(item: Any) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in item.attributes}


def test_the_export_is_otlp_with_genai_attributes_turn_by_turn() -> None:
    """An imported log exported: opentelemetry-proto parses it; a root span, a chat span per turn, each tool
    span under its turn, with the call's id, arguments and result, and the turn's model and usage."""
    document = import_bytes(jsonl(log_lines()), "run.jsonl")[0].document
    exported = export_otlp(document, name="weather")
    assert export_otlp(document, name="weather") == exported  # the same document, the same trace
    parsed = parse_otlp(exported)
    spans = list(parsed.resource_spans[0].scope_spans[0].spans)
    names = [item.name for item in spans]
    assert names == ["invoke_agent weather", "chat m", "execute_tool get_weather", "chat m",
                     "execute_tool get_weather", "chat m"]
    said = json.loads(span_attributes(spans[3])["gen_ai.output.messages"])[0]["parts"][0]
    assert said == {"type": "text", "content": "Now Rome."}  # the assistant's words with its calls: one turn
    root, turn1, tool1, turn2, tool2, final = spans
    assert len(root.trace_id) == 16
    assert len(root.span_id) == 8
    assert {item.parent_span_id for item in (turn1, turn2, final)} == {root.span_id}
    assert tool1.parent_span_id == turn1.span_id
    assert tool2.parent_span_id == turn2.span_id
    tool = span_attributes(tool1)
    assert tool["gen_ai.tool.call.id"] == "call_1"
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert json.loads(tool["gen_ai.tool.call.result"]) == {"sky": "sunny"}
    chat = span_attributes(turn1)
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.usage.input_tokens"] == 50
    assert chat["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    inputs = json.loads(chat["gen_ai.input.messages"])
    assert inputs[0] == {"role": "system", "parts": [{"type": "text", "content": "You are a weather bot."}]}
    outputs = json.loads(span_attributes(final)["gen_ai.output.messages"])
    assert outputs[0]["parts"] == [{"type": "text", "content": "Sunny, then rain."}]
    assert turn1.end_time_unix_nano == 1764320000 * 10**9
    assert turn1.start_time_unix_nano == turn1.end_time_unix_nano - 812 * 10**6


def test_the_export_names_the_contextdeck_that_wrote_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The instrumentation scope is this program at its running version (a tracing tool shows it per span)."""
    import contextdeck

    monkeypatch.setattr(contextdeck, "__version__", "9.8.7")
    document = import_bytes(jsonl(log_lines()), "run.jsonl")[0].document
    scope = export_otlp(document)["resourceSpans"][0]["scopeSpans"][0]["scope"]
    assert scope == {"name": "contextdeck", "version": "9.8.7"}


def test_a_turn_recorded_without_a_time_is_placed_within_the_run() -> None:
    """A plan without `_model` (typed by hand, or its reply's audit lost) starts where the run's recorded
    times begin, not at the export's time: no span lies outside the run or starts after the spans it holds."""
    document = import_bytes(jsonl(log_lines()), "run.jsonl")[0].document
    body = document.to_json()
    del body["context"][4]["_model"]
    spans = export_otlp(parse_document(json.dumps(body).encode(), "run.json"))["resourceSpans"][0][
        "scopeSpans"][0]["spans"]
    starts = {item["spanId"]: int(item["startTimeUnixNano"]) for item in spans}
    run = (1764320000 - 1) * 10**9, (1764320010 + 1) * 10**9  # the log's replies were created in these seconds
    assert all(run[0] <= int(item["startTimeUnixNano"]) <= int(item["endTimeUnixNano"]) <= run[1]
               for item in spans)
    assert all(starts[item["parentSpanId"]] <= starts[item["spanId"]] for item in spans if "parentSpanId" in item)


def test_the_exported_turns_carry_the_model_settings_the_import_reads_back() -> None:
    """A preset's temperature, top_p, max_tokens, seed and penalties go out as GenAI's `gen_ai.request.*` on each
    chat span, which the import reads: the trace of an imported exchange imports to the same preset."""
    settings = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 300, "seed": 7, "frequency_penalty": 0.5,
                "presence_penalty": -0.5}
    body = exchange()
    body["request"].update(settings)
    document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
    preset = document.context.messages[0]
    assert preset == {"type": "preset", "model": "gpt-4o-mini", **settings}
    exported = without_document(export_otlp(document))  # read from the spans, as another tool's trace
    chat = span_attributes(list(parse_otlp(exported).resource_spans[0].scope_spans[0].spans)[1])
    assert {key: chat[f"gen_ai.request.{key}"] for key in settings} == settings
    again = import_bytes(json.dumps(exported).encode(), "trace.json")[0].document
    assert again.context.messages[0] == preset


def test_an_integer_past_64_bits_is_exported_as_its_digits() -> None:
    """OTLP's integers are 64-bit (a collector refuses the whole request otherwise): a larger seed goes out as its
    digits, the trace parses as OTLP, and the import reads it back as the number."""
    body = exchange()
    body["request"]["seed"] = 2**70
    document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
    exported = without_document(export_otlp(document))
    chat = span_attributes(list(parse_otlp(exported).resource_spans[0].scope_spans[0].spans)[1])
    assert chat["gen_ai.request.seed"] == str(2**70)
    again = import_bytes(json.dumps(exported).encode(), "trace.json")[0].document
    assert again.context.messages[0]["seed"] == 2**70


@pytest.mark.parametrize("moment", [10**12, -(10**12), 1e300, 2**63])
def test_a_reply_time_no_date_can_say_is_no_time(moment: Any) -> None:
    """A log's `created` in milliseconds (year 33,658), or further off: the reply has no date, rather than an
    exception out of the import."""
    body = exchange()
    body["response"]["created"] = moment
    [imported] = import_bytes(json.dumps(body).encode(), "ex.json")
    assert "date" not in imported.document.solution["_model"]


@pytest.mark.parametrize("nanos", ["99999999999999999999999", 2**70])
def test_a_span_time_past_64_bits_is_no_time(nanos: Any) -> None:
    """OTLP's times are unsigned 64-bit: a span's start or end past that is no time (its turn has no latency or
    date), not an exception out of the import."""
    trace = genai_trace()
    [plain] = import_bytes(json.dumps(trace).encode(), "t.json")
    for item in trace["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        item["endTimeUnixNano"] = nanos
    [imported] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert (imported.turns, len(imported.document.context.messages)) == (plain.turns, 8)
    assert "latency_ms" not in imported.document.context.messages[4]["_model"]


def test_a_time_otlp_cannot_say_is_left_to_the_export_clock() -> None:
    """OTLP's times are unsigned 64-bit nanoseconds: a reply dated before 1970 (a log's `created: -1`), or a latency
    longer than the time since 1970, exports as a trace that parses, its times within what OTLP can say."""
    for created, latency in ((-1, None), (1764320000, 1e15)):
        body = exchange()
        body["response"]["created"] = created
        if latency is not None:
            body["latency_ms"] = latency
        document = import_bytes(json.dumps(body).encode(), "ex.json")[0].document
        for item in parse_otlp(export_otlp(document)).resource_spans[0].scope_spans[0].spans:
            assert 0 <= item.start_time_unix_nano <= item.end_time_unix_nano


def root_attributes(trace: dict[str, Any]) -> list[dict[str, Any]]:
    attributes: list[dict[str, Any]] = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    return attributes


def without_document(trace: dict[str, Any]) -> dict[str, Any]:
    """An export without the document its root span carries: its spans alone, as a trace of another tool."""
    root_attributes(trace)[:] = [a for a in root_attributes(trace) if a["key"] != "contextdeck.document"]
    return trace


def test_a_run_of_several_turns_exported_without_its_document_imports_back_with_its_calls() -> None:
    """Without the carried copy, each later turn's recorded input is the request as rendered (plans and data as
    user text): the import reads the run from the first turn's input, each turn's calls and the results their tool
    spans recorded, so the plans, their output paths (`†state.paris` too) and the outputs come back, with a warning
    saying how it was read."""
    weather = {"type": "object", "properties": {"city": {"type": "string"}, "_outputPath": OUTPUT_PATH}}
    paris = {"_tool": "get_weather", "city": "Paris", "_outputPath": "†state.paris"}
    rome = {"_tool": "get_weather", "city": "Rome", "_outputPath": "†rome"}
    body = {"context": [
        {"type": "tool", "tool": {"get_weather": weather}}, SYSTEM, {"role": "user", "content": "Paris, then Rome?"},
        {"type": "plan", "plan": [paris], "_model": {"model": "m", "date": "2026-01-01T10:00:01Z"}},
        {"type": "data", "kind": "state", "data": {"paris": {"sky": "sunny"}}, "_call": paris,
         "_outputPath": "†state.paris", "_date": "2026-01-01T10:00:02Z", "_run": {"call": 0}},
        {"type": "plan", "plan": [rome], "_model": {"model": "m", "date": "2026-01-01T10:00:03Z"}},
        {"type": "data", "kind": "rome", "data": "rain", "_call": rome, "_outputPath": "†rome",
         "_date": "2026-01-01T10:00:04Z", "_run": {"call": 0}}],
        "solution": {"output": "Sunny, then rain.", "_model": {"model": "m", "date": "2026-01-01T10:00:05Z"}}}
    document = parse_document(json.dumps(body).encode(), "run.json")
    [again] = import_bytes(json.dumps(export_otlp(document, carry_document=False)).encode(), "t.json")

    def run_of(messages: list[dict[str, Any]]) -> list[Any]:
        return [(m.get("role"), m.get("content")) if "role" in m else m.get("plan") if m["type"] == "plan"
                else (m["kind"], m["data"], m["_call"], m["_outputPath"]) for m in messages if m.get("type") != "tool"]

    assert run_of(again.document.to_json()["context"][1:]) == run_of(body["context"])  # after the preset
    assert again.document.solution["output"] == "Sunny, then rain."
    assert again.turns == 3
    assert [warning.split(": ", 2)[2][:43] for warning in again.warnings] == [
        "ContextDeck's export without its document: "]
    assert problems(again.document) == []


@pytest.mark.parametrize("result", ['{"a": 1}', "[1, 2]", "42", {"a": 1}, [1, "two"], 42, 2**70, None, True])
def test_a_tool_result_exported_without_the_document_imports_back_as_it_was(result: Any) -> None:
    """A tool span's result is its text, or the JSON text of any other value, which the span marks
    (`contextdeck.result_json`): the import gives back a text that reads as JSON as that text, and a value as it."""
    fmt = {"_tool": "fmt", "_outputPath": "†state.s"}
    body = {"context": [
        {"type": "tool", "tool": {"fmt": {"type": "object", "properties": {}}}}, {"role": "user", "content": "go"},
        {"type": "plan", "plan": [fmt], "_model": {"model": "m"}},
        {"type": "data", "kind": "state", "data": {"s": result}, "_call": fmt, "_outputPath": "†state.s",
         "_run": {"call": 0}}],
        "solution": {"output": "ok", "_model": {"model": "m"}}}
    document = parse_document(json.dumps(body).encode(), "run.json")
    [again] = import_bytes(json.dumps(export_otlp(document, carry_document=False)).encode(), "t.json")
    assert [m["data"] for m in again.document.to_json()["context"] if m.get("kind") == "state"] == [{"s": result}]


def test_a_marked_tool_result_that_no_longer_parses_is_kept_as_its_text() -> None:
    """A result exported as its value's JSON text and cut on the way is kept as that text, with a warning."""
    fmt = {"_tool": "fmt", "_outputPath": "†state.s"}
    body = {"context": [
        {"type": "tool", "tool": {"fmt": {"type": "object", "properties": {}}}}, {"role": "user", "content": "go"},
        {"type": "plan", "plan": [fmt], "_model": {"model": "m"}},
        {"type": "data", "kind": "state", "data": {"s": {"a": 1}}, "_call": fmt, "_outputPath": "†state.s",
         "_run": {"call": 0}}],
        "solution": {"output": "ok", "_model": {"model": "m"}}}
    exported = export_otlp(parse_document(json.dumps(body).encode(), "run.json"), carry_document=False)
    tool = next(span for span in exported["resourceSpans"][0]["scopeSpans"][0]["spans"]
                if span["name"] == "execute_tool fmt")
    for attribute in tool["attributes"]:
        if attribute["key"] in ("gen_ai.tool.call.result", "output.value"):
            attribute["value"]["stringValue"] = '{"a": '  # (a length limit cuts its JSON)
    [again] = import_bytes(json.dumps(exported).encode(), "t.json")
    assert [m["data"] for m in again.document.to_json()["context"] if m.get("kind") == "state"] == [{"s": '{"a": '}]
    assert any(warning.endswith("(fmt) was exported as the JSON text of its value, which does not parse (cut short "
                                "on the way?): kept as that text") for warning in again.warnings)


def test_a_replayed_export_reads_no_later_turns_input() -> None:
    """Read from its first turn's input, its calls and its tool spans, ContextDeck's export without its document
    does not read its later turns' recorded inputs (each the conversation so far, rendered: most of a big export):
    one cut by an attribute limit does not stop the import, and the run comes back as from an intact one."""
    [first] = import_bytes(jsonl(log_lines()), "run.jsonl")
    exported = export_otlp(first.document, carry_document=False)
    intact = import_bytes(json.dumps(exported).encode(), "t.json")[0].document.to_json()
    later = exported["resourceSpans"][0]["scopeSpans"][0]["spans"][3]
    assert later["name"].startswith("chat")
    later["attributes"] = [a for a in later["attributes"] if not a["key"].startswith("llm.input_messages.1.")]
    genai = next(a for a in later["attributes"] if a["key"] == "gen_ai.input.messages")
    genai["value"]["stringValue"] = genai["value"]["stringValue"][:40]  # (a length limit cuts its JSON)
    [again] = import_bytes(json.dumps(exported).encode(), "t.json")
    assert again.document.to_json() == intact


def test_contextdecks_own_export_imports_back_as_its_document() -> None:
    """A turn's recorded input is the request as rendered (plans as `## Plan` text, data as `## Data`), from which
    no import can read the messages back: the export carries its document, and importing the export gives back
    the same messages, schema and solution, without a warning; a document saved as an array comes back as a
    saved request."""
    [first] = import_bytes(json.dumps(genai_trace()).encode(), "genai.json")
    exported = export_otlp(first.document)
    [again] = import_bytes(json.dumps(exported).encode(), "t.json")
    assert again.document.to_json() == first.document.to_json()
    assert (again.format, again.warnings, again.turns) == ("otlp", (), 2)
    assert again.label == exported["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    from contextdeck.engine import Context, Document, Shape

    bare = Document(Context([{"role": "user", "content": "Hi"}, {"type": "plan", "plan": [], "output": "Hello"}]),
                    Shape.ARRAY)
    [back] = import_bytes(json.dumps(export_otlp(bare)).encode(), "t.json")
    assert back.document.to_json() == {"context": bare.context.messages}


def test_an_export_whose_document_was_changed_since_is_read_from_its_spans() -> None:
    """The document an export carries is taken only when it is the one the trace was exported from (the trace id
    is its content's): one changed or cut since is said, and the trace is read from its spans (its turns' calls
    too)."""
    [first] = import_bytes(json.dumps(genai_trace()).encode(), "genai.json")
    for change in ('{"context": []}', '{"context": ['):
        exported = export_otlp(first.document)
        carried = next(a for a in root_attributes(exported) if a["key"] == "contextdeck.document")
        carried["value"]["stringValue"] = change
        [again] = import_bytes(json.dumps(exported).encode(), "t.json")
        root = exported["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"]
        assert again.warnings[0].startswith(f"t.json: span {root}: the ContextDeck document it carries cannot be used "
                                            f"(")
        assert again.warnings[0].endswith("): the trace is read from its spans")
        assert again.document.context.messages[4]["plan"] == first.document.context.messages[4]["plan"]


def test_the_openai_export_is_the_request_the_model_receives() -> None:
    """`--format openai` is exactly the body ContextDeck sends for the whole request (json_schema)."""
    document = import_bytes(jsonl(log_lines()), "run.jsonl")[0].document
    body = export_openai(document)
    expected = request_prompt(document.context, document.schema).body("json_schema")
    assert body == {"model": "m", **expected}
    assert body["messages"] == compose_request(document.context, document.schema).to_json()["messages"]
    earlier = export_openai(document, at=4, model="other")
    assert earlier["model"] == "other"
    assert len(earlier["messages"]) == 2


IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}
ASKED_ABOUT_AN_IMAGE = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": [{"type": "text", "text": "Which is bigger?"}, IMAGE,
                                 {"type": "image_url", "image_url": {"url": "https://x/b.png"}}]},
    {"role": "assistant", "content": [{"type": "text", "text": "I cannot say."},
                                      {"type": "refusal", "refusal": "Not from these."}]},
    {"role": "user", "content": [{"type": "text", "text": "Hear this"},
                                 {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                                 {"type": "file", "file": {"file_id": "file-1"}}]},
]


def test_the_openai_export_writes_content_parts_as_parts_and_imports_back_the_same() -> None:
    """A message of a text and images (a user's audio and file, an assistant's refusal) is exported as its content
    parts, as the chat completions API takes them, not as one JSON text; imported again, the messages are the
    same."""
    [first] = import_bytes(json.dumps({"model": "m", "messages": ASKED_ABOUT_AN_IMAGE}).encode(), "ex.json")
    body = export_openai(first.document)
    assert body["messages"] == ASKED_ABOUT_AN_IMAGE
    [again] = import_bytes(json.dumps(body).encode(), "ex.json")
    said = [message for message in again.document.context.messages if "role" in message]
    assert said == [message for message in first.document.context.messages if "role" in message]
    assert [message["content"] for message in said] == [message["content"] for message in ASKED_ABOUT_AN_IMAGE]


def test_the_openai_export_imports_back_with_its_tools_and_schema() -> None:
    """The body's tools live only in the solution schema it asks for: the import reads ContextDeck's composition back
    as the document's tools (as they were: no `_outputPath` added) and its own schema, without a warning, and the
    body exported again is the same."""
    tools = {"get_weather": {"type": "object", "description": "Weather for a city",
                             "properties": {"city": {"type": "string"}}, "required": ["city"]},
             "add": {"type": "object", "properties": {"a": {"type": "integer"}, "_output": {"type": "integer"}}}}
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    body = {"context": [{"type": "preset", "model": "m"}, {"role": "user", "content": "Weather in Paris?"},
                        {"type": "tool", "tool": tools}], "schema": schema}
    exported = export_openai(parse_document(json.dumps(body).encode(), "w.json"))
    [again] = import_bytes(json.dumps(exported).encode(), "w.openai.json")
    assert [m["tool"] for m in again.document.context.messages if m.get("type") == "tool"] == [tools]
    assert again.document.schema == schema
    assert again.warnings == ()
    assert export_openai(again.document) == exported


def test_a_solution_schema_that_is_no_composition_of_tools_is_kept_with_a_warning() -> None:
    """A body whose solution schema was composed from more than a schema and tools (the fields of a meta message,
    here) cannot be read back as tools: it stays the document's schema, and a warning says its calls offer no
    tool."""
    body = {"context": [{"role": "user", "content": "Go"}, {"type": "meta", "meta": {"domain": "examples"}},
                        {"type": "tool", "tool": {"go": {"type": "object", "properties": {}}}}]}
    exported = export_openai(parse_document(json.dumps(body).encode(), "w.json"))
    [again] = import_bytes(json.dumps(exported).encode(), "w.openai.json")
    assert again.document.schema == exported["response_format"]["json_schema"]["schema"]
    assert again.warnings == (
        "w.openai.json: response_format: a solution schema whose calls are not the tools ContextDeck composes (from a "
        "schema and tools alone): kept as the document's schema, whose calls offer no tool (a document offers its "
        "tools by tool messages)",)


@pytest.mark.parametrize(("role", "part"), [
    ("user", {"type": "blob", "modality": "audio", "content": "UklGRg=="}),  # a GenAI part the API has no type for
    ("user", {"type": "image_url", "image_url": "https://x/b.png"}),  # its URL not in an object
    ("user", {"type": "image_url", "image_url": {"url": "https://x/b.png", "detail": "huge"}}),  # auto, low, high
    ("system", IMAGE),  # a system message holds texts alone
])
def test_content_parts_the_api_would_refuse_are_exported_as_the_json_the_model_is_shown(
        role: str, part: dict[str, Any]) -> None:
    """A list with a part the API does not take for that role goes as the JSON text `render` shows: never a body the
    API refuses."""
    from contextdeck.engine import Context, Document, Shape

    parts = [{"type": "text", "text": "Look"}, part]
    document = Document(Context([{"role": role, "content": parts}]), Shape.REQUEST)
    [message] = export_openai(document)["messages"]
    assert message == compose_request(document.context).to_json()["messages"][0]
    assert json.loads(message["content"]) == parts


NAMED_FILE = {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}}
# One request whose user messages are parts (images, audio, files), answered: one turn, whose input is all of them.
ASKED_WITH_FILES = {"request": {"model": "m", "messages": [
    *ASKED_ABOUT_AN_IMAGE[:2], ASKED_ABOUT_AN_IMAGE[3], {"role": "user", "content": [
        {"type": "text", "text": "Read"}, NAMED_FILE]}]}, "response": response({"role": "assistant", "content": "No."})}


def chat_spans(exported: dict[str, Any]) -> list[dict[str, Any]]:
    """The attributes of an OTLP export's chat spans, as JSON holds them (their values as text)."""
    spans = exported["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return [{a["key"]: next(iter(a["value"].values())) for a in item["attributes"]} for item in spans
            if item["name"].startswith("chat")]


def test_the_otlp_export_writes_content_parts_as_each_convention_says_them() -> None:
    """A user message of a text and images (audio, files) is written as parts, not as one JSON text: GenAI's `text`,
    `blob` (an image's or audio's bytes, with modality and MIME type; a file's, with its name) and `uri` parts
    (an image by URL), a file by its id as a `file` part; OpenInference's `message.contents`, an image and an
    audio by their URLs. A message of text alone stays one text; an assistant's text and refusal are its reply's
    parts."""
    [first] = import_bytes(json.dumps(ASKED_WITH_FILES).encode(), "ex.json")
    [turn] = chat_spans(export_otlp(first.document))
    genai = json.loads(turn["gen_ai.input.messages"])
    assert genai[0] == {"role": "system", "parts": [{"type": "text", "content": "Answer briefly."}]}
    assert genai[1]["parts"] == [
        {"type": "text", "content": "Which is bigger?"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBORw0KGgo=", "detail": "low"},
        {"type": "uri", "modality": "image", "uri": "https://x/b.png"}]
    assert genai[2]["parts"][1:] == [{"type": "blob", "modality": "audio", "mime_type": "audio/wav",
                                      "content": "UklGRg=="},
                                     {"type": "file", "modality": "document", "file_id": "file-1"}]
    assert genai[3]["parts"][1] == {"type": "blob", "modality": "document", "mime_type": "application/pdf",
                                    "content": "JVBERi0=", "filename": "a.pdf"}
    assert turn["llm.input_messages.0.message.content"] == "Answer briefly."
    user = "llm.input_messages.1.message"
    assert {key[len(user) + 1:]: value for key, value in turn.items() if key.startswith(user)} == {
        "role": "user",
        "contents.0.message_content.type": "text", "contents.0.message_content.text": "Which is bigger?",
        "contents.1.message_content.type": "image",
        "contents.1.message_content.image.image.url": "data:image/png;base64,iVBORw0KGgo=",
        "contents.1.message_content.image.image.detail": "low",  # (OpenInference has no field for it)
        "contents.2.message_content.type": "image", "contents.2.message_content.image.image.url": "https://x/b.png"}
    heard = "llm.input_messages.2.message.contents.1.message_content"
    assert (turn[f"{heard}.type"], turn[f"{heard}.audio.audio.url"], turn[f"{heard}.audio.audio.mime_type"]) == (
        "audio", "data:audio/wav;base64,UklGRg==", "audio/wav")
    [said] = import_bytes(json.dumps({"model": "m", "messages": ASKED_ABOUT_AN_IMAGE}).encode(), "ex.json")
    answered = chat_spans(export_otlp(said.document))[0]
    [reply] = json.loads(answered["gen_ai.output.messages"])
    assert reply["parts"] == [{"type": "text", "content": "I cannot say."},
                              {"type": "refusal", "refusal": "Not from these."}]  # (no GenAI part says it)
    refused = "llm.output_messages.0.message.contents.1.message_content"
    assert (answered[f"{refused}.type"], answered[f"{refused}.text"]) == ("refusal", "Not from these.")
    assert not {"contextdeck.input_json", "contextdeck.output_json"} & {*turn, *answered}  # (no JSON text marked)


def exported_without(document: Any, convention: str) -> dict[str, Any]:
    """`document` exported without its copy, with only one convention's messages when `convention` names one (as a
    collector that keeps one writes it)."""
    exported = export_otlp(document, carry_document=False)
    dropped = {"both": ("-",), "OpenInference": ("gen_ai.input.messages", "gen_ai.output.messages"),
               "GenAI": ("llm.",)}[convention]
    for item in exported["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        item["attributes"] = [a for a in item["attributes"] if not a["key"].startswith(dropped)]
    return exported


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
def test_content_parts_exported_without_the_document_import_back_as_the_same_parts(convention: str) -> None:
    """Exported without its document, the run is read from its turn's input: each message of parts comes back as the
    same parts, from both conventions (OpenInference's read first) or from either alone (as a collector that keeps
    one writes it)."""
    [first] = import_bytes(json.dumps(ASKED_WITH_FILES).encode(), "ex.json")
    [again] = import_bytes(json.dumps(exported_without(first.document, convention)).encode(), "t.json")
    assert again.document.context.messages == first.document.context.messages
    assert again.document.solution["output"] == first.document.solution["output"] == "No."


def test_content_parts_of_another_tools_trace_import_as_chat_parts() -> None:
    """Another tool's GenAI parts: an audio blob of a wav or mp3 as `input_audio`, a named blob or one of a document as
    a `file` of a data URL, an image by URI with its detail; OpenInference's audio data URL as `input_audio`; a
    medium chat has no part for (an audio by URL, a video) is kept as the trace says it, never lost."""
    asked = {"role": "user", "parts": [
        {"type": "blob", "modality": "audio", "mime_type": "audio/mpeg", "content": "SUQz"},
        {"type": "blob", "modality": "document", "mime_type": "application/pdf", "content": "JVBERi0="},
        {"type": "uri", "modality": "image", "uri": "gs://b/c.png", "detail": "high"},
        {"type": "uri", "modality": "video", "uri": "gs://b/clip.mp4"}]}
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [span("1111111111111111", "chat m", 0, 10, attrs(
        gen_ai__operation__name="chat", gen_ai__input__messages=[asked]))]}]}]}
    [imported] = import_bytes(json.dumps(trace).encode(), "t.json")
    assert imported.document.context.messages[-1]["content"] == [
        {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="}},
        {"type": "image_url", "image_url": {"url": "gs://b/c.png", "detail": "high"}},
        {"type": "uri", "modality": "video", "uri": "gs://b/clip.mp4"}]
    prefix = "llm.input_messages.0.message.contents"
    [imported] = import_bytes(openinference_trace(**{
        "llm.input_messages.0.message.role": "user",
        f"{prefix}.0.message_content.type": "audio",
        f"{prefix}.0.message_content.audio.audio.url": "data:audio/wav;base64,UklGRg==",
        f"{prefix}.1.message_content.type": "audio",
        f"{prefix}.1.message_content.audio.audio.url": "https://x/a.mp3",
        f"{prefix}.1.message_content.audio.audio.mime_type": "audio/mpeg"}), "t.json")
    user = next(m for m in imported.document.context.messages if m.get("role") == "user")
    assert user["content"] == [{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                               {"type": "audio", "audio": {"url": "https://x/a.mp3", "mime_type": "audio/mpeg"}}]


PAINTED = {"role": "assistant", "parts": [  # an image model's answer, as another tool's GenAI trace writes it
    {"type": "text", "content": "Here it is."},
    {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBORw0KGgo="}]}


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
def test_a_final_output_of_content_parts_is_exported_as_its_parts_and_comes_back(convention: str) -> None:
    """A final output that is content parts (an image model's text and image) is the reply's parts in both conventions,
    as a trace viewer shows them (the image as an image), not their JSON text; exported without its document, it
    imports back as the same document, from both conventions or either alone."""
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [span("1111111111111111", "chat m", 0, 10, attrs(
        gen_ai__operation__name="chat", gen_ai__input__messages=[{"role": "user", "parts": [
            {"type": "text", "content": "Paint a dot."}]}], gen_ai__output__messages=[PAINTED]))]}]}]}
    [first] = import_bytes(json.dumps(trace).encode(), "t.json")
    output = [{"type": "text", "text": "Here it is."},
              {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]
    assert first.document.solution["output"] == output
    [turn] = chat_spans(export_otlp(first.document))
    [reply] = json.loads(turn["gen_ai.output.messages"])
    assert reply["parts"] == PAINTED["parts"]
    said = "llm.output_messages.0.message.contents"
    assert {key[len(said) + 1:]: value for key, value in turn.items() if key.startswith(said)} == {
        "0.message_content.type": "text", "0.message_content.text": "Here it is.",
        "1.message_content.type": "image",
        "1.message_content.image.image.url": "data:image/png;base64,iVBORw0KGgo="}
    assert "llm.output_messages.0.message.content" not in turn
    assert "contextdeck.output_json" not in turn
    [again] = import_bytes(json.dumps(exported_without(first.document, convention)).encode(), "t.json")
    assert again.document.context.messages == first.document.context.messages
    assert again.document.solution["output"] == output


LOOKALIKES = [
    [{"type": "hologram", "hologram": {"url": "https://x/h"}}],  # a type the API has no part of
    [{"type": "text", "text": "One"}, {"type": "text", "text": "Two"}],  # texts alone: every import reads one text
    [{"type": "text", "text": "Look", "lang": "en"}, IMAGE],  # a key the API has no field for
    [{"type": "file", "file": {"file_id": "file-1", "file_data": "data:application/pdf;base64,JVBERi0="}}],  # both
    {"type": "image_url", "image_url": {"url": "https://x/a.png"}},  # one part, not a list of them
    {"answer": 42}, [1, 2], 42, True,
]


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
@pytest.mark.parametrize("output", LOOKALIKES, ids=["unknown type", "texts alone", "unknown key", "file by id and data",
                                                   "one part", "object", "list", "number", "boolean"])
def test_a_final_output_that_only_looks_like_parts_is_its_json_text_and_comes_back(output: Any,
                                                                                   convention: str) -> None:
    """A final output that is not content parts each of which comes back as it is (an unknown type, texts alone, a
    key the API has no field for, a file by both id and data), or no list of parts at all, is the reply's JSON text
    in both conventions, said so (`contextdeck.output_json`); exported without its document, the same value comes
    back, from both conventions or either alone."""
    from contextdeck.engine import Context, Document, Shape

    document = Document(Context([{"role": "user", "content": "Answer."}]), Shape.REQUEST, None, {"output": output})
    [turn] = chat_spans(export_otlp(document))
    [reply] = json.loads(turn["gen_ai.output.messages"])
    text = json.dumps(output, ensure_ascii=False)
    assert reply["parts"] == [{"type": "text", "content": text}]
    assert turn["llm.output_messages.0.message.content"] == text
    assert turn["contextdeck.output_json"] is True
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert again.document.solution["output"] == output
    assert type(again.document.solution["output"]) is type(output)


def test_a_final_text_that_reads_as_json_stays_a_text() -> None:
    """A final output that is a text is written as it is, unmarked, and comes back a text even when it reads as
    JSON (`42`, `{"a": 1}`): only the export's mark says a reply's text is its output's JSON."""
    from contextdeck.engine import Context, Document, Shape

    for output in ("42", '{"a": 1}', "Sunny."):
        document = Document(Context([{"role": "user", "content": "Answer."}]), Shape.REQUEST, None,
                            {"output": output})
        [turn] = chat_spans(export_otlp(document))
        assert "contextdeck.output_json" not in turn
        [again] = import_bytes(json.dumps(export_otlp(document, carry_document=False)).encode(), "t.json")
        assert again.document.solution["output"] == output


def cut_in_export(content: Any, schema: Any, output: Any, key: str, keep: int) -> tuple[bytes, str, str]:
    """A request of one user message (`content`) exported without its document, OpenInference's words alone, with
    its turn's attribute `key` cut to its first `keep` characters (as a length limit cuts it): the export's bytes,
    the turn's span id and the cut text."""
    from contextdeck.engine import Context, Document, Shape

    document = Document(Context([{"role": "user", "content": content}]), Shape.REQUEST, schema, {"output": output})
    exported = exported_without(document, "OpenInference")
    turn = exported["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    value = next(a for a in turn["attributes"] if a["key"] == key)["value"]
    value["stringValue"] = cut = value["stringValue"][:keep]
    return json.dumps(exported).encode(), turn["spanId"], cut


def test_a_final_output_json_cut_on_the_way_is_kept_as_its_text_and_said() -> None:
    """A reply's text the export marks as its output's JSON that no longer parses (an attribute length limit cut it)
    is kept as that text, with a warning naming its span, never read as some other value silently."""
    exported, span_id, cut = cut_in_export("Answer.", None, {"answer": "long"},
                                           "llm.output_messages.0.message.content", 12)
    [again] = import_bytes(exported, "t.json")
    assert again.document.solution["output"] == cut == '{"answer": "'
    assert f"t.json: span {span_id}: response: {CUT_JSON}" in again.warnings


def text_then_plan(said: Any) -> list[dict[str, Any]]:
    """A run whose model said something (`said`) and called a tool in one reply, the call's result, then the user."""
    call = {"_tool": "get_weather", "city": "Paris", "_outputPath": "†paris"}
    tool = {"type": "object", "properties": {"city": {"type": "string"}, "_outputPath": {"type": "string"}}}
    return [{"type": "tool", "tool": {"get_weather": tool}}, {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": said}, {"type": "plan", "plan": [call], "_model": {"model": "m"}},
            {"type": "data", "kind": "paris", "data": {"sky": "sunny"}, "_call": call, "_outputPath": "†paris"}]


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
@pytest.mark.parametrize("said", ["Let me look.", {"answer": 42}, [
    {"type": "text", "text": "Let me look."}, {"type": "refusal", "refusal": "Not Rome.", "why": "policy"}]],
    ids=["text", "object", "parts with an unknown key"])
def test_a_reply_of_a_text_and_calls_is_one_turn_and_its_text_comes_back_once(said: Any, convention: str) -> None:
    """An assistant's text right before its plan is the plan's reply too: one turn, whose input ends before that
    text (the model wrote it; it was not sent it); exported without its document, the text comes back once, and a
    content that is no text (written as its JSON text, marked) as the value it was."""
    from contextdeck.engine import Context, Document, Shape

    document = Document(Context(text_then_plan(said)), Shape.REQUEST, None, {"output": "Sunny."})
    turn = chat_spans(export_otlp(document))[0]
    assert [message["role"] for message in json.loads(turn["gen_ai.input.messages"])] == ["user"]
    text = said if isinstance(said, str) else json.dumps(said, ensure_ascii=False)
    assert json.loads(turn["gen_ai.output.messages"])[0]["parts"][0] == {"type": "text", "content": text}
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert [message for message in again.document.context.messages if "role" in message] == [
        {"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": said}]
    assert again.document.solution["output"] == "Sunny."


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
@pytest.mark.parametrize("content", [None, ""], ids=["null", "empty text"])
def test_an_assistant_message_of_no_content_comes_back_as_it_was(content: Any, convention: str) -> None:
    """An assistant message whose content is null, a turn of its own (its `_model`) before a plan or alone, is said
    as both conventions say no content (GenAI's output message without a text part, OpenInference's without
    `message.content`), unmarked, and comes back null from either; an empty text is a text part "" and comes back
    "" (it came back "" for null, and a GenAI reply of tool calls alone read as content "")."""
    from contextdeck.engine import Context, Document, Shape

    messages = text_then_plan(content)
    messages[2]["_model"] = {"model": "m"}  # (its own turn: the plan after it is another)
    messages.append({"role": "assistant", "content": content})  # (a turn of the solution's: no text is no output)
    document = Document(Context(messages), Shape.REQUEST, None, {"output": "Sunny."})
    said, plan, alone, _final = chat_spans(export_otlp(document, carry_document=False))
    for turn in (said, alone):
        assert json.loads(turn["gen_ai.output.messages"])[0]["parts"] == (
            [] if content is None else [{"type": "text", "content": ""}])
        assert turn.get("llm.output_messages.0.message.content") == content
        assert "contextdeck.output_json" not in turn
    assert [part["type"] for part in json.loads(plan["gen_ai.output.messages"])[0]["parts"]] == ["tool_call"]
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert [(message["role"], message["content"]) for message in again.document.context.messages
            if "role" in message] == [("user", "Weather in Paris?"), ("assistant", content), ("assistant", content)]
    assert again.document.solution["output"] == "Sunny."


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
def test_an_input_message_of_null_content_comes_back_null(convention: str) -> None:
    """A user message whose content is null, in a turn's input (marked as its JSON text, as any content that is no
    text), comes back null from either convention, not as an empty text."""
    from contextdeck.engine import Context, Document, Shape

    document = Document(Context([{"role": "user", "content": "Hi"}, {"role": "user", "content": None}]),
                        Shape.REQUEST, None, {"output": "Hello."})
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert [message for message in again.document.context.messages if "role" in message] == [
        {"role": "user", "content": "Hi"}, {"role": "user", "content": None}]


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
def test_a_null_assistant_message_before_its_plan_comes_back_as_the_plan_alone(convention: str) -> None:
    """An assistant message of null content right before its plan (the same reply) is a reply of tool calls alone, as
    both conventions and the API say every such reply: exported, its turn's output is its calls, and it comes back
    as the plan alone (format.md §10), never as a text "null" or ""."""
    from contextdeck.engine import Context, Document, Shape

    document = Document(Context(text_then_plan(None)), Shape.REQUEST, None, {"output": "Sunny."})
    turn = chat_spans(export_otlp(document, carry_document=False))[0]
    assert [part["type"] for part in json.loads(turn["gen_ai.output.messages"])[0]["parts"]] == ["tool_call"]
    assert "llm.output_messages.0.message.content" not in turn
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert [message.get("role") or message["type"] for message in again.document.context.messages] == [
        "preset", "tool", "user", "plan", "data"]


CUT_JSON = "exported as the JSON text of its content, which does not parse (cut short on the way?): kept as that text"
PARTS_NOT_BACK = [  # (a role, a content the trace's words would not give back as it is)
    ("user", [{"type": "text", "text": "Look", "lang": "en"}, IMAGE]),  # a key the API has no field for
    ("user", [{"type": "text", "text": "Read"},
              {"type": "file", "file": {"file_id": "file-1", "file_data": "data:application/pdf;base64,JVBERi0="}}]),
    ("user", [{"type": "text", "text": "Read"},
              {"type": "file", "file": {"file_data": "data:image/png;base64,iVBORw0KGgo="}}]),  # read as an image
    ("user", [{"type": "text", "text": "Hear"}, {"type": "blob", "modality": "audio", "content": "UklGRg=="}]),
    ("user", {"answer": 42}),
    ("assistant", [{"type": "text", "text": "No."}, {"type": "refusal", "refusal": "Not this.", "why": "policy"}]),
    ("assistant", [{"type": "text", "text": "Here."}, IMAGE]),  # an image the API takes of no assistant
    ("assistant", {"answer": 42}),
]
PARTS_NOT_BACK_IDS = ["unknown key", "file by id and data", "unnamed image file", "part the API refuses", "object",
                      "assistant's unknown key", "assistant's image", "assistant's object"]


def without_audit(document: Any) -> list[dict[str, Any]]:
    """The document's messages without the audit an import gives a model's reply (`_model`: the spans' times)."""
    return [{key: value for key, value in message.items() if key != "_model"} for message in document.context.messages]


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
@pytest.mark.parametrize(("role", "content"), PARTS_NOT_BACK, ids=PARTS_NOT_BACK_IDS)
def test_a_message_that_would_not_come_back_as_its_parts_is_its_json_text_and_comes_back(
        role: str, content: Any, convention: str) -> None:
    """A message whose content is no text and would not come back as it is from the conventions' parts (a key the
    API has no field for, a file by both id and data, an unnamed file of an image, a part the API refuses, no parts at
    all) is written as its JSON text, the span marking which (an input message by its index, the reply); exported
    without its document, the same messages come back, from both conventions or either alone."""
    from contextdeck.engine import Context, Document, Shape

    messages = [{"role": "system", "content": "Be brief."}, {"role": role, "content": content}]
    document = Document(Context(messages), Shape.REQUEST, None, {"output": "Done."})
    turn = chat_spans(export_otlp(document))[0]
    shown = compose_request(document.context).to_json()["messages"][1]["content"]  # (the JSON text `render` shows)
    if role == "user":
        assert json.loads(turn["gen_ai.input.messages"])[1]["parts"] == [{"type": "text", "content": shown}]
        assert turn["llm.input_messages.1.message.content"] == shown
        assert json.loads(turn["contextdeck.input_json"]) == [1]
    else:  # (an assistant's message is a turn of its own, whose reply it is)
        assert json.loads(turn["gen_ai.output.messages"])[0]["parts"] == [{"type": "text", "content": json.dumps(
            content, ensure_ascii=False)}]
        assert turn["contextdeck.output_json"] is True
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert without_audit(again.document) == messages
    assert again.document.solution["output"] == "Done."


def test_a_message_json_cut_on_the_way_is_kept_as_its_text_and_said_with_its_place() -> None:
    """An input message the export marks as its content's JSON text that no longer parses (an attribute length
    limit cut it) is kept as that text, with a warning naming its span and its index, never read as some other
    value silently."""
    exported, span_id, cut = cut_in_export(PARTS_NOT_BACK[0][1], None, "Done.",
                                           "llm.input_messages.0.message.content", 20)
    [again] = import_bytes(exported, "t.json")
    assert again.document.context.messages[0] == {"role": "user", "content": cut}
    assert f"t.json: span {span_id}: input message 0: {CUT_JSON}" in again.warnings


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.mark.parametrize("convention", ["both", "OpenInference", "GenAI"])
@pytest.mark.parametrize(("schema", "output"), [(SCHEMA, {"answer": "Sunny."}), ({"type": "string"}, "42"),
                                                ({"type": "string"}, '{"answer": "Sunny."}'), (True, "Sunny.")],
                         ids=["object", "text of a number", "text of an object", "boolean schema"])
def test_the_schema_goes_with_each_turn_and_comes_back(schema: Any, output: Any, convention: str) -> None:
    """The document's schema (the request's output schema) is each turn's `contextdeck.schema`, its JSON text:
    exported without its document, it comes back, from both conventions or either alone, with the final output as
    it was: a text that reads as JSON stays a text though the schema is there (only the export's mark says a reply's
    text is JSON)."""
    from contextdeck.engine import Context, Document, Shape

    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Looking."}]
    document = Document(Context(messages), Shape.REQUEST, schema, {"output": output})
    assert [json.loads(turn["contextdeck.schema"]) for turn in chat_spans(export_otlp(document))] == [schema, schema]
    [again] = import_bytes(json.dumps(exported_without(document, convention)).encode(), "t.json")
    assert again.document.schema == schema
    assert again.document.to_json()["schema"] == schema
    assert without_audit(again.document) == messages
    assert again.document.solution["output"] == output


def test_a_schema_cut_on_the_way_is_refused_naming_it() -> None:
    """A `contextdeck.schema` that no longer parses (an attribute length limit cut it) is refused, naming the span and
    the attribute, as any JSON attribute is: read as none, the document would come back without its schema."""
    exported, span_id, _ = cut_in_export("Weather?", SCHEMA, {"answer": "Sunny."}, "contextdeck.schema", 10)
    with pytest.raises(TraceError, match=f"^t.json: span {span_id}: contextdeck.schema is not JSON .*: its value "
                                         "was cut short"):
        import_bytes(exported, "t.json")


def test_a_delegated_call_and_a_failed_call_are_spans_of_their_own() -> None:
    """A delegated call is an `invoke_agent` span under its turn; a failed call's span has an error status."""
    from contextdeck.engine import Context, Document, Shape

    call_ok = {"_tool": "summarise", "text": "t", "_outputPath": "†state.summary"}
    call_bad = {"_tool": "lookup", "id": 7, "_outputPath": "†state.row"}
    context = [
        {"type": "tool", "tool": {"summarise": {"_delegate": "Summariser", "type": "object"},
                                  "lookup": {"type": "object"}}},
        {"role": "user", "content": "Go"},
        {"type": "plan", "plan": [call_ok, call_bad]},
        {"type": "state", "data": {"summary": "short"}, "_call": call_ok, "_outputPath": "†state.summary",
         "_date": "2026-01-02T03:04:05Z", "_run": {"call": 0, "started": "2026-01-02T03:04:04Z", "seconds": 1.0}},
        {"type": "error", "data": {"call": call_bad, "error": {"type": "KeyError", "message": "no row 7"}},
         "_run": {"call": 1}},
    ]
    document = Document(Context(context), Shape.ARRAY)
    spans = parse_otlp(export_otlp(document, name="d")).resource_spans[0].scope_spans[0].spans
    by_name = {item.name: item for item in spans}
    assert list(by_name) == ["invoke_agent d", "chat", "invoke_agent Summariser", "execute_tool lookup"]
    delegated, failed = by_name["invoke_agent Summariser"], by_name["execute_tool lookup"]
    assert delegated.parent_span_id == by_name["chat"].span_id == failed.parent_span_id
    assert span_attributes(delegated)["gen_ai.agent.name"] == "Summariser"
    assert span_attributes(delegated)["gen_ai.tool.call.result"] == "short"
    assert delegated.end_time_unix_nano - delegated.start_time_unix_nano == 10**9
    assert failed.status.code == 2
    assert failed.status.message == "no row 7"
    assert span_attributes(failed)["error.type"] == "KeyError"  # GenAI: conditionally required on a failure
    assert "error.type" not in span_attributes(delegated)


def test_an_export_follows_the_genai_conventions_required_attributes_and_span_kinds() -> None:
    """GenAI semantic conventions: model and agent spans name their provider (`gen_ai.provider.name`, required);
    a turn says the output type it asked for (the solution schema: `json`); a tool span its tool's type; model
    spans are CLIENT, agent and tool spans INTERNAL (format.md §10)."""
    from contextdeck.engine import Context, Document, Shape

    call = {"_tool": "lookup", "id": 7, "_outputPath": "†row"}
    document = Document(Context([{"role": "user", "content": "Go"}, {"type": "plan", "plan": [call]},
                                 {"type": "data", "kind": "row", "data": 1, "_call": call, "_outputPath": "†row",
                                  "_run": {"call": 0}}]), Shape.ARRAY)
    spans = parse_otlp(export_otlp(document, name="d")).resource_spans[0].scope_spans[0].spans
    by_name = {item.name: (item.kind, span_attributes(item)) for item in spans}
    assert list(by_name) == ["invoke_agent d", "chat", "execute_tool lookup"]
    (agent_kind, agent), (chat_kind, chat), (tool_kind, tool) = by_name.values()
    assert (agent_kind, chat_kind, tool_kind) == (1, 3, 1)  # INTERNAL, CLIENT, INTERNAL
    assert agent["gen_ai.provider.name"] == chat["gen_ai.provider.name"] == "openai"
    assert chat["gen_ai.output.type"] == "json"
    assert (tool["gen_ai.tool.type"], tool["gen_ai.tool.name"]) == ("function", "lookup")


def test_otlp_json_lines_and_an_array_log_are_read() -> None:
    """The collector's file exporter writes one request a line; a log may be a JSON array of exchanges."""
    trace = genai_trace()
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines = [{"resourceSpans": [{"scopeSpans": [{"spans": spans[:2]}]}]},
             {"resourceSpans": [{"scopeSpans": [{"spans": spans[2:4]}]}]}]
    [imported] = import_bytes(jsonl(lines), "trace.jsonl")
    assert imported.format == "otlp"
    assert imported.turns == 2
    [log] = import_bytes(json.dumps(log_lines()).encode(), "run.json")
    assert log.format == "openai-log"
    assert log.turns == 3


def test_the_export_carries_openinference_attributes_too() -> None:
    """Phoenix and Arize read OpenInference: each turn is an LLM span with its flattened messages, model,
    tokens, tool calls and tools; each call a TOOL span; the root an AGENT span."""
    document = import_bytes(jsonl(log_lines()), "run.jsonl")[0].document
    spans = parse_otlp(export_otlp(document)).resource_spans[0].scope_spans[0].spans
    root, turn, tool = (span_attributes(spans[n]) for n in range(3))
    assert root["openinference.span.kind"] == "AGENT"
    assert turn["openinference.span.kind"] == "LLM"
    assert turn["llm.model_name"] == "gpt-4o-mini-2024-07-18"
    assert turn["llm.token_count.total"] == 59
    assert turn["llm.input_messages.0.message.role"] == "system"
    assert turn["llm.input_messages.1.message.content"] == "Weather in Paris and Rome?"
    assert turn["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "get_weather"
    assert json.loads(turn["llm.tools.0.tool.json_schema"])["function"]["name"] == "get_weather"
    assert tool["openinference.span.kind"] == "TOOL"
    assert json.loads(tool["output.value"]) == {"sky": "sunny"}


def sub_agents_trace() -> dict[str, Any]:
    """An orchestrator that plans and a researcher under it that searches: two conversations in one trace."""
    def chat(span_id: str, parent: str, start: int, system: str, reply: dict[str, Any]) -> dict[str, Any]:
        item = span(span_id, "chat m", start, start + 10, attrs(
            gen_ai__operation__name="chat", gen_ai__system_instructions=[{"type": "text", "content": system}],
            gen_ai__input__messages=[{"role": "user", "parts": [{"type": "text", "content": "Go"}]}],
            gen_ai__output__messages=[reply]))
        item["parentSpanId"] = parent
        return item

    def agent(span_id: str, parent: str | None, name: str) -> dict[str, Any]:
        item = span(span_id, f"invoke_agent {name}", 0, 100, attrs(
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name=name))
        if parent is None:
            del item["parentSpanId"]
        else:
            item["parentSpanId"] = parent
        return item

    ask = {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "search",
                                           "arguments": {"q": "x"}}]}
    tool = span("4444444444444444", "execute_tool search", 40, 45, attrs(
        gen_ai__operation__name="execute_tool", gen_ai__tool__name="search", gen_ai__tool__call__id="t1",
        gen_ai__tool__call__result="found"))
    tool["parentSpanId"] = "2222222222222222"
    spans = [agent("1111111111111111", None, "orchestrator"), agent("2222222222222222", "1111111111111111",
                                                                     "researcher"),
             chat("aaaaaaaaaaaaaaaa", "1111111111111111", 10, "You plan.",
                  {"role": "assistant", "parts": [{"type": "text", "content": "Planned."}]}),
             chat("bbbbbbbbbbbbbbbb", "2222222222222222", 30, "You research.", ask), tool]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def test_sub_agents_with_conversations_of_their_own_are_one_context_each() -> None:
    """A trace whose agent spans hold conversations that do not line up as one: a context per agent,
    labelled TRACE/AGENT, each with its own tool runs."""
    imported = import_bytes(json.dumps(sub_agents_trace()).encode(), "t.json")
    assert [item.label for item in imported] == [f"{TRACE}/orchestrator", f"{TRACE}/researcher"]
    assert [item.name for item in imported] == ["orchestrator", "researcher"]
    planner, researcher = (item.document for item in imported)
    assert planner.solution["output"] == "Planned."
    assert researcher.context.messages[-1]["data"] == "found"
    assert researcher.context.messages[-1]["_call"] == {"_tool": "search", "q": "x", "_outputPath": "†t1"}


@pytest.mark.parametrize("make", [genai_trace, sub_agents_trace])
def test_spans_in_any_order_import_as_they_ran(make: Any) -> None:
    """An exporter writes spans as they end, in batches: the same trace with its spans in another order in the file
    gives the same contexts, in the same order (the agents' by their first turn), with the same warnings."""
    trace = make()
    spans = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    seen = [(item.label, item.document.to_json(), item.warnings)
            for item in import_bytes(json.dumps(trace).encode(), "t.json")]
    for order in (spans[::-1], spans[1:] + spans[:1], sorted(spans, key=lambda item: item["spanId"], reverse=True)):
        trace["resourceSpans"][0]["scopeSpans"][0]["spans"] = order
        assert [(item.label, item.document.to_json(), item.warnings)
                for item in import_bytes(json.dumps(trace).encode(), "t.json")] == seen


def test_a_problem_in_a_model_span_is_named_once() -> None:
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span("1111111111111111", "chat m", 0, 10, attrs(gen_ai__operation__name="chat"))]}]}]}
    with pytest.raises(TraceError) as caught:
        import_bytes(json.dumps(trace).encode(), "t.json")
    assert str(caught.value).startswith("t.json: span 1111111111111111: the model span records no messages")


def test_an_import_is_named_by_its_agent_else_by_its_file() -> None:
    """An untitled import exported as `untitled`: each context is called by the agent its trace names (the outermost
    agent span's `gen_ai.agent.name`, or its span's name), else by its file's name without the trace suffixes; an
    export of it names its root span so, and imported again it is called the same."""
    assert import_bytes(jsonl(log_lines()), "weather.openai.jsonl.gz")[0].name == "weather"
    assert import_bytes(json.dumps(exchange()).encode(), "/tmp/ex.json")[0].name == "ex"
    assert import_bytes(json.dumps(genai_trace()).encode(), "run.otlp.json")[0].name == "run"
    for name in ("run.ndjson", "run.txt", "run.log.gz"):
        assert import_bytes(jsonl(log_lines()), name)[0].name == "run"
    trace = genai_trace()
    agent = span("9999999999999999", "invoke_agent Weather Bot", 0, 1000, attrs(
        gen_ai__operation__name="invoke_agent", gen_ai__agent__name="Weather Bot"))
    del agent["parentSpanId"]
    inner = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for item in inner:
        item["parentSpanId"] = "9999999999999999"
    inner.insert(0, agent)
    [first] = import_bytes(json.dumps(trace).encode(), "run.otlp.json")
    assert first.name == "Weather Bot"
    exported = export_otlp(first.document, name=first.name)
    assert exported["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] == "invoke_agent Weather Bot"
    [again] = import_bytes(json.dumps(exported).encode(), "untitled.otlp.json")
    assert again.name == "Weather Bot"
    assert again.document.to_json() == first.document.to_json()


class _Stop(BaseException):
    """What a step raises to end an import (the window's `Stopped`, which no `except Exception` takes)."""


@pytest.mark.parametrize(("raw", "name", "units"), [
    (jsonl(log_lines()), "run.jsonl", 9),  # each of 3 lines read, 3 exchanges made of them, 3 lined up
    (json.dumps(genai_trace()).encode(), "trace.json", 9),  # each of 5 spans, 2 model spans' exchanges, 2 lined up
    (json.dumps(export_otlp(import_bytes(jsonl(log_lines()), "run.jsonl")[0].document, carry_document=False))
     .encode(), "export.json", 12),  # 6 spans (the root, 3 turns, 2 calls), 3 turns' exchanges, 3 lined up
], ids=["log", "otlp", "export"])
def test_an_imports_step_comes_at_each_unit_and_what_it_raises_ends_the_import_there(
        raw: bytes, name: str, units: int) -> None:
    """`step` is called as each line, span and exchange is read; an exception it raises ends the import at that
    unit, as it is (no `except` of the import's takes it): no later unit is read."""
    whole: list[int] = []
    import_bytes(raw, name, step=lambda: whole.append(1))
    assert len(whole) == units
    for stop_at in range(1, units + 1):
        called: list[int] = []

        def step(stop_at: int = stop_at, called: list[int] = called) -> None:
            called.append(1)
            if len(called) == stop_at:
                raise _Stop

        with pytest.raises(_Stop):
            import_bytes(raw, name, step=step)
        assert len(called) == stop_at


def test_an_import_steps_through_each_file_before_reading_it(tmp_path: Path) -> None:
    """`import_trace` calls `step` before it reads each file: a Cancel between files reads none of the next."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(jsonl(log_lines()))
    called: list[int] = []
    import_trace(path, step=lambda: called.append(1))
    assert len(called) == 1 + 9
