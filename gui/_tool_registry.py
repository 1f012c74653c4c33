"""File → Load Tool Registry… / Load Tool Folder…: the registry `{"type": "tool", "tool": "Tool.name"}` names.

The registry is one dict shared by the LLM view, the diagnostics and the calls panel; loading adds to it.
A Python registry is code: the user is asked first, as for activities.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from contextdeck.engine import ToolLoadError, load_tools

from ._questions import confirm_code as ask_to_run


def ask_registry_file(parent: QWidget | None, folder: str = "") -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Load tool registry", folder, "Tool registries (*.json *.py)")
    return path or None


def ask_registry_folder(parent: QWidget | None, folder: str = "") -> str | None:
    return QFileDialog.getExistingDirectory(parent, "Load a folder of tool JSON files", folder) or None


def confirm_code(parent: QWidget | None, path: str) -> bool:
    """Ask before running code: a Python registry is imported to read its TOOLS."""
    return ask_to_run(parent, "Load tool registry?", path,
                      "Loading it runs it to read its <code>TOOLS</code>.</p><p>Load it only if you trust it.")


class ToolRegistryUI(QObject):
    """The loaded tool registry and the actions that load it; `changed(message)` after each attempt."""

    changed = Signal(str)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.registry: dict[str, dict[str, Any]] = {}
        self.sources: list[str] = []
        # Injected in tests; by default file dialogs (starting at `folder`: the window's, beside the document) and a
        # warning box.
        self.folder: Callable[[], str] = lambda: ""
        self.ask_file: Callable[[QWidget | None], str | None] = lambda parent: ask_registry_file(parent, self.folder())
        self.ask_folder: Callable[[QWidget | None], str | None] = lambda parent: ask_registry_folder(parent,
                                                                                                   self.folder())
        self.confirm: Callable[[QWidget | None, str], bool] = confirm_code
        self.actions_by_name = {
            "load_tools": self._action("Load Tool Re&gistry…", "A JSON file of tool schemas, or a Python file with "
                                       "TOOLS or typed activities (it is code: you are asked first)", self.load_file),
            "load_tool_folder": self._action("Load Tool &Folder…", "A folder of tool JSON files", self.load_folder),
        }

    def tools(self) -> dict[str, dict[str, Any]] | None:
        """The registry, or None when nothing is loaded (references are then unknown)."""
        return self.registry if self.sources else None

    def load_file(self, path: str | None = None) -> bool:
        path = path or self.ask_file(self._window())
        if not path or (path.endswith(".py") and not self.confirm(self._window(), path)):
            return False
        return self.load(path)

    def load_folder(self, path: str | None = None) -> bool:
        path = path or self.ask_folder(self._window())
        if not path:
            return False
        return self.load(path)

    def load(self, path: str) -> bool:
        """Add the tools at `path` (a later load of a name replaces it); says what happened in `changed`."""
        try:
            loaded = load_tools(path)
        except ToolLoadError as error:
            self.changed.emit(f"Tools not loaded: {error}")
            return False
        self.registry.update(loaded)
        self.sources.append(path)
        self.changed.emit(f"Loaded {len(loaded)} tools from {Path(path).name}: {', '.join(sorted(loaded))}")
        return True

    def _action(self, text: str, tip: str, slot: Callable[[], object]) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _window(self) -> QWidget | None:
        parent = self.parent()
        return parent if isinstance(parent, QWidget) else None
