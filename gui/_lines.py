"""A read-only text view that lays out only the lines in sight (`LinesView`), for texts of megabytes.

A QPlainTextEdit holds its text as a QTextDocument: the LLM view's Messages text is ten megabytes and a million
lines at a million messages, and putting it in costs the GUI thread far more than a frame, however it is cut
up. This view keeps the text as one string and where each line starts (`line_starts`, made where the text was
made: the worker, for a big request), and lays out, wrapped at its width, only the lines it paints. It does what
the read-only QPlainTextEdit did: selection with the mouse (drag, scrolling on past an edge, Shift+click, a
double-click selects a word and a triple-click a line; X11's primary selection gets it), the selection dragged out
as text, Copy and Select All (keys and context menu), scrolling by wheel, scroll bar and keys (Up, Down, Page Up,
Page Down, Space, Shift+Space, Home, End; row by row through a line taller than the view), Ctrl+wheel to zoom, a
placeholder while empty, and lines in bold or a colour (`styles`); and it finds (`find_text`, the `FindBar`).
A screen reader is told it is read-only text, whose value is the selection or else the lines in sight
(`_Accessible`).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import cache

from PySide6.QtCore import SIGNAL, QEvent, QMimeData, QObject, QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAccessible,
    QAccessibleInterface,
    QAccessibleValueChangeEvent,
    QClipboard,
    QColor,
    QContextMenuEvent,
    QDrag,
    QFocusEvent,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextCharFormat,
    QTextLayout,
    QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAccessibleWidget,
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QWidget,
)

MARGIN = 4  # pixels around the text, as a QPlainTextEdit's document margin
LAYOUTS_KEPT = 4_000  # laid-out lines kept between paints (cleared past it, and on any change of width or text)
MIN_POINTS, MAX_POINTS = 4.0, 72.0  # the font's size, zoomed with Ctrl and the wheel
AUTOSCROLL_MS = 50  # while a drag selects beyond the top or bottom edge, a line each this often
SPOKEN = 4_000  # characters of a selection a screen reader is given (all ten megabytes would hold it)
# Characters folded by one call (`searched`). A call into C holds the interpreter lock to its end, and a thread that
# waits for it (the window's) wakes every switch interval to ask: folding ten megabytes in one call would hold the
# lock for most of a second, the window's CPU spent asking all the while.
FOLD_CHUNK = 1 << 16

Style = Callable[[str], QTextCharFormat | None]  # a line's format for the whole line (None: plain)

_WORD = re.compile(r"\w+")


def line_starts(text: str) -> array[int]:
    """Where each line of `text` starts (the first at 0; a last line after a final newline, empty)."""
    starts = array("q", [0])
    starts.extend(match.end() for match in re.finditer("\n", text))
    return starts


def searched(text: str) -> str:
    """What `LinesView.find_text` searches in `text`: its case fold, or the text itself when a letter's fold is
    longer (searched as written, the places being those of the text). Made with the text where that is made off the
    GUI thread (`show_text(..., searched=)`): a fold of megabytes, a `FOLD_CHUNK` a call (a letter's fold does not
    depend on its neighbours)."""
    folded = "".join([text[start:start + FOLD_CHUNK].casefold() for start in range(0, len(text), FOLD_CHUNK)])
    return folded if len(folded) == len(text) else text


class _Accessible(QAccessibleWidget):
    """A LinesView to a screen reader: read-only, multi-line text whose value is `spoken_text`. (Qt's text
    interface, which lets a reader walk the text by character, cannot be given from Python: `interface_cast`
    is C++ only.)"""

    def __init__(self, view: LinesView) -> None:
        super().__init__(view, QAccessible.Role.EditableText)
        self.view = view

    def text(self, which: QAccessible.Text) -> str:
        if which == QAccessible.Text.Value:
            return self.view.spoken_text()
        return super().text(which)

    def state(self) -> QAccessible.State:
        state = super().state()
        state.readOnly = True
        state.multiLine = True
        return state


def _accessible(_class_name: str, widget: QObject) -> QAccessibleInterface | None:
    return _Accessible(widget) if isinstance(widget, LinesView) else None


@cache
def _install_accessible() -> None:
    """Once per process: Qt asks the factory for every widget's interface."""
    QAccessible.installFactory(_accessible)


def _row_top(layout: QTextLayout, row: int) -> float:
    """The y of a line's `row`th row (its last at most) in its `layout`."""
    row = min(row, layout.lineCount() - 1)
    return layout.lineAt(row).y() if row > 0 else 0.0


class LinesView(QAbstractScrollArea):
    """Read-only text, laid out a line at a time as it comes into sight. The vertical scroll bar counts lines:
    its value is the line at the top (`_row`: the wrapped rows of that line scrolled past, for a line taller
    than the view). Positions are offsets into the text, as in a QPlainTextEdit's plain text."""

    doubleClicked = Signal(int)  # the position double-clicked
    activated = Signal(int)  # a double click's position, or Enter's: the selection's start, else the top line's
    selectionChanged = Signal()
    findRequested = Signal()  # Ctrl+F (the find key) here: taken before the window's own use of it
    textShown = Signal()  # another text (`show_text`)

    def __init__(self, placeholder: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placeholder = placeholder
        self.styles: Style = lambda line: None
        self.full_text = ""
        self.found = (0, 0)  # the place `find_text` selected last: which of how many (the find bar says it)
        # What `find_text` searches (`searched`: given with the text, else made at its first find, not per key),
        # how many places the last needle has in it, and the place last found (needle, where, which).
        self._searched: str | None = None
        self._counted = ("", 0)
        self._last = ("", 0, 0)
        self._starts: Sequence[int] = array("q", [0])
        self._layouts: dict[int, QTextLayout] = {}
        self._row = 0
        self._wheeled = 0  # the wheel's turn not yet scrolled (less than a notch)
        self._anchor = self._position = 0  # the selection: from the anchor to the position (equal: none)
        self._clicks: tuple[int, float] = (0, 0.0)  # clicks in a row at one place, and when the last was
        self._dragging = False
        self._pressed_on: int | None = None  # a press on the selection, that may start dragging it out
        self._drag_at = QPoint()
        self._autoscroll = QTimer(self, interval=AUTOSCROLL_MS)
        self._autoscroll.timeout.connect(self._drag_scroll)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setCursor(Qt.CursorShape.IBeamCursor)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Base)
        self.verticalScrollBar().setSingleStep(1)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.selectionChanged.connect(self._told_readers)
        _install_accessible()

    # -- the text --------------------------------------------------------------------------------------

    def show_text(self, text: str, starts: Sequence[int] | None = None, searched: str | None = None) -> None:
        """Show `text` (`starts`: its `line_starts`, `searched`: its `searched`, if made already). The line at the
        top stays where it was, as far as the new text has it; the selection goes."""
        if text == self.full_text:
            return
        self.full_text = text
        self._searched, self._counted, self._last = searched, ("", 0), ("", 0, 0)
        self._starts = starts if starts is not None else line_starts(text)
        self._anchor = self._position = 0
        self._relayout()
        self.selectionChanged.emit()
        self.textShown.emit()

    def toPlainText(self) -> str:  # (the QPlainTextEdit's name: what the user can copy)
        return self.full_text

    def line_count(self) -> int:
        return len(self._starts)

    def laid_out(self) -> int:
        """How many lines are laid out (kept from the last paints)."""
        return len(self._layouts)

    def _line(self, index: int) -> str:
        start = self._starts[index]
        end = self._starts[index + 1] - 1 if index + 1 < len(self._starts) else len(self.full_text)
        return self.full_text[start:end]

    def _line_of(self, position: int) -> int:
        return max(bisect_right(self._starts, position) - 1, 0)

    # -- layout ----------------------------------------------------------------------------------------

    def _width(self) -> float:
        return max(self.viewport().width() - 2 * MARGIN, 10)

    def _layout(self, index: int) -> QTextLayout:
        layout = self._layouts.get(index)
        if layout is None:
            if len(self._layouts) >= LAYOUTS_KEPT:
                self._layouts.clear()
            text = self._line(index)
            layout = QTextLayout(text, self.font())
            option = QTextOption()
            option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
            layout.setTextOption(option)
            style = self.styles(text)
            if style is not None and text:
                whole = QTextLayout.FormatRange()
                whole.start, whole.length, whole.format = 0, len(text), style
                layout.setFormats([whole])
            layout.beginLayout()
            y = 0.0
            while True:
                row = layout.createLine()
                if not row.isValid():
                    break
                row.setLineWidth(self._width())
                row.setPosition(QPointF(0, y))
                y += row.height()
            layout.endLayout()
            self._layouts[index] = layout
        return layout

    def _height(self, index: int) -> float:
        return self._layout(index).boundingRect().height()

    def _skipped(self, index: int) -> float:
        """How much of the top line is scrolled past (its first `_row` rows)."""
        return _row_top(self._layout(index), self._row)

    def _in_sight(self) -> list[tuple[int, float]]:
        """The lines painted now, each with the y of its top in the viewport."""
        if not self.full_text:
            return []
        shown: list[tuple[int, float]] = []
        index = self.verticalScrollBar().value()
        y = MARGIN - self._skipped(index)
        bottom = self.viewport().height()
        while index < len(self._starts) and y < bottom:
            shown.append((index, y))
            y += self._height(index)
            index += 1
        return shown

    def _relayout(self) -> None:
        """After a change of text or width: the scroll bar's range, so that the last line can be at the bottom."""
        self._layouts.clear()
        bar = self.verticalScrollBar()
        room = self.viewport().height() - 2 * MARGIN
        last = len(self._starts) - 1 if self.full_text else 0
        top, used = last, 0.0
        while top >= 0 and used + self._height(top) <= room:
            used += self._height(top)
            top -= 1
        highest = min(top + 1, last) if self.full_text else 0
        bar.setRange(0, max(highest, 0))
        bar.setPageStep(max(last - highest, 1))
        self._row = 0
        self.viewport().update()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.viewport().update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.viewport().update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width() or event.oldSize().height() != event.size().height():
            self._relayout()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._relayout()

    def _scrolled(self, _value: int) -> None:
        self._row = 0
        self.viewport().update()
        self._told_readers()

    def spoken_text(self) -> str:
        """What a screen reader reads as the view's value: the selection, or else the lines in sight (or the
        placeholder while empty)."""
        if not self.full_text:
            return self.placeholder
        start, end = self.selection()
        if end - start > SPOKEN:
            return f"{self.full_text[start:start + SPOKEN]}… and {end - start - SPOKEN:,} more characters selected"
        if start < end:
            return self.full_text[start:end]
        return "\n".join(self._line(index) for index, _y in self._in_sight())

    def _told_readers(self) -> None:
        if QAccessible.isActive():  # (no reader listening: nothing to compose)
            QAccessible.updateAccessibility(QAccessibleValueChangeEvent(self, self.spoken_text()))

    # -- painting --------------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self.viewport())
        palette = self.palette()
        if self.hasFocus():  # a read-only text has no caret: the frame says where the keys go
            painter.setPen(palette.color(QPalette.ColorRole.Highlight))
            painter.drawRect(self.viewport().rect().adjusted(0, 0, -1, -1))
        if not self.full_text:
            if self.placeholder:
                painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
                area = QRectF(self.viewport().rect()).adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN)
                painter.drawText(area, Qt.TextFlag.TextWordWrap, self.placeholder)
            return
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        start, end = sorted((self._anchor, self._position))
        chosen = QTextCharFormat()
        chosen.setBackground(palette.brush(QPalette.ColorRole.Highlight))
        chosen.setForeground(palette.brush(QPalette.ColorRole.HighlightedText))
        painted = event.rect()
        for index, y in self._in_sight():
            layout = self._layout(index)
            if y + layout.boundingRect().height() < painted.top() or y > painted.bottom():
                continue
            selections = []
            line_start = self._starts[index]
            line_end = line_start + len(layout.text())
            if start < end and start <= line_end and end > line_start:
                part = QTextLayout.FormatRange()
                part.start = max(start - line_start, 0)
                part.length = min(end, line_end + 1) - line_start - part.start  # (+1: the newline, as a space)
                part.format = chosen
                selections.append(part)
            if selections and end > line_end and layout.lineCount():  # the newline chosen: to the right edge
                last = layout.lineAt(layout.lineCount() - 1)
                painter.fillRect(QRectF(MARGIN + last.naturalTextWidth(), y + last.y(),
                                        self._width() - last.naturalTextWidth(), last.height()),
                                 palette.brush(QPalette.ColorRole.Highlight))
            layout.draw(painter, QPointF(MARGIN, y), selections)

    # -- positions -------------------------------------------------------------------------------------

    def position_at(self, point: QPoint | QPointF) -> int:
        """The position of the character boundary nearest `point` (viewport coordinates); above the lines in
        sight, the first of them; below, the end of the last."""
        shown = self._in_sight()
        if not shown:
            return 0
        x, y = point.x() - MARGIN, point.y()
        if y < shown[0][1]:
            return self._starts[shown[0][0]]
        for index, top in shown:
            layout = self._layout(index)
            if y < top + layout.boundingRect().height():
                for row_index in range(layout.lineCount()):
                    row = layout.lineAt(row_index)
                    if y < top + row.y() + row.height() or row_index == layout.lineCount() - 1:
                        return self._starts[index] + row.xToCursor(x)
        index = shown[-1][0]
        return self._starts[index] + len(self._layout(index).text())

    def rect_at(self, position: int) -> QRect:
        """Where the character at `position` is painted (viewport coordinates; empty when out of sight)."""
        index = self._line_of(position)
        for shown, top in self._in_sight():
            if shown == index:
                layout = self._layout(index)
                column = position - self._starts[index]
                row = layout.lineForTextPosition(column)
                if not row.isValid():
                    break
                found: tuple[float, int] = row.cursorToX(column)  # type: ignore[assignment]  # (x, the position)
                x = found[0]
                width = max(self.fontMetrics().horizontalAdvance("M"), 1)
                rect = QRect(int(MARGIN + x), int(top + row.y()), width, int(row.height()))
                return rect if self.viewport().rect().contains(rect.center()) else QRect()
        return QRect()

    def scroll_to(self, position: int) -> None:
        """Bring the row of `position` into sight, unless the whole row is in sight already: its line at the top or,
        within a line taller than the view, the row at the top (as far as scrolling a row at a time goes)."""
        rect = self.rect_at(position)
        if not rect.isEmpty() and rect.top() >= 0 and rect.bottom() < self.viewport().height():
            return
        index = self._line_of(position)
        self._scroll(index, self._layout(index).lineForTextPosition(position - self._starts[index]).lineNumber())

    # -- selection -------------------------------------------------------------------------------------

    def selection(self) -> tuple[int, int]:
        """The selected range, start before end (equal: nothing selected)."""
        start, end = sorted((self._anchor, self._position))
        return start, end

    def selected_text(self) -> str:
        start, end = self.selection()
        return self.full_text[start:end]

    def select(self, anchor: int, position: int) -> None:
        size = len(self.full_text)
        self._anchor, self._position = min(max(anchor, 0), size), min(max(position, 0), size)
        self.viewport().update()
        self.selectionChanged.emit()

    def select_all(self) -> None:
        self.select(0, len(self.full_text))

    def copy(self) -> None:
        text = self.selected_text()
        clipboard = QGuiApplication.clipboard()
        if text and clipboard is not None:
            clipboard.setText(text)

    def find_text(self, needle: str, *, backward: bool = False, again: bool = True) -> bool:
        """Select the next place `needle` is (case-insensitive), after the selection (`again`; else from its start,
        as a search typed further), or before it (`backward`), round past either end; scrolled into sight.
        False (the selection kept) when the text has it nowhere."""
        if not needle:
            return False
        if self._searched is None:
            self._searched = searched(self.full_text)
        text = self._searched
        wanted = needle if text is self.full_text else needle.casefold()
        start, end = self.selection()
        # Round past the end, the second search reads only what the first did not: a needle found nowhere is one
        # scan of the text.
        if backward:  # the last place that begins before the selection, else the last one at or after its start
            found = text.rfind(wanted, 0, start + len(wanted) - 1)
            found = found if found >= 0 else text.rfind(wanted, start)
        else:
            begin = end if again else start
            found = text.find(wanted, begin)
            found = found if found >= 0 else text.find(wanted, 0, begin + len(wanted) - 1)
        if found < 0:
            return False
        self.found = (self._which(wanted, found), self._how_many(wanted))
        self.select(found, found + len(needle))
        self.scroll_to(found)
        return True

    def _which(self, wanted: str, found: int) -> int:
        """Which place of `wanted` the one at `found` is: counted on from the place found last when after it (Enter
        going on), else from the top."""
        text, (last, at, which) = self._searched or "", self._last
        which = which + text.count(wanted, at, found) if last == wanted and found >= at else \
            text.count(wanted, 0, found) + 1
        self._last = (wanted, found, which)
        return which

    def _how_many(self, wanted: str) -> int:
        """How many places the text has `wanted`: counted once a needle, not again at each Enter."""
        if self._counted[0] != wanted:
            self._counted = (wanted, (self._searched or "").count(wanted))
        return self._counted[1]

    def _word_at(self, position: int) -> tuple[int, int]:
        index = self._line_of(position)
        line, start = self._line(index), self._starts[index]
        for match in _WORD.finditer(line):
            if match.start() <= position - start <= match.end():
                return start + match.start(), start + match.end()
        return position, min(position + 1, start + len(line))

    def _line_range(self, position: int) -> tuple[int, int]:
        index = self._line_of(position)
        start = self._starts[index]
        return start, min(start + len(self._line(index)) + 1, len(self.full_text))  # with its newline

    # -- mouse and keys --------------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        position = self.position_at(event.position())
        clicks, last = self._clicks
        now = event.timestamp() / 1000
        interval = QApplication.doubleClickInterval() / 1000
        if clicks == 2 and now - last <= interval:  # the third click in a row: the whole line
            self.select(*self._line_range(position))
            self._to_primary()
            self._clicks = (3, now)
            return
        self._clicks = (1, now)
        self._drag_at = event.position().toPoint()
        start, end = self.selection()
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if not shift and start < end and start <= position < end:  # on the selection: it may be dragged out
            self._pressed_on = position
            return
        self.select(self._anchor if shift else position, position)
        self._dragging = True

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        point = event.position().toPoint()
        if self._pressed_on is not None:
            if (point - self._drag_at).manhattanLength() >= QApplication.startDragDistance():
                self._pressed_on = None
                drag = QDrag(self)
                data = QMimeData()
                data.setText(self.selected_text())
                drag.setMimeData(data)
                drag.exec(Qt.DropAction.CopyAction)
            return
        if not self._dragging:
            return
        self._drag_at = point
        self.select(self._anchor, self.position_at(point))
        outside = point.y() < 0 or point.y() > self.viewport().height()
        if outside and not self._autoscroll.isActive():
            self._autoscroll.start()
        elif not outside:
            self._autoscroll.stop()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pressed_on is not None:  # a click on the selection, not dragged: a click
            self.select(self._pressed_on, self._pressed_on)
            self._pressed_on = None
        elif self._dragging:
            self._to_primary()
        self._dragging = False
        self._autoscroll.stop()
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        position = self.position_at(event.position())
        self._pressed_on = None
        self.select(*self._word_at(position))
        self._to_primary()
        self._clicks = (2, event.timestamp() / 1000)
        self.doubleClicked.emit(position)
        self.activated.emit(position)

    def _to_primary(self) -> None:
        """What the mouse selected, for a middle click elsewhere (X11's primary selection, where there is one)."""
        clipboard = QGuiApplication.clipboard()
        text = self.selected_text()
        if text and clipboard is not None and clipboard.supportsSelection():
            clipboard.setText(text, QClipboard.Mode.Selection)

    def _drag_scroll(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + (-1 if self._drag_at.y() < 0 else 1))
        self.select(self._anchor, self.position_at(self._drag_at))

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) and event.matches(
                QKeySequence.StandardKey.Find) and self.receivers(SIGNAL("findRequested()")) > 0:
            event.accept()  # a key press here, not the window's shortcut
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        bar = self.verticalScrollBar()
        key, shift = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy()
        elif event.matches(QKeySequence.StandardKey.SelectAll):
            self.select_all()
        elif event.matches(QKeySequence.StandardKey.Find):
            self.findRequested.emit()
        elif key == Qt.Key.Key_Up:
            self._step(-1)
        elif key == Qt.Key.Key_Down:
            self._step(1)
        elif key == Qt.Key.Key_PageUp or (key == Qt.Key.Key_Space and shift):
            self._page_by(-1)
        elif key in (Qt.Key.Key_PageDown, Qt.Key.Key_Space):
            self._page_by(1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.full_text \
                and self.receivers(SIGNAL("activated(int)")) > 0:  # (else a dialog's default button takes it)
            start, end = self.selection()  # (a place found with Ctrl+F is selected)
            in_sight = self._in_sight()
            self.activated.emit(start if end > start or not in_sight else self._starts[in_sight[0][0]])
        elif key == Qt.Key.Key_Home and not shift:
            self._scroll(bar.minimum())
        elif key == Qt.Key.Key_End and not shift:  # the very end, within a last line taller than the view too
            self._scroll(bar.maximum(), self._deepest(bar.maximum()))
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def _page_by(self, pages: int) -> None:
        """A page: the lines in sight less one (the last in sight comes to the top), or the rows in sight less one
        within a line taller than the view."""
        if self._tall():
            rows = max(int(self.viewport().height() / max(self.fontMetrics().lineSpacing(), 1)) - 1, 1)
            for _ in range(rows):
                self._step(pages)
        else:
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + pages * max(len(self._in_sight()) - 1, 1))

    def _tall(self) -> bool:
        """Whether the rest of the line at the top is taller than the view."""
        return bool(self.full_text) and not self._rest_fits(self._layout(self.verticalScrollBar().value()), self._row)

    def _deepest(self, index: int) -> int:
        """The row of line `index` that scrolling a row at a time stops at: the first from which the rest of the line
        is in sight (0 for a line no taller than the view)."""
        layout = self._layout(index)
        deepest = bisect_left(range(layout.lineCount()), True, key=lambda row: self._rest_fits(layout, row))
        return min(deepest, max(layout.lineCount() - 1, 0))

    def _rest_fits(self, layout: QTextLayout, row: int) -> bool:
        """Whether the rest of a line (laid out in `layout`) from its `row`th row on fits in the view."""
        return layout.boundingRect().height() - _row_top(layout, row) <= self.viewport().height() - MARGIN

    def _scroll(self, index: int, row: int = 0) -> None:
        """Line `index` at the top, scrolled past its first `row` rows (no further than `_deepest`)."""
        bar = self.verticalScrollBar()
        bar.setValue(index)
        self._row = min(row, self._deepest(bar.value()))
        self.viewport().update()

    def _step(self, rows: int) -> None:
        """Scroll by a row: within the top line while it has rows out of sight above or below, else a line."""
        bar = self.verticalScrollBar()
        top = bar.value()
        if rows > 0 and self._tall():
            self._row += 1
            self.viewport().update()
        elif rows < 0 and self._row > 0:
            self._row -= 1
            self.viewport().update()
        else:
            bar.setValue(top + rows)

    def wheelEvent(self, event: QWheelEvent) -> None:
        """Three rows a notch, row by row (through a line taller than the view too); with Ctrl, a point larger or
        smaller a notch (as a read-only text box zooms)."""
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            notches = round(event.angleDelta().y() / 120)
            font = self.font()
            size = font.pointSizeF() if font.pointSizeF() > 0 else float(font.pixelSize())
            font.setPointSizeF(min(max(size + notches, MIN_POINTS), MAX_POINTS))
            self.setFont(font)
            event.accept()
            return
        self._wheeled += event.angleDelta().y()
        notches = int(self._wheeled / 120)
        self._wheeled -= notches * 120
        for _ in range(abs(notches) * QApplication.wheelScrollLines()):
            self._step(-1 if notches > 0 else 1)
        event.accept()

    def menu(self) -> QMenu:
        """The context menu: Copy and Select All, as a read-only text edit's."""
        menu = QMenu(self)
        copy = menu.addAction("&Copy", self.copy)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setEnabled(self._anchor != self._position)
        menu.addSeparator()
        every = menu.addAction("Select All", self.select_all)
        every.setShortcut(QKeySequence.StandardKey.SelectAll)
        every.setEnabled(bool(self.full_text))
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.menu()
        menu.exec(event.globalPos())
        menu.deleteLater()


def role_style(colours: dict[str, str]) -> Style:
    """Role lines (`--- system ---`) in bold in their role's colour (grey for another), headings (`## ...`) bold."""
    role = re.compile(r"--- (\w+) ---")
    bold = QTextCharFormat()
    bold.setFontWeight(QFont.Weight.Bold)
    made: dict[str, QTextCharFormat] = {}

    def style(line: str) -> QTextCharFormat | None:
        if line.startswith("## "):
            return bold
        match = role.fullmatch(line) if line.startswith("--- ") else None
        if match is None:
            return None
        name = match.group(1)
        if name not in made:
            coloured = QTextCharFormat(bold)
            coloured.setForeground(QColor(colours.get(name, "#6b7280")))
            made[name] = coloured
        return made[name]

    return style


class FindBar(QWidget):
    """Find in a `LinesView` (Ctrl+F in it: `findRequested`): what is typed is found as it is typed, Enter (or
    Down) goes to the next place, Shift+Enter (or Up) to the one before, Escape closes the bar; beside the field,
    which place of how many ("2 of 5"), as the timeline's filter says it, until the text searched changes."""

    def __init__(self, view: Callable[[], LinesView], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find")
        self.field.setClearButtonEnabled(True)
        self.field.textEdited.connect(lambda _text: self.search(again=False))
        self.field.installEventFilter(self)
        self.status = QLabel()
        self.status.setEnabled(False)  # the muted colour
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.field, 1)
        for text, tip, backward in (("↑", "Previous (Shift+Enter)", True), ("↓", "Next (Enter)", False)):
            button = QToolButton()
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _checked=False, back=backward: self.search(backward=back))
            layout.addWidget(button)
        layout.addWidget(self.status)
        self.hide()

    def open(self) -> None:
        """Shown with the field's text chosen, for a new search typed over it."""
        self.show()
        self.field.setFocus()
        self.field.selectAll()

    def follow(self, view: LinesView) -> None:
        """Find in `view` when Ctrl+F is pressed in it; forget the count when it shows another text."""
        view.findRequested.connect(self.open)
        view.textShown.connect(self.forget_count)

    def forget_count(self) -> None:
        """The text searched changed (another shown, another tab in front): the count said was of the text before.
        Cleared rather than counted again, which would be a pass over megabytes at each step of the cursor; Enter
        finds in the text now shown."""
        self.status.clear()

    def search(self, *, backward: bool = False, again: bool = True) -> bool:
        view = self._view()
        found = view.find_text(self.field.text(), backward=backward, again=again)
        self.status.setText(f"{view.found[0]:,} of {view.found[1]:,}" if found else
                            "Not found" if self.field.text() else "")
        return found

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key, shift = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Down, Qt.Key.Key_Up):
                self.search(backward=shift if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) else key == Qt.Key.Key_Up)
                return True
            if key == Qt.Key.Key_Escape:
                self.hide()
                self._view().setFocus()
                return True
        return super().eventFilter(watched, event)
