"""Start the workbench: load a document, show the window, or render it to a PNG and exit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QApplication, QMainWindow, QTableView

from contextdeck.engine import Context, DocumentError, load_document

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"

_Index = QModelIndex | QPersistentModelIndex


class MessagesModel(QAbstractTableModel):
    """One row per message: type, kind, instance, summary."""

    HEADERS = ("type", "kind", "instance", "summary")

    def __init__(self, context: Context) -> None:
        super().__init__()
        self._context = context

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's names
        return 0 if parent.isValid() else len(self._context)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's names
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        message = self._context[index.row()]
        info = self._context.info(index.row())
        column = self.HEADERS[index.column()]
        if column == "type":
            return message.get("type")
        if column == "kind":
            return info.kind or ""
        if column == "instance":
            return info.instance or ""
        return str(message)[:120]


def main(doc: str | None = None, screenshot: str | None = None) -> int:
    if screenshot and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
    app = QApplication.instance() or QApplication(sys.argv[:1])
    path = Path(doc) if doc else EXAMPLES / "refund_workflow.json"
    try:
        document = load_document(path)
    except DocumentError as error:
        print(f"contextdeck: {error}", file=sys.stderr)
        return 1
    window = QMainWindow()
    window.setWindowTitle(f"ContextDeck — {path.name}")
    view = QTableView()
    view.setModel(MessagesModel(document.context))
    window.setCentralWidget(view)
    window.resize(1000, 640)
    window.show()
    if screenshot:
        app.processEvents()
        window.grab().save(screenshot)
        return 0
    return app.exec()
