"""Counting the document's diagnostics (engine `validate`) off the GUI thread, on a snapshot."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, QTimer, Signal

from contextdeck.engine import Context, Document, validate

DELAY_MS = 300


class _Signals(QObject):
    done = Signal(int, int)  # generation, count


class _Task(QRunnable):
    def __init__(self, messages: list[dict[str, Any]], solution: Any, generation: int) -> None:
        super().__init__()
        self.signals = _Signals()
        self._messages, self._solution, self._generation = messages, solution, generation

    def run(self) -> None:
        # The dicts are shared with the GUI's context; they are never mutated (edits replace them).
        count = len(validate(Context(self._messages), self._solution))
        self.signals.done.emit(self._generation, count)


class DiagnosticsRunner(QObject):
    """`schedule(document)` after every change; `finished(count)` with the latest document's count."""

    finished = Signal(int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._generation = 0
        self._document: Document | None = None
        self._timer = QTimer(self, singleShot=True, interval=DELAY_MS)
        self._timer.timeout.connect(self._start)
        self._tasks: set[_Task] = set()

    def schedule(self, document: Document) -> None:
        self._document = document
        self._generation += 1
        self._timer.start()

    def _start(self) -> None:
        if self._document is None:
            return
        task = _Task(self._document.context.messages, self._document.solution, self._generation)
        task.setAutoDelete(False)
        task.signals.done.connect(self._done)
        self._tasks.add(task)
        self._pool.start(task)

    def _done(self, generation: int, count: int) -> None:
        self._tasks = {t for t in self._tasks if t.signals is not self.sender()}
        if generation == self._generation:
            self.finished.emit(count)

    def flush(self) -> None:
        """Count now and wait for the result (screenshots, benchmarks)."""
        self._timer.stop()
        self._start()
        self._pool.waitForDone()
        QCoreApplication.sendPostedEvents()
