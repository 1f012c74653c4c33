"""`MainWindow`: the timeline, the data editor, the state, LLM and watch views over one `DocumentSession`.

The window assembles and wires; it holds no state of the document's and pushes nothing into a view. Every
view subscribes to `document` itself (a `DocumentModel`: the document, the selection, the time cursor and
their signals; each view's `follow`); every change goes through `commands` (`Commands`). Installed
components get the hooks of `Workbench` (gui/_workbench.py) and the other components they use, handed to
them here.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QChildEvent, QEvent, QModelIndex, QObject, QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QFont, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QTabBar,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import Activities, Context, Edit

from ._actions import build_actions
from ._activation import install_still_on_activation
from ._agent_run import install_agent_run
from ._banner import Banner
from ._commands import Commands
from ._diagnostics import CheckProgress, DiagnosticsRunner
from ._document_model import DocumentModel
from ._document_settings import DocumentSettings
from ._editor import start_validation_ahead
from ._experiments import install_experiments
from ._files_ui import FilesUI
from ._first_input import input_targets
from ._glyphs import name_qt_buttons
from ._icons import icon
from ._inspector import install_inspector
from ._keyboard import install_keyboard
from ._layout import DockWindow, show_whole_titles
from ._llm import LLMView
from ._message_editor import NEW_MESSAGES, Catalogs, FormsAhead, MessageEditor
from ._models import install_models
from ._seen import seen
from ._session import DocumentSession
from ._slices import free_in_slices, slices
from ._state import StateView
from ._status_bar import CursorLabel, StatusBar
from ._theme import apply_theme
from ._timeline import TimelinePanel
from ._timeline_model import TimelineModel
from ._tool_registry import ToolRegistryUI
from ._tooltips import install_elided_tooltips
from ._traces_ui import install_traces
from ._turns import install_turns
from ._watches import WatchPanel

MENUS = ("File", "Edit", "View", "Run", "Help")
TITLE_BAR_BUTTONS = 160  # what a window manager's icon and minimise, maximise and close buttons take of a title bar
_log = logging.getLogger(__name__)


class MainWindow(DockWindow):
    """The workbench window over `session.document`."""

    def __init__(self, settings: QSettings, session: DocumentSession | None = None) -> None:
        super().__init__()
        free_in_slices()  # what an edit or a cursor move lets go of is freed a slice per turn
        self.settings = settings
        self.session = session if session is not None else DocumentSession(settings, parent=self)
        self.document = DocumentModel(self.session, self, input_targets=self._input_targets)
        self.commands = Commands(self.document, self.session.undo_stack, self)
        self.setWindowIcon(icon("app"))
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self._menus: dict[str, QMenu] = {name: self.menuBar().addMenu(f"&{name}") for name in MENUS}
        self._model: TimelineModel | None = None

        self.timeline = TimelinePanel()
        self.editor = MessageEditor()
        self.editor_title = self.editor.title
        self.forms_ahead = FormsAhead(self.editor, self.context, self._busy_for_forms_ahead, self)
        self.banner = Banner()
        centre = QWidget()
        layout = QVBoxLayout(centre)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(6)
        layout.addWidget(self.banner)
        layout.addWidget(self.editor, 1)
        self.setCentralWidget(centre)
        self.state_view = StateView()
        self.llm_view = LLMView()
        self.watches = WatchPanel()
        self.watches.model.set_busy(self._busy_for_work_ahead)
        self.timeline_dock = self.add_dock(self.timeline, "Timeline", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.state_dock = self.add_dock(self.state_view, "State", Qt.DockWidgetArea.RightDockWidgetArea)
        self.llm_dock = self.add_dock(self.llm_view, "LLM view", Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.state_dock, self.llm_dock)
        self.bring_to_front(self.state_dock)
        self.watch_dock = self.add_dock(self.watches, "Watches", Qt.DockWidgetArea.BottomDockWidgetArea)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.llm_dock.visibilityChanged.connect(self._llm_visibility)
        self.setTabPosition(Qt.DockWidgetArea.RightDockWidgetArea, QTabWidget.TabPosition.North)

        self.setStatusBar(StatusBar(self))
        self.diagnostics = DiagnosticsRunner(self)
        self.cursor_label = CursorLabel()  # where the time cursor is, and what it is
        self.statusBar().addPermanentWidget(self.cursor_label)
        self.diagnostics_label = QLabel()
        self.statusBar().addPermanentWidget(self.diagnostics_label)
        self.diagnostics.finished.connect(self._show_diagnostics)
        self.check_progress = CheckProgress()
        self.statusBar().addPermanentWidget(self.check_progress)
        self.diagnostics.checking.connect(self.check_progress.begin)
        self.diagnostics.checked.connect(self.check_progress.end)
        self.diagnostics.stale.connect(self._diagnostics_stale)
        self.files = FilesUI(self)
        self.actions_by_name: dict[str, QAction] = build_actions(self)
        self.timeline.add_actions([self.actions_by_name[name] for name in (
            "insert_text", "insert_input", "insert_state", "insert_data", "insert_tool", "insert_plan", "insert_error",
            "duplicate", "delete", "move_up", "move_down")])

        self.timeline.currentChanged.connect(self._current_changed)
        self.timeline.callActivated.connect(self._show_item)
        self.state_view.jumpRequested.connect(self.go_to)
        self.watches.jumpRequested.connect(self.go_to)
        self.llm_view.sourceActivated.connect(self.go_to)
        self.editor.message_edited.connect(self._editor_edited)
        self.commands.refused.connect(self._say_refused)
        self.document.selectRequested.connect(self._select_row)
        self.catalogs = Catalogs(self.context, self)
        self.catalogs.changed.connect(self.editor.catalog_changed)
        self.editor.set_catalog_source(self.catalogs.current)
        self.watches.set_reference_source(lambda: self.catalogs.current().references)
        # Each view follows the document model itself: the window pushes nothing into them. Before the window's
        # own handlers, so that a view has shown a new document's nothing before the window selects in it.
        for view in (self.timeline, self.cursor_label, self.editor, self.state_view, self.llm_view, self.watches):
            view.follow(self.document)
        self.document.messageSelected.connect(self.forms_ahead.selected)
        self.document.wait_while(self.timeline.table.is_scrolling)  # a far jump's rows first, then the views
        # A new document's selection in a turn after the window's repaint of its views, its form made ahead.
        self._painted_turn: int | None = None
        self.document.open_after(self._ready_to_open)
        self.document.documentReplaced.connect(self._document_replaced)
        self.commands.turnChanged.connect(self._solution_replaced)  # a turn, or the solution asked for, or undone
        self.document.documentShown.connect(self._document_shown)
        # Bound methods, never lambdas: Qt drops these connections when the window is destroyed.
        self.session.dirtyChanged.connect(self._update_title)
        self.session.pathChanged.connect(self._update_title)
        self.document.changed.connect(self._schedule)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._system_scheme_changed)
        self._document_replaced()
        self.document_settings = DocumentSettings(self)  # after the first document: it restores that one's
        self.inspector = install_inspector(self)  # before the layout is restored, so the saved layout covers its docks
        self.inspector.debugger.stateChanged.connect(self._run_state_changed)
        self.tool_registry = ToolRegistryUI(self)
        self._install_tool_registry()
        tools = self.tool_registry.tools
        self.traces = install_traces(self, tools)
        # The window hands each component the others it uses; none of them reaches into the window for one
        # (each takes a `Workbench`: gui/_workbench.py).
        self.models = install_models(self, self.inspector, tools)
        self.files.carry_recording = self.models.models.carry
        self.turns = install_turns(self, self.inspector, tools)
        models = self.models.models
        self.turns.models_source = lambda: models
        if self.inspector.sessions is not None:
            self.inspector.sessions.models = lambda: models
        self.agent_run = install_agent_run(self, self.inspector, self.turns, models)
        self.experiments = install_experiments(self, self._activities, tools, models)
        # the validation worker, before a form asks it for a check
        start_validation_ahead(self, self._busy_for_work_ahead)
        self.pane_actions = install_keyboard(self, self.inspector)  # after every panel: Tab leaves all their tables
        install_elided_tooltips(self)  # and every cut-off cell of theirs has its whole text on hover
        install_still_on_activation(self)  # and none repaints when a dialog comes or goes
        name_qt_buttons(self)  # Qt's own glyph buttons (a dock's close, a line edit's clear) say what they do
        self._restore_layout()
        self.hide_stale_tab_strips()
        # The window opens with the focus on the timeline, never on the editor's Type box (the first control in
        # Qt's chain), where the first keys typed would re-type the selected message.
        self.timeline.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def _install_tool_registry(self) -> None:
        """File → Load Tool Registry… and Load Tool Folder…, after Load Activities…; every view asks the registry."""
        registry = self.tool_registry
        registry.folder = self.files.folder
        self.inspector.panel.folder = self.files.folder
        file_menu = self.menu("File")
        before = next((action for action in file_menu.actions() if action.isSeparator()), None)
        for name in ("load_tools", "load_tool_folder"):
            if before is None:
                file_menu.addAction(registry.actions_by_name[name])
            else:
                file_menu.insertAction(before, registry.actions_by_name[name])
        self.llm_view.tools = registry.tools
        self.llm_view.activities = self._activities
        self.diagnostics.tools = registry.tools
        self.inspector.model.tools = registry.tools
        registry.changed.connect(self.llm_view.refresh)  # it composes with the registry's tools
        registry.changed.connect(self._tools_changed)

    def _activities(self) -> Activities:
        """The activities the user loaded (they decide which tools are explicit)."""
        activities: Activities = self.inspector.debugger.activities
        return activities

    def _tools_changed(self, message: str) -> None:
        self.statusBar().showMessage(message, 10_000)
        self.inspector.model.refresh()
        self._schedule()

    # -- public hooks --------------------------------------------------------------------------------

    def context(self) -> Context:
        """The open document's context (the engine's own object)."""
        return self.session.document.context

    def menu(self, name: str) -> QMenu:
        """The menu `name`: File, Edit, View, Run or Help."""
        return self._menus[name]

    def select_message(self, index: int) -> None:
        """Select message `index` in the timeline (this moves the time cursor there)."""
        self.document.select_message(index)

    def _select_row(self, index: int) -> None:
        if self._model is not None and 0 <= index < len(self.context()):
            self._model.announce_appended()  # a message a run appended this turn has its row now
            self.timeline.set_current(self._model.index(index, 0))

    def go_to(self, index: int) -> None:
        """Select message `index`, clearing a timeline filter that hides it (Go to Message, jumps from views)."""
        if self._model is not None and 0 <= index < len(self.context()):
            self._model.announce_appended()
            self.timeline.reveal(self._model.index(index, 0))

    def go_to_dialog(self) -> None:
        """Ask for a message number (Ctrl+G) and go there."""
        count = len(self.context())
        if not count:
            return
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Go to Message")
        dialog.setInputMode(QInputDialog.InputMode.IntInput)
        dialog.setLabelText(f"Message number (0 to {count - 1}):")
        dialog.setIntRange(0, count - 1)
        dialog.setIntValue(self.selected_message() or 0)
        # As narrow as its short label, the window manager cut the title ("Go to … ssage"): room for it in a bold
        # title font, beside an icon and three title-bar buttons.
        bold = QFont(dialog.font())
        bold.setBold(True)
        label = dialog.findChild(QLabel)  # the dialog's own minimum is its layout's: the label sets it
        if label is not None:
            label.setMinimumWidth(QFontMetrics(bold).horizontalAdvance(dialog.windowTitle()) + TITLE_BAR_BUTTONS)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.intValueSelected.connect(self._went_to)
        dialog.open()

    def _went_to(self, index: int) -> None:
        """The keys go on in the timeline, from the message gone to: the control that had the focus may be gone
        with the editor's old form, and Qt's next in line could be a box the next key would change."""
        self.go_to(index)
        self.timeline.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def selected_message(self) -> int | None:
        """The index of the selected message, or None (`document.selected_message`)."""
        return self.document.selected_message()

    def time_cursor(self) -> int | None:
        """The message the views show the context as of, or None when they follow the latest."""
        return self.document.time_cursor()

    def at(self) -> int | None:
        """The cursor as the engine's `at` (a count of messages), None for all."""
        return self.document.at()

    def set_follow_latest(self, follow: bool) -> None:
        if self.document.set_follow_latest(follow):  # the views follow at once
            self.actions_by_name["follow"].setChecked(follow)

    # -- the document ------------------------------------------------------------------------------

    def _document_replaced(self) -> None:
        # The load froze the new document (contextdeck/_runtime.py owns the collector). The replaced document's
        # timeline model is deleted, not kept as the window's child: it held that whole document.
        old = self._model
        if old is not None:
            old.detach()
        context = self.context()
        # the timeline's child, not the window's: see `DockWindow.childEvent`
        self._model = TimelineModel(context, self.session.document.solution, self.timeline)
        self._model.moveRequested.connect(self._move_requested)
        self.timeline.set_model(self._model)
        if old is not None:
            old.deleteLater()
        self._update_title()
        self.diagnostics.schedule(self.session.document)
        self._painted_turn = None  # the last message is selected after the repaint of this (`documentShown`)
        if len(context):
            self.forms_ahead.opening(len(context) - 1)  # its form, made before it is selected

    def _solution_replaced(self) -> None:
        if self._model is not None:
            self._model.solution_replaced(self.session.document.solution)

    def _document_shown(self) -> None:
        self.forms_ahead.shown(self.selected_message())

    def _input_targets(self) -> list[QObject]:
        return input_targets(self)

    def _ready_to_open(self) -> bool:
        """The new document's last message may be selected: the window has repainted the document's views, and
        the editor's form of that message is made (`FormsAhead.opening`)."""
        return self._repainted() and not self.forms_ahead.opening_pending()

    def _repainted(self) -> bool:
        """The window has repainted since the document was replaced, two turns before this one or more (or it is
        not on screen: nothing to wait for). In the turn right after a long repaint, timers overdue meanwhile
        fire in no set order: one of them, the opening's, would join the repaint's frame."""
        if not self.isVisible() or self.isMinimized():
            return True
        return self._painted_turn is not None and slices().turns > self._painted_turn + 1

    def _run_state_changed(self) -> None:
        # A run's outputs become timeline rows once per turn while it runs, all of them when it stops; the views
        # that recompute follow a few times a second.
        running = self.inspector.debugger.running
        self.document.pace_for_a_run(running)
        if self._model is not None:
            self._model.pace_for_a_run(running)

    def _update_title(self, *_changed: object) -> None:
        path = self.session.path
        name = path.name if path is not None else self.session.called or "Untitled"
        self.setWindowTitle(f"{name}[*] — ContextDeck")
        self.setWindowModified(self.session.is_dirty())

    # -- selection and the time cursor ---------------------------------------------------------------

    def _current_changed(self, index: QModelIndex) -> None:
        message = self._model.message_index(index) if self._model is not None else -1
        if not index.isValid():  # no row left (the last message deleted, its insert undone): not the solution's
            self.document.clear_selection()
        elif index.parent().isValid() or message < 0:
            self._show_item(index)
            self.document.set_selected(None)
        else:
            # The editor and the timeline's shade follow at once; the state and watches on the next turn of the
            # event loop (`DocumentModel.viewsDue`): the editor shows first, no step holds the GUI thread long.
            self.document.set_selected(message)

    def _busy(self) -> bool:
        """A selection's or an edit's work is still queued (the views' slices, a far jump's rows)."""
        return self.document.views_pending() or slices().pending or self.timeline.table.is_scrolling()

    def _busy_for_forms_ahead(self) -> bool:
        """The editor's forms made ahead wait for the views' queued work, and while a modal dialog is open over the
        window (Next Turn, Models…): nothing is selected under it, and its own turns are the ones the user waits for."""
        return self._busy() or QApplication.activeModalWidget() is not None

    def _busy_for_work_ahead(self) -> bool:
        """Work done ahead (the watches' fold, the validation worker's start) waits for what the editor's forms made
        ahead wait for, and for those forms: never both in one turn; and not while another document loads (its
        hand-over replaces this one; its loader holds the interpreter's lock)."""
        return self._busy_for_forms_ahead() or self.forms_ahead.pending() or self.session.is_loading()

    def is_refreshing(self) -> bool:
        """A selection's views are still to follow the new cursor."""
        return self.document.selection_pending()

    def _show_item(self, index: QModelIndex) -> None:
        """A call or the solution: shown read-only (calls are edited inside their plan message)."""
        item = self._model.getItem(index) if self._model is not None else None
        self.editor.show_item(item, "<b>Call</b> <span style='color:gray'>(read-only; edit it in its plan)</span>"
                              if index.parent().isValid() else "<b>Solution</b> <span style='color:gray'>"
                              "(read-only)</span>")

    # -- edits ------------------------------------------------------------------------------------------

    def apply_edit(self, edit: Edit, text: str | None = None) -> None:
        """Apply an engine edit through the undo stack, then select what it touched (`commands.apply`)."""
        self.commands.apply(edit, text)

    def _move_requested(self, src: int, dst: int) -> None:
        self.commands.move(src, dst)

    def _editor_edited(self, before: dict[str, Any], message: dict[str, Any]) -> None:
        # The editor sends whole messages only (never a value without a `type`): it refuses those itself.
        index = self.selected_message()
        if index is None:
            return
        if not self.commands.edit_message(index, before, message):
            # Made from a message the document no longer holds (writing it would overwrite what the user did
            # not edit), or content the document refuses: the editor shows the document's message again.
            _log.warning("an edit of message %d was refused", index)
            self.editor.show_selected()

    def _say_refused(self, message: str) -> None:
        self.statusBar().showMessage(message, 10_000)

    def insert_message(self, template: str) -> None:
        at = self.selected_message()
        index = len(self.context()) if at is None else at + 1
        self.commands.insert(index, dict(NEW_MESSAGES[template]), f"Insert {template.lower()} message")
        self.editor.tabs.setCurrentIndex(0)
        self.editor.focus_body()  # the caret where the new message's body is typed

    def duplicate_selected(self) -> None:
        index = self.selected_message()
        if index is not None:
            self.commands.insert(index + 1, dict(self.context()[index]), f"Duplicate message {index}")

    def delete_selected(self) -> None:
        index = self.selected_message()
        if index is not None:
            self.commands.delete(index)

    def move_selected(self, step: int) -> None:
        index = self.selected_message()
        if index is not None and 0 <= index + step < len(self.context()):
            self.commands.move(index, index + step)

    # -- diagnostics ----------------------------------------------------------------------------------

    def _schedule(self, *_changed: object) -> None:
        self.diagnostics.schedule(self.session.document)

    def _diagnostics_stale(self) -> None:
        self.diagnostics_label.setText("Problems: press F7 to check")
        self.diagnostics_label.setToolTip("Big documents are checked on request (Run → Check Document)")

    def _llm_visibility(self, visible: bool) -> None:
        if visible:
            self.llm_view.render_now()

    def _show_diagnostics(self, count: int) -> None:
        self.diagnostics_label.setText("No problems" if count == 0 else f"⚠ {count} problem{'s' * (count != 1)}")
        self.diagnostics_label.setToolTip("Diagnostics from validate(): schemas, references and write conflicts")

    # -- theme, closing ----------------------------------------------------------------------------

    def set_theme(self, theme: str) -> None:
        """"system" (follow the desktop's light or dark), "light" or "dark"; remembered in the settings."""
        self.settings.setValue("view/theme", theme)
        apply_theme(theme, self._theme_parts())

    def _system_scheme_changed(self, _scheme: object) -> None:
        if str(self.settings.value("view/theme", "system")) == "system":
            apply_theme("system", self._theme_parts())

    def _theme_parts(self) -> list[QWidget]:
        """What a theme switch repaints a turn at a time, after the window's frame: the centre (the editor), then
        the docks on screen."""
        # (the docks are the window's own children, floating or not: a walk of every widget is a few milliseconds
        # with a big document's heap around them)
        docks = self.findChildren(QDockWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
        parts: list[QWidget | None] = [self.centralWidget(), *docks]
        return [part for part in parts if part is not None and part.isVisible() and part.updatesEnabled()]

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest and self._painted_turn is None:
            self._painted_turn = slices().turns  # the first repaint since the document was replaced
        elif event.type() == QEvent.Type.ChildPolished:
            assert isinstance(event, QChildEvent)
            child = event.child()
            if isinstance(child, QTabBar):  # the tabs of docks stacked in one place, made by Qt on demand
                show_whole_titles(child)
                name_qt_buttons(child)
        return super().event(event)

    def focusNextPrevChild(self, next: bool) -> bool:
        # Tab from another pane into the editor lands on its first control in visual order (Shift+Tab on its
        # last), not on whichever of its controls Qt's chain of creation reaches first.
        before = QApplication.focusWidget()
        # Qt's chain counts a dock tabbed behind another as visible: its controls take no Tab focus meanwhile, so
        # Tab goes on past them without giving any of them the focus on the way.
        hidden = [(widget, widget.focusPolicy()) for dock in self.findChildren(QDockWidget) if not seen(dock)
                  for widget in (dock, *dock.findChildren(QWidget)) if widget.focusPolicy() & Qt.FocusPolicy.TabFocus]
        for widget, _policy in hidden:
            widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        try:
            moved = super().focusNextPrevChild(next)
        finally:
            for widget, policy in hidden:
                widget.setFocusPolicy(policy)
        after = QApplication.focusWidget()
        if moved and after is not None and self.editor.isAncestorOf(after) and \
                (before is None or not self.editor.isAncestorOf(before)):
            self.editor.enter(next)
        return moved

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.files.confirm_discard("closing"):
            event.ignore()
            return
        self.end()
        event.accept()

    def end(self, *, keep_unsaved: bool = False) -> None:
        """Stop the window's work and keep its layout for the next start; `keep_unsaved`: unsaved changes are
        written aside for the next start to offer, not asked about (`DocumentSession.close`)."""
        self.save_layout()
        self.traces.cancel_import()  # its worker stops at its next line, span or exchange
        self.diagnostics.shutdown()
        self.llm_view.runner.shutdown()
        self.editor.shutdown()  # its forms ask the validation worker for nothing more
        self.session.close(keep_unsaved=keep_unsaved)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.files.open_path(files[0])
