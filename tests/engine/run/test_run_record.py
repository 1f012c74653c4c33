"""The document is the record of the run (docs/format.md §8): what ran is read from the context itself."""

from __future__ import annotations

import asyncio
import copy
import gc
from typing import Any

import pytest
from exec_support import CLOCK, registry
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context, Document, Execution, Shape, Status, fork, read_record
from contextdeck.engine.calls._outputs import error_message, run_record_message
from contextdeck.engine.calls._record import CallTexts, RecordReader, call_texts
from contextdeck.engine.document._json import BATCH_YOUNG
from contextdeck.engine.run import _execution as execution_module
from contextdeck.engine.run._breakpoints import condition_holds

INPUT = {"type": "input", "input": {"x": 1}}


def latent(index: int, reads: str | None = None, path: str | None = None) -> dict[str, Any]:
    output: dict[str, Any] = {"n": index}
    if reads is not None:
        output["seen"] = reads
    return {"_tool": f"t{index}", "_outputPath": path or f"†state.p{index}", "_output": output}


def run_to_end(execution: Execution) -> None:
    async def drive() -> None:
        while (await execution.run()).ran:
            pass
        await execution.drain()

    asyncio.run(drive())


def fold(context: Context) -> dict[Any, Any]:
    return {(kind, instance): context.resolve(f"†{kind}", instance).value for kind, instance in context.identities()}


def test_a_second_execution_over_the_output_runs_nothing_and_appends_nothing() -> None:
    """Reopening a finished run: every call is done from its record, nothing runs, nothing is appended."""
    calls = [latent(0, "†input.x"), latent(1, "†state.p0"), {"_tool": "think", "_output": "a thought"}]
    context = Context([INPUT, {"type": "plan", "plan": calls}])
    run_to_end(Execution(context, clock=CLOCK))
    after = context.messages
    again = Execution(Context(after), clock=CLOCK)
    assert [s.status for s in again.states] == [Status.DONE] * 3
    assert again.ready() == []
    assert again.finished
    report = asyncio.run(again.run())
    assert (report.ran, len(again.context)) == ((), len(after))


def test_only_the_calls_without_a_record_run_on_resume() -> None:
    """A document where the first call has run: a new execution runs only the others, once each."""
    invoked: list[str] = []

    def counted(name: str) -> Any:
        return lambda call, tool, context: invoked.append(name) or name

    calls = [{"_tool": "a", "_outputPath": "†state.a"}, {"_tool": "b", "_outputPath": "†state.b", "after": "†state.a"}]
    context = Context([{"type": "plan", "plan": calls}])
    activities = registry(a=counted("a"), b=counted("b"))
    asyncio.run(Execution(context, activities=activities, clock=CLOCK).step())
    assert invoked == ["a"]
    resumed = Execution(Context(context.messages), activities=activities, clock=CLOCK)
    assert [s.status for s in resumed.states] == [Status.DONE, Status.READY]
    run_to_end(resumed)
    assert invoked == ["a", "b"]
    assert resumed.context.resolve("†state.b").value == "b"


def test_undoing_a_step_makes_the_call_pending_and_it_runs_again() -> None:
    """Removing a step's output (an undo) is seen at the next step: the call is pending and runs again."""
    context = Context([INPUT, {"type": "plan", "plan": [latent(0, "†input.x"), latent(1, "†state.p0")]}])
    execution = Execution(context, clock=CLOCK)
    asyncio.run(execution.step())
    assert execution.state(0).status is Status.DONE
    context.remove(len(context) - 1)
    execution.refresh()
    assert [s.status for s in execution.states] == [Status.READY, Status.BLOCKED]
    assert asyncio.run(execution.step()).ran == (0,)
    assert context.resolve("†state.p0").value == {"n": 0, "seen": 1}


def test_an_edit_that_unblocks_a_call_is_seen_at_once() -> None:
    """An approval added to the state mid-run: refresh() (and the next step) find the call ready."""
    call = {"_tool": "pay", "_outputPath": "†state.paid", "_output": "†state.approvals.pay"}
    context = Context([{"type": "plan", "plan": [call]}])
    execution = Execution(context, clock=CLOCK)
    assert execution.state(0).status is Status.AWAITING_APPROVAL
    context.append({"type": "state", "data": {"approvals": {"pay": "lead"}}})
    assert asyncio.run(execution.step()).ran == (0,)
    assert context.resolve("†state.paid").value == "lead"


def test_records_written_before_the_run_key_still_count() -> None:
    """An output message from before `_run` existed (only `_call`) marks its call done; an unrelated one does not."""
    calls = [latent(0), latent(1)]
    old_output = {"type": "data", "kind": "state", "data": {"p0": {"n": 0}}, "_call": calls[0],
                  "_date": "2025-01-01T00:00:00Z", "_outputPath": "†state.p0"}
    stranger = {**old_output, "_call": {"_tool": "elsewhere", "_outputPath": "†state.p0"}}
    execution = Execution(Context([{"type": "plan", "plan": calls}, old_output, stranger]), clock=CLOCK)
    assert [s.status for s in execution.states] == [Status.DONE, Status.READY]


def test_a_record_written_elsewhere_with_the_latent_result_in_its_call_counts() -> None:
    """A document written by another tool puts the `_output` a latent call received into `_call`; that output
    still marks its plan call (which has no `_output`) done, and a call that reads it is not blocked."""
    calls = [{"_tool": "detect", "_outputPath": "†state.language"},
             {"_tool": "check", "language": "†state.language", "_outputPath": "†state.ok"}]
    output = {"type": "state", "data": {"language": "fr"}, "_outputPath": "†state.language",
              "_call": {**calls[0], "_output": "fr"}, "_date": "2026-11-20T09:00:00Z"}
    execution = Execution(Context([{"type": "plan", "plan": calls}, output]), clock=CLOCK)
    assert execution.states[0].status == Status.DONE
    assert execution.states[1].status != Status.BLOCKED


def test_records_before_the_plan_message_belong_to_an_earlier_plan() -> None:
    """A new plan message starts a new record: an identical call in it has not run yet."""
    call = latent(0)
    first = Context([{"type": "plan", "plan": [call]}])
    run_to_end(Execution(first, clock=CLOCK))
    second = Context([*first.messages, {"type": "plan", "plan": [call]}])
    assert Execution(second, clock=CLOCK).state(0).status is Status.READY


def test_identical_calls_are_told_apart_by_position_even_after_an_insert() -> None:
    """Two identical calls each have their record; inserting a call before them keeps both done."""
    same = {"_tool": "log", "_outputPath": "†state.log", "_outputMethod": "push", "_output": "hi"}
    context = Context([{"type": "plan", "plan": [same, copy.deepcopy(same)]}])
    execution = Execution(context, clock=CLOCK)
    asyncio.run(execution.step())
    assert [s.status for s in execution.states] == [Status.DONE, Status.READY]
    plan = {"type": "plan", "plan": [latent(9), same, copy.deepcopy(same)]}
    context.replace(0, plan)
    moved = Execution(context, clock=CLOCK)
    assert [s.status for s in moved.states] == [Status.READY, Status.DONE, Status.READY]


def test_a_call_edited_after_it_ran_is_done_and_stale() -> None:
    """Editing a finished call in the plan does not make it run again by itself: it is done, and stale."""
    context = Context([INPUT, {"type": "plan", "plan": [latent(0, "†input.x")]}])
    run_to_end(Execution(context, clock=CLOCK))
    edited = latent(0, "†input.x")
    edited["_output"]["extra"] = True
    context.replace(1, {"type": "plan", "plan": [edited]})
    execution = Execution(context, clock=CLOCK)
    assert execution.state(0).status is Status.DONE
    [stale] = execution.stale()
    assert (stale.index, stale.edited, stale.changed) == (0, True, ("_output",))


def test_a_failed_call_is_recorded_and_not_retried_by_itself() -> None:
    """An activity error is the call's outcome: a second execution reports it failed and does not run it."""
    attempts: list[int] = []

    def boom(call, tool, context):
        attempts.append(1)
        raise ValueError("no")

    context = Context([{"type": "plan", "plan": [{"_tool": "boom", "_outputPath": "†state.x"}]}])
    activities = registry(boom=boom)
    run_to_end(Execution(context, activities=activities, clock=CLOCK))
    again = Execution(context, activities=activities, clock=CLOCK)
    assert again.state(0).status is Status.FAILED
    assert again.state(0).error == {"type": "ValueError", "message": "no"}
    run_to_end(again)
    assert attempts == [1]
    assert read_record(context, again.calls, 0).of(0) is not None


def test_a_plan_entry_that_is_no_call_is_recorded_by_its_error_and_not_refused_again() -> None:
    """A plan entry that is no object (`1`, `"x"`, `null`, a group's member) fails once: its error message, which
    quotes it as written, is its record, so running the document again appends nothing."""
    plan = [1, "x", None, {"_tool": 5}, {"all": "x"}, latent(0)]
    context = Context([{"type": "plan", "plan": plan}])
    run_to_end(Execution(context, clock=CLOCK))
    after = context.messages
    assert [m["type"] for m in after[1:]] == ["data", "error", "error", "error", "error", "error"]
    again = Execution(Context(after), clock=CLOCK)
    assert [s.status for s in again.states] == [Status.FAILED] * 5 + [Status.DONE]
    run_to_end(again)
    assert len(again.context) == len(after)


def test_rerun_runs_the_call_and_what_read_its_output_again() -> None:
    """rerun() puts a finished call and its finished readers back to pending; the new outputs shadow the old."""
    context = Context([INPUT, {"type": "plan", "plan": [latent(0, "†input.x"), latent(1, "†state.p0"), latent(2)]}])
    execution = Execution(context, clock=CLOCK)
    run_to_end(execution)
    context.append({"type": "input", "input": {"x": 2}})
    assert [s.index for s in execution.stale()] == [0]
    assert execution.rerun([0]) == (0, 1)
    run_to_end(execution)
    assert context.resolve("†state.p1").value == {"n": 1, "seen": {"n": 0, "seen": 2}}
    assert execution.stale() == []
    assert sum(1 for m in context.messages if m.get("_outputPath") == "†state.p2") == 1


def test_each_outcome_records_its_inputs_start_and_duration() -> None:
    """`_run` holds the call's position, its start, its resolved inputs and their digest, and how long it took."""
    ticks = iter([10.0, 10.25])
    context = Context([INPUT, {"type": "plan", "plan": [{"_tool": "t", "q": "†input.x", "_outputPath": "†state.y",
                                                         "_output": 5}]}])
    run_to_end(Execution(context, clock=CLOCK, timer=lambda: next(ticks)))
    audit = context[-1]["_run"]
    assert audit == {"call": 0, "started": "2026-01-01T00:00:00Z", "digest": audit["digest"],
                     "inputs": {"q": 1, "_output": 5}, "seconds": 0.25}


# -- the property: stepping, undoing and resuming in any order end where one uninterrupted run ends --------

def _plan(draw: st.DrawFn) -> list[Any]:
    size = draw(st.integers(1, 6))
    entries: list[Any] = []
    for index in range(size):
        source = draw(st.sampled_from(["†input.x", *[f"†state.p{j}" for j in range(index)], "†state.never"]))
        if draw(st.booleans()) and index:  # a failing activity: its readers stay blocked
            entries.append({"_tool": "boom", "_outputPath": f"†state.p{index}", "n": index})
        elif draw(st.integers(0, 4)) == 0:
            entries.append({"all": [latent(index, source), latent(100 + index, source)]})
        else:
            entries.append(latent(index, source))
    return entries


OPERATIONS = st.lists(st.sampled_from(["step", "run", "undo", "reopen"]), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.composite(_plan)(), OPERATIONS, st.randoms(use_true_random=False))
def test_stepping_undoing_and_resuming_in_any_order_gives_the_uninterrupted_fold(entries, operations, rnd) -> None:
    """Each path of one writer: any interleaving of step, run, undo (back to an earlier step) and reopen ends in
    the fold of one uninterrupted run."""
    def boom(call, tool, context):
        raise ValueError(f"boom {call['n']}")

    activities = registry(boom=boom)
    start = [INPUT, {"type": "plan", "plan": entries}]

    straight = Context(copy.deepcopy(start))
    run_to_end(Execution(straight, activities=activities, clock=CLOCK))

    context = Context(copy.deepcopy(start))
    execution = Execution(context, activities=activities, clock=CLOCK)
    checkpoints = [len(context)]
    for operation in operations:
        if operation == "step":
            asyncio.run(execution.step())
            checkpoints.append(len(context))
        elif operation == "run":
            asyncio.run(execution.run())
            checkpoints.append(len(context))
        elif operation == "undo":  # the undo stack: back to the end of an earlier step
            target = rnd.choice(checkpoints)
            while len(context) > target:
                context.remove(len(context) - 1)
            checkpoints = [c for c in checkpoints if c <= target]
        else:  # save and open again: a new context and execution, nothing carried over
            context = Context(copy.deepcopy(context.messages))
            execution = Execution(context, activities=activities, clock=CLOCK)
    run_to_end(execution)
    assert fold(context) == fold(straight)
    assert [s.status for s in execution.states] == [
        s.status for s in Execution(straight, activities=activities, clock=CLOCK).states]


def test_a_failure_written_to_the_error_branch_is_read_back_as_failed() -> None:
    """012: a failure filling `†state.error` is an output message; its `_run.error` keeps the call failed on reopen."""
    def declined(call, tool, context):
        raise ValueError("declined")

    call = {"_tool": "pay", "_outputPath": "†state.receipt || †state.error"}
    context = Context([{"type": "plan", "plan": [call]}])
    run_to_end(Execution(context, activities=registry(pay=declined), clock=CLOCK))
    reopened = Execution(Context(context.messages), activities=registry(pay=declined), clock=CLOCK)
    state = reopened.state(0)
    assert (state.status, state.error) == (Status.FAILED, {"type": "ValueError", "message": "declined"})
    assert len(state.outputs) == 1


def test_a_blocked_call_names_the_failed_writer_it_waits_for() -> None:
    """The reader of a failed call's destination stays blocked, and its state names that writer."""
    def boom(call, tool, context):
        raise ValueError("no")

    calls = [{"_tool": "boom", "_outputPath": "†state.a"}, {"_tool": "use", "a": "†state.a", "_output": 1}]
    context = Context([{"type": "plan", "plan": calls}])
    execution = Execution(context, activities=registry(boom=boom), clock=CLOCK)
    assert execution.state(1).failed_writers == ()
    run_to_end(execution)
    state = execution.state(1)
    assert (state.status, state.waiting_for, state.failed_writers) == (Status.BLOCKED, ("†state.a",), (0,))


def test_a_conditional_breakpoint_stops_only_when_its_expression_is_truthy() -> None:
    """A breakpoint on call 1 with condition †state.big: no stop while it is false; a stop once it is true."""
    calls = [latent(0), latent(1)]
    flag = {"type": "state", "data": {"big": False}}
    context = Context([flag, {"type": "plan", "plan": calls}])
    execution = Execution(context, clock=CLOCK, breakpoints={1})
    execution.conditions = {1: "†state.big"}
    assert asyncio.run(execution.run()).stopped_at is None
    context.replace(0, {"type": "state", "data": {"big": True}})
    execution.rerun([1])
    assert asyncio.run(execution.run()).stopped_at == 1
    execution.conditions = {1: "†state..bad"}  # a malformed condition stops rather than run past unseen
    assert condition_holds(context, execution.conditions[1], execution.plans[1])


def test_break_on_failure_starts_nothing_after_a_failed_call() -> None:
    """With break_on_failure, run() ends once a call failed; the next run() goes on."""
    async def boom(call, tool, context):  # fails at once, beside call 2: a sync one's thread may come later
        raise ValueError("no")

    calls = [{"_tool": "boom", "_outputPath": "†state.a"}, latent(1, "†state.p9"), latent(9)]
    execution = Execution(Context([{"type": "plan", "plan": calls}]), activities=registry(boom=boom), clock=CLOCK)
    execution.break_on_failure = True
    report = asyncio.run(execution.run())
    assert (report.failed_at, report.ran) == (0, (0, 2))
    assert execution.state(1).status is Status.READY
    assert asyncio.run(execution.run()).ran == (1,)


def test_fork_keeps_the_messages_up_to_the_cursor_and_the_record_in_them() -> None:
    """fork(document, at): the messages up to `at`, the same shape and solution, no path; a bad index is refused."""
    calls = [latent(0, "†input.x"), latent(1, "†state.p0")]
    document = Document(Context([INPUT]), Shape.REQUEST, solution={"calls": calls}, path=None)
    run_to_end(Execution(document, clock=CLOCK))
    branch = fork(document, 1)
    assert (len(branch.context), branch.shape, branch.solution, branch.path) == (2, Shape.REQUEST, {"calls": calls},
                                                                                None)
    assert [s.status for s in Execution(branch, clock=CLOCK).states] == [Status.DONE, Status.READY]
    with pytest.raises(IndexError, match="cannot fork at message 9"):
        fork(document, 9)


def test_a_fork_before_the_end_leaves_out_the_final_output_given_after_it() -> None:
    """A solution that is only a final output (the model's last turn) answered the whole context: a fork
    that cuts messages has none, and the loop waits for a turn; a fork of every message keeps it."""
    final = {"output": "Sunny.", "_model": {"model": "m"}}
    document = Document(Context([INPUT, {"role": "user", "content": "Weather?"}, {"role": "user", "content": "Rome?"}]),
                        Shape.REQUEST, solution=final, path=None,
                        envelope={"context": [], "solution": final})
    branch = fork(document, 1)
    assert branch.solution is None
    assert "solution" not in branch.to_json()
    assert fork(document, 2).solution == final


def test_the_record_read_with_the_plans_texts_is_the_record_read_from_its_calls() -> None:
    """An execution serialises its plan once (`call_texts`): a message holding the plan's own call object
    and one holding an equal copy (a document reopened) are matched alike, and an edited call is still seen."""
    calls = [latent(0), latent(1, "†state.p0"), {"_tool": "think", "_output": "a thought"}]
    context = Context([INPUT, {"type": "plan", "plan": calls}])
    execution = Execution(context, clock=CLOCK)
    run_to_end(execution)
    reopened = Context(copy.deepcopy(context.messages))
    edited = copy.deepcopy(execution.calls)
    edited[1]["_output"] = {"n": 9}
    for where, plan in ((context, execution.calls), (reopened, execution.calls), (context, edited)):
        texts = call_texts(plan)
        assert read_record(where, texts, 1) == read_record(where, plan, 1)
    assert read_record(context, call_texts(edited), 1).of(1) == read_record(context, edited, 1).of(1)
    assert read_record(context, call_texts(edited), 1).of(1).edited


def test_a_run_that_starts_with_no_record_serialises_no_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record matches the messages a run writes by the plan's own call objects and their positions, even
    for identical calls: no call is serialised until the record must be read whole (here, after a removal),
    and the record read then is the record read afresh."""
    same = {"_tool": "log", "_outputPath": "†state.log", "_outputMethod": "push", "_output": "hi"}
    calls = [latent(0), same, copy.deepcopy(same), latent(1, "†state.p0")]
    context = Context([INPUT, {"type": "plan", "plan": calls}])
    execution = Execution(context, clock=CLOCK)
    serialised: list[int] = []
    original = CallTexts._serialise
    monkeypatch.setattr(CallTexts, "_serialise", lambda texts: serialised.append(1) or original(texts))
    run_to_end(execution)
    assert [s.status for s in execution.states] == [Status.DONE] * 4
    assert serialised == []
    context.remove(len(context) - 1)  # the last output undone: the record is read whole, and the call runs again
    execution.refresh()
    assert serialised == [1]
    assert execution.record == read_record(context, copy.deepcopy(calls), 1)
    assert [s.status for s in execution.states] == [Status.DONE] * 3 + [Status.READY]


def test_a_tick_that_froze_the_collectors_heap_gives_it_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long tick sets what is alive aside from the cyclic collector (`gc.freeze`) and unfreezes it when
    it ends, also when a call failed; the run is the same."""
    monkeypatch.setattr(execution_module, "_FREEZE_EVERY", 2)
    calls = [latent(i) for i in range(6)] + [{"_tool": "t9", "_outputPath": "†state.p9", "_output": "not an object"}]
    context = Context([INPUT, {"type": "plan", "plan": calls}])
    gc.unfreeze()  # as a CLI starts: nothing frozen by a host (a window's tests before this one freeze theirs)
    frozen = gc.get_freeze_count()
    execution = Execution(context, clock=CLOCK)
    froze: list[int] = []
    execution.message_appended.connect(lambda position, index: froze.append(gc.get_freeze_count()))
    run_to_end(execution)
    assert max(froze) > frozen  # it did freeze during the tick
    assert gc.get_freeze_count() == frozen
    assert [s.status for s in execution.states][:6] == [Status.DONE] * 6


def test_a_tick_leaves_a_heap_its_host_froze_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window freezes its own heap and collects it itself: a tick that froze more leaves it frozen, not
    unfrozen with the window's."""
    monkeypatch.setattr(execution_module, "_FREEZE_EVERY", 2)
    context = Context([INPUT, {"type": "plan", "plan": [latent(i) for i in range(6)]}])
    gc.freeze()
    try:
        hosts = gc.get_freeze_count()
        assert hosts > 0
        run_to_end(Execution(context, clock=CLOCK))
        assert gc.get_freeze_count() >= hosts
    finally:
        gc.unfreeze()


# -- the property: a record kept between reads is the record read afresh -------------------------------------

@st.composite
def _record_messages(draw: st.DrawFn, calls: list[Any]) -> dict[str, Any]:
    """A message a run may leave, or a stranger: an output, a run record or an error naming a call by its
    position, a wrong position, none (written before `_run`), or a call edited since it ran."""
    index = draw(st.integers(0, len(calls) - 1))
    call = calls[index]
    shape = draw(st.sampled_from(["exact", "exact", "exact", "moved", "legacy", "edited", "loose", "stranger"]))
    if shape == "edited":
        call = {**call, "_output": {"edited": True}}
    elif shape == "loose":
        call = {**call, "_output": "given"}
    elif shape == "stranger":
        call = {"_tool": "elsewhere"}
    run: dict[str, Any] = {} if shape in ("legacy", "loose") else {"call": index + 3 if shape == "moved" else index}
    form = draw(st.sampled_from(["output", "record", "error"]))
    if form == "record":
        return run_record_message(call, CLOCK, run)
    if form == "error":
        return error_message(call, "boom", "it failed", CLOCK, run or None)
    path = call.get("_outputPath", "†state.x") if isinstance(call, dict) else "†state.x"
    return {"type": "state", "data": {"x": index}, "_call": call, "_outputPath": path, **({"_run": run} if run else {})}


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_record_kept_between_reads_is_the_record_read_afresh(data: st.DataObject) -> None:
    """A run reads its record again after every completion, keeping what it read (`RecordReader`): after any
    sequence of appends, undos, inserts, replaces, moves, a new plan message and calls asked to run again, it
    equals the record read from nothing."""
    same = {"_tool": "log", "_outputPath": "†state.log", "_outputMethod": "push", "_output": "hi"}
    calls = [latent(0), same, copy.deepcopy(same), latent(1, "†state.p0"),
             {"_tool": "detect", "_outputPath": "†state.d"}]
    plan_index = data.draw(st.sampled_from([1, None]))
    context = Context([INPUT, {"type": "plan", "plan": calls}])
    reader = RecordReader(call_texts(calls), plan_index)
    ignore: frozenset[int] = frozenset()
    records = _record_messages(calls)  # once: a strategy made per draw is made (and inspected) again each time
    for _ in range(data.draw(st.integers(1, 25))):
        operation = data.draw(st.sampled_from(
            ["append"] * 6 + ["remove", "insert", "replace", "move", "plan", "ignore"]))
        size = len(context)
        if operation == "append":
            context.append(data.draw(records))
        elif operation == "remove" and size > 2:
            context.remove(data.draw(st.integers(2, size - 1)))
        elif operation == "insert":
            context.insert(data.draw(st.integers(2, size)), data.draw(records))
        elif operation == "replace" and size > 2:
            context.replace(data.draw(st.integers(2, size - 1)), data.draw(records))
        elif operation == "move" and size > 3:
            context.move(data.draw(st.integers(2, size - 1)), data.draw(st.integers(2, size - 1)))
        elif operation == "plan":
            context.append({"type": "plan", "plan": calls})
        elif operation == "ignore" and size > 2:
            ignore = ignore | {context.id_at(data.draw(st.integers(2, size - 1)))}
        before = dict(reader._record.calls) if reader._record is not None else {}
        kept = reader.read(context, ignore)
        assert kept == read_record(context, calls, plan_index, ignore)
        if reader.changed is not None:  # only appends: the calls it names are the only ones whose record changed
            assert {i: r for i, r in kept.calls.items() if i not in reader.changed} == {
                i: r for i, r in before.items() if i not in reader.changed}


@pytest.mark.parametrize("paced", [False, True])
def test_a_tick_without_a_pace_collects_the_young_generation_less_often(paced: bool) -> None:
    """A tick of the command line (no pace) raises the collector's young threshold while it runs and gives
    the old one back when it ends; a paced tick (the window's) keeps the window's own."""
    seen: list[tuple[int, int, int]] = []

    def look(call: Any, tool: Any, context: Any) -> int:
        seen.append(gc.get_threshold())
        return 1

    async def pace() -> None:
        return None

    before = gc.get_threshold()
    context = Context([{"type": "plan", "plan": [{"_tool": "look", "_outputPath": "†state.x"}]}])
    execution = Execution(context, activities=registry(look=look), clock=CLOCK)
    execution.pace = pace if paced else None
    run_to_end(execution)
    assert gc.get_threshold() == before
    assert seen[0] == (before if paced else (max(before[0], BATCH_YOUNG), *before[1:]))


def test_records_written_elsewhere_go_to_calls_with_and_without_a_latent_result_in_plan_order() -> None:
    """Two calls alike but for the latent result one of them has: outputs written elsewhere (no `_run`) with a
    result in `_call` go to the first of them without a record at that path, then to the other."""
    calls = [{"_tool": "t", "_outputPath": "†state.a"}, {"_tool": "t", "_outputPath": "†state.a", "_output": 1}]
    outputs = [{"type": "state", "data": {"a": n}, "_outputPath": "†state.a", "_call": {**calls[0], "_output": n},
                "_date": "2026-11-20T09:00:00Z"} for n in (7, 8)]
    record = read_record(Context([{"type": "plan", "plan": calls}, *outputs]), calls, 0)
    assert {index: [entry.position for entry in found.entries] for index, found in record.calls.items()} == {
        0: [1], 1: [2]}


def test_a_record_reads_every_call_as_a_call_record_however_it_keeps_it() -> None:
    """A run's record keeps a call recorded by one message as that message's entry alone (a long run holds one
    per call); read through `calls` or `of`, every call is a `CallRecord` of its entries, equal to a whole read,
    whether it has one message or two (`a && b`) and whether the record was read at once or as it grew."""
    calls = [latent(0), latent(1, path="†state.p1 && †state.q1"), latent(2)]
    context = Context([{"type": "plan", "plan": calls}])
    execution = Execution(context, clock=CLOCK)
    run_to_end(execution)
    grown, whole = execution.record, read_record(context, calls, 0)
    assert grown == whole
    for record in (grown, whole):
        assert len(record.calls) == 3
        assert sorted(record.calls) == [0, 1, 2]
        assert {index: [entry.position for entry in found.entries] for index, found in record.calls.items()} == {
            0: [1], 1: [2, 3], 2: [4]}
        assert all(record.of(index) == record.calls[index] for index in range(3))
        assert record.of(3) is None
        assert 3 not in record.calls
        two = record.of(1)
        assert two is not None
        assert two.outputs == (context.id_at(2), context.id_at(3))
