"""The window's item views repaint nothing when it is activated or deactivated (a dialog opened or closed over it,
the user switching to another application and back).

Qt's item views repaint their whole viewport on either event, whatever the palette, so that a selection can take
the inactive colours; the window's palette has the same colours in both groups (`_theme._palette`), so the repaint
would draw the same pixels again, in the turn that shows a dialog."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QAbstractItemView, QWidget

_ACTIVATION = (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate)


class StillOnActivation(QObject):
    """An event filter for item views: it eats (de)activation while the view's palette is the same in both."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() not in _ACTIVATION or not isinstance(watched, QAbstractItemView):
            return False
        return watched.palette().isEqual(QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)


def install_still_on_activation(window: QWidget) -> None:
    """Every item view inside `window` now (its panels are made) keeps still on activation."""
    still = StillOnActivation(window)
    for view in window.findChildren(QAbstractItemView):
        view.installEventFilter(still)
