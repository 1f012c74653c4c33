"""Stepping for the debugger (SPEC 6.11): step, run, breakpoints, the approval hook, statuses, events, reset."""

import asyncio
import json

import pytest

from contextdeck.engine import (
    Activities,
    Context,
    Decision,
    Execution,
    Status,
    fixed_clock,
)

CLOCK = fixed_clock("2026-01-01T00:00:00Z")


def latent(tool, path, value, **extra):
    return {"_tool": tool, "_outputPath": path, "_output": value, **extra}


CALLS = [latent("a", "†state.a", 1), latent("b", "†state.b", 2), latent("c", "†state.c", "†state.a")]


def make(calls=CALLS, messages=(), **options):
    context = Context(list(messages))
    return context, Execution(context, {"calls": calls}, clock=CLOCK, **options)


def test_step_runs_the_next_ready_call_in_plan_order() -> None:
    """Each step runs one call: the first ready one in plan order."""
    context, execution = make()
    assert [asyncio.run(execution.step()).ran for _ in range(4)] == [(0,), (1,), (2,), ()]
    assert context.resolve("†state.c").value == 1


def test_step_can_run_a_chosen_ready_call() -> None:
    """`step(index)` runs that call; a call that is not ready is refused with its status."""
    _, execution = make()
    assert asyncio.run(execution.step(1)).ran == (1,)
    with pytest.raises(ValueError, match="call 2 is not ready: it is blocked"):
        asyncio.run(execution.step(2))


def test_statuses_follow_the_run() -> None:
    """Before running, calls are ready or blocked on the path they read; after, done."""
    _, execution = make()
    assert [s.status for s in execution.states] == [Status.READY, Status.READY, Status.BLOCKED]
    assert execution.state(2).waiting_for == ("†state.a",)
    asyncio.run(execution.run())
    assert [s.status for s in execution.states] == [Status.DONE] * 3


def test_status_changed_signal_reports_each_transition() -> None:
    """status_changed fires for running, done, and the blocked call becoming ready."""
    _, execution = make()
    seen = []
    execution.status_changed.connect(lambda state: seen.append((state.index, state.status)))
    asyncio.run(execution.step())
    assert seen == [(0, Status.RUNNING), (0, Status.DONE), (2, Status.READY)]


def test_a_status_change_is_a_new_state_whose_fields_are_in_slots() -> None:
    """Each change makes a new state: one handed out before stays as it was. A state holds its fields in slots
    (an execution keeps one a call) and equals a state made with the same fields."""
    _, execution = make()
    seen = []
    execution.status_changed.connect(seen.append)
    before = execution.state(0)
    asyncio.run(execution.step())
    running, done = seen[0], seen[1]
    assert (before.status, running.status, done.status) == (Status.READY, Status.RUNNING, Status.DONE)
    assert done is execution.state(0)
    assert (before.outputs, running.outputs) == ((), ())
    assert done.outputs == (execution.context.id_at(0),)
    assert not hasattr(done, "__dict__")
    assert done == type(done)(0, CALLS[0], Status.DONE, (), None, done.outputs, 1)


def test_tick_finished_signal_carries_the_report() -> None:
    """tick_finished fires once per run with what it ran."""
    _, execution = make()
    reports = []
    execution.tick_finished.connect(reports.append)
    asyncio.run(execution.run())
    assert [r.ran for r in reports] == [(0, 1, 2)]


def test_breakpoint_by_tool_name_stops_before_the_call() -> None:
    """run() stops before a call of a breakpoint tool, and continuing runs it."""
    _context, execution = make(breakpoints={"b"})
    report = asyncio.run(execution.run())
    assert (report.stopped_at, execution.state(1).status) == (1, Status.READY)
    assert execution.state(0).status is Status.DONE
    report = asyncio.run(execution.run())
    assert report.stopped_at is None
    assert [s.status for s in execution.states] == [Status.DONE] * 3


def test_breakpoint_by_call_index() -> None:
    """A breakpoint on call 2 stops when it becomes ready; a step passes it."""
    _, execution = make(breakpoints={2})
    assert asyncio.run(execution.run()).stopped_at == 2
    assert asyncio.run(execution.step()).ran == (2,)


def test_approval_hook_is_asked_before_each_call() -> None:
    """The hook sees each call's state before it runs; approving lets it run."""
    asked = []

    def hook(state):
        asked.append((state.index, state.status))
        return Decision.approve()

    _, execution = make(approver=hook)
    asyncio.run(execution.run())
    assert asked == [(0, Status.READY), (1, Status.READY), (2, Status.READY)]


def test_async_approval_hook_is_awaited() -> None:
    """The hook may be a coroutine (a dialog in the GUI)."""
    async def hook(state):
        return Decision.reject("not now") if state.index == 1 else Decision.approve()

    _context, execution = make(approver=hook)
    asyncio.run(execution.run())
    assert execution.state(1).error == {"type": "rejected", "message": "not now"}


def test_rejection_becomes_an_error_message() -> None:
    """A rejected call fails with a `rejected` error message and writes nothing."""
    def hook(state):
        return Decision.reject("too risky") if state.index == 0 else Decision.approve()

    context, execution = make(approver=hook)
    asyncio.run(execution.run())
    errors = [m for m in context.messages if m["type"] == "error"]
    assert errors[0]["data"] == {"call": CALLS[0], "error": {"type": "rejected", "message": "too risky"}}
    assert not context.resolve("†state.a").found
    assert execution.state(2).status is Status.BLOCKED  # its writer failed


def test_edited_call_runs_and_is_recorded_as_edited() -> None:
    """Editing a call in the hook runs the edit; `_call` on the output is the edited call."""
    edited = latent("a", "†state.a", 100)
    context, execution = make(approver=lambda state: Decision.edit(edited) if state.index == 0 else Decision.approve())
    asyncio.run(execution.run())
    assert context.resolve("†state.c").value == 100
    assert context[0]["_call"] == edited
    assert execution.state(0).call == edited


def test_an_edit_is_the_documents_own_copy() -> None:
    """The hook's edit is copied as it is taken: the hook changing its object after changes nothing the document
    holds, and the document still saves (no cycle of the caller's in it)."""
    edited = latent("a", "†state.a", [100])
    context, execution = make(approver=lambda state: Decision.edit(edited) if state.index == 0 else Decision.approve())
    asyncio.run(execution.run())
    edited["_outputPath"] = "†state.elsewhere"
    edited["_output"].append(edited)
    assert context[0]["_call"] == latent("a", "†state.a", [100])
    assert execution.state(0).call == latent("a", "†state.a", [100])
    assert json.loads(json.dumps(context.messages))[0]["_call"]["_outputPath"] == "†state.a"


def test_an_edit_no_document_could_hold_fails_its_call() -> None:
    """An edit that contains itself fails the call, naming where: the document never holds it."""
    edited = latent("a", "†state.a", [])
    edited["_output"].append(edited)
    context, execution = make(approver=lambda state: Decision.edit(edited) if state.index == 0 else Decision.approve())
    asyncio.run(execution.run())
    assert execution.state(0).error == {
        "type": "approval", "message": "the approval hook's edit cannot be written at $._output[0]: "
                                       "the value contains itself (a cycle)"}
    assert not context.resolve("†state.a").found


def test_edit_that_breaks_the_call_fails_it() -> None:
    """An edit with a malformed output path is a structural error of that call."""
    def hook(state):
        return Decision.edit(latent("a", "†", 1)) if state.index == 0 else Decision.approve()

    _, execution = make(approver=hook)
    asyncio.run(execution.run())
    assert execution.state(0).status is Status.FAILED


def test_hook_answering_nonsense_fails_the_call() -> None:
    """A hook that returns something other than a Decision fails the call with a clear error."""
    _, execution = make(approver=lambda state: "yes")
    asyncio.run(execution.run())
    assert execution.state(0).error["type"] == "approval"


def test_latent_call_without_output_waits_for_one_from_outside() -> None:
    """A latent call with a destination and no `_output` waits; provide_output writes it and unblocks readers."""
    calls = [{"_tool": "ask", "_outputPath": "†state.answer"}, latent("use", "†state.used", "†state.answer")]
    context, execution = make(calls)
    report = asyncio.run(execution.run())
    assert report.waiting_for_output == (0,)
    assert execution.state(0).status is Status.WAITING_FOR_OUTPUT
    state = execution.provide_output(0, {"text": "42"})
    assert state.status is Status.DONE
    assert context[0]["_outputPath"] == "†state.answer"
    asyncio.run(execution.run())
    assert context.resolve("†state.used.text").value == "42"


def test_provide_output_refuses_calls_that_do_not_wait() -> None:
    """Only a latent call with a destination and no `_output` takes an output from outside; JSON only."""
    calls = [{"_tool": "ask", "_outputPath": "†state.answer"}]
    _, execution = make(calls)
    with pytest.raises(ValueError, match="not JSON"):
        execution.provide_output(0, object())
    _, other = make()
    with pytest.raises(ValueError, match="does not wait for an output"):
        other.provide_output(0, 1)


def test_output_given_before_the_call_is_ready_is_used_later() -> None:
    """A provided output is kept until the call can read its parameters, then written by the scheduler."""
    calls = [{"_tool": "ask", "q": "†input.q", "_outputPath": "†state.answer"}]
    context, execution = make(calls)
    execution.provide_output(0, "later")
    assert execution.state(0).status is Status.BLOCKED
    context.append({"type": "input", "input": {"q": "?"}})
    asyncio.run(execution.run())
    assert context.resolve("†state.answer").value == "later"


def test_reset_after_restoring_the_context_runs_again() -> None:
    """Restoring the messages and calling reset() gives a fresh run with the same result."""
    context, execution = make(timer=lambda: 0.0)
    asyncio.run(execution.run())
    first = context.messages
    while len(context):
        context.remove(len(context) - 1)
    execution.reset()
    assert [s.status for s in execution.states] == [Status.READY, Status.READY, Status.BLOCKED]
    asyncio.run(execution.run())
    assert context.messages == first


def test_two_executions_share_no_state() -> None:
    """A second execution over a copy of the messages is independent of the first."""
    _one, first = make()
    two, second = make()
    asyncio.run(first.run())
    assert len(two) == 0
    assert [s.status for s in second.states] == [Status.READY, Status.READY, Status.BLOCKED]
    assert Activities().names == []


def test_a_tick_cannot_start_inside_another() -> None:
    """Starting run() while a tick runs is refused, not interleaved."""
    _, execution = make()

    async def scenario():
        first = asyncio.ensure_future(execution.run())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="already running"):
            await execution.run()
        await first

    asyncio.run(scenario())


def test_reset_is_refused_during_a_tick() -> None:
    """reset() while a tick runs raises instead of mixing two runs."""
    _, execution = make()

    async def scenario():
        tick = asyncio.ensure_future(execution.run())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="cannot reset during a tick"):
            execution.reset()
        await tick

    asyncio.run(scenario())


def test_fire_and_forget_of_a_reset_run_reports_nothing() -> None:
    """A background run cancelled by reset() does not touch the fresh states."""
    async def notify(*args):
        await asyncio.Event().wait()

    activities = Activities()
    activities.add(notify, "notify")
    context = Context([])
    execution = Execution(context, {"calls": [{"_tool": "notify"}]}, activities=activities)
    finished = []
    execution.background_finished.connect(finished.append)

    async def scenario():
        await execution.run()
        execution.reset()
        for _ in range(3):
            await asyncio.sleep(0)

    asyncio.run(scenario())
    assert finished == []
    state = execution.state(0)  # its run record says it started: it is not started again
    assert (state.status, state.finished) == (Status.FIRE_AND_FORGET, True)


def test_latent_output_with_a_type_key_is_a_plain_value() -> None:
    """Only an activity's result can be a message: a latent `_output` with `type` is written as a value."""
    context, execution = make([latent("t", "†state.a", {"type": "premium"})])
    asyncio.run(execution.run())
    assert context.resolve("†state.a").value == {"type": "premium"}


def test_finished_says_when_nothing_is_left_to_do() -> None:
    """`finished` is false while calls are ready and true once the plan has run."""
    _, execution = make()
    assert not execution.finished
    asyncio.run(execution.run())
    assert execution.finished


@pytest.mark.parametrize(("breakpoints", "error", "named"), [
    ([1.5], TypeError, "breakpoint 1.5"),
    ([True], TypeError, "breakpoint True"),
    ([None], TypeError, "breakpoint None"),
    ("b", TypeError, "got str 'b'"),
    (2, TypeError, "got int 2"),
    ([3], ValueError, "breakpoint 3 is not a call of the plan: its calls are 0 to 2"),
    ([-1], ValueError, "breakpoint -1"),
])
def test_a_breakpoint_that_could_never_stop_a_run_is_refused(breakpoints, error, named) -> None:
    """`breakpoints=[1.5]` was accepted and never stopped anything (nor did 3 of three calls, or "b" taken as a
    letter): each is refused with an error naming it."""
    with pytest.raises(error, match=named.replace("(", r"\(")):
        make(breakpoints=breakpoints)


def test_breakpoints_may_mix_indices_and_tool_names() -> None:
    """A call's index and a tool's name, from any iterable, are kept as a set."""
    _, execution = make(breakpoints=iter([2, "b", 2]))
    assert execution.breakpoints == {2, "b"}
