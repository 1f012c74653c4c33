"""The form of a tool message: one schema editor per tool (its description, parameters and `_` properties:
`_outputPath` with a const or a pattern, `_activity`, `_output`), add, remove."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ._model import MessageModel
from ._schema import SchemaNode

NEW_TOOL: dict[str, Any] = {"type": "object", "properties": {}}


class ToolBox(QGroupBox):
    """One tool: its name as the title, a remove button, and its schema."""

    def __init__(self, name: str, schema: Any, parent: QWidget | None = None) -> None:
        super().__init__(name, parent)
        self.name = name
        self.remove = QToolButton()
        self.remove.setText("✕ remove tool")
        self.node = SchemaNode()
        self.node.load(schema)
        layout = QVBoxLayout(self)
        layout.addWidget(self.remove)
        layout.addWidget(self.node)


class ToolsBody(QScrollArea):
    """The `tool` object of a tool message: name → schema."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self.new_name = QLineEdit()
        self.new_name.setObjectName("newToolName")
        self.new_name.setPlaceholderText("new tool name")
        self.add_button = QPushButton("+ tool")
        adder = QHBoxLayout()
        adder.addWidget(self.new_name, 1)
        adder.addWidget(self.add_button)
        self._layout.addLayout(adder)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.inner = inner
        self.boxes: dict[str, ToolBox] = {}
        self._tools: dict[str, Any] = {}
        self.new_name.returnPressed.connect(self.add_tool)
        self.add_button.clicked.connect(self.add_tool)

    def load(self, model: MessageModel) -> None:
        if model.value == self._tools and list(model.value) == list(self.boxes):
            for name, box in self.boxes.items():
                box.node.load(model.value[name])
            return
        self._tools = dict(model.value)
        self._rebuild()

    def value(self) -> dict[str, Any]:
        return self._tools

    def forget_pending(self) -> None:
        """The name typed for a tool not added yet belongs to the message shown before."""
        self.new_name.clear()

    def set_read_only(self, flag: bool) -> None:
        self.inner.setEnabled(not flag)

    def _rebuild(self) -> None:
        for box in self.boxes.values():
            box.deleteLater()
        self.boxes = {}
        for position, (name, schema) in enumerate(self._tools.items()):
            box = ToolBox(name, schema)
            box.node.edited.connect(lambda child, name=name: self._commit({**self._tools, name: child}))
            box.remove.clicked.connect(lambda _checked=False, name=name: self._remove(name))
            self._layout.insertWidget(position, box)
            self.boxes[name] = box

    def _commit(self, tools: dict[str, Any]) -> None:
        self._tools = tools
        self.edited.emit(tools)

    def _remove(self, name: str) -> None:
        self._commit({key: value for key, value in self._tools.items() if key != name})
        self._rebuild()

    def add_tool(self) -> None:
        """Adds a tool named as the box says (an object schema without parameters yet)."""
        name = self.new_name.text().strip()
        if not name or name in self._tools:
            return
        self.new_name.clear()
        self._commit({**self._tools, name: dict(NEW_TOOL)})
        self._rebuild()
        self.boxes[name].node.description.setFocus()
