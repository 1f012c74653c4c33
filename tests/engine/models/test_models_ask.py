"""Asking the model for a latent call and for the whole request; validation, branches, record and replay."""

import asyncio
import dataclasses
import json
import re

import pytest

from contextdeck.engine import (
    STRATEGIES,
    Activities,
    Asker,
    Cassette,
    Endpoint,
    Execution,
    ModelError,
    Provider,
    Status,
    answer_call,
    apply_solution,
    ask_request,
    call_prompt,
    compose_request,
    content_shown,
    fixed_clock,
    parse_document,
    render,
    request_prompt,
    run_with_model,
    solution_messages,
)
from contextdeck.engine.document._json import dumps
from fake_llm import TICKET_TOOL, Reply, ticket_document

NOW = "2026-03-01T10:00:00Z"


def document(value=None, **call):
    return parse_document(json.dumps(value or ticket_document(**call)).encode())


def asker(server, cassette=None, mode="record", **options):
    endpoint = Endpoint(server.url, "fake-small", **{"max_retries": 0, "timeout": 2.0, **options})
    return Asker(Provider(endpoint), cassette or Cassette(), mode)


def closing(model, work):
    """Run `work` (a coroutine) and close the model's client on the same loop."""
    async def go():
        try:
            return await work
        finally:
            await model.provider.close()

    return asyncio.run(go())


def run(doc, model):
    execution = Execution(doc, clock=fixed_clock(NOW))
    return execution, closing(model, run_with_model(execution, model))


def asked(doc, model):
    return closing(model, ask_request(doc, model))


# -- the prompt -------------------------------------------------------------------------------------


def test_the_prompt_for_a_call_is_the_context_then_the_tool_the_call_and_the_result_schema() -> None:
    """What the model sees as of the call, then one message with the tool, the resolved call and `_output`."""
    doc = document()
    execution = Execution(doc)
    prompt = call_prompt(doc.context, execution.plans[0])
    seen = [{"role": m.role, "content": m.text} for m in render(doc.context)]
    assert list(prompt.messages[:-1]) == seen
    last = prompt.messages[-1]
    assert last["role"] == "user"
    text = last["content"]
    assert "Carry out call 0 (classify) yourself" in text
    assert "Tool `classify`: Classify a support ticket." in text
    assert '"ticket": "My kettle arrived broken"' in text  # the reference resolved
    assert text.endswith(dumps(TICKET_TOOL["properties"]["_output"]))  # the `_output` schema, in words too
    assert prompt.schema == {
        "type": "object", "properties": {"result": TICKET_TOOL["properties"]["_output"]},
        "required": ["result"], "additionalProperties": False}
    assert prompt.branches == ("†state.label",)


def test_a_latent_calls_scopes_focus_the_model_on_their_kinds() -> None:
    """015: for a latent call, `_scopes` are a nudge, not a filter: the prompt keeps the whole context and asks
    the model to focus on the scoped kinds; a call without scopes is asked nothing of the kind."""
    doc = document()
    plan = Execution(doc).plans[0]
    scoped = call_prompt(doc.context, dataclasses.replace(plan, scopes=("input", "state")))
    assert scoped.messages[:-1] == call_prompt(doc.context, plan).messages[:-1]
    assert "Focus on ¶input, ¶state in the context (the call's _scopes); the rest is background." in (
        scoped.messages[-1]["content"])
    assert "Focus on" not in call_prompt(doc.context, plan).messages[-1]["content"]


def test_a_call_to_a_or_b_lets_the_model_name_the_branch() -> None:
    """`a || b`: the answer has a `branch` whose enum lists the alternatives."""
    doc = document(output_path="†state.label || †state.unsure")
    prompt = call_prompt(doc.context, Execution(doc).plans[0])
    assert prompt.schema["properties"]["branch"] == {"type": "string", "enum": ["†state.label", "†state.unsure"]}
    assert prompt.schema["required"] == ["branch", "result"]


def test_each_way_of_asking_for_structure_makes_its_body() -> None:
    """json_schema → response_format; tool → one forced function; prompt → the schema in a last message."""
    doc = document()
    prompt = call_prompt(doc.context, Execution(doc).plans[0])
    by_format = prompt.body("json_schema")
    assert by_format["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "result", "schema": prompt.schema}}
    by_tool = prompt.body("tool")
    assert by_tool["tools"][0]["function"]["parameters"] == prompt.schema
    assert by_tool["tool_choice"] == {"type": "function", "function": {"name": "result"}}
    by_words = prompt.body("prompt")
    assert by_words["messages"][:-1] == list(prompt.messages)
    assert by_words["messages"][-1]["content"].startswith("Answer with one JSON object that matches")
    with pytest.raises(ValueError, match="unknown way"):
        prompt.body("telepathy")


def test_a_presets_tool_settings_are_not_sent_without_the_tools_they_are_about() -> None:
    """`tool_choice` and `parallel_tool_calls` (an imported agent's preset keeps them) are refused by the API
    in a body without `tools`: no way of asking sends them; the other settings go out."""
    doc = document()
    prompt = call_prompt(doc.context, Execution(doc).plans[0])
    prompt = dataclasses.replace(prompt, config={"temperature": 0.2, "parallel_tool_calls": True,
                                                 "tool_choice": "auto"})
    for strategy in STRATEGIES:
        body = prompt.body(strategy)
        assert body["temperature"] == 0.2
        assert "parallel_tool_calls" not in body
        assert body.get("tool_choice") in (None, {"type": "function", "function": {"name": "result"}})


def test_the_whole_request_is_exactly_the_composed_request() -> None:
    """The Vessel's prompt is `compose_request`'s messages and schema; activities remove a tool's `_output`."""
    doc = document()
    explicit = Activities()
    explicit.add(lambda call, tool, context: None, "classify")
    for activities in (None, explicit):
        prompt = request_prompt(doc.context, doc.schema, activities=activities)
        composed = compose_request(doc.context, doc.schema, activities=activities).to_json()
        assert list(prompt.messages) == composed["messages"]
        assert prompt.schema == composed["schema"]
        assert prompt.name == "solution"
    latent = request_prompt(doc.context, doc.schema).schema["properties"]["calls"]["items"]
    assert "_output" in json.dumps(latent)
    coded = request_prompt(doc.context, doc.schema, activities=explicit).schema["properties"]["calls"]["items"]
    assert "_output" not in json.dumps(coded)


PHOTO = [{"type": "text", "text": "The kettle as it came:"},
         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}]


def test_a_message_of_a_text_and_an_image_is_sent_to_the_model_as_its_parts(fake_llm) -> None:
    """The model is sent an image as an image: a user message of content parts goes as those parts, in the whole
    request (`ask`, `run --llm`, the window's Ask) and in a latent call's prompt, as `export --format openai` writes
    it; the LLM view and `render` show the same message as its JSON text, and the prompt dialog reads it so."""
    value = ticket_document()
    value["context"].insert(2, {"role": "user", "content": PHOTO})
    doc = document(value)
    [shown] = [message for message in render(doc.context) if message.sources == (2,)]
    assert json.loads(shown.text) == PHOTO
    request = request_prompt(doc.context, doc.schema)
    assert request.messages[2] == {"role": "user", "content": PHOTO}
    assert json.loads(content_shown(request.messages[2])) == PHOTO
    assert content_shown(request.messages[0]) == "You sort support tickets."
    call = call_prompt(doc.context, Execution(doc).plans[0])
    assert call.messages[2] == {"role": "user", "content": PHOTO}
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    _, progress = run(doc, asker(fake_llm))
    assert progress.failure is None
    assert fake_llm.completions[0]["messages"][2] == {"role": "user", "content": PHOTO}


def test_content_parts_the_api_would_refuse_are_sent_as_the_json_the_model_is_shown() -> None:
    """A list with a part the chat completions API does not take for its role (a system message's image, a GenAI
    blob, an empty list) is sent as its JSON text, never as a body the API refuses."""
    from contextdeck.engine import Context

    for message in ({"role": "system", "content": PHOTO}, {"role": "user", "content": [{"type": "blob"}]},
                    {"role": "user", "content": []}):
        [sent] = request_prompt(Context([message])).messages
        assert sent == {"role": message["role"], "content": render(Context([message]))[0].text}
        assert isinstance(sent["content"], str)


# -- a latent call ----------------------------------------------------------------------------------


def test_the_model_answers_a_latent_call_and_the_result_is_written_with_its_exchange(fake_llm) -> None:
    """The validated result is written at the destination; `_run.model` records digest, model, usage, latency."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    doc = document()
    execution, progress = run(doc, asker(fake_llm))
    assert (progress.ran, progress.failure) == (1, None)
    assert execution.state(0).status is Status.DONE
    assert doc.context.resolve("†state.label").value == {"label": "damage"}
    written = doc.context[len(doc.context) - 1]
    model = written["_run"]["model"]
    assert model["model"] == "fake-small"
    assert model["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    assert model["digest"].startswith("sha256:")
    assert model["replayed"] is False
    assert model["endpoint"] == fake_llm.url
    assert fake_llm.completions[0]["response_format"]["json_schema"]["name"] == "result"


def test_the_exchange_never_reaches_the_model_again() -> None:
    """`_run.model` is audit metadata: what the model sees next time has no trace of it."""
    doc = document()
    doc.context.append({"type": "data", "kind": "state", "data": {"label": 1},
                        "_run": {"model": {"digest": "sha256:x"}}})
    assert "sha256" not in "".join(m.text for m in render(doc.context))


def test_an_answer_that_does_not_validate_becomes_an_error_message_with_the_raw_reply(fake_llm) -> None:
    """A reply that breaks `_output` is not written: the call fails with `modelOutput` and the reply attached."""
    fake_llm.push(Reply.json({"result": {"label": "fire"}}))
    doc = document()
    before = len(doc.context)
    execution, _ = run(doc, asker(fake_llm))
    assert execution.state(0).status is Status.FAILED
    assert not doc.context.resolve("†state.label").found
    error = doc.context[before]["data"]["error"]
    assert error["type"] == "modelOutput"
    assert "$.result.label: 'fire' is not one of ['damage', 'other']" in error["message"]
    assert "call 0 (classify)" in error["message"]
    assert error["reply"] == '{"result": {"label": "fire"}}'


def test_a_reply_that_is_not_json_keeps_the_reply_too(fake_llm) -> None:
    """Prose instead of JSON: a `modelOutput` error naming the reason, with the prose kept."""
    fake_llm.push(Reply(content="I think it is damage."))
    doc = document()
    run(doc, asker(fake_llm))
    error = doc.context[len(doc.context) - 1]["data"]["error"]
    assert "the answer is not JSON" in error["message"]
    assert error["reply"] == "I think it is damage."


def test_a_reply_without_text_is_said_to_be_empty(fake_llm) -> None:
    """A reply whose content is null (and no tool call): the answer is said to be empty, not "not JSON
    (Expecting value (line 1, column 1))" over an empty reply."""
    fake_llm.push(Reply(content=None))
    doc = document()
    run(doc, asker(fake_llm))
    error = doc.context[len(doc.context) - 1]["data"]["error"]
    assert "the answer is empty: the model gave no text" in error["message"]
    assert "not JSON" not in error["message"]


def test_the_model_may_choose_the_second_branch(fake_llm) -> None:
    """For `a || b` the model's `branch` decides where the result goes."""
    fake_llm.push(Reply.json({"branch": "†state.unsure", "result": {"label": "other"}}))
    doc = document(output_path="†state.label || †state.unsure")
    run(doc, asker(fake_llm))
    assert doc.context.resolve("†state.unsure").value == {"label": "other"}
    assert not doc.context.resolve("†state.label").found
    assert doc.context[len(doc.context) - 1]["_outputPath"] == "†state.unsure"


def test_a_server_without_response_format_gets_a_forced_tool_call(fake_llm) -> None:
    """`auto`: a 400 to the response format is followed by a forced tool call, whose arguments are the answer."""
    fake_llm.push(Reply.error(400, "response_format is not supported"),
                  Reply(tool=("result", '{"result": {"label": "damage"}}')))
    doc = document()
    run(doc, asker(fake_llm))
    assert doc.context.resolve("†state.label").value == {"label": "damage"}
    first, second = fake_llm.completions
    assert "response_format" in first
    assert "tools" not in first
    assert second["tool_choice"] == {"type": "function", "function": {"name": "result"}}
    assert doc.context[len(doc.context) - 1]["_run"]["model"]["strategy"] == "tool"


def test_asking_in_words_accepts_a_fenced_json_reply(fake_llm) -> None:
    """`prompt`: the schema is asked for in words; a ```json fence around the reply is taken off."""
    fake_llm.push(Reply(content='```json\n{"result": {"label": "other"}}\n```'))
    doc = document()
    run(doc, asker(fake_llm, structured="prompt"))
    assert doc.context.resolve("†state.label").value == {"label": "other"}
    assert "response_format" not in fake_llm.completions[0]


def test_an_endpoint_that_fails_leaves_the_call_waiting_and_appends_nothing(fake_llm) -> None:
    """HTTP 500: the failure names the endpoint and the call; the call still waits; the context is unchanged."""
    fake_llm.push(Reply.error(500, "overloaded"))
    doc = document()
    before = list(doc.context.messages)
    execution, progress = run(doc, asker(fake_llm))
    assert progress.failure is not None
    assert str(progress.failure) == (
        f"call 0 (classify): {fake_llm.url} (model fake-small): the server answered HTTP 500: overloaded")
    assert execution.state(0).status is Status.WAITING_FOR_OUTPUT
    assert doc.context.messages == before


# -- record and replay ------------------------------------------------------------------------------


def test_record_then_replay_makes_no_request(fake_llm, tmp_path) -> None:
    """The second run with the same inputs replays from the cassette file: same output, no request."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    path = tmp_path / "doc.json.models.jsonl"
    first = document()
    run(first, asker(fake_llm, Cassette.open(path)))
    assert len(fake_llm.completions) == 1
    recorded = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["response"]["text"] for r in recorded] == ['{"result": {"label": "damage"}}']
    assert recorded[0]["request"]["messages"][-1]["content"].startswith("Carry out call 0")
    second = document()
    run(second, asker(fake_llm, Cassette.open(path), mode="replay"))
    assert len(fake_llm.completions) == 1
    replayed = second.context[len(second.context) - 1]
    assert replayed["data"] == first.context[len(first.context) - 1]["data"]
    assert replayed["_run"]["model"]["replayed"] is True
    assert replayed["_run"]["model"]["usage"] == recorded[0]["usage"]


def test_changed_inputs_ask_again(fake_llm) -> None:
    """A different ticket is a different question: it is asked, and recorded beside the first."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}), Reply.json({"result": {"label": "other"}}))
    cassette = Cassette()
    run(document(), asker(fake_llm, cassette))
    changed = ticket_document()
    changed["context"][1]["input"]["ticket"] = "Where is my invoice?"
    doc = document(changed)
    run(doc, asker(fake_llm, cassette))
    assert len(fake_llm.completions) == 2
    assert len(cassette.exchanges) == 2
    assert doc.context.resolve("†state.label").value == {"label": "other"}


def test_replay_without_a_recording_is_an_error_and_asks_nobody(fake_llm) -> None:
    """`replay` never asks: an unrecorded question fails with kind `replay`; the call keeps waiting."""
    execution, progress = run(document(), asker(fake_llm, mode="replay"))
    assert progress.failure is not None
    assert progress.failure.kind == "replay"
    assert "nothing is recorded for this prompt" in str(progress.failure)
    assert fake_llm.requests == []
    assert execution.state(0).status is Status.WAITING_FOR_OUTPUT


def test_live_asks_again_and_records_the_newer_answer(fake_llm) -> None:
    """`live` ignores the recording, asks, and the newer exchange replaces the older one."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}), Reply.json({"result": {"label": "other"}}))
    cassette = Cassette()
    run(document(), asker(fake_llm, cassette))
    doc = document()
    run(doc, asker(fake_llm, cassette, mode="live"))
    assert len(fake_llm.completions) == 2
    assert doc.context.resolve("†state.label").value == {"label": "other"}
    (only,) = cassette.exchanges.values()
    assert only["response"]["text"] == '{"result": {"label": "other"}}'


def test_a_broken_cassette_line_is_named(tmp_path) -> None:
    """A cassette line that is not an exchange is a DocumentError with its line number."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"digest": "sha256:a", "response": {"text": "1"}}\n[1]\n')
    with pytest.raises(ValueError, match=r"c.jsonl:2: expected an exchange"):
        Cassette.open(path)


def test_a_recording_appends_one_line_and_the_latest_line_of_a_digest_wins(tmp_path) -> None:
    """Each answer is one appended line (the lines before stay as they were); a digest recorded again is
    read back as its latest answer."""
    path = tmp_path / "c.jsonl"
    cassette = Cassette.open(path)
    cassette.put({"digest": "sha256:a", "response": {"text": "1"}, "date": "d"})
    cassette.put({"digest": "sha256:b", "response": {"text": "2"}, "date": "d"})
    first = path.read_bytes()
    cassette.put({"digest": "sha256:a", "response": {"text": "3"}, "date": "d"})
    assert path.read_bytes().startswith(first)
    assert len(path.read_text().splitlines()) == 3
    assert Cassette.open(path).get("sha256:a")["response"]["text"] == "3"


def test_a_last_line_cut_short_by_a_crash_is_left_out_and_the_next_answer_starts_a_line(tmp_path) -> None:
    """A torn final line (no newline, not JSON) loses only that answer; the next recording cuts it off and
    starts a line of its own, so the file reads back whole."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"digest": "sha256:a", "response": {"text": "1"}}\n{"digest": "sha256:b", "resp')
    cassette = Cassette.open(path)
    assert list(cassette.exchanges) == ["sha256:a"]
    cassette.put({"digest": "sha256:c", "response": {"text": "3"}, "date": "d"})
    assert list(Cassette.open(path).exchanges) == ["sha256:a", "sha256:c"]


def test_an_answer_holding_a_unicode_line_separator_reads_back(tmp_path) -> None:
    """A reply with U+2028, U+2029 or U+0085 in it (models write them) is recorded as it is: the cassette reads back
    whole, each exchange on its own line (such a line was cut in two, and every later run stopped at it)."""
    path = tmp_path / "c.jsonl"
    cassette = Cassette.open(path)
    odd = "one\u2028two\u2029three\x85four"
    cassette.put({"digest": "sha256:a", "response": {"text": odd}, "date": "d"})
    cassette.put({"digest": "sha256:b", "response": {"text": "2"}, "date": "d"})
    again = Cassette.open(path)
    assert list(again.exchanges) == ["sha256:a", "sha256:b"]
    assert again.get("sha256:a")["response"]["text"] == odd


def test_a_last_line_cut_inside_a_character_is_left_out_too(tmp_path) -> None:
    """A crash may cut the last line inside a character's UTF-8 bytes (a † is three): that answer is left out as
    any torn line is, not an error that stops every later run."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"digest": "sha256:a", "response": {"text": "1"}}\n{"digest": "sha256:b", "q": "\xe2\x80')
    assert list(Cassette.open(path).exchanges) == ["sha256:a"]


def test_the_refund_example_runs_with_the_model_for_every_latent_call(fake_llm, examples) -> None:
    """The refund plan with its fixed outputs removed: the model answers each latent call, in plan order."""
    raw = json.loads((examples / "refund_workflow.json").read_text())
    plan = raw["context"][-1]["plan"]
    for call in plan:
        call.pop("_output", None)
    raw["context"][2]["data"]["approvals"] = {"refund": "maya"}
    answers = iter([{"id": "A-1042", "total": 89.5}, "order looked up", {"eligible": True}, {"refundId": "R-1"}])
    fake_llm.answer = lambda body: Reply.json({"result": next(answers)})
    doc = document(raw)
    execution, progress = run(doc, asker(fake_llm))
    assert progress.failure is None
    assert [s.status for s in execution.states][:4] == [Status.DONE] * 4
    assert doc.context.resolve("†state.refund").value == {"refundId": "R-1"}
    assert doc.context.resolve("†state.log").value == ["order looked up"]
    assert len(fake_llm.completions) == 4


# -- the whole request ------------------------------------------------------------------------------


def test_asking_the_whole_request_puts_the_calls_in_the_solution(fake_llm) -> None:
    """A saved request gets the model's answer as its `solution`, with `_model`; the next run runs those calls."""
    calls = [{"_tool": "classify", "ticket": "†input.ticket", "_outputPath": "†state.label",
              "_output": {"label": "damage"}}]
    fake_llm.push(Reply.json({"meta": {}, "calls": calls, "output": None}))
    doc = document()
    answer = asked(doc, asker(fake_llm))
    assert apply_solution(doc, answer) == "the request's solution"
    assert doc.solution["calls"] == calls
    assert doc.solution["output"] is None
    assert doc.solution["_model"]["model"] == "fake-small"
    sent = fake_llm.completions[0]
    assert sent["response_format"]["json_schema"]["name"] == "solution"
    assert sent["messages"] == [{"role": m.role, "content": m.text} for m in render(doc.context)]
    execution = Execution(doc, clock=fixed_clock(NOW))
    asyncio.run(execution.run())
    assert doc.context.resolve("†state.label").value == {"label": "damage"}


@pytest.mark.parametrize("streamed", [False, True])
def test_a_refusal_is_said_with_its_words_and_replayed_the_same(fake_llm, streamed) -> None:
    """Under structured outputs a model may refuse: no content, its words in `refusal`. The answer is refused
    saying so, with those words as the reply (not "not JSON" of an empty text), and replays the same."""
    fake_llm.push(Reply(refusal="I can't help with that."))
    doc, cassette = document(), Cassette()
    model = asker(fake_llm, cassette)
    with pytest.raises(ModelError) as caught:
        closing(model, ask_request(doc, model, on_delta=(lambda piece: None) if streamed else None))
    assert (caught.value.kind, caught.value.reply) == ("invalid", "I can't help with that.")
    assert "the model refused: \"I can't help with that.\"" in str(caught.value)
    replaying = asker(fake_llm, cassette)
    with pytest.raises(ModelError) as again:
        closing(replaying, ask_request(doc, replaying))
    assert again.value.reply == "I can't help with that."
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("streamed", [False, True])
def test_an_answer_of_several_tool_calls_is_refused_naming_them_and_replayed_the_same(fake_llm, streamed) -> None:
    """The asks force one function: an answer of several calls is refused (none is taken, the document is not
    changed) naming the count and the functions, the calls as the reply; the cassette keeps them, a replay
    refuses the same."""
    first, second = json.dumps({"result": {"label": "damage"}}), json.dumps({"result": {"label": "other"}})
    fake_llm.push(Reply(tool=("result", first), more_tools=(("result", second),)))
    doc, cassette = document(), Cassette()
    before = len(doc.context)
    model = asker(fake_llm, cassette, structured="tool")
    execution = Execution(doc, clock=fixed_clock(NOW))
    closing(model, execution.run())
    prompt = call_prompt(execution.context, execution.plans[0])
    closing(model, answer_call(execution, 0, model, (lambda piece: None) if streamed else None))
    assert execution.state(0).status is Status.FAILED
    assert not doc.context.resolve("†state.label").found
    error = doc.context[before]["data"]["error"]
    expected = "the answer holds 2 tool calls (result, result) where one was asked for: none of them is taken"
    assert (error["type"], error["message"]) == ("modelOutput", f"call 0 (classify): {fake_llm.url} (model "
                                                 f"fake-small): {expected}")
    assert json.loads(error["reply"]) == [
        {"name": "result", "arguments": first}, {"name": "result", "arguments": second}]
    replaying = asker(fake_llm, cassette, "replay", structured="tool")
    with pytest.raises(ModelError) as again:
        closing(replaying, replaying.ask(prompt))
    assert expected in str(again.value)
    assert len(fake_llm.requests) == 1


def test_a_bare_context_gets_the_calls_as_a_plan_message(fake_llm) -> None:
    """Without a solution slot the calls become a plan message at the end, carrying the final output too."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"reply": "done"}}))
    doc = parse_document(json.dumps(ticket_document()["context"]).encode())
    answer = asked(doc, asker(fake_llm))
    where = apply_solution(doc, answer)
    last = doc.context[len(doc.context) - 1]
    assert where == f"a plan message (message {len(doc.context) - 1})"
    assert (last["type"], last["plan"], last["output"]) == ("plan", [], {"reply": "done"})


def test_a_bare_contexts_plan_follows_the_meta_the_model_gave_back(fake_llm) -> None:
    """016: the model gives the request's identity back, its version bumped; a bare context gets it as a meta
    message before the plan message, so the next request sees it (a saved request keeps it in its solution)."""
    fake_llm.push(Reply.json({"meta": {"path": "/tickets", "version": "2"}, "calls": [], "output": None}))
    doc = parse_document(json.dumps(ticket_document()["context"]).encode())
    before = len(doc.context)
    apply_solution(doc, asked(doc, asker(fake_llm)))
    assert [message["type"] for message in doc.context.messages[before:]] == ["meta", "plan"]
    meta, plan = doc.context.messages[before:]
    assert meta["_model"] == plan["_model"]  # the turn's own, as its plan (format.md "Ticks and turns")
    assert doc.context.resolve("†meta").value == {"path": "/tickets", "version": "2"}


def test_the_messages_a_solution_appends_are_given_without_changing_the_document(fake_llm) -> None:
    """`solution_messages` (what the window's Ask appends in one step) gives the meta and plan messages
    `apply_solution` appends, and leaves the document as it was."""
    fake_llm.push(Reply.json({"meta": {"path": "/tickets", "version": "2"}, "calls": [], "output": {"reply": "done"}}))
    doc = parse_document(json.dumps(ticket_document()["context"]).encode())
    before = doc.context.messages[:]
    answer = asked(doc, asker(fake_llm))
    messages = solution_messages(doc, answer)
    assert doc.context.messages == before
    assert [message["type"] for message in messages] == ["meta", "plan"]
    assert messages[1]["output"] == {"reply": "done"}
    apply_solution(doc, answer)
    assert doc.context.messages[len(before):] == messages


def test_a_solution_that_breaks_the_schema_is_refused_with_the_reply(fake_llm) -> None:
    """A call to a tool the request does not offer is refused; the document is not changed."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [{"_tool": "launchRockets"}], "output": None}))
    doc = document()
    with pytest.raises(ModelError) as caught:
        asked(doc, asker(fake_llm))
    assert caught.value.kind == "invalid"
    assert caught.value.subject == "the request"
    assert "launchRockets" in (caught.value.reply or "")
    assert doc.solution is None


# -- undo, then ask again -----------------------------------------------------------------------------


def answered_then_undone(fake_llm, cassette):
    """The ticket's call answered by the model through `cassette`, then its output removed (an undo)."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    doc = document()
    before = len(doc.context)
    execution, _ = run(doc, asker(fake_llm, cassette))
    assert execution.state(0).status is Status.DONE
    doc.context.remove(before)
    execution.refresh()
    return doc, execution


def test_an_undone_model_answer_waits_for_its_output_again(fake_llm) -> None:
    """Undoing a model's answer puts the call back to waiting for its output: nothing writes the old answer."""
    doc, execution = answered_then_undone(fake_llm, Cassette())
    assert execution.state(0).status is Status.WAITING_FOR_OUTPUT
    report = asyncio.run(execution.run())
    assert report.ran == ()
    assert not doc.context.resolve("†state.label").found


def test_asking_again_after_an_undo_replays_and_says_so(fake_llm) -> None:
    """In `record` mode the next answer after an undo comes from the cassette, marked replayed, unasked."""
    doc, execution = answered_then_undone(fake_llm, cassette := Cassette())
    model = asker(fake_llm, cassette)
    closing(model, run_with_model(execution, model))
    assert len(fake_llm.completions) == 1
    written = doc.context[len(doc.context) - 1]
    assert written["data"] == {"label": {"label": "damage"}}
    assert written["_run"]["model"]["replayed"] is True


def test_asking_live_after_an_undo_with_the_server_down_writes_nothing(fake_llm) -> None:
    """`live` asks again: with the server answering errors the call keeps waiting and nothing is written."""
    doc, execution = answered_then_undone(fake_llm, cassette := Cassette())
    before = list(doc.context.messages)
    fake_llm.push(Reply.error(503, "down"))
    model = asker(fake_llm, cassette, mode="live")
    progress = closing(model, run_with_model(execution, model))
    assert progress.failure is not None
    assert len(fake_llm.completions) == 2
    assert doc.context.messages == before
    assert execution.state(0).status is Status.WAITING_FOR_OUTPUT


@pytest.mark.parametrize(("line", "said"), [
    ('{"digest": "sha256:a", "response": "hi"}', "c.jsonl:2: the exchange's 'response' is a string, not an object"),
    ('{"digest": "sha256:a"}', "c.jsonl:2: the exchange has no 'response'"),
    ('{"digest": "sha256:a", "response": {"text": 5}}', "c.jsonl:2: the exchange's 'response.text' is a number"),
    ("not json", "c.jsonl:2:1: Expecting value"),
])
def test_a_cassette_line_that_cannot_be_replayed_is_named_when_it_is_read(tmp_path, line, said) -> None:
    """An exchange a replay could not use (a response that is no object, a text that is no string) or a line
    that is not JSON is named with its line (and column) when the cassette is opened: before, a replay of it
    stopped the run with an AttributeError, or refused the model's "answer" as if the model had given it."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"digest": "sha256:b", "response": {"text": "1"}}\n' + line + "\n")
    with pytest.raises(ValueError, match=re.escape(said)):
        Cassette.open(path)


def test_a_latent_calls_result_schema_keeps_its_tools_defs_at_the_top() -> None:
    """The tool's `$defs` that `_output` refers to are the answer schema's, at its top: the refs resolve there."""
    from jsonschema import Draft202012Validator

    tool = {**TICKET_TOOL, "$defs": {"label": {"enum": ["damage", "other"]}},
            "properties": {**TICKET_TOOL["properties"], "_output": {
                "type": "object", "properties": {"label": {"$ref": "#/$defs/label"}}, "required": ["label"]}}}
    value = ticket_document()
    value["context"][2] = {"type": "tool", "tool": {"classify": tool}}
    doc = document(value)
    prompt = call_prompt(doc.context, Execution(doc).plans[0])
    assert prompt.schema["$defs"] == {"result.label": {"enum": ["damage", "other"]}}
    validator = Draft202012Validator(prompt.schema)
    assert list(validator.iter_errors({"result": {"label": "damage"}})) == []
    assert [e.message for e in validator.iter_errors({"result": {"label": "x"}})] == [
        "'x' is not one of ['damage', 'other']"]
