"""`install_inspector(window)`: the calls panel, call inspector, plan graph and output audit as docks.

Uses only the hooks of a `Workbench` (gui/_workbench.py): the document model, the command API, `add_dock`,
`menu(name)`. The window calls it once from its constructor and hands the parts to the components that use them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMenu

from contextdeck.engine import Activities, Edit, Insert, fork

from .._seen import seen
from ._audit import OutputAudit
from ._breakpoints import SIDECAR_KEY
from ._call_inspector import CallInspector
from ._calls import CallsModel
from ._debugger import Debugger
from ._graph import PlanGraphView
from ._panel import CallsPanel, no_calls_note
from ._session_views import CallStackView, SessionsView
from ._sessions import Sessions

if TYPE_CHECKING:
    from .._workbench import Workbench


@dataclass
class Inspector:
    """The installed parts, for tests and for the window (`window.inspector`)."""

    model: CallsModel
    debugger: Debugger
    panel: CallsPanel
    inspector: CallInspector
    graph: PlanGraphView
    audit: OutputAudit
    docks: dict[str, QDockWidget]
    sessions: Sessions | None = None  # the call stack of delegate sessions (Step Into / Out)
    session_view: SessionsView | None = None
    wiring: _Wiring = field(init=False)  # keeps the panels in step, made once the parts are


class _Wiring(QObject):
    """Keeps the panels in step: selection, refreshes (coalesced), documents replaced."""

    def __init__(self, window: Workbench, parts: Inspector) -> None:
        super().__init__(parts.panel)
        self.window, self.parts = window, parts
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.refresh_views)
        self._message: int | None = None
        self._graph_dirty = True
        self._call_behind: tuple[int | None] | None = None  # (row,) to show when the inspector's tab is raised
        self._shown_session = 0
        self._ran_to: int | None = None  # the last message a run wrote, shown when the run stops
        # ... in a turn of its own: the editor's new page and the timeline's scroll do not join the run's last turn.
        self._show_ran = QTimer(self, singleShot=True, interval=0)
        self._show_ran.timeout.connect(self._select_ran_to)
        self.ask_fork_path: Callable[[], str | None] = self._ask_fork_path
        parts.debugger.stateChanged.connect(self._run_stopped)

    def document_replaced(self) -> None:
        parts = self.parts
        parts.debugger.execution = None
        parts.debugger.snapshot = None
        session = self.window.session
        document = session.document
        parts.panel.message.clear()  # what a run or a load said was of the document before ("no final output...")
        parts.model.set_source(document.context, document.solution, {"path": document.path}, session.take_reads())
        parts.audit.show_message(None, None)
        self._message = None
        if parts.sessions is not None:
            parts.sessions.reset()

    def path_changed(self, path: Path | None) -> None:
        """Saved under another name: delegate files are now found next to the new file. The calls are judged
        again on a coming turn (`schedule_refresh`): a document opened changes the path just before it replaces the
        document, whose own judgement (`set_source`) supersedes it; judged at once, the document going away was
        judged again in the hand-over's turn."""
        self.parts.model.origin = {"path": path}
        sessions = self.parts.sessions
        if not self.parts.debugger.running:
            self.parts.debugger.execution = None  # statuses come from the run record: nothing is lost
            if sessions is not None:
                sessions.reset()
        elif sessions is not None:
            sessions.rename()  # the run goes on in its sessions; only the name changes
        self.parts.model.schedule_refresh()

    def session_switched(self) -> None:
        """The call stack's current session in front: the document's calls, or the delegate session."""
        sessions = self.parts.sessions
        assert sessions is not None
        if sessions.current != self._shown_session:
            self._shown_session = sessions.current
            docks = self.parts.docks
            if sessions.current == 0:
                self.window.bring_to_front(docks["Calls"])
            else:
                self.window.bring_to_front(docks["Delegate session"])
                self.window.bring_to_front(docks["Call stack"])

    def schedule(self, *_: object) -> None:
        self._timer.start()

    def refresh_views(self) -> None:
        parts = self.parts
        self._graph_dirty = True
        self.graph_visible(seen(parts.graph))
        current = parts.panel.view.currentIndex()
        row = current.row() if current.isValid() else None
        self.show_call(row)
        selected = self.window.document.selected_message()
        if selected is not None:
            self.show_message(selected)

    @property
    def graph_pending(self) -> bool:
        """The plan graph has changes it will draw when it is shown."""
        return self._graph_dirty

    def graph_visible(self, visible: bool) -> None:
        """The plan graph is drawn only while it can be seen; it catches up when it is shown."""
        if visible and self._graph_dirty:
            self._graph_dirty = False
            model = self.parts.model
            self.parts.graph.show_plan(model.plans(), model.statuses(), no_calls_note(model.context, model.solution))

    def inspector_visible(self, visible: bool) -> None:
        if visible and self._call_behind is not None:
            self.show_call(*self._call_behind)

    def audit_visible(self, visible: bool) -> None:
        if visible and self._message is not None:
            self._audit(self._message)

    def show_call(self, row: int | None) -> None:
        # Like the audit: the inspector lists every scoped message of the call (thousands in a big document)
        # and is rebuilt after each calls refresh, so only while it can be seen; it catches up when raised.
        if not seen(self.parts.inspector):
            self._call_behind = (row,)
            return
        self._call_behind = None
        model = self.parts.model
        if row is None or not 0 <= row < model.rowCount():
            self.parts.inspector.show_call(None, None)
            return
        self.parts.inspector.show_call(model.context, model.getItem(row), model.recorded(row))

    def show_message(self, index: int) -> None:
        # The audit blames the output's path (a fold with a trail, O(writes of the lane)): only while
        # it can be seen, not while it is tabbed behind another dock; it catches up when its tab is raised.
        self._message = index
        if seen(self.parts.audit):
            self._audit(index)

    def _audit(self, index: int) -> None:
        context = self.window.document.context()
        # The message remembered while the audit was hidden may be gone since (removed, undone, another document).
        shown = index if 0 <= index < len(context) else None
        self.parts.audit.show_message(context, shown, self.window.document.document.solution)

    def _ask_fork_path(self) -> str | None:
        """The fork's file, its name suggested beside the document: `doc-fork-4.json` for a fork at message #4."""
        own, at = self.window.session.path, self.window.document.selected_message()
        name = f"{self.window.session.name}-fork-{at}{own.suffix if own is not None else '.json'}"
        return self.window.files.ask_save_path(f"Fork at message #{at}: save the fork as", name)

    def fork_here(self) -> Path | None:
        """Run → Fork Here…: the document up to the selected message, saved under a new name and opened.

        Nothing is run: what ran before that message stays done in the fork (its outputs are its record).
        The open document is left as it is (its unsaved changes are asked about first).
        """
        window = self.window
        index = window.document.selected_message()
        if not isinstance(index, int):
            self.parts.panel.message.setText("Fork Here: select the message to fork at in the timeline first")
            return None
        if not window.files.confirm_discard("forking the document"):
            return None
        chosen = self.ask_fork_path()
        if not chosen:
            return None
        branch = fork(window.document.document, index)
        try:
            branch.save(chosen)
        except OSError as error:
            self.parts.panel.message.setText(f"Fork Here: could not write {chosen}: {error}")
            return None
        own = window.session.path
        window.files.carry_recording(own, Path(chosen))
        forked = own.name if own is not None else window.session.name
        window.files.open_saying(chosen, f"Forked {forked} at message #{index} into {Path(chosen).name}, which ends "
                                         "there: nothing was run (what ran stays done).")
        return Path(chosen)

    def select_call(self, row: int) -> None:
        self.parts.panel.view.select_call(row)
        self.window.bring_to_front(self.parts.docks["Call inspector"])

    def push(self, text: str, edits: list[Edit], applied: bool) -> None:
        commands = self.window.commands
        if applied:
            commands.record(text, edits)
        else:
            commands.apply_all(text, edits)
        written = [edit.index for edit in edits if isinstance(edit, Insert)]
        if applied and written:
            self._ran_to = max(written)
            self._run_stopped()

    def _run_stopped(self) -> None:
        # Once a run (a step or a Continue) stops, the time cursor moves to the last message it wrote, so the
        # state and the other views show what it did, not the state as of the message selected before it.
        # Once, at the end: not on each of a long run's steps.
        if self._ran_to is not None and not self.parts.debugger.running:
            self._show_ran.start()

    def _select_ran_to(self) -> None:
        ran_to, self._ran_to = self._ran_to, None
        if ran_to is not None and not self.parts.debugger.running and ran_to < len(self.window.document.context()):
            self.window.document.select_message(ran_to)


def install_inspector(window: Workbench) -> Inspector:
    """Add the inspector's docks and actions to `window`; returns the parts.

    The main window installs it when it is built, once, keeps the parts as its `inspector` and hands them to
    the components that use them.
    """
    activities = Activities()
    # Children of the window, deleted with it (never left alive to the cycle collector: contextdeck/_runtime.py).
    model = CallsModel(activities=lambda: activities, parent=window.window())
    debugger = Debugger(model, activities, parent=window.window())
    debugger.dialog_parent = window.window()
    panel = CallsPanel(model, debugger)
    parts = Inspector(model, debugger, panel, CallInspector(), PlanGraphView(), OutputAudit(), {})
    wiring = _Wiring(window, parts)
    parts.wiring = wiring
    left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                           Qt.DockWidgetArea.BottomDockWidgetArea)
    docks = parts.docks
    docks["Calls"] = window.add_dock(panel, "Calls", left)
    docks["Call inspector"] = window.add_dock(parts.inspector, "Call inspector", right)
    docks["Output audit"] = window.add_dock(parts.audit, "Output audit", right)
    docks["Plan graph"] = window.add_dock(parts.graph, "Plan graph", bottom)
    # The right area holds two tab groups, the document's views (State, LLM view) above the run's (Call
    # inspector, Output audit, Delegate session) below: five tabs in one strip did not fit its width at
    # 1280 or 1600 pixels, and the last ones were reached only by the strip's scroll arrows.
    window.tabifyDockWidget(docks["Call inspector"], docks["Output audit"])
    window.tabifyDockWidget(window.watch_dock, docks["Plan graph"])
    _install_sessions(window, parts)
    for dock in (docks["Call inspector"], window.state_dock, window.watch_dock):  # the window's own views in front
        window.bring_to_front(dock)

    sidecar = window.session.sidecar  # breakpoints are kept per document, by the calls' identity
    model.kept_breakpoints = lambda: sidecar.value(SIDECAR_KEY, {})
    model.keep_breakpoints = lambda value: sidecar.set_value(SIDECAR_KEY, value)
    debugger.apply_edits = lambda text, edits: wiring.push(text, edits, applied=False)
    debugger.record_run = lambda text, edits: wiring.push(text, edits, applied=True)
    panel.view.callSelected.connect(lambda _row: window.bring_to_front(docks["Call inspector"]))
    panel.view.callSelected.connect(wiring.show_call)
    parts.graph.callClicked.connect(wiring.select_call)
    panel.view.callSelected.connect(parts.graph.choose)  # the graph shows the selected call; its keys go from it
    parts.audit.callActivated.connect(wiring.select_call)
    parts.inspector.sourceActivated.connect(window.document.select_message)
    window.document.messageSelected.connect(wiring.show_message)
    docks["Call inspector"].visibilityChanged.connect(wiring.inspector_visible)
    docks["Output audit"].visibilityChanged.connect(wiring.audit_visible)
    docks["Plan graph"].visibilityChanged.connect(wiring.graph_visible)
    model.refreshed.connect(wiring.schedule)
    model.dataChanged.connect(wiring.schedule)
    window.document.documentReplaced.connect(wiring.document_replaced)
    window.session.pathChanged.connect(wiring.path_changed)

    run = window.menu("Run")
    for name in ("step", "continue", "pause", "restart", "cancel"):
        run.addAction(panel.actions_by_name[name])
    assert parts.sessions is not None
    run.addSeparator()
    for name in ("step_into", "step_out"):  # Step is Step Over
        run.addAction(parts.sessions.actions_by_name[name])
    run.addSeparator()
    run.addAction(panel.actions_by_name["rerun_stale"])
    run.addAction(panel.actions_by_name["break_on_failure"])
    run.addAction(panel.actions_by_name["approval"])
    run.addAction(panel.actions_by_name["timeout"])
    run.addAction(panel.actions_by_name["in_process"])
    run.addSeparator()
    fork_action = run.addAction("Fork &Here…")
    fork_action.setToolTip("A new document with the messages up to the selected one (nothing is run again)")
    fork_action.triggered.connect(lambda _checked=False: wiring.fork_here())
    file_menu = window.menu("File")
    file_menu.insertAction(_after_open(file_menu), panel.actions_by_name["load_activities"])
    wiring.document_replaced()
    return parts


def _install_sessions(window: Workbench, parts: Inspector) -> None:
    """Delegate sessions: a dock with the open session (tabbed with the state) and the call stack (with the
    watches), both brought to the front when a session is stepped into.

    Step (F10) and Continue (F5) act on the current session: a delegated call runs its whole session as
    one step (Step Over).
    """
    def title() -> str:
        path = window.document.path
        return path.name if path is not None else "Untitled"

    sessions = Sessions(parts.model, parts.debugger, title, parts.panel)
    parts.sessions = sessions
    parts.session_view = SessionsView(sessions)
    right, bottom = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea
    parts.docks["Delegate session"] = window.add_dock(parts.session_view, "Delegate session", right)
    parts.docks["Call stack"] = window.add_dock(CallStackView(sessions), "Call stack", bottom)
    window.tabifyDockWidget(parts.docks["Call inspector"], parts.docks["Delegate session"])
    window.tabifyDockWidget(window.watch_dock, parts.docks["Call stack"])
    parts.panel.commands = sessions  # Step and Continue act on the current session
    window.commands.replayed.connect(sessions.replayed)  # no session's note speaks of an output undone
    sessions.changed.connect(parts.wiring.session_switched)


def _after_open(menu: QMenu) -> Any:
    """The File menu entry before which Load activities… goes: the first separator, else the end."""
    return next((action for action in menu.actions() if action.isSeparator()), None)
