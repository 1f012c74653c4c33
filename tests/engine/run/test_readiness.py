"""Readiness after a call completes: only the calls it may have made ready are judged again, with the result of
judging them all (statuses, the order calls run in, the messages appended)."""

import asyncio

import pytest
from exec_support import registry
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context, Decision, Execution, Status, fixed_clock
from contextdeck.engine.calls._status import OPEN
from contextdeck.engine.run import _readiness

CLOCK = fixed_clock("2026-01-01T00:00:00Z")
BASE = [{"type": "state", "data": {"seed": 1}}]


async def ok(call, tool, context):
    return {"got": call.get("in")}


async def fails(call, tool, context):
    raise ValueError("no")


ACTIVITIES = registry(ok=ok, fails=fails)


@st.composite
def plans(draw):
    """Calls ranked at random, each reading (plainly, through `||` or `&&`, or an error message) what calls ranked
    before it write, a few groups, failures with and without an error branch, latent calls with and without
    `_output`, and calls the approval hook rejects."""
    size = draw(st.integers(1, 9))
    calls = []
    for k in range(size):
        sources = draw(st.lists(st.integers(0, k - 1), max_size=3, unique=True)) if k else []
        reads = [draw(st.sampled_from([f"†state.p{j}", f"†state.e{j}", f"†state.p{j} || †state.e{j}",
                                       f"†state.p{j} && †state.seed", f"†state.p{j}.got"])) for j in sources]
        if draw(st.integers(0, 4)) == 0:
            reads.append(draw(st.sampled_from(["†error.error.type", "†state.missing", "†state.seed"])))
        path = f"†state.p{k}" + (f" || †state.e{k}" if draw(st.booleans()) else "")
        call = {"_tool": draw(st.sampled_from(["ok", "ok", "fails", "latent"])), "in": reads, "_outputPath": path}
        if call["_tool"] == "latent" and draw(st.booleans()):
            call["_output"] = {"k": k}
        calls.append(call)
    order = draw(st.permutations(range(size)))
    entries: list = [calls[k] for k in order]
    grouped: list = []
    while entries:  # consecutive calls taken into a group now and then
        width = draw(st.integers(1, 3))
        taken, entries = entries[:width], entries[width:]
        pattern = draw(st.sampled_from(["one", "one", "all", "any", "race"]))
        grouped.extend(taken if pattern == "one" or len(taken) < 2 else [{pattern: taken}])
    rejected = draw(st.sets(st.integers(0, size - 1), max_size=2))
    return grouped, rejected


def run_plan(plan, rejected):
    """Run the plan (tick, then the latent calls given an output, then a tick again): what it announced and left."""
    context = Context(list(BASE))
    execution = Execution(context, {"calls": plan}, activities=ACTIVITIES, clock=CLOCK, timer=lambda: 0.0,
                          approver=lambda state: Decision.reject() if state.index in rejected else Decision.approve())
    # What each call announced, in order (across calls, a pass announces them in the order they first changed).
    changes: dict[int, list] = {}
    execution.status_changed.connect(lambda s: changes.setdefault(s.index, []).append(
        (s.status, s.waiting_for, s.failed_writers, s.not_taken)))

    async def drive():
        reports = [await execution.run()]
        for state in execution.states:
            if state.status is Status.WAITING_FOR_OUTPUT:
                execution.provide_output(state.index, {"given": state.index})
        reports.append(await execution.run())
        return reports

    reports = asyncio.run(drive())
    return changes, reports, context.messages, [(s.status, s.waiting_for, s.failed_writers, s.not_taken)
                                                for s in execution.states]


def checked_affected(judged):
    """`_affected`, checking each time it narrows the pass that every call it leaves out is as ready as it was."""
    affected = _readiness._affected

    def check(execution, changed):
        found = affected(execution, changed)
        if found is not None:
            judged.append(len(found))
            for state in execution.states:
                if state.status in OPEN and state.index not in found:
                    assert _readiness.readiness(execution, state.index) == (state.status, state.waiting_for)
        return found

    return check


@settings(max_examples=150, deadline=None)
@given(drawn=plans())
def test_judging_the_affected_calls_equals_judging_them_all(drawn) -> None:
    """On random plans, a run that judges only the affected calls announces, runs and appends what one judging
    every call after each completion does; and each narrowed pass left out only calls as ready as they were."""
    plan, rejected = drawn
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_readiness, "_affected", checked_affected([]))
        narrowed = run_plan(plan, rejected)
        patch.setattr(_readiness, "_affected", lambda execution, changed: None)
        full = run_plan(plan, rejected)
    assert narrowed == full


def test_a_chain_judges_a_few_calls_after_each_completion(monkeypatch) -> None:
    """In a chain (each call reads what the one before wrote) a completion makes only the next call's readiness
    worth judging: the passes after completions judge a few calls each, not every open call."""
    size = 60
    plan = [{"_tool": "ok", "_outputPath": "†state.p0"}]
    plan += [{"_tool": "ok", "in": f"†state.p{k - 1}", "_outputPath": f"†state.p{k}"} for k in range(1, size)]
    judged: list[int] = []
    monkeypatch.setattr(_readiness, "_affected", checked_affected(judged))
    context = Context(list(BASE))
    execution = Execution(context, {"calls": plan}, activities=ACTIVITIES, clock=CLOCK)
    asyncio.run(execution.run())
    assert [s.status for s in execution.states] == [Status.DONE] * size
    assert len(judged) >= size - 1
    assert max(judged) <= 3


def test_an_error_message_makes_its_readers_judged_again() -> None:
    """A call reading the `error` kind, which no call writes as its output, is ready once the tick that failed
    appends its error message (at the tick's end), and the next tick runs it."""
    plan = [{"_tool": "fails", "_outputPath": "†state.a"},
            {"_tool": "ok", "in": "†error.error.type", "_outputPath": "†state.b"}]
    context = Context(list(BASE))
    execution = Execution(context, {"calls": plan}, activities=ACTIVITIES, clock=CLOCK)
    asyncio.run(execution.run())
    assert [s.status for s in execution.states] == [Status.FAILED, Status.READY]
    asyncio.run(execution.run())
    assert context.resolve("†state.b").value == {"got": "ValueError"}
