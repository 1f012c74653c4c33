"""`Execution`: a plan run tick by tick or step by step (SPEC 6.8–6.11), announcing everything it does.

Plain asyncio: the GUI drives it through qasync, the command line through `asyncio.run`. All state lives
on the object (no globals): to start again, restore the context and call `reset()` or make a new one.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from psygnal import Signal

from ._activities import Activities
from ._calls import (
    CallPlan,
    Mode,
    Problem,
    check_parameters,
    missing_reads,
    parameters_of,
    plan_call,
    resolve_call,
)
from ._context import Context
from ._delegate import Delegate, delegate_document, delegate_for
from ._document import Document
from ._errors import ExpressionError
from ._expressions import find_expressions, parse_expression
from ._groups import Unit, flatten
from ._instancing import expand_instances
from ._outputs import Clock, OutputError, check_json, error_message, run_record_message, utc_now
from ._patterns import run_pattern
from ._plan import Graph, feeds, reads_own_writes
from ._record import Record, digest, read_record
from ._running import Outcome, Provided, Timer, conclude, failure, inputs_of, invoke, perform, prepare, started_audit
from ._status import OPEN, SETTLED, Approver, CallState, Decision, Stale, Status, TickReport
from ._tools import merged_tools, pending_calls, plan_mode


def is_approval(path: str) -> bool:
    """A reference under `†state.approvals` is a gate a person opens (SPEC 6.8), not an error."""
    try:
        refs = parse_expression(path).references
    except ExpressionError:
        return False
    return len(refs) == 1 and refs[0].kind == "state" and refs[0].path[:1] == ("approvals",)


class Execution:
    """The calls of a document's solution (else its last plan), run against its context.

    Whether a call has run, and how, is read from the context's run record (`_record`) at every refresh:
    the object holds only what is under way (running tasks, errors of the tick not yet appended).

    Signals: `status_changed(CallState)`, `message_appended(context index, index of the call it is from)`,
    `tick_finished(TickReport)`, `background_finished(CallState)` (a fire-and-forget run ended).
    """

    status_changed = Signal(object)
    message_appended = Signal(int, int)
    tick_finished = Signal(object)
    background_finished = Signal(object)

    def __init__(
        self,
        source: Document | Context,
        solution: Any = None,
        *,
        activities: Activities | None = None,
        tools: dict[str, dict[str, Any]] | None = None,
        clock: Clock = utc_now,
        timeout: float = 60.0,
        approver: Approver | None = None,
        breakpoints: Iterable[int | str] = (),
        timer: Timer = time.perf_counter,
        turns: Any = None,
        base: Path | None = None,
        chain: tuple[Path, ...] = (),
        path: Path | None = None,
    ) -> None:
        if isinstance(source, Document):
            self.context = source.context
            solution = source.solution if solution is None else solution
            path = source.path if path is None else path
        else:
            self.context = source
        if path is not None:  # the document's file: delegate files are found next to it (014)
            base = path.parent if base is None else base
            chain = chain or (path.resolve(),)
        self.turns = turns  # who produces a delegate's turns (the Loop's `turns`)
        self.base, self.chain = base, chain
        self.solution = solution
        self.activities = activities if activities is not None else Activities()
        self.code_tools = dict(tools or {})
        self.clock = clock
        self.timeout = timeout
        self.timer = timer  # measures each run's `_run.seconds`
        self.approver = approver
        self.breakpoints: set[int | str] = set(breakpoints)
        self.conditions: dict[int, str] = {}  # call index -> a `†` expression: its breakpoint holds only when truthy
        self.break_on_failure = False  # run() starts nothing more once a call has failed
        self._tasks: dict[int, asyncio.Future[Any]] = {}
        self._background: dict[int, asyncio.Future[Any]] = {}
        self._ticking = False
        self._holding = False  # pause(): the tick starts nothing more
        self._generation = 0
        self.reset()

    # -- set-up --------------------------------------------------------------------------------

    def reset(self) -> None:
        """Read the calls again and derive every status from the context's run record.

        To start over, restore the context first (remove the outputs). Refused during a tick: `cancel()`
        and let the tick end first.
        """
        if self._ticking:
            raise RuntimeError("cannot reset during a tick: cancel() it and let it end first")
        self._generation += 1  # fire-and-forget runs of the old generation no longer report
        for task in {*self._tasks.values(), *self._background.values()}:
            task.cancel()
        self._tasks, self._background = {}, {}
        entries, self.plan_index = pending_calls(self.context, self.solution)
        calls, self.units = flatten(expand_instances(entries, self.context))
        self.calls: list[Any] = calls  # as written: what the record matches against
        self.lazy = plan_mode(self.context) == "lazy"  # 012: a lazy plan waits for approve_plan()
        self._unit_of = {index: unit for unit in self.units for index in unit.members}
        self._tools = merged_tools(self.context, self.code_tools)
        self.plans = [plan_call(i, call, self._tools, self.activities) for i, call in enumerate(calls)]
        self._graph = Graph.of(self.plans)
        self._states = [CallState(i, call) for i, call in enumerate(calls)]
        self._provided: dict[int, Provided] = {}
        self._errors: list[tuple[int, dict[str, Any]]] = []
        self._resume: int | None = None
        self._again: dict[int, frozenset[int]] = {}  # re-run: the record messages of earlier runs to leave out
        self._structural: dict[int, list[Problem]] = {}
        self.delegates: dict[int, Delegate] = {}
        self.delegations: dict[int, Any] = {}  # the nested session (a Loop) of each delegated call that ran
        for plan in self.plans:
            problems = list(plan.problems) or self._literal_problems(plan)
            found, refusal = delegate_for(plan, self.base, self.chain, self.code_tools)
            if refusal is not None:
                problems.append(refusal)
            elif found is not None:
                self.delegates[plan.index] = found
            if problems:
                self._structural[plan.index] = problems
        self._check_groups()
        self.refused = tuple(self._graph.cycles())
        for cycle in self.refused:
            text = self._graph.describe_cycle(cycle, self.plans)
            for index in cycle:
                self._structural.setdefault(index, []).append(Problem("cycle", text))
        self._refresh()

    def problems(self, index: int) -> tuple[Problem, ...]:
        """What keeps call `index` from running, found before anything ran: its structure, literal
        parameters, its group, a cycle (the call is failed; its first problem is its `error`)."""
        return tuple(self._structural.get(index, ()))

    @property
    def graph(self) -> Graph:
        """Who feeds whom among the calls (`Graph.feeders`) and the cycles that refuse the plan."""
        return self._graph

    def describe_cycle(self, cycle: tuple[int, ...]) -> str:
        """A refused cycle in words: its calls and the paths that link them."""
        return self._graph.describe_cycle(cycle, self.plans)

    def _literal_problems(self, plan: CallPlan) -> list[Problem]:
        """Parameters without references are checked before anything runs (SPEC 6.7)."""
        if plan.tool is None or any(True for _ in find_expressions(parameters_of(plan.call))):
            return []
        problem = check_parameters(plan, resolve_call(self.context, plan))
        return [] if problem is None else [problem]

    def _check_groups(self) -> None:
        for unit in self.units:
            if unit.pattern == "one":
                continue
            plans = [self.plans[i] for i in unit.members]
            linked = [(a.index, b.index) for a in plans for b in plans if feeds(a, b)]
            if linked:
                text = f"calls of one {unit.pattern!r} group run together and cannot feed each other: " + ", ".join(
                    f"call {a} feeds call {b}" for a, b in linked)
                for i in unit.members:
                    self._structural.setdefault(i, [Problem("group", text)])

    # -- reading -------------------------------------------------------------------------------

    @property
    def states(self) -> list[CallState]:
        return list(self._states)

    def state(self, index: int) -> CallState:
        return self._states[index]

    @property
    def record(self) -> Record:
        """The run record as of the last refresh: which calls ran, with which messages and audit."""
        return self._record

    def refresh(self) -> None:
        """Read the record and readiness again after the context was edited (Step and Continue do it too)."""
        self._refresh()

    def ready(self) -> list[int]:
        """The calls that would start now, in plan order (group members together)."""
        return [i for unit in self._ready_units() for i in unit.members if self._states[i].status is Status.READY]

    @property
    def finished(self) -> bool:
        """Nothing is running and nothing is ready (the next tick would do nothing)."""
        return not self._tasks and not self._ready_units()

    # -- state changes -------------------------------------------------------------------------

    def _set(self, index: int, **changes: Any) -> None:
        old = self._states[index]
        new = replace(old, **changes)
        if new != old:
            self._states[index] = new
            self.status_changed.emit(new)

    def _fail(self, index: int, problems: list[Problem], *, report: bool = True,
              audit: dict[str, Any] | None = None) -> None:
        first = problems[0]
        status = Status.CANCELLED if first.type == "cancelled" else Status.FAILED
        self._set(index, status=status, waiting_for=(), error={"type": first.type, "message": first.message})
        if report:
            call = self._states[index].call
            run = {**self._identity(index), **(audit or {})}
            self._errors.extend((index, error_message(call, p.type, p.message, self.clock, run)) for p in problems)

    def _identity(self, index: int) -> dict[str, Any]:
        """What ties a record message to its call: its position, and the call as planned when an approval edited it."""
        identity: dict[str, Any] = {"call": index}
        if self.plans[index].call is not self.calls[index]:
            identity["planned"] = self.calls[index]
        return identity

    def _readiness(self, index: int) -> tuple[Status, tuple[str, ...]]:
        plan = self.plans[index]
        waiting: list[str] = []
        for writer, paths in self._graph.feeders[index].items():
            if not self._writer_done(writer):
                waiting.extend(paths)
        # Reads a pending writer will provide are already named; resolve only the others (the costly part).
        waiting.extend(missing_reads(self.context, plan, skip=frozenset(waiting)))
        paths = tuple(dict.fromkeys(waiting))
        if paths:
            return (Status.AWAITING_APPROVAL if any(map(is_approval, paths)) else Status.BLOCKED), paths
        if index in self.delegates:  # its delegate's session runs, or it waits for that session's output
            pending = index in self.delegations and index not in self._provided
            return (Status.WAITING_FOR_OUTPUT if pending else Status.READY), ()
        latent_without_output = plan.mode is Mode.LATENT and plan.destinations is not None and not plan.has_output
        if latent_without_output and index not in self._provided:
            return Status.WAITING_FOR_OUTPUT, ()
        return Status.READY, ()

    def _writer_done(self, writer: int) -> bool:
        """Whether a reader may go past this writer: it ran, or its group's winner did.

        A writer that failed or was cancelled leaves its readers blocked (they never read a stale value),
        unless it lost an `any`/`race` that another member of its group won.
        """
        status = self._states[writer].status
        if status in (Status.DONE, Status.FIRE_AND_FORGET):
            return True
        if status is Status.FAILED and self._states[writer].outputs:
            return True  # it failed into its error branch: what it wrote is there to read
        if status in (Status.FAILED, Status.CANCELLED):
            unit = self._unit_of[writer]
            return unit.pattern in ("any", "race") and any(
                self._states[i].status is Status.DONE for i in unit.members)
        return False

    def _refresh(self) -> None:
        ignore = frozenset().union(*self._again.values()) if self._again else frozenset()
        self._record = read_record(self.context, self.calls, self.plan_index, ignore)
        reported = {index for index, _ in self._errors}
        for index, problems in self._structural.items():  # found before running: reported unless recorded
            if index not in reported and self._record.of(index) is None:
                self._fail(index, problems)
                reported.add(index)
        for unit in self.units:
            # A group that ran is over for all its members: the losers and discarded ones are cancelled.
            # A member refused before running does not end an `any` or a `race`: the others may still win.
            forgiving = unit.pattern in ("any", "race")
            settled = any((self._record.of(i) is not None or i in reported)
                          and not (forgiving and i in self._structural) for i in unit.members)
            for index in unit.members:
                self._derive(index, reported, group_settled=settled and unit.pattern != "one")
        if self.refused:
            return  # a refused plan runs nothing: its other calls stay pending
        for state in self._states:
            if state.status in OPEN:
                status, paths = self._readiness(state.index)
                failed = tuple(writer for writer in self._graph.feeders[state.index]
                               if self._states[writer].status in (Status.FAILED, Status.CANCELLED)
                               and not self._writer_done(writer))
                self._set(state.index, status=status, waiting_for=paths, failed_writers=failed)

    def _derive(self, index: int, reported: set[int], *, group_settled: bool) -> None:
        """A call's status from the record; only what is under way is taken from memory."""
        state = self._states[index]
        if state.status is Status.RUNNING or index in self._background or index in reported:
            return
        found = self._record.of(index)
        if found is not None:
            error = found.error
            if error is not None:
                status = Status.CANCELLED if error.get("type") == "cancelled" else Status.FAILED
                self._set(index, status=status, waiting_for=(), error=error, outputs=found.outputs)
            elif (self.plans[index].mode is Mode.EXPLICIT and self.plans[index].destinations is None
                  and index not in self.delegates):
                finished = state.finished or state.status is not Status.FIRE_AND_FORGET
                self._set(index, status=Status.FIRE_AND_FORGET, waiting_for=(), finished=finished)
            else:
                self._set(index, status=Status.DONE, waiting_for=(), error=None, outputs=found.outputs)
        elif group_settled:  # a member that failed and was forgiven keeps its error until the group is undone
            if state.status is not Status.FAILED:
                self._set(index, status=Status.CANCELLED, waiting_for=())
        elif state.status not in OPEN:  # its record was removed (an undo): it has not run
            self._set(index, status=Status.PENDING, waiting_for=(), error=None, outputs=(), result=None,
                      finished=False)

    def approve_plan(self) -> None:
        """Let a lazy plan run (012's checkpoint: validated, simulated, then approved)."""
        self.lazy = False

    def _ready_units(self) -> list[Unit]:
        if self.refused or self.lazy:
            return []
        ready = []
        for unit in self.units:
            open_members = [i for i in unit.members if self._states[i].status not in SETTLED]
            if open_members and all(self._states[i].status is Status.READY for i in open_members):
                ready.append(unit)
        return ready

    # -- running -------------------------------------------------------------------------------

    async def run(self) -> TickReport:
        """One tick: run ready calls concurrently until nothing is ready and nothing runs, or a breakpoint."""
        return await self._tick(stepping=False)

    async def step(self, index: int | None = None) -> TickReport:
        """Run the next ready call in plan order (or call `index`, which must be ready), and wait for it.

        A step is a tick of its own: its errors are appended when it ends. Breakpoints do not stop a step.
        """
        if self.lazy:
            raise ValueError("the plan is lazy: it waits until approve_plan()")
        if not self._ticking:
            self._refresh()  # the context may have been edited since (an approval, an undo)
        if index is not None and index not in self.ready():
            state = self._states[index]
            raise ValueError(f"call {index} is not ready: it is {state.status}")
        return await self._tick(stepping=True, target=index)

    async def _tick(self, *, stepping: bool, target: int | None = None) -> TickReport:
        if self._ticking:
            raise RuntimeError("a tick is already running")
        self._ticking = True
        ran: list[int] = []
        stopped: int | None = None
        failed: int | None = None
        running: dict[asyncio.Future[Any], Unit] = {}
        try:
            self._refresh()
            while True:
                progressed = False
                if stopped is None and not (stepping and ran) and not self._holding:
                    for unit in self._ready_units():
                        if self._holding:  # paused while an earlier unit was being approved
                            break
                        if target is not None and target not in unit.members:
                            continue
                        if not stepping and self._hits_breakpoint(unit):
                            stopped = next(i for i in unit.members if self._states[i].status is Status.READY)
                            self._resume = unit.entry
                            break
                        if self._resume == unit.entry:
                            self._resume = None
                        progressed = True
                        members = await self._approve(unit)
                        failed = failed if failed is not None or stepping else self._failure_in(unit)
                        if members:
                            ran.extend(members)
                            task = self._start(unit, members)
                            if task is not None:
                                running[task] = unit
                        if stepping:
                            break
                if not running:
                    if progressed and not stepping:
                        self._refresh()
                        continue
                    break
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=lambda t: running[t].entry):
                    unit = running.pop(task)
                    self._finish(unit, task)
                    failed = failed if failed is not None or stepping else self._failure_in(unit)
                self._refresh()
        finally:
            self._ticking = False
            self._holding = False
            for task, unit in running.items():  # the tick itself was cancelled
                task.cancel()
                for i in unit.members:
                    self._tasks.pop(i, None)
                    if self._states[i].status is Status.RUNNING:
                        self._set(i, status=Status.CANCELLED)
        return self._end_tick(ran, stopped, failed)

    def _hits_breakpoint(self, unit: Unit) -> bool:
        if self._resume == unit.entry:
            return False  # stopped here last time: continuing runs it
        return any((i in self.breakpoints or self.plans[i].tool_name in self.breakpoints) and self._condition_holds(i)
                   for i in unit.members)

    def _failure_in(self, unit: Unit) -> int | None:
        """With `break_on_failure`: the member of `unit` that failed (refused, rejected, raised); the tick then
        starts nothing more."""
        if not self.break_on_failure:
            return None
        failed = next((i for i in unit.members if self._states[i].status is Status.FAILED), None)
        self._holding = self._holding or failed is not None
        return failed

    def _condition_holds(self, index: int) -> bool:
        """A conditional breakpoint holds when its expression is found, for the call's instance, and truthy.

        A malformed condition always stops (better a stop too many than a side effect run past unseen).
        """
        condition = self.conditions.get(index)
        if condition is None:
            return True
        try:
            found = self.context.resolve(condition, instance=self.plans[index].instance)
        except ExpressionError:
            return True
        return found.found and bool(found.value)

    async def _approve(self, unit: Unit) -> list[int]:
        """Ask the approval hook about each ready member; returns the members that may run."""
        approved: list[int] = []
        for index in unit.members:
            if self._states[index].status is not Status.READY:
                continue
            if self.approver is None:
                approved.append(index)
                continue
            try:
                decision = self.approver(self._states[index])
                if inspect.isawaitable(decision):
                    decision = await decision
            except Exception as error:
                self._fail(index, [Problem("approval", f"the approval hook raised {type(error).__name__}: {error}")])
                continue
            if isinstance(decision, Decision) and decision.action == "approve":
                approved.append(index)
            elif isinstance(decision, Decision) and decision.action == "reject":
                self._fail(index, [Problem("rejected", decision.reason or "rejected by the approval hook")])
            elif isinstance(decision, Decision) and decision.action == "edit":
                if self._edit(index, decision.call):
                    approved.append(index)
            else:
                self._fail(index, [Problem("approval", f"the approval hook answered {decision!r}, not a Decision")])
        if unit.pattern == "all" and len(approved) < len(unit.members):
            for index in approved:  # all or nothing: one member refused cancels the group
                self._set(index, status=Status.CANCELLED)
            return []
        return approved

    def _edit(self, index: int, call: Any) -> bool:
        """Replace the call with the hook's edit; True when the edited call is valid and ready."""
        plan = plan_call(index, call, self._tools, self.activities)
        self.plans[index] = plan
        self._graph = Graph.of(self.plans)
        self._set(index, call=call)
        problems = list(plan.problems) or self._literal_problems(plan)
        if problems:
            self._fail(index, problems)
            return False
        status, paths = self._readiness(index)
        self._set(index, status=status, waiting_for=paths)
        return status is Status.READY

    def _start(self, unit: Unit, members: list[int]) -> asyncio.Future[Any] | None:
        plan = self.plans[members[0]]
        explicit = plan.mode is Mode.EXPLICIT and members[0] not in self.delegates
        if unit.pattern == "one" and explicit and plan.destinations is None:
            self._fire_and_forget(plan)
            return None
        for index in members:
            self._set(index, status=Status.RUNNING, waiting_for=())
        task = asyncio.ensure_future(run_pattern(unit.pattern, members, self._perform))
        for index in members:
            self._tasks[index] = task
        return task

    async def _perform(self, index: int) -> Outcome:
        if index in self.delegates:
            return await self._delegate(index)
        provided = self._provided.get(index)
        return await perform(self.plans[index], self.context, self.clock, self.timeout, provided,
                             self._identity(index), self.timer)

    async def _delegate(self, index: int) -> Outcome:
        """Run call `index` in its delegate (014): a nested loop over the clean-room request, whose final
        output is the call's result. Without one yet (no turn to take), the call waits for that output."""
        from ._loop import LoopStatus  # the loop is built on Execution

        plan = self.plans[index]
        resolved, problem = prepare(plan, self.context)
        audit = started_audit(self._identity(index), resolved, self.clock)
        if problem is not None:
            return Outcome(index, error=(problem.type, problem.message), audit=audit)
        provided = self._provided.get(index)
        if provided is not None:  # given by hand, or by its finished session (complete_delegation)
            return conclude(plan, provided.value, self.clock, {**audit, **(provided.audit or {})},
                            provided.alternative)
        loop = self.delegations.get(index)
        if loop is None:
            loop = self._open_delegation(index, resolved)
        if await loop.run() is not LoopStatus.FINISHED:
            return Outcome(index, waiting=True)
        return conclude(plan, loop.output, self.clock, audit)

    def delegation(self, index: int) -> Any:
        """The nested session (a `Loop`) of delegated call `index`, opened now without running anything when
        it has none: its clean-room context is resolved up front from the context as it stands (014, 015).

        A debugger steps into it; its output is written at the call's output path by `complete_delegation`.
        Raises ValueError when the call does not delegate or cannot run now (its parameters break its tool).
        """
        found = self.delegations.get(index)
        if found is not None:
            return found
        if index not in self.delegates:
            problem = self._structural.get(index)
            raise ValueError(problem[0].message if problem else f"call {index} does not delegate")
        state = self._states[index]
        if state.status is not Status.READY:
            raise ValueError(f"call {index} is not ready: it is {state.status}")
        resolved, refusal = prepare(self.plans[index], self.context)
        if refusal is not None:
            raise ValueError(f"call {index}: {refusal.type}: {refusal.message}")
        loop = self._open_delegation(index, resolved)
        self._refresh()  # the call now waits for its session's output
        return loop

    def _open_delegation(self, index: int, resolved: dict[str, Any]) -> Any:
        from ._loop import Loop  # the loop is built on Execution

        plan, spec = self.plans[index], self.delegates[index]
        base = spec.path.parent if spec.path is not None else self.base
        chain = (*self.chain, spec.path) if spec.path is not None else self.chain
        loop = Loop(delegate_document(spec, plan, resolved, self.context), turns=self.turns, base=base,
                    chain=chain, activities=self.activities, tools=self.code_tools, clock=self.clock,
                    timeout=self.timeout, timer=self.timer)
        self.delegations[index] = loop
        return loop

    def complete_delegation(self, index: int) -> CallState:
        """Write the output of call `index`'s nested session, once that session has finished."""
        from ._loop import LoopStatus

        loop = self.delegations.get(index)
        if loop is None or loop.status is not LoopStatus.FINISHED:
            raise ValueError(f"call {index} has no finished delegate session")
        return self.provide_output(index, loop.output)

    def _fire_and_forget(self, plan: CallPlan) -> None:
        """Run, don't wait, drop the result; a run record says it started (SPEC 6.6)."""
        resolved, problem = prepare(plan, self.context)
        if problem is not None:
            self._fail(plan.index, [problem])
            return
        self._set(plan.index, status=Status.FIRE_AND_FORGET, waiting_for=(), finished=False)
        self._append(run_record_message(plan.call, self.clock,
                                        started_audit(self._identity(plan.index), resolved, self.clock)), plan.index)

        generation = self._generation

        async def background() -> None:
            changes: dict[str, Any] = {"finished": True}
            try:
                changes["result"] = await invoke(plan, resolved, self.context, self.timeout)
            except asyncio.CancelledError:
                changes["error"] = {"type": "cancelled", "message": "cancelled"}
            except Exception as error:
                kind, text = failure(plan, error, self.timeout).error or ("error", "")
                changes["error"] = {"type": kind, "message": text}
            if generation != self._generation:
                return  # reset meanwhile: this run belongs to a run that no longer exists
            self._background.pop(plan.index, None)
            self._set(plan.index, **changes)
            self.background_finished.emit(self._states[plan.index])

        self._background[plan.index] = asyncio.ensure_future(background())

    def _finish(self, unit: Unit, task: asyncio.Future[Any]) -> None:
        for index in unit.members:
            self._tasks.pop(index, None)
        if task.cancelled():  # cancel(): recorded, so that it does not start again by itself
            for index in unit.members:
                if self._states[index].status is Status.RUNNING:
                    self._fail(index, [Problem("cancelled", "cancelled while running")])
            return
        for index, outcome, keep in task.result():
            self._settle(index, outcome, keep)

    def _settle(self, index: int, outcome: Outcome | None, keep: bool) -> None:
        if outcome is not None and outcome.waiting:  # a delegate session waits for its next turn
            self._set(index, status=Status.WAITING_FOR_OUTPUT, waiting_for=())
        elif outcome is None:
            self._set(index, status=Status.CANCELLED)
        elif outcome.error is not None:
            # A failure the plan has a branch for is written there instead of an error message (012).
            self._fail(index, [Problem(*outcome.error)], report=keep and not outcome.messages, audit=outcome.audit)
            ids = tuple(self._append(message, index) for message in outcome.messages) if keep else ()
            self._set(index, result=outcome.result, outputs=ids)
        elif not keep:
            self._set(index, status=Status.CANCELLED, result=outcome.result)
        else:
            ids = tuple(self._append(message, index) for message in outcome.messages)
            self._set(index, status=Status.DONE, outputs=ids, result=outcome.result)

    def _append(self, message: dict[str, Any], call_index: int) -> int:
        self.context.append(message)
        position = len(self.context) - 1
        self.message_appended.emit(position, call_index)
        return self.context.id_at(position)

    def _end_tick(self, ran: list[int], stopped: int | None, failed: int | None = None) -> TickReport:
        errors = [message for _, message in self._errors]
        for index, message in self._errors:
            self._append(message, index)
        self._errors = []
        self._refresh()
        by_status = {status: [s for s in self._states if s.status is status] for status in Status}
        report = TickReport(
            ran=tuple(ran),
            blocked=tuple((s.index, s.waiting_for) for s in by_status[Status.BLOCKED]),
            awaiting_approval=tuple((s.index, s.waiting_for) for s in by_status[Status.AWAITING_APPROVAL]),
            waiting_for_output=tuple(s.index for s in by_status[Status.WAITING_FOR_OUTPUT]),
            errors=tuple(errors),
            refused=self.refused,
            stopped_at=stopped,
            failed_at=failed,
            lazy=self.lazy,
        )
        self.tick_finished.emit(report)
        return report

    # -- from outside --------------------------------------------------------------------------

    def provide_output(
        self, index: int, value: Any, *, alternative: int = 0, audit: dict[str, Any] | None = None
    ) -> CallState:
        """Give a latent call without `_output` its result (an LLM's, or a person's).

        `alternative` picks the branch of `a || b` it goes to; `audit` adds keys to its `_run` (a model's
        exchange). When the call is ready it is written at once (its own tick: errors are appended now);
        otherwise the value is kept and written when the call becomes ready.
        """
        plan, _ = self._waiting(index)
        try:
            check_json(value, "output")
        except OutputError as error:
            raise ValueError(str(error)) from None
        assert plan.destinations is not None
        if not 0 <= alternative < len(plan.destinations.alternatives):
            raise ValueError(f"call {index} has no alternative {alternative} in {plan.output_path!r}")
        self._provided[index] = Provided(value, alternative, audit)
        self._refresh()
        unit = next(u for u in self.units if index in u.members)
        if unit.pattern == "one" and self._states[index].status is Status.READY and not self.lazy:
            resolved, problem = prepare(plan, self.context)
            run = {**started_audit(self._identity(index), resolved, self.clock), **(audit or {})}
            outcome = conclude(plan, value, self.clock, run, alternative) if problem is None else Outcome(
                index, error=(problem.type, problem.message), audit=run)
            self._settle(index, outcome, True)
            self._end_tick([index], None)
        return self._states[index]

    def fail_output(self, index: int, error_type: str, text: str, *, audit: dict[str, Any] | None = None,
                    details: dict[str, Any] | None = None) -> CallState:
        """A latent call waiting for its output gets an error instead: a model whose answer did not validate
        (`details` carry its raw reply, `audit` its exchange). Appended at once, as a tick of its own."""
        plan, _ = self._waiting(index)
        self._set(index, status=Status.FAILED, waiting_for=(), error={"type": error_type, "message": text})
        resolved, _ = prepare(plan, self.context)
        run = {**started_audit(self._identity(index), resolved, self.clock), **(audit or {})}
        self._errors.append((index, error_message(plan.call, error_type, text, self.clock, run, details)))
        self._end_tick([index], None)
        return self._states[index]

    def _waiting(self, index: int) -> tuple[CallPlan, CallState]:
        plan, state = self.plans[index], self._states[index]
        waits = (plan.mode is Mode.LATENT and not plan.has_output) or index in self.delegates
        if not waits or plan.destinations is None:
            raise ValueError(f"call {index} does not wait for an output")
        if state.status not in OPEN:
            raise ValueError(f"call {index} is already {state.status}")
        return plan, state

    def pause(self) -> None:
        """The running tick starts no more calls; it ends when the calls already running have finished."""
        if self._ticking:
            self._holding = True

    def rerun(self, indices: Iterable[int], *, dependents: bool = True) -> tuple[int, ...]:
        """Let calls that ran run again: their earlier outputs stay, and the new ones shadow them in the fold.

        A group runs again whole. With `dependents`, so does every call that ran on what they write.
        Returns the calls now pending again.
        """
        chosen = {member for index in indices for member in self._unit_of[index].members}
        if dependents:
            readers: dict[int, set[int]] = {}
            for reader, feeders in self._graph.feeders.items():
                for writer in feeders:
                    readers.setdefault(writer, set()).add(reader)
            todo = list(chosen)
            while todo:
                for reader in readers.get(todo.pop(), ()):
                    for member in self._unit_of[reader].members:
                        if member not in chosen and self._record.of(member) is not None:
                            chosen.add(member)
                            todo.append(member)
        for index in chosen:
            found = self._record.of(index)
            if found is not None:
                self._again[index] = self._again.get(index, frozenset()) | {e.message_id for e in found.entries}
            if index in self.delegates:  # a new clean room, from the inputs as they are now
                self.delegations.pop(index, None)
                self._provided.pop(index, None)
        self._refresh()
        return tuple(sorted(i for i in chosen if self._states[i].status in OPEN))

    def stale(self) -> list[Stale]:
        """The calls that ran with inputs other than the ones they would receive now (or were edited since)."""
        found: list[Stale] = []
        for index, recorded in sorted(self._record.calls.items()):
            if self._states[index].status in (Status.RUNNING, *OPEN):
                continue
            audit = recorded.audit
            if "digest" not in audit and not recorded.edited:
                continue  # written before inputs were recorded: nothing to compare with
            plan = self.plans[index]
            # A call reading its own destination is compared as of just before its own latest write.
            at = recorded.last[0].position if reads_own_writes(plan) else None
            now = inputs_of(resolve_call(self.context, plan, at=at))
            if recorded.edited or digest(now) != audit.get("digest"):
                found.append(Stale(index, audit.get("inputs"), now, recorded.edited))
        return found

    def cancel(self, index: int | None = None) -> None:
        """Cancel the running call `index` (its whole group), or everything running and in the background."""
        if index is None:
            tasks = {*self._tasks.values(), *self._background.values()}
        else:
            tasks = {task for task in (self._tasks.get(index), self._background.get(index)) if task is not None}
        for task in tasks:
            task.cancel()

    async def drain(self) -> None:
        """Wait for every fire-and-forget run to end."""
        while self._background:
            await asyncio.gather(*self._background.values(), return_exceptions=True)
