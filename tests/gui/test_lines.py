"""The read-only text view that lays out only the lines in sight (the LLM view's Messages and Schema tabs)."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QFont, QGuiApplication, QWheelEvent
from PySide6.QtWidgets import QApplication

from contextdeck.gui import _lines
from contextdeck.gui._lines import LinesView, line_starts, role_style, searched

LINES = "\n".join(f"line {n} of the text" for n in range(10_000)) + "\n"


def shown(qtbot: Any, text: str = LINES, size: tuple[int, int] = (420, 300)) -> LinesView:
    view = LinesView("Nothing here yet.")
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    view.show_text(text)
    qtbot.wait(20)
    return view


def at(view: LinesView, position: int) -> QPoint:
    """The middle of the character at `position` on screen."""
    rect = view.rect_at(position)
    assert not rect.isEmpty()
    return QPoint(rect.left() + 1, rect.center().y())


def test_line_starts_are_where_each_line_begins() -> None:
    assert list(line_starts("ab\ncd\n\ne")) == [0, 3, 6, 7]
    assert list(line_starts("")) == [0]


def test_only_the_lines_in_sight_are_laid_out(qtbot: Any) -> None:
    """Ten thousand lines, a few dozen in sight: only those (and the last screen's, for the scroll bar's
    range) are laid out; scrolling lays out the new ones; the text is all there to read and copy."""
    view = shown(qtbot)
    assert view.toPlainText() == LINES
    assert view.line_count() == 10_001  # the last, after the final newline, is empty
    assert 10 < view.laid_out() < 100
    view.verticalScrollBar().setValue(5_000)
    qtbot.wait(20)
    assert view.position_at(QPoint(0, 10)) == LINES.index("line 5000 ")
    assert view.laid_out() < 150


def test_a_drag_selects_and_copy_puts_the_selection_on_the_clipboard(qtbot: Any) -> None:
    view = shown(qtbot)
    start, end = LINES.index("line 2 of"), LINES.index("of the text", LINES.index("line 4 of"))
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=at(view, start))
    qtbot.mouseMove(view.viewport(), at(view, end))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=at(view, end))
    assert view.selected_text() == LINES[start:end]
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "line 2 of the text\nline 3 of the text\nline 4 "
    further = LINES.index("line 6 of")  # Shift+click takes the selection on from the same anchor
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier,
                     at(view, further))
    assert view.selection() == (start, further)
    inside = LINES.index("line 5 of")  # a click on the selection (not dragged out): a click there
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at(view, inside))
    assert view.selection() == (inside, inside)


def test_a_double_click_selects_a_word_and_a_triple_click_the_line(qtbot: Any) -> None:
    view = shown(qtbot)
    clicked: list[int] = []
    view.doubleClicked.connect(clicked.append)
    word = LINES.index("text", LINES.index("line 3 of"))
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at(view, word + 1))
    assert view.selected_text() == "text"
    assert clicked == [word + 1]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at(view, word + 1))  # the third click
    assert view.selected_text() == "line 3 of the text\n"


def test_select_all_and_copy_take_the_whole_text_keys_and_menu(qtbot: Any) -> None:
    view = shown(qtbot)
    menu = view.menu()
    copy, every = (action for action in menu.actions() if not action.isSeparator())
    assert (copy.text(), copy.isEnabled(), every.text(), every.isEnabled()) == ("&Copy", False, "Select All", True)
    every.trigger()
    assert view.selected_text() == LINES
    assert view.menu().actions()[0].isEnabled()
    view.select(0, 0)
    qtbot.keyClick(view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert view.selection() == (0, len(LINES))
    view.menu().actions()[0].trigger()  # Copy
    assert QGuiApplication.clipboard().text() == LINES


def test_the_keys_scroll_a_line_a_page_and_to_either_end(qtbot: Any) -> None:
    view = shown(qtbot)
    bar = view.verticalScrollBar()
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert bar.value() == 1
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert bar.value() == 0
    qtbot.keyClick(view, Qt.Key.Key_PageDown)
    page = bar.value()
    assert 5 < page < 40
    bottom = view.position_at(QPoint(10, view.viewport().height() - 8))
    qtbot.keyClick(view, Qt.Key.Key_PageUp)
    assert bar.value() == 0
    assert view.position_at(QPoint(10, 10)) < bottom
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert view.position_at(QPoint(10, view.viewport().height() - 2)) == len(LINES)  # the last line in sight
    assert not view.rect_at(LINES.index("line 9999 ")).isEmpty()
    qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert bar.value() == 0
    qtbot.keyClick(view, Qt.Key.Key_Space)  # as a read-only text box: Space a page, Home and End the ends
    assert bar.value() == page
    qtbot.keyClick(view, Qt.Key.Key_Space, Qt.KeyboardModifier.ShiftModifier)
    assert bar.value() == 0
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert bar.value() == bar.maximum()
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert bar.value() == 0


def test_ctrl_and_the_wheel_zoom(qtbot: Any) -> None:
    view = shown(qtbot)
    size, lines = view.font().pointSizeF(), len(view._in_sight())
    wheel(view, 240, Qt.KeyboardModifier.ControlModifier)
    assert view.font().pointSizeF() == size + 2
    assert len(view._in_sight()) < lines
    assert view.verticalScrollBar().value() == 0  # zoomed, not scrolled
    wheel(view, -240, Qt.KeyboardModifier.ControlModifier)
    assert view.font().pointSizeF() == size


def test_long_lines_wrap_at_the_width_and_one_taller_than_the_view_scrolls_a_row_at_a_time(qtbot: Any) -> None:
    words = " ".join(f"word{n}" for n in range(3_000))  # far taller than the view once wrapped
    text = f"first\n{words}\nlast\n"
    view = shown(qtbot, text, (300, 200))
    assert view.rect_at(text.index("word1 ")).top() < view.rect_at(text.index("word40 ")).top()  # wrapped
    end = text.index("word2999")
    assert view.rect_at(end).isEmpty()
    qtbot.keyClick(view, Qt.Key.Key_Down)  # the long line at the top, from its first row
    assert view.verticalScrollBar().value() == 1
    for _ in range(2_000):
        if not view.rect_at(end).isEmpty():
            break
        qtbot.keyClick(view, Qt.Key.Key_Down)
    assert not view.rect_at(end).isEmpty()  # each of its rows came into sight
    assert view.verticalScrollBar().value() == 1
    first = text.index("word0 ")
    for _ in range(2_000):  # the wheel goes back up a row at a time, through the same line
        if not view.rect_at(first).isEmpty():
            break
        wheel(view, 120)
    assert not view.rect_at(first).isEmpty()
    assert view.verticalScrollBar().value() <= 1
    wheel(view, -120)
    assert view.rect_at(first).isEmpty()  # three rows down


def in_sight(view: LinesView, position: int) -> bool:
    """Whether the whole row of the character at `position` is in the viewport."""
    rect = view.rect_at(position)
    return not rect.isEmpty() and view.viewport().rect().contains(rect)


def test_find_and_ctrl_end_show_the_row_within_a_line_taller_than_the_view(qtbot: Any) -> None:
    """A place found within a line taller than the view is scrolled to (its row, not the line's top), and Ctrl+End
    shows the very end of a last line taller than the view, as scrolling a row at a time does; Ctrl+Home its start."""
    words = " ".join(f"w{n}" for n in range(1, 3_001)) + " END"
    text = f"--- system ---\nShort system.\n\n--- user ---\n{words}"  # as the Messages text: no final newline
    view = shown(qtbot, text, (300, 200))
    assert view.find_text("w2500 ")
    assert in_sight(view, text.index("w2500 "))
    assert view.find_text("w12 ")  # back up the same line, to a row above the top
    assert in_sight(view, text.index("w12 "))
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert in_sight(view, len(text) - 1)
    qtbot.keyClick(view, Qt.Key.Key_Down)  # the end: no further
    assert in_sight(view, len(text) - 1)
    qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert in_sight(view, 0)
    view.show_text(words)  # the tall line first: Home from within it
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert in_sight(view, len(words) - 1)
    qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert in_sight(view, 0)


def wheel(view: LinesView, delta: int, keys: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    centre = QPointF(view.viewport().rect().center())
    event = QWheelEvent(centre, view.viewport().mapToGlobal(centre), QPoint(), QPoint(0, delta),
                        Qt.MouseButton.NoButton, keys, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def test_an_empty_view_shows_its_placeholder(qtbot: Any) -> None:
    view = shown(qtbot, "")
    image = view.viewport().grab().toImage()
    background = image.pixelColor(image.width() - 2, image.height() - 2)
    assert any(image.pixelColor(x, 10) != background for x in range(4, 120))  # the placeholder's text
    view.show_text("now some text")
    assert view.toPlainText() == "now some text"


def test_role_lines_are_bold_in_their_colour_and_headings_bold(qtbot: Any) -> None:
    style = role_style({"user": "#2563eb"})
    user, other, heading = style("--- user ---"), style("--- robot ---"), style("## Data: ¶state")
    assert None not in (user, other, heading)
    assert user.fontWeight() == other.fontWeight() == heading.fontWeight() == QFont.Weight.Bold
    assert user.foreground().color().name() == "#2563eb"
    assert other.foreground().color().name() == "#6b7280"
    assert style("--- user --- said") is None
    assert style("plain") is None


def test_find_selects_the_next_place_round_past_the_end_and_the_one_before(qtbot: Any) -> None:
    view = shown(qtbot)
    assert view.find_text("LINE 9998 ")  # not minding case
    far = LINES.index("line 9998 ")
    assert view.selection() == (far, far + len("line 9998 "))
    assert not view.rect_at(far).isEmpty()  # scrolled into sight
    assert view.find_text("line 999")  # the next, after the selection
    assert view.selection()[0] == LINES.index("line 9999 ")
    assert view.find_text("line 999")  # round past the end: from the start
    assert view.selection()[0] == LINES.index("line 999 ")
    assert view.find_text("line 999", backward=True)  # before it: round past the start
    assert view.selection()[0] == LINES.index("line 9999 ")
    assert view.find_text("line 999", backward=True)
    assert view.selection()[0] == LINES.index("line 9998 ")
    before = view.selection()
    assert not view.find_text("no such words")
    assert view.selection() == before



def test_a_screen_reader_is_told_the_selection_or_else_the_lines_in_sight(qtbot: Any) -> None:
    """The view is read-only, multi-line text to a screen reader; its value is the selection, or else the lines
    in sight (as they scroll), or the placeholder while empty."""
    from PySide6.QtGui import QAccessible

    view = shown(qtbot)
    reader = QAccessible.queryAccessibleInterface(view)
    assert reader.role() == QAccessible.Role.EditableText
    assert reader.state().readOnly
    assert reader.state().multiLine
    in_sight = reader.text(QAccessible.Text.Value).split("\n")
    assert in_sight[0] == "line 0 of the text"
    assert 5 < len(in_sight) < 100
    view.verticalScrollBar().setValue(500)
    assert reader.text(QAccessible.Text.Value).startswith("line 500 of the text\nline 501 of the text")
    start = LINES.index("line 7 of")
    view.select(start, start + len("line 7"))
    assert reader.text(QAccessible.Text.Value) == "line 7"
    view.select_all()  # not ten megabytes: the start, and how much more
    spoken = reader.text(QAccessible.Text.Value)
    assert spoken.startswith("line 0 of the text")
    assert spoken.endswith(f"… and {len(LINES) - 4_000:,} more characters selected")
    view.show_text("")
    assert reader.text(QAccessible.Text.Value) == "Nothing here yet."


def test_the_view_with_the_keys_is_framed_in_the_highlight_colour(qtbot: Any) -> None:
    """A read-only text has no caret: while the view has the focus, a frame in the highlight colour says so."""
    from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

    window = QWidget()
    qtbot.addWidget(window)
    other = QLineEdit()
    view = LinesView("Nothing here yet.")
    layout = QVBoxLayout(window)
    layout.addWidget(other)
    layout.addWidget(view)
    window.resize(420, 300)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    view.show_text(LINES)
    highlight = view.palette().color(view.palette().ColorRole.Highlight).rgb()

    def corner() -> int:
        return view.viewport().grab().toImage().pixel(0, view.viewport().height() // 2)

    other.setFocus()
    qtbot.waitUntil(other.hasFocus)
    assert corner() != highlight
    qtbot.keyClick(other, Qt.Key.Key_Tab)
    qtbot.waitUntil(view.hasFocus)
    assert corner() == highlight
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: not view.hasFocus())
    assert corner() != highlight


class _Counts(str):
    """A fold that notes each count over the whole of it."""

    counts: ClassVar[list[str]] = []

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        if start is None:
            _Counts.counts.append(sub)
        return super().count(sub, start, end)


def noted_folds(monkeypatch: Any) -> list[str]:
    """Each text the view folds to search it (`searched`), noted; each count over a fold too (`_Counts`)."""
    folds: list[str] = []

    def folded(text: str) -> str:
        folds.append(text)
        return _Counts(searched(text))

    monkeypatch.setattr(_lines, "searched", folded)
    _Counts.counts = []
    return folds


def test_find_folds_the_text_once_and_counts_its_places_once_a_needle(qtbot: Any, monkeypatch: Any) -> None:
    """Each key typed in the find bar folded the whole text's case and counted the needle's places twice over it
    (a multi-megabyte request: tens of milliseconds a key). The text is folded at its first find, the places of a
    needle counted once, and which place the one found is counted on from the last: "N of M" as before."""
    view = shown(qtbot)
    folds = noted_folds(monkeypatch)
    view.show_text(LINES + "the end\n")  # (another text: the same one is not shown again)
    for typed in ("l", "li", "lin", "line 999"):
        assert view.find_text(typed, again=False)
    assert view.found == (1, LINES.count("line 999"))
    for which in range(2, 5):
        assert view.find_text("line 999")
        assert view.found == (which, LINES.count("line 999"))
    assert view.selection()[0] == LINES.index("line 9992")
    assert view.find_text("line 999", backward=True)
    assert view.found == (3, LINES.count("line 999"))
    assert folds == [LINES + "the end\n"]
    assert _Counts.counts == ["l", "li", "lin", "line 999"]


def test_find_searches_the_fold_given_with_the_text(qtbot: Any, monkeypatch: Any) -> None:
    """A text shown with what Find searches in it (`searched`, made with the text on the LLM view's worker) is not
    folded again at the first key on the GUI thread."""
    view = shown(qtbot)
    text = LINES + "The End\n"
    folded = searched(text)
    folds = noted_folds(monkeypatch)
    view.show_text(text, searched=folded)
    assert view.find_text("the end")
    assert view.selection()[0] == len(LINES)
    assert folds == []


def test_a_long_text_is_folded_as_a_whole_is() -> None:
    """`searched` folds a long text a part at a time (`FOLD_CHUNK`); what Find searches is its whole fold, and the
    text itself when a fold past the first part is longer (ß), as for a text folded at once."""
    from contextdeck.gui._lines import FOLD_CHUNK

    text = ("Éa" * FOLD_CHUNK) + "ΣTRASSE"
    assert searched(text) == text.casefold()
    longer = "a" * (FOLD_CHUNK + 5) + "Straße"
    assert searched(longer) is longer


class _Scans(str):
    """A text that notes how many characters each search reads of it."""

    read: ClassVar[list[int]] = []

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        _Scans.read.append(len(self[start:end]))
        return super().find(sub, start, end)

    def rfind(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        _Scans.read.append(len(self[start:end]))
        return super().rfind(sub, start, end)


def test_a_needle_found_nowhere_is_one_scan_of_the_text(qtbot: Any) -> None:
    """Round past either end, Find reads only what its first search did not: a needle found nowhere is one scan."""
    view = shown(qtbot)
    view.show_text(LINES + "the end\n", searched=_Scans(LINES + "the end\n"))
    middle = len(LINES) // 2
    for backward in (False, True):
        for again in (True, False):
            view.select(middle, middle + 4)
            _Scans.read = []
            assert not view.find_text("kettle", backward=backward, again=again)
            assert sum(_Scans.read) <= len(LINES) + len("the end\n") + len("kettle")
    view.select(middle, middle)
    assert view.find_text("line 2 of", again=False)  # round from the top, as before
    assert view.selection()[0] == LINES.index("line 2 of")
    assert view.find_text("the end", backward=True)  # round from the end
    assert view.selection()[0] == len(LINES)
