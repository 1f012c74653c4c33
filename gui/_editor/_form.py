"""The form tab: a summary of problems at the top, the generated form below, errors placed at their fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from ._base import ERROR_COLOR, FieldSlot
from ._field import Field, field_from_schema, field_from_value
from ._validation import Problem
from ._widgets import make_editor


def describe(path: tuple[Any, ...]) -> str:
    """A path as the user reads it: `customer.email`, `items[2].name`, `(root)`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "(root)"


class FormView(QScrollArea):
    """The generated form. `edited` fires after a user's change; `value()` is then the whole new value."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(6)
        self.summary = QLabel()
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        palette = self.summary.palette()
        palette.setColor(self.summary.foregroundRole(), ERROR_COLOR)
        self.summary.setPalette(palette)
        self.summary.hide()
        self._layout.addWidget(self.summary)
        self.root: FieldSlot = FieldSlot(make_editor(Field(), None))
        self._layout.addWidget(self.root)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.field = Field()
        self._read_only = False
        self._problems: list[Problem] = []

    def set_value(self, value: Any, schema: Mapping[str, Any] | None) -> None:
        """Rebuilds the form for `value` (inferring a form from it when there is no schema); emits nothing."""
        self.field = field_from_schema(schema) if schema is not None else field_from_value(value)
        self.reload(value)

    def reload(self, value: Any) -> None:
        """Rebuilds the widgets for a new value under the same schema; emits nothing."""
        editor = make_editor(self.field, value)
        editor.set_read_only(self._read_only)
        editor.edited.connect(self.edited)
        self.root.replace_editor(editor)
        self.show_problems(self._problems)

    def value(self) -> Any:
        return self.root.editor.value()

    def set_read_only(self, flag: bool) -> None:
        self._read_only = flag
        self.root.editor.set_read_only(flag)

    def locate(self, path: tuple[Any, ...]) -> FieldSlot | None:
        """The slot of the field at `path`, or None when the form has no widget there."""
        slot: FieldSlot | None = self.root
        for step in path:
            slot = slot.editor.slot(step) if slot is not None else None
        return slot

    def show_problems(self, problems: list[Problem]) -> None:
        """Each problem at its field; problems at the root or at paths without a widget in the summary."""
        self._problems = list(problems)
        placed: dict[int, tuple[FieldSlot, list[str]]] = {}
        loose: list[str] = []
        for path, message in problems:
            slot = self.locate(path)
            if slot is None or (slot is self.root and slot.editor.container):
                loose.append(f"{describe(path)}: {message}" if path else message)
            else:
                placed.setdefault(id(slot), (slot, []))[1].append(message)
        for slot in self.findChildren(FieldSlot):
            entry = placed.get(id(slot))
            slot.show_errors(tuple(entry[1]) if entry else ())
        self.summary.setText("\n".join(f"⚠ {line}" for line in loose))
        self.summary.setVisible(bool(loose))
