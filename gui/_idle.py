"""The cycle collector runs while the window waits for input, not in the middle of an edit."""

from __future__ import annotations

from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication

from contextdeck._runtime import collect_when_idle


def collect_while_idle(app: QCoreApplication) -> None:
    """Run `collect_when_idle` each time the application's event loop is about to wait for events."""
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    assert dispatcher is not None  # created with the application
    dispatcher.aboutToBlock.connect(collect_when_idle)
