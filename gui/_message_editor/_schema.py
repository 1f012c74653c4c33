"""The schema editor: build a JSON Schema with a form (types, nullable, description, enum, const, default, pattern,
format, bounds, properties with required, array items), one `SchemaNode` per schema node, nested.

Each node edits only the keywords it shows and keeps every other key as it is (`title`, `$ref`, `oneOf`, ...:
those stay editable in the message's JSON tab). An edit emits the node's whole new schema; a parent folds a
child's schema into its own, so the root emits the whole schema once per keystroke.
"""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import pattern_problem

from .._editor._base import ERROR_COLOR
from .._glyphs import glyph_button
from ._focus import show
from ._model import with_key

TYPES = ("any", "string", "number", "integer", "boolean", "object", "array", "null")
# A node that is a choice of schemas: the value meets exactly one (`oneOf`) or at least one (`anyOf`) of them.
CHOICES = {"one of": "oneOf", "any of": "anyOf"}
FORMATS = ("", "email", "date-time", "date", "time", "uri", "uuid", "hostname", "ipv4")
Schema = dict[str, Any]


def type_of(schema: Schema) -> tuple[str, bool]:
    """(the one main type or "any", whether null is allowed too): `["object", "null"]` is ("object", True)."""
    declared = schema.get("type")
    if declared is None:
        for main, key in CHOICES.items():
            if isinstance(schema.get(key), list):
                return main, False
    if isinstance(declared, str) and declared in TYPES:
        return declared, False
    if isinstance(declared, list):
        others = [name for name in declared if name != "null"]
        if len(others) == 1 and others[0] in TYPES and len(declared) == 2:
            return others[0], True
    return "any", False


def with_type(schema: Schema, main: str, nullable: bool) -> Schema:
    """`type` set to `main` (`[main, "null"]` when nullable); "any" removes it. A choice (`one of`, `any of`) has no
    `type` and keeps the branches it had under either keyword (one `{}` to start); a node that was a choice and
    becomes a type drops its branches (a `oneOf` beside a `type` is kept: the form does not show it)."""
    if type_of(schema)[0] in CHOICES and main not in CHOICES:
        for key in CHOICES.values():
            schema = with_key(schema, key, None)
    if main in CHOICES:
        kept = (schema[key] for key in (CHOICES[main], *CHOICES.values()) if isinstance(schema.get(key), list))
        branches: list[Any] = next(kept, [{}])
        schema = with_key(schema, "type", None)
        for key in CHOICES.values():
            schema = with_key(schema, key, None)
        return with_key(schema, CHOICES[main], branches)
    value: Any = None if main == "any" else ([main, "null"] if nullable and main != "null" else main)
    return with_key(schema, "type", value)


def parse_values(text: str, main: str) -> list[Any] | None:
    """The values of a comma-separated list (an `enum`): strings for a string, JSON values otherwise."""
    values: list[Any] = []
    for part in (item.strip() for item in text.split(",")):
        if not part:
            continue
        if main == "string":
            values.append(part)
            continue
        try:
            values.append(json.loads(part))
        except ValueError:
            values.append(part)
    return values or None


def show_values(values: Any) -> str:
    if not isinstance(values, list):
        return ""
    return ", ".join(value if isinstance(value, str) else json.dumps(value) for value in values)


def parse_number(text: str) -> int | float | None:
    """A bound as typed, or None (empty, or not a number yet)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def with_required(schema: Schema, name: str, required: bool) -> Schema:
    names = [item for item in schema.get("required", []) if item != name]
    if required:
        names.append(name)
    return with_key(schema, "required", names or None)


def without_property(schema: Schema, name: str) -> Schema:
    properties = {key: value for key, value in schema.get("properties", {}).items() if key != name}
    return with_required(with_key(schema, "properties", properties), name, False)


class NameBox(QLineEdit):
    """A box whose Enter is its own action (adding what it names): the key goes no further, where a dialog's default
    button took it too (Edit → Request Schema… closed on the first property added)."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        super().keyPressEvent(event)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()


def _line(name: str, placeholder: str, width: int = 0, kind: type[QLineEdit] = QLineEdit) -> QLineEdit:
    line = kind()
    line.setObjectName(name)
    line.setPlaceholderText(placeholder)
    line.setToolTip(placeholder)
    if width:
        line.setMaximumWidth(width)
    return line


def _paint_text(widget: QWidget, colour: QColor | None) -> None:
    """The widget's text in `colour`, or (None) in its parent's again, following the theme."""
    if colour is None:
        widget.setPalette(QPalette())  # nothing of its own: it inherits every role again
        return
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.Text, colour)
    palette.setColor(QPalette.ColorRole.WindowText, colour)
    widget.setPalette(palette)


def _row(boxes: tuple[QWidget, ...]) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for box in boxes:
        layout.addWidget(box)
    return row


class SchemaNode(QWidget):
    """One schema node: its type, nullable and description, the keywords of its type, its properties or items."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._schema: Schema = {}
        self._loaded = False
        self.type = QComboBox()
        self.type.setObjectName("schemaType")
        self.type.addItems([*TYPES, *CHOICES])
        self.type.setToolTip("The value's type, or a choice of schemas (one of: exactly one fits; any of: one or more)")
        self.nullable = QCheckBox("nullable")
        self.description = _line("schemaDescription", "description")
        self.enum = _line("schemaEnum", "enum: a, b, c")
        self.const = _line("schemaConst", "const")
        self.default = _line("schemaDefault", "default")
        self.pattern = _line("schemaPattern", "pattern (regular expression)")
        self.format = QComboBox()
        self.format.setObjectName("schemaFormat")
        self.format.setEditable(True)
        self.format.addItems(FORMATS)
        self.format.setToolTip("format")
        self.minimum = _line("schemaMinimum", "minimum", 90)
        self.maximum = _line("schemaMaximum", "maximum", 90)
        self.new_name = _line("schemaNewProperty", "new property name", kind=NameBox)
        self.add_button = QPushButton("+ property")
        self.problem = QLabel()  # what the schema does not take as typed, in words the keyboard user sees
        self.problem.setObjectName("schemaProblem")
        self.problem.setWordWrap(True)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        _paint_text(self.problem, ERROR_COLOR)  # a palette, not a style sheet: no re-polish per node made
        self.problem.hide()
        self._untaken: dict[str, str] = {}  # a bound typed that is no number: why the schema did not take it
        self.rows: dict[str, PropertyRow] = {}
        self.items: SchemaNode | None = None
        self.branches: list[BranchRow] = []
        self.add_branch_button = QPushButton("+ option")
        self.add_branch_button.setToolTip("Add a schema the value may meet")
        self.add_branch_button.clicked.connect(self.add_branch)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.type)
        top.addWidget(self.nullable)
        top.addWidget(self.description, 1)
        # The values a node takes on one line, the rules its text or number keeps on another: seven boxes on one line
        # cut their placeholders at the editor's usual width.
        self.details = QWidget()
        details = QVBoxLayout(self.details)
        details.setContentsMargins(0, 0, 0, 0)
        details.setSpacing(3)
        self.detail_rows = {_row(boxes): boxes for boxes in ((self.enum, self.const, self.default),
                                                             (self.pattern, self.format, self.minimum, self.maximum))}
        for row in self.detail_rows:
            details.addWidget(row)
        self.children_box = QWidget()
        self.children_layout = QVBoxLayout(self.children_box)
        self.children_layout.setContentsMargins(16, 0, 0, 0)
        self.children_layout.setSpacing(4)
        self.adder = QWidget()
        adder = QHBoxLayout(self.adder)
        adder.setContentsMargins(16, 0, 0, 0)
        adder.addWidget(self.new_name, 1)
        adder.addWidget(self.add_button)
        self.branch_adder = QWidget()
        branch_adder = QHBoxLayout(self.branch_adder)
        branch_adder.setContentsMargins(16, 0, 0, 0)
        branch_adder.addWidget(self.add_branch_button)
        branch_adder.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.details)
        layout.addWidget(self.problem)
        layout.addWidget(self.children_box)
        layout.addWidget(self.adder)
        layout.addWidget(self.branch_adder)

        self.type.currentTextChanged.connect(lambda _text: self._retype())
        self.nullable.toggled.connect(lambda _flag: self._retype())
        self.description.textEdited.connect(lambda text: self._set("description", text or None))
        self.enum.textEdited.connect(lambda text: self._set("enum", parse_values(text, self._main())))
        self.const.textEdited.connect(self._const_edited)
        self.default.textEdited.connect(self._default_edited)
        self.pattern.textEdited.connect(self._pattern_edited)
        self.format.editTextChanged.connect(lambda text: self._set("format", text or None))
        self.minimum.textEdited.connect(lambda text: self._bound("minimum", text))
        self.maximum.textEdited.connect(lambda text: self._bound("maximum", text))
        self.new_name.returnPressed.connect(self.add_property)
        self.add_button.clicked.connect(self.add_property)
        self.load({})

    # -- showing -------------------------------------------------------------------------------------------

    def schema(self) -> Schema:
        return self._schema

    def load(self, schema: Any) -> None:
        """Shows `schema` (anything but an object shows as an empty schema); emits nothing."""
        schema = schema if isinstance(schema, dict) else {}
        if self._loaded and json.dumps(schema) == json.dumps(self._schema):
            return  # the echo of this node's own edit: every field keeps its focus and cursor
        self._loaded = True
        self._schema = schema
        main, nullable = type_of(schema)
        for widget, text in ((self.description, schema.get("description")), (self.pattern, schema.get("pattern")),
                             (self.const, schema.get("const")), (self.enum, show_values(schema.get("enum"))),
                             (self.default, schema.get("default")),
                             (self.minimum, schema.get("minimum")), (self.maximum, schema.get("maximum"))):
            shown = "" if text is None else (text if isinstance(text, str) else json.dumps(text))
            if widget is self.default and "default" in schema and text is None:
                shown = "null"  # a default of null, not an absent one: an empty box would read as none
            if widget.text() != shown:
                with QSignalBlocker(widget):
                    widget.setText(shown)
        with QSignalBlocker(self.type), QSignalBlocker(self.nullable), QSignalBlocker(self.format):
            self.type.setCurrentText(main)
            self.nullable.setChecked(nullable)
            fmt = schema.get("format")
            self.format.setCurrentText(fmt if isinstance(fmt, str) else "")
        self._untaken.clear()  # each box shows the schema's own value again
        self._show_details(main)
        self._rebuild_children()

    def _show_details(self, main: str) -> None:
        self.nullable.setEnabled(main not in ("any", "null", *CHOICES))
        for widget, types in ((self.enum, ("string", "number", "integer", "any")), (self.const, ("string", "any")),
                              (self.default, ("string", "number", "integer", "boolean", "any")),
                              (self.pattern, ("string",)), (self.format, ("string",)),
                              (self.minimum, ("number", "integer")), (self.maximum, ("number", "integer"))):
            widget.setVisible(main in types)
        for row, boxes in self.detail_rows.items():
            row.setVisible(any(not box.isHidden() for box in boxes))
        self.adder.setVisible(main == "object")
        self.branch_adder.setVisible(main in CHOICES)
        self._show_problems()

    def _show_problems(self) -> None:
        """Marks the boxes whose text the schema does not take, and says why under them: a pattern that is no
        regular expression (kept, as typed: every check of the schema then says it cannot be used), a bound that
        is no number (not kept)."""
        problems = dict(self._untaken)
        pattern = self.pattern.text()
        if self.pattern.isVisibleTo(self) and pattern:
            problem = pattern_problem(pattern)
            if problem is not None:
                problems["pattern"] = problem
        lines = []
        for key, box in (("default", self.default), ("pattern", self.pattern), ("minimum", self.minimum),
                         ("maximum", self.maximum)):
            problem = problems.get(key) if box.isVisibleTo(self) else None
            tip = f"{box.placeholderText()}\n⚠ {problem}" if problem else box.placeholderText()
            if box.toolTip() != tip:  # changed only when it changes: the form is made again at each selection
                box.setToolTip(tip)
                _paint_text(box, ERROR_COLOR if problem else None)
            if problem:
                lines.append(f"⚠ {key}: {problem}")
        self.problem.setText("\n".join(lines))
        self.problem.setVisible(bool(lines))

    def _rebuild_children(self) -> None:
        while (item := self.children_layout.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.deleteLater()
        self.rows, self.items, self.branches = {}, None, []
        main = self._main()
        if main == "object":
            properties = self._schema.get("properties")
            required = self._schema.get("required", [])
            for name, child in (properties.items() if isinstance(properties, dict) else ()):
                row = PropertyRow(name, child, isinstance(required, list) and name in required)
                row.edited.connect(self._property_edited)
                row.required.toggled.connect(lambda flag, name=name: self._commit(
                    with_required(self._schema, name, flag)))
                row.remove.clicked.connect(lambda _checked=False, name=name: self._removed(name))
                self.children_layout.addWidget(row)
                self.rows[name] = row
        elif main == "array":
            self.items = SchemaNode()
            self.items.load(self._schema.get("items", {}))
            self.items.edited.connect(lambda child: self._commit(with_key(self._schema, "items", child)))
            self.children_layout.addWidget(QLabel("items:"))
            self.children_layout.addWidget(self.items)
        elif main in CHOICES:
            key = CHOICES[main]
            for place, branch in enumerate(self._schema[key]):
                option = BranchRow(place, branch)
                option.node.edited.connect(lambda child, place=place: self._branch_edited(place, child))
                option.remove.clicked.connect(lambda _checked=False, place=place: self._branch_removed(place))
                self.children_layout.addWidget(option)
                self.branches.append(option)
        self.children_box.setVisible(bool(self.rows) or self.items is not None or bool(self.branches))

    # -- editing -------------------------------------------------------------------------------------------

    def _main(self) -> str:
        return type_of(self._schema)[0]

    def _commit(self, schema: Schema) -> None:
        self._schema = schema
        self.edited.emit(schema)

    def _set(self, key: str, value: Any) -> None:
        self._commit(with_key(self._schema, key, value))

    def _retype(self) -> None:
        before = self._main()
        main = self.type.currentText()
        self._commit(with_type(self._schema, main, self.nullable.isChecked() and main not in ("any", "null", *CHOICES)))
        self._show_details(main)
        if main != before:
            self._rebuild_children()

    def _const_edited(self, text: str) -> None:
        if not text:
            self._set("const", None)
        elif self._main() == "string":
            self._set("const", text)
        else:
            try:
                self._set("const", json.loads(text))
            except ValueError:
                self._set("const", text)

    def _pattern_edited(self, text: str) -> None:
        self._set("pattern", text or None)
        self._show_problems()

    def _default_edited(self, text: str) -> None:
        """The value a form starts a new field with: text for a string, JSON otherwise (any text for "any")."""
        main = self._main()
        self._untaken.pop("default", None)
        if text == "null" and type_of(self._schema)[1]:
            self._commit({**self._schema, "default": None})  # a nullable node's `null` is the value null
        elif not text or main == "string":
            self._set("default", text or None)
        else:
            try:
                value = json.loads(text)
            except ValueError:
                if main == "any":
                    self._set("default", text)
                else:  # not JSON yet: nothing changes until it is
                    kept = json.dumps(self._schema["default"]) if "default" in self._schema else "no default"
                    self._untaken["default"] = f"not JSON: the schema keeps {kept}"
            else:  # `null` is a default too (an emptied box removes the keyword)
                self._commit({**self._schema, "default": value})
        self._show_problems()

    def _bound(self, key: str, text: str) -> None:
        number = parse_number(text)
        if text and number is None:  # not a number yet: nothing changes until it is
            kept = self._schema.get(key)
            self._untaken[key] = f"not a number: the schema keeps {'no ' + key if kept is None else kept}"
        else:
            self._untaken.pop(key, None)
            self._set(key, number)
        self._show_problems()

    def _property_edited(self, name: str, child: Schema) -> None:
        properties = dict(self._schema.get("properties", {}))
        properties[name] = child
        self._commit(with_key(self._schema, "properties", properties))

    def _removed(self, name: str) -> None:
        self._commit(without_property(self._schema, name))
        self._rebuild_children()

    def _choice_key(self) -> str:
        return CHOICES[self._main()]

    def _branch_edited(self, place: int, child: Schema) -> None:
        branches = list(self._schema[self._choice_key()])
        branches[place] = child
        self._commit(with_key(self._schema, self._choice_key(), branches))

    def _branch_removed(self, place: int) -> None:
        key = self._choice_key()
        branches = [branch for i, branch in enumerate(self._schema[key]) if i != place]
        self._commit(with_key(self._schema, key, branches))
        self._rebuild_children()

    def add_branch(self) -> None:
        """Adds a schema the value may meet (any value, to start); the focus goes to its type."""
        key = self._choice_key()
        self._commit(with_key(self._schema, key, [*self._schema[key], {}]))
        self._rebuild_children()
        chosen = self.branches[-1].node.type
        chosen.setFocus()
        QTimer.singleShot(0, chosen, lambda: show(chosen))

    def add_property(self) -> None:
        """Adds the property named in the box (a string); a name already there is not overwritten."""
        name = self.new_name.text().strip()
        properties = self._schema.get("properties")
        properties = dict(properties) if isinstance(properties, dict) else {}
        if not name or name in properties:
            return
        properties[name] = {"type": "string"}
        self.new_name.clear()
        self._commit(with_key(self._schema, "properties", properties))
        self._rebuild_children()
        chosen = self.rows[name].node.type
        chosen.setFocus()
        # The new row may be below the scroll area's sight; it has its place once it is shown, on the next turn.
        QTimer.singleShot(0, chosen, lambda: show(chosen))


def _frame_node(frame: QFrame, node: QWidget, left: list[QWidget], right: list[QWidget]) -> None:
    """Lays out a schema node in its frame: a line of `left` and `right` widgets, the node below."""
    top = QHBoxLayout()
    top.setContentsMargins(0, 0, 0, 0)
    for widget in left:
        top.addWidget(widget)
    top.addStretch(1)
    for widget in right:
        top.addWidget(widget)
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(6, 4, 6, 4)
    layout.setSpacing(2)
    layout.addLayout(top)
    layout.addWidget(node)


class BranchRow(QFrame):
    """One schema of a choice: its place, remove, and its own schema node."""

    def __init__(self, place: int, schema: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.remove = glyph_button("✕", f"Remove option {place + 1}")
        self.node = SchemaNode()
        self.node.load(schema)
        _frame_node(self, self.node, [QLabel(f"option {place + 1}")], [self.remove])


class PropertyRow(QFrame):
    """One property of an object schema: its name, required, remove, and its own schema node."""

    edited = Signal(str, object)

    def __init__(self, name: str, schema: Any, required: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.name = name
        self.label = QLabel(f"<b>{html.escape(name)}</b>")  # a name is text, never markup
        self.required = QCheckBox("required")
        self.required.setAccessibleName(f"{name} is required")
        self.required.setChecked(required)
        self.remove = glyph_button("✕", f"Remove the property {name}")
        self.node = SchemaNode()
        self.node.load(schema)
        self.node.edited.connect(lambda child: self.edited.emit(self.name, child))
        _frame_node(self, self.node, [self.label], [self.required, self.remove])
