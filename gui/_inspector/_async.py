"""Run the engine's coroutines on the Qt event loop (qasync), whether or not the app started one.

The app may run `app.exec()` without an asyncio loop; then a qasync loop is attached to the running Qt
loop (`already_running=True`), so tasks advance as Qt processes events. Tests release it afterwards.

qasync runs each `call_soon` callback as a Qt timer of its own (started, its event delivered, killed), and an engine
tick asks for a few a call (a task started, a future done): in a run of latent calls those timers are a large part of
what the window adds to the tick. `QtLoop` keeps the callbacks in a queue that one zero timer runs, those asked before
it fires, in order, as asyncio's own loop runs its ready queue once an iteration; one asked meanwhile waits for the
next turn.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextvars import Context
from typing import Any

import qasync
from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication

_attached: asyncio.AbstractEventLoop | None = None  # a QtLoop


class QtLoop(qasync.QEventLoop):  # type: ignore[misc]
    """qasync's loop with its `call_soon` callbacks run together, a turn of the Qt event loop at a time (above).
    qasync's own `call_soon_threadsafe` hands the callback to this thread before it calls `call_soon`."""

    def __init__(self, app: QCoreApplication | None, *, already_running: bool = False) -> None:
        super().__init__(app, already_running=already_running)
        self._soon: deque[asyncio.Handle] = deque()
        self._soon_timer = QTimer(app, singleShot=True, interval=0)
        self._soon_timer.timeout.connect(self._run_soon)

    def call_soon(self, callback: Callable[..., object], *args: Any, context: Context | None = None) -> asyncio.Handle:
        # (on a closed loop it is dropped unrun, as qasync drops its timers' callbacks then)
        handle = asyncio.Handle(callback, args, self, context=context)
        self._soon.append(handle)
        if not self._soon_timer.isActive():
            self._soon_timer.start()
        return handle

    def _run_soon(self) -> None:
        if self.is_closed():
            self._soon.clear()
            return
        # Those asked while these run wait for the next turn. A callback may run a nested event loop (a modal dialog),
        # in which the timer runs the rest of these: none is left for this call then.
        for _ in range(len(self._soon)):
            if not self._soon:
                break
            handle = self._soon.popleft()
            if not handle._cancelled:
                handle._run()  # (its exception goes to the loop's exception handler)
        if self._soon:
            self._soon_timer.start()


def event_loop() -> asyncio.AbstractEventLoop:
    """The running asyncio loop, or a qasync loop attached to the Qt event loop."""
    global _attached
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    if _attached is None or _attached.is_closed():
        _attached = QtLoop(QApplication.instance(), already_running=True)
        # Python threads, not qasync's QThreads, for `run_in_executor` (the model client resolves addresses
        # there): a QThread still alive when the application quits aborts the process.
        _attached.set_default_executor(ThreadPoolExecutor(thread_name_prefix="contextdeck-loop"))
    else:
        asyncio.events._set_running_loop(_attached)  # attached again after a `release()`
    return _attached


def spawn(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Start `coroutine` as a task on the Qt event loop; it advances while Qt processes events."""
    return event_loop().create_task(coroutine)


def release() -> None:
    """Cancel the attached loop's tasks and stop calling it the running loop, so that code after this
    (tests: `asyncio.run`) may start loops of its own. The loop itself is kept for the next `event_loop()`:
    a second qasync loop on the same application does not run its tasks.
    """
    loop = _attached
    if loop is None or loop.is_closed():
        return
    for task in asyncio.all_tasks(loop):
        task.cancel()
    if asyncio.events._get_running_loop() is loop:
        asyncio.events._set_running_loop(None)
