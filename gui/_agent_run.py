"""Run → Run with Model: Continue through the loop's turns (010) with the model giving each next turn.

The pieces are the window's own: Continue runs a tick (the model answering latent calls, as with *Use the
Model for Latent Calls*), the Next Turn dialog shows the request as it will be sent and lets a turn be
edited before it is taken, and `LoopUI.take_turn` appends the turn as one undo step, with the model's
exchange as the plan message's `_model`. Two breakpoint kinds stop the run at a turn: *before each model
turn* (the dialog opens and asks; the answer is reviewed, edited or replaced, then Take Turn goes on) and
*on a refused answer* (the refused reply is put in the dialog with its problems, to correct). Cancel stops
the run between and inside turns: the running calls are cancelled, the model's request is dropped.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QLabel, QToolBar, QVBoxLayout

from contextdeck.engine import (
    MISSING,
    Answer,
    Form,
    ModelError,
    pending_calls,
    request_prompt,
    turn_record,
)

from ._background import view_of
from ._inspector import Inspector, refused_solution
from ._inspector._async import spawn
from ._llm import BACKGROUND_FROM
from ._summary import turn_words

if TYPE_CHECKING:
    from ._models import Models
    from ._turns import LoopUI
    from ._workbench import Workbench

MAX_TURNS = 25  # as `contextdeck run --max-ticks`: a model that never finishes stops here
BREAK_BEFORE = "run_with_model/break_before_turn"  # settings keys
BREAK_REFUSED = "run_with_model/break_on_refused"
DOCUMENT_CHANGED = "the document changed while the model was asked: its answer was not taken"


class AgentRunUI(QObject):
    """Run with Model and its breakpoints (`window.agent_run`); `stopped(reason)` when a run ends."""

    stopped = Signal(str)

    def __init__(self, window: Workbench, inspector: Inspector, turns: LoopUI, models: Models) -> None:
        super().__init__(window.window())
        self.window, self.inspector, self.models = window, inspector, models
        self.turns = turns
        self.debugger = inspector.debugger
        self.task: asyncio.Task[Any] | None = None
        self.asking: asyncio.Task[Any] | None = None
        self._asking_said: str | None = None  # the status bar's text while the model is asked
        self.cancelled = False
        self.taken = 0  # turns taken in this run
        self.last_stop = ""
        # The window's edits (undone and redone ones, another document opened), counted: an answer is taken only
        # when none came since its question was composed.
        self.edits = 0
        self.run_action = QAction("&Run with Model", window.window())
        self.run_action.setShortcut(QKeySequence("Ctrl+F5"))
        self.run_action.setToolTip("Continue through the loop's turns, the configured model giving each next turn "
                                   "and answering latent calls, until a valid final output")
        self.run_action.triggered.connect(lambda _checked=False: self.start())
        self.stop_action = QAction("St&op Running with Model", window.window())
        # Never Ctrl+Alt+F<n>: X11's keymap switches to a text console with those, and the window never hears them.
        self.stop_action.setShortcut(QKeySequence("Ctrl+Shift+F2"))  # Cancel Running Calls' Ctrl+F2, shifted
        self.stop_action.triggered.connect(lambda _checked=False: self.cancel())
        self.break_before = QAction("Break &Before Each Model Turn", window.window(), checkable=True)
        self.break_before.setToolTip("Before each turn is asked for, show the request as it will be sent; the "
                                     "answer can be edited or replaced before it is taken")
        self.break_refused = QAction("Break on a Refused &Answer", window.window(), checkable=True)
        self.break_refused.setChecked(True)
        self.break_refused.setToolTip("A turn that breaks the request schema opens with its problems, to correct")
        settings = window.settings  # the breakpoint kinds are the user's, kept between sessions
        for key, action in ((BREAK_BEFORE, self.break_before), (BREAK_REFUSED, self.break_refused)):
            kept = settings.value(key)
            if kept is not None:
                action.setChecked(str(kept).lower() == "true")
            action.toggled.connect(lambda on, key=key: settings.setValue(key, "true" if on else "false"))
        run = window.menu("Run")
        run.addSeparator()
        for action in (self.run_action, self.stop_action, self.break_before, self.break_refused):
            run.addAction(action)
        toolbar = inspector.panel.findChild(QToolBar)
        if toolbar is not None:
            toolbar.addAction(self.run_action)
        cancel = inspector.panel.actions_by_name.get("cancel")
        if cancel is not None:  # the debugger's Cancel ends the run too
            cancel.triggered.connect(self.cancel)
        self.debugger.stateChanged.connect(self.update)
        models.changed.connect(self.update)
        # Which turn of the loop the calls panel shows, and who gave it (the turn's record, `_model`).
        self.turn_label = QLabel()
        self.turn_label.setObjectName("turnLabel")
        self.turn_label.setContentsMargins(4, 0, 4, 0)
        self.turn_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Wrapped: a long heading (an imported turn's model, its tokens) on one line widened the window past the screen.
        self.turn_label.setWordWrap(True)
        panel = inspector.panel
        layout = panel.layout()
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(1, self.turn_label)
        inspector.model.refreshed.connect(self.show_turn)
        window.document.changed.connect(self.show_turn)
        window.document.changed.connect(self._edited)
        window.document.documentReplaced.connect(self._edited)
        self.update()
        self.show_turn()

    def show_turn(self, *_: object) -> None:
        """The calls panel's heading: the current turn's number and its record (model, tokens, latency)."""
        document = self.turns.document()
        turn = turn_of(document)
        self.turn_label.setText(turn)
        self.turn_label.setVisible(bool(turn))

    def _edited(self) -> None:
        self.edits += 1

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def update(self) -> None:
        ready = bool(self.models.config.ready)
        self.run_action.setEnabled(ready and not self.running and not self.debugger.running)
        self.run_action.setStatusTip("" if ready else "No model is set up: Run → Models…")
        self.stop_action.setEnabled(self.running)

    # -- commands ---------------------------------------------------------------------------------------

    def start(self) -> asyncio.Task[Any] | None:
        if not self.run_action.isEnabled():
            return None
        self.cancelled = False
        self.taken = 0
        self.task = spawn(self._run())
        self.task.add_done_callback(lambda _task: self.update())
        self.update()
        return self.task

    def cancel(self) -> None:
        """Stop the run: between turns it asks nothing more; inside one, the request or the calls are cancelled."""
        if not self.running:
            return
        self.cancelled = True
        if self.asking is not None:
            self.asking.cancel()
        if self.debugger.running:  # inside a tick: its calls, and a model's answer on its way, are dropped
            self.debugger.cancel()
            if self.task is not None:
                self.task.cancel()
        dialog = self.turns.dialog
        if dialog is not None:
            dialog.reject()

    # -- the run ---------------------------------------------------------------------------------------

    async def _run(self) -> str:
        using = self.debugger.use_model
        self.debugger.use_model = True  # Continue asks the model for latent calls
        try:
            reason = await self._turns()
        except asyncio.CancelledError:
            if not self.cancelled:
                raise
            reason = "cancelled inside the tick"
        finally:
            self.debugger.use_model = using
            self.asking = None
        self.last_stop = reason
        self.inspector.panel.message.setText(f"Run with Model: {reason}")
        self.stopped.emit(reason)
        return reason

    async def _turns(self) -> str:
        if self.debugger.refuses():  # as `contextdeck run` refuses it: no call runs and no model is asked
            return self.debugger.last_stop
        while True:
            if self.cancelled:
                return "cancelled"
            output = self.turns.finished()
            if output is not MISSING:
                return "finished: the final output is valid"
            if self.turns.lazy():
                return "the plan is lazy: Run → Approve Plan, then Run with Model again"
            if not self.turns.tick_over():
                await self.debugger.continue_()
                if self.cancelled:
                    return "cancelled"
                if not self.turns.tick_over():  # a breakpoint, a pause, a failure: the debugger says which
                    return f"stopped in the tick: {self.debugger.last_stop or 'see the calls panel'}"
                continue
            if self.taken >= MAX_TURNS:
                return f"no final output after {self.taken} turns"
            problem = await (self._turn_in_dialog(ask=True) if self.break_before.isChecked() else self._turn())
            if problem is not None:
                return problem
            self.taken += 1
            if self.turns.tick_over():  # a turn without calls: its tick is over at once
                self.turns.conclude_tick()

    async def _turn(self) -> str | None:
        """Ask the model for the next turn and take it; a refused answer stops, or breaks into the dialog. An answer
        to a document edited meanwhile answers a question nobody asks any more: it is not taken."""
        models = self.models
        asker = models.asker()
        asked = self.edits
        self._await_turn(True)
        answer: Answer | None = None
        refused: ModelError | None = None
        try:
            await asker.provider.prepare()
            self.asking = spawn(self._ask(asker))
            answer = await self.asking
        except asyncio.CancelledError:
            if self.cancelled:
                return "cancelled while the model was asked"
            raise
        except ModelError as error:
            if error.kind != "invalid":
                return f"the model failed: {error}"
            refused = error
        finally:
            self.asking = None
            self._await_turn(False)
            await asker.provider.close()
        if self.edits != asked:  # said where the wait was
            self.window.statusBar().showMessage(f"Run with Model: {DOCUMENT_CHANGED}")
            return DOCUMENT_CHANGED
        if refused is not None:
            if not self.break_refused.isChecked():
                return f"the model's turn was refused: {refused}"
            return await self._turn_in_dialog(refused=refused)
        assert answer is not None
        problem: str | None = self.turns.take_turn(answer.value, answer.summary)
        return problem

    def _await_turn(self, waiting: bool) -> None:
        """While the model is asked: the status bar says so, and Step and Continue wait for the answer."""
        self.debugger.set_awaiting_turn(waiting)
        bar = self.window.statusBar()
        if waiting:
            self._asking_said = f"Run with Model: asking {self.models.config.model} for the next turn…"
            bar.showMessage(self._asking_said)
        elif bar.currentMessage() == self._asking_said:
            bar.clearMessage()

    async def _ask(self, asker: Any) -> Answer:
        """The whole request as composed, asked; a big document is composed on a frozen copy off the GUI thread
        (as the Next Turn dialog composes it)."""
        document = self.turns.document()
        activities, tools, context = self.turns.activities(), self.turns.tools(), document.context
        if len(context) < BACKGROUND_FROM:
            prompt = request_prompt(context, document.schema, activities=activities, tools=tools)
        else:
            view = await view_of(context)
            prompt = await asyncio.to_thread(lambda: request_prompt(view.joined(), document.schema,
                                                                    activities=activities, tools=tools))
        answer: Answer = await asker.ask(prompt)
        return answer

    async def _turn_in_dialog(self, *, ask: bool = False, refused: ModelError | None = None) -> str | None:
        """The Next Turn dialog: the request as it will be sent, the model's answer (asked now, or the refused
        reply with its problems) to review and edit; Take Turn goes on, closing it stops the run."""
        dialog = self.turns.open_dialog()
        if dialog is None:
            return "the next turn cannot be taken now"
        closed: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        def settle(result: int) -> None:
            if not closed.done():
                closed.set_result(result)

        dialog.finished.connect(settle)
        if refused is not None:
            dialog.editor.setPlainText(refused.reply or "")
            dialog.check()
            dialog.status.setText(f"The model's turn was refused: {refused.reason}. Correct it, then Take Turn.")
        elif ask:
            dialog.intro.setText("Run with Model stopped before the model's turn. The request on the right is "
                                 "what is sent; the model's answer fills the text: edit or replace it, then "
                                 "Take Turn to go on (Close stops the run).")
            dialog.ask()
        result = await closed
        if result != QDialog.DialogCode.Accepted:
            return "cancelled" if self.cancelled else "stopped at the model's turn: the turn was not taken"
        return None


def turn_of(document: Any) -> str:
    """`Turn 2 · fake-small · 18 tokens · 240 ms`: the turn whose calls the document runs now, and who gave it.

    A solution without calls of its own (an imported run's final answer) is a turn after the last plan, while
    the calls listed are that plan's: the heading names both, so the plan's calls are not read as the answer's."""
    found = turn_record(document)
    if found is None or refused_solution(document.context, document.solution) is not None:
        return ""  # (refused: nothing of it runs, and the calls panel's note says why)
    said = f"Turn {found.number} · {turn_words(found.audit)}"
    _calls, plan_index = pending_calls(document.context, document.solution)
    if plan_index is None:
        return said
    listed = len(document.context.indices_of(Form.PLAN, plan_index + 1))  # the plan's place among the plans
    if listed == found.number:
        return said
    answered = isinstance(document.solution, dict) and "output" in document.solution
    return f"Turn {listed}'s calls · then turn {found.number}{', the answer' if answered else ''}: " \
        f"{turn_words(found.audit)}"


def install_agent_run(window: Workbench, inspector: Inspector, turns: LoopUI, models: Models) -> AgentRunUI:
    """Run → Run with Model, Stop, and its breakpoint kinds (`window.agent_run`)."""
    return AgentRunUI(window, inspector, turns, models)
