"""A keyboard-first window: Tab leaves tables, a key per pane, field undo hands over to the document's undo,
and the timeline keeps still under the pointer."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QComboBox, QDockWidget, QHeaderView, QLineEdit, QToolTip, QWidget

from conftest import LOADED_MS
from contextdeck.engine import Move
from contextdeck.gui._editor._leaves import NumberBox
from contextdeck.gui._keyboard import FocusRing
from contextdeck.gui._turns import TurnDialog
from contextdeck.gui._window import MainWindow

DOC = [
    {"type": "text", "role": "system", "text": "Be brief."},
    {"type": "state", "data": {"user": "Alex"}},
    {"type": "state", "data": {"user": "Sam"}},
    {"type": "input", "input": {"amount": 5}},
]


@pytest.fixture
def window(open_window: Any, tmp_path: Path) -> MainWindow:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    return open_window(path)  # type: ignore[no-any-return]


@pytest.fixture
def refund(open_window: Any, examples: Path) -> MainWindow:
    return open_window(examples / "refund_workflow.json")  # type: ignore[no-any-return]


def focused() -> QWidget | None:
    return QApplication.focusWidget()


def test_tab_leaves_the_timeline_without_moving_the_time_cursor(qtbot: Any, window: MainWindow) -> None:
    """Tab in the timeline moves the focus on; the selected message and the cursor stay where they were."""
    window.select_message(1)
    table = window.timeline.table
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert not table.hasFocus()
    assert window.selected_message() == 1
    assert table.currentIndex().row() == 1
    qtbot.keyClick(focused(), Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)  # and back with Shift+Tab
    assert table.hasFocus()
    assert window.selected_message() == 1


def test_tab_leaves_the_calls_table(qtbot: Any, refund: MainWindow) -> None:
    """In the Calls pane, Tab leaves the table and the selected call stays selected."""
    view = refund.inspector.panel.view
    refund.inspector.docks["Calls"].raise_()
    view.setCurrentIndex(view.model().index(1, 0))
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert not view.hasFocus()
    assert view.currentIndex().row() == 1


@pytest.mark.parametrize(("keys", "expected"), [
    ("Alt+1", lambda w: w.timeline.table), ("Alt+2", lambda w: w.editor), ("Alt+3", lambda w: w.state_view),
    ("Alt+4", lambda w: w.watches.entry), ("Alt+5", lambda w: w.inspector.panel.view),
    ("Alt+6", lambda w: w.inspector.inspector), ("Alt+7", lambda w: w.llm_view),
    ("Alt+8", lambda w: w.inspector.graph), ("Alt+9", lambda w: w.inspector.audit),
])
def test_a_key_puts_the_focus_in_each_pane(qtbot: Any, refund: MainWindow, keys: str, expected: Any) -> None:
    """Each pane's key shows its dock (in front of its tabs) and puts the focus in it."""
    refund.timeline.filter_box.setFocus()  # somewhere else first
    qtbot.waitUntil(refund.timeline.filter_box.hasFocus)
    key = getattr(Qt.Key, f"Key_{keys[-1]}")
    qtbot.keyClick(refund.timeline.filter_box, key, Qt.KeyboardModifier.AltModifier)
    pane = expected(refund)
    widget = focused()
    assert widget is not None
    assert widget is pane or pane.isAncestorOf(widget)
    assert pane.isVisible()


def test_the_call_inspectors_key_shows_its_top_and_the_page_keys_scroll_it(qtbot: Any, refund: MainWindow) -> None:
    """At 1280×800 the call inspector scrolls as a whole: Alt+6 puts the focus on it with its top in sight (the
    call's title and parameters, not its tab strip further down) and Page Down scrolls it."""
    refund.reset_layout()
    refund.resize(1280, 800)
    qtbot.waitUntil(lambda: refund.width() == 1280)
    parts = refund.inspector
    parts.panel.view.select_call(2)
    qtbot.waitUntil(lambda: parts.inspector.call is not None)
    refund.timeline.filter_box.setFocus()
    qtbot.waitUntil(refund.timeline.filter_box.hasFocus)
    qtbot.keyClick(refund.timeline.filter_box, Qt.Key.Key_6, Qt.KeyboardModifier.AltModifier)
    scroller = parts.inspector.scroller
    assert focused() is scroller
    bar = scroller.verticalScrollBar()
    assert bar.value() == 0 < bar.maximum()
    qtbot.keyClick(scroller, Qt.Key.Key_PageDown)
    assert bar.value() > 0


def test_the_llm_views_key_puts_the_keys_in_its_text(qtbot: Any, refund: MainWindow) -> None:
    """Alt+7 puts the focus on the text in front (not on its tab strip): the keys scroll it, select and find at
    once; with the Schema tab in front, in the schema."""
    view = refund.llm_view
    refund.timeline.filter_box.setFocus()
    qtbot.waitUntil(refund.timeline.filter_box.hasFocus)
    qtbot.keyClick(refund.timeline.filter_box, Qt.Key.Key_7, Qt.KeyboardModifier.AltModifier)
    text = view.messages
    assert focused() is text
    bar = text.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    assert bar.value() == 0
    qtbot.keyClick(text, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert bar.value() == bar.maximum()
    view.tabs.setCurrentWidget(view.schema)
    refund.timeline.filter_box.setFocus()
    qtbot.waitUntil(refund.timeline.filter_box.hasFocus)
    qtbot.keyClick(refund.timeline.filter_box, Qt.Key.Key_7, Qt.KeyboardModifier.AltModifier)
    assert focused() is view.schema


def test_the_panes_are_listed_in_the_view_menu_with_their_keys(window: MainWindow) -> None:
    """View → Go to Pane names every pane and its shortcut."""
    menu = next(a.menu() for a in window.menu("View").actions() if a.text() == "&Go to Pane")
    listed = [(a.text(), a.shortcut().toString()) for a in menu.actions()]
    assert listed == [("&Timeline", "Alt+1"), ("&Editor", "Alt+2"), ("&State", "Alt+3"), ("&Watches", "Alt+4"),
                      ("&Calls", "Alt+5"), ("C&all inspector", "Alt+6"), ("&LLM view", "Alt+7"),
                      ("&Plan graph", "Alt+8"), ("&Output audit", "Alt+9"), ("&Delegate session", ""),
                      ("Call stac&k", "")]


def test_the_output_audit_is_reached_by_its_key_and_its_call_link_followed_by_enter(
        qtbot: Any, refund: MainWindow) -> None:
    """The output audit, tabbed behind the call inspector, has a key: Alt+9 brings it in front with the keys in
    the call as written; Shift+Tab reaches the link to the call, and Enter selects that call as a click does."""
    parts = refund.inspector
    qtbot.waitUntil(lambda: parts.model.rowCount() > 0)
    parts.model.set_breakpoint(1, False)  # (keeps the run to the first call)
    action = next(a for a in refund.menu("Run").actions() if a.text().replace("&", "") == "Step")
    action.trigger()
    qtbot.waitUntil(lambda: len(refund.context()) == 6, timeout=LOADED_MS)
    refund.select_message(5)  # the output of call #0
    parts.panel.view.select_call(2)
    refund.timeline.table.setFocus()
    qtbot.waitUntil(refund.timeline.table.hasFocus)
    qtbot.keyClick(refund.timeline.table, Qt.Key.Key_9, Qt.KeyboardModifier.AltModifier)
    assert focused() is parts.audit.call_json
    assert parts.audit.isVisible()
    qtbot.waitUntil(lambda: parts.audit.audit is not None)
    qtbot.keyClick(parts.audit.call_json, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is parts.audit.call_link
    qtbot.keyClick(parts.audit.call_link, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: parts.panel.view.currentIndex().row() == 0)
    assert parts.docks["Call inspector"].visibleRegion().isEmpty() is False


def test_pin_watch_and_filter_bring_their_pane_to_the_front(qtbot: Any, window: MainWindow) -> None:
    """Ctrl+Shift+W with the Experiments tab in front of the Watches, or Ctrl+F with the timeline closed, put the
    focus nowhere (a hidden field takes none): what was typed next was lost. The pane comes to the front."""
    window.menu("Run").actions()[-1].trigger()  # Experiments…, tabbed in front of the Watches
    assert window.watch_dock.visibleRegion().isEmpty()
    window.actions_by_name["watch"].trigger()
    qtbot.waitUntil(window.watches.entry.hasFocus)
    assert not window.watch_dock.visibleRegion().isEmpty()
    window.timeline_dock.close()
    window.actions_by_name["find"].trigger()
    qtbot.waitUntil(window.timeline.filter_box.hasFocus)
    assert window.timeline_dock.isVisible()


def test_every_menu_entry_has_a_key_and_no_letter_is_taken_twice(window: MainWindow) -> None:
    """Each entry of each menu has a shortcut or an underlined letter, and no letter is underlined twice in one
    menu: Alt+R, M only moved between Models… and Run with Model, with the menu left open; Load Activities…, Fork
    Here… and the docks in View had neither."""
    from PySide6.QtGui import QKeySequence

    def entries(menu: Any) -> list[Any]:
        found = [action for action in menu.actions() if not action.isSeparator()]
        return found + [entry for action in found if action.menu() for entry in entries(action.menu())]

    for top in window.menuBar().actions():
        for menu in [top.menu(), *(a.menu() for a in entries(top.menu()) if a.menu())]:
            shown = [action for action in menu.actions() if not action.isSeparator()]
            letters = [QKeySequence.mnemonic(action.text()).toString() for action in shown]
            # A submenu is gone through from the keys by letters (View → Theme, D did nothing): a shortcut beside an
            # entry there is no use.
            inner = menu is not top.menu() and menu.title() != "Open &Recent"
            keyless = [action.text() for action, letter in zip(shown, letters, strict=True)
                       if not letter and (inner or action.shortcut().isEmpty()) and action.text() != "No recent files"]
            assert keyless == [], f"{menu.title()}: entries with no key"
            taken = [letter for letter in letters if letter]
            assert len(taken) == len(set(taken)), f"{menu.title()}: {sorted(taken)}"


def test_stop_running_with_model_has_a_key_that_reaches_the_window(window: MainWindow) -> None:
    """Ctrl+Alt+F5 (Stop Running with Model) and Ctrl+Alt+F1 (About Qt) never reached the window on X11: the
    standard keymap makes Ctrl+Alt+F1..F12 switch to a text console. No action of the window uses one."""
    from PySide6.QtGui import QAction, QKeySequence

    assert window.agent_run.stop_action.shortcut() == QKeySequence("Ctrl+Shift+F2")  # type: ignore[attr-defined]
    console = {QKeySequence(f"Ctrl+Alt+F{n}") for n in range(1, 13)}
    keys = [(action.text(), key.toString()) for action in window.findChildren(QAction) for key in action.shortcuts()]
    assert len(keys) > 50
    assert [(text, key) for text, key in keys if QKeySequence(key) in console] == []
    assert [text for text, key in keys if key == "Ctrl+Shift+F2"] == ["St&op Running with Model"]


def click_row(qtbot: Any, window: MainWindow, row: int) -> None:
    table = window.timeline.table
    rect = table.visualRect(table.model().index(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.selected_message() == row
    # The editor's form flashes a parentless ObjectEditor as a window while it rebuilds, which takes the
    # activation away on the offscreen platform: give it back, as a desktop's window manager does.
    qtbot.wait(50)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def user_field(qtbot: Any, window: MainWindow) -> QLineEdit:
    """The form's field of `user` (the editor builds its form on the next turns of the event loop)."""
    def fields() -> list[QLineEdit]:
        return [f for f in window.editor.findChildren(QLineEdit) if f.text() == "Alex" and f.isVisible()]

    qtbot.waitUntil(lambda: len(fields()) == 1)
    return fields()[0]


def test_ctrl_z_in_a_field_undoes_its_typing_then_the_documents_edits(qtbot: Any, window: MainWindow) -> None:
    """Type in a form field, press Ctrl+Z: first the field's typing goes; once it has nothing left, Ctrl+Z
    reaches the document's history and takes back the edit made before (a move)."""
    window.apply_edit(Move(3, 0))  # an edit before the typing, in the document's history
    click_row(qtbot, window, 2)  # {"user": "Alex"}, now at 2
    field = user_field(qtbot, window)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    field.end(False)
    qtbot.keyClicks(field, "ia")
    assert window.context()[2]["data"] == {"user": "Alexia"}
    while field.isUndoAvailable():  # the field's own typing, as Ctrl+Z takes it back
        qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert field.text() == "Alex"
    assert window.context()[2]["data"] == {"user": "Alex"}
    assert window.context().messages[0] == DOC[3]  # the move is still there
    stack = window.session.undo_stack
    steps = stack.index()
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # nothing left in the field
    assert stack.index() == steps - 1  # one step of the document's history
    # ... the move: the typing, taken back to where it began, is no step of its own (Ctrl+Z undid that one first,
    # changing nothing).
    assert window.context().messages == DOC
    assert not stack.canUndo()


def test_ctrl_z_in_a_fresh_field_undoes_the_last_document_edit(qtbot: Any, window: MainWindow) -> None:
    """A field with no typing of its own hands Ctrl+Z to the document at once."""
    window.apply_edit(Move(3, 0))
    click_row(qtbot, window, 2)
    field = user_field(qtbot, window)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    assert not field.isUndoAvailable()
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.context().messages == DOC


def number_box(qtbot: Any, window: MainWindow, shown: str) -> NumberBox:
    """The form's number box showing `shown` (the editor builds its form on the next turns of the event loop)."""
    def boxes() -> list[NumberBox]:
        return [box for box in window.editor.findChildren(NumberBox)
                if box.lineEdit().text() == shown and box.isVisible()]

    qtbot.waitUntil(lambda: len(boxes()) == 1)
    return boxes()[0]


def test_typing_a_decimal_is_one_step_that_ctrl_z_takes_back_and_redo_brings_back(qtbot: Any,
                                                                                   refund: MainWindow) -> None:
    """Typing 75.5 over 50 (through 75 and 75., which the document holds as 75.0) is one step of one field,
    as in an integer field: Ctrl+Z takes it back whole, leaving the document clean and no step, and
    Ctrl+Shift+Z brings back 75.5, not a value in between."""
    click_row(qtbot, refund, 2)  # the state: policy.autoApproveBelow is 50, a "number"
    box = number_box(qtbot, refund, "50")
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    stack = refund.session.undo_stack
    assert stack.isClean()
    assert stack.count() == 0

    def policy() -> Any:
        return refund.context()[2]["data"]["policy"]

    box.lineEdit().selectAll()
    qtbot.keyClicks(box, "75.5")
    assert json.dumps(policy()) == '{"maxDays": 30, "autoApproveBelow": 75.5}'
    assert [stack.text(i) for i in range(stack.count())] == ["Edit message 2"]  # one step
    assert refund.isWindowModified()
    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the field's typing
    assert box.lineEdit().text() == "50"
    assert json.dumps(policy()) == '{"maxDays": 30, "autoApproveBelow": 50}'
    assert stack.count() == 0
    assert stack.isClean()
    assert not refund.isWindowModified()  # no * in the title
    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # nothing left anywhere
    assert json.dumps(policy()) == '{"maxDays": 30, "autoApproveBelow": 50}'
    assert stack.isClean()
    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert box.lineEdit().text() == "75.5"
    assert json.dumps(policy()) == '{"maxDays": 30, "autoApproveBelow": 75.5}'
    assert [stack.text(i) for i in range(stack.count())] == ["Edit message 2"]
    stack.undo()  # the window's Undo takes the whole field's edit back
    assert json.dumps(policy()) == '{"maxDays": 30, "autoApproveBelow": 50}'
    assert stack.isClean()


def test_typing_50_0_over_50_is_an_edit_and_50_again_takes_it_back(qtbot: Any, refund: MainWindow) -> None:
    """50.0 is written apart from 50: typing it over 50 is a step (the title's *); typing 50 over that, in the
    same field, is back where the typing began: no step, the document clean."""
    click_row(qtbot, refund, 2)
    box = number_box(qtbot, refund, "50")
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    stack = refund.session.undo_stack

    def policy() -> str:
        return json.dumps(refund.context()[2]["data"]["policy"])

    box.lineEdit().selectAll()
    qtbot.keyClicks(box, "50.0")
    assert policy() == '{"maxDays": 30, "autoApproveBelow": 50.0}'
    assert [stack.text(i) for i in range(stack.count())] == ["Edit message 2"]
    assert refund.isWindowModified()
    box.lineEdit().selectAll()
    qtbot.keyClicks(box, "50")
    assert policy() == '{"maxDays": 30, "autoApproveBelow": 50}'
    assert stack.count() == 0
    assert stack.isClean()
    assert not refund.isWindowModified()


def test_the_timeline_keeps_still_when_a_plan_shows_its_calls(qtbot: Any, refund: MainWindow) -> None:
    """Clicking the plan row (calls shown) and a text row (no calls) never moves or resizes the rows."""
    table = refund.timeline.table
    refund.select_message(0)
    qtbot.waitUntil(lambda: not table.visualRect(table.model().index(4, 0)).isEmpty())
    before = (table.geometry(), table.viewport().geometry(), table.verticalScrollBar().value(),
              [table.visualRect(table.model().index(row, 0)) for row in range(5)])
    for row in (4, 0, 4, 2):
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                         pos=table.visualRect(table.model().index(row, 0)).center())
        assert refund.selected_message() == row
        assert (table.geometry(), table.viewport().geometry(), table.verticalScrollBar().value(),
                [table.visualRect(table.model().index(r, 0)) for r in range(5)]) == before
    refund.select_message(4)
    assert refund.timeline.calls.isVisibleTo(refund)
    refund.select_message(0)
    assert refund.timeline.calls_note.isVisibleTo(refund)


def hover_tooltip(qtbot: Any, view: Any, index: Any) -> str:
    """Hover a cell (a tooltip event where it is) and return the tooltip shown, or ""."""
    rect = view.visualRect(index)
    point = rect.center()
    event = QHelpEvent(QEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point))
    QApplication.sendEvent(view.viewport(), event)
    return QToolTip.text() if QToolTip.isVisible() else ""


def test_a_cut_off_watch_error_has_its_whole_text_in_a_tooltip(qtbot: Any, window: MainWindow) -> None:
    """A malformed watch's message, cut off by a narrow column, shows whole on hover; a short value does not."""
    table = window.watches.table
    window.watches.model.add("†state.user ||| oops and then a great deal more text that will not fit")
    window.watches.model.add("†state.user")
    table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().resizeSection(1, 120)
    error = table.model().index(0, 1)
    assert str(error.data()).startswith("malformed: ")
    assert hover_tooltip(qtbot, table, error) == error.data()
    qtbot.waitUntil(lambda: table.model().index(1, 1).data() == '"Sam"')
    assert table.model().index(1, 2).data() == "#2"
    assert hover_tooltip(qtbot, table, table.model().index(1, 2)) != "#2"  # it fits: no tooltip of it


def test_a_long_check_shows_its_progress(qtbot: Any, window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    """F7 on a check that takes a while: the status bar shows what is checked and for how long, then the count."""
    from contextdeck.gui import _diagnostics

    release = threading.Event()
    real = _diagnostics.validate

    def slow(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)
        return real(*args, **kwargs)

    progress = window.check_progress
    window.diagnostics.flush()  # (the check of the document as opened: not the one timed here)
    monkeypatch.setattr(_diagnostics, "validate", slow)
    window.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F7)
    qtbot.waitUntil(progress.isVisible)
    assert progress.label.text().startswith("Checking 4 messages… ")
    assert progress.bar.maximum() == 0  # busy: validate reports no fraction
    release.set()
    qtbot.waitUntil(lambda: not progress.isVisible())
    assert window.diagnostics_label.text() == "No problems"


def test_hovering_the_state_view_shows_who_set_a_value_and_what_it_replaced(qtbot: Any, window: MainWindow) -> None:
    """The state view's tooltips, made when hovered: "Set by" names the setter and the value it shadowed (the
    engine's blame), the key names the path and the whole value."""
    view = window.state_view
    model = view.state_model
    qtbot.waitUntil(lambda: not view.is_busy() and model.rowCount() > 0 and model.index(0, 2).data() == "#2")
    assert model.index(0, 0).data() == "¶state"
    view.expand(model.index(0, 0))
    user = model.index(0, 0, model.index(0, 0))
    assert (user.data(), user.siblingAtColumn(1).data()) == ("user", '"Sam"')
    assert hover_tooltip(qtbot, view, user.siblingAtColumn(2)) == ('Set by message 2; click to jump there\n'
                                                                   'It replaced: "Alex"')
    assert hover_tooltip(qtbot, view, user) == '¶state.user\n"Sam"'


def test_the_window_opens_with_the_focus_on_the_timeline(qtbot: Any, refund: MainWindow) -> None:
    """The window opens with the focus on the timeline's rows, never in the editor (its Type box was the first
    control of Qt's chain under a window manager: the first keys typed re-typed the selected message)."""
    refund.activateWindow()
    qtbot.waitUntil(lambda: focused() is not None)
    assert focused() is refund.timeline.table


def test_a_documents_own_layout_leaves_the_keys_where_they_were(qtbot: Any, open_window: Any, examples: Path,
                                                                 tmp_path: Path) -> None:
    """Opening a document that brings its own dock layout, which lays every dock out anew, leaves the keys on the
    timeline's rows where they were, and selects no call on the way."""
    window: MainWindow = open_window(examples / "refund_workflow.json")
    window.llm_dock.raise_()  # this document's layout: the LLM view in front
    other = tmp_path / "other.json"
    other.write_text(json.dumps(DOC), encoding="utf-8")
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(other)
    window.state_dock.raise_()
    window.activateWindow()
    window.timeline.table.setFocus()
    qtbot.waitUntil(lambda: focused() is window.timeline.table)
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "refund_workflow.json")
    assert window.state_dock.visibleRegion().isEmpty()  # its layout was restored: the LLM view in front
    assert focused() is window.timeline.table
    assert not window.inspector.panel.view.currentIndex().isValid()  # no call selected by the focus passing


def test_reset_layout_keeps_the_keys_and_a_selection_in_a_line_edit(qtbot: Any, refund: MainWindow) -> None:
    """View → Reset Layout with the keys in the filter box and part of its text selected: the keys stay there
    and so does the selection."""
    refund.activateWindow()
    box = refund.timeline.filter_box
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    box.setText("refund")
    box.setSelection(0, 3)
    refund.reset_layout()
    assert focused() is box
    assert box.selectedText() == "ref"


def test_a_layout_that_closes_the_focused_pane_gives_the_keys_to_the_first_control(qtbot: Any,
                                                                                    refund: MainWindow) -> None:
    """A layout restored with the dock that had the keys closed leaves them on a control of the window that is
    shown, not nowhere."""
    refund.activateWindow()
    refund.llm_dock.close()
    closed = refund.saveState()
    refund.llm_dock.show()
    refund.llm_dock.raise_()
    inside = refund.llm_view
    inside.setFocus()
    qtbot.waitUntil(lambda: focused() is not None and (focused() is inside or inside.isAncestorOf(focused())))
    refund.restoreState(closed)
    assert not refund.llm_dock.isVisible()
    widget = focused()
    assert widget is not None
    assert widget is not refund  # (which holds the keys while the docks are laid out)
    assert refund.isAncestorOf(widget)
    assert widget.isVisible()


def test_tab_and_shift_tab_never_stop_in_a_dock_behind_a_tab(qtbot: Any, refund: MainWindow) -> None:
    """Round the whole window with Tab, then with Shift+Tab: the focus never lands in a dock tabbed behind
    another (it stopped in the Output audit, the LLM view, the plan graph and the call stack, off screen, where
    the keys typed went unseen), not even on the way, and reaches every pane in front."""
    from contextdeck.gui._seen import behind_a_tab

    refund.activateWindow()
    table = refund.timeline.table
    passed: list[QWidget] = []  # every widget that had the focus, however briefly
    app = QApplication.instance()
    assert isinstance(app, QApplication)

    def note(_old: QWidget | None, new: QWidget | None) -> None:
        if new is not None:
            passed.append(new)

    app.focusChanged.connect(note)
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
        table.setFocus()
        qtbot.waitUntil(table.hasFocus)
        stops: list[QWidget] = []
        for _ in range(100):  # more than the stops of a round
            widget = focused()
            assert widget is not None
            stops.append(widget)
            qtbot.keyClick(widget, key)
        hidden = [f"{type(w).__name__} {w.objectName()}" for w in stops + passed if behind_a_tab(w)]
        assert hidden == []
        for pane in (refund.state_view, refund.watches, refund.inspector.panel, refund.inspector.inspector,
                     refund.editor):
            assert any(pane is w or pane.isAncestorOf(w) for w in stops), type(pane).__name__
    app.focusChanged.disconnect(note)


def test_insert_plan_after_another_plan_was_shown_keeps_the_caret_in_the_new_body(
        qtbot: Any, refund: MainWindow) -> None:
    """The editor showed the refund plan, then a tool message; Insert Plan Message puts the focus on the new,
    empty plan's first control (+ call) and it stays there: it went to the old plan's Tool box, not yet
    deleted, which went away on the next turn with the focus (keys typed then were lost)."""
    refund.activateWindow()
    refund.select_message(4)
    qtbot.waitUntil(lambda: refund.editor.message() == refund.context()[4])
    refund.select_message(3)
    refund.timeline.table.setFocus()
    qtbot.waitUntil(refund.timeline.table.hasFocus)
    refund.insert_message("Plan")
    body = refund.editor.body()
    qtbot.wait(200)  # the old plan's boxes are deleted on a next turn
    widget = focused()
    assert widget is not None
    assert body.isAncestorOf(widget)
    assert widget is body.add_button


def test_tab_leaves_the_json_tab_and_ctrl_tab_types_a_tab(qtbot: Any, refund: MainWindow) -> None:
    """On the JSON tab, Tab goes on from the JSON text as it does from a text body (it typed tab after tab into
    the JSON, found with real keys); Ctrl+Tab types a tab, which changes no value and so no message."""
    refund.activateWindow()
    refund.select_message(3)
    editor = refund.editor
    qtbot.waitUntil(lambda: editor.message() == refund.context()[3])
    editor.tabs.setCurrentWidget(editor.json)
    text = editor.json.text
    qtbot.waitUntil(text.isVisible)
    before, steps = text.toPlainText(), refund.session.undo_stack.count()
    text.setFocus()
    qtbot.waitUntil(text.hasFocus)
    qtbot.keyClick(text, Qt.Key.Key_Tab)
    assert not text.hasFocus()
    assert text.toPlainText() == before
    text.setFocus()
    qtbot.waitUntil(text.hasFocus)
    qtbot.keyClick(text, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert text.hasFocus()
    assert "\t" in text.toPlainText()
    assert refund.session.undo_stack.count() == steps
    assert refund.context()[3] == json.loads(before)


def test_go_to_message_leaves_the_keys_in_the_timeline(qtbot: Any, refund: MainWindow) -> None:
    """Ctrl+G from a field of the plan's form: once the message is gone to, the timeline has the focus on its row
    (real keys: the old form's Tool box went away and the focus fell on the new form's `null` box, which the
    next Space would have ticked)."""
    from PySide6.QtWidgets import QComboBox, QInputDialog

    refund.activateWindow()
    refund.select_message(4)
    qtbot.waitUntil(lambda: any(box.isVisible() for box in refund.editor.findChildren(QComboBox, "callTool")))
    tool = next(box for box in refund.editor.findChildren(QComboBox, "callTool") if box.isVisible())
    tool.setFocus()
    qtbot.waitUntil(tool.hasFocus)
    qtbot.keyClick(tool, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    dialog = next(d for d in refund.findChildren(QInputDialog) if d.isVisible())
    from PySide6.QtGui import QFont, QFontMetrics

    bold = QFont(dialog.font())
    bold.setBold(True)
    title = QFontMetrics(bold).horizontalAdvance("Go to Message")
    assert dialog.width() >= title + 150, "room for its title beside the title bar's buttons (it read 'Go to … ssage')"
    dialog.setIntValue(2)
    dialog.accept()
    qtbot.waitUntil(lambda: refund.selected_message() == 2)
    refund.activateWindow()
    qtbot.waitUntil(lambda: focused() is refund.timeline.table)
    assert refund.timeline.table.currentIndex().row() == 2


def test_escape_clears_the_filter_then_the_keys_go_back_to_the_rows(qtbot: Any, refund: MainWindow) -> None:
    """In the timeline's filter box Escape clears the filter, and with nothing left to clear goes back to the
    rows; Down goes to the rows the filter left (both did nothing: the caret stayed in the box)."""
    box, table = refund.timeline.filter_box, refund.timeline.table
    refund.activateWindow()
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    qtbot.keyClicks(box, "kind:state")
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert focused() is table
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert box.text() == ""
    assert focused() is box
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert focused() is table


def test_a_second_insert_of_a_tool_starts_with_an_empty_name(qtbot: Any, refund: MainWindow) -> None:
    """Insert Tool, type a name without adding it, Insert Tool again: the new message's name box is empty, and the
    name typed next is the new message's (the form of two equal messages was kept, and the first one's name
    with it)."""
    refund.activateWindow()
    refund.select_message(2)
    refund.insert_message("Tool")
    qtbot.waitUntil(lambda: focused() is not None and focused().objectName() == "newToolName")
    qtbot.keyClicks(focused(), "myTool")
    refund.insert_message("Tool")
    qtbot.waitUntil(lambda: refund.selected_message() == 4)
    box = focused()
    assert isinstance(box, QLineEdit)
    assert box.objectName() == "newToolName"
    assert box.text() == ""
    qtbot.keyClicks(box, "other")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert [refund.context()[n]["tool"] for n in (3, 4)] == [{}, {"other": refund.context()[4]["tool"]["other"]}]


def frame_shown(widget: QWidget) -> bool:
    """Whether the style draws `widget`'s focus frame: it has the focus, and its window is in keyboard use."""
    return widget.hasFocus() and widget.window().testAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange)


def test_a_focus_the_keys_move_keeps_its_frame_and_a_click_hides_it(qtbot: Any, refund: MainWindow) -> None:
    """Alt+N and a dialog's or a form's own focus used to hide the frame Tab had drawn; while keys are in use
    every focus shows it, and a mouse press ends that."""
    timeline = refund.timeline.table
    timeline.setFocus()
    qtbot.waitUntil(timeline.hasFocus)
    qtbot.keyClick(timeline, Qt.Key.Key_Tab)
    qtbot.keyClick(focused(), Qt.Key.Key_3, Qt.KeyboardModifier.AltModifier)
    assert refund.state_view.hasFocus()
    assert frame_shown(refund.state_view)
    refund.watches.entry.setFocus()  # the program's own move, as a dialog or a new row makes it
    qtbot.waitUntil(refund.watches.entry.hasFocus)
    assert frame_shown(refund.watches.entry)
    qtbot.mouseClick(timeline.viewport(), Qt.MouseButton.LeftButton)
    refund.watches.entry.setFocus()
    qtbot.waitUntil(refund.watches.entry.hasFocus)
    assert not frame_shown(refund.watches.entry), "after a click the frame waits for the keys again"


def ring_on(widget: QWidget) -> bool:
    """Whether the focus ring is shown over `widget`."""
    return any(ring.isVisible() for ring in widget.findChildren(FocusRing))


def test_the_focused_widget_wears_a_ring_while_keys_are_in_use(qtbot: Any, refund: MainWindow) -> None:
    """Fusion's own frame shows on a line edit only: a combo box, a button or a view whose current row is
    selected looked the same with the keys as without. From the first key (no focus move needed) the
    focused widget wears a ring; the program's own moves take it along; a mouse press takes it off."""
    timeline = refund.timeline.table
    qtbot.mouseClick(timeline.viewport(), Qt.MouseButton.LeftButton)  # keys out of use, whatever ran before
    timeline.setFocus()
    qtbot.waitUntil(timeline.hasFocus)
    assert not ring_on(timeline), "no keys used yet"
    qtbot.keyClick(timeline, Qt.Key.Key_Down)
    assert ring_on(timeline), "the first key frames where the keys are, without a move"
    qtbot.keyClick(focused(), Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    field = focused()
    assert field is not None
    assert field is not timeline
    assert ring_on(field)
    assert not ring_on(timeline)
    type_box = refund.editor.findChild(QComboBox)
    assert type_box is not None
    type_box.setFocus()
    qtbot.waitUntil(type_box.hasFocus)
    assert ring_on(type_box)
    ring = type_box.findChild(FocusRing)
    assert ring is not None
    assert ring.geometry() == type_box.rect(), "over the widget's edge, inside it"
    qtbot.mouseClick(timeline.viewport(), Qt.MouseButton.LeftButton)
    assert not any(ring_on(widget) for widget in (timeline, type_box, field))


def test_the_keys_frame_the_focus_after_bursts_of_events_not_looked_at(qtbot: Any, refund: MainWindow,
                                                                       theme: Any) -> None:
    """A dialog's making and opening and a theme switch send their widgets' events past the keyboard's filter
    (`unheard`): it is back after them, and the first key still frames where the keys are."""
    qtbot.mouseClick(refund.timeline.table.viewport(), Qt.MouseButton.LeftButton)  # keys out of use
    refund.set_theme("dark")  # the `theme` fixture brings the light theme back
    docks = [dock for dock in refund.findChildren(QDockWidget) if dock.isVisible()]
    qtbot.waitUntil(lambda: all(dock.updatesEnabled() for dock in docks))
    dialog = TurnDialog(refund.turns, refund)
    dialog.open_soon()
    qtbot.waitUntil(dialog.isVisible)
    dialog.editor.setFocus()
    qtbot.waitUntil(dialog.editor.hasFocus)
    assert not ring_on(dialog.editor)
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Right)
    assert ring_on(dialog.editor)
    dialog.reject()


def test_enter_on_a_state_row_or_a_watch_selects_the_message_that_set_it(qtbot: Any, window: MainWindow) -> None:
    """The state view's "Set by" and a watch's value jumped to their message on a click or a double click only: Enter
    on the row did nothing. Enter selects that message, from any cell of the row; a double click on a watch's
    expression still edits it."""
    from contextdeck.gui._state import PathRole

    window.select_message(3)
    qtbot.waitUntil(lambda: window.state_view.state_model.rowCount() > 0)
    model = window.state_view.state_model
    rows = [model.index(row, 0) for row in range(model.rowCount())]
    state = next(row for row in rows if row.data(PathRole) == "¶state")
    window.state_view.setFocus()
    window.state_view.setCurrentIndex(state)
    qtbot.keyClick(window.state_view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.selected_message() == 2)  # the last write of ¶state before #3

    window.select_message(3)
    window.watches.model.add("†state.user")
    table = window.watches.table
    qtbot.waitUntil(lambda: table.model().rowCount() == 1)
    table.setFocus()
    table.setCurrentIndex(table.model().index(0, 0))
    qtbot.keyClick(table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.selected_message() == 2)


def test_the_plan_graphs_arrows_select_the_call_in_the_calls_panel_and_follow_it(
        qtbot: Any, refund: MainWindow) -> None:
    """The plan graph's nodes were chosen by the mouse only. Alt+8, then the arrows go from the call selected in the
    Calls panel along the graph, and each one they reach is the Calls panel's selected call (the Call inspector shows
    it) while the keys stay in the graph; a call selected in the Calls panel is the one the graph draws chosen."""
    graph = refund.inspector.graph  # type: ignore[attr-defined]
    view = refund.inspector.panel.view  # type: ignore[attr-defined]
    view.select_call(1)
    assert graph.chosen == 1
    refund.timeline.filter_box.setFocus()
    qtbot.waitUntil(refund.timeline.filter_box.hasFocus)
    qtbot.keyClick(refund.timeline.filter_box, Qt.Key.Key_8, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(graph.hasFocus)
    qtbot.waitUntil(lambda: graph.graph is not None and bool(graph.nodes))
    qtbot.keyClick(graph, Qt.Key.Key_Down)  # logStep (#1) → issueRefund (#3), in the same layer
    assert view.currentIndex().row() == 3
    assert graph.hasFocus()
    qtbot.keyClick(graph, Qt.Key.Key_Right)  # along the data flow: checkEligibility (#2)
    assert view.currentIndex().row() == 2
    assert graph.nodes[2].chosen
    assert not graph.nodes[3].chosen
    assert graph.hasFocus()


def test_opening_a_document_from_a_field_of_the_editor_keeps_the_keys_in_the_editor(
        qtbot: Any, refund: MainWindow, examples: Path) -> None:
    """With the caret in a field of the editor, Open put the keys in the timeline's filter box (the field went with
    its document, and Qt gave the focus to the next control of the window): Ctrl+Z there was the box's own undo, with
    nothing to undo, and did nothing. The keys stay in the editor: in the new document's form, its first field."""
    qtbot.keyClick(refund.timeline.filter_box, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: focused() is not None and refund.editor.isAncestorOf(focused()))
    with qtbot.waitSignal(refund.document.documentShown, timeout=10000):
        refund.files.open_path(examples / "refund_workflow.json")
    qtbot.waitUntil(lambda: focused() is not None and refund.editor.isAncestorOf(focused()))
    assert focused() is not refund.timeline.filter_box
