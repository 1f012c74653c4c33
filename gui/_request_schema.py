"""The request's own schema (a saved request's `schema`: what the final output must be), edited with the schema
editor in a dialog; applying it is one undoable step, and makes a bare context a saved request."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QScrollArea, QVBoxLayout, QWidget

from contextdeck.engine import Shape

from ._message_editor._schema import SchemaNode

if TYPE_CHECKING:
    from ._window import MainWindow


class RequestSchemaDialog(QDialog):
    """The schema editor over a copy of the request schema; OK applies it."""

    def __init__(self, schema: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Request Schema")
        self.resize(640, 520)
        self.node = SchemaNode()
        self.node.load(copy.deepcopy(schema) if isinstance(schema, dict) else {"type": "object", "properties": {}})
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.node)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The schema of the request's final output (the document's top-level <tt>schema</tt>)."))
        layout.addWidget(scroll, 1)
        layout.addWidget(self.buttons)


def edit_request_schema(window: MainWindow) -> RequestSchemaDialog | None:
    """Opens the request schema dialog (window-modal); OK pushes one undoable step. JSON Lines documents have no
    request schema: the status bar says so."""
    document = window.session.document
    if document.shape is Shape.JSONL:
        window.statusBar().showMessage("A JSON Lines document has no request schema: save it as .json first.", 5000)
        return None
    dialog = RequestSchemaDialog(document.schema, window)
    dialog.accepted.connect(lambda: window.commands.set_request_schema(dialog.node.schema() or None))
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog
