"""The state view: every kind's (and instance's) resolved value at the time cursor, as a tree.

`StateModel` shows the engine's state at the cursor (`CursorState`: every identity's value with the message
that set each path, computed in slices of a few milliseconds) in Qt's own items (`QStandardItemModel`): the
view paints them without calling into Python for each cell (a Python model's repaint costs several times the
same tree in Qt's items; docs/performance.md). A value's rows are made when it is
first shown open (`fetchMore`). What a value shadowed comes from the engine's blame when its tooltip is asked
for (`StateModel.tooltip`, shown by the window's one tooltip filter, `_tooltips.py`).

Roles: the Key column holds NodeRole, PathRole and ChangedRole, the Set by column SourceRole.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPoint, QRect, QSignalBlocker, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QHideEvent,
    QPainter,
    QPaintEvent,
    QRegion,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from contextdeck.engine import MISSING, Context, CursorState, IdentityState, let_go

from ._slices import Budget, slices
from ._summary import short_json

if TYPE_CHECKING:
    from ._document_model import DocumentModel

_Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()
MAX_CHILDREN = 200  # items of one value shown (then "… N more")
OPEN_AT_FIRST = 8  # identities shown open the first time (more: all closed, the list stays readable)
BUDGET_S = 0.006  # the share of a turn of the event loop of each slice of computing the state (`Budget`)
ROWS_PER_PART = 12  # changed identities shown per turn: their repaint stays a few milliseconds (docs/performance.md)
ROWS_MADE_PER_PART = 50  # rows of other identities made per turn (a small part of a frame) before they are shown
BAND_ROWS = 16  # after a reset, rows repainted per turn (a screen of rows at once is most of a frame of text)

NodeRole = Qt.ItemDataRole.UserRole + 1  # the StateNode
SourceRole = Qt.ItemDataRole.UserRole + 2  # index of the message that set the value (or None)
ChangedRole = Qt.ItemDataRole.UserRole + 3  # whether the selected message set this value
PathRole = Qt.ItemDataRole.UserRole + 4  # "¶kind[instance].a.b", the node's stable key
COLUMNS = ("Key", "Value", "Set by")
_FLAGS = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled  # read-only: a double click jumps


@dataclass(eq=False)
class StateNode:
    """One value in the tree: an identity's whole value, or a key or item inside it."""

    label: str
    value: Any
    kind: str
    instance: str | None
    path: tuple[str, ...]
    parent: StateNode | None = None
    row: int = 0
    children: list[StateNode] = field(default_factory=list)  # the nodes of its rows, once made
    source: int | None = None  # the message that set the value
    items: tuple[QStandardItem, ...] = ()  # its row in the model: key, value, set by
    made: bool = False  # whether its children's rows are in the model
    shown_for: int | None = None  # the selected message its highlight was shown for

    @property
    def key(self) -> str:
        identity = f"¶{self.kind}" + (f"[{self.instance}]" if self.instance is not None else "")
        return ".".join((identity, *self.path))

    @property
    def has_children(self) -> bool:
        return isinstance(self.value, dict | list) and bool(self.value)


def _children(node: StateNode, writers: dict[tuple[str, ...], int]) -> list[StateNode]:
    value = node.value
    items: list[tuple[str, Any]]
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return []
    nodes = [StateNode(k, v, node.kind, node.instance, (*node.path, k), node, row,
                       source=writers.get((*node.path, k)))
             for row, (k, v) in enumerate(items[:MAX_CHILDREN])]
    if len(items) > MAX_CHILDREN:
        more = StateNode(f"… {len(items) - MAX_CHILDREN} more", MISSING, node.kind, node.instance, node.path, node,
                         MAX_CHILDREN)
        nodes.append(more)
    return nodes


def _root(row: int, folded: IdentityState) -> StateNode:
    kind, instance = folded.identity
    label = f"¶{kind}" + (f" [{instance}]" if instance is not None else "")
    return StateNode(label, folded.value, kind, instance, (), None, row, source=folded.writer.get(()))


_IDENTITY = operator.attrgetter("identity")
_VALUE = operator.attrgetter("value")
_WRITER = operator.attrgetter("writer")
_SHOWN_FOR = operator.attrgetter("shown_for")
_MADE = operator.attrgetter("made")
_SOURCE = operator.attrgetter("source")


def _same_sources(node: StateNode, writer: dict[tuple[str, ...], int]) -> bool:
    """Whether `writer` names the sources `node` and its rows made so far show: only those paths are read, not the
    tens of thousands a whole kind's writers name."""
    return (node.value is MISSING or node.source == writer.get(node.path)) and all(
        _same_sources(child, writer) for child in node.children)


def _sets_any(node: StateNode, sources: set[int | None]) -> bool:
    """Whether `node` or one of its rows made so far was set by one of `sources` (its highlight changes)."""
    return node.source in sources or any(_sets_any(child, sources) for child in node.children)


def _row(node: StateNode, selected: int | None) -> list[QStandardItem]:
    """`node`'s row: its items, kept on the node to show a new value in place."""
    key, value, setter = QStandardItem(node.label), QStandardItem(), QStandardItem()
    for item in (key, value, setter):
        item.setFlags(_FLAGS)
    key.setData(node, NodeRole)
    key.setData(node.key, PathRole)
    if node.parent is None:
        key.setFont(_BOLD)
    setter.setForeground(_LINK_BRUSH)
    node.items = (key, value, setter)
    _show(node, selected)
    return [key, value, setter]


def _show(node: StateNode, selected: int | None) -> None:
    """Put `node`'s value, setter and highlight (whether `selected` set it) in its items."""
    key, value, setter = node.items
    value.setText(_value_text(node.value))
    setter.setText("" if node.source is None else f"#{node.source}")
    setter.setData(node.source, SourceRole)
    node.shown_for = selected
    changed = selected is not None and node.source == selected
    key.setData(changed, ChangedRole)
    brush = _CHANGED_BRUSH if changed else None  # the selected message set this
    for item in node.items:
        item.setData(brush, Qt.ItemDataRole.BackgroundRole)


class StateModel(QStandardItemModel):
    """The state snapshot as a tree: key, value, and the message that set it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self._roots: list[StateNode] = []
        self._shown: list[IdentityState] = []  # what each root shows, by row: its value and writers
        self._writers: dict[tuple[str, str | None], dict[tuple[str, ...], int]] = {}
        self._source: CursorState | None = None
        self._at: int | None = None

    def refresh(self, context: Context, at: int | None, selected: int | None) -> None:
        """Rebuild from `context` as of the first `at` messages, computed at once."""
        source = CursorState(context)
        self.set_state(selected, source.at(at), source, at)
        source.close()

    def set_state(self, selected: int | None, state: list[IdentityState], source: CursorState | None = None,
                  at: int | None = None) -> None:
        """Show a computed state at once; `selected` (a message index) is highlighted where it set a value."""
        for _part in self.show_in_parts(selected, state, source, at):
            pass

    def show_in_parts(self, selected: int | None, state: list[IdentityState], source: CursorState | None = None,
                      at: int | None = None, rows: int = ROWS_PER_PART) -> Iterator[None]:
        """Show a computed state `rows` changed identities at a time, pausing (a `yield`) between parts.

        When the same identities are shown, only the changed rows are told (`dataChanged`, rows made under a
        changed one are made again), so the view repaints them alone, a part per turn of the event loop when the
        caller pauses between parts (after a far jump most rows change: one repaint of them all is longer than a
        frame); otherwise (other identities, or another document's state) their rows are made aside,
        `ROWS_MADE_PER_PART` per part, and the model is reset with them in a part of its own. Each part leaves the
        model whole: its rows show the new state, the others the previous one, with the writers and highlight that
        went with it."""
        # Another document's state is shown anew: compared value by value with the one before (the same document
        # reopened), it would be read whole in one part.
        other = source is not None and self._source is not None and source.context is not self._source.context
        changed = None if other else self._changed_rows(selected, state)
        self._source, self._at = source, at
        if changed is None:
            # Other identities: the whole tree is shown anew, and the view repaints all of it. Their rows are
            # made aside first, a part per turn, so that the repaint follows a turn that only puts them in.
            roots = [_root(row, folded) for row, folded in enumerate(state)]
            made: list[list[QStandardItem]] = []
            for start in range(0, len(roots), ROWS_MADE_PER_PART):
                made += [_row(node, selected) for node in roots[start:start + ROWS_MADE_PER_PART]]
                yield
            let_go(*self._writers.values())  # (each may name every path of a whole kind)
            self._writers = {folded.identity: folded.writer for folded in state}
            self._shown = list(state)
            self._reset(roots, made)
            return
        last = len(COLUMNS) - 1
        for start in range(0, len(changed), rows):
            part = changed[start:start + rows]
            for row in part:
                self._renew(row, state[row], selected)
            for row in part:
                # A row at a time: a tree view repaints the rows of a one-row `dataChanged`, but for a range of
                # rows it repaints about twice as many (rows 0-11 changed, rows 0-22 repainted).
                self.dataChanged.emit(self.index(row, 0), self.index(row, last))
            if start + rows < len(changed):
                yield

    def _reset(self, roots: list[StateNode], rows: list[list[QStandardItem]]) -> None:
        self.beginResetModel()
        with QSignalBlocker(self):  # the view hears of it once, by the reset
            self.setRowCount(0)
            self._roots = roots
            for row in rows:
                self.appendRow(row)
        self.endResetModel()

    def _renew(self, row: int, folded: IdentityState, selected: int | None) -> None:
        """Show root `row`'s new value in place (the view's indices stay valid); rows made under it are
        removed and, as it is shown open, made again from the new value."""
        node = self._roots[row]
        node.value, node.source = folded.value, folded.writer.get(())
        self._take_writer(row, folded)
        with QSignalBlocker(self):  # told by `show_in_parts`, one `dataChanged` per changed row
            _show(node, selected)
        if node.made:
            key = node.items[0]
            key.removeRows(0, key.rowCount())
            node.children, node.made = [], False
            self._make_children(node)

    def _take_writer(self, row: int, folded: IdentityState) -> None:
        old = self._writers.get(folded.identity)
        if old is not None and old is not folded.writer:  # freed in slices: it may name every path of a whole kind
            let_go(old)
        self._writers[folded.identity] = folded.writer
        self._shown[row] = folded

    def _make_children(self, node: StateNode) -> None:
        node.children = _children(node, self._writers.get((node.kind, node.instance), {}))
        node.made = True  # before the rows go in: the view asks again whether there are more to fetch
        for child in node.children:
            node.items[0].appendRow(_row(child, node.shown_for))

    def _changed_rows(self, selected: int | None, state: list[IdentityState]) -> list[int] | None:
        """The roots to show anew, or None when the whole tree must be reset (other identities). A root's
        highlight is compared with the selection it was shown for (a state shown in parts may have been left
        half-way for a newer one). A root shown as it is takes its new writers (what is made later reads them).

        A partial update costs what it changes: passes in C over the rows pick the few that Python compares, those
        whose value or writers are other objects, whose rows below are made, or whose value was set by the selection
        or one a root was shown for (its highlight may change); every other root is the same, with the same writers.
        At a million messages a cursor move changes a few identities of thousands."""
        shown, roots = self._shown, self._roots
        if len(state) != len(shown) or not roots or list(map(_IDENTITY, state)) != list(map(_IDENTITY, shown)):
            return None
        marked = {*map(_SHOWN_FOR, roots), selected} - {None}
        other = map(operator.or_, map(operator.is_not, map(_VALUE, shown), map(_VALUE, state)),
                    map(operator.is_not, map(_WRITER, shown), map(_WRITER, state)))
        looked = map(operator.or_, other, map(operator.or_, map(_MADE, roots), map(marked.__contains__,
                                                                                    map(_SOURCE, roots))))
        changed = []
        for row in compress(range(len(roots)), looked):
            node, folded = roots[row], state[row]
            same = (node.value is folded.value or node.value == folded.value) and _same_sources(node, folded.writer)
            marking = {node.shown_for, selected} - {None} if node.shown_for != selected else set()
            if not same or (marking and _sets_any(node, marking)):
                changed.append(row)
            else:
                self._take_writer(row, folded)
        return changed

    def getItem(self, index: _Index) -> StateNode | None:
        """The node shown in `index`'s row."""
        node = index.sibling(index.row(), 0).data(NodeRole) if index.isValid() else None
        return node if isinstance(node, StateNode) else None

    # Rows under a value are made the first time it is shown open: hasChildren answers for them before.
    def hasChildren(self, parent: _Index = _ROOT) -> bool:
        if not parent.isValid():
            return bool(self._roots)
        node = self.getItem(parent) if parent.column() == 0 else None
        return node is not None and node.has_children

    def canFetchMore(self, parent: _Index) -> bool:
        node = self.getItem(parent) if parent.isValid() and parent.column() == 0 else None
        return node is not None and not node.made and node.has_children

    def fetchMore(self, parent: _Index) -> None:
        if self.canFetchMore(parent):
            node = self.getItem(parent)
            assert node is not None
            self._make_children(node)

    def shadowed(self, node: StateNode) -> str | None:
        """What the write that set `node` replaced there, from the engine's blame (None when unknown)."""
        if self._source is None or node.value is MISSING:
            return None
        entries = self._source.blame(node.kind, node.instance, node.path, self._at).entries
        if not entries or entries[-1].index != node.source:
            return None
        before = entries[-1].shadowed
        return "nothing (it was not set)" if before is MISSING else short_json(before, 200)

    def tooltip(self, index: _Index) -> str | None:
        """The tooltip of a cell, made when asked: the setter and what it replaced, or the whole value."""
        node = self.getItem(index)
        if node is None:
            return None
        if index.column() == 2:
            if node.source is None:
                return None
            shadowed = self.shadowed(node)
            return f"Set by message {node.source}; click to jump there" + (
                f"\nIt replaced: {shadowed}" if shadowed is not None else "")
        text = json.dumps(node.value, ensure_ascii=False, indent=2) if node.value is not MISSING else ""
        return node.key + ("\n" + text[:2000] if text else "")


_CHANGED_BRUSH = QBrush(QColor(250, 204, 21, 70))
_LINK_BRUSH = QBrush(QColor("#4f6bed"))
_BOLD = QFont()
_BOLD.setBold(True)


def _value_text(value: Any) -> str:
    if value is MISSING:
        return ""
    if isinstance(value, dict):
        return f"{{{len(value)} key{'s' if len(value) != 1 else ''}}}  " + short_json(value, 80)
    if isinstance(value, list):
        return f"[{len(value)} item{'s' if len(value) != 1 else ''}]  " + short_json(value, 80)
    return short_json(value, 200)


class StateView(QTreeView):
    """The state tree; clicking "Set by" (or double-clicking a row) asks to jump to that message."""

    jumpRequested = Signal(int)
    updated = Signal()  # a newly computed state is shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source: CursorState | None = None
        self._left: list[CursorState] = []  # the states of documents gone, to close in a slice (`_close_left`)
        self._steps: Iterator[bool | None] | None = None
        self._computed = False  # the steps are done: the state is shown on the next turn
        self._showing: Iterator[None] | None = None  # the computed state being shown, a part per turn
        self._keep: set[str] = set()  # the paths expanded when it began to be shown
        self._first = False  # nothing was shown before it (a few identities are opened)
        self._job: tuple[int | None, int | None, list[IdentityState]] | None = None
        self.state_model = StateModel(self)
        self.setModel(self.state_model)
        self.setObjectName("state")
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        # Not ResizeToContents: it asks the model for every shown row's text again after each change,
        # which doubled the cost of repainting the tree after a cursor move. Wide enough for "#1000000".
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 150)
        header.resizeSection(2, self.fontMetrics().horizontalAdvance("#0000000") + 16)
        self.clicked.connect(self._clicked)
        self.activated.connect(self._jump)  # a double click, or Enter from the keys (a double click only, before)
        self._expanded: set[str] = set()
        self.expanded.connect(lambda index: self._expanded.add(str(index.data(PathRole))))
        self.collapsed.connect(lambda index: self._expanded.discard(str(index.data(PathRole))))
        # After a reset (a far jump to other identities) the repaint of every row shown is spread over turns.
        self._bands: int | None = None  # bands of `BAND_ROWS` rows due so far, top down (None: paint as asked)
        self._unpainted = QRegion()  # asked for below the bands due: painted when its band is
        self._on_screen = False  # the viewport shows this view's rows (what a band leaves below it)
        self.state_model.modelReset.connect(self._paint_in_bands)

    def expanded_paths(self) -> list[str]:
        """The paths of the expanded rows (kept per document in its settings)."""
        return sorted(self._expanded)

    def set_expanded_paths(self, paths: list[str]) -> None:
        """Expand these paths when the next state is shown (another document was opened)."""
        self._expanded = set(paths)

    def follow(self, document: DocumentModel) -> None:
        """Show `document`'s state at its time cursor whenever its views are due (a selection, an edit)."""
        self._document = document
        document.viewsDue.connect(self._views_due)  # a bound method: Qt drops it with the view

    def _views_due(self) -> None:
        document = self._document
        self.refresh(document.context(), document.at(), document.selected_message())

    def refresh(self, context: Context, at: int | None, selected: int | None) -> None:
        """Recompute the state as of the first `at` messages, in slices on the next turns of the event loop.

        Not at once: the selection that moved the cursor has just asked for a repaint of the window, and the
        first slice waits until it is done. The previous state stays until the new one is ready."""
        if self._source is None or context is not self._source.context:
            self._follow(context)
        assert self._source is not None
        state: list[IdentityState] = []
        self._showing = None  # a newer state is coming: the rest of the one being shown is not
        self._job = (at, selected, state)
        self._steps, self._computed = self._source.steps(at, state), False
        slices().start(self._work)

    def _follow(self, context: Context) -> None:
        # The engine keeps the scan of the messages between refreshes until the context changes.
        if self._source is not None:  # closed in a slice of its own: at a million messages, 47,000 marks to let go of
            self._left.append(self._source)
            slices().start(self._close_left)
        self._source = CursorState(context)

    def _close_left(self) -> None:
        while self._left:
            self._left.pop().close()

    def is_busy(self) -> bool:
        """Whether a state is being computed or shown (its rows set, or repainted band by band)."""
        return self._steps is not None or self._showing is not None or self._bands is not None

    def _work(self) -> None:
        if self._showing is not None:
            self._show_part()
            return
        steps = self._steps
        if steps is None:
            return
        if self._computed:
            self._steps, self._computed = None, False
            self._show()
            return
        budget = Budget(BUDGET_S)
        try:
            while budget.more():
                if next(steps):  # one long step is next (a mark's copy of who set each path): it begins a slice
                    break
        except StopIteration:
            # Shown in a turn of its own: the slice has used its time, and setting the rows after a far jump
            # takes about as much again at 100,000 messages.
            self._computed = True
        slices().start(self._work)

    def _show(self) -> None:
        """Start showing the computed state, its first changed rows in this turn (`_show_part`)."""
        assert self._job is not None
        at, selected, state = self._job
        self._keep = set(self._expanded)
        self._first = not self._keep and not self.state_model.rowCount()
        self._showing = self.state_model.show_in_parts(selected, state, self._source, at)
        self._show_part()

    def _show_part(self) -> None:
        assert self._showing is not None
        try:
            next(self._showing)
            done = False
        except StopIteration:
            done = True
        if self._keep or (self._first and done):
            # Paths expanded before stay expanded (a path whose row is not shown yet, a key that comes back
            # later, stays in `_expanded` for the next state instead of being forgotten).
            self._restore(QModelIndex(), self._keep, self._first and done)
        if not done:
            slices().start(self._work)  # the next part on the next turn: each part's repaint is a turn of its own
            return
        self._showing = None
        self.updated.emit()

    def _restore(self, parent: QModelIndex, keep: set[str], first: bool) -> None:
        model = self.state_model
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            key = str(index.data(PathRole))
            if key in keep or (first and not parent.isValid() and model.rowCount() <= OPEN_AT_FIRST):
                self.expand(index)
                model.fetchMore(index)  # its rows now, even when the view lays itself out later
                self._restore(index, keep, False)

    def _paint_in_bands(self) -> None:
        """Repaint the rows after a reset `BAND_ROWS` at a time, one band per turn from the top: a screen of rows
        at once is most of a frame of GUI-thread CPU (laying out text), and the turn that resets also lays out
        the tree and repaints its scroll bar and the watches. Until its band comes a row keeps
        the pixels of the previous state, as the rows of a state shown in parts do (`show_in_parts`)."""
        if not self._on_screen:
            return  # nothing of this view's own on screen to keep: painted whole, as asked
        if self._bands is None:
            self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)  # no background wiped first
        self._bands = 1

    def _band_bottom(self) -> int:
        """The bottom of the bands due, in the viewport (a row's edge: the tree scrolls per item)."""
        assert self._bands is not None
        top = self.indexAt(QPoint(0, 0))
        height = self.rowHeight(top) if top.isValid() else 0
        return self._bands * BAND_ROWS * height if height > 0 else self.viewport().height()

    def _next_band(self) -> None:
        if self._bands is None:
            return
        self._bands += 1
        if self._band_bottom() >= self.viewport().height():
            self._paint_whole()
        else:
            self.viewport().update(self._unpainted)  # the bands due are painted, the rest asked for again
            self._unpainted = QRegion()

    def _paint_whole(self) -> None:
        """Back to painting what is asked: what bands left is repainted (Qt wipes the background first)."""
        if self._bands is None:
            return
        self._bands = None
        viewport = self.viewport()
        viewport.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        viewport.update(self._unpainted)
        self._unpainted = QRegion()

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._bands is None:
            super().paintEvent(event)
            self._on_screen = True
            return
        self.executeDelayedItemsLayout()  # the rows' places, as the tree's own paint does first
        viewport = self.viewport()
        due = event.region().intersected(QRect(0, 0, viewport.width(), self._band_bottom()))
        self._unpainted += event.region().subtracted(due)
        if not due.isEmpty():
            painter = QPainter(viewport)
            painter.setClipRegion(due)
            # What Qt does first when the viewport is not opaque (clipped to `due`).
            painter.fillRect(due.boundingRect(), viewport.palette().brush(viewport.backgroundRole()))
            self.drawTree(painter, due)
            painter.end()
        if self._unpainted.isEmpty():
            self._paint_whole()  # nothing was left below the bands (a short screen)
        else:
            slices().start(self._next_band)

    # Pixels a band leaves are this view's previous rows only while they stay where they were.
    def scrollContentsBy(self, dx: int, dy: int) -> None:
        banded = self._bands is not None
        self._paint_whole()
        super().scrollContentsBy(dx, dy)  # moves the pixels on screen, the previous rows' with them
        if banded:
            self.viewport().update()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:  # the view's, or a scroll bar shown or hidden
            self._paint_whole()
            self._on_screen = False  # until painted at the new size
        return super().viewportEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self._paint_whole()
        self._on_screen = False
        super().hideEvent(event)

    def _clicked(self, index: QModelIndex) -> None:
        if index.column() == 2:
            self._jump(index)

    def _jump(self, index: QModelIndex) -> None:
        source = index.siblingAtColumn(2).data(SourceRole)
        if isinstance(source, int):
            self.jumpRequested.emit(source)
