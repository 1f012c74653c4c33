"""Counting the document's diagnostics (engine `validate`) off the GUI thread, on a snapshot."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from contextdeck.engine import Document, validate

from ._background import BackgroundRunner

DELAY_MS = 500
SHOW_AFTER_MS = 400  # a check quicker than this shows no progress (it would only flicker)
# Past this size counting is done on request (Run → Check Document): validating 100,000 messages takes
# seconds of Python, and a worker thread that long slows the GUI thread down (they share the GIL).
AUTOMATIC_LIMIT = 20_000


class DiagnosticsRunner(QObject):
    """`schedule(document)` after every change; `finished(count)` with the latest document's count."""

    finished = Signal(int)
    stale = Signal()  # the document changed and is too big to count automatically
    checking = Signal(int)  # a check began on the worker thread, of this many messages
    checked = Signal()  # the latest check ended (with a count, or an error)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = BackgroundRunner(DELAY_MS, self)
        self._runner.finished.connect(self._finished)
        self._runner.started.connect(self._started)
        self._document: Document | None = None
        self._size = 0  # messages in the document of the latest request
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
        solution, schema, tools, path = document.solution, document.schema, self.tools(), document.path
        self._size = len(document.context)
        self._runner.request_view(document.context, lambda view: len(validate(
            view, solution, tools=tools, schema=schema, path=path)))

    def _started(self) -> None:
        self.checking.emit(self._size)

    def _finished(self, result: object) -> None:
        self.checked.emit()
        if isinstance(result, int):
            self.finished.emit(result)

    def shutdown(self) -> None:
        self._runner.shutdown()

    def flush(self) -> None:
        self._runner.flush()


class CheckProgress(QWidget):
    """In the status bar while a check runs longer than `SHOW_AFTER_MS`: a busy bar, what is checked and
    for how long. `validate` reports no fraction done, so the bar moves without filling."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy
        self.bar.setFixedWidth(110)
        self.bar.setMaximumHeight(14)
        self.label = QLabel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self._what = ""
        self._since = 0.0
        self._show = QTimer(self, singleShot=True, interval=SHOW_AFTER_MS)
        self._show.timeout.connect(self._tick)
        self._clock = QTimer(self, interval=500)
        self._clock.timeout.connect(self._tick)
        self.hide()

    def begin(self, messages: int) -> None:
        self._what = f"Checking {messages:,} message{'s' * (messages != 1)}…"
        self._since = time.monotonic()
        self._show.start()

    def end(self) -> None:
        self._show.stop()
        self._clock.stop()
        self.hide()

    def _tick(self) -> None:
        self.label.setText(f"{self._what} {time.monotonic() - self._since:.0f} s")
        self.show()
        self._clock.start()
