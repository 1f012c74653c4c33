"""`TimelineDelegate` paints one timeline row: number, type icon, kind, instance badge, summary.

It paints and nothing else: all data comes from the model's roles, all behaviour lives in the view.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ._theme import type_color
from ._timeline_model import LookRole

_Index = QModelIndex | QPersistentModelIndex
_PAD = 6
_ICON = 16


class TimelineDelegate(QStyledItemDelegate):
    """Paints a row from the model's roles; rows have one fixed height so the view never measures them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.show_numbers = True
        self._fonts: _Fonts | None = None

    def _fonts_for(self, font: QFont) -> _Fonts:
        # Made once per font: a screen of rows would otherwise make two fonts and their metrics per row.
        if self._fonts is None or self._fonts.font != font:
            self._fonts = _Fonts(font)
        return self._fonts

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        return QSize(200, row_height(option.fontMetrics))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        widget = option.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget)
        rect: QRect = option.rect
        palette: QPalette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        text_color = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = QColor(text_color)
        dim.setAlphaF(0.6)
        fonts = self._fonts_for(option.font)
        font, metrics = fonts.font, fonts.metrics
        painter.save()
        x = rect.left() + _PAD
        message_index, kind, instance, summary, colour, decoration, future = index.data(LookRole)
        if future and not selected:
            painter.setOpacity(0.45)  # after the time cursor: not part of what the views show
        if self.show_numbers:
            gutter = fonts.gutter
            if message_index >= 0:
                painter.setPen(dim)
                painter.drawText(QRect(x, rect.top(), gutter, rect.height()),
                                 Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(message_index))
            x += gutter + _PAD
        if isinstance(decoration, QIcon):
            top = rect.top() + (rect.height() - _ICON) // 2
            decoration.paint(painter, QRect(x, top, _ICON, _ICON))
        x += _ICON + _PAD
        color = type_color(colour)
        painter.setFont(fonts.bold)
        painter.setPen(text_color if selected else color.darker(115) if _light(palette) else color.lighter(125))
        kind_width = fonts.bold_metrics.horizontalAdvance(kind)
        painter.drawText(QRect(x, rect.top(), kind_width + 2, rect.height()), Qt.AlignmentFlag.AlignVCenter, kind)
        x += kind_width + _PAD
        painter.setFont(font)
        if instance:
            x = _badge(painter, metrics, instance, x, rect, color, selected) + _PAD
        painter.setPen(dim if not selected else text_color)
        room = rect.right() - x - _PAD
        if room > 0:
            elided = metrics.elidedText(summary, Qt.TextElideMode.ElideRight, room)
            painter.drawText(QRect(x, rect.top(), room, rect.height()), Qt.AlignmentFlag.AlignVCenter, elided)
        painter.restore()


class _Fonts:
    """A row's font, its bold, their metrics and the width of the number column."""

    def __init__(self, font: QFont) -> None:
        self.font = QFont(font)
        self.metrics = QFontMetrics(self.font)
        self.bold = QFont(font)
        self.bold.setBold(True)
        self.bold_metrics = QFontMetrics(self.bold)
        self.gutter = self.metrics.horizontalAdvance("000000")


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
