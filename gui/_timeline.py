"""The timeline panel: a filter box, the message table and the calls of the selected plan or solution.

The messages are shown by a QTableView with a fixed row height (see docs/workbench.md for the
measurements that chose it over QTreeView and QListView); the child rows of the same `TimelineModel`
(calls) are shown by a small tree view rooted at the selected plan message.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QSplitter,
    QTableView,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ._theme import icon
from ._timeline_delegate import TimelineDelegate, row_height
from ._timeline_model import InstanceRole, KindRole, SummaryRole, TimelineModel, TypeRole

_Index = QModelIndex | QPersistentModelIndex


class TimelineFilter(QSortFilterProxyModel):
    """Keeps the rows that match every word of the filter: `kind:K`, `instance:I` (or `@I`), or text."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._kinds: list[str] = []
        self._instances: list[str] = []
        self._words: list[str] = []

    def set_query(self, query: str) -> None:
        self.beginFilterChange()
        kinds, instances, words = [], [], []
        for token in query.split():
            lowered = token.lower()
            if lowered.startswith("kind:"):
                kinds.append(lowered[5:])
            elif lowered.startswith(("instance:", "@")):
                instances.append(token.split(":", 1)[1] if ":" in token else token[1:])
            else:
                words.append(lowered)
        self._kinds, self._instances, self._words = kinds, instances, words
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if source_parent.isValid():
            return True  # calls follow their plan
        index = self.sourceModel().index(source_row, 0)
        kind = str(index.data(KindRole)).lower()
        kinds = (kind, str(index.data(TypeRole)).lower())
        if self._kinds and not any(k in kinds for k in self._kinds):
            return False
        if self._instances and str(index.data(InstanceRole)) not in self._instances:
            return False
        text = f"{kind} {index.data(SummaryRole)}".lower()
        return all(word in text for word in self._words)


class TimelinePanel(QWidget):
    """Filter box, message table, calls of the selected row. Emits `currentChanged(row index)`."""

    currentChanged = Signal(QModelIndex)  # an index of the TimelineModel (invalid when none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model: TimelineModel | None = None
        self._filter = TimelineFilter(self)
        self.filter_box = QLineEdit(placeholderText="Filter — kind:state @① or any text")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.addAction(icon("filter"), QLineEdit.ActionPosition.LeadingPosition)
        self.filter_box.textChanged.connect(self._filter_changed)
        self.table = QTableView()
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
        self.calls = QTreeView()
        self.calls.setObjectName("calls")
        self.calls.setHeaderHidden(True)
        self.calls.setRootIsDecorated(False)
        self.calls.setUniformRowHeights(True)
        self.calls.setItemDelegate(TimelineDelegate(self.calls))
        self.calls.hide()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.calls)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.filter_box)
        layout.addWidget(splitter)

    # -- model -----------------------------------------------------------------------------------

    def set_model(self, model: TimelineModel) -> None:
        self._model = model
        self._filter.setSourceModel(model)
        self._detach_calls()
        model.rowsAboutToBeRemoved.connect(self._rows_leaving)
        self._show(self._filter if self._filter_active() else model, keep_current=False)

    def model(self) -> TimelineModel | None:
        return self._model

    def _filter_active(self) -> bool:
        return bool(self.filter_box.text().strip())

    def _show(self, model: Any, keep_current: bool = True) -> None:
        # The proxy is only in the way while a filter is typed: unfiltered, the table reads the model directly.
        if self.table.model() is model:
            return
        current = self.current_index() if keep_current else QModelIndex()
        self.table.setModel(model)
        self.table.selectionModel().currentRowChanged.connect(self._current_row_changed)
        if current.isValid():
            self.set_current(current)

    def _filter_changed(self, text: str) -> None:
        if self._model is None:
            return
        self._filter.set_query(text)
        self._show(self._filter if text.strip() else self._model)

    # -- selection -------------------------------------------------------------------------------

    def current_index(self) -> QModelIndex:
        """The selected row as an index of the TimelineModel."""
        index = self.table.currentIndex()
        if index.isValid() and index.model() is self._filter:
            return self._filter.mapToSource(index)
        return QModelIndex(index)

    def set_current(self, index: _Index) -> None:
        """Select a row (an index of the TimelineModel) and scroll to it."""
        if self.table.model() is self._filter:
            index = self._filter.mapFromSource(index)
        if not index.isValid():
            return
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)

    def _current_row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        source = self._filter.mapToSource(current) if current.model() is self._filter else current
        if source.isValid() and source.model() is not self._model:
            return  # the previous document's model, on its way out
        self._show_calls(source)
        self.currentChanged.emit(source)

    def _show_calls(self, index: QModelIndex) -> None:
        if self._model is not None and index.isValid() and self._model.rowCount(index) > 0:
            if self.calls.model() is not self._model:
                self.calls.setModel(self._model)
            self.calls.setRootIndex(index)
            self.calls.show()
        else:
            self._detach_calls()

    def _detach_calls(self) -> None:
        # Without its root the calls view would show (and lay out) every message: let go of the model.
        self.calls.hide()
        self.calls.setModel(None)  # type: ignore[arg-type]

    def _rows_leaving(self, parent: QModelIndex, first: int, last: int) -> None:
        root = self.calls.rootIndex()
        if not parent.isValid() and root.isValid() and first <= root.row() <= last:
            self._detach_calls()

    def add_actions(self, actions: list[QAction]) -> None:
        """Actions of the table's context menu (and their shortcuts while it has the focus)."""
        self.table.addActions(actions)
