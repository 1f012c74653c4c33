"""A selection is shown over a few turns of the event loop (the editor first, then the timeline's new rows, then
the views), and what the user sees and types is the same as when it was shown in one."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit

from contextdeck.engine import Context, CursorState
from contextdeck.gui._message_editor import _editor
from contextdeck.gui._state import StateModel
from contextdeck.gui._timeline import TimelinePanel
from contextdeck.gui._timeline_delegate import TimelineDelegate
from contextdeck.gui._timeline_model import TimelineModel
from contextdeck.gui._window import MainWindow

COUNT = 400  # enough rows that a jump from one end to the middle shows a screen of rows never drawn
BLENDING = 3  # of 255: a picture blended onto the row may differ from text drawn on it by rounding


def _messages() -> list[dict[str, Any]]:
    """Text and state messages in turn: `text n` and `{"label": "l n", "n": n}` for instance p(n % 5)."""
    return [{"type": "text", "role": "user", "text": f"text {n}"} if n % 2 == 0 else
            {"type": "state", "_instance": f"p{n % 5}", "data": {"label": f"l {n}", "n": n}} for n in range(COUNT)]


@pytest.fixture
def window(open_messages: Any) -> MainWindow:
    return open_messages(_messages(), "long.json")


def _settled(window: MainWindow) -> bool:
    return not window.is_refreshing() and not window.timeline.table.is_scrolling() and not window.state_view.is_busy()


def _typed_into_focus(qtbot: Any, text: str) -> None:
    """Keys typed where the keyboard focus is, as a user types."""
    focus = QApplication.focusWidget()
    assert focus is not None
    qtbot.keyClicks(focus, text)


@pytest.fixture(params=["shown at once", "shown later"])
def shown(request: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor shows a selected message in the selection's call, or in slices after it (a big document's)."""
    if request.param == "shown later":
        monkeypatch.setattr(_editor, "SHOWN_LATER_FROM", 1)


def _shown(window: MainWindow, index: int) -> bool:
    return _settled(window) and window.editor.message() == window.context()[index]


@pytest.mark.usefixtures("shown")
def test_typing_right_after_a_far_jump_lands_in_the_selected_message(qtbot: Any, window: MainWindow) -> None:
    """Typing into the message text, then jumping far to another text message and typing at once (before the
    timeline, the views and, in a big document, the editor have caught up) edits the message now selected, not
    the one before."""
    window.select_message(10)
    qtbot.waitUntil(lambda: _shown(window, 10))
    body = window.editor.body().text
    assert isinstance(body, QPlainTextEdit)
    body.setFocus()
    qtbot.waitUntil(body.hasFocus)
    window.go_to(COUNT // 2)
    _typed_into_focus(qtbot, "<typed>")
    edited = window.context()[COUNT // 2]["text"]
    assert "<typed>" in edited
    assert edited.replace("<typed>", "") == f"text {COUNT // 2}"
    assert window.context()[10]["text"] == "text 10"
    qtbot.waitUntil(lambda: _settled(window))
    assert window.selected_message() == COUNT // 2
    assert window.editor.body().text.toPlainText() == edited


@pytest.mark.usefixtures("shown")
def test_typing_into_a_form_field_right_after_a_far_jump_edits_the_selected_message(
        qtbot: Any, window: MainWindow) -> None:
    """The same in a payload form: the field typed into after a far jump to a message of the same form shows and
    edits the newly selected message."""
    window.select_message(11)
    qtbot.waitUntil(lambda: _shown(window, 11))
    label = next(edit for edit in window.editor.body().findChildren(QLineEdit)
                 if edit.isVisible() and edit.text() == "l 11")
    label.setFocus()
    qtbot.waitUntil(label.hasFocus)
    window.go_to(COUNT - 3)
    _typed_into_focus(qtbot, "<typed>")
    edited = window.context()[COUNT - 3]["data"]["label"]
    assert "<typed>" in edited
    assert edited.replace("<typed>", "") == f"l {COUNT - 3}"
    assert window.context()[11]["data"]["label"] == "l 11"


def test_the_editor_shows_the_rows_of_another_kind_of_message_laid_out(qtbot: Any, window: MainWindow) -> None:
    """Selecting a state message after a text one shows its instance row (hidden for text) laid out below the type
    row once the turn is over, as a newly made editor lays it out, and the role row is hidden."""
    header = window.editor.header
    window.select_message(10)
    qtbot.waitUntil(lambda: _settled(window))
    assert header.role.isVisible()
    assert not header.instance.isVisible()
    window.select_message(11)
    assert window.editor.layout().isEnabled()
    qtbot.waitUntil(lambda: _settled(window))
    qtbot.waitUntil(lambda: header.instance.isVisible() and not header.role.isVisible())
    qtbot.waitUntil(lambda: header.instance.geometry().top() > header.type.geometry().bottom())
    assert header.instance.text() == "p1"
    rows = [widget.geometry() for widget in (header.type, header.instance, header.description)]
    assert all(row.height() > 0 and header.rect().contains(row) for row in rows)
    assert all(upper.bottom() < lower.top() for upper, lower in itertools.pairwise(rows))


def _panel(qtbot: Any, context: Context) -> tuple[TimelinePanel, TimelineModel]:
    panel = TimelinePanel()
    qtbot.addWidget(panel)
    model = TimelineModel(context)
    panel.set_model(model)
    panel.resize(420, 360)
    panel.show()
    qtbot.waitExposed(panel)
    return panel, model


def _painted(panel: TimelinePanel) -> QImage:
    return panel.table.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _difference(one: QImage, other: QImage) -> int:
    assert one.size() == other.size()
    first, second = bytes(one.constBits()), bytes(other.constBits())
    return max((abs(a - b) for a, b in zip(first, second, strict=True)), default=0)


def _top_row(panel: TimelinePanel) -> int:
    return panel.table.rowAt(0)


def _near_the_top(qtbot: Any) -> tuple[TimelinePanel, TimelineModel, Any, TimelineDelegate]:
    """A timeline of COUNT messages settled on row 5: its panel, model, table and delegate."""
    panel, model = _panel(qtbot, Context(_messages()))
    table = panel.table
    panel.set_current(model.index(5, 0))
    qtbot.waitUntil(lambda: not table.is_scrolling())
    delegate = table.itemDelegate()
    assert isinstance(delegate, TimelineDelegate)
    return panel, model, table, delegate


def test_a_far_jump_shows_the_rows_it_drew_before_showing_them(qtbot: Any) -> None:
    """After a jump to a row off the screen, the row is on screen and the rows around it, with the time cursor's
    shade, are the pictures drawn before they were shown: the same as a new delegate draws them, nothing left to
    draw anew."""
    panel, model, table, delegate = _near_the_top(qtbot)
    drawn_on_screen: list[object] = []  # rows drawn straight on the view (their pictures made later)
    later = delegate.pictures.later
    delegate.pictures.later = lambda key, *args: (drawn_on_screen.append(key), later(key, *args))  # type: ignore[method-assign]
    target = model.index(COUNT // 2, 0)
    panel.set_current(target)
    model.set_cursor(COUNT // 2)
    assert not table.viewport().updatesEnabled()  # the old screen stays until the new rows are drawn
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert table.viewport().updatesEnabled()
    assert table.viewport().rect().contains(table.visualRect(target))
    shown = _painted(panel)
    assert drawn_on_screen == []  # every row on screen was copied from a picture drawn before
    table.setItemDelegate(TimelineDelegate(table))
    assert _difference(shown, _painted(panel)) <= BLENDING


def test_a_far_jump_draws_its_rows_in_turns_after_the_scroll(qtbot: Any) -> None:
    """The scroll's turn has the window's repaint of the new selection (the editor's new form): the new screen's
    rows are drawn into pictures from the next turn on, a band a turn, never in the scroll's."""
    from contextdeck.gui._slices import slices

    slices()  # (counting turns from now)
    panel, model, table, delegate = _near_the_top(qtbot)
    scrolled: list[int] = []  # the turn of the scroll to the new row
    drawn: list[int] = []  # the turn of each band drawn
    scroll_to, making_now = table.scrollTo, delegate.pictures.making_now

    def scrolling(*args: Any) -> None:
        if sys._getframe(1).f_code.co_name == "_scroll_now":
            scrolled.append(slices().turns)
        scroll_to(*args)

    def making() -> Any:
        if sys._getframe(1).f_code.co_name == "_draw_band":
            drawn.append(slices().turns)
        return making_now()

    table.scrollTo = scrolling  # type: ignore[method-assign]
    delegate.pictures.making_now = making  # type: ignore[method-assign]
    panel.set_current(model.index(COUNT // 2, 0))
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert len(scrolled) == 1
    assert len(drawn) >= 2  # a screen of bands
    assert min(drawn) > scrolled[0]
    assert len(set(drawn)) == len(drawn)  # a band a turn



def test_a_far_jump_draws_its_bands_in_turns_of_their_own(qtbot: Any) -> None:
    """The bands are slices of the window's turns: a view's slices due meanwhile take turns with them, never in
    the same turn (together they were a turn of a band and a slice, over a frame, at a million messages)."""
    from PySide6.QtCore import QObject

    from contextdeck.gui._slices import slices

    panel, model, table, delegate = _near_the_top(qtbot)
    drawn: list[int] = []  # the turn of each band drawn
    sliced: list[int] = []  # the turn of each of another job's slices

    class Job(QObject):
        def work(self) -> None:
            sliced.append(slices().turns)
            if len(sliced) < 20:
                slices().start(self.work)

    making_now = delegate.pictures.making_now

    def making() -> Any:
        if sys._getframe(1).f_code.co_name == "_draw_band":
            drawn.append(slices().turns)
        return making_now()

    delegate.pictures.making_now = making  # type: ignore[method-assign]
    job = Job(table)
    panel.set_current(model.index(COUNT // 2, 0))
    slices().start(job.work)
    qtbot.waitUntil(lambda: not table.is_scrolling() and len(sliced) == 20)
    assert len(drawn) >= 2
    assert not set(drawn) & set(sliced)



def test_a_shown_table_renders_its_viewport_once_before_any_band(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Qt's first render of the viewport into an image costs several milliseconds more than the next ones: a slice
    pays it once the table is shown, so the first band of the first far jump does not (it was 11-17 ms)."""
    from contextdeck.gui._slices import slices

    rendered: list[str] = []  # who rendered the viewport, in order
    original = TimelinePanel.__init__

    def made(self: TimelinePanel, *args: Any) -> None:
        original(self, *args)
        render = self.table.viewport().render

        def rendering(*what: Any) -> None:
            rendered.append(sys._getframe(1).f_code.co_name)
            render(*what)

        self.table.viewport().render = rendering  # type: ignore[method-assign]

    monkeypatch.setattr(TimelinePanel, "__init__", made)
    panel, model = _panel(qtbot, Context(_messages()))
    qtbot.waitUntil(lambda: not slices().pending)
    assert rendered == ["_warm"]
    panel.set_current(model.index(COUNT // 2, 0))
    qtbot.waitUntil(lambda: not panel.table.is_scrolling())
    assert rendered[0] == "_warm"
    assert rendered.count("_warm") == 1
    assert "_draw_band" in rendered[1:]


def _bands_of_a_far_jump(qtbot: Any, monkeypatch: pytest.MonkeyPatch, used_s: float) -> tuple[TimelinePanel, list[int]]:
    """A far jump's bands (their heights), with `used_s` of each band's turn used before it: the panel and the bands."""
    from contextdeck.gui import _slices

    panel, model, table, _delegate = _near_the_top(qtbot)
    monkeypatch.setattr(_slices.Slices, "turn_used", lambda _self: used_s)
    bands: list[int] = []
    render = table.viewport().render

    def rendered(image: QImage, *args: Any) -> None:
        bands.append(round(image.height() / image.devicePixelRatio()))
        render(image, *args)

    table.viewport().render = rendered  # type: ignore[method-assign]
    panel.set_current(model.index(COUNT // 2, 0))
    qtbot.waitUntil(lambda: not table.is_scrolling())
    return panel, bands


def test_a_band_holds_the_rows_the_rest_of_its_turn_has_room_for(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a turn that has used its share already (a repaint, a slice), a band is one row; in an idle one, the
    first band is one row too (no row measured yet), the next as many as the share holds at the cost measured."""
    from contextdeck.gui._timeline import BAND_TURN_S

    panel, bands = _bands_of_a_far_jump(qtbot, monkeypatch, BAND_TURN_S)
    row, height = panel.table.verticalHeader().defaultSectionSize(), panel.table.viewport().height()
    assert bands[:-1] == [row] * (len(bands) - 1)
    assert 0 < bands[-1] <= row
    assert sum(bands) == height
    panel, bands = _bands_of_a_far_jump(qtbot, monkeypatch, 0.0)
    assert bands[0] == row  # one row until a row is measured (`ROW_S`): a row of a big document is 3-4 ms under load
    assert sum(bands) == height


def test_each_far_jump_sizes_its_first_band_at_one_row(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A far jump back to rows drawn before (their pictures copied: a row costs next to nothing) does not size the
    next jump's first band of new rows: that band is one row again, as the first jump's was."""
    panel, bands = _bands_of_a_far_jump(qtbot, monkeypatch, 0.0)
    row, model, table = panel.table.verticalHeader().defaultSectionSize(), panel.model(), panel.table
    assert model is not None
    panel.set_current(model.index(5, 0))  # back to the rows drawn first: copies
    qtbot.waitUntil(lambda: not table.is_scrolling())
    bands.clear()
    panel.set_current(model.index(COUNT // 4, 0))  # rows never drawn
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert bands[0] == row
    assert sum(bands) == table.viewport().height()


def test_a_band_of_rows_kept_as_pictures_does_not_size_the_next_band_at_its_cost(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A band whose rows cost next to nothing (pictures kept: a moved row) sizes the next band at no less than half
    the cost it was sized at: a few rows, not the rest of the screen at the cost of a copy."""
    from contextdeck.gui import _slices, _timeline
    from contextdeck.gui._timeline import BAND_TURN_S, ROW_S

    panel, model, table, _delegate = _near_the_top(qtbot)
    monkeypatch.setattr(_slices.Slices, "turn_used", lambda _self: 0.0)
    clock, bands = [0.0], []
    monkeypatch.setattr(_timeline, "time", type("Clock", (), {"thread_time": staticmethod(lambda: clock[0])}))
    render, row = table.viewport().render, table.verticalHeader().defaultSectionSize()

    def rendered(image: QImage, *args: Any) -> None:
        rows = round(image.height() / image.devicePixelRatio()) // row
        clock[0] += rows * (ROW_S / 100 if not bands else ROW_S)  # the first band's row a copy, the others new
        bands.append(rows)
        render(image, *args)

    table.viewport().render = rendered  # type: ignore[method-assign]
    panel.set_current(model.index(COUNT // 2, 0))
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert bands[0] == 1
    assert bands[1] <= BAND_TURN_S / (ROW_S / 2) < table.viewport().height() // row - 1


@pytest.mark.parametrize("rows", [-COUNT // 4, COUNT // 4])
def test_a_move_that_carries_the_current_row_off_the_screen_draws_its_new_screen_in_bands(
        qtbot: Any, rows: int) -> None:
    """A drag-move (or its undo) whose row lands off the screen is a far jump: the screen it leaves is not painted
    again (the edit's own repaint painted every row of the new screen in one turn), the new one is drawn a band a
    turn and shown with the moved row current on it."""
    panel, model = _panel(qtbot, Context(_messages()))
    table, context = panel.table, model.context
    src = COUNT // 2
    panel.set_current(model.index(src, 0))
    qtbot.waitUntil(lambda: not table.is_scrolling())
    QApplication.processEvents()  # the repaint that shows the rows drawn, before the move
    delegate = table.itemDelegate()
    assert isinstance(delegate, TimelineDelegate)
    held_paints: list[int] = []  # rows painted while the screen is held, outside a band
    paint = delegate.paint

    def painting(*args: Any) -> None:
        frame, callers = sys._getframe(1), set()
        while frame is not None:
            callers.add(frame.f_code.co_name)
            frame = frame.f_back  # type: ignore[assignment]
        if not table.viewport().updatesEnabled() and "_draw_band" not in callers:
            held_paints.append(args[2].row())
        paint(*args)

    delegate.paint = painting  # type: ignore[method-assign]
    moved = context[src]
    context.move(src, src + rows)
    assert not table.viewport().updatesEnabled()  # the old screen stays until the new rows are drawn
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert held_paints == []
    assert table.viewport().updatesEnabled()
    assert panel.current_index().row() == src + rows
    assert context[src + rows] is moved
    assert table.viewport().rect().contains(table.visualRect(model.index(src + rows, 0)))


def test_two_jumps_in_one_turn_scroll_as_one_after_the_other(qtbot: Any) -> None:
    """A second selection before the first one's scroll ran starts from where the first one's scroll would have
    left the table: a jump up to row 200 puts it at the top, and row 203 right after is then on screen already."""
    panel, model = _panel(qtbot, Context(_messages()))
    panel.set_current(model.index(COUNT - 1, 0))
    qtbot.waitUntil(lambda: not panel.table.is_scrolling())
    assert _top_row(panel) > COUNT // 2
    panel.set_current(model.index(200, 0))
    panel.set_current(model.index(203, 0))
    qtbot.waitUntil(lambda: not panel.table.is_scrolling())
    assert _top_row(panel) == 200
    assert panel.current_index().row() == 203


def test_keys_that_move_far_scroll_the_table_to_the_new_row(qtbot: Any) -> None:
    """Ctrl+End in the table (Qt's own move, not ours) selects the last row, and the table scrolls to it."""
    panel, model = _panel(qtbot, Context(_messages()))
    table = panel.table
    panel.set_current(model.index(0, 0))
    qtbot.waitUntil(lambda: not table.is_scrolling())
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    last = model.index(COUNT - 1, 0)
    assert panel.current_index().row() == COUNT - 1
    qtbot.waitUntil(lambda: not table.is_scrolling())
    assert table.viewport().rect().contains(table.visualRect(last))


def _state_rows(model: StateModel) -> list[tuple[Any, ...]]:
    return [tuple(model.index(row, column).data() for column in range(3)) for row in range(model.rowCount())]


def test_a_state_of_other_identities_is_made_aside_and_shown_whole_in_a_later_part(qtbot: Any) -> None:
    """Going back to where fewer instances exist (another set of identities): the first part leaves the model
    showing the previous state whole (the new rows are made aside), the last shows the new one, as at once."""
    context = Context([{"type": "state", "_instance": f"i{n}", "data": {"v": n}} for n in range(8)])
    source = CursorState(context)
    model = StateModel()
    model.set_state(None, source.at(8), source, 8)
    before = _state_rows(model)
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    parts = model.show_in_parts(2, source.at(3), source, 3)
    next(parts)
    assert _state_rows(model) == before
    assert not resets
    assert list(parts) == []
    assert resets == [True]
    once = StateModel()
    once.set_state(2, source.at(3), source, 3)
    assert _state_rows(model) == _state_rows(once)
    assert len(_state_rows(model)) == 3
    assert QModelIndex() == model.index(0, 0).parent()


def test_the_first_render_s_pending_events_are_sent_a_few_widgets_a_slice(qtbot: Any, open_window: Any) -> None:
    """Qt's first render of the viewport sends every widget of the window never shown (the hidden docks', the
    menus') the move and resize events it keeps pending: hundreds of widgets, 10-16 ms in one slice at a million
    messages. The table's warming sends them first, `SETTLED_A_SLICE` widgets a slice, as Qt does; its render of
    the viewport then has at most those of a few widgets made meanwhile to send."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QWidget

    from contextdeck.gui import _timeline
    from contextdeck.gui._slices import slices

    counted = [0]  # move and resize events sent so far
    sent: list[int] = []  # by each slice of the warming
    in_render: list[int] = []  # by its render of the viewport

    class Count(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() in (QEvent.Type.Move, QEvent.Type.Resize):
                counted[0] += 1
            return False

    warm = _timeline.TimelineTable._warm

    def warming(table: Any) -> None:
        viewport, before = table.viewport(), counted[0]
        render = viewport.render

        def rendering(*what: Any) -> None:
            began = counted[0]
            render(*what)
            in_render.append(counted[0] - began)

        viewport.render = rendering
        renders = len(in_render)
        try:
            warm(table)
        finally:
            del viewport.render
        # the slice's own settling; the render's events (when the last widgets were settled in it) count apart
        sent.append(counted[0] - before - sum(in_render[renders:]))

    counter = Count()
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(counter)
    try:
        _timeline.TimelineTable._warm = warming  # type: ignore[method-assign]
        window = open_window(None)
        qtbot.waitUntil(lambda: bool(in_render) and not slices().pending, timeout=10_000)
    finally:
        _timeline.TimelineTable._warm = warm  # type: ignore[method-assign]
        app.removeEventFilter(counter)
    assert len(in_render) == 1
    assert in_render[0] <= 2 * _timeline.SETTLED_A_SLICE
    assert len(sent) > 3
    assert max(sent) <= 2 * _timeline.SETTLED_A_SLICE
    assert not [widget for widget in window.findChildren(QWidget) if _timeline._unsettled(widget)]
