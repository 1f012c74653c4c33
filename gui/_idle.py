"""The cycle collector runs while the window waits for input, never in the middle of an edit, and walks
everything only when the user is in another application, or once enough may be garbage and the window's sliced
work is done (see contextdeck/_runtime.py).

While slices are pending, a document another replaced is still being let go of: the views hold it until they
have taken the new one, then the graveyard frees it a slice at a time (`_slices.py`). Counted as what may be
garbage, it made a collection of everything due at the first idle moment, which walked it all (seconds at a million
messages) and found it alive; once the slices are done, reference counting has freed it, and an exact count says so.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, Qt
from PySide6.QtGui import QGuiApplication

from contextdeck._runtime import collect_everything, collect_when_idle

from ._slices import slices


def collect_while_idle(app: QCoreApplication) -> None:
    """Run `collect_when_idle` each time the application's event loop is about to wait for events (everything
    only with no slice pending: `idle`), and `collect_everything` each time the application stops being the active
    one."""
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    assert dispatcher is not None  # created with the application
    dispatcher.aboutToBlock.connect(idle)
    if isinstance(app, QGuiApplication):
        app.applicationStateChanged.connect(_state_changed)


def idle() -> None:
    collect_when_idle(everything=not slices().pending)


def _state_changed(state: Qt.ApplicationState) -> None:
    if state != Qt.ApplicationState.ApplicationActive:
        collect_everything()
