"""The LLM view: exactly the text `contextdeck render` prints, as of the time cursor, rendered lazily."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from contextdeck.engine import Context, render_text


class LLMView(QPlainTextEdit):
    """Read-only text of what the LLM sees; rendering waits until the view is visible."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._context: Context | None = None
        self._at: int | None = None
        self._stale = False

    def show_context(self, context: Context, at: int | None) -> None:
        """Render `context` as of the first `at` messages now if visible, else when it is shown."""
        self._context, self._at, self._stale = context, at, True
        if self.isVisible():
            self.render_now()

    def render_now(self) -> None:
        if self._context is None or not self._stale:
            return
        self._stale = False
        text = render_text(self._context, self._at)
        if text != self.toPlainText():
            bar = self.verticalScrollBar().value()
            self.setPlainText(text)
            self.verticalScrollBar().setValue(bar)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.render_now()
