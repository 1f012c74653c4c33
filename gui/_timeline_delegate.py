"""`TimelineDelegate` paints one timeline row: number, type icon, kind, instance badge, summary.

It paints and nothing else: all data comes from the model's roles, all behaviour lives in the view. What it draws
is kept as pictures (`Pictures`): the number, and the rest of the row, each keyed by what is drawn in it, so a
repaint of rows that only moved or were shaded anew copies pictures instead of drawing text (docs/performance.md).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ._pictures import Pictures
from ._theme import type_color
from ._timeline_model import LookRole

_Index = QModelIndex | QPersistentModelIndex
_PAD = 6
_ICON = 16
_FUTURE_OPACITY = 0.45  # rows after the time cursor: not part of what the views show
_SELECTED = QStyle.StateFlag.State_Selected
_PANEL = QStyle.PrimitiveElement.PE_PanelItemViewItem
_NUMBER_ALIGN = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_MIDDLE = Qt.AlignmentFlag.AlignVCenter
_TEXT = QPalette.ColorRole.Text
_HIGHLIGHTED_TEXT = QPalette.ColorRole.HighlightedText


class TimelineDelegate(QStyledItemDelegate):
    """Paints a row from the model's roles; rows have one fixed height so the view never measures them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.show_numbers = True
        self._fonts: _Fonts | None = None
        self.pictures = Pictures(self)

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
        style.drawPrimitive(_PANEL, option, painter, widget)
        rect: QRect = option.rect
        palette: QPalette = option.palette
        selected = bool(option.state & _SELECTED)
        text_color = palette.color(_HIGHLIGHTED_TEXT if selected else _TEXT)
        fonts = self._fonts_for(option.font)
        ratio = painter.device().devicePixelRatioF()
        message_index, kind, instance, summary, colour, decoration, future = index.data(LookRole)
        # Rows after the time cursor are shaded inside their pictures: each thing drawn at this opacity, as when
        # the row is drawn straight on the view (the badge's text over its fill stays the same).
        opacity = _FUTURE_OPACITY if future and not selected else 1.0
        x = rect.left() + _PAD
        top, height = rect.top(), rect.height()
        if self.show_numbers:
            if message_index >= 0:
                number = str(message_index)
                size = QSize(fonts.gutter, height)
                key = (number, text_color.rgba(), opacity, fonts.key, height, ratio)
                self.pictures.paint(painter, x, top, key, size, ratio,
                                    lambda p: _number(p, fonts, number, text_color, opacity, height))
            x += fonts.gutter + _PAD
        width = rect.right() - x + 1
        if width > 0:
            light = _light(palette)
            icon_key = decoration.cacheKey() if isinstance(decoration, QIcon) else None
            body = (kind, instance, summary, colour, icon_key, text_color.rgba(), selected, light, opacity, fonts.key,
                    width, height, ratio)
            look = _Look(kind, instance, summary, colour, decoration, text_color, selected, light, opacity)
            self.pictures.paint(painter, x, top, body, QSize(width, height), ratio,
                                 lambda p: _body(p, fonts, look, width, height))


class _Look:
    """What a row's body shows, for drawing it once."""

    def __init__(self, kind: str, instance: str, summary: str, colour: str, decoration: object, text_color: QColor,
                 selected: bool, light: bool, opacity: float) -> None:
        self.kind, self.instance, self.summary, self.colour = kind, instance, summary, colour
        self.decoration, self.text_color, self.selected, self.light = decoration, text_color, selected, light
        self.opacity = opacity


def _dim(color: QColor) -> QColor:
    dim = QColor(color)
    dim.setAlphaF(0.6)
    return dim


def _number(painter: QPainter, fonts: _Fonts, number: str, text_color: QColor, opacity: float, height: int) -> None:
    painter.setOpacity(painter.opacity() * opacity)
    painter.setFont(fonts.font)
    painter.setPen(_dim(text_color))
    painter.drawText(QRect(0, 0, fonts.gutter, height), _NUMBER_ALIGN, number)


def _body(painter: QPainter, fonts: _Fonts, look: _Look, width: int, height: int) -> None:
    """The row after its number, drawn from x = 0: icon, kind, instance badge, elided summary."""
    painter.setOpacity(painter.opacity() * look.opacity)
    rect = QRect(0, 0, width, height)
    x = 0
    if isinstance(look.decoration, QIcon):
        look.decoration.paint(painter, QRect(x, (height - _ICON) // 2, _ICON, _ICON))
    x += _ICON + _PAD
    color = type_color(look.colour)
    painter.setFont(fonts.bold)
    painter.setPen(look.text_color if look.selected else color.darker(115) if look.light else color.lighter(125))
    kind_width = fonts.bold_metrics.horizontalAdvance(look.kind)
    painter.drawText(QRect(x, 0, kind_width + 2, height), _MIDDLE, look.kind)
    x += kind_width + _PAD
    painter.setFont(fonts.font)
    if look.instance:
        x = _badge(painter, fonts.metrics, look.instance, x, rect, color, look.selected) + _PAD
    painter.setPen(look.text_color if look.selected else _dim(look.text_color))
    room = rect.right() - x - _PAD
    if room > 0:
        elided = fonts.metrics.elidedText(look.summary, Qt.TextElideMode.ElideRight, room)
        painter.drawText(QRect(x, 0, room, height), _MIDDLE, elided)


class _Fonts:
    """A row's font, its bold, their metrics and the width of the number column."""

    def __init__(self, font: QFont) -> None:
        self.font = QFont(font)
        self.key = self.font.key()
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
