"""The state view: every kind's (and instance's) resolved value at the time cursor, as a tree.

`StateModel` is a thin model over a snapshot the view rebuilds (debounced) when the context or the
cursor changes; which message set a node is looked up lazily, only for the rows a view asks about.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from contextdeck.engine import MISSING, Context

from ._blame import last_writer
from ._summary import short_json

_Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()
MAX_CHILDREN = 200  # a huge array shows its first items and a "… more" row

NodeRole = Qt.ItemDataRole.UserRole + 1  # the StateNode
SourceRole = Qt.ItemDataRole.UserRole + 2  # index of the message that set the value (or None)
ChangedRole = Qt.ItemDataRole.UserRole + 3  # whether the selected message set this value
PathRole = Qt.ItemDataRole.UserRole + 4  # "¶kind[instance].a.b", the node's stable key
COLUMNS = ("Key", "Value", "Set by")


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
    children: list[StateNode] = field(default_factory=list)
    _source: int | bool | None = False  # False: not looked up yet

    @property
    def key(self) -> str:
        identity = f"¶{self.kind}" + (f"[{self.instance}]" if self.instance is not None else "")
        return ".".join((identity, *self.path))


def _children(node: StateNode) -> list[StateNode]:
    value = node.value
    items: list[tuple[str, Any]]
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return []
    nodes = [StateNode(k, v, node.kind, node.instance, (*node.path, k), node, row)
             for row, (k, v) in enumerate(items[:MAX_CHILDREN])]
    if len(items) > MAX_CHILDREN:
        more = StateNode(f"… {len(items) - MAX_CHILDREN} more", MISSING, node.kind, node.instance, node.path, node,
                         MAX_CHILDREN, _source=None)
        nodes.append(more)
    return nodes


def snapshot(context: Context, at: int | None) -> list[StateNode]:
    """The top-level nodes (one per identity) of the state as of the first `at` messages."""
    roots: list[StateNode] = []
    for row, (kind, instance) in enumerate(context.identities(at)):
        label = f"¶{kind}" + (f" [{instance}]" if instance is not None else "")
        roots.append(StateNode(label, context.value_of(kind, instance, at), kind, instance, (), None, row))
    return roots


class StateModel(QAbstractItemModel):
    """The state snapshot as a tree: key, value, and the message that set it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._context: Context | None = None
        self._at: int | None = None
        self._selected: int | None = None
        self._roots: list[StateNode] = []
        self._expanded: dict[int, list[StateNode]] = {}

    def refresh(self, context: Context, at: int | None, selected: int | None) -> None:
        """Rebuild from `context` as of the first `at` messages; `selected` is highlighted as the changer."""
        self.beginResetModel()
        self._context, self._at, self._selected = context, at, selected
        self._roots = snapshot(context, at)
        self._expanded.clear()
        self.endResetModel()

    def _kids(self, node: StateNode | None) -> list[StateNode]:
        if node is None:
            return self._roots
        if not node.children and isinstance(node.value, dict | list) and node.value:
            node.children = _children(node)
        return node.children

    def getItem(self, index: _Index) -> StateNode | None:
        node = index.internalPointer() if index.isValid() else None
        return node if isinstance(node, StateNode) else None

    def source_of(self, node: StateNode) -> int | None:
        """The message that set `node` (looked up once, when first shown)."""
        if node._source is False:
            if self._context is None or (node.value is MISSING and node.parent is not None):
                node._source = None
            else:
                node._source = last_writer(self._context, node.kind, node.instance, node.path, self._at)
        return None if isinstance(node._source, bool) else node._source

    def index(self, row: int, column: int = 0, parent: _Index = _ROOT) -> QModelIndex:
        if not 0 <= column < len(COLUMNS) or (parent.isValid() and parent.column() != 0):
            return QModelIndex()
        kids = self._kids(self.getItem(parent))
        return self.createIndex(row, column, kids[row]) if 0 <= row < len(kids) else QModelIndex()

    def parent(self, child: _Index = _ROOT) -> QModelIndex:  # type: ignore[override]
        node = self.getItem(child)
        if node is None or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: _Index = _ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._kids(self.getItem(parent)))

    def columnCount(self, parent: _Index = _ROOT) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: _Index = _ROOT) -> bool:
        node = self.getItem(parent)
        if node is None:
            return not parent.isValid() and bool(self._roots)
        return parent.column() == 0 and isinstance(node.value, dict | list) and bool(node.value)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.getItem(index)
        if node is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return node.label
            if column == 1:
                return _value_text(node.value)
            source = self.source_of(node)
            return "" if source is None else f"#{source}"
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 2:
                source = self.source_of(node)
                return None if source is None else f"Set by message {source}; click to jump there"
            text = json.dumps(node.value, ensure_ascii=False, indent=2) if node.value is not MISSING else ""
            return node.key + ("\n" + text[:2000] if text else "")
        if role == NodeRole:
            return node
        if role == SourceRole:
            return self.source_of(node)
        if role == PathRole:
            return node.key
        if role == ChangedRole:
            return self._selected is not None and self.source_of(node) == self._selected
        if role == Qt.ItemDataRole.BackgroundRole:
            if self._selected is not None and self.source_of(node) == self._selected:
                return QBrush(QColor(250, 204, 21, 70))  # the selected message set this
            return None
        if role == Qt.ItemDataRole.FontRole and column == 0 and node.parent is None:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return QBrush(QColor("#4f6bed"))
        return None


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

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state_model = StateModel(self)
        self.setModel(self.state_model)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(0, 150)
        self.clicked.connect(self._clicked)
        self.doubleClicked.connect(self._jump)
        self._expanded: set[str] = set()
        self.expanded.connect(lambda index: self._expanded.add(str(index.data(PathRole))))
        self.collapsed.connect(lambda index: self._expanded.discard(str(index.data(PathRole))))

    def refresh(self, context: Context, at: int | None, selected: int | None) -> None:
        """Rebuild, keeping which nodes were open (top-level ones open by default)."""
        keep = set(self._expanded)
        first = not keep and not self.state_model.rowCount()
        self.state_model.refresh(context, at, selected)
        self._expanded = set()
        self._restore(QModelIndex(), keep, first)

    def _restore(self, parent: QModelIndex, keep: set[str], first: bool) -> None:
        model = self.state_model
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            key = str(index.data(PathRole))
            if key in keep or (first and not parent.isValid()):
                self.expand(index)
                self._restore(index, keep, False)

    def _clicked(self, index: QModelIndex) -> None:
        if index.column() == 2:
            self._jump(index)

    def _jump(self, index: QModelIndex) -> None:
        source = index.siblingAtColumn(2).data(SourceRole)
        if isinstance(source, int):
            self.jumpRequested.emit(source)
