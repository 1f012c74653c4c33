"""The LLM view: exactly the text `contextdeck render` prints, as of the time cursor.

Rendered only while the view is seen, and in the background for big documents (see `_background.py`).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFontDatabase, QShowEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from contextdeck.engine import Context, render_text

from ._background import BackgroundRunner

BACKGROUND_FROM = 5_000  # messages: smaller contexts render at once (a few milliseconds)
CHUNK = 64_000  # characters added to the view per turn of the event loop


class LLMView(QPlainTextEdit):
    """Read-only text of what the LLM sees; rendering waits until the view is visible."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText("Nothing reaches the LLM yet.")
        self._context: Context | None = None
        self._at: int | None = None
        self._stale = False
        self._text = ""
        self._filled = 0
        self._fill_timer = QTimer(self, singleShot=True, interval=0)
        self._fill_timer.timeout.connect(self._fill)
        self.runner = BackgroundRunner(0, self)
        self.runner.finished.connect(self._rendered)

    def show_context(self, context: Context, at: int | None) -> None:
        """Render `context` as of the first `at` messages now if seen, else when it is shown."""
        self._context, self._at, self._stale = context, at, True
        if self.isVisible() and not self.visibleRegion().isEmpty():  # a dock tabbed behind another is not seen
            self.render_now()

    def render_now(self) -> None:
        if self._context is None or not self._stale:
            return
        self._stale = False
        context, at = self._context, self._at
        if len(context) < BACKGROUND_FROM:
            self._rendered(render_text(context, at))
            return
        view = context.view()  # a frozen copy in milliseconds; the worker never touches the live context
        self.runner.request(lambda: render_text(view, at))

    def _rendered(self, text: object) -> None:
        if isinstance(text, Exception):
            text = f"Could not render: {text}"
        if not isinstance(text, str) or text == self._text:
            return
        self._text = text
        bar = self.verticalScrollBar().value()
        self.setPlainText(text[:CHUNK])
        self.verticalScrollBar().setValue(bar)
        self._filled = min(CHUNK, len(text))
        if self._filled < len(text):
            self._fill_timer.start()

    def _fill(self) -> None:
        # Megabytes of text go in piece by piece: one setPlainText of it all would hold the GUI thread.
        piece = self._text[self._filled : self._filled + CHUNK]
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(piece)
        self._filled += len(piece)
        if self._filled < len(self._text):
            self._fill_timer.start()

    def text(self) -> str:
        """The whole rendered text (the widget may still be filling in)."""
        return self._text

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.render_now()
