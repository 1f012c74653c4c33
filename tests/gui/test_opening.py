"""A document opens in two turns: the views take it (`documentReplaced`), then its last message is selected
(`documentShown`). Nothing the user does falls between the two: it acts on the document as shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QWidget

from contextdeck.engine import Context, Document, Shape
from contextdeck.gui import _document_model
from contextdeck.gui._document_model import DocumentModel
from contextdeck.gui._first_input import input_targets
from contextdeck.gui._pictures import Pictures
from contextdeck.gui._session import DocumentSession
from contextdeck.gui._window import MainWindow

MESSAGES = [
    {"type": "text", "role": "system", "text": "Be brief."},
    {"type": "state", "data": {"user": "Alex"}},
    {"type": "state", "data": {"user": "Sam"}},
    {"type": "text", "role": "user", "text": "Hello"},
]
LAST = len(MESSAGES) - 1


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "four.json"
    path.write_text(json.dumps(MESSAGES), encoding="utf-8")
    return path


def in_the_gap(window: MainWindow, do: Any) -> None:
    """`do()` right after the load's hand-over (the views took the new document), before its selection: as an
    input event queued while the hand-over ran is delivered."""
    def once() -> None:
        window.session.loadFinished.disconnect(once)
        assert not window.document.is_shown()
        do()

    window.session.loadFinished.connect(once)


def test_the_hand_over_makes_no_form_and_the_next_turn_selects_the_last_message(
        qtbot: Any, open_window: Any, document: Path) -> None:
    window = open_window(None)
    at_hand_over: list[Any] = []
    window.session.documentReplaced.connect(lambda: at_hand_over.append(
        (window.selected_message(), window.editor.title.text(), window.document.is_shown())))
    shown: list[Any] = []
    window.document.documentShown.connect(lambda: shown.append(window.selected_message()))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert at_hand_over == [(None, "<b>No message selected</b>", False)]
    assert shown == [LAST]
    assert window.document.is_shown()
    assert window.editor.title.text().startswith(f"<b>#{LAST} · text</b>")
    assert window.timeline.table.currentIndex().row() == LAST


@pytest.mark.parametrize(("key", "selected", "count"), [
    (Qt.Key.Key_Up, LAST - 1, len(MESSAGES)),  # up from the last message, not from nothing
    (Qt.Key.Key_Delete, LAST - 1, len(MESSAGES) - 1),  # the last message goes, the one before it is selected
])
def test_a_key_pressed_before_the_selection_acts_on_the_document_as_shown(
        qtbot: Any, open_window: Any, document: Path, key: Qt.Key, selected: int, count: int) -> None:
    window = open_window(None)
    in_the_gap(window, lambda: QTest.keyClick(window.windowHandle(), key))  # as the window system delivers it
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    qtbot.waitUntil(lambda: window.selected_message() == selected)
    assert len(window.context()) == count
    assert window.editor.title.text().startswith(f"<b>#{selected} ·")


def test_a_shortcut_pressed_before_the_selection_acts_on_the_document_as_shown(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """A key that is a shortcut (Ctrl+D, Duplicate) never reaches the window as a key press: it is seen where the
    focus is."""
    window = open_window(None)
    in_the_gap(window, lambda: QTest.keyClick(window.windowHandle(), Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert window.context().messages == [*MESSAGES, MESSAGES[-1]]


def test_a_click_before_the_selection_keeps_its_row(qtbot: Any, open_window: Any, document: Path) -> None:
    window = open_window(None)
    table = window.timeline.table

    def click_row_one() -> None:
        table.resizeRowsToContents()
        QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(
            table.model().index(1, 0)).center())

    in_the_gap(window, click_row_one)
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert window.selected_message() == 1
    assert window.editor.title.text().startswith("<b>#1 · state</b>")


def test_the_timeline_taking_the_focus_before_the_selection_shows_the_last_message(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """Given the focus with no current row (the window activated, Down from the filter box), a table makes its
    first row current: the document opens on its last message all the same."""
    window = open_window(None)
    table = window.timeline.table

    def down_from_the_filter_box_into_the_timeline() -> None:
        window.timeline.filter_box.setFocus(Qt.FocusReason.OtherFocusReason)
        QTest.keyClick(window.windowHandle(), Qt.Key.Key_Down)

    in_the_gap(window, down_from_the_filter_box_into_the_timeline)
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert table.hasFocus()
    assert window.selected_message() == LAST


def test_a_message_selected_before_the_selection_is_kept(qtbot: Any, open_window: Any, document: Path) -> None:
    """A view that jumps to a message in the gap (a restored place, a link followed) keeps it."""
    window = open_window(None)
    in_the_gap(window, lambda: window.select_message(2))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert window.selected_message() == 2


def test_the_editor_is_emptied_in_the_slice_after_the_hand_over_not_in_it(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """The hand-over leaves the editor as it is (nothing is selected, so no edit from it is taken); the slice after
    it shows no message, and the opening then shows the last one."""
    window = open_window(document)
    editor = window.editor
    assert editor.message() == MESSAGES[LAST]
    seen: list[Any] = []  # each message the editor shows (its index), and the end of the hand-over
    show = editor._set_message

    def showing(index: int | None, message: Any) -> None:
        seen.append(index)
        show(index, message)

    editor._set_message = showing
    window.session.loadFinished.connect(lambda: seen.append(
        ("handed over", window.selected_message(), editor.title.text().startswith(f"<b>#{LAST} ·"))))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert seen == [("handed over", None, True), None, LAST]
    assert editor.message() == MESSAGES[LAST]


def test_the_message_shown_when_selected_before_the_editor_is_emptied_stays(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """A message selected right after the hand-over, the one the editor still shows (the same file opened again),
    stays in the editor: the slice that would have emptied it does nothing."""
    window = open_window(document)
    in_the_gap(window, lambda: window.select_message(LAST))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    qtbot.waitUntil(lambda: not window.forms_ahead.opening_pending())
    assert window.selected_message() == LAST
    assert window.editor.message() == MESSAGES[LAST]
    assert window.editor.title.text().startswith(f"<b>#{LAST} · text</b>")


def test_another_document_opened_before_the_selection_opens_on_its_own_last_message(
        qtbot: Any, open_window: Any) -> None:
    window = open_window(None)
    shown: list[int | None] = []
    window.document.documentShown.connect(lambda: shown.append(window.selected_message()))
    window.session.open_document(Document(Context([dict(message) for message in MESSAGES]), Shape.ARRAY))
    window.session.open_document(Document(Context([dict(message) for message in MESSAGES[:2]]), Shape.ARRAY))
    qtbot.waitUntil(window.document.is_shown)
    assert shown == [1]  # once, for the document open now
    assert window.editor.title.text().startswith("<b>#1 · state</b>")


def test_an_empty_document_is_shown_with_nothing_selected(qtbot: Any, open_window: Any, document: Path) -> None:
    window = open_window(document)
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.files.new()
    assert window.selected_message() is None
    assert window.editor.title.text() == "<b>No message selected</b>"


def test_the_selection_comes_in_a_turn_after_the_windows_repaint_of_the_new_document(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """The views' repaint of the document and the editor's form of its last message each make a frame of their
    own (at a million messages, together they were two)."""
    from PySide6.QtCore import QEvent, QObject

    from contextdeck.gui._slices import slices

    window = open_window(None)
    seen: list[tuple[str, int]] = []

    class Repaints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.UpdateRequest and seen:
                seen.append(("repaint", slices().turns))
            return False

    repaints = Repaints(window)
    window.installEventFilter(repaints)
    window.document.documentReplaced.connect(lambda: seen.append(("replaced", slices().turns)))
    window.document.documentShown.connect(lambda: seen.append(("shown", slices().turns)))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    window.removeEventFilter(repaints)
    kinds = [kind for kind, _turn in seen]
    assert kinds[0] == "replaced"
    assert "repaint" in kinds
    assert kinds[-1] == "shown"
    first_repaint = next(turn for kind, turn in seen if kind == "repaint")
    assert first_repaint < seen[-1][1]



def test_the_opening_progress_dialog_blocks_and_unblocks_the_window_past_its_filters(
        qtbot: Any, open_window: Any) -> None:
    """Showing the opening's window-modal progress dialog tells every widget of the window it is blocked, and hiding
    it that it is not: bursts of events, none of them a key or a click, sent past the application's filters in Python
    (`unheard`: at a million messages each burst was most of a frame)."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication, QDialog

    from contextdeck.gui._unheard import listen

    window = open_window(None)
    seen: list[QEvent.Type] = []

    class Filter(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() in (QEvent.Type.WindowBlocked, QEvent.Type.WindowUnblocked):
                seen.append(event.type())
            return False

    heard = Filter(window)
    listen(QApplication.instance(), heard)
    try:
        files = window.files
        files._load_started("/nowhere/big.json")
        dialog = files._progress
        dialog.setMinimumDuration(0)
        files._load_progress(500, 1000)  # the report that shows it
        assert dialog.isVisible()
        files._close_progress(later=True)
        qtbot.waitUntil(lambda: not files._ended)
        assert seen == []
        other = QDialog(window)  # (the filter hears what another window-modal dialog sends)
        other.setWindowModality(Qt.WindowModality.WindowModal)
        other.show()
        other.hide()
        assert QEvent.Type.WindowBlocked in seen
    finally:
        QApplication.instance().removeEventFilter(heard)


def test_the_selection_is_a_slice_of_its_own_turn(qtbot: Any, open_window: Any, document: Path) -> None:
    """Once the window has repainted the new document, the editor's form of the last message waits for a slice of
    the window's turns (`slices()`): never in a turn with another slice, or one that began busy (at a million
    messages, with the calls panel's analysis, one turn of 25 ms)."""
    from contextdeck.gui._slices import slices

    window = open_window(None)
    model = window.document
    model.open_after(lambda: False)  # (the window's repaint not come yet)
    with qtbot.waitSignal(model.documentReplaced, timeout=10_000):
        window.session.open(document)
    assert not model.is_shown()
    model.open_after(lambda: True)
    model._opening_due()  # the window has repainted: the opening's timer sees it
    assert not model.is_shown()
    assert slices().pending
    with qtbot.waitSignal(model.documentShown, timeout=10_000):
        pass
    assert window.selected_message() == len(window.context()) - 1

def rows_drawn_before_shown(window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the timeline's rows draw (a number, a body: `Pictures.paint`) while the document is not shown."""
    drawn: list[Any] = []
    paint = Pictures.paint

    def recording(pictures: Pictures, painter: Any, x: int, y: int, key: Any, *rest: Any) -> None:
        if not window.document.is_shown():
            drawn.append(key)
        paint(pictures, painter, x, y, key, *rest)

    monkeypatch.setattr(Pictures, "paint", recording)
    return drawn


def test_a_new_documents_rows_are_painted_once_it_is_shown(qtbot: Any, open_window: Any, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's repaint of a new document paints none of its rows (the selection it opens on jumps to the
    last): from the selection on, the rows on screen are drawn into pictures a band a turn, then shown. Rows
    drawn are counted, not paint events: Qt paints a viewport whose updates are off when an ancestor repaints
    (the window, activated after the load's progress dialog), and the held viewport then draws no row."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps([{"type": "text", "role": "user", "text": f"turn {n}"} for n in range(500)]),
                    encoding="utf-8")
    window = open_window(None)
    table = window.timeline.table
    drawn = rows_drawn_before_shown(window, monkeypatch)
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(path)
    assert drawn == []
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert table.viewport().updatesEnabled()
    assert table.viewport().rect().contains(table.visualRect(table.model().index(499, 0)))


def test_a_document_handed_over_while_a_scroll_is_drawn_paints_its_rows_once_shown(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another document comes while a far jump in this one is still due (its rows to be drawn a band a turn): the
    jump's bands are not drawn over the new rows, and no repaint asked for before draws them; they are painted
    once the new document is shown."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps([{"type": "text", "role": "user", "text": f"turn {n}"} for n in range(500)]),
                    encoding="utf-8")
    window = open_window(path)
    table = window.timeline.table
    qtbot.waitUntil(lambda: not table.is_scrolling())
    window.select_message(0)  # a far jump from the last row: its screen is drawn in turns to come
    assert table.is_scrolling()
    drawn = rows_drawn_before_shown(window, monkeypatch)
    other = [{"type": "text", "role": "user", "text": f"other {n}"} for n in range(400)]
    window.session.open_document(Document(Context(other), Shape.ARRAY))
    assert not window.document.is_shown()
    qtbot.waitUntil(window.document.is_shown, timeout=10_000)
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert drawn == []
    assert table.viewport().updatesEnabled()
    assert table.viewport().rect().contains(table.visualRect(table.model().index(399, 0)))


def test_rows_held_for_a_document_are_painted_once_it_is_shown_whatever_it_selected(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """No scroll after the document is shown (nothing to jump to): the rows held are drawn and painted all the
    same."""
    window = open_window(document)
    table = window.timeline.table
    qtbot.waitUntil(lambda: not table.is_scrolling())
    table.hold()
    window.document.documentShown.emit()
    assert table.is_scrolling()
    qtbot.waitUntil(lambda: table.viewport().updatesEnabled())


def test_a_window_that_repaints_every_turn_still_opens_the_document_turns_later(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """The selection follows the window's first repaint of the new document, not the last of a window that keeps
    repainting (a busy indicator, a run's progress), which would be `OPEN_WAIT_S` later (a thousand turns here):
    within a few slices (what the opening makes ahead, the editor's repaint of what it shows, then the selection),
    each waiting at most `WAITS` busy turns."""
    from PySide6.QtCore import QTimer

    from contextdeck.gui._slices import WAITS, slices

    window = open_window(None)
    busy = QTimer(window, interval=0)
    busy.timeout.connect(window.statusBar().update)
    busy.start()
    turns: list[int] = []
    window.document.documentReplaced.connect(lambda: turns.append(slices().turns))
    window.document.documentShown.connect(lambda: turns.append(slices().turns))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    busy.stop()
    assert turns[1] - turns[0] <= 9 * (WAITS + 1)


def test_a_document_whose_last_message_is_on_the_first_screen_shows_its_rows_with_the_selection(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """The rows held are the ones the selection shows: painted in the selection's repaint, not drawn in bands
    over the turns after it (where they would join whatever the user does next, a theme switch)."""
    window = open_window(None)
    table = window.timeline.table
    at_shown: list[bool] = []
    window.document.documentShown.connect(lambda: at_shown.append(table.viewport().updatesEnabled()))
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    assert at_shown == [True]


def test_a_document_opening_on_a_plan_makes_its_call_boxes_before_the_selection(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """The plan form's call boxes of the message a document opens on are made, and shown once out of sight, in
    slices before the editor shows that message (at a million messages, made in the selection's turn with its
    repaint, more than a frame); the editor shows those very boxes, and they edit the plan."""
    from PySide6.QtWidgets import QLineEdit

    from contextdeck.gui._message_editor import Body
    from contextdeck.gui._message_editor._calls import CallBox

    tool = {"type": "tool", "tool": {"greet": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "greet", "name": "Alex"}]}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps([*MESSAGES, tool, plan]), encoding="utf-8")
    window = open_window(None)
    model, editor = window.document, window.editor
    before: list[Any] = []  # the plan page's boxes, made and shown once, as the editor comes to show the plan
    set_message = editor.set_message

    def shown(index: int | None, message: Any) -> None:
        if message is not None and not before:
            page = editor._pages.get(Body.CALLS)
            boxes = [] if page is None else list(page.findChildren(CallBox))
            before.append((boxes, [box.testAttribute(Qt.WidgetAttribute.WA_WState_Polished) for box in boxes],
                           editor.bodies.currentWidget() is page))
        set_message(index, message)

    editor.set_message = shown
    with qtbot.waitSignal(model.documentShown, timeout=10_000):
        window.session.open(path)
    (boxes, polished, on_screen), = before
    assert len(boxes) == 1
    assert polished == [True]
    assert not on_screen
    assert window.selected_message() == len(MESSAGES) + 1
    page = window.editor.body()
    assert page.findChildren(CallBox) == boxes
    assert boxes[0].isVisible()
    name = boxes[0].fields["name"]
    assert isinstance(name, QLineEdit)
    assert name.text() == "Alex"
    name.setFocus()
    qtbot.waitUntil(name.hasFocus)
    qtbot.keyClicks(name, "!")
    assert window.context()[len(MESSAGES) + 1]["plan"] == [{"_tool": "greet", "name": "Alex!"}]


def test_the_editor_shows_the_message_a_document_opens_on_in_a_slice_before_its_selection(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """The last piece of the opening has the editor show the last message, in a slice of the window's turns before
    the selection's; the selection finds it shown and does nothing in the editor (at a million messages, the
    editor's parts shown and painted with the rest of the selection were more than a frame)."""
    window = open_window(None)
    model, editor = window.document, window.editor
    shown: list[Any] = []  # each time the editor shows a message: (what was selected then, the message's index)
    show = editor._set_message

    def showing(index: int | None, message: Any) -> None:
        shown.append((model.selected_message(), index))
        show(index, message)

    editor._set_message = showing
    at_selection: list[Any] = []
    finish = model.finish_opening

    def selection() -> None:
        at_selection.append((editor.title.text(), editor.tabs.isVisible(), editor.nothing.isVisible()))
        finish()

    model.finish_opening = selection
    with qtbot.waitSignal(model.documentShown, timeout=10_000):
        window.session.open(document)
    assert shown == [(None, None), (None, LAST)]  # the hand-over's nothing, then the last message, unselected
    (title, tabs, nothing), = at_selection
    assert title.startswith(f"<b>#{LAST} · text</b>")
    assert tabs
    assert not nothing
    assert window.selected_message() == LAST
    assert editor.message() == MESSAGES[LAST]


def test_the_message_a_document_opens_on_is_repainted_in_a_slice_after_the_one_that_shows_it(
        qtbot: Any, open_window: Any, document: Path) -> None:
    """The last piece of the opening shows the message with the editor's updates off, and a later slice turns them
    on: its repaint has a turn of its own (with the slice that showed it, more than a frame at a million
    messages)."""
    window = open_window(None)
    editor = window.editor
    updates: list[bool] = []  # whether the editor repaints, as each message is shown
    show = editor._set_message

    def showing(index: int | None, message: Any) -> None:
        show(index, message)
        if index is not None:
            updates.append(editor.updatesEnabled())

    editor._set_message = showing
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(document)
    qtbot.waitUntil(lambda: not window._busy())
    assert updates == [False]
    assert editor.updatesEnabled()


def test_a_message_selected_before_the_editor_shows_the_opening_one_stays_in_the_editor(
        qtbot: Any, open_window: Any, document: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A view that selects a message before the opening's last piece keeps it in the editor too: the piece does
    not show the document's last message over it."""
    window = open_window(None)
    model = window.document
    monkeypatch.setattr(_document_model, "OPEN_WAIT_S", 600.0)  # (never opened by the clock meanwhile)
    model.open_after(lambda: False)  # (the selection held back)
    with qtbot.waitSignal(model.documentReplaced, timeout=10_000):
        window.session.open(document)
    model.select_message(1)
    qtbot.waitUntil(lambda: not window.forms_ahead.opening_pending())
    model.open_after(lambda: True)
    with qtbot.waitSignal(model.documentShown, timeout=10_000):
        pass
    assert window.selected_message() == 1
    assert window.editor.message() == MESSAGES[1]


def test_a_document_opening_on_a_plan_has_its_calls_ahead_in_the_timeline(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """The timeline's calls view takes the new document with its last message, a plan, as its root before that
    message is selected (behind its note), and the selection shows those calls."""
    tool = {"type": "tool", "tool": {"greet": {"type": "object"}}}
    plan = {"type": "plan", "plan": [{"_tool": "greet"}, {"_tool": "greet"}]}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps([*MESSAGES, tool, plan]), encoding="utf-8")
    window = open_window(None)
    model, timeline = window.document, window.timeline
    before: list[Any] = []
    finish = model.finish_opening

    def selection() -> None:
        before.append((timeline.calls.model() is timeline.model(), timeline.calls.rootIndex().row(),
                       timeline._calls_area.currentWidget() is timeline.calls))
        finish()

    model.finish_opening = selection
    with qtbot.waitSignal(model.documentShown, timeout=10_000):
        window.session.open(path)
    assert before == [(True, len(MESSAGES) + 1, False)]
    assert timeline._calls_area.currentWidget() is timeline.calls
    assert timeline.calls.model().rowCount(timeline.calls.rootIndex()) == 2


def test_a_document_shown_with_nothing_selected_shows_no_message_in_the_editor(
        qtbot: Any, open_window: Any, document: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The opening shows the last message in the editor ahead of its selection; when no selection comes (a
    timeline filter hides that message), the editor shows no message either once the document is shown: an edit
    there would go to no message (the window edits the selected one), lost without a word."""
    window = open_window(document)
    timeline, model = window.timeline, window.document
    timeline.filter_box.setText("Alex")  # the last message hidden
    monkeypatch.setattr(_document_model, "OPEN_WAIT_S", 600.0)  # (never opened by the clock meanwhile)
    model.open_after(lambda: False)  # (the selection held back)
    with qtbot.waitSignal(model.documentReplaced, timeout=10_000):
        window.session.open(document)
    qtbot.waitUntil(lambda: not window.forms_ahead.opening_pending() and timeline.table.model() is timeline._filter)
    assert window.editor.message() == MESSAGES[LAST]  # shown ahead
    model.finish_opening()  # as the first input would
    assert window.selected_message() is None
    assert window.editor.message() is None
    assert window.editor.title.text() == "<b>No message selected</b>"


def test_the_opening_shown_before_its_last_piece_leaves_the_editor_to_the_selection(
        qtbot: Any, open_window: Any, document: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first input can show the document before the opening's pieces are done; with nothing selected then (a
    timeline filter hides the last message), the pieces that follow make and show their forms, but do not show
    the message in the editor."""
    window = open_window(document)
    timeline, model, editor = window.timeline, window.document, window.editor
    timeline.filter_box.setText("Alex")  # the last message hidden
    monkeypatch.setattr(_document_model, "OPEN_WAIT_S", 600.0)  # (never opened by the clock meanwhile)
    model.open_after(lambda: False)
    held = [True]
    show_prepared = editor.show_prepared
    monkeypatch.setattr(editor, "show_prepared", lambda: held[0] or show_prepared())  # a piece more, till let go
    with qtbot.waitSignal(model.documentReplaced, timeout=10_000):
        window.session.open(document)
    qtbot.waitUntil(lambda: timeline.table.model() is timeline._filter)
    assert window.forms_ahead.opening_pending()
    model.finish_opening()  # as the first input would
    assert window.selected_message() is None
    held[0] = False
    qtbot.waitUntil(lambda: not window.forms_ahead.opening_pending())
    assert editor.message() is None


def test_the_input_that_finishes_an_opening_is_watched_where_the_model_was_made_to_watch(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A document model made over a session that has a document opens it at once, watching for the first input
    where it was told to at construction (`input_targets`), never the whole application: input elsewhere leaves
    the opening pending, input there finishes it. A window not yet shown has no `QWindow`: where input may reach it
    once shown is anywhere, the application."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    session = DocumentSession(settings, tmp_path / "recovery")
    session.open_document(Document(Context([dict(m) for m in MESSAGES]), Shape.ARRAY))
    watched, elsewhere = QLineEdit(), QLineEdit()
    for widget in (watched, elsewhere):
        qtbot.addWidget(widget)
    monkeypatch.setattr(_document_model, "OPEN_WAIT_S", 600.0)  # (never opened by the clock meanwhile)
    model = DocumentModel(session, session, input_targets=lambda: [watched])
    model.open_after(lambda: False)  # only input finishes it here
    asked: list[int] = []
    model.selectRequested.connect(asked.append)
    assert not model.is_shown()
    QTest.keyClick(elsewhere, Qt.Key.Key_A)
    assert not model.is_shown()
    QTest.keyClick(watched, Qt.Key.Key_A)
    assert model.is_shown()
    assert asked == [LAST]  # the timeline would select it
    assert input_targets(QWidget()) == [QCoreApplication.instance()]
    session.close()
