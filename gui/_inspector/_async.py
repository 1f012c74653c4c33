"""Run the engine's coroutines on the Qt event loop (qasync), whether or not the app started one.

The app may run `app.exec()` without an asyncio loop; then a qasync loop is attached to the running Qt
loop (`already_running=True`), so tasks advance as Qt processes events. Tests release it afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import qasync
from PySide6.QtWidgets import QApplication

_attached: asyncio.AbstractEventLoop | None = None  # a qasync.QEventLoop


def event_loop() -> asyncio.AbstractEventLoop:
    """The running asyncio loop, or a qasync loop attached to the Qt event loop."""
    global _attached
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    if _attached is None or _attached.is_closed():
        _attached = qasync.QEventLoop(QApplication.instance(), already_running=True)
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
