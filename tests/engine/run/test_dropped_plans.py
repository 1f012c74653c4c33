"""A settled call's plan is dropped by an unpaced tick and planned again, the same, whenever it is read."""

from __future__ import annotations

import asyncio
from typing import Any

from exec_support import CLOCK, registry

from contextdeck.engine import Activities, Context, Execution, Status, analyse_call

TOOLS = [{"type": "tool", "tool": {
    "named": {"type": "object", "_activity": "double"},
    "fixed": {"type": "object", "properties": {"_outputPath": {"type": "string", "const": "†state.fixed"}}},
}}]
CALLS: list[Any] = [
    {"_tool": "double", "n": 2, "_outputPath": "†state.a"},
    {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b.c || †state.error", "_outputMethod": "merge"},
    {"_tool": "named", "n": 3, "_outputPath": "†state.d"},
    {"_tool": "fixed", "n": 1},
    {"_tool": "latent", "_output": {"x": "†state.b"}, "_outputPath": "†state.e && †input.e"},
    {"_tool": "double", "n": 5, "_instance": "†state.who", "_outputPath": "†state.f"},
    {"_tool": "double", "n": 7},  # fire-and-forget: no destination
    {"_tool": "double", "n": "†state.never", "_outputPath": "†state.g"},  # blocked
]


# Asynchronous, so two runs finish their calls in the same order (sync activities run on threads, which
# finish in any order) and write the same messages: the tests compare one run with another.
async def double(call: dict[str, Any], tool: Any, context: Any) -> Any:
    return call["n"] * 2 if isinstance(call.get("n"), int) else call.get("n")


async def fixed(call: dict[str, Any], tool: Any, context: Any) -> Any:
    return 1


def run(paced: bool, activities: Activities | None = None) -> tuple[Execution, list[Any]]:
    context = Context([{"type": "state", "data": {"who": ["x", "y"]}}, *TOOLS])
    execution = Execution(context, {"calls": CALLS}, activities=activities or registry(double=double, fixed=fixed),
                          clock=CLOCK, in_process=True)
    planned = list(execution.plans)
    if paced:
        async def pace() -> None:
            return None

        execution.pace = pace
    asyncio.run(execution.run())
    asyncio.run(execution.drain())
    return execution, planned


def test_an_unpaced_tick_drops_each_done_call_s_plan_and_reading_it_plans_it_again_equal() -> None:
    """After a command-line run, every plan read equals the one made at set-up; a done call's is a new object."""
    execution, planned = run(paced=False)
    done = [i for i, state in enumerate(execution.states) if state.status is Status.DONE]
    assert len(done) >= 6  # every call with a destination that could run
    assert list(execution.plans) == planned
    assert [execution.plans[i] for i in range(-len(planned), 0)] == planned
    assert execution.plans[2:5] == planned[2:5]
    assert all(execution.plans[i] is not planned[i] for i in done)
    kept = [i for i, state in enumerate(execution.states) if state.status is not Status.DONE]
    assert all(execution.plans[i] is planned[i] for i in kept)


def test_a_paced_tick_keeps_every_plan() -> None:
    """The window paces its ticks and reads its plans again and again: none is dropped."""
    execution, planned = run(paced=True)
    assert all(now is before for now, before in zip(execution.plans, planned, strict=True))


def test_what_reads_a_dropped_plan_sees_what_it_saw() -> None:
    """Statuses derived again, the analysis of each call, staleness and the cycle text are those of a run that
    kept its plans."""
    dropped, _ = run(paced=False)
    kept, _ = run(paced=True)
    for execution in (dropped, kept):
        execution.refresh()
    assert dropped.states == kept.states
    assert dropped.stale() == kept.stale()
    for index in range(len(CALLS)):
        one, other = analyse_call(dropped, index), analyse_call(kept, index)
        assert (one.label, one.status, one.waiting_for, one.state) == (other.label, other.status, other.waiting_for,
                                                                       other.state)


def test_a_dropped_plan_is_planned_with_the_activity_it_ran() -> None:
    """Activities loaded after the run (another function under the same name) do not change a dropped plan."""
    activities = registry(double=double, fixed=fixed)
    execution, planned = run(paced=False, activities=activities)
    activities.add(lambda call, tool, context: 0, "double")
    assert execution.plans[0] == planned[0]
    assert execution.plans[0].activity is planned[0].activity


def test_a_dropped_call_run_again_is_planned_again_and_its_approval_edit_kept() -> None:
    """A call asked to run again runs from its plan made again; a call an approval edits is planned from the
    edit and never dropped."""
    execution, planned = run(paced=False)
    again = execution.rerun([0], dependents=False)
    assert again == (0,)
    asyncio.run(execution.run())
    assert execution.state(0).status is Status.DONE
    edited = {**CALLS[2], "n": 4}
    assert execution.replan(2, edited) == []
    execution.plans.drop(2)
    assert execution.plans[2].call is edited
    assert execution.plans[0] == planned[0]
