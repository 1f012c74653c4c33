"""The window's status bar: a message never runs into the labels on its right, and the labels keep apart.

Qt's `QStatusBar` draws a temporary message clipped two pixels before the first permanent widget, cut in
the middle of a glyph: a long message ("Edit refused: …") read as if it were drawn under "As of message
#4". Here the message is elided ("…") a gap before the labels, and each label gets margins of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizeGrip, QStatusBar, QStyle, QStyleOption, QWidget

if TYPE_CHECKING:
    from ._document_model import DocumentModel

GAP = 16  # pixels between the end of a message and the first label
LABEL_MARGIN = 8  # each label's own margin, left and right: two labels' texts are 2 × 8 px apart at least


class StatusBar(QStatusBar):
    """A `QStatusBar` whose temporary message is elided before the permanent labels."""

    def addPermanentWidget(self, widget: QWidget, stretch: int | None = 0) -> None:
        if isinstance(widget, QLabel):
            widget.setContentsMargins(LABEL_MARGIN, 0, LABEL_MARGIN, 0)
        super().addPermanentWidget(widget, stretch or 0)

    def message_rect(self) -> QRect:
        """Where the message is drawn: from the left edge to a gap before the first label shown."""
        right = self.width() - 12
        for child in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if child.isVisible() and not isinstance(child, QSizeGrip):
                right = min(right, child.x() - GAP)
        return QRect(6, 0, max(0, right - 6), self.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        message = self.currentMessage()
        if not message:
            super().paintEvent(event)
            return
        # As QStatusBar paints (the panel, a frame per widget shown), with the message elided in its place.
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        style = self.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter, self)
        for child in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if child.isVisible() and not isinstance(child, QSizeGrip):
                frame = QStyleOption()
                frame.rect = child.geometry().adjusted(-2, -1, 2, 1)
                frame.palette = self.palette()
                style.drawPrimitive(QStyle.PrimitiveElement.PE_FrameStatusBarItem, frame, painter, child)
        rect = self.message_rect()
        painter.setPen(self.palette().windowText().color())
        text = self.fontMetrics().elidedText(message, Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter |
                                   Qt.TextFlag.TextSingleLine), text)
        painter.end()


CURSOR_TIP = ("The time cursor: the State, LLM view and Watches show the context as of the selected message (later "
              "rows are shaded as the future). View → Follow Latest (Ctrl+L) shows the latest instead.")


class CursorLabel(QLabel):
    """Where the time cursor is ("As of message #4"), read from the document model it follows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeCursor")
        self.setToolTip(CURSOR_TIP)

    def follow(self, document: DocumentModel) -> None:
        """With the views that show the context as of the cursor (`viewsDue`: a selection's next turn, an edit),
        not at each move: a label's new text lays the status bar out again."""
        self._document = document
        document.viewsDue.connect(self._show)  # bound methods: Qt drops them with the label
        document.documentReplaced.connect(self._show)

    def _show(self, *_cursor: object) -> None:
        cursor = self._document.time_cursor()
        self.setText("" if not len(self._document.context()) else "As of the latest message" if cursor is None
                     else f"As of message #{cursor}")
