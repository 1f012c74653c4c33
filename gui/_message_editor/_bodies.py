"""The editors below the header, one per `Body`: multi-line text, a message's parts, the payload form, and a note
for raw shapes.

Each has `load(model)` (emits nothing; a value equal to the shown one leaves the widgets and the focus alone),
`value()` (what it shows), `set_read_only(flag)` and the signal `edited(value)` carrying the body's whole new
value.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from contextdeck.engine import TEXT_KEYS, Form, part_text

from .._editor import DataEditor
from .._editor._base import CtrlTabTypesTab
from .._summary import PART_NAMES
from ._calls import CallsBody
from ._model import FORM_DEPTH, FORM_PARTS, Body, MessageModel, deeper_than
from ._tools import ToolsBody


class TextBody(QWidget):
    """A text message's `text`: several lines; Enter is a line break."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QPlainTextEdit()
        self.text.setObjectName("messageText")
        self.text.setPlaceholderText("What the LLM reads")
        CtrlTabTypesTab(self.text)  # Tab goes on to the next control; Ctrl+Tab types a tab
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 8)
        layout.addWidget(self.text)
        self.text.textChanged.connect(lambda: self.edited.emit(self.text.toPlainText()))

    def load(self, model: MessageModel) -> None:
        if self.text.toPlainText() != model.value:
            with QSignalBlocker(self.text):
                self.text.setPlainText(model.value)

    def value(self) -> str:
        return self.text.toPlainText()

    def set_read_only(self, flag: bool) -> None:
        self.text.setReadOnly(flag)


def describe_part(part: dict[str, Any]) -> str:
    """A part the form keeps as it is, in a line: what it is and what it points at (a data URL by its size)."""
    kind = part.get("type")
    inner = part.get(kind) if isinstance(kind, str) else None
    inner = inner if isinstance(inner, dict) else {}
    named = (inner.get(key) for key in ("url", "filename", "file_id", "format"))
    detail = next((value for value in named if isinstance(value, str)), "")
    if detail.startswith("data:"):  # the bytes themselves: their type and size say enough
        detail = f"{detail.partition(',')[0]}, {len(detail) * 3 // 4 // 1024} KB inline"
    name = PART_NAMES[kind].capitalize() if kind in PART_NAMES else (
        f"A {kind} part" if isinstance(kind, str) else "A part without a type")
    return f"{name}{': ' + detail if detail else ''} (kept as it is; the JSON tab changes it)"


class PartsBody(QWidget):
    """A `{role, content: [parts]}` message (OpenAI's form; a trace's message with an image keeps it): each text
    part in a box of its own, each other part (an image, audio, a file) named in a line and kept as it is."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._parts: list[dict[str, Any]] = []
        self._texts: dict[int, QPlainTextEdit] = {}
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(8, 0, 8, 8)

    def load(self, model: MessageModel) -> None:
        parts: list[dict[str, Any]] = model.value
        if _outline(parts) == _outline(self._parts):  # the same parts: texts set in place, the focus stays
            for index, box in self._texts.items():
                if box.toPlainText() != parts[index]["text"]:
                    with QSignalBlocker(box):
                        box.setPlainText(parts[index]["text"])
            self._parts = list(parts)
            return
        while (item := self._layout.takeAt(0)) is not None:
            if (widget := item.widget()) is not None:
                widget.deleteLater()
        self._parts, self._texts = list(parts), {}
        for index, part in enumerate(parts):
            if part_text(part) is not None:
                box = self._texts[index] = QPlainTextEdit(part["text"])
                box.setPlaceholderText("What the LLM reads")
                box.setAccessibleName(f"Text part {index + 1}")
                CtrlTabTypesTab(box)
                box.textChanged.connect(lambda: self.edited.emit(self.value()))
                self._layout.addWidget(box, 1)
            else:
                line = QLabel(describe_part(part))
                line.setWordWrap(True)
                line.setTextFormat(Qt.TextFormat.PlainText)
                line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                self._layout.addWidget(line)

    def value(self) -> list[dict[str, Any]]:
        return [{**part, "text": self._texts[index].toPlainText()} if index in self._texts else part
                for index, part in enumerate(self._parts)]

    def set_read_only(self, flag: bool) -> None:
        for box in self._texts.values():
            box.setReadOnly(flag)


def _outline(parts: list[dict[str, Any]]) -> list[Any]:
    """What decides the boxes: a text part by its place alone, any other part whole."""
    return [None if part_text(part) is not None else part for part in parts]


class FormBody(QWidget):
    """A value edited in the data editor's form: a payload under its schema, or tools and calls (inferred)."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = DataEditor(json_tab=False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.data)
        self.data.value_edited.connect(self.edited)

    def load(self, model: MessageModel) -> None:
        self.data.set_value(model.value, model.schema)

    def prepare(self, model: MessageModel, *, push_out: bool, needed: bool = False) -> bool:
        return self.data.prepare(model.value, model.schema, push_out=push_out, needed=needed)

    def value(self) -> Any:
        return self.data.value()

    def set_read_only(self, flag: bool) -> None:
        self.data.set_read_only(flag)


# Why the form has no body for a message, by what the engine says it is; anything else is a shape it does not know.
_NO_FORM = {
    Form.RECORD: "A run record: how a call ran (what it received, when, for how long; a model's exchange). It is "
                 "audit only, neither data nor shown to the model: read it in the JSON tab.",
    Form.ADVISOR: "An advisor (017): its id, role, advice schema and scopes are edited in the JSON tab.",
    Form.PRESET: "A preset: the model call's settings, never shown to the model. Edit them in the JSON tab.",
}


class RawBody(QLabel):
    """A message the form has no editor for, saying why: a form the engine knows and this editor does not, a
    shape it does not know, or values nested deeper than the form goes."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.setMargin(8)

    def load(self, model: MessageModel) -> None:
        parts = next((model.value[key] for key in TEXT_KEYS if key in model.value), None) \
            if isinstance(model.value, dict) else None
        if deeper_than(model.value, FORM_DEPTH):
            why = f"Values nested more than {FORM_DEPTH} levels deep: edit this message in the JSON tab."
        elif isinstance(parts, list) and len(parts) > FORM_PARTS:
            why = f"{len(parts):,} content parts, more than the form shows ({FORM_PARTS}): edit them in the JSON tab."
        else:
            why = _NO_FORM.get(model.form, "The form has no editor for this shape of message: edit it in the "
                                           "JSON tab.")
        self.setText(why)

    def value(self) -> None:
        return None

    def set_read_only(self, flag: bool) -> None:
        pass


BODIES: dict[Body, type[Any]] = {
    Body.TEXT: TextBody,
    Body.PARTS: PartsBody,
    Body.PAYLOAD: FormBody,
    Body.TOOLS: ToolsBody,
    Body.CALLS: CallsBody,
    Body.RAW: RawBody,
}
