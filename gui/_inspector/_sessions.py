"""Delegate sessions (014): a delegated call opened as a nested session, stepped into, over and out of.

The stack of sessions starts with the document's own (the calls panel). Step Into on a delegated call
opens the engine's nested session of that call (`Execution.delegation`: its clean-room context resolved
up front) as a frame on top, and stops before its first call. Step Out runs the rest of the delegate's
calls, asks for its final output when it has none (validated against the delegate's request schema),
and writes it at the calling call's output path in the caller's context, with the run record the
command line writes. Step Over on a delegated call is Step Into and Step Out at once.

Frames are views over the engine's sessions (`Execution.delegations`): closing a frame loses nothing,
and stepping into the same call again shows the same session where it was left.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog

from contextdeck.engine import OPEN, Diagnostic, Document, Execution, Loop, LoopStatus

from ._async import event_loop
from ._calls import CallsModel
from ._debugger import Debugger


@dataclass(eq=False)
class Frame:
    """One session on the call stack: the document's (`loop` None) or a delegated call's nested one."""

    title: str
    model: CallsModel
    debugger: Debugger
    loop: Loop | None = None  # the delegate's session (the engine's)
    caller: int | None = None  # the call of the frame below that delegates here


class Sessions(QObject):
    """The call stack of delegate sessions, the current one, and Step Into / Over / Out on it."""

    changed = Signal()  # frames opened or closed, another one made current, busy or not
    opened = Signal(object)  # a Frame, just pushed (the views make its page)

    def __init__(self, model: CallsModel, debugger: Debugger, title: Callable[[], str],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.frames = [Frame(title(), model, debugger)]
        self._title = title
        self.current = 0
        self.busy = False
        self.open_dialog: QDialog | None = None  # the Next Turn dialog of a delegate session, while open
        self.models: Callable[[], Any] = lambda: None  # the window's model set-up (Ask Model in Next Turn)
        self.actions_by_name = self._actions()
        model.refreshed.connect(self._prune)
        self.changed.connect(self._update)
        self._update()

    def _actions(self) -> dict[str, QAction]:
        table = (
            ("step_into", "Step Into", "F11", self.start_step_into,
             "Run the next call; a delegated call opens its session and stops before its first call"),
            ("step_over", "Step Over", "", self.start_step_over,
             "Run the next call; a delegated call runs its whole session as one step"),
            ("step_out", "Step Out", "Shift+F11", self.start_step_out,
             "Finish this delegate session and write its output in its caller"),
        )
        actions = {}
        for name, text, shortcut, slot, tip in table:
            action = QAction(text, self)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.triggered.connect(lambda _checked=False, run=slot: run())
            actions[name] = action
        return actions

    # -- reading ------------------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        """The current session: the one the call stack has selected, which the step commands act on."""
        return self.frames[self.current]

    def switch(self, index: int) -> None:
        """Make frame `index` of the stack current (a click in the call stack or a breadcrumb)."""
        if 0 <= index < len(self.frames) and index != self.current:
            self.current = index
            self.changed.emit()

    def reset(self) -> None:
        """Back to the document's session alone, under the document's name (a document was opened, or saved under
        another name)."""
        if len(self.frames) > 1:
            self.frames[0].title = self._title()
            self._close_above(0)
        else:
            self.rename()

    def rename(self) -> None:
        """The document's session under the document's name (saved under another one), its sessions left open."""
        title = self._title()
        if title != self.frames[0].title:
            self.frames[0].title = title
            self.changed.emit()  # the call stack says the document's new name

    def replayed(self, note: str) -> None:
        """A run's step undone or redone (`Commands.replayed`: only the document's steps are on the undo stack):
        every open session's note says so, as the calls panel's does (`Debugger.replayed`), a delegate's naming the
        document whose calls the numbers are ("Undone: Run call #0 (prep) in report.json"). A delegate session's
        own "stepped over #0" went on standing over a caller the undo had changed under it."""
        for depth, frame in enumerate(self.frames):
            frame.debugger.replayed(note if depth == 0 else f"{note} in {self.frames[0].title}")

    # -- commands -----------------------------------------------------------------------------------

    def start_step(self) -> Any:
        """Step (F10) in the current session: a delegated call runs its whole session as one step."""
        return self.start_step_over()

    def start_continue(self) -> Any:
        """Continue (F5) in the current session: the delegate's calls when one is open, not the document's."""
        return self._spawn(self.continue_())

    def start_step_into(self) -> Any:
        return self._spawn(self.step_into())

    def start_step_over(self) -> Any:
        return self._spawn(self.step_over())

    def start_step_out(self) -> Any:
        return self._spawn(self.step_out())

    async def continue_(self) -> None:
        """Run the current session's calls until a breakpoint or until nothing is ready."""
        frame = self.frame
        if not self.busy and not frame.debugger.running:
            await frame.debugger.continue_()

    async def step_into(self) -> bool:
        """The current session's next call: a delegated one opens (or shows again) its session, stopped
        before its first call; any other one runs as Step does."""
        frame = self.frame
        if self.busy or frame.debugger.running or frame.debugger.refuses():
            return False
        target = self._target(frame)
        execution = frame.debugger.prepared()
        if target is None or target not in execution.delegates:  # Step says why nothing runs
            return await frame.debugger.step()
        child = self._open(frame, target)
        if child is None:
            return False
        first = child.debugger.next_call()
        if first is None and child.debugger.prepared().lazy:
            child.debugger.stopped.emit(f"Stepped into #{target}: the delegate's plan is lazy (012): "
                                        "Run → Approve Plan lets it run")
        elif first is None:
            child.debugger.stopped.emit(f"Stepped into #{target}: the delegate has no calls to run; "
                                        "Step Out (Shift+F11) gives its output")
        else:
            child.debugger.callFocused.emit(first)
            child.debugger.stopped.emit(
                f"Stepped into #{target}: stopped before #{first} ({child.model.plan(first).tool_name})")
        return True

    async def step_over(self) -> bool:
        """The current session's next call, run to its end as one step (a delegated call: its whole session)."""
        frame = self.frame
        if self.busy or frame.debugger.running or frame.debugger.refuses():
            return False
        target = self._target(frame)
        if target is None or target not in frame.debugger.prepared().delegates:
            return await frame.debugger.step()
        child = self._open(frame, target, show=False)
        return child is not None and await self._finish(child)

    async def step_out(self) -> bool:
        """Finish the current delegate session and write its output in its caller, which becomes current."""
        if self.busy or self.frame.debugger.running:
            return False
        if self.current == 0:
            self.frame.debugger.stopped.emit("Step Out: the document's own session has no caller")
            return False
        return await self._finish(self.frame)

    def _target(self, frame: Frame) -> int | None:
        """The call the next step runs (None: nothing runs)."""
        return frame.debugger.next_call()

    def _open(self, frame: Frame, caller: int, *, show: bool = True) -> Frame | None:
        """The frame of `caller`'s session above `frame` (opened by the engine now when it has none)."""
        position = self.frames.index(frame)
        above = self.frames[position + 1] if position + 1 < len(self.frames) else None
        if above is not None and above.caller == caller:
            child = above
        else:
            execution = frame.debugger.prepared()
            try:
                loop = execution.delegation(caller)
            except ValueError as error:
                frame.debugger.stopped.emit(f"#{caller} cannot be stepped into: {error}")
                return None
            self._close_above(position)
            child = self._frame(frame, caller, loop)
            self.frames.append(child)
            self.opened.emit(child)
        if show:
            self.current = self.frames.index(child)
        self.changed.emit()
        return child

    def _frame(self, parent: Frame, caller: int, loop: Loop) -> Frame:
        """A calls model and a debugger over the engine's nested session, set up like the caller's."""
        source = parent.debugger
        execution: Execution = loop.execution
        model = CallsModel(activities=lambda: source.activities)
        model.setParent(self)
        model.tools = parent.model.tools
        model.set_source(loop.document.context, loop.solution, {"base": execution.base, "chain": execution.chain})
        debugger = Debugger(model, source.activities, source.clock, parent=self)
        debugger.source = lambda: loop.execution
        for setting in ("dialog_parent", "timeout", "approval_enabled", "approver", "ask_output",
                        "model_answer", "use_model", "break_on_failure"):
            setattr(debugger, setting, getattr(source, setting))
        debugger.execution = execution
        model.refreshed.connect(self._prune)
        plan = parent.model.plan(caller)
        name = execution_delegate_name(parent.debugger.prepared(), caller)
        return Frame(f"#{caller} {plan.tool_name} → {name}", model, debugger, loop, caller)

    async def _finish(self, child: Frame) -> bool:
        """Run the rest of `child`'s session, turn after turn, and write its final output in its caller;
        True when written. Without an output of its own the session asks for its next turn (010)."""
        assert child.loop is not None
        assert child.caller is not None
        loop, parent = child.loop, self.frames[self.frames.index(child) - 1]
        self._set_busy(True)
        try:
            while loop.status is not LoopStatus.FINISHED:
                if loop.status in (LoopStatus.READY, LoopStatus.STOPPED):
                    await child.debugger.continue_()
                    if child.debugger.next_call() is not None:  # a breakpoint, a failure, a question not answered
                        self._show(child)
                        return False
                    await loop.tick()  # nothing left to run: the tick concludes (an output ends the session)
                elif loop.status is LoopStatus.LAZY:
                    self._show(child)
                    child.debugger.stopped.emit("the delegate's plan is lazy: Run → Approve Plan lets it run")
                    return False
                elif not await self._next_turn(parent, child):
                    return False
            write = _completion(parent.debugger.prepared(), child.caller)
            plan = parent.model.plan(child.caller)
            await parent.debugger.recorded(f"Step out of call #{child.caller} ({plan.tool_name})", write)
        finally:
            self._set_busy(False)
        self._close_above(self.frames.index(parent))
        self.current = self.frames.index(parent)
        self.changed.emit()
        parent.debugger.callFocused.emit(child.caller)
        written = parent.debugger.prepared().state(child.caller)
        detail = ", ".join(f"#{parent.model.context.index_of(i)}" for i in written.outputs
                           if parent.model.context is not None)
        parent.debugger.stopped.emit(f"Stepped out of #{child.caller}: its output was written"
                                     + (f" ({detail})" if detail else ""))
        return True

    async def _next_turn(self, parent: Frame, child: Frame) -> bool:
        """The session waits for the delegate's next turn: typed (or asked of the model) in the Next Turn
        dialog, checked against the delegate's composed request; True once taken."""
        from .._turns import TurnDialog  # the window's loop dialog, which imports this package

        assert child.loop is not None
        turns = DelegateTurns(self, parent, child)
        dialog = TurnDialog(turns, parent.debugger.dialog_parent)
        future = event_loop().create_future()

        def closed(result: int) -> None:
            if not future.done():
                future.set_result(result)

        dialog.finished.connect(closed)
        self.open_dialog = dialog
        dialog.open_soon()  # window-modal, as the document's Next Turn dialog: the document stays as it composed
        try:
            accepted = await future == QDialog.DialogCode.Accepted
        finally:
            self.open_dialog = None
            dialog.delete_when_done()
        if not accepted:
            self._show(child)
            child.debugger.stopped.emit("The delegate waits for its next turn: Step Out again to give it")
            return False
        child.model.set_source(child.loop.document.context, child.loop.solution, child.model.origin)
        child.debugger.execution = child.loop.execution  # the calls panel shows the session's turn
        return True

    # -- the stack ----------------------------------------------------------------------------------

    def _show(self, frame: Frame) -> None:
        if frame in self.frames:
            self.current = self.frames.index(frame)
            self.changed.emit()

    def _close_above(self, position: int) -> None:
        closed = self.frames[position + 1:]
        if not closed:
            return
        del self.frames[position + 1:]
        for frame in closed:
            frame.model.refreshed.disconnect(self._prune)
            frame.debugger.execution = None
            frame.model.set_source(None)
        self.current = min(self.current, position)
        self.changed.emit()

    def _prune(self) -> None:
        """Close the frames whose call no longer waits for its session: written by Continue or an output
        typed in the caller, run again, or its plan replaced."""
        for position in range(1, len(self.frames)):
            frame, parent = self.frames[position], self.frames[position - 1]
            execution, caller = parent.debugger.execution, frame.caller
            if (execution is None or caller is None or execution.delegations.get(caller) is not frame.loop
                    or execution.state(caller).status not in OPEN):
                self._close_above(position - 1)
                return

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._update()
        self.changed.emit()

    def _update(self) -> None:
        self.actions_by_name["step_out"].setEnabled(not self.busy and self.current > 0)
        for name in ("step_into", "step_over"):
            self.actions_by_name[name].setEnabled(not self.busy)

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        task = event_loop().create_task(coroutine)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: Any) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            self.frame.debugger.stopped.emit(f"the debugger stopped on an error: {type(error).__name__}: {error}")


class DelegateTurns:
    """What the Next Turn dialog asks of a loop, for a delegate session: its document is the delegate's
    clean room, and the turn taken is the delegate's (its calls run in the session, its output ends it)."""

    def __init__(self, sessions: Sessions, parent: Frame, child: Frame) -> None:
        assert child.loop is not None
        self.sessions, self.parent, self.child, self.loop = sessions, parent, child, child.loop

    def document(self) -> Document:
        return self.loop.document

    def activities(self) -> Any:
        return self.child.debugger.activities

    def tools(self) -> Any:
        return self.child.model.tools()

    def models(self) -> Any:
        return self.sessions.models()

    def check_turn(self, turn: Any, request: Any = None) -> list[Diagnostic]:
        """The session's loop checks the turn: its delegate files are found next to the delegate's request."""
        return self.loop.check_turn(turn, request)

    def intro(self) -> str:
        caller = self.child.caller
        tool = self.parent.model.plan(caller).tool_name if caller is not None else "?"
        return (f"The delegate session of <b>#{caller} {tool}</b> ({html.escape(self.child.title)}) has run its "
                "calls without a final output. Type the delegate's next turn: <code>calls</code> run in the session "
                "(Step Out goes on running them), an <code>output</code> that meets the delegate's request schema "
                "ends it and is written in the caller. The delegate's request is on the right.")

    def take_turn(self, turn: Any, audit: dict[str, Any] | None = None) -> str | None:
        """Take the turn in the delegate's session; None, else why not (nothing changed)."""
        try:
            self.loop.take_turn(turn)
        except ValueError as refused:  # TurnRefused: it breaks the delegate's composed request schema
            return f"Not taken: {refused}"
        return None


def execution_delegate_name(execution: Execution, index: int) -> str:
    """The delegate call `index` runs in, as the document names it (a file's name, or 'anonymous')."""
    spec = execution.delegates.get(index)
    if spec is None:
        return "?"
    return spec.path.name if spec.path is not None else spec.name


async def _completion(execution: Execution, caller: int) -> None:
    execution.complete_delegation(caller)


__all__ = ["Frame", "Sessions"]
