"""Colours and small painted icons shared by the calls panel, the inspector and the plan graph."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QLabel

from contextdeck.engine import Status

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
