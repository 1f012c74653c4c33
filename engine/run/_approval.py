"""The approval hook of an `Execution` (SPEC 6.8): each ready call is approved, rejected or edited first."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from ..calls._calls import Problem, plan_call
from ..calls._plan import Graph
from ..calls._status import Decision, Status
from ..protocol._groups import Unit
from ._readiness import readiness

if TYPE_CHECKING:
    from ._execution import Execution


async def approve(execution: Execution, unit: Unit) -> list[int]:
    """Ask the approval hook about each ready member; returns the members that may run."""
    approved: list[int] = []
    for index in unit.members:
        if execution.state(index).status is not Status.READY:
            continue
        if execution.approver is None:
            approved.append(index)
            continue
        try:
            decision = execution.approver(execution.state(index))
            if inspect.isawaitable(decision):
                decision = await decision
        except Exception as error:
            execution._fail(index, [Problem("approval", f"the approval hook raised {type(error).__name__}: {error}")])
            continue
        if isinstance(decision, Decision) and decision.action == "approve":
            approved.append(index)
        elif isinstance(decision, Decision) and decision.action == "reject":
            execution._fail(index, [Problem("rejected", decision.reason or "rejected by the approval hook")])
        elif isinstance(decision, Decision) and decision.action == "edit":
            if _edit(execution, index, decision.call):
                approved.append(index)
        else:
            execution._fail(index, [Problem("approval", f"the approval hook answered {decision!r}, not a Decision")])
    if unit.pattern == "all" and len(approved) < len(unit.members):
        for index in approved:  # all or nothing: one member refused cancels the group
            execution._set(index, status=Status.CANCELLED)
        return []
    return approved


def _edit(execution: Execution, index: int, call: Any) -> bool:
    """Replace the call with the hook's edit; True when the edited call is valid and ready."""
    plan = plan_call(index, call, execution._tools, execution.activities)
    execution.plans[index] = plan
    execution._graph = Graph.of(execution.plans)
    execution._set(index, call=call)
    problems = list(plan.problems) or execution._literal_problems(plan)
    if problems:
        execution._fail(index, problems)
        return False
    status, paths = readiness(execution, index)
    execution._set(index, status=status, waiting_for=paths)
    return status is Status.READY
