"""contextdeck.gui: the PySide6 workbench over `contextdeck.engine`."""

from ._app import main

__all__ = ["main"]
