"""`TimelineDelegate` paints one timeline row: number, type icon, kind, instance badge, summary.

It paints and nothing else: all data comes from the model's roles, all behaviour lives in the view.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ._theme import type_color
from ._timeline_model import InstanceRole, IsOutputRole, KindRole, MessageIndexRole, SummaryRole, TypeRole

_Index = QModelIndex | QPersistentModelIndex
_PAD = 6
_ICON = 16


class TimelineDelegate(QStyledItemDelegate):
    """Paints a row from the model's roles; rows have one fixed height so the view never measures them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.show_numbers = True

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        return QSize(200, row_height(option.fontMetrics))  # type: ignore[attr-defined]

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        widget = option.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else QApplication.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget)
        rect: QRect = option.rect  # type: ignore[attr-defined]
        palette: QPalette = option.palette  # type: ignore[attr-defined]
        selected = bool(option.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        text_color = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = QColor(text_color)
        dim.setAlphaF(0.6)
        font = QFont(option.font)  # type: ignore[attr-defined]
        metrics = QFontMetrics(font)
        painter.save()
        x = rect.left() + _PAD
        message_index = index.data(MessageIndexRole)
        if self.show_numbers:
            gutter = metrics.horizontalAdvance("000000")
            if isinstance(message_index, int) and message_index >= 0 and index.parent() == QModelIndex():
                painter.setPen(dim)
                painter.drawText(QRect(x, rect.top(), gutter, rect.height()),
                                 Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(message_index))
            x += gutter + _PAD
        decoration = index.data(Qt.ItemDataRole.DecorationRole)
        if isinstance(decoration, QIcon):
            top = rect.top() + (rect.height() - _ICON) // 2
            decoration.paint(painter, QRect(x, top, _ICON, _ICON))
        x += _ICON + _PAD
        message_type = str(index.data(TypeRole))
        color = type_color("output" if index.data(IsOutputRole) else message_type)
        bold = QFont(font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text_color if selected else color.darker(115) if _light(palette) else color.lighter(125))
        kind = str(index.data(KindRole) or "")
        kind_width = QFontMetrics(bold).horizontalAdvance(kind)
        painter.drawText(QRect(x, rect.top(), kind_width + 2, rect.height()), Qt.AlignmentFlag.AlignVCenter, kind)
        x += kind_width + _PAD
        painter.setFont(font)
        instance = str(index.data(InstanceRole) or "")
        if instance:
            x = _badge(painter, metrics, instance, x, rect, color, selected) + _PAD
        summary = str(index.data(SummaryRole) or "")
        painter.setPen(dim if not selected else text_color)
        room = rect.right() - x - _PAD
        if room > 0:
            elided = metrics.elidedText(summary, Qt.TextElideMode.ElideRight, room)
            painter.drawText(QRect(x, rect.top(), room, rect.height()), Qt.AlignmentFlag.AlignVCenter, elided)
        painter.restore()


def row_height(metrics: QFontMetrics) -> int:
    return metrics.height() + 10


def _light(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() > 128


def _badge(painter: QPainter, metrics: QFontMetrics, text: str, x: int, rect: QRect, color: QColor,
           selected: bool) -> int:
    """A rounded pill with `text`; returns where the next thing may start."""
    width = metrics.horizontalAdvance(text) + 10
    height = metrics.height() + 2
    pill = QRect(x, rect.top() + (rect.height() - height) // 2, width, height)
    fill = QColor(color)
    fill.setAlphaF(0.35 if selected else 0.18)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(fill)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.drawRoundedRect(pill, height / 2, height / 2)
    painter.setPen(color if not selected else QColor("white"))
    painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, text)
    return pill.right()
