"""The approval hook of an `Execution` (SPEC 6.8): each ready call is approved, rejected or edited first."""

from __future__ import annotations

import inspect
from typing import Any, Protocol

from ..calls._calls import Problem, copied
from ..calls._status import Approver, CallState, Decision, Status
from ..document._json import MESSAGE_OUTER, unwritable
from ..document._validate import json_path
from ..protocol._groups import Unit
from ._readiness import Scheduled, readiness


class Approving(Scheduled, Protocol):
    """What approval reads of an execution (`Execution` is one): readiness's, the hook, and the re-planning
    of a call the hook edited."""

    approver: Approver | None

    def state(self, index: int) -> CallState: ...

    def replan(self, index: int, call: Any) -> list[Problem]: ...


async def approve(execution: Approving, unit: Unit) -> list[int]:
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


def _edit(execution: Approving, index: int, call: Any) -> bool:
    """Replace the call with a copy of the hook's edit (the hook may change its own after); True when the edited call
    is valid and ready."""
    if (found := unwritable(call, MESSAGE_OUTER + 2)) is not None:  # (as deep as a plan message's call)
        at, reason = found
        execution._fail(index, [Problem("approval", f"the approval hook's edit cannot be written at {json_path(at)}: "
                                                    f"{reason}")])
        return False
    problems = execution.replan(index, copied(call))
    if problems:
        execution._fail(index, problems)
        return False
    status, paths = readiness(execution, index)
    execution._set(index, status=status, waiting_for=paths)
    return status is Status.READY
