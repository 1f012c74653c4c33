"""The contract every field widget keeps, and the slot that frames a field and shows its errors."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from ._field import Field

ERROR_COLOR = QColor("#e5534b")  # readable on light and dark palettes alike


class FieldEditor(QWidget):
    """One JSON value edited through widgets. The value is the truth; widgets are a view of it.

    `set_value` never emits; a user's change emits `edited` once the new value is in place.
    Leaves keep the value they were given until the user edits them, so an untouched field is never rewritten
    (a date-time stays as it was written, 1.0 stays 1.0).
    """

    edited = Signal()
    container = False  # objects and arrays: drawn as a titled group rather than beside a label

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = field
        self._value: Any = None
        self.key = ""  # the widget-table key that made this editor (set by the factory)

    def value(self) -> Any:
        return self._value

    def set_value(self, value: Any) -> None:
        self._value = value

    def set_read_only(self, flag: bool) -> None:
        self.setEnabled(not flag)

    def slot(self, key: Any) -> FieldSlot | None:
        """The slot of the child at `key` (a property name or an array index), None for leaves."""
        return None

    def set_title(self, title: str, tooltip: str) -> None:
        """Containers show their name as a group title; leaves are labelled by their parent."""

    def _user_changed(self, value: Any) -> None:
        if value != self._value or type(value) is not type(self._value):
            self._value = value
            self.edited.emit()


class FieldSlot(QWidget):
    """Holds one editor; when its path has validation errors, a red frame, the message below, and a tooltip."""

    def __init__(self, editor: FieldEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(2, 2, 2, 2)
        self._layout.setSpacing(1)
        self._layout.addWidget(editor)
        self._message = QLabel(self)
        self._message.setObjectName("fieldError")
        self._message.setWordWrap(True)
        self._message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        palette = self._message.palette()
        palette.setColor(self._message.foregroundRole(), ERROR_COLOR)
        self._message.setPalette(palette)
        self._message.hide()
        self._layout.addWidget(self._message)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self._base_tooltip = editor.toolTip()
        self.messages: tuple[str, ...] = ()

    def replace_editor(self, editor: FieldEditor) -> None:
        """Swaps in a new editor (the value changed kind); errors are cleared until the next validation."""
        self._layout.replaceWidget(self.editor, editor)
        self.editor.setParent(None)
        self.editor.deleteLater()
        self.editor = editor
        self._base_tooltip = editor.toolTip()
        self.show_errors(())

    def show_errors(self, messages: tuple[str, ...]) -> None:
        if messages == self.messages:
            return
        self.messages = messages
        self._message.setText("\n".join(messages))
        self._message.setVisible(bool(messages))
        tip = "\n".join(part for part in (self._base_tooltip, *(f"⚠ {m}" for m in messages)) if part)
        self.editor.setToolTip(tip)
        self.update()

    @property
    def message_text(self) -> str:
        return self._message.text() if self.messages else ""

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.messages:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(ERROR_COLOR, 1.5))
        rect = QRectF(self.editor.geometry()).adjusted(-1.25, -1.25, 1.25, 1.25)
        painter.drawRoundedRect(rect, 3, 3)
