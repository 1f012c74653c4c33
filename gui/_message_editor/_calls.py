"""The form of a plan message: one box per call with a tool picker, and per parameter a value or a `†` reference
(with completion of the paths something writes); the problems of each call at its fields and in a list.

A parameter's text is read by its schema type: a `string` parameter takes the text as it is; any other text is
read as JSON when it parses (`5`, `true`, `{"a": 1}`) and as a string otherwise. Text starting with `†` is an
expression, `††` a literal dagger; an emptied field removes the parameter.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import METHODS, call_problems

from .._editor._base import ERROR_COLOR
from ._catalog import Catalog
from ._model import MessageModel

META = ("_outputPath", "_outputMethod", "_output", "_reasoningForCall")


def reference_completer(references: tuple[str, ...] | list[str], parent: QWidget) -> QCompleter:
    """A completer for `†` fields: any reference containing what was typed, case-insensitive."""
    completer = QCompleter(parent)
    completer.setModel(QStringListModel(list(references), completer))  # owned by the completer, not by Python
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
    return completer


def parse_parameter(text: str, schema: Any) -> Any:
    """The value a parameter field's `text` stands for (see the module's docstring); None: remove it."""
    if text == "":
        return None
    declared = schema.get("type") if isinstance(schema, dict) else None
    if declared == "string" or text.startswith("†"):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def show_parameter(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _mark(widget: QWidget, reasons: list[str]) -> None:
    """A red frame and the reasons as tooltip on a field with problems; the frame goes when they go."""
    widget.setStyleSheet(f"border: 1px solid {ERROR_COLOR.name()};" if reasons else "")
    widget.setToolTip("\n".join(reasons))
    widget.setProperty("problems", reasons)


class CallBox(QGroupBox):
    """One call: its tool, its parameters and its `_` fields. `edited(call)` carries the whole new call."""

    edited = Signal(object)

    def __init__(self, number: int, call: dict[str, Any], catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(f"Call {number}", parent)
        self.call = dict(call)
        self.catalog = catalog
        self.tool = QComboBox()
        self.tool.setObjectName("callTool")
        self.tool.setEditable(True)
        self.tool.addItems(sorted(catalog.tools))
        self.tool.setCurrentText(str(call.get("_tool", "")))
        self.tool.setToolTip("The tool to call (the tools the document defines)")
        self.remove = QToolButton()
        self.remove.setText("✕")
        self.remove.setToolTip("Remove this call")
        self.up = QToolButton()
        self.up.setText("↑")
        self.down = QToolButton()
        self.down.setText("↓")
        top = QHBoxLayout()
        top.addWidget(QLabel("Tool"))
        top.addWidget(self.tool, 1)
        for button in (self.up, self.down, self.remove):
            top.addWidget(button)
        self.form = QFormLayout()
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(self.form)
        self.fields: dict[str, QLineEdit | QComboBox] = {}
        self.tool.activated.connect(lambda _index: self._tool_committed())
        line = self.tool.lineEdit()
        assert line is not None
        line.editingFinished.connect(self._tool_committed)
        self._build_fields()

    def _tool_schema(self) -> dict[str, Any]:
        tool = self.catalog.tools.get(str(self.call.get("_tool")))
        return tool.schema if tool is not None else {}

    def _build_fields(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        schema = self._tool_schema()
        declared = schema.get("properties")
        properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
        required = schema.get("required", [])
        names = [name for name in properties if name[:1] != "_"]
        names += [name for name in self.call if name[:1] != "_" and name not in names]
        for name in [*names, *META]:  # the tool's parameters, any others the call has, then the `_` fields
            self._add_field(name, properties.get(name), name in required)

    def _add_field(self, name: str, schema: Any, required: bool) -> None:
        if name == "_outputMethod":
            combo = QComboBox()
            combo.addItems(["", *METHODS])
            combo.setCurrentText(str(self.call.get(name, "")))
            combo.currentTextChanged.connect(lambda text: self._set(name, text or None))
            widget: QLineEdit | QComboBox = combo
        else:
            line = QLineEdit(show_parameter(self.call[name]) if name in self.call else "")
            line.setPlaceholderText(self._hint(name, schema))
            if name not in ("_output", "_reasoningForCall"):
                completer = reference_completer(self.catalog.references, line)
                line.setCompleter(completer)
                # A pick from the completion list is an edit too (QCompleter sets the text without textEdited).
                completer.activated.connect(lambda text: self._set(name, parse_parameter(text, schema)))
            line.textEdited.connect(lambda text: self._set(name, parse_parameter(text, schema)))
            widget = line
        widget.setObjectName(f"param:{name}")
        self.form.addRow(f"{name}{' *' if required else ''}", widget)
        self.fields[name] = widget

    def _hint(self, name: str, schema: Any) -> str:
        if name == "_outputPath":
            return "where the result goes: †kind.path"
        if name == "_output":
            return "the result, as JSON (a latent tool's output)"
        if name == "_reasoningForCall":
            return "why this call"
        declared = schema.get("type", "any") if isinstance(schema, dict) else "not in the tool's schema"
        return f"{declared}: a value or a †reference"

    def _set(self, name: str, value: Any) -> None:
        call = {key: item for key, item in self.call.items() if key != name}
        if value is not None:
            call = {**self.call, name: value} if name in self.call else {**call, name: value}
        self.call = call
        self.edited.emit(call)

    def _tool_committed(self) -> None:
        name = self.tool.currentText().strip()
        if name and name != self.call.get("_tool"):
            self.call = {"_tool": name, **{k: v for k, v in self.call.items() if k != "_tool"}}
            self._build_fields()
            self.edited.emit(self.call)

    def show_problems(self, problems: dict[str, list[str]]) -> None:
        """Marks each field with its problems (`$._tool`, `$.name`, `$` for the call)."""
        _mark(self.tool, problems.get("$._tool", []) + problems.get("$", []))
        for name, widget in self.fields.items():
            reasons = [reason for field, found in problems.items() for reason in found
                       if field == f"$.{name}" or field.startswith((f"$.{name}.", f"$.{name}["))]
            _mark(widget, reasons)


class CallsBody(QScrollArea):
    """The `plan` array of a plan message."""

    edited = Signal(object)

    def __init__(self, catalog: Callable[[], Catalog] = Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._catalog_of = catalog
        self.catalog = Catalog()
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self.add_button = QPushButton("+ call")
        self.problems = QLabel()
        self.problems.setObjectName("planProblems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(f"color: {ERROR_COLOR.name()};")
        self._layout.addWidget(self.problems)
        self._layout.addWidget(self.add_button)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.inner = inner
        self.boxes: list[CallBox] = []
        self._calls: list[Any] = []
        self.add_button.clicked.connect(self.add_call)

    def set_catalog_source(self, source: Callable[[], Catalog]) -> None:
        self._catalog_of = source

    def load(self, model: MessageModel) -> None:
        self.catalog = self._catalog_of()
        if json.dumps(model.value) != json.dumps(self._calls) or len(self.boxes) != len(model.value):
            self._calls = list(model.value)
            self._rebuild()
        self._check()

    def value(self) -> list[Any]:
        return self._calls

    def set_read_only(self, flag: bool) -> None:
        self.inner.setEnabled(not flag)

    def _rebuild(self) -> None:
        for box in self.boxes:
            box.deleteLater()
        self.boxes = []
        for number, call in enumerate(self._calls):
            box = CallBox(number, call if isinstance(call, dict) else {}, self.catalog)
            box.edited.connect(lambda call, number=number: self._call_edited(number, call))
            box.remove.clicked.connect(lambda _checked=False, number=number: self._commit(
                [c for i, c in enumerate(self._calls) if i != number], rebuild=True))
            box.up.clicked.connect(lambda _checked=False, number=number: self._move(number, -1))
            box.down.clicked.connect(lambda _checked=False, number=number: self._move(number, 1))
            self._layout.insertWidget(number, box)
            self.boxes.append(box)

    def _call_edited(self, number: int, call: dict[str, Any]) -> None:
        calls = list(self._calls)
        calls[number] = call
        self._commit(calls)

    def _move(self, number: int, step: int) -> None:
        target = number + step
        if 0 <= target < len(self._calls):
            calls = list(self._calls)
            calls[number], calls[target] = calls[target], calls[number]
            self._commit(calls, rebuild=True)

    def add_call(self) -> None:
        """Appends a call of the first tool the document defines (or an empty tool name to pick)."""
        self._commit([*self._calls, {"_tool": min(self.catalog.tools, default="")}], rebuild=True)
        self.boxes[-1].tool.setFocus()

    def _commit(self, calls: list[Any], rebuild: bool = False) -> None:
        self._calls = calls
        if rebuild:
            self._rebuild()
        self._check()
        self.edited.emit(calls)

    def _check(self) -> None:
        """Problems of the calls as written now (the engine's `call_problems`), at their fields and listed."""
        found = call_problems(self._calls, self.catalog.tools, self.catalog.written)
        per_call: dict[int, dict[str, list[str]]] = {}
        for problem in found:
            per_call.setdefault(problem.call, {}).setdefault(problem.field, []).append(problem.reason)
        for number, box in enumerate(self.boxes):
            box.show_problems(per_call.get(number, {}))
        self.problems.setText("\n".join(f"⚠ call {p.call} {p.field}: {p.reason}" for p in found))
        self.problems.setVisible(bool(found))
