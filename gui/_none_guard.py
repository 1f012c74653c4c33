"""A guard against a reference-count bug of PySide6 6.12 on Python 3.11.

Every call of a C++ method that returns void (setText, drawText, QTimer.start, processEvents…) gives back
`None` without taking a reference to it: shiboken treats None as immortal, which it is only from Python
3.12 on. Each call so drops None's count by one; a few hundred repaints of the timeline take thousands,
and when the count reaches zero the interpreter aborts ("Fatal Python error: none_dealloc").
Until a fixed PySide6 is available, a timer keeps None's count high. None is a static object that is
never freed, so raising its count has no other effect.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QCoreApplication, QTimer

LOW = 5_000_000
TOP_UP = 50_000_000
CHECK_MS = 200

_timer: QTimer | None = None


def affected() -> bool:
    return sys.version_info < (3, 12) and sys.implementation.name == "cpython"


def top_up() -> None:
    """Raise None's reference count when it runs low (CPython: `ob_refcnt` is the object's first field)."""
    if affected() and sys.getrefcount(None) < LOW:
        ctypes.c_ssize_t.from_address(id(None)).value += TOP_UP


def install() -> None:
    """Top up now and every `CHECK_MS` while the application runs (idempotent)."""
    global _timer
    top_up()
    app = QCoreApplication.instance()
    if _timer is not None or app is None or not affected():
        return
    _timer = QTimer(app)
    _timer.setInterval(CHECK_MS)
    _timer.timeout.connect(top_up)
    _timer.start()
