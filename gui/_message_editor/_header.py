"""The message header above the body: type (or kind), `_instance`, description, and the role of a text message
or of a custom content type (001)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QWidget

from contextdeck.engine import body_of

from ._model import Body, MessageModel

TYPES = ("text", "input", "state", "data", "tool", "plan", "error")
ROLES = ("user", "assistant", "system")


def _combo(items: tuple[str, ...], name: str) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setEditable(True)
    combo.addItems(items)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    return combo


def _line(name: str, placeholder: str) -> QLineEdit:
    line = QLineEdit()
    line.setObjectName(name)
    line.setPlaceholderText(placeholder)
    line.setClearButtonEnabled(True)
    return line


def _set_text(widget: QLineEdit, text: str) -> None:
    """Shows `text` without a signal; a field that already says it keeps its cursor."""
    if widget.text() != text:
        with QSignalBlocker(widget):
            widget.setText(text)


class HeaderEditor(QWidget):
    """Edits the keys that say what a message is. `retyped(type)` when the type is committed (Enter, a pick,
    leaving the box); `edited(key, value)` per keystroke for the others, `None` removing the key."""

    retyped = Signal(str)
    edited = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.type = _combo(TYPES, "headerType")
        self.type.setToolTip("text, tool and plan are their own forms; any other type is the kind of a data message")
        self.kind = _line("headerKind", "data")
        self.role = _combo(ROLES, "headerRole")
        self.instance = _line("headerInstance", "global (no instance)")
        self.description = _line("headerDescription", "what this data is, for the LLM")
        self.form = QFormLayout(self)
        self.form.setContentsMargins(8, 4, 8, 4)
        for label, widget in (("Type", self.type), ("Kind", self.kind), ("Role", self.role),
                              ("Instance", self.instance), ("Description", self.description)):
            self.form.addRow(label, widget)
        self._type = ""
        self.type.activated.connect(self._type_committed)
        line = self.type.lineEdit()
        assert line is not None
        line.editingFinished.connect(self._type_committed)
        self.kind.textEdited.connect(lambda text: self.edited.emit("kind", text))
        self.role.editTextChanged.connect(self._role_edited)
        self.instance.textEdited.connect(lambda text: self.edited.emit("_instance", text or None))
        self.description.textEdited.connect(lambda text: self.edited.emit("description", text or None))

    def show_message(self, message: dict[str, Any], model: MessageModel) -> None:
        """Fills the fields from `message`; shows the rows that mean something for its form. Emits nothing."""
        self._type = model.type
        if self.type.currentText() != model.type:
            with QSignalBlocker(self.type):
                self.type.setCurrentText(model.type)
        # A custom content type (001) shows its role beside the keys of its content object, which say the rest.
        body = body_of(message)
        is_text, is_data, wrapped = model.body in (Body.TEXT, Body.PARTS), model.kind is not None, body is not message
        role = message.get("role", "user")
        if (is_text or wrapped) and self.role.currentText() != str(role):
            with QSignalBlocker(self.role):
                self.role.setCurrentText(str(role))
        message = body
        kind = message.get("kind", "data")
        _set_text(self.kind, kind if isinstance(kind, str) else "")
        instance = message.get("_instance")
        _set_text(self.instance, "" if instance is None else str(instance))
        description = message.get("description")
        _set_text(self.description, description if isinstance(description, str) else "")
        self.form.setRowVisible(self.kind, model.type == "data")
        self.form.setRowVisible(self.role, is_text or wrapped)
        self.form.setRowVisible(self.instance, is_data)

    def set_read_only(self, flag: bool) -> None:
        for widget in (self.type, self.role):
            widget.setEnabled(not flag)
        for line in (self.kind, self.instance, self.description):
            line.setReadOnly(flag)

    def _type_committed(self, *_index: object) -> None:
        text = self.type.currentText().strip()
        if not text:  # a message needs a type: the box says the current one again
            with QSignalBlocker(self.type):
                self.type.setCurrentText(self._type)
        elif text != self._type:
            self._type = text
            self.retyped.emit(text)

    def _role_edited(self, text: str) -> None:
        self.edited.emit("role", text or None)
