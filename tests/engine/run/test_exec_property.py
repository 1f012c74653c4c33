"""Property: for acyclic plans whose calls write distinct paths, every stepping order reaches the same state."""

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context, Execution, fixed_clock

CLOCK = fixed_clock("2026-01-01T00:00:00Z")
BASE = [{"type": "state", "data": {"seed": {"x": 1}}}]


@st.composite
def acyclic_plans(draw):
    """Calls 0..n-1 in a random plan order; call k writes †state.pk and reads only from calls before k."""
    size = draw(st.integers(1, 6))
    calls = []
    for k in range(size):
        sources = draw(st.lists(st.integers(0, k - 1), max_size=3, unique=True)) if k else []
        reads = [f"†state.p{j}" for j in sources]
        if draw(st.booleans()):
            reads.append(draw(st.sampled_from(["†state.seed.x", "†state.seed", "†state.missing"])))
        method = draw(st.sampled_from(["set", "merge", "push"]))
        calls.append({
            "_tool": f"t{k}",
            "in": reads,
            "_outputPath": f"†state.p{k}",
            "_outputMethod": method,
            "_output": {"k": k, "got": reads},
        })
    order = draw(st.permutations(range(size)))
    return [calls[k] for k in order]


def final_state(plan, choose):
    """Step until nothing is ready, letting `choose` pick among the ready calls; the folded state."""
    context = Context(list(BASE))
    execution = Execution(context, {"calls": plan}, clock=CLOCK)

    async def drive():
        while ready := execution.ready():
            await execution.step(choose(ready))

    asyncio.run(drive())
    return context.resolve("†state").value, [s.status for s in execution.states]


@settings(max_examples=60, deadline=None)
@given(plan=acyclic_plans(), data=st.data())
def test_every_stepping_order_reaches_the_same_state(plan, data) -> None:
    """Choosing any ready call at each step ends in the state (and statuses) that plan-order stepping gives."""
    expected = final_state(plan, lambda ready: ready[0])
    chosen = final_state(plan, lambda ready: data.draw(st.sampled_from(ready)))
    assert chosen == expected


@settings(max_examples=30, deadline=None)
@given(plan=acyclic_plans())
def test_concurrent_run_reaches_the_stepped_state(plan) -> None:
    """One concurrent run() ends where stepping in plan order ends."""
    context = Context(list(BASE))
    asyncio.run(Execution(context, {"calls": plan}, clock=CLOCK).run())
    assert context.resolve("†state").value == final_state(plan, lambda ready: ready[0])[0]
