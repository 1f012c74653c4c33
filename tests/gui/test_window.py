"""The main window, driven as a user would: reorder, edit, undo, save, open, recover."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit, QProgressDialog, QPushButton, QWidget

from contextdeck.engine import load_document, render_text
from contextdeck.gui._app import create_window
from contextdeck.gui._recovery_dialog import RecoveryChoice
from contextdeck.gui._state import SourceRole
from contextdeck.gui._termination import Termination
from contextdeck.gui._window import MainWindow

ORDERED = [
    {"type": "text", "role": "system", "text": "Be brief."},
    {"type": "state", "data": {"user": "Alex"}},
    {"type": "state", "data": {"user": "Sam"}},
    {"type": "input", "input": {"amount": 5},
     "schema": {"type": "object", "properties": {"amount": {"type": "integer", "maximum": 10}}}},
]


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Settings in an INI file under tmp_path, never the user's."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def new_window(qtbot: Any, settings: QSettings, recovery: Path) -> MainWindow:
    window = create_window(settings, recovery)
    qtbot.addWidget(window)
    window.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    window.show()
    return window


def open_doc(qtbot: Any, window: MainWindow, path: Path) -> None:
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)


def window_on(qtbot: Any, settings: QSettings, tmp_path: Path, name: str,
              messages: list[dict[str, Any]]) -> Iterator[MainWindow]:
    """The real window on `name`, a document of `messages`, closed after the test (a fixture's body)."""
    path = tmp_path / name
    path.write_text(json.dumps(messages), encoding="utf-8")
    win = new_window(qtbot, settings, tmp_path / "recovery")
    open_doc(qtbot, win, path)
    yield win
    win.session.close()


@pytest.fixture
def window(qtbot: Any, settings: QSettings, tmp_path: Path) -> Iterator[MainWindow]:
    """The real window on a small document whose state depends on message order."""
    yield from window_on(qtbot, settings, tmp_path, "ordered.json", ORDERED)


def state_value(window: MainWindow, key: str) -> tuple[str, Any]:
    """(value text, set-by message) of the state view node whose path is `key`."""
    model = window.state_view.state_model
    matches = model.match(model.index(0, 0), Qt.ItemDataRole.UserRole + 4, key, 1,
                          Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)
    assert matches, f"no node {key}"
    index = matches[0]
    return str(index.siblingAtColumn(1).data()), index.siblingAtColumn(2).data(SourceRole)


def document_json(window: MainWindow) -> Any:
    return json.loads(window.session.document.dumps())


def test_reordering_a_message_changes_the_watched_value_and_the_state_view(qtbot: Any, window: MainWindow) -> None:
    """Moving the later state message first makes the other one win: the watch and the state view follow."""
    window.set_follow_latest(True)
    pin = window.watches.model.add("†state.user")
    assert pin.resolution is not None
    assert pin.resolution.value == "Sam"
    window.document.show_views()
    qtbot.waitUntil(lambda: not window.state_view.is_busy())  # the state is shown in slices
    assert state_value(window, "¶state.user") == ('"Sam"', 2)
    window.select_message(2)
    window.move_selected(-1)  # the Move goes through the undo stack, like a drag
    assert window.context()[1] == ORDERED[2]
    qtbot.waitUntil(lambda: state_value(window, "¶state.user") == ('"Alex"', 2))
    assert pin.resolution.value == "Alex"


def test_a_drop_on_the_timeline_moves_the_message_undoably(qtbot: Any, window: MainWindow) -> None:
    """Dropping row 2 above row 1 asks for a Move that the undo stack can take back."""
    model = window.timeline.model()
    assert model is not None
    data = model.mimeData([model.index(2, 0)])
    model.dropMimeData(data, Qt.DropAction.MoveAction, 1, 0, model.index(-1, 0))
    assert window.context()[1] == ORDERED[2]
    window.session.undo_stack.undo()
    assert window.context().messages == ORDERED


def test_a_moved_message_stays_selected_and_its_neighbour_is_never_shown(qtbot: Any, window: MainWindow) -> None:
    """Moving the selected message (menu, drag or undo) keeps it selected where it lands: the views are told
    of that one message only, and the editor keeps its form (only the number in its title changes)."""
    window.select_message(1)
    form = window.editor.body()
    load = form.load
    loads: list[object] = []
    form.load = lambda model: (loads.append(model), load(model))[1]  # type: ignore[method-assign]
    shown: list[int] = []
    window.document.messageSelected.connect(shown.append)
    window.move_selected(1)
    assert shown == [2]
    assert window.selected_message() == 2
    assert window.timeline.current_index().row() == 2
    assert window.editor.title.text().startswith("<b>#2 ")
    window.session.undo_stack.undo()
    assert shown == [2, 1]
    assert window.timeline.current_index().row() == 1
    assert window.editor.message() == ORDERED[1]
    assert loads == []


def test_deleting_the_selected_message_shows_the_next_under_its_own_number(qtbot: Any, window: MainWindow) -> None:
    """Delete the selected message: the next one is selected and the editor's title gives its number (it kept
    the number the message had before the delete, one too many), and so on after the undo."""
    window.select_message(1)
    window.delete_selected()
    qtbot.waitUntil(lambda: window.editor.message() == ORDERED[2])
    assert window.selected_message() == 1
    assert window.editor.title.text().startswith("<b>#1 ")
    window.session.undo_stack.undo()
    assert window.editor.title.text().startswith(f"<b>#{window.selected_message()} ")


class _WindowShows(QObject):
    """Notes every window other than `main` that is shown (a widget that lost its parent shows as one), but for
    an open's progress dialog ("Opening"), which shows by design once a load takes longer than its minimum duration
    (on a loaded machine, an example's)."""

    def __init__(self, main: QWidget) -> None:
        super().__init__()
        self.main = main
        self.shown: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget) and watched.isWindow() \
                and watched is not self.main and not _opening(watched):
            self.shown.append(type(watched).__name__)
        return False


def _opening(widget: QWidget) -> bool:
    return isinstance(widget, QProgressDialog) and widget.windowTitle() == "Opening"


def test_only_an_opens_progress_dialog_is_left_out_of_the_windows_shown(qtbot: Any, window: MainWindow) -> None:
    """The check for stray windows leaves out the open's progress dialog alone: any other progress dialog shown is
    noted."""
    shows = _WindowShows(window)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(shows)
    try:
        for title in ("Opening", "Import a trace"):
            dialog = QProgressDialog("…", "Cancel", 0, 0)
            qtbot.addWidget(dialog)
            dialog.setWindowTitle(title)
            dialog.show()
            dialog.close()
    finally:
        app.removeEventFilter(shows)
    assert shows.shown == ["QProgressDialog"]


def test_selecting_messages_shows_no_other_window(qtbot: Any, window: MainWindow, examples: Path) -> None:
    """Selecting every message of every example, one after another, shows no window but the main one (an
    editor replaced in the turn it is made in never flashes as a window of its own)."""
    shows = _WindowShows(window)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(shows)
    try:
        for path in sorted(examples.glob("*.json")):
            open_doc(qtbot, window, path)
            for index in range(len(window.context())):
                window.select_message(index)
                app.processEvents()
    finally:
        app.removeEventFilter(shows)
    assert shows.shown == []


def test_a_cursor_step_tells_the_state_view_only_the_rows_that_changed(qtbot: Any, window: MainWindow) -> None:
    """Moving the time cursor one message on changes one identity's value: the state view is told of that
    row alone (no reset, so it repaints that row and keeps what is open), and shows the new value."""
    model = window.state_view.state_model
    window.select_message(1)
    qtbot.waitUntil(lambda: not window.state_view.is_busy() and "Alex" in str(model.index(0, 1).data()))
    resets: list[bool] = []
    changes: list[tuple[int, int]] = []
    model.modelReset.connect(lambda: resets.append(True))
    model.dataChanged.connect(lambda first, last, *_: changes.append((first.row(), last.row())))
    window.select_message(2)
    qtbot.waitUntil(lambda: not window.state_view.is_busy() and "Sam" in str(model.index(0, 1).data()))
    assert resets == []
    assert changes == [(0, 0)]
    assert model.index(0, 2).data(SourceRole) == 2


def test_delete_in_the_watch_table_removes_the_selected_watch(qtbot: Any, window: MainWindow) -> None:
    """Select a pinned watch and press Delete: that watch goes, the other stays, no message is deleted."""
    panel = window.watches
    panel.model.add("†state.user")
    panel.model.add("†input.amount")
    panel.table.setFocus()
    panel.table.selectRow(0)
    qtbot.keyClick(panel.table, Qt.Key.Key_Delete)
    assert [pin.expression for pin in panel.model.pins] == ["†input.amount"]
    assert window.context().messages == ORDERED
    assert [a.text() for a in panel.table.actions()] == ["Remove Watch"]  # also its context menu


def test_a_message_inserted_above_a_watch_shows_its_sources_shifted(qtbot: Any, window: MainWindow) -> None:
    """Duplicating the system message (an insert above the watched state messages) calls no watch back
    (the same messages), yet the watch panel repaints the "From" column with the shifted indices."""
    window.set_follow_latest(True)
    panel = window.watches
    panel.entry.setText("†state.user")  # (key clicks type ASCII only)
    qtbot.keyClick(panel.entry, Qt.Key.Key_Return)
    cell = panel.model.index(0, 2)
    qtbot.waitUntil(lambda: cell.data() == "#2")
    repainted: list[tuple[int, int]] = []
    panel.model.dataChanged.connect(
        lambda top, bottom, *_: repainted.append((top.row(), top.column())) if top.row() <= 0 <= bottom.row()
        and top.column() <= 2 <= bottom.column() else None)
    window.activateWindow()
    window.select_message(0)
    window.timeline.table.setFocus()
    qtbot.waitUntil(window.timeline.table.hasFocus)
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert window.context().messages[:2] == [ORDERED[0], ORDERED[0]]
    qtbot.waitUntil(lambda: bool(repainted))  # the view is told to paint the cell again
    assert cell.data() == "#3"
    assert panel.table.isRowHidden(0) is False
    assert panel.table.visualRect(cell).isValid()  # on screen: painted from what `data` now says


def test_an_opened_document_shows_its_latest_state(qtbot: Any, window: MainWindow) -> None:
    """After opening, the last message is selected, so the state view shows the whole context (Sam, not Alex)."""
    assert window.selected_message() == len(ORDERED) - 1
    qtbot.waitUntil(lambda: state_value(window, "¶state.user") == ('"Sam"', 2))


def test_the_time_cursor_shows_the_state_as_of_the_selected_message(qtbot: Any, window: MainWindow) -> None:
    """Selecting message 1 shows Alex (message 2 is in the future); Follow latest shows Sam again."""
    cursors: list[Any] = []
    window.document.cursorChanged.connect(cursors.append)
    window.select_message(1)
    assert cursors[-1] == 1
    qtbot.waitUntil(lambda: state_value(window, "¶state.user") == ('"Alex"', 1))
    window.llm_dock.raise_()
    expected = render_text(window.context(), 2)
    assert "Sam" not in expected
    # Exactly the messages `contextdeck render` prints.
    qtbot.waitUntil(lambda: window.llm_view.messages.toPlainText() == expected)
    window.set_follow_latest(True)
    assert cursors[-1] is None
    qtbot.waitUntil(lambda: state_value(window, "¶state.user")[0] == '"Sam"')


def test_a_form_edit_updates_validation_and_resolution(qtbot: Any, window: MainWindow) -> None:
    """Typing an amount above the schema's maximum in the form shows the problem at the field and in the
    status bar, and the watch and the state view resolve the new value; it is one undo step."""
    window.set_follow_latest(True)
    pin = window.watches.model.add("†input.amount")
    qtbot.waitUntil(lambda: window.diagnostics_label.text() == "No problems")
    window.select_message(3)
    slot = window.editor.payload.form.locate(("amount",))
    assert slot is not None
    line = slot.editor.findChild(QLineEdit)
    line.selectAll()
    qtbot.keyClick(line, Qt.Key.Key_Backspace)
    qtbot.keyClicks(line, "50")
    assert window.context()[3]["input"] == {"amount": 50}
    assert pin.resolution is not None
    assert pin.resolution.value == 50
    qtbot.waitUntil(lambda: window.diagnostics_label.text() == "⚠ 1 problem")
    qtbot.waitUntil(lambda: any(path == ("amount",) for path, _ in window.editor.payload.errors()), timeout=10000)
    qtbot.waitUntil(lambda: state_value(window, "¶input.amount")[0] == "50")
    assert window.session.undo_stack.count() == 1
    window.session.undo_stack.undo()
    assert window.context()[3] == ORDERED[3]
    assert window.editor.payload.value() == {"amount": 5}  # the form shows the undone value
    slot = window.editor.payload.form.locate(("amount",))
    assert slot is not None
    assert slot.editor.findChild(QLineEdit).text() == "5"


def test_consecutive_typing_in_one_message_is_one_undo_step(window: MainWindow) -> None:
    """Three edits of the same message merge: one undo restores the message before the first."""
    window.select_message(3)
    for amount in (6, 7, 8):
        window.editor.payload.value_edited.emit({"amount": amount})
    assert window.session.undo_stack.count() == 1
    window.session.undo_stack.undo()
    assert window.context()[3] == ORDERED[3]


def test_typing_in_another_field_starts_a_new_undo_step(qtbot: Any, window: MainWindow) -> None:
    """Typed into the amount, then the description, then the amount again: three steps, and each undo
    takes back one field's typing, newest first."""
    window.select_message(3)
    amount = window.editor.payload.form.locate(("amount",))
    assert amount is not None
    amount_box = amount.editor.findChild(QLineEdit)
    description = window.editor.header.description

    def typed(box: QLineEdit, text: str) -> None:
        box.setFocus()
        box.selectAll()
        qtbot.keyClicks(box, text)

    typed(amount_box, "7")
    qtbot.waitUntil(lambda: window.context()[3]["input"] == {"amount": 7})
    typed(description, "The order")
    typed(amount_box, "9")
    qtbot.waitUntil(lambda: window.context()[3]["input"] == {"amount": 9})
    assert window.context()[3]["description"] == "The order"
    stack = window.session.undo_stack
    assert stack.count() == 3
    stack.undo()
    assert window.context()[3] == ORDERED[3] | {"input": {"amount": 7}, "description": "The order"}
    stack.undo()
    assert window.context()[3] == ORDERED[3] | {"input": {"amount": 7}}
    stack.undo()
    assert window.context()[3] == ORDERED[3]


def test_the_changed_field_of_an_edit() -> None:
    """What decides whether two edits merge: the path down to the one value that differs."""
    from contextdeck.gui._commands import changed_field

    message = {"type": "input", "input": {"a": {"b": [1, 2]}, "c": "x"}}
    assert changed_field(message, message) is None
    assert changed_field(message, {**message, "input": {"a": {"b": [1, 3]}, "c": "x"}}) == ("input", "a", "b", 1)
    assert changed_field(message, {**message, "input": {"a": {"b": [1, 2, 3]}, "c": "x"}}) == ("input", "a", "b")
    assert changed_field(message, {**message, "input": {"a": {"b": [1, 2]}, "c": "y", "d": 1}}) == ("input",)
    assert changed_field(message, {**message, "input": {"a": {"b": [1, 2]}}}) == ("input", "c")  # removed
    assert changed_field(message, {**message, "input": {"a": {"b": [0, 0]}, "c": "x"}}) == ("input", "a", "b")
    assert changed_field(message, {**message, "description": "d"}) == ("description",)  # added
    assert changed_field(message, {"type": "text", "text": ""}) == ()  # another message altogether
    # Values that Python's == takes for equal but the document writes apart ("75." typed makes 75.0)
    assert changed_field(message, {**message, "input": {"a": {"b": [1.0, 2]}, "c": "x"}}) == ("input", "a", "b", 0)
    assert changed_field(message, {**message, "input": {"a": {"b": [True, 2]}, "c": "x"}}) == ("input", "a", "b", 0)


def test_undo_and_redo_of_every_kind_of_edit_give_back_identical_documents(window: MainWindow) -> None:
    """Insert, duplicate, delete, move, form and JSON edits all undo to the original and redo to the edited."""
    original = document_json(window)
    window.select_message(0)
    window.insert_message("Data")
    window.select_message(1)
    window.duplicate_selected()
    window.select_message(2)
    window.move_selected(1)
    window.select_message(4)
    window.editor.payload.value_edited.emit({"amount": 9})  # the input's payload, as the form sends it
    window.select_message(0)
    window.editor.json.edited.emit({"type": "text", "role": "system", "text": "Be long."})  # whole-message JSON
    window.select_message(5)
    window.delete_selected()
    edited = document_json(window)
    assert edited != original
    stack = window.session.undo_stack
    while stack.canUndo():
        stack.undo()
    assert document_json(window) == original
    assert json.dumps(document_json(window)) == json.dumps(original)  # same key order too
    while stack.canRedo():
        stack.redo()
    assert document_json(window) == edited


def test_a_non_message_from_the_json_editor_is_refused(qtbot: Any, window: MainWindow) -> None:
    """Typing a message without a type in the JSON tab changes nothing and says why under the text."""
    window.select_message(0)
    window.editor.tabs.setCurrentWidget(window.editor.json)
    text = window.editor.json.text
    text.selectAll()
    qtbot.keyClicks(text, '{"text": "no type"}')
    assert window.context()[0] == ORDERED[0]
    assert "non-empty string 'type'" in window.editor.json.status.text()
    assert not window.session.undo_stack.canUndo()


def test_save_then_reopen_gives_the_same_document(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """An edited document saved under a new name reopens equal, and the window is clean after saving."""
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Kim"})
    assert window.isWindowModified()
    target = tmp_path / "saved.json"
    window.files.ask_save_path = lambda: str(target)  # type: ignore[method-assign]
    assert window.files.save_as_dialog()
    assert not window.isWindowModified()
    assert window.statusBar().currentMessage() == "Saved saved.json"
    before = document_json(window)
    assert load_document(target).to_json() == before
    open_doc(qtbot, window, target)
    assert document_json(window) == before


def test_a_malformed_file_leaves_the_open_document_as_it_was(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """Opening broken JSON shows a banner and a status message; the open document and its edits stay."""
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Kim"})
    before = document_json(window)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"type": "text", "text": "a"},\n  {"type": ', encoding="utf-8")
    with qtbot.waitSignal(window.session.loadFailed, timeout=10000):
        window.files.open_path(broken)
    assert document_json(window) == before
    assert window.banner.isVisible()
    assert "broken.json:2:" in window.banner.label.text()  # names the line
    assert "Could not open" in window.statusBar().currentMessage()
    assert window.session.undo_stack.canUndo()


def test_unsaved_changes_are_guarded_on_new(window: MainWindow) -> None:
    """Cancel at the unsaved-changes question keeps the document; Discard replaces it."""
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Kim"})
    window.files.ask_unsaved = lambda doing: "cancel"  # type: ignore[method-assign]
    window.files.new()
    assert len(window.context()) == len(ORDERED)
    window.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    window.files.new()
    assert len(window.context()) == 0


def test_recovery_after_a_crash_restores_the_unsaved_edits(qtbot: Any, settings: QSettings, tmp_path: Path) -> None:
    """Edits autosaved by a session that died are offered at the next start and come back unsaved."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(ORDERED), encoding="utf-8")
    recovery = tmp_path / "recovery"
    first = new_window(qtbot, settings, recovery)
    open_doc(qtbot, first, path)
    first.session.autosave_delay_ms = 10
    first.select_message(1)
    with qtbot.waitSignal(first.session.autosaved, timeout=10000):
        first.editor.payload.value_edited.emit({"user": "Recovered"})
    edited = document_json(first)
    # The crash: the writer's process is gone (a finished child's pid) and nothing was cleaned up.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for sidecar in recovery.iterdir():
        if sidecar.suffix == ".json" and "pid" in sidecar.read_text():
            meta = json.loads(sidecar.read_text())
            meta["pid"] = int(dead.stdout)
            sidecar.write_text(json.dumps(meta))
    second = new_window(qtbot, QSettings(str(tmp_path / "second.ini"), QSettings.Format.IniFormat), recovery)
    second.files.ask_recover = lambda candidates: RecoveryChoice(candidates[0])  # type: ignore[method-assign]
    with qtbot.waitSignal(second.document.documentShown, timeout=10000):
        assert second.files.offer_recovery()
    assert document_json(second) == edited
    assert second.isWindowModified()
    second.session.close()


def test_theme_and_layout_live_in_the_settings(qtbot: Any, window: MainWindow, settings: QSettings) -> None:
    """Choosing the dark theme and closing stores both the theme and the window layout."""
    window.actions_by_name["theme_dark"].trigger()
    window.close()
    assert settings.value("view/theme") == "dark"
    assert settings.contains("window/state")
    assert settings.contains("window/geometry")
    window.actions_by_name["theme_system"].trigger()


def test_every_action_has_a_shortcut(window: MainWindow) -> None:
    """Keyboard users reach every menu action."""
    missing = [name for name, action in window.actions_by_name.items() if action.shortcut().isEmpty()]
    assert missing == []


def test_the_hooks_for_other_panels(window: MainWindow) -> None:
    """A panel can be docked, menus found by name, and selections observed."""
    from PySide6.QtWidgets import QLabel

    dock = window.add_dock(QLabel("calls"), "Calls", Qt.DockWidgetArea.RightDockWidgetArea)
    assert dock.toggleViewAction() in window.menu("View").actions()
    assert window.menu("Run").title() == "&Run"
    selected: list[int] = []
    window.document.messageSelected.connect(selected.append)
    window.select_message(2)
    assert selected == [2]
    assert window.context() is window.session.document.context


def test_the_filter_box_narrows_the_timeline(qtbot: Any, window: MainWindow) -> None:
    """Typing `kind:state` leaves the two state messages; selecting one still selects the real message."""
    qtbot.keyClicks(window.timeline.filter_box, "kind:state")
    qtbot.waitUntil(lambda: not window.timeline.is_searching())
    table = window.timeline.table
    assert table.model().rowCount() == 2
    table.setCurrentIndex(table.model().index(1, 0))
    assert window.selected_message() == 2
    window.timeline.filter_box.clear()
    assert table.model().rowCount() == len(ORDERED)
    assert window.selected_message() == 2


def test_delete_and_duplicate_from_the_keyboard(qtbot: Any, window: MainWindow) -> None:
    """Delete removes the selected message and Ctrl+D duplicates it, while the timeline has the focus."""
    window.activateWindow()
    window.select_message(1)
    window.timeline.table.setFocus()
    qtbot.waitUntil(window.timeline.table.hasFocus)
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert window.context().messages == [ORDERED[0], ORDERED[1], ORDERED[1], *ORDERED[2:]]
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_Delete)
    assert len(window.context()) == len(ORDERED)


def test_a_file_dropped_on_the_window_opens(qtbot: Any, window: MainWindow, examples: Path) -> None:
    """Dropping a JSON file on the window opens it (after the unsaved-changes guard)."""
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(examples / "moderation_batch.json"))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.dropEvent(event)
    assert window.session.path == examples / "moderation_batch.json"
    assert window.windowTitle().startswith("moderation_batch.json")


def test_recent_files_menu_reopens_a_file(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """The file just opened is first in File → Open Recent, and choosing it opens it."""
    from PySide6.QtWidgets import QMenu

    menu = QMenu()
    window.files.fill_recent_menu(menu)
    first = menu.actions()[0]
    assert first.toolTip() == str((tmp_path / "ordered.json").resolve())
    window.files.new()
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        first.trigger()
    assert len(window.context()) == len(ORDERED)


def test_a_change_on_disk_is_reported_and_never_overwritten_silently(qtbot: Any, window: MainWindow,
                                                                     tmp_path: Path) -> None:
    """Another program rewriting the file shows a banner; Save then refuses and offers Reload, Overwrite and
    Save As; Reload reads the file as the other program left it."""
    path = tmp_path / "ordered.json"
    with qtbot.waitSignal(window.session.externallyModified, timeout=10000):
        path.write_text(json.dumps(ORDERED[:2]), encoding="utf-8")
        window.session.check_disk()
    assert window.banner.isVisible()
    assert "Changed outside" in window.banner.label.text()
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Mine"})
    assert not window.files.save()
    assert "changed on disk by another program" in window.statusBar().currentMessage()  # said, not wiped
    assert json.loads(path.read_text()) == ORDERED[:2]
    assert [button.text() for button in window.banner.buttons()] == ["Reload", "Overwrite", "Save As…"]
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.banner.buttons()[0].click()  # the unsaved changes asked about: discarded (`new_window`)
    assert document_json(window) == ORDERED[:2]
    assert not window.banner.isVisible()


def test_overwrite_says_it_saved_and_a_failed_one_keeps_its_banner(qtbot: Any, window: MainWindow,
                                                                    tmp_path: Path) -> None:
    """Overwrite over a file another program changed is said as any save is; when it fails too (the file made
    read-only meanwhile), its own "Not saved" banner stays shown (a banner's button used to hide what its action
    had just said)."""
    path = tmp_path / "ordered.json"
    with qtbot.waitSignal(window.session.externallyModified, timeout=10000):
        path.write_text(json.dumps(ORDERED[:2]), encoding="utf-8")
        window.session.check_disk()
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Mine"})
    assert not window.files.save()
    path.chmod(0o444)
    overwrite = window.banner.buttons()[1]
    assert overwrite.text() == "Overwrite"
    overwrite.click()
    assert window.banner.isVisible()
    assert "Not saved" in window.banner.label.text()
    assert json.loads(path.read_text()) == ORDERED[:2]
    path.chmod(0o644)
    window.banner.buttons()[1].click()
    assert window.statusBar().currentMessage() == "Saved ordered.json"
    assert json.loads(path.read_text())[1]["data"] == {"user": "Mine"}
    assert not window.banner.isVisible()


@pytest.mark.parametrize("away", ["rm", "mv"])
def test_a_save_that_works_takes_the_changed_outside_banner_away(qtbot: Any, window: MainWindow, tmp_path: Path,
                                                                  away: str) -> None:
    """The file deleted or moved away while edited: the banner says so, and Save, which writes it again, hides it."""
    path = tmp_path / "ordered.json"
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Mine"})
    with qtbot.waitSignal(window.session.externallyModified, timeout=10000):
        path.unlink() if away == "rm" else path.rename(tmp_path / "moved.json")
        window.session.check_disk()
    assert "was deleted or moved" in window.banner.label.text()
    assert window.files.save()
    assert window.statusBar().currentMessage() == "Saved ordered.json"
    assert json.loads(path.read_text())[1]["data"] == {"user": "Mine"}
    assert not window.banner.isVisible()


def test_save_as_that_works_takes_the_not_saved_banner_away(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """A read-only file refuses Save with a red banner; Save As under another name works and hides it."""
    path = tmp_path / "ordered.json"
    path.chmod(0o444)
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Mine"})
    assert not window.files.save()
    assert "Not saved" in window.banner.label.text()
    assert "read-only" in window.banner.label.text()
    window.files.ask_save_path = lambda: str(tmp_path / "copy.json")  # type: ignore[method-assign]
    assert window.files.save_as_dialog()
    assert window.windowTitle().startswith("copy.json")
    assert not window.banner.isVisible()


def test_a_save_leaves_a_banner_it_does_not_answer(qtbot: Any, window: MainWindow) -> None:
    """A banner about something else (a file that could not be opened) stays after a save."""
    window.files._load_failed("broken.json:2:1: Expecting value")
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Mine"})
    assert window.files.save()
    assert "Could not open the file" in window.banner.label.text()
    assert window.banner.isVisible()


def test_sigterm_writes_the_unsaved_edits_aside_at_once_and_ends_unasked(qtbot: Any, window: MainWindow,
                                                                          tmp_path: Path) -> None:
    """SIGTERM right after an edit, before the autosave's pause: the window asks nothing, writes the edit aside
    (kept for the next start), saves its layout and quits with 143."""
    asked: list[str] = []
    window.files.ask_unsaved = lambda doing: asked.append(doing) or "cancel"  # type: ignore[method-assign]
    codes: list[int] = []
    termination = Termination(window, codes.append)
    window.select_message(1)
    window.editor.payload.value_edited.emit({"user": "Mine"})
    try:
        signal.raise_signal(signal.SIGTERM)
        qtbot.waitUntil(lambda: codes == [143])
    finally:
        termination.release()
    assert asked == []
    (data,) = (tmp_path / "recovery").glob("*.data")
    assert json.loads(data.read_text())[1]["data"] == {"user": "Mine"}
    sidecar = json.loads(data.with_suffix(".json").read_text())
    assert sidecar["original"] == str(tmp_path / "ordered.json")
    assert QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat).contains("window/geometry")


def test_a_big_document_is_checked_on_request(qtbot: Any, window: MainWindow, monkeypatch: Any) -> None:
    """Past the automatic limit the status bar asks for F7, and Run → Check Document counts."""
    from contextdeck.gui import _diagnostics

    monkeypatch.setattr(_diagnostics, "AUTOMATIC_LIMIT", 2)
    window.select_message(3)
    window.editor.payload.value_edited.emit({"amount": 50})
    qtbot.waitUntil(lambda: "F7" in window.diagnostics_label.text())
    window.actions_by_name["check"].trigger()
    qtbot.waitUntil(lambda: window.diagnostics_label.text() == "⚠ 1 problem")


def test_cancelling_the_load_progress_keeps_the_open_document(qtbot: Any, window: MainWindow,
                                                             examples: Path) -> None:
    """Cancel in the progress dialog stops the load; the document that was open stays."""
    before = document_json(window)
    window.session.open(examples / "moderation_batch.json")
    dialog = window.files._progress
    assert dialog is not None
    cancel = dialog.findChild(QPushButton)
    assert cancel.text() == "Cancel"
    with qtbot.waitSignal(window.session.loadCancelled, timeout=5000):
        cancel.click()
    assert window.files._progress is None
    assert document_json(window) == before


def test_a_loads_progress_dialog_is_closed_after_the_hand_over_not_in_it(
        qtbot: Any, window: MainWindow, examples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The progress dialog of a finished load is closed in a slice after the turn that hands the document over: hiding
    a window-modal dialog unblocks every widget of the window, a third of a frame at a million messages."""
    qtbot.waitUntil(lambda: not window.files._ended)  # the fixture's own load's dialog, closed in a slice of its own
    closed: list[QProgressDialog] = []
    monkeypatch.setattr(QProgressDialog, "reset", lambda dialog: closed.append(dialog))
    at_hand_over: list[int] = []
    window.session.loadFinished.connect(lambda: at_hand_over.append(len(closed)))
    with qtbot.waitSignal(window.session.loadFinished, timeout=5000):
        window.session.open(examples / "moderation_batch.json")
        dialog = window.files._progress
    assert at_hand_over == [0]
    qtbot.waitUntil(lambda: closed == [dialog])


def test_the_load_progress_is_shown_without_running_the_event_loop_inside_a_report(qtbot: Any,
                                                                                   window: MainWindow) -> None:
    """The progress dialog shows how far the load is, and Cancel stays live; a report of progress returns without
    running the event loop inside it. (A modal QProgressDialog's own setValue does, once on screen: at a million
    messages the hand-over of the loaded document and the window's repaints ran inside one report.)"""
    session, files = window.session, window.files
    session.loadStarted.emit("big.json")
    dialog = files._progress
    assert dialog is not None
    session.loadProgress.emit(0, 10)
    qtbot.waitUntil(dialog.isVisible)  # after its minimum duration
    ran: list[bool] = []
    QTimer.singleShot(0, lambda: ran.append(True))
    session.loadProgress.emit(5, 10)
    assert not ran  # nothing else ran inside the report
    assert (dialog.value(), dialog.maximum()) == (5, 10)
    qtbot.waitUntil(lambda: bool(ran))
    session.loadProgress.emit(9, 10)
    assert dialog.value() == 9
    with qtbot.waitSignal(dialog.canceled, timeout=5000):
        dialog.findChild(QPushButton).click()
    assert dialog.wasCanceled()


def test_the_timeline_context_menu_offers_the_edits(window: MainWindow) -> None:
    """Insert, duplicate, delete and move are in the timeline's context menu."""
    names = [action.objectName() for action in window.timeline.table.actions()]
    assert names == ["insert_text", "insert_input", "insert_state", "insert_data", "insert_tool", "insert_plan",
                     "insert_error", "duplicate", "delete", "move_up", "move_down"]
    window.select_message(0)
    window.timeline.table.actions()[0].trigger()
    assert window.context()[1] == {"type": "text", "role": "user", "text": ""}
    assert window.selected_message() == 1


def test_rows_after_the_cursor_are_marked_as_the_future(qtbot: Any, window: MainWindow) -> None:
    """Selecting message 1 marks later rows for dimming; following the latest marks none."""
    from contextdeck.gui._timeline_model import LookRole

    model = window.timeline.model()
    assert model is not None
    window.select_message(1)
    qtbot.waitUntil(lambda: [model.index(row, 0).data(LookRole)[-1] for row in range(3)] == [False, False, True])
    window.set_follow_latest(True)
    assert [model.index(row, 0).data(LookRole)[-1] for row in range(len(ORDERED))] == [False] * len(ORDERED)


def test_a_plan_shows_its_calls_and_a_call_opens_read_only(qtbot: Any, window: MainWindow, examples: Path) -> None:
    """Selecting the refund plan lists its five calls; clicking one shows it in the editor, read-only."""
    open_doc(qtbot, window, examples / "refund_workflow.json")
    window.select_message(4)
    calls = window.timeline.calls
    assert calls.isVisibleTo(window)
    assert calls.model().rowCount(calls.rootIndex()) == 5
    first = calls.model().index(0, 0, calls.rootIndex())
    qtbot.waitUntil(lambda: not calls.visualRect(first).isEmpty())
    qtbot.mouseClick(calls.viewport(), Qt.MouseButton.LeftButton, pos=calls.visualRect(first).center())
    assert window.editor.value()["_tool"] == "lookupOrder"
    assert "read-only" in window.editor_title.text()


def test_back_on_the_plan_shown_last_its_calls_are_not_laid_out_again(
        qtbot: Any, window: MainWindow, examples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls of the plan shown last stay laid out behind the note while another message is selected (a plan of
    hundreds of calls lays out every row when rooted); selected again, they are shown as they are, and they follow
    an edit of the plan made meanwhile."""
    from PySide6.QtWidgets import QTreeView

    open_doc(qtbot, window, examples / "refund_workflow.json")
    window.select_message(4)
    calls = window.timeline.calls
    rooted: list[int] = []
    real = QTreeView.setRootIndex
    monkeypatch.setattr(QTreeView, "setRootIndex", lambda view, index: rooted.append(index.row()) or real(view, index))
    window.select_message(1)
    assert window.timeline.calls_note.isVisibleTo(window)
    assert not calls.isVisibleTo(window)
    plan = dict(window.context()[4])
    plan["plan"] = plan["plan"][:3]
    window.commands.replace(4, plan)
    window.select_message(4)
    assert calls.isVisibleTo(window)
    assert rooted == []
    assert calls.model().rowCount(calls.rootIndex()) == 3
    window.select_message(3)
    window.select_message(4)
    assert rooted == []


def test_the_application_sets_up_the_collector_before_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """`contextdeck gui` sets the collector thresholds that benchmarks/run.py measures edits under, and
    has the event loop collect while it waits (contextdeck/_runtime.py)."""
    from contextdeck.gui import _app

    calls: list[str] = []

    class Stop(Exception):
        pass

    def window(*_: object) -> None:
        calls.append("window")
        raise Stop

    monkeypatch.setattr(_app, "tune_interpreter", lambda: calls.append("tune"))
    monkeypatch.setattr(_app, "collect_while_idle", lambda app: calls.append(type(app).__name__))
    monkeypatch.setattr(_app, "create_window", window)
    with pytest.raises(Stop):
        _app.main(None, "unused.png")
    assert calls == ["tune", "QApplication", "window"]


def test_with_the_last_message_gone_the_editor_shows_nothing_not_a_solution(qtbot: Any, open_window: Any) -> None:
    """In a new document, Insert Text Message then Ctrl+Z (or Delete) left no row current, and the editor showed
    "Solution (read-only)" with a null value: the document has no solution. It says nothing is selected."""
    window = open_window(None)
    title = window.editor.title
    window.insert_message("Text")
    qtbot.waitUntil(lambda: window.selected_message() == 0)
    assert "text" in title.text()
    window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: len(window.context()) == 0)
    qtbot.waitUntil(lambda: "No message selected" in title.text())
    assert "Solution" not in title.text()
    window.actions_by_name["redo"].trigger()
    qtbot.waitUntil(lambda: len(window.context()) == 1)
    window.select_message(0)
    qtbot.waitUntil(lambda: "text" in title.text())
    window.actions_by_name["delete"].trigger()
    qtbot.waitUntil(lambda: len(window.context()) == 0)
    qtbot.waitUntil(lambda: "No message selected" in title.text())
