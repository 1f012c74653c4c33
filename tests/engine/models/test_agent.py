"""`run_agent`: the loop driven by a model, as one function (document + model + options -> how it ended)."""

import asyncio
import json
import re

import pytest

from contextdeck.engine import (
    MISSING,
    Asker,
    Ending,
    Endpoint,
    LoopStatus,
    Provider,
    fixed_clock,
    parse_document,
    run_agent,
    turn_record,
)
from fake_llm import Reply, ticket_document

CLASSIFY = {"_tool": "classify", "ticket": "†input.ticket", "_outputPath": "†state.label"}


def asker(url: str) -> Asker:
    return Asker(Provider(Endpoint(url, "fake-small", max_retries=0)))


def request(**extra):
    value = ticket_document()
    value["context"] = value["context"][:3]  # no plan: the model gives the first turn
    return parse_document(json.dumps({**value, **extra}))


def test_turns_and_latent_answers_come_from_the_model(fake_llm) -> None:
    """Turn 1 plans a latent call, which the model answers inside the tick; turn 2 gives the output."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [CLASSIFY], "output": None}),
                  Reply.json({"result": {"label": "damage"}}),
                  Reply.json({"meta": {}, "calls": [], "output": {"reply": "Sorry about the kettle."}}))
    document = request()
    run = asyncio.run(run_agent(document, asker(fake_llm.url), clock=fixed_clock("2026-03-01T10:00:00Z")))
    assert (run.status, run.ending, run.output) == (LoopStatus.FINISHED, Ending.FINISHED,
                                                    {"reply": "Sorry about the kettle."})
    assert (run.ticks, run.calls, run.tally.asked, run.tally.replayed, run.tally.tokens) == (2, 1, 3, 0, 54)
    written = [m for m in document.context if m.get("_outputPath") == "†state.label"]
    assert written[0]["data"] == {"label": {"label": "damage"}}
    assert written[0]["_run"]["model"]["replayed"] is False
    assert document.solution["output"] == {"reply": "Sorry about the kettle."}
    record = turn_record(document)  # the final turn: the second, given by the model
    assert (record.number, record.audit["model"], record.audit["usage"]["total_tokens"]) == (2, "fake-small", 18)


def test_without_model_turns_the_loop_waits_after_the_documents_turn(fake_llm) -> None:
    """`model_gives_turns=False`: the document's own turn runs (its latent call answered), then it waits."""
    fake_llm.push(Reply.json({"result": {"label": "other"}}))
    document = request(solution={"calls": [CLASSIFY], "output": None})
    run = asyncio.run(run_agent(document, asker(fake_llm.url), model_gives_turns=False))
    assert (run.status, run.ending, run.output) == (LoopStatus.WAITING_FOR_TURN, Ending.WAITING, MISSING)
    assert (run.ticks, run.calls, run.tally.asked) == (1, 1, 1)


def test_a_refused_latent_answer_is_counted(fake_llm) -> None:
    """A latent answer that does not validate fails its call (an error message) and the run ends refused."""
    fake_llm.push(Reply(content="no idea"))
    document = request(solution={"calls": [CLASSIFY], "output": None})
    run = asyncio.run(run_agent(document, asker(fake_llm.url), model_gives_turns=False))
    assert (run.ending, run.refused_outputs) == (Ending.REFUSED, (0,))
    assert document.context[len(document.context) - 1]["data"]["error"]["type"] == "modelOutput"


def test_latent_calls_of_a_group_are_each_answered_once(fake_llm) -> None:
    """The members of an `all` group wait for their outputs together: each is asked once, then the group runs."""
    fake_llm.answer = lambda body: Reply.json({"result": {"label": "damage"}})
    group = {"all": [{**CLASSIFY, "_outputPath": "†state.a"}, {**CLASSIFY, "_outputPath": "†state.b"}]}
    document = request(solution={"calls": [group], "output": None})
    run = asyncio.run(run_agent(document, asker(fake_llm.url), model_gives_turns=False))
    assert (run.calls, run.tally.asked, len(fake_llm.completions)) == (2, 2, 2)
    assert [m["data"] for m in document.context if m.get("_outputPath")] == [
        {"a": {"label": "damage"}}, {"b": {"label": "damage"}}]


def test_turns_or_max_ticks_of_the_wrong_type_are_refused_before_the_document_changes() -> None:
    """`turns=[...]` (a list is no turn source: a turn may itself be a list of calls) and `max_ticks=None` are a
    TypeError saying what they got, raised before the loop makes the document's own turn a plan message."""
    turn = {"calls": [], "output": {"reply": "ok"}}
    for options, reason in [({"turns": [turn]}, "turns must be a function of the document, or None; got list"),
                            ({"turns": lambda document: turn, "max_ticks": None},
                             "max_ticks must be an integer, got NoneType None")]:
        document = request(solution={"calls": [CLASSIFY], "output": None})
        before = document.context.messages
        with pytest.raises(TypeError, match=re.escape(reason)):
            asyncio.run(run_agent(document, None, **options))
        assert document.context.messages == before


def test_a_document_whose_advice_is_refused_is_a_refused_run() -> None:
    """017: a solution whose advice `validate` calls an error is refused before anything runs, as `run` refuses
    it: `run_agent` says so as a refused run, never raises (so `eval` reports a refused case, not a crash)."""
    critic = {"type": "advisor", "id": "critic", "on": "request",
              "schema": {"type": "object", "properties": {"thought": {"$ref": "https://example.com/remote"}}}}
    document = parse_document(json.dumps({"context": [critic, {"type": "state", "state": {}}], "solution": {
        "advisors": [{"id": "critic", "thought": 5}], "calls": [], "output": "done"}}))
    run = asyncio.run(run_agent(document, None))
    assert run.ending is Ending.REFUSED
    assert run.ticks == 0
    assert run.output is MISSING
    assert "cannot be resolved" in str(run.refused)

