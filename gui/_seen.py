"""Whether a panel can be seen, for panels that work only for the user's eyes and catch up when shown."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def seen(widget: QWidget) -> bool:
    """Shown and not a dock tabbed behind another: Qt 6 keeps those visible (`isVisible`) but moves them
    off-screen, so only their empty visible region tells."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()
