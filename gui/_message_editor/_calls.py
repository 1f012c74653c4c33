"""The form of a plan message: one box per call with a tool picker, and per parameter a value or a `†` reference
(with completion of the paths something writes); the problems of each call at its fields and in a list.
Pattern groups (`{"all" | "any" | "race": [call, ...]}`, SPEC 6.10) are boxes of calls with their pattern picked
from a list; a call is put in a group of its own, taken out of one, or a group undone into its calls; each
call's `_instance` is typed or picked from the instances the document names (empty: the engine runs it once
per instance it touches, 013).

A parameter's text is read by its schema type: a `string` parameter takes the text as it is; any other text is
read as JSON when it parses (`5`, `true`, `{"a": 1}`) and as a string otherwise. Text starting with `†` is an
expression, `††` a literal dagger; an emptied field removes the parameter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from PySide6.QtCore import QSize, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
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
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import METHODS, call_problems, group_of

from .._editor._base import ERROR_COLOR
from .._editor._json_editor import JsonEditor
from .._glyphs import glyph_button, name_glyph
from .._slow_patterns import slow_patterns
from .._summary import turn_words
from ._catalog import Catalog
from ._model import MessageModel

META = ("_instance", "_outputPath", "_outputMethod", "_output", "_reasoningForCall")
# A plan of more entries than this makes each entry's box as it scrolls into view (a box is a dozen widgets: a
# 500-call plan made at once took half a second, and every theme switch reached each of its widgets).
LAZY_ENTRIES = 40
PENDING_HEIGHT = 260  # an entry not made yet stands in at about a call box's height
AHEAD = 600  # pixels above and below the view whose entries are made too
# The patterns of a group (SPEC 6.10), as the picker offers them.
PATTERNS = {"all": "all: together, kept if all succeed",
            "any": "any: the first success wins",
            "race": "race: the first to finish wins"}


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
    if widget.property("problems") == reasons:  # unchanged (a plan shown again): a style sheet set re-polishes
        return
    widget.setStyleSheet(f"border: 1px solid {ERROR_COLOR.name()};" if reasons else "")
    widget.setToolTip("\n".join(reasons))
    widget.setProperty("problems", reasons)


def field_names(call: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The fields of a call's box: the tool's parameters, any others the call has, then the `_` fields."""
    declared = schema.get("properties")
    properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
    names = [name for name in properties if name[:1] != "_"]
    names += [name for name in call if name[:1] != "_" and name not in names]
    return [*names, *META]


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
        self.remove = glyph_button("✕", "Remove this call")
        self.up = glyph_button("↑", "Move this call up")
        self.down = glyph_button("↓", "Move this call down")
        self.regroup = QToolButton()  # into a group of its own, or out of its group (`CallsBody` says which)
        self.regroup.setObjectName("regroup")
        top = QHBoxLayout()
        top.addWidget(QLabel("Tool"))
        top.addWidget(self.tool, 1)
        for button in (self.up, self.down, self.regroup, self.remove):
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

    def set_catalog(self, catalog: Catalog) -> None:
        """Complete from `catalog`'s references and instances from now on."""
        self.catalog = catalog
        for name, widget in self.fields.items():
            completer = widget.completer() if isinstance(widget, QLineEdit) else None
            model = completer.model() if completer is not None else None
            if isinstance(model, QStringListModel):
                model.setStringList(list(catalog.instances if name == "_instance" else catalog.references))

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
        for name in field_names(self.call, schema):
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
            if name == "_instance":  # a name, never JSON: `1` stays the instance "1"
                schema = {"type": "string"}
            if name not in ("_output", "_reasoningForCall"):
                choices = self.catalog.instances if name == "_instance" else self.catalog.references
                completer = reference_completer(choices, line)
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
        if name == "_instance":
            return "every instance it touches (or global)"
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


class GroupBox(QGroupBox):
    """A pattern group: its pattern, its calls (boxes added by `CallsBody`), and what can be done to it."""

    def __init__(self, pattern: str, parent: QWidget | None = None) -> None:
        super().__init__("Group", parent)
        self.setObjectName("planGroup")
        self.pattern = QComboBox()
        self.pattern.setObjectName("groupPattern")
        # As wide as the form leaves it, not as its longest text: the plan form must fit beside the timeline.
        self.pattern.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.pattern.setMinimumContentsLength(8)
        for key, text in PATTERNS.items():
            self.pattern.addItem(text, key)
        self.pattern.setToolTip("all: the calls run together; their outputs are kept only if all succeed\n"
                                "any: the first success wins, the rest are cancelled\n"
                                "race: the first to finish wins, success or failure")
        self.pattern.setCurrentIndex(self.pattern.findData(pattern))
        self.add_button = QPushButton("+ call in group")
        self.ungroup = QToolButton()
        self.ungroup.setText("Ungroup")
        self.ungroup.setToolTip("Undo the group: its calls stay, one after another")
        self.up = glyph_button("↑", "Move the group up")
        self.down = glyph_button("↓", "Move the group down")
        self.remove = glyph_button("✕", "Remove the group and its calls")
        top = QHBoxLayout()
        top.addWidget(QLabel("Pattern"))
        top.addWidget(self.pattern, 1)
        for button in (self.up, self.down, self.ungroup, self.remove):
            top.addWidget(button)
        self.calls = QVBoxLayout()
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(self.calls)
        layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignLeft)


Where = tuple[int, int | None]  # a call's place: its plan entry, and its position in that entry's group (or None)


def _members(entry: Any) -> list[Any]:
    group = group_of(entry)
    if group is None:
        return [entry]
    return list(group[1]) if isinstance(group[1], list) else [group[1]]


class _Problems(QLabel):
    """The plan's problems, one a line, wrapped at the form's width. It lays out at its height for its current
    width, as a widget of fixed height: a word-wrapped label makes the form's whole layout height-for-width, which
    the scroll area then measures again, over every entry, at each resize (a plan selected: twice)."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def hasHeightForWidth(self) -> bool:
        return False

    def sizeHint(self) -> QSize:
        return QSize(self.minimumSizeHint().width(), self.heightForWidth(max(self.width(), 1)))

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # its height at the new width


class _Pending(QWidget):
    """Where an entry's box will be, once it scrolls into view, at the height it is expected to have."""

    def __init__(self, height: int) -> None:
        super().__init__()
        self.setFixedHeight(height)


class _Heights:
    """What the boxes not made yet are expected to measure: a call's box is a header and a row per field, a group's
    its own rows around its calls' boxes. Measured on the first boxes made (till then, `PENDING_HEIGHT` a call), so
    the form's height, and the scroll bar's, change little as the boxes are made."""

    def __init__(self) -> None:
        self.call_base, self.row = PENDING_HEIGHT - 5 * 26, 26  # a call of the five `_` fields: PENDING_HEIGHT
        self.group_base = 80
        self.measured = self.grouped = False

    def call(self, call: Any, tools: dict[str, Any]) -> int:
        if not isinstance(call, dict):
            call = {}
        tool = tools.get(str(call.get("_tool")))
        return self.call_base + self.row * len(field_names(call, tool.schema if tool is not None else {}))

    def entry(self, item: Any, tools: dict[str, Any]) -> int:
        if group_of(item) is None:
            return self.call(item, tools)
        return self.group_base + sum(self.call(member, tools) for member in _members(item))

    def measure(self, box: CallBox) -> bool:
        """Learn from a call box just made; whether that changed what is expected."""
        rows = box.form.rowCount()
        field = next(iter(box.fields.values()), None)
        if self.measured or not rows or field is None:
            return False
        self.row = field.sizeHint().height() + max(box.form.verticalSpacing(), 0)
        self.call_base = box.sizeHint().height() - self.row * rows
        self.measured = True
        return True

    def measure_group(self, group: GroupBox, boxes: list[CallBox]) -> bool:
        """Learn a group's own rows from a group box just made (after its calls' boxes were measured)."""
        if self.grouped or not self.measured:
            return False
        self.group_base = max(0, group.sizeHint().height() - sum(box.sizeHint().height() for box in boxes))
        self.grouped = True
        return True


class Boxes(Sequence[CallBox]):
    """The call boxes in call order, group members included; a box not made yet is made (with the rest of its
    plan entry) when it is asked for."""

    def __init__(self, make: Callable[[int], None]) -> None:
        self._boxes: list[CallBox | None] = []
        self._make = make  # makes the entry of the call of this number

    def __len__(self) -> int:
        return len(self._boxes)

    @overload
    def __getitem__(self, index: int) -> CallBox: ...
    @overload
    def __getitem__(self, index: slice) -> list[CallBox]: ...
    def __getitem__(self, index: int | slice) -> CallBox | list[CallBox]:
        if isinstance(index, slice):
            return [self[number] for number in range(*index.indices(len(self)))]
        number = index % len(self._boxes) if index < 0 and self._boxes else index
        if self._boxes[number] is None:
            self._make(number)
        box = self._boxes[number]
        assert box is not None
        return box

    def made(self) -> Iterator[tuple[int, CallBox]]:
        """The boxes made so far, with their call numbers."""
        return ((number, box) for number, box in enumerate(self._boxes) if box is not None)

    def reset(self, count: int) -> None:
        self._boxes = [None] * count

    def place(self, number: int, box: CallBox) -> None:
        self._boxes[number] = box


class CallsBody(QScrollArea):
    """The `plan` array of a plan message: its entries, each a call or a pattern group of calls; below them the
    turn's final output when it gave one (`output_edited`), as JSON, and who gave it.

    `boxes` are the call boxes in call order, group members included (the numbering of `call_problems`, the
    debugger and `validate`); `groups` the group boxes by plan entry.

    The output is edited as the calls are (a person's turn may give one; a model's answer is corrected the way its
    calls are). The `_model` beside it is the record of the exchange, audit only: said in a line, not edited here.
    """

    edited = Signal(object)
    output_edited = Signal(object)

    def __init__(self, catalog: Callable[[], Catalog] = Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._catalog_of = catalog
        self.catalog = Catalog()
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self.add_button = QPushButton("+ call")
        self.add_group_button = QPushButton("+ group")
        self.add_group_button.setToolTip("A group of calls that run by one pattern: all, any or race")
        self.problems = _Problems()
        self.problems.setObjectName("planProblems")
        self.problems.setStyleSheet(f"color: {ERROR_COLOR.name()};")
        adding = QHBoxLayout()
        adding.addWidget(self.add_button)
        adding.addWidget(self.add_group_button)
        adding.addStretch(1)
        self.output_box = QGroupBox("Final output")
        self.output_box.setObjectName("planOutput")
        self.answered = QLabel()
        self.answered.setWordWrap(True)
        self.answered.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.output = JsonEditor(check=_an_output)
        self.output.text.setAccessibleName("Final output")
        self.output.edited.connect(self.output_edited)
        output_layout = QVBoxLayout(self.output_box)
        output_layout.addWidget(self.answered)
        output_layout.addWidget(self.output)
        self.output_box.hide()
        self._layout.addWidget(self.problems)
        self._layout.addWidget(self.output_box)
        self._layout.addLayout(adding)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.inner = inner
        self.boxes = Boxes(lambda number: self._make_entry(self._entry_of[number]))
        self.groups: dict[int, GroupBox] = {}
        self._entries: list[QWidget] = []
        self._first: list[int] = []  # each entry's first call number
        self._entry_of: list[int] = []  # each call's entry
        self._problems: dict[int, dict[str, list[str]]] = {}  # per call number, as `_check` last found them
        self._calls: list[Any] = []
        self._heights = _Heights()  # of the entries not made yet
        self._checked: tuple[list[Any], dict[str, Any], dict[str, Any]] | None = None  # what `_check` last read
        self._provisional = False  # what `_check` last found waits for a slow pattern's search (`slow_patterns`)
        self._making = QTimer(self, singleShot=True, interval=0)  # the entries scrolled into view, next turn
        self._making.timeout.connect(self._make_shown)
        self.verticalScrollBar().valueChanged.connect(lambda _value: self._making.start())
        self.add_button.clicked.connect(self.add_call)
        self.add_group_button.clicked.connect(self.add_group)
        slow_patterns().searched.connect(self._searched)

    def set_catalog_source(self, source: Callable[[], Catalog]) -> None:
        self._catalog_of = source

    def load(self, model: MessageModel) -> None:
        self.catalog = self._catalog_of()
        if not self._has(model.value):
            self._calls = list(model.value)
            self._rebuild()
        self._check()
        self._show_output(model)

    def _show_output(self, model: MessageModel) -> None:
        if model.output is None:
            self.output_box.hide()
            return
        self.answered.setText(f"Answered by {turn_words(model.answered)} (the exchange, as recorded, is in the "
                              "JSON tab's _model)" if isinstance(model.answered, dict) else
                              "Given by a person (no model exchange)")
        self.output.set_value(model.output)
        # As tall as the output (a line or two more to type in), at most a dozen lines: the calls and the add
        # buttons stay in sight below it. Lines counted only that far: a big output is formatted when its tab shows.
        shown = 1
        for piece in json.JSONEncoder(indent=2).iterencode(model.output):
            shown += piece.count("\n")
            if shown >= 12:
                break
        text = self.output.text
        margins = text.contentsMargins().top() + text.contentsMargins().bottom() + 2 * text.frameWidth()
        text.setFixedHeight(min(max(shown + 1, 3), 12) * text.fontMetrics().lineSpacing() + margins + 8)
        self.output_box.show()

    def prepare(self, model: MessageModel) -> bool:
        """Makes the boxes of `model`'s calls now, on this page while it is not on screen (`MessageEditor.prepare`):
        showing the plan then finds them made. Whether it made any."""
        if self._has(model.value):
            return False
        self.load(model)
        return True

    def _has(self, calls: list[Any]) -> bool:
        """The boxes are those of `calls`."""
        return json.dumps(calls) == json.dumps(self._calls) and len(self._entries) == len(calls)

    def catalog_changed(self) -> None:
        """New written paths: each field's completions and the problems follow; the boxes stay (and their focus)."""
        self.catalog = self._catalog_of()
        for _number, box in self.boxes.made():
            box.set_catalog(self.catalog)
        self._check()

    def value(self) -> list[Any]:
        return self._calls

    def set_read_only(self, flag: bool) -> None:
        self.inner.setEnabled(not flag)
        self.output.set_read_only(flag)

    # -- the boxes ---------------------------------------------------------------------------------------

    def _rebuild(self) -> None:
        for old in self._entries:
            # Hidden now, deleted later: until then Tab, and the caret put in a new plan's body after an
            # Insert, took the old plan's first field, which went away on the next turn with the focus.
            old.hide()
            old.deleteLater()
        self.groups, self._entries, self._first, self._entry_of = {}, [], [], []
        for entry, item in enumerate(self._calls):
            self._first.append(len(self._entry_of))
            self._entry_of += [entry] * (len(_members(item)) if group_of(item) is not None else 1)
        self.boxes.reset(len(self._entry_of))
        lazy = len(self._calls) > LAZY_ENTRIES
        tools = self.catalog.tools
        for entry in range(len(self._calls)):
            widget = _Pending(self._heights.entry(self._calls[entry], tools)) if lazy else self._entry_widget(entry)
            self._layout.insertWidget(entry, widget)
            self._entries.append(widget)
        if lazy:
            self._make_shown()

    def _entry_widget(self, entry: int) -> QWidget:
        item = self._calls[entry]
        group = group_of(item)
        if group is None:
            return self._call_box(item, (entry, None))
        self.groups[entry] = self._group_box(entry, group[0], _members(item))
        return self.groups[entry]

    def _make_entry(self, entry: int) -> None:
        """The real box of an entry that was pending, in its place, with its problems shown."""
        pending = self._entries[entry]
        if not isinstance(pending, _Pending):
            return
        widget = self._entry_widget(entry)
        self._layout.replaceWidget(pending, widget)
        pending.deleteLater()
        self._entries[entry] = widget
        last = self._first[entry + 1] if entry + 1 < len(self._first) else len(self._entry_of)
        boxes = [self.boxes[number] for number in range(self._first[entry], last)]
        for number, box in zip(range(self._first[entry], last), boxes, strict=True):
            box.show_problems(self._problems.get(number, {}))
        learnt = self._heights.measure(boxes[0]) if boxes else False
        if isinstance(widget, GroupBox):
            learnt = self._heights.measure_group(widget, boxes) or learnt
        if learnt:  # the entries still pending stand in at the heights measured
            tools = self.catalog.tools
            for index, other in enumerate(self._entries):
                if isinstance(other, _Pending):
                    other.setFixedHeight(self._heights.entry(self._calls[index], tools))

    def entries(self) -> list[QWidget]:
        """Each plan entry's widget, in order: a call's box, a group's, or the stand-in of one not made yet."""
        return list(self._entries)

    def _make_shown(self) -> None:
        """Make the pending entries in view (and `AHEAD` around it); each made one can bring others into it."""
        for _ in range(4):
            top = self.verticalScrollBar().value() - AHEAD
            bottom = top + max(self.viewport().height(), 400) + 2 * AHEAD
            spacing = max(self._layout.spacing(), 0)
            y, due = self._layout.contentsMargins().top(), []  # the entries come first, the problems after them
            for entry, widget in enumerate(self._entries):
                height = widget.height() if isinstance(widget, _Pending) else widget.sizeHint().height()
                if y > bottom:
                    break
                if isinstance(widget, _Pending) and y + height >= top:
                    due.append(entry)
                y += height + spacing
            if not due:
                return
            for entry in due:
                self._make_entry(entry)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._making.start()

    def _call_box(self, call: Any, where: Where) -> CallBox:
        entry, member = where
        number = self._first[entry] + (member or 0)
        box = CallBox(number, call if isinstance(call, dict) else {}, self.catalog)
        box.edited.connect(lambda call: self._replace(where, call))
        box.remove.clicked.connect(lambda _checked=False: self._remove(where))
        box.up.clicked.connect(lambda _checked=False: self._move(where, -1))
        box.down.clicked.connect(lambda _checked=False: self._move(where, 1))
        if member is None:
            name_glyph(box.regroup, "⊞", "Put this call in a group (then add calls to the group)")
            box.regroup.clicked.connect(lambda _checked=False: self._wrap(entry))
        else:
            name_glyph(box.regroup, "⇱", "Take this call out of its group (it follows the group)")
            box.regroup.clicked.connect(lambda _checked=False: self._take_out(entry, member))
        self.boxes.place(number, box)
        return box

    def _group_box(self, entry: int, pattern: str, members: list[Any]) -> GroupBox:
        group = GroupBox(pattern)
        for member, call in enumerate(members):
            group.calls.addWidget(self._call_box(call, (entry, member)))
        group.pattern.activated.connect(lambda _index: self._set_pattern(entry, str(group.pattern.currentData())))
        group.add_button.clicked.connect(lambda _checked=False: self._add_to_group(entry))
        group.ungroup.clicked.connect(lambda _checked=False: self._commit(
            [*self._calls[:entry], *_members(self._calls[entry]), *self._calls[entry + 1:]], rebuild=True))
        group.remove.clicked.connect(lambda _checked=False: self._remove((entry, None)))
        group.up.clicked.connect(lambda _checked=False: self._move((entry, None), -1))
        group.down.clicked.connect(lambda _checked=False: self._move((entry, None), 1))
        return group

    # -- edits: each makes the whole new plan array --------------------------------------------------------

    def _new_call(self) -> dict[str, Any]:
        """A call of the first tool the document defines (or an empty tool name to pick)."""
        return {"_tool": min(self.catalog.tools, default="")}

    def add_call(self) -> None:
        self._commit([*self._calls, self._new_call()], rebuild=True)
        self.boxes[-1].tool.setFocus()

    def add_group(self) -> None:
        """Appends an `all` group of one new call."""
        self._commit([*self._calls, {"all": [self._new_call()]}], rebuild=True)
        self.boxes[-1].tool.setFocus()

    def _add_to_group(self, entry: int) -> None:
        self._set_members(entry, [*_members(self._calls[entry]), self._new_call()])
        self.boxes[sum(len(_members(item)) for item in self._calls[:entry + 1]) - 1].tool.setFocus()

    def _set_entry(self, entry: int, value: Any, rebuild: bool = True) -> None:
        calls = list(self._calls)
        calls[entry] = value
        self._commit(calls, rebuild=rebuild)

    def _set_members(self, entry: int, members: list[Any]) -> None:
        """A group's new calls; a group left with none goes."""
        group = group_of(self._calls[entry])
        assert group is not None
        if members:
            self._set_entry(entry, {group[0]: members})
        else:
            self._commit([c for i, c in enumerate(self._calls) if i != entry], rebuild=True)

    def _replace(self, where: Where, call: dict[str, Any]) -> None:
        entry, member = where
        if member is None:
            self._set_entry(entry, call, rebuild=False)
            return
        group = group_of(self._calls[entry])
        assert group is not None
        members = _members(self._calls[entry])
        members[member] = call
        self._set_entry(entry, {group[0]: members}, rebuild=False)

    def _remove(self, where: Where) -> None:
        entry, member = where
        if member is None:
            self._commit([c for i, c in enumerate(self._calls) if i != entry], rebuild=True)
        else:
            self._set_members(entry, [c for i, c in enumerate(_members(self._calls[entry])) if i != member])

    def _move(self, where: Where, step: int) -> None:
        """One place up or down among the plan's entries, or among its group's calls."""
        entry, member = where
        items = list(self._calls) if member is None else _members(self._calls[entry])
        at = entry if member is None else member
        if not 0 <= at + step < len(items):
            return
        items[at], items[at + step] = items[at + step], items[at]
        if member is None:
            self._commit(items, rebuild=True)
        else:
            self._set_members(entry, items)

    def _wrap(self, entry: int) -> None:
        self._set_entry(entry, {"all": [self._calls[entry]]})

    def _take_out(self, entry: int, member: int) -> None:
        members = _members(self._calls[entry])
        call = members.pop(member)
        group = group_of(self._calls[entry])
        assert group is not None
        kept = [{group[0]: members}] if members else []
        self._commit([*self._calls[:entry], *kept, call, *self._calls[entry + 1:]], rebuild=True)

    def _set_pattern(self, entry: int, pattern: str) -> None:
        if group_of(self._calls[entry]) is not None:
            self._set_entry(entry, {pattern: _members(self._calls[entry])})

    def _commit(self, calls: list[Any], rebuild: bool = False) -> None:
        self._calls = calls
        if rebuild:
            self._rebuild()
        self._check()
        self.edited.emit(calls)

    def _check(self) -> None:
        """Problems of the calls as written now (the engine's `call_problems`), at their fields and listed."""
        checked = (self._calls, self.catalog.tools, self.catalog.written)
        if self._checked is not None and self._checked[0] is checked[0] and self._checked[1:] == checked[1:]:
            return  # the same calls against the same tools and paths (the plan selected again): shown as they are
        with slow_patterns().apart() as left:  # a slow pattern's search: on a worker, these problems checked again
            found = call_problems(self._calls, self.catalog.tools, self.catalog.written)
        self._checked, self._provisional = (None, True) if left else (checked, False)
        per_call: dict[int, dict[str, list[str]]] = {}
        for problem in found:
            per_call.setdefault(problem.call, {}).setdefault(problem.field, []).append(problem.reason)
        self._problems = per_call
        for number, box in self.boxes.made():
            box.show_problems(per_call.get(number, {}))
        text = "\n".join(f"⚠ call {p.call} {p.field}: {p.reason}" for p in found)
        if text != self.problems.text():  # a label set lays the form out again, all its entries
            self.problems.setText(text)
        if self.problems.isHidden() == bool(found):
            self.problems.setVisible(bool(found))

    def _searched(self) -> None:
        if self._provisional:
            self._check()


def _an_output(value: Any) -> str | None:
    """Why a typed value cannot be the turn's output: null is no output (the box would go as it was typed)."""
    return "null is no output: to take the output away, remove it in the JSON tab" if value is None else None
