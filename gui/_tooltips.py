"""Tooltips for cut-off cells: any table or tree cell whose text does not fit (or spans several lines) shows
the whole text on hover, unless its model gives a tooltip of its own. One filter for every view.

A model's own tooltip is its ToolTipRole, or, for a model that makes them only when asked (`MadeTooltips`: a
tooltip costs an engine query, too much to make for every row), what its `tooltip(index)` returns."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QAbstractItemView, QToolTip, QWidget

from ._summary import clipped

PADDING = 12  # the cell's margins and the text's own side bearings, in pixels
LONGEST = 4000  # characters a tooltip shows before its ellipsis, at most


@runtime_checkable
class MadeTooltips(Protocol):
    """A model whose tooltips are made when one is asked for."""

    def tooltip(self, index: QModelIndex | QPersistentModelIndex) -> str | None: ...


class ElidedTooltips(QObject):
    """Install with `install_elided_tooltips(widget)`: covers every item view inside `widget`."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
            return False
        view = watched.parent()
        if not isinstance(view, QAbstractItemView):
            return False
        index = view.indexAt(event.pos())
        model = view.model()
        made = model.tooltip(index) if index.isValid() and isinstance(model, MadeTooltips) else None
        if made:
            QToolTip.showText(event.globalPos(), made, view.viewport(), view.visualRect(index))
            return True
        if not index.isValid() or index.data(Qt.ItemDataRole.ToolTipRole):
            return False  # nothing there, or the model's own tooltip
        text = index.data(Qt.ItemDataRole.DisplayRole)
        if not isinstance(text, str) or not text:
            return False
        rect = view.visualRect(index)
        icon = view.iconSize().width() + 4 if index.data(Qt.ItemDataRole.DecorationRole) is not None else 0
        fits = "\n" not in text and view.fontMetrics().horizontalAdvance(text) + icon + PADDING <= rect.width()
        if fits:
            QToolTip.hideText()
        else:
            QToolTip.showText(event.globalPos(), clipped(text, LONGEST), view.viewport(), rect)
        return True


def install_elided_tooltips(widget: QWidget) -> ElidedTooltips:
    """Give every item view inside `widget` tooltips for its cut-off cells."""
    tips = ElidedTooltips(widget)
    for view in widget.findChildren(QAbstractItemView):
        view.viewport().installEventFilter(tips)
    return tips
