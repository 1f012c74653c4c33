"""The stepping debugger: Step, Continue, Pause and Restart over the engine's `Execution`.

The engine runs the calls and appends their outputs to the context (so the timeline shows each as it
lands); this controller decides which call goes next, stops at breakpoints, asks for approval and for the
outputs of latent calls, and keeps the calls panel's run states in step with the engine's.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from contextdeck.engine import (
    Activities,
    CallAnalysis,
    CallState,
    Context,
    Decision,
    Edit,
    Execution,
    Insert,
    Messages,
    Remove,
    Status,
    describe_exception,
    solution_refusals,
    utc_now,
)

from .._commands import apply_unrecorded
from .._slices import Pace
from ._async import event_loop
from ._calls import CallsModel
from ._dialogs import ApprovalDialog, OutputDialog

Approver = Callable[[CallAnalysis], "Decision | Awaitable[Decision]"]
OutputAsker = Callable[[CallAnalysis], Any]  # returns the value, CANCEL or ASK_MODEL (maybe awaitable)
# Asks the model for a latent call and writes its answer; None when answered, else why nothing was written.
ModelAnswer = Callable[[Execution, int], Awaitable["str | None"]]
EditSink = Callable[[str, list[Edit]], None]
T = TypeVar("T")
DEFAULT_TIMEOUT = 60.0


class _Cancel:
    def __repr__(self) -> str:
        return "CANCEL"


CANCEL: Any = _Cancel()
ASK_MODEL: Any = object()  # the output dialog's "Ask model": the model answers instead of the person


def restore_edits(context: Context, snapshot: list[dict[str, Any]]) -> list[Edit]:
    """The fewest removes and inserts that turn the context back into `snapshot`.

    Messages are immutable dicts shared with the snapshot, so identity tells which ones are unchanged:
    a run only appends, so this is usually just the removal of the outputs.
    """
    current = context.messages
    start = 0
    while start < min(len(current), len(snapshot)) and current[start] is snapshot[start]:
        start += 1
    end = 0
    while (end < min(len(current), len(snapshot)) - start
           and current[len(current) - 1 - end] is snapshot[len(snapshot) - 1 - end]):
        end += 1
    edits: list[Edit] = [Remove(i) for i in range(len(current) - end - 1, start - 1, -1)]
    edits += [Insert(i, snapshot[i]) for i in range(start, len(snapshot) - end)]
    return edits


def refused_solution(context: Messages | None, solution: Any) -> str | None:
    """Why `contextdeck run` refuses the document's own solution, in its words (`solution_refusals`: none at all, or
    advice `validate` calls an error, docs/format.md §6), or None."""
    refusals = [] if context is None else solution_refusals(context, solution)
    return "contextdeck run refuses this solution: " + "; ".join(map(str, refusals)) if refusals else None


class Debugger(QObject):
    """Drives an `Execution` over the calls model's context, one call at a time."""

    stateChanged = Signal()  # running or not, paused, restarted
    stopped = Signal(str)  # why it stopped: a breakpoint, the end, a question left unanswered
    callFocused = Signal(int)  # the call that is about to run or just ran

    def __init__(
        self,
        model: CallsModel,
        activities: Activities | None = None,
        clock: Callable[[], str] = utc_now,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.activities = activities if activities is not None else Activities()
        self.clock = clock
        self.approval_enabled = False
        self.approver: Approver | None = None  # None: ask through an ApprovalDialog
        self.ask_output: OutputAsker | None = None  # None: ask through an OutputDialog
        self.model_answer: ModelAnswer | None = None  # a model is set up (gui/_models.py)
        self.use_model = False  # Step and Continue ask the model for latent calls without asking the person
        self.apply_edits: EditSink | None = None  # None: apply to the context directly (no undo)
        self.record_run: EditSink | None = None  # told of each step's appended messages (for undo)
        self.dialog_parent: QWidget | None = None
        self._execution: Execution | None = None
        # Where the execution comes from: a fresh one over the model's calls, or a delegate session's own.
        self.source: Callable[[], Execution] = lambda: self.model.execution_to_run(self.activities, self.clock)
        self.snapshot: list[dict[str, Any]] | None = None
        self.running = False
        # Run with Model asks the model for the next turn: a run started meanwhile would change the document under
        # the question, so no command starts one until the answer is in (edits stay the user's).
        self.awaiting_turn = False
        self.last_stop = ""
        self._pause = False
        self._cancelled = False  # Cancel: the command running now ends, asking nothing more
        self._run_to: int | None = None  # Run to here: a breakpoint for one Continue
        self.timeout = DEFAULT_TIMEOUT  # seconds an activity may run (Run → Activity timeout…)
        self.break_on_failure = False  # Continue stops once a call has failed
        self.in_process = False  # Run → Run Activities In-Process: speed instead of worker processes
        self.plan_approved = False  # Run → Approve Plan: a lazy plan (012) runs (until the next turn)
        self.open_dialog: ApprovalDialog | OutputDialog | None = None
        self.pace = Pace()  # a tick of many calls lets the window's event loop turn between them
        # The note (`stopped`) speaks of what the command that gave it wrote: their ids in the context it ran on. An
        # edit that removes one of them has the note replaced once the calls are judged again (`_judged`).
        self._wrote: list[int] = []
        self._note_of: frozenset[int] = frozenset()
        self._heard: weakref.ref[Context] | None = None
        self._outlived = False
        model.modelReset.connect(self._calls_changed)
        model.refreshed.connect(self._judged)

    # -- the execution ----------------------------------------------------------------------------

    @property
    def execution(self) -> Execution | None:
        """The engine's execution of the calls, once a step or Continue made one; the calls panel shows it."""
        return self._execution

    @execution.setter
    def execution(self, execution: Execution | None) -> None:
        if self._execution is not None:
            self._execution.status_changed.disconnect(self.model.state_changed)
        self._execution = execution
        if execution is not None:
            execution.status_changed.connect(self.model.state_changed)
        self.model.follow(execution)

    def _ensure(self) -> Execution:
        """The debugger's execution, made at the first command; statuses come from the document's run record."""
        context = self.model.context
        if context is None:
            raise RuntimeError("no document is open")
        if self.execution is None:
            if self.snapshot is None:
                self.snapshot = context.messages  # the dicts are immutable: a list of them is a full copy
            self.execution = self.source()
        assert self.execution is not None
        self.execution.approver = self._approval if self.approval_enabled else None
        self.execution.timeout = self.timeout
        self.execution.in_process = self.in_process
        self.execution.pace = self.pace
        extra = set() if self._run_to is None else {self._run_to}
        self.execution.breakpoints = {*self.model.breakpoints, *self.model.tool_breakpoints, *extra}
        self.execution.conditions = self.model.conditions
        self.execution.break_on_failure = self.break_on_failure
        if self.plan_approved:
            self.execution.approve_plan()
        return self.execution

    def prepared(self) -> Execution:
        """The execution the next step uses (made now when there is none): what a prompt is built from."""
        return self._ensure()

    async def ask_model(self, target: int) -> str | None:
        """Ask the model for latent call `target` now; None when it answered, else why nothing was written."""
        if self.running:
            return "the debugger is running: wait for it or pause it"
        if self.model_answer is None:
            return "no model is set up: Run → Models…"
        if self.refuses():
            return self.last_stop
        self._set_running(True)
        try:
            text = f"Ask the model for call #{target} ({self.model.plan(target).tool_name})"
            return await self._recorded(text, self._model_answer(target))
        finally:
            self._set_running(False)

    async def _model_answer(self, target: int) -> str | None:
        assert self.model_answer is not None
        self.callFocused.emit(target)
        return await self.model_answer(self._ensure(), target)

    def _calls_changed(self) -> None:
        if not self.running:  # the plan was edited: the next step analyses it afresh
            self.execution = None

    def next_call(self, among: frozenset[int] | None = None) -> int | None:
        """The call Step would run: the first in plan order that is ready or waits for an output.

        The execution reads the document again first, so an edit made a moment ago counts (an approval
        added, a step undone).
        """
        execution = self._ensure()
        execution.refresh()
        return _next_in(execution, among)

    def refuses(self) -> bool:
        """Whether the document's own solution is one `contextdeck run` refuses (`refused_solution`): then nothing of
        it runs, and `stopped` says why. Every command that would run a call or write an output asks it first."""
        refused = refused_solution(self.model.context, self.model.solution)
        if refused is not None:
            self._stop(f"nothing runs: {refused}")
        return refused is not None

    # -- commands ---------------------------------------------------------------------------------

    async def step(self) -> bool:
        """Run the next call; False when nothing could run (and `stopped` says why)."""
        if self.busy or self.refuses():
            return False
        self._set_running(True)
        try:
            target = self.next_call()
            if target is None:
                await self._end_with_no_call_ready()
                self._stop(self._why_nothing())
                return False
            ran = await self._run(target)
            if ran:
                self._stop(f"stepped over #{target}")
            return ran
        finally:
            self._set_running(False)

    async def continue_(self, to: int | None = None) -> None:
        """Run as `contextdeck run` does (the engine's tick: ready calls together) until a breakpoint, a
        pause, an unanswered question, or nothing is left. `to`: stop before that call too (Run to here)."""
        if self.busy or self.refuses():
            return
        self._pause = False
        self._cancelled = False
        self._run_to = to
        self._set_running(True)
        try:
            while True:
                execution = self._ensure()  # its tick reads the record and readiness again first
                report = await self._recorded("Continue", execution.run())
                if report.stopped_at is not None:
                    self.callFocused.emit(report.stopped_at)
                    self._stop(f"breakpoint at #{report.stopped_at}" if report.stopped_at != to
                               else f"ran to #{to}")
                    return
                if report.failed_at is not None:
                    error = execution.state(report.failed_at).error or {}
                    self.callFocused.emit(report.failed_at)
                    self._stop(f"#{report.failed_at} failed: {error.get('type')}: {error.get('message')}")
                    return
                if self._cancelled:
                    self._stop("cancelled")
                    return
                if self._pause:
                    self._stop("paused")
                    return
                waiting = self.next_call()  # what a tick does not do: ask for a latent call's output
                if waiting is None:
                    self._stop(self._why_nothing())
                    return
                if not await self._run(waiting):
                    return
        finally:
            self._run_to = None
            self._set_running(False)

    def pause(self) -> None:
        """Stop Continue once the calls running now have finished."""
        self._pause = True
        if self.execution is not None:
            self.execution.pause()

    def cancel(self) -> None:
        """Cancel the calls running now (each gets a `cancelled` error message, so it does not start again) and
        end the command running: Continue stops there, asking for no output and starting nothing more."""
        if self.execution is not None and self.running:
            self._cancelled = True
            self.execution.cancel()

    async def run_only(self, calls: Iterable[int], text: str) -> tuple[int, ...]:
        """Run again exactly `calls` (recorded ones are let run again), one at a time in plan order."""
        if self.busy or self.refuses():
            return ()
        execution = self._ensure()
        execution.refresh()
        chosen = frozenset(calls)
        execution.rerun([i for i in chosen if execution.record.of(i) is not None], dependents=False)
        ran: list[int] = []
        self._cancelled = False
        self._set_running(True)
        try:
            while not self._cancelled and (target := self.next_call(among=chosen - set(ran))) is not None:
                if not await self._run(target, text):
                    break
                ran.append(target)
            self._stop(f"{text}: ran " + (", ".join(f"#{i}" for i in ran) or "nothing") + self._left(chosen, ran))
        finally:
            self._set_running(False)
        return tuple(ran)

    def _left(self, chosen: frozenset[int], ran: list[int]) -> str:
        """What the calls chosen that did not run are, and what each waits for (as `_why_nothing` says it)."""
        execution = self._ensure()
        left = sorted(chosen - set(ran))
        return "; not ready: " + "; ".join(_waiting(execution.state(i)) for i in left) if left else ""

    async def rerun_stale(self) -> tuple[int, ...]:
        """Run again the calls whose inputs changed since they ran, and the finished calls that read their outputs."""
        if self.running or self.refuses():
            return ()
        execution = self._ensure()
        execution.refresh()
        stale = [found.index for found in execution.stale()]
        if not stale:
            self._stop("nothing is stale")
            return ()
        chosen = execution.rerun(stale)
        return await self.run_only(chosen, "Re-run stale calls")

    async def run_call(self, index: int) -> tuple[int, ...]:
        """Run this call now (again, when it has run), whatever its place in the plan."""
        return await self.run_only([index], f"Run #{index}")

    def start_rerun_stale(self) -> asyncio.Task[Any]:
        return self._spawn(self.rerun_stale())

    def start_run_call(self, index: int) -> asyncio.Task[Any]:
        return self._spawn(self.run_call(index))

    def start_run_to(self, index: int) -> asyncio.Task[Any]:
        return self._spawn(self.continue_(to=index))

    def restart(self) -> None:
        """Back to the document exactly as it was before the first step: outputs and errors removed."""
        if self.execution is not None:
            self.execution.cancel()
        self._pause = True
        self._wrote, self._note_of = [], frozenset()  # what it removes is what "restarted" speaks of
        context = self.model.context
        if context is not None and self.snapshot is not None:
            edits = restore_edits(context, self.snapshot)
            if edits:
                if self.apply_edits is not None:
                    self.apply_edits("Restart the run", edits)
                else:
                    apply_unrecorded(context, edits)
        self.execution = None
        self.snapshot = None
        self.model.refresh()
        self._stop("restarted")

    def start_step(self) -> asyncio.Task[Any]:
        """Step from a button: the coroutine runs on the Qt event loop."""
        return self._spawn(self.step())

    def start_continue(self) -> asyncio.Task[Any]:
        return self._spawn(self.continue_())

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = event_loop().create_task(coroutine)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        """A failure inside a step is shown, never lost in the event loop's log."""
        if not task.cancelled() and (error := task.exception()) is not None:
            self._stop(f"the debugger stopped on an error: {type(error).__name__}: {describe_exception(error)}")

    # -- inside a step ----------------------------------------------------------------------------

    async def _run(self, target: int, text: str = "Run") -> bool:
        return await self._recorded(f"{text} call #{target} ({self.model.plan(target).tool_name})",
                                    self._run_call(target))

    async def recorded(self, text: str, work: Awaitable[T]) -> T:
        """Await `work` as one step of the undo stack (what it appends to the context); a delegate session
        writes its output into its caller's context so."""
        return await self._recorded(text, work)

    async def _recorded(self, text: str, work: Awaitable[T]) -> T:
        """Await `work`; what it appended becomes one step of the undo stack."""
        context = self.model.context
        before = len(context) if context is not None else 0
        try:
            return await work
        finally:
            if context is not None and len(context) > before:
                self._wrote += map(context.id_at, range(before, len(context)))
                appended: list[Edit] = [Insert(i, context[i]) for i in range(before, len(context))]
                if self.record_run is not None:
                    self.record_run(text, appended)

    async def _run_call(self, target: int) -> bool:
        execution = self._ensure()
        self.callFocused.emit(target)
        if execution.state(target).status is Status.WAITING_FOR_OUTPUT:
            value = ASK_MODEL if self.use_model else await _answer(self._ask_output(self.model.getItem(target)))
            if value is ASK_MODEL:
                problem = await self._model_answer(target)
                if problem is not None:
                    self._stop(f"#{target} waits for an output: {problem}")
                return problem is None
            if value is CANCEL:
                self._stop(f"#{target} waits for an output")
                return False
            try:
                execution.provide_output(target, value)
            except ValueError as error:
                self._stop(f"#{target}: {error}")
                return False
            return True
        await execution.step(target)
        return True

    async def _end_with_no_call_ready(self) -> None:
        """A step with no call ready still ends a tick, as `contextdeck run --steps` does: a call found failed before
        it could run (an activity not loaded, parameters its tool refuses, a cycle) is written as its error message, as
        Continue writes it, so that the document records what the calls panel shows."""
        execution = self._ensure()
        if not execution.lazy:  # (a lazy plan's step waits for its approval: nothing is judged failed yet)
            await self._recorded("Write the calls that failed before running", execution.step())

    def _why_nothing(self, execution: Execution | None = None) -> str:
        execution = execution if execution is not None else self._ensure()
        if execution.lazy:
            return "nothing runs: the plan is lazy (012) and waits for approval (Run → Approve Plan)"
        if execution.refused:
            cycles = "; ".join(" → ".join(f"#{i}" for i in cycle) for cycle in execution.refused)
            return f"nothing runs: the plan has a cycle ({cycles}); break it to run the plan"
        # A call on a branch not taken waits for nothing that will come: it is said, never waited for.
        skipped = ", ".join(f"#{s.index}" for s in execution.states if s.status is Status.BLOCKED and s.not_taken)
        not_taken = f"; not taken: {skipped} (a branch not taken)" if skipped else ""
        waiting = [s for s in execution.states
                   if s.status in (Status.BLOCKED, Status.AWAITING_APPROVAL) and not s.not_taken]
        if waiting:
            return "nothing is ready: " + "; ".join(map(_waiting, waiting)) + not_taken
        failed = [f"#{s.index}" for s in execution.states if s.status is Status.FAILED]
        if failed:  # a plan whose calls were all refused has not "run"
            return (f"finished: nothing is left to run; failed: {', '.join(failed)} (the calls panel says why)"
                    + not_taken)
        return "finished: every call has run" + not_taken

    async def _approval(self, state: CallState) -> Any:
        """The hook's or the dialog's answer, as given: the engine refuses what is not a Decision, saying so."""
        call = self.model.getItem(state.index)
        if self.approver is not None:
            return await _answer(self.approver(call))
        dialog = ApprovalDialog(call, self.dialog_parent)
        return await self._dialog_answer(dialog, dialog.decided, None)

    def _ask_output(self, call: CallAnalysis) -> Any:
        if self.ask_output is not None:
            return self.ask_output(call)
        dialog = OutputDialog(call, self.dialog_parent, can_ask_model=self.model_answer is not None)
        dialog.askModel.connect(lambda: dialog.answered.emit(ASK_MODEL))
        return self._dialog_answer(dialog, dialog.answered, dialog.cancelled)

    async def _dialog_answer(self, dialog: ApprovalDialog | OutputDialog, answer: Any, cancel: Any) -> Any:
        future = event_loop().create_future()

        def settle(value: Any) -> None:
            if not future.done():
                future.set_result(value)

        answer.connect(settle)
        if cancel is not None:
            cancel.connect(lambda: settle(CANCEL))
        self.open_dialog = dialog
        dialog.show()
        try:
            return await future
        finally:
            self.open_dialog = None
            dialog.deleteLater()

    @property
    def busy(self) -> bool:
        """A command runs, or Run with Model waits for the model's turn: no other command starts."""
        return self.running or self.awaiting_turn

    def set_awaiting_turn(self, waiting: bool) -> None:
        """Run with Model asks the model for the next turn (`waiting`), or has the answer."""
        self.awaiting_turn = waiting
        self.stateChanged.emit()

    def _set_running(self, running: bool) -> None:
        if running:
            self._wrote = []
        self.running = running
        self.model.pace_for_a_run(running)
        self.stateChanged.emit()

    def _stop(self, reason: str) -> None:
        self._say(reason, self._wrote if self.running else [])

    def _say(self, note: str, of: list[int]) -> None:
        self._speak_of(of)
        self.last_stop = note
        self.stopped.emit(note)

    # -- the note after an edit -------------------------------------------------------------------

    def replayed(self, note: str) -> None:
        """A run's step (or Restart) undone or redone (`Commands.replayed`): the note says so ("Undone: Run call #0
        (lookupOrder)"), never what the step did, whose output may be gone."""
        self._say(note, [])

    def _speak_of(self, ids: list[int]) -> None:
        """The messages (ids) the note about to be given speaks of; their removal is heard (`_removing`)."""
        self._note_of, self._outlived = frozenset(ids), False
        context = self.model.context
        heard = self._heard() if self._heard is not None else None
        if ids and context is not None and context is not heard:
            if heard is not None:
                heard.removing.disconnect(self._removing)
            context.removing.connect(self._removing)
            self._heard = weakref.ref(context)

    def _removing(self, index: int) -> None:
        heard = self._heard() if self._heard is not None else None
        if self._note_of and heard is self.model.context and heard is not None and heard.id_at(index) in self._note_of:
            self._note_of, self._outlived = frozenset(), True

    def _judged(self) -> None:
        """The calls judged again after an edit that removed what the note spoke of: the note says what Step does
        now, as the judged calls tell it (no execution is made for it)."""
        execution = self.model.execution
        if not self._outlived or self.running or execution is None:
            return
        upcoming = _next_in(execution)
        now = (f"Step runs #{upcoming} ({self.model.plan(upcoming).tool_name}) next" if upcoming is not None
               else self._why_nothing(execution))
        self._say(f"What the last run wrote was removed; {now}", [])


def _next_in(execution: Execution, among: frozenset[int] | None = None) -> int | None:
    """The call Step would run in `execution` as last read: the first in plan order ready or waiting for an output."""
    if execution.lazy:  # nothing of a lazy plan runs, latent calls included, until it is approved
        return None
    candidates = set(execution.ready())
    candidates |= {s.index for s in execution.states if s.status is Status.WAITING_FOR_OUTPUT}
    if among is not None:
        candidates &= among
    return min(candidates) if candidates else None


def _waiting(state: CallState) -> str:
    """A call that is not ready, as a stop says it: `#3 awaiting approval on †state.approvals.refund`."""
    on = f" on {', '.join(state.waiting_for)}" if state.waiting_for else ""
    return f"#{state.index} {state.status}{on}"


async def _answer(value: Any) -> Any:
    """A hook may answer at once or later (a coroutine, a future)."""
    return await value if inspect.isawaitable(value) else value


__all__ = ["ASK_MODEL", "CANCEL", "Debugger", "refused_solution", "restore_edits"]
