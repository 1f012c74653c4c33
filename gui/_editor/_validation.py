"""Validation off the GUI process: debounced, latest request wins, abandoned after a time limit.

The worker checks through the engine's `schema_errors`, whose patterns stop at their deadline
(`PATTERN_BUDGET_S`) and are reported at their field. The process is a second guard for whatever else could
run long, and keeps the checking's memory out of the window's. A small persistent worker process
(`contextdeck._validation_worker`, driven through `QProcess`, so the event loop is never blocked waiting on
it) can be killed when it overruns, and is restarted for the next request. It is started by
`contextdeck._child`, which knows how to from a checkout, an installed wheel and a frozen bundle.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any, Final

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from contextdeck._child import child_command
from contextdeck.engine import PATTERN_BUDGET_S

Problem = tuple[tuple[Any, ...], str]  # (path into the value, message)

WORKER: Final = "contextdeck._validation_worker"
TIMED_OUT: Final = "validation timed out"
# Past the patterns' own deadline by far: their budget is the worker's CPU time (the `regex` package's
# timeout), which takes several times as long on the clock when a busy machine gives the worker a share of a core.
LIMIT_MS: Final = int(PATTERN_BUDGET_S * 1000) + 9_500


class Validator(QObject):
    """Validates JSON values against a schema in a worker process; `finished` carries the problems."""

    finished = Signal(list)

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = 150, limit_ms: int = LIMIT_MS) -> None:
        super().__init__(parent)
        self._debounce = QTimer(self, singleShot=True, interval=debounce_ms)
        self._debounce.timeout.connect(self._send)
        self._deadline = QTimer(self, singleShot=True, interval=limit_ms)
        self._deadline.timeout.connect(self._overrun)
        # the latest request not yet sent: (id, request line), or (id, problems) known without the worker
        self._wanted: tuple[int, str | list[Problem]] | None = None
        self._running: int | None = None  # id of the request the worker is on
        self._next_id = 0
        self._process: QProcess | None = None
        self._ready = False
        self._buffer = b""
        # the running worker, in a plain list that outlives this object's C++ half: when the editor is destroyed
        # without a close (its window closes, not it), the worker is still stopped, before Qt would warn
        self._live: list[QProcess] = []
        self.destroyed.connect(partial(_reap, self._live))

    def request(self, value: Any, schema: dict[str, Any] | None) -> None:
        """Asks for a validation of `value`; earlier requests not yet answered are superseded. The answer
        always comes later, through `finished`, never during this call."""
        self._next_id += 1
        answer: str | list[Problem]
        if schema is None:
            answer = []  # nothing to validate against
        else:
            try:
                answer = json.dumps({"id": self._next_id, "schema": schema, "value": value}) + "\n"
            except (TypeError, ValueError) as error:
                answer = [((), f"not JSON: {error}")]
        self._wanted = (self._next_id, answer)
        self._debounce.start()

    def shutdown(self) -> None:
        """Stops the worker (it also stops by itself when this process ends and its stdin closes)."""
        self._debounce.stop()
        self._deadline.stop()
        _reap(self._live)
        self._process, self._running, self._ready = None, None, False  # a later request starts a new worker

    def _worker(self) -> QProcess:
        if self._process is None:
            process = QProcess(self)
            program, arguments = child_command(WORKER)
            process.setProgram(program)
            process.setArguments(arguments)
            process.setProcessChannelMode(QProcess.ProcessChannelMode.ForwardedErrorChannel)
            process.readyReadStandardOutput.connect(lambda: self._read(process))
            process.errorOccurred.connect(lambda error: self._failed(process, error))
            self._process, self._ready, self._buffer = process, False, b""
            self._live[:] = [process]
            process.start()
        return self._process

    def _send(self) -> None:
        if self._wanted is None:
            return
        ident, answer = self._wanted
        if isinstance(answer, list):
            self._wanted = None
            self.finished.emit(answer)
            return
        if self._running is not None:
            return  # the answer to the running request sends the wanted one
        process = self._worker()
        if not self._ready:
            return  # sent once the worker says it is ready
        self._running, self._wanted = ident, None
        process.write(answer.encode())
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
            if message["id"] == self._next_id:  # otherwise stale: a newer request came since
                self.finished.emit([(tuple(path), text) for path, text in message["errors"]])
        self._send()

    def _overrun(self) -> None:
        if self._process is not None:
            _stop(self._process)
            self._live.clear()
            self._process = None
        stale = self._running != self._next_id
        self._running = None
        if stale:
            self._send()
        else:
            self.finished.emit([((), TIMED_OUT)])

    def _failed(self, process: QProcess, error: QProcess.ProcessError) -> None:
        if process is not self._process or (error == QProcess.ProcessError.Crashed and self._running is None):
            return
        _stop(process)
        self._live.clear()
        self._process, self._running, self._ready = None, None, False  # a later request starts a new worker
        self._deadline.stop()
        self.finished.emit([((), f"validation unavailable: {process.errorString()}")])


def _stop(process: QProcess) -> None:
    """Kills a worker without waiting; its output is no longer read, and it deletes itself once it has ended."""
    if process.property("stopped"):
        return
    process.setProperty("stopped", True)
    process.readyReadStandardOutput.disconnect()
    process.errorOccurred.disconnect()
    process.finished.connect(process.deleteLater)
    process.closeWriteChannel()
    process.kill()


def _reap(live: list[QProcess], *_: object) -> None:
    """Kills the workers in `live` and waits for them (a few ms after SIGKILL)."""
    for process in live:
        _stop(process)
        process.waitForFinished(500)
    live.clear()
