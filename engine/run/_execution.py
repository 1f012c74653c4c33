"""`Execution`: a plan run tick by tick or step by step (SPEC 6.8–6.11), announcing everything it does.

Plain asyncio: the GUI drives it through qasync, the command line through `asyncio.run`. All state lives
on the object (no globals): to start again, restore the context and call `reset()` or make a new one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import operator
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from itertools import takewhile
from pathlib import Path
from typing import Any, ClassVar, Protocol

from psygnal import Signal

from ..calls._activities import Activities, as_activities, seconds
from ..calls._calls import CallPlan, Mode, Problem, plan_call
from ..calls._outputs import Clock, OutputError, check_json, error_message, run_record_message, utc_now
from ..calls._plan import Graph
from ..calls._record import Record, RecordReader, call_texts
from ..calls._status import OPEN, SETTLED, Approver, CallState, Stale, Status, TickReport
from ..calls._tools import SolutionRefused, plan_mode, solution_problem
from ..document._context import Context
from ..document._document import Document
from ..document._json import batch_collector
from ..protocol._groups import Unit
from ._approval import approve
from ._breakpoints import breakpoint_set, hits_breakpoint
from ._delegate import Delegate
from ._patterns import run_pattern
from ._plans import Plans
from ._pool import Jobs
from ._readiness import derive_statuses, ready_units
from ._rerun import stale_calls, with_dependents
from ._running import Outcome, Provided, Replay, Timer, conclude, failure, invoke, perform, prepare, started_audit
from ._setup import literal_problems, set_up

# A tick keeps at most this many units started at once; the other ready ones start as those settle. Each started
# call is a task, its coroutines, a future and a timeout: a plan of 100,000 ready calls started together held
# them all at once, while activities run a few at a time anyway (32 threads in-process, a few worker processes).
MOST_STARTED = 1024
# Every this many calls started, calls performed or messages appended in a tick, what is alive is set aside
# from the cyclic garbage collector until the tick ends (`gc.freeze`): each full collection scans the whole
# heap, and a long run's tasks, messages and record only grow, so without it those scans would be a large part
# of its CPU. Garbage made meanwhile that is not collected young waits for the tick's end (`gc.unfreeze`), unless
# the host had frozen its own heap before (the window does, and collects what is frozen itself).
_FREEZE_EVERY = 8192
# A derivation judges only the calls affected since the last one (`_readiness._affected`) until more than this
# many calls (and an eighth of the plan) changed state meanwhile.
_JUDGE_ALL_PAST = 256
_STATE_FIELDS = operator.attrgetter(*(field.name for field in dataclasses.fields(CallState)))


class Sessions(Protocol):
    """Delegated calls' nested sessions (014, 015): opened, run to the call's outcome, and their output read."""

    def open(self, execution: Execution, index: int) -> Any: ...

    async def run(self, execution: Execution, index: int) -> Outcome: ...

    def finished_output(self, execution: Execution, index: int) -> Any: ...


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

    _record: Record  # set by every refresh (`derive_statuses`)
    # Who opens and runs a delegated call's nested session (014): the session layer above this module plugs
    # itself in (`_delegation.LoopSessions`, over `Loop`), so that `Execution` never imports the `Loop` built on it.
    sessions: ClassVar[Sessions | None] = None

    def __init__(
        self,
        source: Document | Context,
        solution: Any = None,
        *,
        activities: Activities | Mapping[str, Callable[..., Any]] | Iterable[Callable[..., Any]] | None = None,
        tools: dict[str, dict[str, Any]] | None = None,
        clock: Clock = utc_now,
        timeout: float = 60.0,
        approver: Approver | None = None,
        breakpoints: Iterable[int | str] = (),
        timer: Timer = time.perf_counter,
        turns: Any = None,
        outputs: Any = None,
        base: Path | None = None,
        chain: tuple[Path, ...] = (),
        path: Path | None = None,
        in_process: bool = False,
        replay: Replay | None = None,
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
        self.outputs = outputs  # who answers a delegate's latent calls (the Loop's `outputs`)
        self.base, self.chain = base, chain
        unusable = solution_problem(solution)
        if unusable is not None:  # a run of it would stop midway (a call it cannot quote) or run another plan
            raise SolutionRefused(unusable)
        self.solution = solution
        self.activities = as_activities(activities)
        self.code_tools = dict(tools or {})
        if not callable(clock):
            raise TypeError(f"clock must be a function returning the date, got {type(clock).__name__} {clock!r}")
        if approver is not None and not callable(approver):  # (else each call would fail with an approval error)
            raise TypeError(f"approver must be a function of a call's state, or None; got {type(approver).__name__}")
        self.clock = clock
        self.timeout = seconds(timeout)
        self.timer = timer  # measures each run's `_run.seconds`
        # Activities loaded from a file run in worker processes (`_pool`) unless the user chose speed instead.
        self.in_process = in_process
        self._jobs = Jobs()
        self.replay = replay  # recorded activity results to give instead of running (an experiment's)
        self.approver = approver
        self.breakpoints: set[int | str] = set()
        self.conditions: dict[int, str] = {}  # call index -> a `†` expression: its breakpoint holds only when truthy
        self.break_on_failure = False  # run() starts nothing more once a call has failed
        # Awaited in a tick between two calls started or settled, and before each call's own work: a window lets its
        # event loop turn there, so a tick of hundreds of calls is not one long block of its GUI thread (the calls
        # started in one turn would otherwise all run in the next). None: the tick goes straight on.
        self.pace: Callable[[], Awaitable[None]] | None = None
        self._tasks: dict[int, asyncio.Future[Any]] = {}
        self._background: dict[int, asyncio.Future[Any]] = {}
        self._ticking = False
        self._holding = False  # pause(): the tick starts nothing more
        self._grown = 0  # calls started and performed, messages appended: every so many, a tick freezes the heap
        self._froze = False
        self._host_froze = False  # what was frozen before this tick's first freeze: not ours to unfreeze
        self._generation = 0
        # (context revision, length) when the statuses were last derived, until a call's state changes:
        # a tick that starts with nothing changed since does not derive them again.
        self._derived: tuple[int, int] | None = None
        # Planning a large plan allocates a few dozen lasting objects a call and hardly any garbage: the young
        # generation is collected in batches meanwhile, as a tick without a pace does.
        with batch_collector():
            self.reset()
        self.breakpoints = breakpoint_set(breakpoints, len(self.calls))

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
        self._jobs.stop()
        self._tasks, self._background = {}, {}
        setup = set_up(self.context, self.solution, self.activities, self.code_tools, self.base, self.chain)
        self.plan_index, self.units, self._tools = setup.plan_index, setup.units, setup.tools
        self.calls: list[Any] = setup.calls  # as written: what the record matches against
        self.call_texts = call_texts(self.calls)  # canonical texts, serialised once for every reading of the record
        self._reader = RecordReader(self.call_texts, self.plan_index)  # what it read, kept between refreshes
        self.lazy = plan_mode(self.context) == "lazy"  # 012: a lazy plan waits for approve_plan()
        # Call index -> its unit (`flatten`): the units themselves when every call is alone (a list a call less).
        alone = len(self.units) == len(self.calls) and all(unit.members for unit in self.units)
        self._unit_of = self.units if alone else [unit for unit in self.units for _ in unit.members]
        self.plans, self._graph = Plans(setup.plans, self.calls, self._tools), setup.graph
        self._states = [CallState(plan.index, call) for plan, call in zip(self.plans, self.calls, strict=True)]
        self._open = len(self._states)  # how many calls are open (`OPEN`): every one, pending
        self._touched: set[int] | None = None  # (see `_readiness.Scheduled`): the first derivation judges every call
        self._held: dict[int, CallState] | None = None  # inside `announcing_once`: each changed call's state before
        self._length, self._appended, self._wrote_errors = 0, 0, False
        self._provided: dict[int, Provided] = {}
        self._errors: list[tuple[int, dict[str, Any]]] = []
        self._resume: int | None = None
        self._again: dict[int, frozenset[int]] = {}  # re-run: the record messages of earlier runs to leave out
        self._structural: dict[int, list[Problem]] = setup.structural
        self.delegates: dict[int, Delegate] = setup.delegates
        self.delegations: dict[int, Any] = {}  # the nested session (a Loop) of each delegated call that ran
        self.refused = setup.refused
        self.origins = setup.origins
        derive_statuses(self)

    def problems(self, index: int) -> tuple[Problem, ...]:
        """What keeps call `index` from running, found before anything ran: its structure, literal
        parameters, its group, a cycle (the call is failed; its first problem is its `error`)."""
        return tuple(self._structural.get(index, ()))

    @property
    def graph(self) -> Graph:
        """Who feeds whom among the calls (`Graph.feeders`) and the cycles that refuse the plan."""
        return self._graph

    def describe_cycle(self, cycle: tuple[int, ...]) -> str:
        """A refused cycle in words: its calls as written, the instance they run for, the paths that link them."""
        return self._graph.describe_cycle(cycle, self.plans, self.origins, instance=True)

    def written_label(self, index: int, *, tool: bool = True) -> str:
        """Call `index` named as the plan is written (with its tool): a copy the run makes of a call per instance
        (013) is its call's number, with the instance it runs for."""
        number, instance = (index, None) if self.origins is None else self.origins[index]
        named = f" ({self.plans[index].tool_name or '?'})" if tool else ""
        return f"call {number}{named}" + ("" if instance is None else f" for instance {instance}")

    def replan(self, index: int, call: Any) -> list[Problem]:
        """Call `index` becomes `call` (an approval's edit): planned again, its problems returned."""
        plan = self.plans[index] = plan_call(index, call, self._tools, self.activities)
        self._graph = Graph.of(list(self.plans))
        self._touched = None  # who feeds whom may have changed
        self._set(index, call=call)
        return list(plan.problems) or literal_problems(self.context, plan)

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
        self._touched = None
        derive_statuses(self)

    def ready(self) -> list[int]:
        """The calls that would start now, in plan order (group members together)."""
        return [i for unit in ready_units(self) for i in unit.members if self._states[i].status is Status.READY]

    @property
    def finished(self) -> bool:
        """Nothing is running and nothing is ready (the next tick would do nothing)."""
        return not self._tasks and not ready_units(self)

    # -- state changes -------------------------------------------------------------------------

    def _set(self, index: int, **changes: Any) -> None:
        old = self._states[index]
        for name, value in changes.items():
            if getattr(old, name) != value:
                break
        else:
            return  # most readiness passes change nothing: no copy
        # A new state made from the old one's fields (`dataclasses.replace` would read them by name and compare
        # again: a large part of a trivial call's cost), its changes set before anyone sees it.
        new = CallState(*_STATE_FIELDS(old))
        for name, value in changes.items():
            setattr(new, name, value)
        self._states[index] = new
        self._derived = None
        if new.status is not old.status:
            self._open += (new.status in OPEN) - (old.status in OPEN)
        touched = self._touched
        if touched is not None:
            touched.add(index)
            # Past this many, judging every call costs no more than finding the affected ones (nor holds a set).
            if len(touched) > _JUDGE_ALL_PAST and len(touched) > len(self._states) >> 3:
                self._touched = None
        if len(self.status_changed):  # an announcement nobody hears costs as much as the copy
            if self._held is None:
                self.status_changed.emit(new)
            else:
                self._held.setdefault(index, old)

    @contextmanager
    def announcing_once(self) -> Iterator[None]:
        """Inside, a call whose state changes is announced once, as it ends: a derivation may judge a call twice (again
        once a writer of it is found not taken), and a listener sees what the pass decided, not its steps."""
        self._held = {}
        try:
            yield
        finally:
            held, self._held = self._held, None
            for index, before in held.items():
                if self._states[index] != before:
                    self.status_changed.emit(self._states[index])

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

    def approve_plan(self) -> None:
        """Let a lazy plan run (012's checkpoint: validated, simulated, then approved)."""
        self.lazy = False  # the next tick looks at every unit for ready ones, as each tick's first look does

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
            self.refresh()  # the context may have been edited since (an approval, an undo)
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
        # Ready units not started yet, in plan order: at most `MOST_STARTED` run at once. A ready call's writers
        # have all run (a reader waits for each call that may write what it reads), so what a running call writes
        # changes neither the readiness nor the inputs of a queued one: readiness is derived again only once every
        # queued unit has started. A queued call starts, and reads its inputs and scoped context, when its turn comes.
        queued: deque[Unit] = deque()
        # Completions in the order they come: waiting on all running tasks at each completion would cost
        # O(running) each time (thousands of calls queued for a few workers).
        finished: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()
        # A tick allocates a few hundred short-lived objects a call (its task, futures, audit, messages): one with
        # no pace (the command line) collects them in batches; a paced tick (the window's) keeps the window's own
        # threshold (contextdeck/_runtime.py), so its pauses stay short.
        collecting = ExitStack()
        if self.pace is None:
            collecting.enter_context(batch_collector())
        try:
            if self._derived != (self.context.revision, len(self.context)):
                derive_statuses(self)
            open_calls = True  # whether any call may still become ready (else there is nothing to judge)
            # The calls judged since ready units were last looked for: only their units may have become ready, as
            # every unit ready then was queued (None: look at every unit).
            judged: set[int] | None = None
            while True:
                progressed = False
                if open_calls and stopped is None and not (stepping and ran) and not self._holding:
                    if not queued:
                        queued.extend(ready_units(self, None if judged is None or self._touched is None
                                                  else sorted(judged.union(self._touched))))
                        judged = set()
                    while queued and len(running) < MOST_STARTED:
                        unit = queued.popleft()
                        if self._holding:  # paused while an earlier unit was being approved
                            break
                        if not self._still_ready(unit):  # settled meanwhile from outside (an output given)
                            continue
                        if target is not None and target not in unit.members:
                            continue
                        # Stopped here last time: continuing runs it.
                        resuming = self._resume == unit.entry
                        if not stepping and not resuming and hits_breakpoint(
                                unit, self.plans, self.breakpoints, self.conditions, self.context):
                            stopped = next(i for i in unit.members if self._states[i].status is Status.READY)
                            self._resume = unit.entry
                            break
                        if resuming:
                            self._resume = None
                        progressed = True
                        members = await approve(self, unit)
                        failed = failed if failed is not None or stepping else self._failure_in(unit)
                        if members:
                            ran.extend(members)
                            task = self._start(unit, members)
                            if task is not None:
                                running[task] = unit
                                task.add_done_callback(finished.put_nowait)
                        if stepping:
                            break
                        if self.pace is not None:
                            await self.pace()
                if not running:
                    if progressed and not stepping:
                        judged = _union(judged, derive_statuses(self))
                        open_calls = self._any_open()
                        continue
                    break
                await finished.get()
                while not finished.empty():
                    finished.get_nowait()
                # Completions are taken in the order their calls started, never as they come: a call that ends
                # early waits for the ones started before it. So a tick appends the same messages in the same
                # order whatever the activities' timing, and the next request is the same question (an
                # unchanged experiment replays every answer from its cassette).
                taken = list(takewhile(lambda task: task.done(), running))
                for task in taken:
                    unit = running.pop(task)
                    self._finish(unit, task)
                    failed = failed if failed is not None or stepping else self._failure_in(unit)
                    open_calls = open_calls or any(self._states[i].status in OPEN for i in unit.members)
                    if self.pace is not None:
                        await self.pace()
                # Only an open call can become ready: with every call started or settled (many calls waiting
                # for a worker) there is nothing to judge, and the tick's end reads the record once.
                if open_calls and not queued:
                    judged = _union(judged, derive_statuses(self))
                    open_calls = self._any_open()
        finally:
            collecting.close()
            self._ticking = False
            self._holding = False
            if self._froze and not self._host_froze:
                gc.unfreeze()
            self._froze = self._host_froze = False
            for task, unit in running.items():  # the tick itself was cancelled
                if task.done() and not task.cancelled() and task.exception() is None:
                    # It finished, waiting only behind a call started before it: its outputs are kept, so that
                    # a run started again from this document does not make the call (its side effects) twice.
                    self._finish(unit, task)
                    continue
                task.cancel()
                for i in unit.members:
                    self._tasks.pop(i, None)
                    if self._states[i].status is Status.RUNNING:
                        self._set(i, status=Status.CANCELLED)
        return self._end_tick(ran, stopped, failed)

    def _still_ready(self, unit: Unit) -> bool:
        """Whether a unit queued as ready still is: its open members all ready (as `ready_units` chose it)."""
        states = self._states
        members = [i for i in unit.members if states[i].status not in SETTLED]
        return bool(members) and all(states[i].status is Status.READY for i in members)

    def _any_open(self) -> bool:
        return self._open > 0

    def _failure_in(self, unit: Unit) -> int | None:
        """With `break_on_failure`: the member of `unit` that failed (refused, rejected, raised); the tick then
        starts nothing more."""
        if not self.break_on_failure:
            return None
        failed = next((i for i in unit.members if self._states[i].status is Status.FAILED), None)
        self._holding = self._holding or failed is not None
        return failed

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
            self._grew()
        return task

    async def _perform(self, index: int) -> Outcome:
        self._grew()
        if self.pace is not None:
            await self.pace()
        if index in self.delegates:
            return await self._sessions().run(self, index)
        # A given output is written once: after an undo of what it wrote, the call waits for an output again.
        provided = self._provided.pop(index, None)
        return await perform(self.plans[index], self.context, self.clock, self.timeout, provided,
                             self._identity(index), self.timer, self._workers(), self.replay)

    def _workers(self) -> Jobs | None:
        """Where activities loaded from a file run: worker processes, or here when `in_process`."""
        return None if self.in_process else self._jobs

    def delegation(self, index: int) -> Any:
        """The nested session (a `Loop`) of delegated call `index`, opened now without running anything when
        it has none: its clean-room context is resolved up front from the context as it stands (014, 015).

        A debugger steps into it; its output is written at the call's output path by `complete_delegation`.
        Raises ValueError when the call does not delegate or cannot run now (its parameters break its tool).
        """
        return self._sessions().open(self, index)

    def complete_delegation(self, index: int) -> CallState:
        """Write the output of call `index`'s nested session, once that session has finished."""
        return self.provide_output(index, self._sessions().finished_output(self, index))

    def _sessions(self) -> Sessions:
        if self.sessions is None:
            raise RuntimeError("no session layer is plugged in to run delegated calls (contextdeck.engine.run does it)")
        return self.sessions

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
                ran = await invoke(plan, resolved, self.context, self.timeout, self._workers())
                changes["result"] = ran.result
            except asyncio.CancelledError:
                self._jobs.cancelled.pop(plan.index, None)
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
                    printed = self._jobs.cancelled.pop(index, None)
                    self._fail(index, [Problem("cancelled", "cancelled while running")],
                               audit=printed.audit() if printed is not None else None)
            return
        for index, outcome, keep in task.result():
            self._settle(index, outcome, keep)
            if self.pace is None and self._states[index].status is Status.DONE:
                self.plans.drop(index)  # read again, it is planned again (`Plans`); the window keeps them

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
        self._appended += 1
        self._wrote_errors = self._wrote_errors or message.get("type") == "error"
        self._grew()
        position = len(self.context) - 1
        if len(self.message_appended):
            self.message_appended.emit(position, call_index)
        return self.context.id_at(position)

    def _grew(self) -> None:
        """One more call started, performed or message appended: every so many in a tick, the heap is frozen."""
        self._grown += 1
        if self._ticking and self._grown % _FREEZE_EVERY == 0:
            if not self._froze and gc.get_freeze_count():
                self._host_froze = True  # a window froze its heap itself and collects it: leave that as it is
            gc.freeze()
            self._froze = True

    def _end_tick(self, ran: list[int], stopped: int | None, failed: int | None = None) -> TickReport:
        errors = [message for _, message in self._errors]
        for index, message in self._errors:
            self._append(message, index)
        self._errors = []
        derive_statuses(self)
        by_status: dict[Status, list[CallState]] = {status: [] for status in Status}
        for state in self._states:
            by_status[state.status].append(state)
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
        self.refresh()
        unit = next(u for u in self.units if index in u.members)
        if unit.pattern == "one" and self._states[index].status is Status.READY and not self.lazy:
            del self._provided[index]  # written now: an undo of it leaves the call waiting again
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
            chosen = with_dependents(chosen, self._graph, self._unit_of, self._record)
        for index in chosen:
            found = self._record.of(index)
            if found is not None:
                self._again[index] = self._again.get(index, frozenset()) | {e.message_id for e in found.entries}
            if index in self.delegates:  # a new clean room, from the inputs as they are now
                self.delegations.pop(index, None)
                self._provided.pop(index, None)
        self.refresh()
        return tuple(sorted(i for i in chosen if self._states[i].status in OPEN))

    def stale(self) -> list[Stale]:
        """The calls that ran with inputs other than the ones they would receive now (or were edited since)."""
        return stale_calls(self._record, self._states, self.plans, self.context)

    def cancel(self, index: int | None = None) -> None:
        """Cancel the running call `index` (its whole group), or everything running and in the background;
        cancelling everything also ends the tick: it starts nothing more."""
        if index is None:
            self.pause()
            tasks = {*self._tasks.values(), *self._background.values()}
            self._jobs.stop()
        else:
            tasks = {task for task in (self._tasks.get(index), self._background.get(index)) if task is not None}
            # Their worker processes end now, before this returns: nothing of them runs after a cancel.
            self._jobs.stop(self._unit_of[index].members if 0 <= index < len(self._unit_of) else (index,))
        for task in tasks:
            task.cancel()

    async def drain(self) -> None:
        """Wait for every fire-and-forget run to end."""
        while self._background:
            await asyncio.gather(*self._background.values(), return_exceptions=True)


def _union(judged: set[int] | None, more: list[int] | None) -> set[int] | None:
    """The calls judged so far and those a derivation judged again (None: every call)."""
    if judged is None or more is None:
        return None
    judged.update(more)
    return judged
