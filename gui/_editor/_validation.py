"""Validation off the GUI process: debounced, latest request wins, abandoned after a time limit.

The worker checks through the engine's `schema_errors`, whose patterns stop at their deadline
(`PATTERN_BUDGET_S`) and are reported at their field. The process is a second guard for whatever else could
run long, and keeps the checking's memory out of the window's. A small persistent worker process
(`contextdeck._validation_worker`, driven through `QProcess`, so the event loop is never blocked waiting on
it) can be killed when it overruns, and is restarted for the next request. It is started by
`contextdeck._child`, which knows how to from a checkout, an installed wheel and a frozen bundle.

One worker serves every editor of the application (`shared_worker`), started ahead once the window is idle
(`start_validation_ahead`): a form's first validation, which an output dialog's Write waits for, then costs no process
start. It checks one request at a time; the others wait, one per editor (a newer request replaces its editor's
waiting one), and their time limit starts when they are sent. A request that overruns has the worker killed: its
editor is told the validation timed out, the waiting ones go to a new worker. A worker that dies on a request is
replaced and the request sent again once; dying on it again, or before it was ready, its editors are told the
validation is unavailable. Starting has a limit of its own (`START_LIMIT_MS`), from the process's start to its
ready: a slow start (a loaded machine importing the engine) neither takes a check's time nor is taken for a check
that ran long, and an editor waiting is told which of the two failed. The value being edited is never touched:
the next edit asks again.

A worker that ends while nothing waits for it (killed, out of memory, past a limit) is started again ahead, once the
window is idle, so that the next request does not pay its start; each start again waits twice as long as the one
before (`REVIVE_MS` up to `REVIVE_MOST_MS`) until a worker answers a request, so that one that keeps dying does not
spin.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QProcess, QTimer, Signal

from contextdeck._child import child_command
from contextdeck.engine import PATTERN_BUDGET_S

from .._per_application import PerApplication

Problem = tuple[tuple[Any, ...], str]  # (path into the value, message)
Told = Callable[[int, list[Problem]], None]  # an editor's request id, and the problems found (or why none were)

WORKER: Final = "contextdeck._validation_worker"
TIMED_OUT: Final = "validation timed out"
UNAVAILABLE: Final = "validation unavailable"
# Past the patterns' own deadline by far: their budget is the worker's CPU time (the `regex` package's
# timeout), which takes several times as long on the clock when a busy machine gives the worker a share of a core.
LIMIT_MS: Final = int(PATTERN_BUDGET_S * 1000) + 9_500
# A start imports the engine and jsonschema: a few seconds on a loaded machine, far more with the disk cold.
START_LIMIT_MS: Final = 30_000
REVIVE_MS: Final = 1_000  # a worker that ended is started again ahead after this, then twice as long each time
REVIVE_MOST_MS: Final = 300_000
AHEAD_MS: Final = 250  # quiet this long before the worker is started ahead (`start_validation_ahead`)
_editors = itertools.count()


@dataclass
class _Request:
    editor: int  # its editor's (`Validator`) number
    ident: int
    line: bytes
    told: Told | None  # None once its editor has gone
    retried: bool = False


class Worker(QObject):
    """The validation worker process and its queue: `submit` a request line, `told` gets the answer."""

    def __init__(self, parent: QObject | None = None, *, limit_ms: int = LIMIT_MS, start_limit_ms: int = START_LIMIT_MS,
                 revive_ms: int = REVIVE_MS) -> None:
        super().__init__(parent)
        self._deadline = QTimer(self, singleShot=True, interval=limit_ms)  # the request being checked
        self._deadline.timeout.connect(self._overrun)
        self._starting = QTimer(self, singleShot=True, interval=start_limit_ms)  # the process, until it is ready
        self._starting.timeout.connect(self._slow_start)
        self._revive_ms = self._revive_after = revive_ms  # the first wait, and the next one's
        self._revive = QTimer(self, singleShot=True)  # a worker that ended, started again ahead
        self._revive.timeout.connect(self._revived)
        self.busy: Callable[[], bool] = lambda: False  # the window's work, which a start ahead waits for
        self._waiting: dict[int, _Request] = {}  # by editor, in the order sent
        self._running: _Request | None = None
        self._process: QProcess | None = None
        self._ready = False
        self._buffer = b""
        self.started = 0  # processes started
        # the running process, in a plain list that outlives this object's C++ half: when the application ends
        # without a quit, the process is still stopped, before Qt would warn
        self._live: list[QProcess] = []
        self.destroyed.connect(partial(_reap, self._live))

    def start(self) -> None:
        """Starts the process now, unless one is running."""
        self._worker()

    def submit(self, editor: int, ident: int, line: str, told: Told) -> None:
        """Checks `line` (a request of the worker's) once the worker is free; `told(ident, problems)` after.
        The request `editor` had waiting, if any, is dropped."""
        self._waiting.pop(editor, None)
        self._waiting[editor] = _Request(editor, ident, line.encode(), told)
        self._next()

    def withdraw(self, editor: int, *_: object) -> None:
        """`editor` no longer wants its answers (it is closed or gone)."""
        self._waiting.pop(editor, None)
        if self._running is not None and self._running.editor == editor:
            self._running.told = None

    def is_running(self, editor: int) -> bool:
        """Whether `editor`'s request is the one the worker is checking."""
        return self._running is not None and self._running.editor == editor

    def stop(self) -> None:
        """Stops the process (it also stops by itself when this process ends and its stdin closes); what waits is
        sent to a new one at the next request, and none is started ahead before."""
        self._deadline.stop()
        self._starting.stop()
        self._revive.stop()
        _reap(self._live)
        self._process, self._ready = None, False
        running, self._running = self._running, None
        if running is not None and running.told is not None:  # (withdrawn: nobody wants its answer)
            self._waiting = {running.editor: running, **self._waiting}

    def _worker(self) -> QProcess:
        if self._process is None:
            process = QProcess(self)
            program, arguments = child_command(WORKER)
            process.setProgram(program)
            process.setArguments(arguments)
            process.setProcessChannelMode(QProcess.ProcessChannelMode.ForwardedErrorChannel)
            process.readyReadStandardOutput.connect(lambda: self._read(process))
            process.errorOccurred.connect(lambda error: self._failed(process, error))
            process.finished.connect(lambda code, status: self._ended(process, code, status))
            self._process, self._ready, self._buffer = process, False, b""
            self._live[:] = [process]
            self.started += 1
            self._starting.start()
            process.start()
        return self._process

    def _revived(self) -> None:
        if self._process is not None:
            return
        if self.busy():  # not beside the window's work: a little later
            self._revive.start(AHEAD_MS)
            return
        self._worker()

    def _next(self) -> None:
        if self._running is not None or not self._waiting:
            return
        process = self._worker()
        if not self._ready:  # sent once the worker says it is ready (`_starting` bounds the wait)
            return
        self._running = self._waiting.pop(next(iter(self._waiting)))
        process.write(self._running.line)
        self._deadline.start()

    def _read(self, process: QProcess) -> None:
        if process is not self._process:
            return
        self._buffer += bytes(process.readAllStandardOutput().data())
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._answer(json.loads(line))

    def _answer(self, message: dict[str, Any]) -> None:
        running = self._running
        if message.get("ready"):
            self._ready = True
            self._starting.stop()
        elif running is not None and message.get("id") == running.ident:
            self._deadline.stop()
            self._running = None
            self._revive_after = self._revive_ms  # a worker that works: the next that ends is soon replaced
            _tell(running, [(tuple(path), text) for path, text in message["errors"]])
        self._next()

    def _slow_start(self) -> None:
        if self._process is not None and not self._ready:
            self._died(self._process, f"the worker did not start within {self._starting.interval() / 1000:g} s")

    def _overrun(self) -> None:
        running, self._running = self._running, None
        self._drop()
        if running is not None:
            _tell(running, [((), TIMED_OUT)])
        self._next()  # the requests waiting go to a new worker

    def _failed(self, process: QProcess, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._died(process, process.errorString())
        # any other error of a process that ended is followed by `finished`

    def _ended(self, process: QProcess, code: int, status: QProcess.ExitStatus) -> None:
        crashed = status == QProcess.ExitStatus.CrashExit
        self._died(process, "the worker was killed" if crashed else f"the worker exited with code {code}")

    def _died(self, process: QProcess, why: str) -> None:
        if process is not self._process:
            return
        ready, running, self._running = self._ready, self._running, None
        self._drop()
        told = f"{UNAVAILABLE}: {why}; edit the value to check it again"
        if not ready:  # it never could check anything: starting another at once would fail the same way
            waiting, self._waiting = list(self._waiting.values()), {}
            for request in waiting:
                _tell(request, [((), told)])
            return
        if running is not None and running.told is not None:  # (withdrawn: nobody wants its answer)
            if running.retried:
                _tell(running, [((), told)])
            elif running.editor not in self._waiting:  # (a newer request of its editor's supersedes it)
                running.retried = True
                self._waiting = {running.editor: running, **self._waiting}
        self._next()

    def _drop(self) -> None:
        """Kills the process that failed; another is started ahead later (`_revived`) unless a request starts one.
        One that never became ready is not: on a machine too slow to start it in time, starting again with nobody
        asking would only take more of it; the next request starts one."""
        self._deadline.stop()
        self._starting.stop()
        if self._process is not None:
            _stop(self._process)
        self._live.clear()
        was_ready, self._process, self._ready = self._ready, None, False
        if was_ready and not self._revive.isActive():
            self._revive.start(self._revive_after)
            self._revive_after = min(2 * self._revive_after, REVIVE_MOST_MS)


def _tell(request: _Request, problems: list[Problem]) -> None:
    if request.told is not None:
        request.told(request.ident, problems)


def _worker_of(app: QCoreApplication | None) -> Worker:
    worker = Worker(app)
    if app is not None:
        app.aboutToQuit.connect(worker.stop)
    return worker


_shared = PerApplication(_worker_of)


def shared_worker() -> Worker:
    """The application's one validation `Worker`, stopped when it quits."""
    return _shared.get()


def start_validation_ahead(owner: QObject, busy: Callable[[], bool]) -> None:
    """Starts the application's validation worker once `owner` (a window) has been idle a while, not `busy`:
    before any of its forms asks for a check, and never beside the work of its opening."""
    timer = QTimer(owner, singleShot=True, interval=AHEAD_MS)

    def due() -> None:
        if busy():
            timer.start()
        else:
            worker = shared_worker()
            worker.busy = lambda: shiboken6.isValid(owner) and busy()  # (a closed window is busy no more)
            worker.start()
            timer.deleteLater()

    timer.timeout.connect(due)
    timer.start()


class Validator(QObject):
    """Validates JSON values against a schema, through a `Worker` (the application's); `finished` carries the
    problems of the latest request."""

    finished = Signal(list)

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = 150, worker: Worker | None = None) -> None:
        super().__init__(parent)
        self._debounce_ms = debounce_ms
        self._debounce = QTimer(self, singleShot=True, interval=debounce_ms)
        self._debounce.timeout.connect(self._send)
        # the latest request not yet sent: (id, request line), or (id, problems) known without the worker
        self._wanted: tuple[int, str | list[Problem]] | None = None
        self._next_id = 0
        self._editor = next(_editors)
        self.worker = worker if worker is not None else shared_worker()
        self.destroyed.connect(partial(self.worker.withdraw, self._editor))

    def request(self, value: Any, schema: dict[str, Any] | None, *, at_once: bool = False) -> None:
        """Asks for a validation of `value`; earlier requests not yet answered are superseded. The answer
        always comes later, through `finished`, never during this call. Sent after the debounce, or with
        `at_once` in the next turn (a value loaded, not typed: an output dialog's Write waits for it)."""
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
        self._debounce.start(0 if at_once else self._debounce_ms)

    def is_running(self) -> bool:
        """Whether the worker is checking a request of this validator's."""
        return self.worker.is_running(self._editor)

    def shutdown(self) -> None:
        """Asks for nothing more: the request waiting is dropped, the running one's answer is not reported."""
        self._debounce.stop()
        self._wanted = None
        self.worker.withdraw(self._editor)

    def _send(self) -> None:
        if self._wanted is None:
            return
        ident, answer = self._wanted
        self._wanted = None
        if isinstance(answer, list):
            self.worker.withdraw(self._editor)
            self.finished.emit(answer)
        else:
            self.worker.submit(self._editor, ident, answer, self._told)

    def _told(self, ident: int, problems: list[Problem]) -> None:
        if ident == self._next_id:  # otherwise stale: a newer request came since
            self.finished.emit(problems)


def _stop(process: QProcess) -> None:
    """Kills a worker without waiting; its output is no longer read, and it deletes itself once it has ended."""
    if process.property("stopped"):
        return
    process.setProperty("stopped", True)
    process.readyReadStandardOutput.disconnect()
    process.errorOccurred.disconnect()
    process.finished.disconnect()
    if process.state() == QProcess.ProcessState.NotRunning:  # never started, or ended: no `finished` to come
        process.deleteLater()
        return
    process.finished.connect(process.deleteLater)
    process.closeWriteChannel()
    process.kill()


def _reap(live: list[QProcess], *_: object) -> None:
    """Kills the workers in `live` and waits for them (a few ms after SIGKILL)."""
    for process in live:
        _stop(process)
        process.waitForFinished(500)
    live.clear()
