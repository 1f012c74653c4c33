"""`Workbench`: the hooks an installed component may use of the window, and nothing more.

The window (`MainWindow`) is one. An installer (`install_inspector`, `install_models`, `install_turns`, …)
takes a `Workbench` and the other components it needs, handed to it by the window; mypy then checks that no
component reaches into the window for another one (the window is not a service locator).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDockWidget, QMenu, QStatusBar, QWidget

if TYPE_CHECKING:
    from ._banner import Banner
    from ._commands import Commands
    from ._document_model import DocumentModel
    from ._files_ui import FilesUI
    from ._session import DocumentSession


class Workbench(Protocol):
    """What a component installed in the window may use."""

    settings: QSettings  # the user's settings (kept between sessions)
    session: DocumentSession  # the file side: path, sidecar settings, open
    document: DocumentModel  # what every view reads: the document, the selection, the time cursor
    commands: Commands  # the only way the document changes
    files: FilesUI  # the file dialogs and the unsaved-changes guard
    banner: Banner  # the message strip above the editor
    state_dock: QDockWidget  # the window's own docks another dock may be tabbed with
    watch_dock: QDockWidget

    def window(self) -> QWidget:
        """The parent of the component's actions and dialogs."""
        ...

    def menu(self, name: str) -> QMenu: ...

    def add_dock(self, widget: QWidget, title: str, area: Qt.DockWidgetArea) -> QDockWidget: ...

    def tabifyDockWidget(self, first: QDockWidget, second: QDockWidget, /) -> None: ...

    def resizeDocks(self, docks: Sequence[QDockWidget], sizes: Sequence[int], orientation: Qt.Orientation, /) -> None:
        ...

    def height(self) -> int: ...

    def bring_to_front(self, dock: QDockWidget) -> None: ...

    def statusBar(self) -> QStatusBar: ...
