"""The request's own schema (a saved request's `schema`: what the final output must be), edited with the schema
editor in a dialog; applying it is one undoable step, and makes a bare context a saved request."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QLabel, QScrollArea, QVBoxLayout, QWidget

from contextdeck.engine import Shape

from ._message_editor._focus import controls, move_focus, show
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
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a stop showing no focus, before the schema's first control
        column = QWidget()
        rows = QVBoxLayout(column)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.addWidget(self.node)
        rows.addStretch(1)  # the schema from the top down (stretched, it spread its rows over the whole area)
        scroll.setWidget(column)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The schema of the request's final output (the document's top-level <tt>schema</tt>)."))
        layout.addWidget(scroll, 1)
        layout.addWidget(self.buttons)

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab and Shift+Tab in visual order, round the dialog: Qt's order is the order the schema's widgets were
        made in, which took Tab from the description to the new property's name below every property."""
        if move_focus(self, QApplication.focusWidget(), next):
            return True
        chain = controls(self)
        if not chain:
            return super().focusNextPrevChild(next)
        first = chain[0] if next else chain[-1]
        show(first)
        first.setFocus(Qt.FocusReason.TabFocusReason if next else Qt.FocusReason.BacktabFocusReason)
        return True


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
