"""The cycle collector runs while the window waits for input, never in the middle of an edit, and walks
everything only when the user is in another application (see contextdeck/_runtime.py)."""

from __future__ import annotations

from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, Qt
from PySide6.QtGui import QGuiApplication

from contextdeck._runtime import collect_everything, collect_when_idle


def collect_while_idle(app: QCoreApplication) -> None:
    """Run `collect_when_idle` each time the application's event loop is about to wait for events, and
    `collect_everything` each time the application stops being the active one."""
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    assert dispatcher is not None  # created with the application
    dispatcher.aboutToBlock.connect(collect_when_idle)
    if isinstance(app, QGuiApplication):
        app.applicationStateChanged.connect(_state_changed)


def _state_changed(state: Qt.ApplicationState) -> None:
    if state != Qt.ApplicationState.ApplicationActive:
        collect_everything()
