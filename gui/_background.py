"""Run a slow engine function (validate, render) on a snapshot of the messages, off the GUI thread.

The snapshot is a new list of the context's own message dicts (never mutated: edits replace them), so the
worker reads a consistent document while the user goes on editing; only the latest request's result is
delivered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, QTimer, Signal

Job = Callable[[], Any]


class _Signals(QObject):
    done = Signal(int, object)  # generation, result


class _Task(QRunnable):
    def __init__(self, job: Job, generation: int) -> None:
        super().__init__()
        self.signals = _Signals()
        self._job, self._generation = job, generation

    def run(self) -> None:
        try:
            result = self._job()
        except Exception as error:  # shown as the result; a worker must never take the window down
            result = error
        self.signals.done.emit(self._generation, result)


class BackgroundRunner(QObject):
    """`request(job)` (debounced by `delay_ms`); `finished(result)` with the latest job's result."""

    finished = Signal(object)
    started = Signal()  # a job began on the worker thread (the latest one finishes with `finished`)

    def __init__(self, delay_ms: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._generation = 0
        self._job: Job | None = None
        self._timer = QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(self._start)
        self._tasks: list[_Task] = []

    def request(self, job: Job) -> None:
        self._job = job
        self._generation += 1
        self._timer.start()

    def _start(self) -> None:
        if self._job is None:
            return
        task = _Task(self._job, self._generation)
        task.setAutoDelete(False)
        task.signals.done.connect(self._done)
        self._tasks.append(task)
        self._pool.start(task)
        self.started.emit()

    def _done(self, generation: int, result: object) -> None:
        self._tasks = [t for t in self._tasks if t.signals is not self.sender()]
        if generation == self._generation:
            self.finished.emit(result)

    def shutdown(self) -> None:
        """Stop and wait for a job under way (before the window goes)."""
        self._timer.stop()
        self._job = None
        self._pool.clear()
        self._pool.waitForDone()

    def flush(self) -> None:
        """Run the pending job now and wait for its result (screenshots, benchmarks, tests)."""
        if self._timer.isActive():
            self._timer.stop()
            self._start()
        self._pool.waitForDone()
        QCoreApplication.sendPostedEvents()
