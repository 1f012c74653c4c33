"""`FirstInput`: what must be done before the next input event is delivered, while work is split over turns.

The window splits work that was more than a frame in one turn of the event loop over several: a document's
opening (its views take it, then its last message is selected), the Next Turn dialog (made, then opened). What the
user does in between must not act on the half-done state: the first input event finishes the work first. Then
it is delivered (a key acts on the document as shown), or refused (a window-modal dialog now open would have kept
it from the window).
"""

from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtGui import QGuiApplication, QWindow
from PySide6.QtWidgets import QWidget


def input_targets(window: QWidget | None) -> list[QObject]:
    """Where the user's input reaches `window` first: its `QWindow` and the object with the focus. Without a
    window, or before it has a `QWindow` (not shown yet), the application, which every event passes through."""
    # QWindow is imported with the module: PySide makes a class's Python type (and its enums) when it first
    # meets it, which is not to be here, in the turn of a document's hand-over.
    handle: QWindow | None = window.windowHandle() if window is not None else None
    if handle is None:
        app = QCoreApplication.instance()
        return [app] if app is not None else []
    focus = QGuiApplication.focusObject()
    return [target for target in (handle, focus) if target is not None]


class FirstInput(QObject):
    """Calls `first()` before the next input event is delivered, while started; with `refuse`, the event is then
    refused (but a window's activation). It watches `targets()`, read at each start: by default the application
    (every event of every object passes through it, in Python); a window gives where input reaches it first
    (`input_targets`), its `QWindow` (keys, clicks, the wheel, drops, a close, its activation) and the object with
    the focus (a shortcut's `ShortcutOverride` goes there, and a shortcut's key never reaches the window)."""

    INPUT = frozenset({
        QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride, QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonDblClick, QEvent.Type.Wheel, QEvent.Type.TouchBegin, QEvent.Type.TabletPress,
        QEvent.Type.ContextMenu, QEvent.Type.InputMethod, QEvent.Type.DragEnter, QEvent.Type.Drop,
        QEvent.Type.Close,
        QEvent.Type.FocusIn,  # the window activated: the timeline, given the focus, would make its first row current
    })
    # Accepted, these grant what they ask (a close, a drop: a move deletes the data at its source); refused, not.
    GRANTED = frozenset({QEvent.Type.Close, QEvent.Type.DragEnter, QEvent.Type.Drop})

    def __init__(self, first: Callable[[], None], parent: QObject, *,
                 targets: Callable[[], list[QObject]] | None = None, refuse: bool = False) -> None:
        super().__init__(parent)
        self._first = first
        self._refuse = refuse
        self._targets = targets or (lambda: input_targets(None))
        self._watched: list[QObject] = []
        self.watching = False

    def start(self) -> None:
        if not self.watching:
            self._watched = self._targets()
            for target in self._watched:
                target.installEventFilter(self)
            self.watching = True

    def stop(self) -> None:
        for target in self._watched:
            if shiboken6.isValid(target):
                target.removeEventFilter(self)
        self._watched = []
        self.watching = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in self.INPUT:
            return False
        self._first()
        if not self._refuse or kind == QEvent.Type.FocusIn:
            return False
        if kind in self.GRANTED:
            event.ignore()  # the window system does not close the window, a drag's source keeps its data
        else:
            event.accept()  # taken (a shortcut's `ShortcutOverride`: the key is not taken as the shortcut)
        return True
