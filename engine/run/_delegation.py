"""Delegated calls of an `Execution` (014, 015): each runs as a nested session (a `Loop`) in a clean room.

The session layer: `Loop` is built on `Execution`, so `Execution` does not build loops; `LoopSessions` is
plugged into it (`Execution.sessions`, by the package `run`) and opens them.
"""

from __future__ import annotations

from typing import Any

from ..calls._status import Status
from ._delegate import delegate_document
from ._execution import Execution
from ._loop import Loop, LoopStatus
from ._running import Outcome, conclude, prepare, started_audit


class LoopSessions:
    """`Execution.sessions`: each delegated call's nested session is a `Loop`."""

    def open(self, execution: Execution, index: int) -> Any:
        return open_delegation(execution, index)

    async def run(self, execution: Execution, index: int) -> Outcome:
        return await run_delegated(execution, index)

    def finished_output(self, execution: Execution, index: int) -> Any:
        return finished_output(execution, index)


def open_delegation(execution: Execution, index: int) -> Any:
    """The nested session of delegated call `index`, opened without running anything (see `Execution.delegation`)."""
    found = execution.delegations.get(index)
    if found is not None:
        return found
    if index not in execution.delegates:
        problem = execution.problems(index)
        raise ValueError(problem[0].message if problem else f"call {index} does not delegate")
    state = execution.state(index)
    if state.status is not Status.READY:
        raise ValueError(f"call {index} is not ready: it is {state.status}")
    resolved, refusal = prepare(execution.plans[index], execution.context)
    if refusal is not None:
        raise ValueError(f"call {index}: {refusal.type}: {refusal.message}")
    loop = _new_session(execution, index, resolved)
    execution.refresh()  # the call now waits for its session's output
    return loop


def _new_session(execution: Execution, index: int, resolved: dict[str, Any]) -> Any:
    plan, spec = execution.plans[index], execution.delegates[index]
    base = spec.path.parent if spec.path is not None else execution.base
    chain = (*execution.chain, spec.path) if spec.path is not None else execution.chain
    loop = Loop(delegate_document(spec, plan, resolved, execution.context), turns=execution.turns,
                outputs=execution.outputs, base=base, chain=chain, activities=execution.activities,
                tools=execution.code_tools, clock=execution.clock, timeout=execution.timeout, timer=execution.timer,
                in_process=execution.in_process)
    execution.delegations[index] = loop
    return loop


def finished_output(execution: Execution, index: int) -> Any:
    """The output of call `index`'s nested session; ValueError until that session has finished."""
    loop = execution.delegations.get(index)
    if loop is None or loop.status is not LoopStatus.FINISHED:
        raise ValueError(f"call {index} has no finished delegate session")
    return loop.output


async def run_delegated(execution: Execution, index: int) -> Outcome:
    """Run call `index` in its delegate (014): a nested loop over the clean-room request, whose final
    output is the call's result. Without one yet (no turn to take), the call waits for that output."""
    plan = execution.plans[index]
    resolved, problem = prepare(plan, execution.context)
    audit = started_audit(execution._identity(index), resolved, execution.clock)
    if problem is not None:
        return Outcome(index, error=(problem.type, problem.message), audit=audit)
    provided = execution._provided.pop(index, None)
    if provided is not None:  # given by hand, or by its finished session (complete_delegation): written once
        return conclude(plan, provided.value, execution.clock, {**audit, **(provided.audit or {})},
                        provided.alternative)
    loop = execution.delegations.get(index)
    if loop is None:
        loop = _new_session(execution, index, resolved)
    if await loop.run() is not LoopStatus.FINISHED:
        return Outcome(index, waiting=True)
    return conclude(plan, loop.output, execution.clock, audit)
