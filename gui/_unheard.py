"""`unheard()`: a burst of events sent past the application's event filters written in Python (`listen`).

Such a filter is a call into Python for each event Qt delivers to any widget, and some actions are bursts of
hundreds inside one call: a dialog's making, every widget of the window told it is blocked when a window-modal
dialog opens, every widget told of a new palette, a part's palette walk and repaint. None of them can be a key or a
click (those come from the event loop, not from inside a call), so the filters are taken off for the burst and put
back after it: at a million messages they were most of the cost of Next Turn's making and opening."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject

_listening: list[QObject] = []  # the application's event filters, in the order installed
_off: list[QObject] = []  # those taken off by the bursts under way


def listen(app: QCoreApplication, watcher: QObject) -> None:
    """Install `watcher` as an event filter of the application, to be taken off inside `unheard`."""
    app.installEventFilter(watcher)
    _listening.append(watcher)


@contextmanager
def unheard() -> Iterator[None]:
    """The events sent inside are not seen by the application's filters (`listen`): no key or click among them."""
    app = QCoreApplication.instance()
    _listening[:] = [watcher for watcher in _listening if shiboken6.isValid(watcher)]
    off = [watcher for watcher in _listening if watcher not in _off] if app is not None else []
    for watcher in off:
        app.removeEventFilter(watcher)  # type: ignore[union-attr]
        _off.append(watcher)
    try:
        yield
    finally:  # (a burst inside another leaves the filters off for the rest of the outer one)
        for watcher in off:  # (in the order first installed: called in the same order as before)
            _off.remove(watcher)
            if shiboken6.isValid(watcher):
                app.installEventFilter(watcher)  # type: ignore[union-attr]
