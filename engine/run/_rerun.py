"""Calls that ran and may run again: the dependents a re-run takes along, and the calls whose inputs changed."""

from __future__ import annotations

from collections.abc import Sequence

from ..calls._calls import CallPlan, resolve_call
from ..calls._plan import Graph, reads_own_writes
from ..calls._record import Record, digest
from ..calls._status import OPEN, CallState, Stale, Status
from ..document._context import Context
from ..protocol._groups import Unit
from ._running import inputs_of


def with_dependents(chosen: set[int], graph: Graph, unit_of: Sequence[Unit], record: Record) -> set[int]:
    """`chosen` and every call that ran on what they write, directly or not (whole groups)."""
    chosen = set(chosen)
    readers: dict[int, set[int]] = {}
    for reader, feeders in graph.feeders.items():
        for writer in feeders:
            readers.setdefault(writer, set()).add(reader)
    todo = list(chosen)
    while todo:
        for reader in readers.get(todo.pop(), ()):
            for member in unit_of[reader].members:
                if member not in chosen and record.of(member) is not None:
                    chosen.add(member)
                    todo.append(member)
    return chosen


def stale_calls(
    record: Record, states: Sequence[CallState], plans: Sequence[CallPlan], context: Context
) -> list[Stale]:
    """The calls that ran with inputs other than the ones they would receive now (or were edited since)."""
    found: list[Stale] = []
    for index, recorded in sorted(record.calls.items()):
        if states[index].status in (Status.RUNNING, *OPEN):
            continue
        audit = recorded.audit
        if "digest" not in audit and not recorded.edited:
            continue  # written before inputs were recorded: nothing to compare with
        plan = plans[index]
        # A call reading its own destination is compared as of just before its own latest write.
        at = recorded.last[0].position if reads_own_writes(plan) else None
        now = inputs_of(resolve_call(context, plan, at=at))
        if recorded.edited or digest(now) != audit.get("digest"):
            found.append(Stale(index, audit.get("inputs"), now, recorded.edited))
    return found


