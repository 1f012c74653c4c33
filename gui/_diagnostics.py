"""Counting the document's diagnostics (engine `validate`) off the GUI thread, on a snapshot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from contextdeck.engine import Document, validate

from ._background import BackgroundRunner

DELAY_MS = 500
# Past this size counting is done on request (Run → Check Document): validating 100,000 messages takes
# seconds of Python, and a worker thread that long slows the GUI thread down (they share the GIL).
AUTOMATIC_LIMIT = 20_000


class DiagnosticsRunner(QObject):
    """`schedule(document)` after every change; `finished(count)` with the latest document's count."""

    finished = Signal(int)
    stale = Signal()  # the document changed and is too big to count automatically

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = BackgroundRunner(DELAY_MS, self)
        self._runner.finished.connect(self._finished)
        self._document: Document | None = None
        self.tools: Callable[[], dict[str, Any] | None] = lambda: None  # the loaded tool registry

    def schedule(self, document: Document) -> None:
        self._document = document
        if len(document.context) > AUTOMATIC_LIMIT:
            self.stale.emit()
        else:
            self.check(document)

    def check(self, document: Document | None = None) -> None:
        """Count now (in the background), whatever the size."""
        document = document or self._document
        if document is None:
            return
        view, solution, tools = document.context.view(), document.solution, self.tools()
        self._runner.request(lambda: len(validate(view, solution, tools=tools)))

    def _finished(self, result: object) -> None:
        if isinstance(result, int):
            self.finished.emit(result)

    def shutdown(self) -> None:
        self._runner.shutdown()

    def flush(self) -> None:
        self._runner.flush()
