"""The window's small touches over the Fusion style, drawn in the palette's colours.

An application-wide style sheet did this before: switching the theme then had Qt polish every widget again,
a cost that grows with the widgets (a 500-call plan form has thousands). This style is set once; a theme
switch is a palette change only, and each touch reads its colours from the palette as it paints.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QStyleOptionDockWidget,
    QWidget,
)

from ._icons import dark as dark  # (re-exported: the banner and the audit take it from here)
from ._icons import icon as named_icon

DOCK_TITLE_PADDING = 8  # the title's text from the edges
DISABLED_ICON_OPACITY = 0.35
TAB_PADDING = QSize(8, 4)  # added to Fusion's own tab size (both sides together)
HEADER_PADDING = QSize(4, 2)
# Item views whose rows breathe a little, by object name: the state tree, the call inspector's parameters.
ROW_PADDING = {"state": QSize(0, 4), "callParameters": QSize(4, 6)}


EXTENSION_ICONS = {QStyle.StandardPixmap.SP_ToolBarHorizontalExtensionButton: "more-right",
                   QStyle.StandardPixmap.SP_ToolBarVerticalExtensionButton: "more-down"}


def cells_by_fusion(view: QAbstractItemView) -> None:
    """`view`'s cells drawn by Qt's own Fusion, not through `Touches`, which touches no part of them (nor of the
    view's frame; its header and scroll bars keep the window's style): a paint calls the style a few times a cell,
    and each call from C++ into Python was a third of a paint of the calls view. Not for a view whose rows
    `ROW_PADDING` makes roomier, nor one ever disabled (`Touches` fades disabled icons)."""
    style = QStyleFactory.create("Fusion")
    style.setParent(view)
    view.setStyle(style)


def line_colour(palette: QPalette) -> QColor:
    """The colour of the thin lines between parts (dock titles, headers, the status bar)."""
    return palette.color(QPalette.ColorRole.Midlight if dark(palette) else QPalette.ColorRole.Mid)


class Touches(QProxyStyle):
    """Fusion with flat dock titles and header sections, roomier tabs, a line above the status bar."""

    def __init__(self) -> None:
        super().__init__("Fusion")

    def sizeFromContents(self, kind: QStyle.ContentsType, option: QStyleOption, size: QSize,
                         widget: QWidget | None = None) -> QSize:
        found = super().sizeFromContents(kind, option, size, widget)  # type: ignore[arg-type]
        if kind == QStyle.ContentsType.CT_TabBarTab:
            return found + TAB_PADDING
        if kind == QStyle.ContentsType.CT_HeaderSection:
            return found + HEADER_PADDING
        if kind == QStyle.ContentsType.CT_ItemViewItem and widget is not None:
            padding = ROW_PADDING.get(widget.objectName())
            return found if padding is None else found + padding
        return found

    def standardIcon(self, icon: QStyle.StandardPixmap, option: QStyleOption | None = None,
                     widget: QWidget | None = None) -> QIcon:
        # A toolbar's More tools chevrons: Fusion's are a dark grey picture, faint on the dark theme's window; ours
        # follow the palette as the toolbar's icons do.
        more = EXTENSION_ICONS.get(icon)
        if more is not None:
            return named_icon(more)
        return super().standardIcon(icon, option, widget)

    def drawControl(self, element: QStyle.ControlElement, option: QStyleOption, painter: QPainter,
                    widget: QWidget | None = None) -> None:
        if element == QStyle.ControlElement.CE_DockWidgetTitle and isinstance(option, QStyleOptionDockWidget):
            self._dock_title(option, painter)
            return
        if element == QStyle.ControlElement.CE_HeaderSection:
            rect, palette = option.rect, option.palette
            painter.fillRect(rect, palette.color(QPalette.ColorRole.Button))
            painter.setPen(line_colour(palette))
            painter.drawLine(rect.topRight(), rect.bottomRight())
            painter.drawLine(rect.bottomLeft(), rect.bottomRight())
            return
        super().drawControl(element, option, painter, widget)

    def _dock_title(self, option: QStyleOptionDockWidget, painter: QPainter) -> None:
        rect: QRect = option.rect
        palette: QPalette = option.palette
        painter.save()
        painter.fillRect(rect, palette.color(QPalette.ColorRole.Button))
        font = QFont(painter.font())
        font.setWeight(QFont.Weight.DemiBold)
        painter.setFont(font)
        painter.setPen(palette.color(QPalette.ColorRole.WindowText))
        text = rect.adjusted(DOCK_TITLE_PADDING, 0, -DOCK_TITLE_PADDING, 0)
        title = painter.fontMetrics().elidedText(option.title, Qt.TextElideMode.ElideRight,
                                                 text.width())
        painter.drawText(text, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), title)
        painter.restore()

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter,
                      widget: QWidget | None = None) -> None:
        if element == QStyle.PrimitiveElement.PE_PanelStatusBar:
            rect, palette = option.rect, option.palette
            painter.fillRect(rect, palette.color(QPalette.ColorRole.Window))
            painter.setPen(line_colour(palette))
            painter.drawLine(rect.topLeft(), rect.topRight())
            return
        if element == QStyle.PrimitiveElement.PE_PanelToolBar:
            return  # flat: no frame or gradient around the tool buttons
        super().drawPrimitive(element, option, painter, widget)

    def generatedIconPixmap(self, mode: QIcon.Mode, pixmap: QPixmap | QImage, option: QStyleOption) -> QPixmap:
        if mode != QIcon.Mode.Disabled:
            return super().generatedIconPixmap(mode, pixmap, option)
        if isinstance(pixmap, QImage):
            pixmap = QPixmap.fromImage(pixmap)
        # Fusion greys a disabled icon towards the palette's window colour and away from it: on the dark theme's
        # window the icons' slate came out lighter than the enabled ones, so undo and redo looked the active ones.
        # Faded in their own colour, a disabled icon has less contrast than an enabled one on either theme.
        faded = QPixmap(pixmap.size())
        faded.setDevicePixelRatio(pixmap.devicePixelRatio())
        faded.fill(Qt.GlobalColor.transparent)
        painter = QPainter(faded)
        painter.setOpacity(DISABLED_ICON_OPACITY)
        painter.drawPixmap(0, 0, pixmap)
        painter.end()
        return faded
