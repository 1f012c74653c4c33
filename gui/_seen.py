"""Whether a panel can be seen, for panels that work only for the user's eyes and catch up when shown."""

from __future__ import annotations

from PySide6.QtWidgets import QDockWidget, QWidget


def seen(widget: QWidget) -> bool:
    """Shown and not a dock tabbed behind another: Qt 6 keeps those visible (`isVisible`) but moves them
    off-screen, so only their empty visible region tells."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def behind_a_tab(widget: QWidget) -> bool:
    """In a dock tabbed behind another (or hidden): not a place for the focus, though Qt's chain and
    `isVisible` count it (Tab stopped in the Output audit, the LLM view, the plan graph and the call stack
    while other tabs were in front)."""
    parent: QWidget | None = widget
    while parent is not None:
        if isinstance(parent, QDockWidget):
            return not seen(parent)
        parent = parent.parentWidget()
    return False
