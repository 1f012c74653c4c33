"""A dismissible banner above the editor: errors that must be seen but must not block (a malformed file)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QRectF
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from ._icons import icon
from ._touches import dark

# (fill, edge, text) on a light and on a dark palette
COLOURS = {False: ("#fdecec", "#f2b8b5", "#8c1d18"), True: ("#3b1d1d", "#7a2e2a", "#ffb4ab")}


class Banner(QFrame):
    """A message with optional action buttons and a close button; hidden until `show_message`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self._buttons: list[QPushButton] = []
        self.about: str | None = None  # what the message shown is about (`show_message`)
        close = QToolButton()
        close.setIcon(icon("close"))
        close.setToolTip("Dismiss")
        close.setAccessibleName("Dismiss")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(10, 6, 6, 6)
        self._layout.addWidget(self.label, 1)
        self._layout.addWidget(close)
        self._recolour()
        self.hide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._recolour()

    def _recolour(self) -> None:
        text = QPalette(self.label.palette())
        text.setColor(QPalette.ColorRole.WindowText, QColor(COLOURS[dark(self.palette())][2]))
        self.label.setPalette(text)

    def paintEvent(self, event: QPaintEvent) -> None:
        fill, edge, _text = COLOURS[dark(self.palette())]
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QColor(edge))
        painter.setBrush(QColor(fill))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)

    def show_message(self, text: str, actions: dict[str, Callable[[], object]] | None = None, *,
                     about: str | None = None) -> None:
        """Show `text` with one button per action (clicking one dismisses the banner and runs it); `about` names
        what it is about, so that what answers it later can `withdraw` it."""
        for button in self._buttons:
            button.deleteLater()
        self._buttons = []
        for position, (title, run) in enumerate((actions or {}).items()):
            button = QPushButton(title)
            button.clicked.connect(self.hide)  # first: what the action says (a banner of its own) stays shown
            button.clicked.connect(run)
            self._layout.insertWidget(1 + position, button)
            self._buttons.append(button)
        self.label.setText(text)
        self.about = about
        self.show()

    def withdraw(self, about: str) -> None:
        """Hide the message if it is about `about` (something since has answered it), not another one."""
        if self.about == about:
            self.hide()

    def buttons(self) -> list[QPushButton]:
        return list(self._buttons)
