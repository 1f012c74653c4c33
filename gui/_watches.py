"""Watches: pinned `†` expressions shown live at the time cursor (value, or the path that is missing)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QBrush, QColor, QFocusEvent, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLineEdit, QTableView, QToolButton, QVBoxLayout, QWidget

from contextdeck._runtime import freeze_young
from contextdeck.engine import Context, Cursor, CursorWatch, ExpressionError, Resolution, parse_expression

from ._engine_signals import connect_all
from ._icons import icon
from ._message_editor import reference_completer
from ._slices import Budget, slices
from ._summary import short_json
from ._touches import cells_by_fusion

if TYPE_CHECKING:
    from ._document_model import DocumentModel

_Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()
COLUMNS = ("Expression", "Value", "From")
SOURCES = COLUMNS.index("From")
BUDGET_S = 0.006  # the share of a turn of the event loop of each slice of resolving, after a far jump (`Budget`)
# Folding the pins' paths ahead, while the window is idle (`WatchModel._warm`): quiet this long after the last move,
# edit or pin, then a few milliseconds per turn, up to each quarter of the document in turn.
WARM_IDLE_MS = 300
WARM_NEXT_MS = 1
WARM_WAIT_MS = 30  # looking again whether the window is still busy
WARM_BUDGET_S = 0.002
WARM_CUTS = 4

EXPRESSION_WIDTH = 260  # the expression column's first width, in pixels
ResolutionRole = Qt.ItemDataRole.UserRole + 1  # the Resolution (None when malformed)
ErrorRole = Qt.ItemDataRole.UserRole + 2  # "reason at position N" for a malformed expression, else None
WatchRole = Qt.ItemDataRole.UserRole + 3  # the PinnedWatch
_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.ForegroundRole,
                    Qt.ItemDataRole.ToolTipRole, ResolutionRole, ErrorRole, WatchRole})  # what `data` answers


@dataclass
class PinnedWatch:
    """One pinned expression (with an optional instance) and what it resolves to now."""

    expression: str
    instance: str | None = None
    error: str | None = None
    handle: CursorWatch | None = None

    @property
    def label(self) -> str:
        return self.expression + (f" @{self.instance}" if self.instance else "")

    @property
    def resolution(self) -> Resolution | None:
        """The engine's resolution now (None when malformed, with no document, or while its first fold at the
        cursor goes on in slices), its sources the indices its messages have now: an edit that only renumbers
        them calls nothing back, so it is read here."""
        return None if self.handle is None or not self.handle.resolved else self.handle.current


def _edits(context: Context) -> tuple[Any, ...]:
    return (context.inserted, context.removed, context.moved, context.replaced)


def parse_pin(text: str) -> tuple[str, str | None]:
    """`†state.user @①` → ("†state.user", "①"): an instance after " @" (segments never hold spaces)."""
    expression, sep, instance = text.strip().rpartition(" @")
    if sep and instance.strip() and expression.strip():
        return expression.strip(), instance.strip()
    return text.strip(), None


class WatchModel(QAbstractTableModel):
    """The pinned expressions, followed at the time cursor by the engine's `Cursor`: following the latest
    they are the context's incremental watches; at a cursor only those a move or an edit can change are
    resolved again. A row is repainted when the engine calls its watch back, and the "From" column of the
    rows on screen after every edit (an insert, remove or move above a pin's sources renumbers them
    without a callback: the view asks `current` again, for the visible rows only)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._cursor: Cursor | None = None
        self._document: DocumentModel | None = None
        self._pins: list[PinnedWatch] = []
        # The pins a document brought back whose watches are still to be made, in order (`set_pins`), by id.
        self._unmade: dict[int, PinnedWatch] = {}
        # The engine calls back each watch that changed; the rows are repainted once, after the move or edit.
        self._dirty: set[int] = set()
        self._renumbered = False  # an edit since the last repaint: sources may show other indices now
        self._flush = QTimer(self, singleShot=True, interval=0)
        self._flush.timeout.connect(self._repaint_dirty)
        # After a far jump hundreds of pins may need resolving: the engine's cursor does it in slices, taking turns
        # with the state view's (`slices`).
        self._warming: deque[tuple[PinnedWatch, int | None]] = deque()
        self._warm_due = False  # the pins are to be listed for folding ahead again (an edit, a pin added)
        self._busy: Callable[[], bool] = lambda: slices().pending
        self._warm_timer = QTimer(self, singleShot=True, interval=WARM_IDLE_MS)
        self._warm_timer.timeout.connect(self._warm)

    @property
    def pins(self) -> list[PinnedWatch]:
        return list(self._pins)

    def follow(self, document: DocumentModel) -> None:
        """Resolve the pins in `document`'s context (another document: its context) at its time cursor."""
        self._document = document
        document.documentReplaced.connect(self._document_replaced)  # bound methods: Qt drops them with the model
        document.viewsDue.connect(self._views_due)
        document.documentShown.connect(self._document_shown)
        self._document_replaced()

    def _document_replaced(self) -> None:
        if self._document is not None:
            self.set_context(self._document.context(), self._at(self._document))

    def _views_due(self) -> None:
        if self._document is not None:
            self.set_cursor(self._at(self._document))

    def _document_shown(self) -> None:
        """The pins leave the end they were folded at while the document opened (`_at`) when its cursor is
        another: nothing selected (a timeline filter hides its last message), they follow the latest live, as the
        other views do, not the end as it was (a run's outputs would not reach them)."""
        if self._document is not None and self._cursor is not None:
            at = self._at(self._document)
            if at != self._cursor.at:
                self.set_cursor(at)

    def _opening(self) -> bool:
        """A document is being handed over: not shown with its selection yet."""
        return self._document is not None and not self._document.is_shown()

    def _at(self, document: DocumentModel) -> int | None:
        """The document's cursor; while a document opens, before its last message is selected, its end. A live watch
        folds its kinds at once (the context's own, `Context.watch`), so the pins a document brings back would be
        folded in the turn that hands it over; at its end they are folded in slices, where the selection puts the
        cursor anyway (unless Follow Latest is on)."""
        at = document.at()
        if at is None and not document.follows_latest() and not document.is_shown():
            return len(document.context())
        return at

    def set_context(self, context: Context | None, at: int | None = None) -> None:
        if self._cursor is not None:
            for signal in _edits(self._cursor.context):
                signal.disconnect(self._edited)
            self._close_later(self._pins)  # (then the cursor, its watches closed)
            slices().close_later([self._cursor])
        self._cursor = None if context is None else Cursor(context, at, sliced=True)
        if context is not None:
            # after the cursor's own handlers: its pending watches
            connect_all((signal, self._edited) for signal in _edits(context))
        for pin in self._pins:
            if id(pin) not in self._unmade:
                self._evaluate(pin)
        self._all_changed()
        self._warm_later()

    def set_busy(self, busy: Callable[[], bool]) -> None:
        """What says the window has work of its own queued (a selection's views, a far jump's rows), which the
        folding ahead waits for (by default: a slice queued)."""
        self._busy = busy

    def set_cursor(self, at: int | None) -> None:
        """Show the values as of the first `at` messages (None: the latest, followed live)."""
        if self._cursor is not None:
            self._cursor.move(at)
            slices().start(self._work)
        if self._warm_timer.isActive():
            self._warm_timer.start(WARM_IDLE_MS)  # the user is moving: fold ahead once they stop

    def _edited(self, *_args: object) -> None:
        self._renumbered = True
        if not self._flush.isActive():  # a run's outputs: hundreds of edits in a turn, one repaint after them
            self._flush.start()
        slices().start(self._work)
        self._warm_later()  # an edit drops the folds of the paths it can change

    def _warm_later(self) -> None:
        """Fold every pin's paths ahead, at idle, over the whole document, a quarter more at a time.

        A pin's first resolve at a cursor folds the writes of its path up to there (the engine's path logs), which
        the cursor's slices split (`Context.fold_ahead`); once folded, a resolve at any cursor reads the log until
        an edit changes that path. Folded here ahead, a slice at a time, up to each quarter in turn, so that a
        jump seldom waits for a first fold."""
        if self._cursor is None:
            return
        self._warm_due = True  # the pins and cuts are listed when the folding starts (after the last edit)
        self._warm_timer.start(WARM_IDLE_MS)

    def _list_warming(self) -> None:
        if self._cursor is None or not self._warm_due:
            return
        self._warm_due = False
        count = len(self._cursor.context)
        cuts: list[int | None] = [count * n // WARM_CUTS for n in range(1, WARM_CUTS)]
        self._warming = deque((pin, cut) for cut in (*cuts, None) for pin in self._pins)

    def is_warming(self) -> bool:
        """Whether pins' paths are still to be folded ahead."""
        return self._warm_timer.isActive()

    def _warm(self) -> None:
        self._list_warming()
        if self._cursor is None:
            return
        if self._busy() or slices().pending:  # a move's or an edit's own work goes first
            self._warm_timer.start(WARM_WAIT_MS)
            return
        context = self._cursor.context
        budget = Budget(WARM_BUDGET_S)
        while self._warming and budget.more():
            pin, cut = self._warming[0]
            # not malformed, not removed; its fold a slice at a time
            if pin.handle is None or context.fold_ahead(pin.handle.expression, pin.instance, cut):
                self._warming.popleft()
        freeze_young()  # the logs' lists it made: as a slice's (`_slices`)
        if self._warming:
            self._warm_timer.start(WARM_NEXT_MS)

    def is_busy(self) -> bool:
        """Whether some pins still show the value of an earlier cursor, or none yet (being made or resolved in
        slices)."""
        return bool(self._unmade) or (self._cursor is not None and self._cursor.pending > 0)

    def _work(self) -> None:
        if self._cursor is None:
            return
        budget, steps = Budget(BUDGET_S), self._cursor.steps()
        while budget.more():
            if next(steps, True):
                return
        slices().start(self._work)

    def add(self, text: str) -> PinnedWatch:
        expression, instance = parse_pin(text)
        pin = PinnedWatch(expression, instance)
        self.beginInsertRows(_ROOT, len(self._pins), len(self._pins))
        self._pins.append(pin)
        self._evaluate(pin)
        self.endInsertRows()
        self._warm_later()
        return pin

    def set_pins(self, texts: Iterable[str]) -> None:
        """Pin `texts` instead of what is pinned (a document's own pins when it opens), in one reset of the rows: a
        document brings back hundreds in the turn that hands it over. Their watches are made in slices after it (each
        shows "…" until its first fold is done anyway), and the watches of the pins it replaces closed in slices
        (`Slices.close_later`): the document they follow is being replaced."""
        self.beginResetModel()
        self._close_later(self._pins)
        self._pins = [PinnedWatch(*parse_pin(text)) for text in texts]
        self._unmade = {id(pin): pin for pin in self._pins}
        self.endResetModel()
        if self._unmade:
            slices().start(self._make_some)

    def _make_some(self) -> None:
        """One slice of making the watches of the pins `set_pins` brought back, in their order."""
        budget, made = Budget(BUDGET_S), set[int]()
        while self._unmade and budget.more():
            pin = next(iter(self._unmade.values()))
            self._evaluate(pin, fold_now=False)  # (its first fold in the cursor's slices, as a hand-over's)
            made.add(id(pin))
        rows = [row for row, pin in enumerate(self._pins) if id(pin) in made]
        if rows:
            self.dataChanged.emit(self.index(rows[0], 0), self.index(rows[-1], len(COLUMNS) - 1))
        if self._unmade:
            slices().start(self._make_some)
        else:
            self._warm_later()  # (what was listed for folding ahead before left out the pins not made yet)

    def remove(self, row: int) -> None:
        self.beginRemoveRows(_ROOT, row, row)
        self._close(self._pins.pop(row))
        self.endRemoveRows()

    def getItem(self, index: _Index) -> PinnedWatch | None:
        return self._pins[index.row()] if index.isValid() and index.row() < len(self._pins) else None

    def _evaluate(self, pin: PinnedWatch, fold_now: bool = True) -> None:
        """Make `pin`'s watch (its first fold now unless `fold_now` is false or a document is being handed over)."""
        pin.error = None
        self._unmade.pop(id(pin), None)
        if self._cursor is None:
            try:
                parse_expression(pin.expression)
            except ExpressionError as error:
                pin.error = f"{error.reason} at position {error.position}"
            return

        def changed(resolution: Resolution) -> None:
            self._changed(pin, resolution)

        try:
            # (a document handed over brings its pins back all in one turn: none of their folds in it)
            pin.handle = self._cursor.watch(pin.expression, changed, pin.instance,
                                            fold_now=fold_now and not self._opening())
        except ExpressionError as error:
            pin.error = f"{error.reason} at position {error.position}"
            return
        if not pin.handle.resolved:  # its first fold at the cursor, a slice at a time; called back when done
            slices().start(self._work)

    def _close_later(self, pins: list[PinnedWatch]) -> None:
        slices().close_later([pin.handle for pin in pins if pin.handle is not None])
        for pin in pins:
            pin.handle = None

    def _close(self, pin: PinnedWatch) -> None:
        self._unmade.pop(id(pin), None)
        if pin.handle is not None:
            pin.handle.close()
            pin.handle = None

    def _changed(self, pin: PinnedWatch, _resolution: Resolution) -> None:
        self._dirty.add(id(pin))
        self._flush.start()

    def _repaint_dirty(self) -> None:
        rows = [row for row, pin in enumerate(self._pins) if id(pin) in self._dirty]
        self._dirty.clear()
        if rows:
            self.dataChanged.emit(self.index(rows[0], 0), self.index(rows[-1], len(COLUMNS) - 1))
        if self._renumbered and self._pins:
            # One signal for the column: a view repaints what it shows, so only the rows on screen read
            # their watch's `current` again (each ranks its sources once per edit).
            self._renumbered = False
            self.dataChanged.emit(self.index(0, SOURCES), self.index(len(self._pins) - 1, SOURCES))

    def _all_changed(self) -> None:
        if self._pins:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._pins) - 1, len(COLUMNS) - 1))

    def rowCount(self, parent: _Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._pins)

    def columnCount(self, parent: _Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        flags = super().flags(index)
        return flags | Qt.ItemFlag.ItemIsEditable if index.isValid() and index.column() == 0 else flags

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        pin = self.getItem(index)
        if pin is None or role != Qt.ItemDataRole.EditRole or index.column() != 0 or not str(value).strip():
            return False
        self._close(pin)
        pin.expression, pin.instance = parse_pin(str(value))
        self._evaluate(pin)
        self.dataChanged.emit(self.index(index.row(), 0), self.index(index.row(), len(COLUMNS) - 1))
        return True

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # A repaint asks each cell for seven roles; most are answered here without reading the pin's resolution
        # (`current` ranks its sources when read).
        if role not in _ROLES:
            return None
        pin = self.getItem(index)
        if pin is None:
            return None
        column, result = index.column(), pin.resolution
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if column == 0:
                return pin.label
            if column == 1:
                if pin.error is not None:
                    return f"malformed: {pin.error}"
                if result is None:  # (its watch being made, or its first fold at the cursor going on)
                    return "…" if pin.handle is not None or id(pin) in self._unmade else ""
                return short_json(result.value) if result.found else "missing " + ", ".join(result.missing)
            if result is not None and result.found:  # (the last three: ranking thousands would block a paint)
                return ", ".join(f"#{i}" for i in result.last_sources(3))
            return ""
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            if pin.error is not None:
                return QBrush(QColor("#dc2626"))
            if result is not None and not result.found:
                return QBrush(QColor("#b45309"))
        if role == Qt.ItemDataRole.ToolTipRole and column == 1 and result is not None and result.found:
            return short_json(result.value, 2000)
        if role == ResolutionRole:
            return result
        if role == ErrorRole:
            return pin.error
        if role == WatchRole:
            return pin
        return None


class _ReferenceEntry(QLineEdit):
    """The watch box: completes the `†` references the document writes, read again whenever it takes focus."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.references: Callable[[], Sequence[str]] = tuple
        self.setCompleter(reference_completer((), self))

    def focusInEvent(self, event: QFocusEvent) -> None:
        model = self.completer().model()
        assert isinstance(model, QStringListModel)
        model.setStringList(list(self.references()))
        super().focusInEvent(event)


class WatchPanel(QWidget):
    """A box to pin an expression, and the table of pinned ones (Delete removes the selected)."""

    jumpRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = WatchModel(self)
        self.entry = _ReferenceEntry(placeholderText="Pin an expression: †state.user || †input.user  (@instance)")
        self.entry.returnPressed.connect(self._add)
        add = QToolButton()
        add.setIcon(icon("watch"))
        add.setToolTip("Pin the expression")
        add.setAccessibleName("Pin the expression")
        add.clicked.connect(self._add)
        self.table = QTableView()
        self.table.setObjectName("watches")
        cells_by_fusion(self.table)
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 10)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        # Not ResizeToContents: it asks every pinned row for its text after each change (O(pins) per change).
        # Wide enough for three sources such as "#99998, #99999, #100000".
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        from_width = self.table.fontMetrics().horizontalAdvance("#000000, #000000, #000000") + 16
        self._wanted = {0: EXPRESSION_WIDTH, 2: from_width}  # the widths the two fixed columns take when there is room
        self._sharing = False
        header.resizeSection(0, EXPRESSION_WIDTH)
        header.resizeSection(2, from_width)
        header.sectionResized.connect(self._column_resized)
        self.table.viewport().installEventFilter(self)  # a narrow pane: the fixed columns give the value room
        # A double click on the value, or Enter on any cell of the row (a double click only, before): a double click
        # on the expression edits it and activates nothing.
        self.table.activated.connect(lambda index: self._jump(index.siblingAtColumn(1)))
        remove = QAction("Remove Watch", self.table)
        remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # the timeline has its own Delete
        remove.triggered.connect(self.remove_selected)
        self.table.addAction(remove)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.entry)
        top.addWidget(add)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.table)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            self._share_width()
        return False

    def _share_width(self) -> None:
        """The value is what a watch is for: in a narrow pane the expression and source columns give up width to it
        (the value showed as "missin…" between a 260-pixel expression and its sources); with room again they take
        back the width they had (their first, or the one the user dragged them to)."""
        width = self.table.viewport().width()
        header = self.table.horizontalHeader()
        self._sharing = True
        for column, share in ((0, 0.4), (2, 0.25)):
            header.resizeSection(column, min(self._wanted[column], int(width * share)))
        self._sharing = False

    def _column_resized(self, column: int, _old: int, new: int) -> None:
        if not self._sharing and column in self._wanted:
            self._wanted[column] = new  # the user's: kept while the pane has room for it

    def set_reference_source(self, source: Callable[[], Sequence[str]]) -> None:
        """Where the entry's `†` completion comes from; read each time the entry takes focus, not per edit."""
        self.entry.references = source

    def follow(self, document: DocumentModel) -> None:
        """The pins follow `document` (`WatchModel.follow`)."""
        self.model.follow(document)

    def _add(self) -> None:
        if self.entry.text().strip():
            self.model.add(self.entry.text())
            self.entry.clear()

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()}, reverse=True)
        for row in rows:
            self.model.remove(row)

    def _jump(self, index: QModelIndex) -> None:
        result = index.data(ResolutionRole)
        last = result.last_sources(1) if index.column() != 0 and isinstance(result, Resolution) else ()
        if last:
            self.jumpRequested.emit(last[-1])
