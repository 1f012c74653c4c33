"""A dismissible banner above the editor: errors that must be seen but must not block (a malformed file)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from ._theme import icon


class Banner(QFrame):
    """A message with optional action buttons and a close button; hidden until `show_message`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self._buttons: list[QPushButton] = []
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
        self.hide()

    def show_message(self, text: str, actions: dict[str, Callable[[], object]] | None = None) -> None:
        """Show `text` with one button per action (clicking one runs it and dismisses the banner)."""
        for button in self._buttons:
            button.deleteLater()
        self._buttons = []
        for position, (title, run) in enumerate((actions or {}).items()):
            button = QPushButton(title)
            button.clicked.connect(run)
            button.clicked.connect(self.hide)
            self._layout.insertWidget(1 + position, button)
            self._buttons.append(button)
        self.label.setText(text)
        self.show()

    def buttons(self) -> list[QPushButton]:
        return list(self._buttons)
