"""Validation off the GUI process: debounced, latest request wins, abandoned after a time limit.

Why a process and not a thread: `re` holds the GIL for a whole match, so a thread stuck in a catastrophic
pattern (`^(a+)+$` against `aaaa…!`) stalls the event loop just the same (measured: a main-thread loop that
should tick every millisecond ticked once during a 0.5 s match). A small persistent worker process
(`_worker.py`, driven through `QProcess`, so the event loop is never blocked waiting on it) can be killed
when it overruns, and is restarted for the next request.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

Problem = tuple[tuple[Any, ...], str]  # (path into the value, message)

WORKER: Final = Path(__file__).with_name("_worker.py")
TIMED_OUT: Final = "validation timed out (pattern too slow?)"


class Validator(QObject):
    """Validates JSON values against a schema in a worker process; `finished` carries the problems."""

    finished = Signal(list)

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = 150, limit_ms: int = 1000) -> None:
        super().__init__(parent)
        self._debounce = QTimer(self, singleShot=True, interval=debounce_ms)
        self._debounce.timeout.connect(self._send)
        self._deadline = QTimer(self, singleShot=True, interval=limit_ms)
        self._deadline.timeout.connect(self._overrun)
        self._wanted: tuple[int, str] | None = None  # (id, request line) not yet sent
        self._running: int | None = None  # id of the request the worker is on
        self._next_id = 0
        self._process: QProcess | None = None
        self._ready = False
        self._buffer = b""

    def request(self, value: Any, schema: dict[str, Any] | None) -> None:
        """Asks for a validation of `value`; earlier requests not yet answered are superseded."""
        self._next_id += 1
        if schema is None:
            self._wanted = None
            self._debounce.stop()
            self.finished.emit([])
            return
        try:
            line = json.dumps({"id": self._next_id, "schema": schema, "value": value}) + "\n"
        except (TypeError, ValueError) as error:
            self.finished.emit([((), f"not JSON: {error}")])
            return
        self._wanted = (self._next_id, line)
        self._debounce.start()

    def shutdown(self) -> None:
        """Stops the worker (it also stops by itself when this process ends and its stdin closes)."""
        self._debounce.stop()
        self._deadline.stop()
        if self._process is not None:
            self._stop(self._process)
            self._process = None

    def _worker(self) -> QProcess:
        if self._process is None:
            process = QProcess(self)
            process.setProgram(sys.executable)
            process.setArguments(["-P", "-u", str(WORKER)])
            process.setProcessChannelMode(QProcess.ProcessChannelMode.ForwardedErrorChannel)
            process.readyReadStandardOutput.connect(lambda: self._read(process))
            process.errorOccurred.connect(lambda error: self._failed(process, error))
            self._process, self._ready, self._buffer = process, False, b""
            process.start()
        return self._process

    def _send(self) -> None:
        if self._wanted is None or self._running is not None:
            return  # the answer to the running request sends the wanted one
        process = self._worker()
        if not self._ready:
            return  # sent once the worker says it is ready
        self._running, line = self._wanted
        self._wanted = None
        process.write(line.encode())
        self._deadline.start()

    def _read(self, process: QProcess) -> None:
        if process is not self._process:
            return
        self._buffer += bytes(process.readAllStandardOutput().data())
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._answer(json.loads(line))

    def _answer(self, message: dict[str, Any]) -> None:
        if message.get("ready"):
            self._ready = True
        elif message.get("id") == self._running:
            self._deadline.stop()
            self._running = None
            if self._wanted is None:  # otherwise stale: a newer request is waiting
                self.finished.emit([(tuple(path), text) for path, text in message["errors"]])
        self._send()

    def _overrun(self) -> None:
        if self._process is not None:
            self._stop(self._process)
            self._process = None
        self._running = None
        if self._wanted is None:
            self.finished.emit([((), TIMED_OUT)])
        else:
            self._send()

    def _failed(self, process: QProcess, error: QProcess.ProcessError) -> None:
        if process is not self._process or (error == QProcess.ProcessError.Crashed and self._running is None):
            return
        self._process = None
        self._running = None
        self._deadline.stop()
        self.finished.emit([((), f"validation unavailable: {process.errorString()}")])

    @staticmethod
    def _stop(process: QProcess) -> None:
        process.readyReadStandardOutput.disconnect()
        process.errorOccurred.disconnect()
        process.closeWriteChannel()
        process.kill()
        process.finished.connect(process.deleteLater)
