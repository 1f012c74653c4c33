"""The timeline panel: a filter box, the message table and the calls of the selected plan or solution.

The messages are shown by a QTableView with a fixed row height (see docs/workbench.md for the
measurements that chose it over QTreeView and QListView); the child rows of the same `TimelineModel`
(calls) are shown by a small tree view rooted at the selected plan message.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QImage, QKeyEvent, QMoveEvent, QRegion, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import body_of

from ._icons import icon
from ._slices import slices
from ._timeline_delegate import TimelineDelegate, row_height
from ._timeline_model import TimelineModel
from ._timeline_search import FilteredTimeline, Haystacks, Query, TimelineSearch

if TYPE_CHECKING:
    from ._document_model import DocumentModel

_Index = QModelIndex | QPersistentModelIndex
DEBOUNCE_MS = 150  # the filter is searched once typing pauses this long
# A far jump's new screen is drawn a band of rows per turn, as a slice (`slices()`: never in a turn with another
# slice or after a busy start): as many rows as fit in what is left of `BAND_TURN_S` of the turn's GUI-thread time
# (at the cost per row of the scroll's last band; `ROW_S` before its first: one row under load), at least one.
BAND_TURN_S = 0.006
ROW_S = 0.004
# Widgets sent their pending move and resize events per slice before the viewport's first render (`_warm`).
SETTLED_A_SLICE = 24
WARM_LISTINGS = 2  # the window's unsettled widgets are listed again once the first listing's are sent


NO_PLAN = "Select a plan message (or the solution) to see its calls here."
EMPTY_PLAN = "This plan has no calls yet: add them in the editor's Form tab (+ call)."
ANSWER_PLAN = "No calls: this plan gives the final output."

class TimelineTable(QTableView):
    """The message table. A new current row is scrolled to on the next turn of the event loop, not inside the
    selection (Qt's own scrolling there is turned off): the editor shows the selected message in the selection's
    turn, and a far jump's screen of rows never drawn is drawn on later turns of its own.

    When the row is off the screen, the viewport is not repainted until its new rows are drawn: from the turn after
    the scroll's (which has the window's repaint of the new selection) on, a slice of the window's turns
    (`slices()`, taking turns with the other slices, each in a turn of its own) draws a band of them into
    pictures, as many rows as the rest of the turn's `BAND_TURN_S` holds (`Pictures.making_now`, through a paint of
    that band of the viewport into an image: the same rows, options and keys as on screen), and the turn after the
    last shows them, copied. Drawn at once, such a screen would share a turn with the editor's new form and overrun
    the frame; a band of a fixed count of rows, with the repaint the scroll asked for, overran it at a million
    messages under load."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._scroll = QTimer(self, singleShot=True, interval=0)
        self._scroll.timeout.connect(self._scroll_now)
        # Where the viewport's rows not drawn yet since the scroll begin (None: no bands due; past the viewport: all
        # drawn, shown by the next slice)
        self._band_top: int | None = None
        self._row_s = ROW_S  # what drawing a row into a picture cost, the last band's
        self._held = False  # no rows painted until the next scroll (`hold`)
        self._target = QPersistentModelIndex()  # the row the coming scroll goes to
        self._warmed = False  # the viewport has been rendered into an image once (`_warm`)
        self._unsettled: deque[QWidget] | None = None  # widgets whose pending move and resize events `_warm` sends
        self._listings = 0  # how many times `_warm` listed them

    def currentChanged(self, current: _Index, previous: _Index) -> None:
        scrolls = self.hasAutoScroll()
        self.setAutoScroll(False)  # Qt would scroll to the new current row here
        try:
            super().currentChanged(current, previous)
        finally:
            self.setAutoScroll(scrolls)
        if scrolls and current.isValid():
            self.scroll_later()

    def scroll_later(self) -> None:
        """Scroll to the current row on the next turn of the event loop."""
        viewport = self.viewport()
        due = self._target
        if self._scroll.isActive() and due.isValid() and not viewport.rect().contains(self.visualRect(due)):
            # The scroll still due is done first, as if its turn had come: the next starts from where it left off.
            viewport.setUpdatesEnabled(False)
            self.scrollTo(due)
        current = self.currentIndex()
        self._target = QPersistentModelIndex(current)
        if current.isValid() and not self.visualRect(current).intersects(viewport.rect()):
            viewport.setUpdatesEnabled(False)  # a screen of other rows: shown once drawn (`_draw_band`)
        elif self._held:
            viewport.setUpdatesEnabled(True)  # the rows held are the ones to show: painted with the selection
        self._held = False
        self._band_top = None  # an earlier scroll's bands are not drawn (its slice, if due, does nothing)
        self._scroll.start()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self._held:
            # Updates off keep `update()` from asking for a repaint, not a repaint asked for before the hold (the
            # old current row's) or an ancestor's (the window's, as it is activated) from painting the rows.
            return True
        # A repaint asked for before a far jump (the old current row's) can arrive after the scroll, while the new
        # screen is being drawn: its rows are then made as pictures too, so the screen shown is all copies.
        delegate = self.itemDelegate()
        if event.type() == QEvent.Type.Paint and not self.viewport().updatesEnabled() and isinstance(
                delegate, TimelineDelegate):
            with delegate.pictures.making_now():
                return super().viewportEvent(event)
        return super().viewportEvent(event)

    def hold_for(self, index: _Index) -> None:
        """The current row is about to move to `index` (an edit): when that row is off the screen, no rows are
        painted from now on, as for a far jump (`scroll_later`). Held only once the scroll is due, the repaint the
        edit's rows ask for would paint the screen scrolled to at once, every row of it made in one turn."""
        viewport = self.viewport()
        if index.isValid() and not self.visualRect(index).intersects(viewport.rect()):
            viewport.setUpdatesEnabled(False)  # (the scroll to the row draws them and shows them: `_draw_band`)

    def hold(self) -> None:
        """Paint no rows until the next scroll or `release` (a new document, before the selection it opens on:
        its rows would be painted in the repaint that shows the document, and then the selection jumps). A scroll
        still due, or its bands still drawn, was the rows before: it would draw and show the new ones."""
        self._scroll.stop()
        self._band_top = None
        self.viewport().setUpdatesEnabled(False)
        self._held = True

    def release(self) -> None:
        """Draw the rows on screen a band a turn, if held and no scroll does."""
        if self._held and not self.is_scrolling():
            self._held = False
            self._scroll.start()

    def holds_viewport(self) -> bool:
        """Its rows are held (`hold`) or a scroll's are still to be drawn: it lets its viewport repaint itself once
        they are shown (a theme switch's slices leave it to it)."""
        return self._held or self.is_scrolling()

    def is_scrolling(self) -> bool:
        """A scroll to the current row, or the drawing and showing of the rows it scrolled to, waits for its turn."""
        return self._scroll.isActive() or self._band_top is not None

    def _scroll_now(self) -> None:
        current = self.currentIndex()
        if current.isValid():
            self.scrollTo(current)
        viewport = self.viewport()
        if not viewport.updatesEnabled():  # the bands from the next turn on: this one has the window's repaint
            # A row's cost is measured again: the last scroll's rows may have been copies of pictures kept (a jump
            # back to rows seen), and a band of new rows sized at that cost was several times its share.
            self._band_top, self._row_s = 0, ROW_S
            slices().start(self._draw_band)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._warmed:
            self._warmed = True
            slices().start(self._warm)

    def _warm(self) -> None:
        """Slices, once: a row's height of the viewport rendered into an image and dropped. The first render of
        the viewport costs Qt several milliseconds more than the next ones, which would fall on the first band of
        the first document's rows. Not while rows are held or a far jump's are drawn (a document that opened at
        once): those rows are painted only when shown, and the first band pays it.

        That first render is Qt sending every widget of the window never shown yet (the hidden docks', the menus')
        the move and resize events it keeps pending until then: hundreds of widgets, more than a slice. They are
        listed in a slice, then sent `SETTLED_A_SLICE` widgets a slice (a menu costs far more than a label), as Qt
        would (`_settle`); the render then has none to send."""
        viewport = self.viewport()
        if not viewport.updatesEnabled():
            return
        if self._unsettled is None or (not self._unsettled and self._listings < WARM_LISTINGS):
            # Listed in a slice of its own (a thousand widgets); once more when they are sent, for the widgets
            # made meanwhile by other slices (a form made ahead), which the render would send otherwise.
            self._unsettled = deque(widget for widget in self.window().findChildren(QWidget) if _unsettled(widget))
            self._listings += 1
            slices().start(self._warm)
            return
        for _ in range(SETTLED_A_SLICE):
            if not self._unsettled:
                break
            widget = self._unsettled.popleft()
            if shiboken6.isValid(widget):
                _settle(widget)
        if self._unsettled or self._listings < WARM_LISTINGS:
            slices().start(self._warm)
            return
        band = QRect(0, 0, viewport.width(), self.verticalHeader().defaultSectionSize())
        ratio = viewport.devicePixelRatioF()
        image = QImage(band.size() * ratio, QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        viewport.render(image, QPoint(), QRegion(band))

    def _draw_band(self) -> None:
        """A slice: draw the next band of rows into pictures; once all are, show them in the next slice."""
        viewport = self.viewport()
        delegate = self.itemDelegate()
        top = self._band_top
        if top is None:  # no bands due (a later scroll has not begun them yet)
            return
        if top >= viewport.height() or not isinstance(delegate, TimelineDelegate):
            self._band_top = None
            viewport.setUpdatesEnabled(True)  # repaints it whole
            return
        row = self.verticalHeader().defaultSectionSize()
        rows = max(1, int((BAND_TURN_S - slices().turn_used()) / self._row_s))
        band = QRect(0, top, viewport.width(), min(rows * row, viewport.height() - top))
        self._band_top = band.bottom() + 1
        ratio = viewport.devicePixelRatioF()
        image = QImage(band.size() * ratio, QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        began = time.thread_time()
        with delegate.pictures.making_now():  # the view's own paint: its rows, options and keys
            viewport.render(image, QPoint(), QRegion(band))
        # At most halved a band: a band of rows kept as pictures (the moved row, at the top of the screen a move up
        # scrolls to) costs next to nothing, and the next band's new rows sized at that cost were the whole screen.
        self._row_s = max((time.thread_time() - began) * row / band.height(), self._row_s / 2, ROW_S / 10)
        slices().start(self._draw_band)


def _unsettled(widget: QWidget) -> bool:
    """Qt keeps a move or a resize event pending for `widget` (it was never shown)."""
    return widget.testAttribute(Qt.WidgetAttribute.WA_PendingMoveEvent) or widget.testAttribute(
        Qt.WidgetAttribute.WA_PendingResizeEvent)


def _settle(widget: QWidget) -> None:
    """Send `widget` the move and resize events Qt keeps pending, as Qt does before a first show or render."""
    if widget.testAttribute(Qt.WidgetAttribute.WA_PendingMoveEvent):
        QCoreApplication.sendEvent(widget, QMoveEvent(widget.pos(), widget.pos()))
        widget.setAttribute(Qt.WidgetAttribute.WA_PendingMoveEvent, False)
    if widget.testAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent):
        QCoreApplication.sendEvent(widget, QResizeEvent(widget.size(), QSize()))
        widget.setAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent, False)


class FilterKeys(QObject):
    """The filter box's keys, as in a desktop tool's search field: Escape clears the filter (then, with nothing
    left to clear, goes back to the rows); Down, Enter and Return go to the rows the filter left."""

    def __init__(self, box: QLineEdit, rows: QWidget) -> None:
        super().__init__(box)
        self._box, self._rows = box, rows
        box.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self._box or event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        key = event.key()
        if key == Qt.Key.Key_Escape and self._box.text():
            self._box.clear()
            return True
        if key in (Qt.Key.Key_Escape, Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._rows.setFocus(Qt.FocusReason.OtherFocusReason)
            return True
        return False


class TimelinePanel(QWidget):
    """Filter box, message table, calls of the selected row. Emits `currentChanged(row index)`."""

    currentChanged = Signal(QModelIndex)  # an index of the TimelineModel (invalid when none)
    callActivated = Signal(QModelIndex)  # a call row clicked in the calls list

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model: TimelineModel | None = None
        self._document: DocumentModel | None = None
        self._haystacks: Haystacks | None = None
        self._announced = QPersistentModelIndex()  # the row `currentChanged` last announced (it follows edits)
        self._carried: int | None = None  # while a message moves: its row, when it is the current one
        self._moving = False
        self._filter = FilteredTimeline(self)
        self._filter.staleResult.connect(self._search_now)
        self.search = TimelineSearch(self)
        self.search.progress.connect(self._search_progress)
        self.search.finished.connect(self._search_finished)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self._search_now)
        self.filter_box = QLineEdit(placeholderText="Filter — kind:state @① or any text, in values too")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.addAction(icon("filter"), QLineEdit.ActionPosition.LeadingPosition).setToolTip(
            "Filter the messages")
        self.filter_box.textChanged.connect(self._filter_changed)
        self.filter_status = QLabel()
        self.filter_status.setObjectName("filterStatus")
        # Wide enough for any count: a label that grows would lay out the filter box again while typing.
        self.filter_status.setMinimumWidth(self.filter_status.fontMetrics().horizontalAdvance("000,000 of 000,000"))
        self.filter_status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.filter_status.hide()
        self.table = TimelineTable()
        FilterKeys(self.filter_box, self.table)
        self.table.setObjectName("timeline")
        self._delegate = TimelineDelegate(self.table)
        self.table.setItemDelegate(self._delegate)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        vertical = self.table.verticalHeader()
        vertical.hide()
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no per-row measuring: O(1) layout
        vertical.setDefaultSectionSize(row_height(self.table.fontMetrics()))
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.setDragEnabled(True)
        self.table.setAcceptDrops(True)
        self.table.setDropIndicatorShown(True)
        self.table.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.table.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move the time cursor
        self.calls = QTreeView()
        self.calls.setObjectName("calls")
        self.calls.setHeaderHidden(True)
        self.calls.setRootIsDecorated(False)
        self.calls.setUniformRowHeights(True)
        calls_delegate = TimelineDelegate(self.calls)
        calls_delegate.show_numbers = False
        self.calls.setItemDelegate(calls_delegate)
        self.calls.setIndentation(0)
        self.calls.clicked.connect(self.callActivated)
        # The calls' place is always there (a note when the selected row has no calls): showing or hiding
        # it would resize the table under the pointer on every selection, and a drag just begun is lost.
        self.calls_note = QLabel(NO_PLAN)
        self.calls_note.setObjectName("callsNote")
        self.calls_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.calls_note.setWordWrap(True)
        self.calls_note.setEnabled(False)  # drawn in the palette's disabled (muted) text colour
        self._calls_area = QStackedWidget()
        self._calls_area.addWidget(self.calls_note)
        self._calls_area.addWidget(self.calls)
        splitter = self._splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self._calls_area)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter_box, 1)
        top.addWidget(self.filter_status)
        layout.addLayout(top)
        layout.addWidget(splitter)

    # -- model -----------------------------------------------------------------------------------

    def set_model(self, model: TimelineModel) -> None:
        if self._model is not None:
            for signal in (self._model.rowsInserted, self._model.rowsRemoved):
                signal.disconnect(self._model_changed)
        if self._haystacks is not None:
            self._haystacks.detach()
        self._model = model
        self._haystacks = Haystacks(model)
        for signal in (model.rowsInserted, model.rowsRemoved):
            signal.connect(self._model_changed)
        # The filtered rows follow the model only while a filter is shown: otherwise each edit would pay for it.
        self._filter.setSourceModel(None)
        self.search.cancel()
        self._detach_calls()
        model.rowsAboutToBeRemoved.connect(self._rows_leaving)
        model.rowMoving.connect(self._row_moving)
        model.rowMoved.connect(self._row_moved)
        if model.rowCount() and self._document is not None and not self._document.is_shown():
            self.table.hold()  # before the model is shown: none of its rows is painted until the document is
            if model.rowCount(model.index(model.rowCount() - 1, 0)):
                slices().start(self._calls_ahead)  # the document opens on a plan's row
        self._show(model, keep_current=False)
        self._filter_changed(self.filter_box.text())

    def _calls_ahead(self) -> None:
        """A slice while a new document opens: the calls view takes the model with the last message (the one the
        document opens on) as its root, behind the note, so that its selection only brings the calls view in front
        (the model and the root are work the selection's turn need not do)."""
        model = self._model
        if model is None or self._document is None or self._document.is_shown():
            return
        last = model.index(model.rowCount() - 1, 0)
        if last.isValid() and model.rowCount(last) > 0:
            self.calls.setModel(model)
            self.calls.setRootIndex(last)

    def model(self) -> TimelineModel | None:
        return self._model

    def follow(self, document: DocumentModel) -> None:
        """Shade the rows after `document`'s time cursor as the future: at once when it moves (the rows scrolled
        to are drawn once, in their new shade), and when the views are due (an edit renumbers the cursor). A
        new document's rows are painted once it is shown (`hold`)."""
        self._document = document
        document.cursorChanged.connect(self._shade)  # bound methods: Qt drops them with the panel
        document.documentShown.connect(self.table.release)
        document.viewsDue.connect(self._shade)

    def _shade(self, *_cursor: object) -> None:
        document = self._document
        if document is not None and self._model is not None and self._model.context is document.context():
            self._model.set_cursor(document.time_cursor())

    def query(self) -> Query:
        """The query the shown rows match (empty: every row is shown)."""
        return self._filter.query if self.table.model() is self._filter else Query()

    def is_searching(self) -> bool:
        """A query is typed but its result is not shown yet (waiting for typing to pause, or searching)."""
        return self._debounce.isActive() or self.search.is_busy()

    def _show(self, model: Any, keep_current: bool = True) -> None:
        # The filtered rows are only in the way while a filter is typed: unfiltered, the table reads the model.
        if self.table.model() is model:
            return
        current = self.current_index() if keep_current else QModelIndex()
        self.table.setModel(model)
        self.table.selectionModel().currentRowChanged.connect(self._current_row_changed)
        if current.isValid():
            self.set_current(current)

    def _filter_changed(self, text: str) -> None:
        """Typing restarts the pause; an emptied box shows every row at once."""
        if self._model is None:
            return
        if Query.parse(text):
            self.search.cancel()  # its rows would be thrown away: the query it answers is gone
            self._debounce.start()
            return
        self._debounce.stop()
        self.search.cancel()
        self.filter_status.hide()
        if self.table.model() is self._filter:
            current = self.current_index()
            self._show(self._model, keep_current=False)
            self._filter.setSourceModel(None)
            if current.isValid():
                self.set_current(current)

    def _search_now(self) -> None:
        self._debounce.stop()
        query = Query.parse(self.filter_box.text())
        if self._model is None or self._haystacks is None or not query:
            return
        self.filter_status.setText("Searching…")
        self.filter_status.show()
        shown = self.query()  # typing on narrows it (`refund` after `ref`): only its rows can match
        among = self._filter.source_rows() if shown and self._filter.is_exact() and query.narrows(shown) else None
        self.search.start(self._haystacks, self._model, query, among)

    def _model_changed(self, parent: QModelIndex, *_rows: int) -> None:
        # The search under way counted rows that have moved: start it again (the shown rows follow by themselves).
        if self.search.is_busy() and not parent.isValid():
            self._search_now()
        if parent.isValid() and parent == self._announced:
            self._show_calls(parent)  # the shown plan's first call was added, or its last removed: list or note

    def _search_progress(self, done: int, total: int) -> None:
        # In tens of percent: the label repaints ten times a search, not once a slice.
        self.filter_status.setText(f"Searching… {10 * (10 * done // max(total, 1))}%")

    def _search_finished(self, query: Query, rows: list[int]) -> None:
        if self._model is None or self._haystacks is None or query != Query.parse(self.filter_box.text()):
            return  # typed over since: a newer search follows
        current = self.current_index()
        if self._filter.sourceModel() is not self._model:
            self._filter.setSourceModel(self._model)
        self._filter.set_result(self._haystacks, query, rows)
        self._show(self._filter, keep_current=False)
        if current.isValid():
            self.set_current(current)
        total = self._model.rowCount()
        self.filter_status.setText(f"{len(rows):,} of {total:,}")
        self.filter_status.setToolTip(f"{len(rows):,} of the {total:,} rows match the filter")

    # -- selection -------------------------------------------------------------------------------

    def current_index(self) -> QModelIndex:
        """The selected row as an index of the TimelineModel."""
        index = self.table.currentIndex()
        if index.isValid() and index.model() is self._filter:
            return self._filter.mapToSource(index)
        return QModelIndex(index)

    def set_current(self, index: _Index) -> None:
        """Select a row (an index of the TimelineModel) and scroll to it on the next turn of the event loop."""
        if self.table.model() is self._filter:
            index = self._filter.mapFromSource(index)
        if not index.isValid():
            return
        self.table.setCurrentIndex(index)
        self.table.scroll_later()

    def reveal(self, index: _Index) -> None:
        """Select a row like `set_current`, clearing the filter first when it hides the row."""
        if self.table.model() is self._filter and not self._filter.mapFromSource(index).isValid():
            self.filter_box.clear()
        self.set_current(index)

    def _row_moving(self, src: int, dst: int) -> None:
        # The row leaves the table for a moment and Qt makes its neighbour current: announcing that would
        # show the neighbour (the editor builds its form) only to show the moved message again after.
        current = self.current_index()
        self._carried = src if current.isValid() and not current.parent().isValid() and current.row() == src else None
        if self._carried is not None and self._model is not None:
            index = self._model.index(dst, 0)  # (the row that is at dst now: where the moved one will be drawn)
            self.table.hold_for(self._filter.mapFromSource(index) if self.table.model() is self._filter else index)
        self._moving = True

    def _row_moved(self, src: int, dst: int) -> None:
        self._moving = False
        carried, self._carried = self._carried, None
        if carried is not None and self._model is not None:
            self.set_current(self._model.index(dst, 0))  # the current row goes where its message went
        current = self.table.currentIndex()
        self._current_row_changed(current, current)  # whatever is current now, announced once

    def _current_row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._moving:
            return  # `_row_moved` announces the row that is current once the message is back
        source = self._filter.mapToSource(current) if current.model() is self._filter else current
        if source.isValid() and source.model() is not self._model:
            return  # the previous document's model, on its way out
        if source.isValid() and self._announced == source:
            return  # the same row again, as the filtered rows replace the table's model: nothing to show anew
        self._announced = QPersistentModelIndex(source)
        self._show_calls(source)
        self.currentChanged.emit(source)

    def _show_calls(self, index: QModelIndex) -> None:
        if self._model is not None and index.isValid() and self._model.rowCount(index) > 0:
            if self.calls.model() is not self._model:
                self.calls.setModel(self._model)
            if self.calls.rootIndex() != index:  # the plan shown last, selected again: its rows are laid out
                self.calls.setRootIndex(index)
            self._calls_area.setCurrentWidget(self.calls)
        else:
            item = self._model.getItem(index) if self._model is not None else None
            body = body_of(item) if isinstance(item, dict) else {}
            answer = ANSWER_PLAN if body.get("output") is not None else EMPTY_PLAN
            self.calls_note.setText(answer if body.get("type") == "plan" else NO_PLAN)
            # The calls of the plan shown last stay laid out behind the note (hundreds of rows): going back to it
            # costs no new layout. They follow its edits; its removal lets go of them (`_rows_leaving`).
            self._calls_area.setCurrentWidget(self.calls_note)

    def _detach_calls(self) -> None:
        # Without its root the calls view would show (and lay out) every message: let go of the model.
        self._calls_area.setCurrentWidget(self.calls_note)
        self.calls.setModel(None)

    def _rows_leaving(self, parent: QModelIndex, first: int, last: int) -> None:
        root = self.calls.rootIndex()
        if not parent.isValid() and root.isValid() and first <= root.row() <= last:
            self._detach_calls()

    def add_actions(self, actions: list[QAction]) -> None:
        """Actions of the table's context menu (and their shortcuts while it has the focus)."""
        self.table.addActions(actions)
