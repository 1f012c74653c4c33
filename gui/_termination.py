"""SIGTERM and SIGHUP (`kill`, a supervisor, a logout) end the window at once: no one is there to answer a
question, so its unsaved work is written aside, where the next start offers it, and nothing is asked."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSocketNotifier

if TYPE_CHECKING:
    from ._window import MainWindow

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _noted(signum: int, frame: object) -> None:
    """The Python handler does nothing itself: the signal's number reaches the event loop through the wakeup socket."""


class Termination(QObject):
    """Ends `window` when the process is told to end, then calls `quit` with the shell's exit code (128 + the
    signal's number: 143 for SIGTERM).

    A Python signal handler runs only once the interpreter runs again, and an idle Qt loop waits in C++:
    `signal.set_wakeup_fd` writes the signal's number into a socket that a `QSocketNotifier` watches, which wakes
    the loop and ends the window on its own thread, between two events."""

    def __init__(self, window: MainWindow, quit: Callable[[int], object]) -> None:
        super().__init__(window)
        self._window, self._quit = window, quit
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._wakeup = signal.set_wakeup_fd(self._writer.fileno())
        self._handlers = {signum: signal.signal(signum, _noted) for signum in SIGNALS}
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._woken)

    def _woken(self) -> None:
        received = b""
        with contextlib.suppress(BlockingIOError):  # woken with nothing left to read
            received = self._reader.recv(64)
        told = [signum for signum in received if signum in SIGNALS]
        if told:
            self.release()
            self._window.end(keep_unsaved=True)
            self._quit(128 + told[0])

    def release(self) -> None:
        """Give the signals back to the handlers they had (a second SIGTERM while ending ends the process)."""
        if not self._handlers:
            return
        self._notifier.setEnabled(False)
        for signum, handler in self._handlers.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        self._handlers = {}
        signal.set_wakeup_fd(self._wakeup)
        self._reader.close()
        self._writer.close()
