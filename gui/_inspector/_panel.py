"""The calls panel with its debugger toolbar, and the actions of the Run menu."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog, QToolBar, QVBoxLayout, QWidget

from contextdeck.engine import ActivityLoadError, Messages, body_of, load_activities, pending_calls, prestart_workers

from .._questions import confirm_code as ask_to_run
from .._summary import counted
from ._calls import CallsModel, CallsView
from ._debugger import Debugger, refused_solution
from ._style import PanelMessage


def confirm_code(parent: QWidget | None, path: str) -> bool:
    """Ask before running code: loading an activities file executes it."""
    return ask_to_run(parent, "Load activities?", path,
                      "Loading it runs it now, with your permissions, and its activities will run when calls to their "
                      "tools are stepped.</p><p>Load only files you trust. A document can never load code by itself.")


def ask_activities_path(parent: QWidget | None, folder: str = "") -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Load activities", folder, "Python files (*.py)")
    return path or None

NO_CALLS = "No calls: the document has no solution and no plan message."
EMPTY_PLAN = "No calls: the last plan message (#{}) has none yet; add them in the editor's Form tab (+ call)."
ANSWER_PLAN = "No calls: the last plan message (#{}) gives the final output."
EMPTY_SOLUTION = "No calls: the solution has none."
FINAL_OUTPUT = "No calls: the solution is a final output, and no plan message called any."


def no_calls_note(context: Messages | None, solution: Any) -> str:
    """Why there is nothing to run: the calls come from the solution, else the last plan message."""
    refused = refused_solution(context, solution)
    if refused is not None:  # none of its calls is shown, nor the last plan's in its place
        return f"No calls: {refused}."
    if isinstance(solution, list) or (isinstance(solution, dict) and isinstance(solution.get("calls"), list)):
        return EMPTY_SOLUTION
    plan = None if context is None else pending_calls(context, solution)[1]
    if plan is not None:
        # A model's last turn is a plan message with no calls and the output that ends the loop: nothing to add.
        answered = context is not None and body_of(context[plan]).get("output") is not None
        return (ANSWER_PLAN if answered else EMPTY_PLAN).format(plan)
    # A solution without `calls` (an imported run's last reply) is there all the same: not "no solution".
    return FINAL_OUTPUT if isinstance(solution, dict) and solution.get("output") is not None else NO_CALLS


class Commands(Protocol):
    """Step and Continue, as the calls panel's buttons and F10 / F5 start them."""

    def start_step(self) -> Any: ...

    def start_continue(self) -> Any: ...


class CallsPanel(QWidget):
    """The calls table under a toolbar: Step, Continue, Pause, Restart, approval before each call."""

    def __init__(self, model: CallsModel, debugger: Debugger, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.debugger = debugger
        self.view = CallsView(model)
        self.message = PanelMessage()  # the panel's own: above its table, in a box, not by the status bar
        # Injected in tests; by default a file dialog and a warning box.
        self.folder: Callable[[], str] = lambda: ""  # where the file dialog starts: beside the document (the window's)
        self.ask_path: Callable[[QWidget | None], str | None] = lambda parent: ask_activities_path(parent,
                                                                                                   self.folder())
        self.confirm: Callable[[QWidget | None, str], bool] = confirm_code
        # What Step and Continue act on: this debugger, or the delegate sessions over it (their current one).
        self.commands: Commands = debugger
        self.actions_by_name = self._actions()
        toolbar = QToolBar("Debugger")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for name in ("step", "continue", "pause", "cancel", "restart", None, "rerun_stale", None, "approval"):
            if name is None:
                toolbar.addSeparator()
            else:
                toolbar.addAction(self.actions_by_name[name])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(toolbar)
        layout.addWidget(self.message)
        layout.addWidget(self.view, 1)
        debugger.stateChanged.connect(self._update)
        debugger.stopped.connect(self.message.setText)
        debugger.callFocused.connect(self.view.select_call)
        self.view.runCallRequested.connect(debugger.start_run_call)
        self.view.runToRequested.connect(debugger.start_run_to)
        self.view.conditionRequested.connect(self.ask_condition)
        model.modelReset.connect(self._update)
        model.refreshed.connect(self._update)  # a plan without calls inserted into a document without any
        self._update()

    def _actions(self) -> dict[str, QAction]:
        debugger = self.debugger
        table: list[tuple[str, str, QKeySequence | str, Callable[[], object], str]] = [
            ("step", "Step", QKeySequence("F10"), lambda: self.commands.start_step(),
             "Run the next ready call of the current session"),
            ("continue", "Continue", QKeySequence("F5"), lambda: self.commands.start_continue(),
             "Run the current session's calls until a breakpoint or until nothing is ready"),
            ("pause", "Pause", QKeySequence("Shift+F5"), debugger.pause, "Stop once the running calls have finished"),
            ("cancel", "Cancel Running Calls", QKeySequence("Ctrl+F2"), debugger.cancel,
             "Cancel the calls running now (each gets a 'cancelled' error message)"),
            ("rerun_stale", "Re-run Stale Calls", QKeySequence("Ctrl+Shift+R"), debugger.start_rerun_stale,
             "Run again the calls whose inputs changed since they ran, and what read their outputs"),
            ("timeout", "Activit&y Timeout…", "", self.ask_timeout, "How long an activity may run before it fails"),
            ("restart", "Restart", QKeySequence("Ctrl+Shift+F5"), debugger.restart,
             "Back to the document as it was before the first step"),
            ("load_activities", "Load Ac&tivities…", "", self.load_activities,
             "Load a Python file of activities (it is code: you are asked first)"),
        ]
        actions: dict[str, QAction] = {}
        for name, text, shortcut, slot, tip in table:
            action = QAction(text, self)
            if shortcut:
                action.setShortcut(shortcut)
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.triggered.connect(lambda _checked=False, run=slot: run())
            actions[name] = action
        on_failure = QAction("Break on &Failure", self)
        on_failure.setCheckable(True)
        on_failure.setToolTip("Continue stops once a call has failed (the calls already running finish)")
        on_failure.toggled.connect(lambda on: setattr(debugger, "break_on_failure", on))
        actions["break_on_failure"] = on_failure
        approval = QAction("Appro&ve each call", self)
        approval.setCheckable(True)
        approval.setToolTip("Ask before each call runs: approve, reject, or edit it")
        approval.toggled.connect(lambda on: setattr(debugger, "approval_enabled", on))
        actions["approval"] = approval
        in_process = QAction("Run Activities &In-Process", self)
        in_process.setCheckable(True)
        in_process.setToolTip("Faster, but a crash, a hang or a busy loop in an activity is the window's, and "
                              "Cancel or a timeout cannot stop it (off: each call in a worker process)")
        in_process.toggled.connect(lambda on: setattr(debugger, "in_process", on))
        actions["in_process"] = in_process
        return actions

    def _update(self) -> None:
        running, busy = self.debugger.running, self.debugger.busy
        has_calls = self.model.rowCount() > 0
        self.actions_by_name["step"].setEnabled(has_calls and not busy)
        self.actions_by_name["continue"].setEnabled(has_calls and not busy)
        self.actions_by_name["pause"].setEnabled(running)
        self.actions_by_name["cancel"].setEnabled(running)
        self.actions_by_name["rerun_stale"].setEnabled(has_calls and not busy)
        self.actions_by_name["restart"].setEnabled(not running)
        # Not while a big document's calls are being judged: the note would say there are none, and showing it
        # lays out the panel in the turn that hands the document over.
        if not has_calls and not self.model.judging:
            self.message.setText(no_calls_note(self.model.context, self.model.solution))
        elif self.message.text().startswith("No calls: "):
            self.message.clear()  # a document with calls replaced one without

    def ask_condition(self, row: int) -> None:
        """A row's "Breakpoint Condition…": stop at the call only while a `†` expression is truthy (empty: always)."""
        current = self.model.conditions.get(row, "")
        text, accepted = QInputDialog.getText(
            self, "Breakpoint condition", f"Stop before call #{row} when this expression is found and truthy "
            "(for example †state.refund.amount; empty: always):", text=current)
        if accepted:
            self.model.set_breakpoint(row, True, text)

    def ask_timeout(self) -> None:
        """Run → Activity Timeout…: the seconds an activity may run (an activity's own `timeout` wins)."""
        value, accepted = QInputDialog.getDouble(
            self, "Activity timeout", "Seconds an activity may run before it fails with a timeout error:",
            self.debugger.timeout, 0.1, 86_400.0, 1)
        if accepted:
            self.debugger.timeout = value
            self.message.setText(f"Activities now time out after {value:g} s")

    def load_activities(self, path: str | None = None) -> bool:
        """File → Load activities…: asks for a file, warns that it is code, then loads it."""
        path = path or self.ask_path(self)
        if not path or not self.confirm(self, path):
            return False
        try:
            loaded = load_activities(path)
        except ActivityLoadError as error:
            self.message.setText(f"Activities not loaded: {error}")
            return False
        self.debugger.activities.update(loaded)
        self.debugger.execution = None  # modes change: the next step analyses the calls again
        if not self.debugger.in_process:
            prestart_workers()  # a worker imports the engine first: ready by the first Step
        self.model.refresh()
        count = counted(len(loaded), "activity", "activities")
        self.message.setText(f"Loaded {count} from {Path(path).name}: {', '.join(loaded.names)}")
        return True
