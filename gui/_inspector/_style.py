"""Colours and small painted icons shared by the calls panel, the inspector and the plan graph."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPaintEvent, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QLabel, QWidget

from contextdeck.engine import Status

from .._icons import dark

STATUS_COLOURS: dict[Status, str] = {
    Status.PENDING: "#8c96a0",
    Status.READY: "#2e9d5b",
    Status.BLOCKED: "#d08a1c",
    Status.AWAITING_APPROVAL: "#8a55c9",
    Status.WAITING_FOR_OUTPUT: "#2f7fd1",
    Status.CANCELLED: "#8c96a0",
    Status.RUNNING: "#1f6fe0",
    Status.DONE: "#6b7f8e",
    Status.FAILED: "#d64545",
    Status.FIRE_AND_FORGET: "#1b9aa6",
}
MISSING_COLOUR = "#d64545"
WARNING_COLOUR = "#b7791f"
CYCLE_COLOUR = "#e03131"
BREAKPOINT_COLOUR = "#e03131"
LINK_COLOUR = "#2f7fd1"


def status_colour(status: Status) -> QColor:
    return QColor(STATUS_COLOURS[status])


@cache
def status_icon(status: Status) -> QIcon:
    """A filled dot in the status colour (a ring while running)."""
    return QIcon(_dot(STATUS_COLOURS[status], ring=status is Status.RUNNING))


@cache
def breakpoint_icon(enabled: bool) -> QIcon:
    return QIcon(_dot(BREAKPOINT_COLOUR if enabled else "#00000000", ring=False))


def _dot(colour: str, ring: bool) -> QPixmap:
    pixmap = QPixmap(28, 28)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if ring:
        painter.setPen(QPen(QColor(colour), 5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
    else:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(colour))
    painter.drawEllipse(QRectF(5, 5, 18, 18))
    painter.end()
    return pixmap


def heading(text: str) -> QLabel:
    """A small grey capitalised section title, as the inspector panels use."""
    label = QLabel(text.upper())
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 0.85)
    font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 108)
    label.setFont(font)
    label.setStyleSheet("color: #6b7f8e; padding-top: 6px;")
    return label


WARM_FILL = ("#fff8e6", "#3a3122")  # a warm note box's fill and edge, (light, dark)
WARM_EDGE = ("#f0d9a8", "#7a6230")


class NoteBox(QLabel):
    """A label in a rounded box, warm (the call inspector's problems) or plain (the calls panel's own
    messages), painted in the colours of the palette it has at each paint: a theme switch reaches it as it
    reaches every widget, where a style sheet kept the light box (and the dark theme's light text on it)
    until the widget was polished again."""

    def __init__(self, parent: QWidget | None = None, *, warm: bool = True) -> None:
        super().__init__(parent)
        self.warm = warm
        self.setContentsMargins(7, 7, 7, 7)

    def fill(self) -> QColor:
        """The box's colour in the palette it has now (dark when the window is)."""
        palette = self.palette()
        return QColor(WARM_FILL[dark(palette)]) if self.warm else palette.color(QPalette.ColorRole.AlternateBase)

    def _edge(self) -> QColor:
        palette = self.palette()
        return QColor(WARM_EDGE[dark(palette)]) if self.warm else palette.color(QPalette.ColorRole.Mid)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self._edge(), 1))
        painter.setBrush(self.fill())
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        painter.end()
        super().paintEvent(event)


class PanelMessage(NoteBox):
    """A panel's own message ("Finished: every call has run"), in a plain box at the panel's top and hidden
    while there is none: at the panel's bottom, unframed, it read as a second status bar line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, warm=False)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hide()

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))

    def clear(self) -> None:
        self.setText("")
