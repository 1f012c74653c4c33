"""How an `Execution` knows each call's status: derived from the run record, then from what its feeders did.

Plain functions over the execution's state (`Scheduled`: what they read and set of it), so that `Execution`
keeps only running and announcing, and this module never imports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..calls._calls import CallPlan, Mode, Problem, found_alone, missing_reads, parameters_refusal, resolve_parameters
from ..calls._plan import Graph
from ..calls._record import Record, RecordReader
from ..calls._status import OPEN, SETTLED, CallState, Status
from ..calls._written import approval_gate
from ..document._context import Context
from ..protocol._errors import ExpressionError
from ..protocol._expressions import parse_expression
from ..protocol._groups import Unit
from ._plans import Plans


class Scheduled(Protocol):
    """What readiness reads and sets of an execution (`Execution` is one): its plan, the record and the
    calls' states, and what is under way or was given from outside."""

    context: Context
    plans: Plans
    units: list[Unit]
    refused: tuple[tuple[int, ...], ...]
    lazy: bool
    delegates: dict[int, Any]  # call index -> its delegate
    delegations: dict[int, Any]  # call index -> its nested session
    _record: Record
    _reader: RecordReader
    _states: list[CallState]
    _unit_of: list[Unit]  # call index -> its unit
    _again: dict[int, frozenset[int]]  # record message ids to leave out (calls asked to run again)
    _errors: list[tuple[int, dict[str, Any]]]  # failures of this tick, not appended yet
    _structural: dict[int, list[Problem]]  # problems found before running
    _background: dict[int, Any]  # fire-and-forget runs under way
    _provided: dict[int, Any]  # outputs given from outside, not written yet
    _derived: tuple[int, int] | None  # (context revision, length) as of the last derivation, while nothing changed
    # The calls whose state changed since the last derivation (None: unknown, derive every call), the context's
    # length then, the messages this execution appended since and whether one of them was an error message.
    _touched: set[int] | None
    _length: int
    _appended: int
    _wrote_errors: bool

    @property
    def graph(self) -> Graph: ...

    def _set(self, index: int, **changes: Any) -> None: ...

    def announcing_once(self) -> AbstractContextManager[None]: ...

    def _fail(self, index: int, problems: list[Problem], *, report: bool = True,
              audit: dict[str, Any] | None = None) -> None: ...


def is_approval(path: str) -> bool:
    """A reference under `†state.approvals` is a gate a person opens (SPEC 6.8), not an error."""
    try:
        refs = parse_expression(path).references
    except ExpressionError:
        return False
    return len(refs) == 1 and approval_gate(refs[0])


def derive_statuses(execution: Scheduled) -> list[int] | None:
    """`_derived_statuses`, each call's change announced once, as the pass ends (`announcing_once`)."""
    with execution.announcing_once():
        return _derived_statuses(execution)


def _derived_statuses(execution: Scheduled) -> list[int] | None:
    """Read the record again and set every call's status from it; the calls still open get their readiness.

    When only messages were appended since the last read, only the calls whose record grew (and those that
    failed in this tick) are derived again: every other call's record is what it was. When, besides, every
    message appended since was this execution's own, only the open calls `_affected` are judged again.
    Returns the calls it judged again, sorted (None: every call).
    """
    ignore = frozenset().union(*execution._again.values()) if execution._again else frozenset()
    execution._record = execution._reader.read(execution.context, ignore)
    record = execution._record
    reported = {index for index, _ in execution._errors}
    for index, problems in execution._structural.items():  # found before running: reported unless recorded
        if index not in reported and not record.has(index):
            # 012: a lazy plan runs nothing, so it appends nothing either: the tick that runs it approved does.
            execution._fail(index, problems, report=not execution.lazy)
            reported.add(index)
    changed = execution._reader.changed  # after appends only: the calls whose record grew
    units = execution.units if changed is None else _units_of(execution._unit_of, sorted([*changed, *reported]))
    for unit in units:
        if unit.pattern == "one":  # a call alone: no group to settle
            _derive(execution, unit.members[0], reported, group_settled=False)
            continue
        # A group that ran is over for all its members: the losers and discarded ones are cancelled.
        # A member refused before running does not end an `any` or a `race`: the others may still win.
        forgiving = unit.pattern in ("any", "race")
        settled = any((record.has(i) or i in reported)
                      and not (forgiving and i in execution._structural) for i in unit.members)
        for index in unit.members:
            _derive(execution, index, reported, group_settled=settled)
    affected = None if execution.refused else _affected(execution, changed)
    if not execution.refused:  # a refused plan runs nothing: its other calls stay pending
        states, readers = execution._states, execution.graph.readers
        # Judging sets each open call's readiness; kept are the calls whose not-taken state turned.
        turned = [state.index for state in (states if affected is None else map(states.__getitem__, affected))
                  if state.status in OPEN and _judge(execution, state.index)]
        # A call found not taken lets its readers go past it, whether they were judged before it or not.
        while turned:
            again = sorted({reader for index in turned for reader in readers.get(index, ())
                            if states[reader].status in OPEN})
            affected = None if affected is None else sorted({*affected, *again})
            turned = [index for index in again if _judge(execution, index)]
    execution._derived = (execution.context.revision, len(execution.context))
    # What this pass set itself is an open call's readiness, which no other call's readiness reads.
    execution._touched, execution._length = set(), len(execution.context)
    execution._appended, execution._wrote_errors = 0, False
    return affected


def _judge(execution: Scheduled, index: int) -> bool:
    """Set open call `index`'s readiness; whether it turned out not taken, or taken again."""
    states, feeders = execution._states, execution.graph.feeders[index]
    status, paths = readiness(execution, index)
    failed = tuple(writer for writer in feeders
                   if states[writer].status in (Status.FAILED, Status.CANCELLED)
                   and not writer_done(execution, writer)) if feeders else ()
    skipped = status is Status.BLOCKED and not_taken(execution, index, paths)
    was = states[index].not_taken
    execution._set(index, status=status, waiting_for=paths, failed_writers=failed, not_taken=skipped)
    return skipped is not was


def not_taken(execution: Scheduled, index: int, waiting_for: tuple[str, ...]) -> bool:
    """Whether blocked call `index` is on a branch not taken (012): one of its reads can never be found, as every
    alternative waits for a path that calls of the plan write, and each of them has run without writing it (it took
    another branch of an `a || b`) or is itself not taken. A path no call of the plan writes may still come from
    outside (an input added later): a call waiting for it is blocked, not skipped."""
    feeders = execution.graph.feeders[index]
    if not any(writer_done(execution, writer) for writer in feeders):
        return False  # (a call waiting for its writers to run: a chain's every call but the next)
    waits = frozenset(waiting_for)

    def never(text: str) -> bool:
        writers = [writer for writer, paths in feeders.items() if text in paths]
        return text in waits and bool(writers) and all(writer_done(execution, writer) for writer in writers)

    return any(all(any(never(str(ref)) for ref in gate) for gate in expression.alternatives)
               for expression in execution.plans[index].reads)


def _affected(execution: Scheduled, changed: list[int] | None) -> list[int] | None:
    """The calls whose readiness may differ from the last derivation's, sorted; None: maybe any.

    The invariant: a call's readiness reads only its feeders' states (and their group mates', for an `any` or a
    `race`), the context at its reads, and what was given for it (an output, a delegate's session). So after
    appends of this execution alone, a call none of whose feeders (nor their mates) changed state, that reads no
    error when an error message was appended, and whose own state did not change, is as ready as it was: the
    messages a call writes are at its destinations, which the graph holds (`feeds`), and an error message writes
    the `error` kind. Anything else (an edit, a message from elsewhere, an output given, a call edited) sets
    `_touched` to None or makes the record be read whole (`changed` None), and every call is judged.
    """
    touched = execution._touched
    if touched is None or changed is None \
            or len(execution.context) != execution._length + execution._appended:
        return None
    graph = execution.graph
    readers, unit_of = graph.readers, execution._unit_of
    affected = set(touched)
    for index in touched:
        unit = unit_of[index]
        for member in unit.members if unit.pattern in ("any", "race") else (index,):
            affected.update(readers.get(member, ()))
    if execution._wrote_errors:
        affected.update(graph.error_readers)
    return sorted(affected)


def _units_of(unit_of: list[Unit], indices: list[int]) -> Iterator[Unit]:
    """The units of the calls at sorted `indices`, each once: a unit's members are consecutive calls (`flatten`),
    so a unit met again is the one just given. (A run's last read names every call: no set or dict of them.)"""
    last = None
    for index in indices:
        unit = unit_of[index]
        if unit is not last:
            yield unit
            last = unit


def _derive(execution: Scheduled, index: int, reported: set[int], *, group_settled: bool) -> None:
    """A call's status from the record; only what is under way is taken from memory."""
    state = execution._states[index]
    if state.status is Status.RUNNING or index in execution._background or index in reported:
        return
    found = execution._record.of(index)
    if found is not None:
        error = found.error
        if error is not None:
            status = Status.CANCELLED if error.get("type") == "cancelled" else Status.FAILED
            execution._set(index, status=status, waiting_for=(), error=error, outputs=found.outputs)
        elif execution.plans.fire_and_forget(index) and index not in execution.delegates:
            finished = state.finished or state.status is not Status.FIRE_AND_FORGET
            execution._set(index, status=Status.FIRE_AND_FORGET, waiting_for=(), finished=finished)
        else:
            execution._set(index, status=Status.DONE, waiting_for=(), error=None, outputs=found.outputs)
    elif group_settled:  # a member that failed and was forgiven keeps its error until the group is undone
        if state.status is not Status.FAILED:
            execution._set(index, status=Status.CANCELLED, waiting_for=())
    elif state.status not in OPEN:  # its record was removed (an undo): it has not run
        execution._set(index, status=Status.PENDING, waiting_for=(), error=None, outputs=(), result=None,
                       finished=False)


def readiness(execution: Scheduled, index: int) -> tuple[Status, tuple[str, ...]]:
    """Whether open call `index` may start, and else the paths it waits for."""
    plan = execution.plans[index]
    waiting: list[str] = []
    for writer, paths in execution.graph.feeders[index].items():
        if not writer_done(execution, writer):
            waiting.extend(paths)
    if waiting and any(len(expression.alternatives) > 1 for expression in plan.reads):
        waiting = _still_read(execution, plan, waiting)
    # Reads a pending writer will provide are already named; resolve only the others (the costly part).
    if plan.reads:
        waiting.extend(missing_reads(execution.context, plan, skip=frozenset(waiting)))
    paths = tuple(dict.fromkeys(waiting)) if waiting else ()
    if paths:
        return (Status.AWAITING_APPROVAL if any(map(is_approval, paths)) else Status.BLOCKED), paths
    if index in execution.delegates:  # its delegate's session runs, or it waits for that session's output
        pending = index in execution.delegations and index not in execution._provided
        return (Status.WAITING_FOR_OUTPUT if pending else Status.READY), ()
    latent_without_output = plan.mode is Mode.LATENT and plan.destinations is not None and not plan.has_output
    # Nobody is asked for the output of a call its parameters would refuse (SPEC 6.7): it starts, and fails on
    # them as a call to an activity does.
    if latent_without_output and index not in execution._provided \
            and parameters_refusal(plan, resolve_parameters(execution.context, plan)) is None:
        return Status.WAITING_FOR_OUTPUT, ()
    return Status.READY, ()


def _still_read(execution: Scheduled, plan: CallPlan, pending: list[str]) -> list[str]:
    """The paths of `pending` (those a writer still to finish may write) that the call's reads may yet take their
    value from: in `a || b`, b is not read once a is found with no writer of it still to finish."""
    held = frozenset(pending)
    read: set[str] = set()
    for expression in plan.reads:
        for gate in expression.alternatives:
            texts = [str(ref) for ref in gate]
            if not held.intersection(texts) and all(
                    found_alone(execution.context, ref, plan.instance) for ref in gate):
                break  # this alternative decides the value: the ones after it are not read
            read.update(texts)
    return [path for path in pending if path in read]


def writer_done(execution: Scheduled, writer: int) -> bool:
    """Whether a reader may go past this writer: it ran, its group's winner did, or it is not taken.

    A writer that failed or was cancelled leaves its readers blocked (they never read a stale value),
    unless it lost an `any`/`race` that another member of its group won.
    """
    states = execution._states
    status = states[writer].status
    if status in (Status.DONE, Status.FIRE_AND_FORGET):
        return True
    if status is Status.BLOCKED and states[writer].not_taken:
        return True  # it never runs in this plan (`not_taken`): nothing it would write is coming
    if status is Status.FAILED and states[writer].outputs:
        return True  # it failed into its error branch: what it wrote is there to read
    if status in (Status.FAILED, Status.CANCELLED):
        unit = execution._unit_of[writer]
        return unit.pattern in ("any", "race") and any(states[i].status is Status.DONE for i in unit.members)
    return False


def ready_units(execution: Scheduled, among: list[int] | None = None) -> list[Unit]:
    """The units whose open members are all ready: a group starts together or not at all.

    `among`: sorted calls, when only their units may have become ready (None: every unit is looked at).
    """
    if execution.refused or execution.lazy:
        return []
    states = execution._states
    ready = []
    for unit in execution.units if among is None else _units_of(execution._unit_of, among):
        open_members = [i for i in unit.members if states[i].status not in SETTLED]
        if open_members and all(states[i].status is Status.READY for i in open_members):
            ready.append(unit)
    return ready
