"""Where a document's run starts, and what the request before it is (docs/experiments.md): what each case of an
experiment runs from; and how a summary counts the cases."""

from __future__ import annotations

import asyncio

from contextdeck.engine import Context, Document, Loop, LoopStatus, Shape, ends_at_once, run_agent, summarise
from contextdeck.engine.experiments import request_of, run_start


def test_a_summary_counts_each_way_a_case_ended_apart_from_its_expectations() -> None:
    """`summarise` (what eval prints and the Experiments pane shows) counts the runs that finished, waited and
    failed by their status, and the expectations met and missed by `passed`: a case may finish and miss."""
    summary = summarise([{"status": "finished", "passed": True, "tokens": 5}, {"status": "finished", "passed": False},
                         {"status": "waiting"}, {"status": "waiting", "asked": 2}, {"status": "failed"}])
    assert (summary.cases, summary.finished, summary.waiting, summary.failed_runs) == (5, 2, 2, 1)
    assert (summary.passed, summary.failed, summary.tokens, summary.asked) == (1, 1, 5, 2)


def test_a_run_is_its_first_record_or_model_turn_on_and_a_plan_typed_by_hand_stays_the_requests() -> None:
    """The run a document holds starts at its first message carrying `_run` (an output, an error, a run record) or
    its first model turn (a plan carrying `_model`); a plan without `_model` before it is the request's (one typed by
    hand cannot be told from it), and so is a solution without `_model`."""
    request = [{"type": "text", "role": "system", "text": "Add."}, {"type": "input", "input": {"a": 1}}]
    model_plan = {"type": "plan", "plan": [{"_tool": "add", "_outputPath": "†state.sum"}], "_model": {"model": "m"}}
    output = {"type": "data", "kind": "state", "data": {"sum": 1}, "_call": {"_tool": "add"}, "_run": {"call": 0}}
    bare = Document(Context([*request, model_plan, output, {"type": "text", "text": "typed after"}]))
    assert run_start(bare.context) == 2
    assert request_of(bare).context.messages == request
    by_hand = {"type": "plan", "plan": [{"_tool": "add", "_outputPath": "†state.sum"}]}
    saved = Document(Context([*request, by_hand, output]), Shape.REQUEST, solution={"calls": [], "output": None})
    assert request_of(saved).context.messages == [*request, by_hand]
    assert request_of(saved).solution == {"calls": [], "output": None}
    answered = Document(Context(request), Shape.REQUEST, solution={"calls": [], "output": 3, "_model": {}})
    assert (run_start(answered.context), request_of(answered).solution) == (None, None)
    untouched = Document(Context([*request, by_hand]), Shape.REQUEST, solution={"calls": [], "output": 3})
    assert run_start(untouched.context) is None
    assert request_of(untouched) is untouched


def test_the_meta_message_a_model_turn_appends_is_the_runs_and_no_case_requests_it() -> None:
    """016: a turn giving the identity back bumped appends a meta message just before its plan; that meta is the
    run's (docs/experiments.md: everything from the run's first message on), so `request_of` leaves it out."""
    request = [{"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3"}}, {"type": "input", "input": {"a": 1}}]
    document = Document(Context([dict(message) for message in request]))
    call = {"_tool": "think", "_output": 1, "_outputPath": "†state.a"}
    Loop(document).take_turn({"meta": {"path": "/g/1", "version": "1.2.4"}, "calls": [call], "output": None},
                             {"model": "m"})
    assert [message["type"] for message in document.context.messages] == ["meta", "input", "meta", "plan"]
    assert run_start(document.context) == 2
    assert request_of(document).context.messages == request
    assert document.context[2]["_model"] == document.context[3]["_model"] == {"model": "m"}


def test_a_final_answer_that_bumps_the_identity_leaves_its_marked_meta_to_the_run() -> None:
    """A final answer with no calls appends no plan, only the meta message of the identity it gave back (016): that
    message carries the turn's `_model`, so it starts the run and no case's request holds it."""
    request = [{"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3"}}, {"type": "input", "input": {"a": 1}}]
    document = Document(Context([dict(message) for message in request]), Shape.REQUEST)
    Loop(document).take_turn({"meta": {"path": "/g/1", "version": "1.2.4"}, "calls": [], "output": 3},
                             {"model": "m"})
    assert [message["type"] for message in document.context.messages] == ["meta", "input", "meta"]
    assert run_start(document.context) == 2
    assert request_of(document).context.messages == request
    assert request_of(document).solution is None


def test_a_meta_typed_before_the_first_model_plan_is_the_requests_where_turns_mark_their_meta() -> None:
    """A meta message without `_model` just before the first model plan is the request's (the person's) once the
    document's turns mark theirs; a document none of whose meta messages carries `_model` (written before the mark)
    reads it as that turn's, as before."""
    typed = {"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3"}}
    request = [{"type": "input", "input": {"a": 1}}, typed]
    document = Document(Context([dict(message) for message in request]))
    loop = Loop(document)
    call = {"_tool": "think", "_output": 1, "_outputPath": "†state.a"}
    loop.take_turn({"meta": typed["meta"], "calls": [call], "output": None}, {"model": "m"})  # the identity as is
    asyncio.run(loop.run(max_ticks=1))
    loop.take_turn({"meta": {"path": "/g/1", "version": "1.2.4"}, "calls": [], "output": 2}, {"model": "m"})
    kinds = [message.get("kind", message["type"]) for message in document.context.messages]
    assert kinds == ["input", "meta", "plan", "state", "meta", "plan"]
    assert ["_model" in document.context[index] for index in (1, 4)] == [False, True]
    assert (run_start(document.context), request_of(document).context.messages) == (2, request)
    unmarked = Document(Context([dict(message) for message in request] + [
        {"type": "plan", "plan": [call], "_model": {"model": "m"}}]))
    assert (run_start(unmarked.context), request_of(unmarked).context.messages) == (1, request[:1])


GREETING = {"type": "object", "properties": {"greeting": {"type": "string"}}, "required": ["greeting"]}
GREET = [{"type": "input", "input": {"name": "Ann"}},
         {"type": "tool", "tool": {"greet": {"type": "object", "properties": {"name": {"type": "string"},
                                                                              "_output": {"type": "string"}}}}}]
GREET_CALL = {"_tool": "greet", "name": "†input.name", "_outputPath": "†state.g", "_output": "hello"}


def greeter(solution: object, *after: dict[str, object]) -> Document:
    """The greeter request (a latent `greet` tool, its output given), with `after` appended and `solution`."""
    messages = [dict(message) for message in (*GREET, *after)]
    return Document(Context(messages), Shape.REQUEST, GREETING, solution)


def test_cases_end_at_once_only_when_the_requests_turn_has_an_output_and_no_call_to_run() -> None:
    """`ends_at_once` (what the Experiments pane asks about and eval's summary says) names the output a case ends
    with before anything runs: a turn typed by hand with no calls and an output the schema accepts, kept in a
    request a model's run followed too; a turn with calls runs them first, a model's turn is the run's, a refused
    output and a plan's output a user's text answers end nothing. Each verdict is what running the request does."""
    model_plan = {"type": "plan", "plan": [GREET_CALL], "_model": {"model": "m"}}
    record = {"type": "data", "kind": "state", "data": {"g": "hello"}, "_call": GREET_CALL, "_run": {"call": 0}}
    typed = {"calls": [], "output": {"greeting": "hi"}}
    plan = {"type": "plan", "plan": [], "output": {"greeting": "hi"}}
    documents = {
        "calls to run": (lambda: greeter({"calls": [GREET_CALL], "output": {"greeting": "†state.g"}}), None),
        "typed by hand": (lambda: greeter(typed), {"greeting": "hi"}),
        "refused by the schema": (lambda: greeter({"calls": [], "output": {"greeting": 5}}), None),
        "a model's": (lambda: greeter({**typed, "_model": {"model": "m"}}), None),
        "typed after a model's run": (lambda: greeter(typed, model_plan, record), {"greeting": "hi"}),
        "a plan's": (lambda: Document(Context([*GREET, plan]), schema=GREETING), {"greeting": "hi"}),
        "a plan's, answered": (lambda: Document(Context([*GREET, plan, {"type": "text", "role": "user", "text": "?"}]),
                                                schema=GREETING), None),
    }
    for name, (made, output) in documents.items():
        assert ends_at_once(made()) == output, name
        run = asyncio.run(run_agent(request_of(made()), max_ticks=2))
        assert (run.status is LoopStatus.FINISHED and run.ticks == 1 and run.calls == 0) is (output is not None), name
