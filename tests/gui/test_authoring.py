"""Authoring without JSON: inserting every message type, the schema editor, tool and plan forms, problems."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent, QPalette, QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QLineEdit, QToolButton, QWidget
from test_window import settings as settings
from test_window import window as window

from contextdeck.engine import pattern_problem
from contextdeck.gui._editor._base import ERROR_COLOR
from contextdeck.gui._message_editor import Body, MessageEditor
from contextdeck.gui._message_editor._schema import SchemaNode
from contextdeck.gui._window import MainWindow


def type_text(qtbot: Any, widget: QWidget, text: str) -> None:
    """Types `text` key by key; characters QTest cannot name (†, ①) arrive as key events carrying the text,
    as a keyboard layout that has them sends them."""
    for char in text:
        if char.isascii():
            qtbot.keyClicks(widget, char)
        else:
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                QApplication.sendEvent(widget, QKeyEvent(kind, Qt.Key.Key_unknown, Qt.KeyboardModifier.NoModifier,
                                                         char))


@pytest.mark.parametrize(("action", "kind", "body"), [
    ("insert_text", "text", Body.TEXT), ("insert_input", "input", Body.PAYLOAD),
    ("insert_state", "state", Body.PAYLOAD), ("insert_data", "data", Body.PAYLOAD),
    ("insert_tool", "tool", Body.TOOLS), ("insert_plan", "plan", Body.CALLS), ("insert_error", "error", Body.PAYLOAD),
])
def test_every_message_type_is_inserted_from_the_menu(window: MainWindow, action: str, kind: str,
                                                      body: Body) -> None:
    """Each Insert action puts a message of its type after the selection and opens it in its own form."""
    window.select_message(1)
    window.actions_by_name[action].trigger()
    assert window.selected_message() == 2
    assert window.context()[2]["type"] == kind
    assert window.editor.model().body is body
    assert window.timeline.table.actions()  # the same actions are in the timeline's context menu
    assert window.actions_by_name[action] in window.timeline.table.actions()


def add_property(qtbot: Any, node: SchemaNode, name: str, kind: str) -> SchemaNode:
    """Adds property `name` of type `kind` through the node's name box and + property button."""
    qtbot.keyClicks(node.new_name, name)
    qtbot.mouseClick(node.add_button, Qt.MouseButton.LeftButton)
    child = node.rows[name].node
    child.type.setCurrentText(kind)
    return child


def test_the_schema_editor_builds_nested_schemas(qtbot: Any) -> None:
    """Types, nullable, description, enum, pattern, format, bounds, required, nested objects and array items."""
    node = SchemaNode()
    qtbot.addWidget(node)
    node.show()
    schemas: list[Any] = []
    node.edited.connect(schemas.append)
    node.type.setCurrentText("object")
    order = add_property(qtbot, node, "orderId", "string")
    qtbot.keyClicks(order.pattern, "^[A-Z]$")
    qtbot.keyClicks(order.description, "Order number")
    node.rows["orderId"].required.setChecked(True)
    customer = add_property(qtbot, node, "customer", "object")
    tier = add_property(qtbot, customer, "tier", "string")
    qtbot.keyClicks(tier.enum, "standard, gold")
    email = add_property(qtbot, customer, "email", "string")
    email.format.setCurrentText("email")
    amount = add_property(qtbot, node, "amount", "number")
    qtbot.keyClicks(amount.minimum, "0")
    maybe = add_property(qtbot, node, "order", "object")
    maybe.nullable.setChecked(True)
    log = add_property(qtbot, node, "log", "array")
    assert log.items is not None
    log.items.type.setCurrentText("string")
    assert schemas[-1] == node.schema() == {"type": "object", "properties": {
        "orderId": {"type": "string", "pattern": "^[A-Z]$", "description": "Order number"},
        "customer": {"type": "object", "properties": {"tier": {"type": "string", "enum": ["standard", "gold"]},
                                                      "email": {"type": "string", "format": "email"}}},
        "amount": {"type": "number", "minimum": 0},
        "order": {"type": ["object", "null"]},
        "log": {"type": "array", "items": {"type": "string"}},
    }, "required": ["orderId"]}
    qtbot.mouseClick(node.rows["orderId"].remove, Qt.MouseButton.LeftButton)
    assert "orderId" not in node.schema()["properties"]
    assert "required" not in node.schema()  # an empty list is not left behind


def test_the_schema_editor_says_what_it_does_not_take(qtbot: Any) -> None:
    """A pattern that is no regular expression is kept as typed, and said under the row in the engine's words (the
    Schema tab said nothing: only the status bar's count and the Form tab knew); a bound that is no number is not
    kept, and said so. Fixing either takes the mark away."""
    node = SchemaNode()
    qtbot.addWidget(node)
    node.show()
    node.type.setCurrentText("object")
    order = add_property(qtbot, node, "orderId", "string")
    qtbot.keyClicks(order.pattern, "^A-[0-9{4}$")
    assert node.schema()["properties"]["orderId"]["pattern"] == "^A-[0-9{4}$"
    assert order.problem.isVisible()
    assert order.problem.text() == f"⚠ pattern: {pattern_problem('^A-[0-9{4}$')}"
    assert "unterminated character set at position 3" in order.pattern.toolTip()
    assert order.pattern.palette().color(QPalette.ColorRole.Text) == ERROR_COLOR
    order.pattern.clear()
    qtbot.keyClicks(order.pattern, "^A-[0-9]{4}$")
    assert not order.problem.isVisible()
    theme = QApplication.palette().color(QPalette.ColorRole.Text)
    assert order.pattern.palette().color(QPalette.ColorRole.Text) == theme  # the theme's again, and follows it
    qty = add_property(qtbot, node, "qty", "integer")
    qtbot.keyClicks(qty.minimum, "1")
    qtbot.keyClicks(qty.maximum, "ten")
    assert node.schema()["properties"]["qty"] == {"type": "integer", "minimum": 1}
    assert qty.problem.text() == "⚠ maximum: not a number: the schema keeps no maximum"
    qty.minimum.selectAll()
    qtbot.keyClicks(qty.minimum, "x")
    assert qty.problem.text() == ("⚠ minimum: not a number: the schema keeps 1\n"
                                  "⚠ maximum: not a number: the schema keeps no maximum")
    qty.maximum.clear()
    qtbot.keyClicks(qty.maximum, "10")
    qty.minimum.clear()
    qtbot.keyClicks(qty.minimum, "2")
    assert node.schema()["properties"]["qty"] == {"type": "integer", "minimum": 2, "maximum": 10}
    assert not qty.problem.isVisible()
    loaded = SchemaNode()  # a schema read from a file: its bad pattern is said at once
    qtbot.addWidget(loaded)
    loaded.load({"type": "string", "pattern": "(unclosed"})
    loaded.show()
    assert loaded.problem.isVisible()
    assert "missing )" in loaded.problem.text()


def test_the_schema_editor_writes_a_default_the_form_starts_with(qtbot: Any) -> None:
    """`default` is written in the Schema tab (it had to be typed in the JSON tab): text for a string, JSON for the
    other types, and text that is not JSON yet is not kept and said so. The form's + add starts from it."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.show()
    messages: list[Any] = []
    editor.message_edited.connect(lambda _before, message: messages.append(message))
    editor.set_message(0, {"type": "input", "input": {}, "schema": {"type": "object", "properties": {}}})
    editor.tabs.setCurrentWidget(editor.schema_page)
    status = add_property(qtbot, editor.schema, "status", "string")
    qtbot.keyClicks(status.default, "new")
    priority = add_property(qtbot, editor.schema, "priority", "integer")
    qtbot.keyClicks(priority.default, "thr")
    assert priority.problem.text() == "⚠ default: not JSON: the schema keeps no default"
    priority.default.clear()
    qtbot.keyClicks(priority.default, "3")
    assert not priority.problem.isVisible()
    assert messages[-1]["schema"]["properties"] == {"status": {"type": "string", "default": "new"},
                                                    "priority": {"type": "integer", "default": 3}}
    editor.tabs.setCurrentIndex(0)
    for name in ("status", "priority"):
        add = editor.payload.form.root.editor.findChild(QToolButton, f"add:{name}")
        assert add is not None
        qtbot.mouseClick(add, Qt.MouseButton.LeftButton)
    assert messages[-1]["input"] == {"status": "new", "priority": 3}


def test_a_default_of_null_shows_null_and_is_kept(qtbot: Any) -> None:
    """A loaded `"default": null` shows `null` in its box (an empty box, the same as no default, hid it) and the
    message is kept as it was; in a nullable string's box `null` is the value null, in a plain string's the text."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.show()
    messages: list[Any] = []
    editor.message_edited.connect(lambda _before, message: messages.append(message))
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": None},
                                               "s": {"type": ["string", "null"], "default": None},
                                               "t": {"type": "string"}, "u": {"type": ["string", "null"]}}}
    message = {"type": "input", "input": {}, "schema": schema}
    editor.set_message(0, message)
    editor.tabs.setCurrentWidget(editor.schema_page)
    rows = editor.schema.rows
    assert [rows[name].node.default.text() for name in "nstu"] == ["null", "null", "", ""]
    assert messages == []
    assert editor.message() == message
    qtbot.keyClicks(rows["t"].node.default, "null")
    qtbot.keyClicks(rows["u"].node.default, "null")
    assert messages[-1]["schema"]["properties"]["t"] == {"type": "string", "default": "null"}
    assert messages[-1]["schema"]["properties"]["u"] == {"type": ["string", "null"], "default": None}


def test_the_schema_boxes_show_their_names_whole(qtbot: Any) -> None:
    """At the editor's usual width every box of a string's or an integer's row shows its placeholder whole (enum,
    const, default, pattern, format, minimum and maximum on one line cut them: "pattern (re…")."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.resize(480, 700)
    editor.show()
    editor.set_message(0, {"type": "input", "input": {}, "schema": {"type": "object", "properties": {
        "s": {"type": "string"}, "n": {"type": "integer"}}}})
    editor.tabs.setCurrentWidget(editor.schema_page)
    qtbot.waitUntil(lambda: editor.schema.isVisible())
    QApplication.processEvents()
    for name in ("s", "n"):
        node = editor.schema.rows[name].node
        boxes = [box for box in (node.enum, node.const, node.default, node.pattern, node.minimum, node.maximum)
                 if box.isVisible()]
        assert len(boxes) >= 3
        for box in boxes:
            shown = box.width() - 12  # the frame and the text margins
            assert box.fontMetrics().horizontalAdvance(box.placeholderText()) <= shown, box.placeholderText()


def test_the_schema_editor_writes_one_of_and_any_of(qtbot: Any) -> None:
    """A node can be a choice of schemas in the Schema tab (it needed the JSON tab): "one of" starts with one option
    of any value, + option adds one (the focus on its type), each option is a schema node of its own, ✕ removes one,
    "any of" keeps the options under `anyOf`, and a type again drops them."""
    node = SchemaNode()
    qtbot.addWidget(node)
    node.show()
    node.type.setCurrentText("object")
    refund = add_property(qtbot, node, "refund", "one of")
    assert node.schema()["properties"]["refund"] == {"oneOf": [{}]}
    card = refund.branches[0].node
    card.type.setCurrentText("object")
    add_property(qtbot, card, "last4", "string")
    qtbot.mouseClick(refund.add_branch_button, Qt.MouseButton.LeftButton)
    assert node.window().focusWidget() is refund.branches[1].node.type  # (the window need not be active)
    refund.branches[1].node.type.setCurrentText("number")
    assert node.schema()["properties"]["refund"] == {"oneOf": [
        {"type": "object", "properties": {"last4": {"type": "string"}}}, {"type": "number"}]}
    refund.type.setCurrentText("any of")
    assert node.schema()["properties"]["refund"] == {"anyOf": [
        {"type": "object", "properties": {"last4": {"type": "string"}}}, {"type": "number"}]}
    qtbot.mouseClick(refund.branches[0].remove, Qt.MouseButton.LeftButton)
    assert node.schema()["properties"]["refund"] == {"anyOf": [{"type": "number"}]}
    refund.type.setCurrentText("string")
    assert node.schema()["properties"]["refund"] == {"type": "string"}
    kept = SchemaNode()  # a oneOf beside a type is not the form's: a change of type keeps it
    qtbot.addWidget(kept)
    kept.load({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]})
    kept.type.setCurrentText("array")
    assert kept.schema()["oneOf"] == [{"required": ["a"]}, {"required": ["b"]}]


def test_a_property_name_is_shown_as_written(qtbot: Any) -> None:
    """A property named like markup (`<i>x</i>`, `a<b`) is shown as its name, never read as rich text (the row showed
    an italic "x", and nothing of "a<b" past the "a")."""
    node = SchemaNode()
    qtbot.addWidget(node)
    node.load({"type": "object", "properties": {"<i>x</i>": {"type": "string"}, "a<b": {"type": "string"}}})
    shown = [QTextDocumentFragment.fromHtml(row.label.text()).toPlainText() for row in node.rows.values()]
    assert shown == ["<i>x</i>", "a<b"]


def test_a_data_message_schema_is_edited_in_its_tab_and_the_form_follows(qtbot: Any) -> None:
    """A property added in the Schema tab is offered by the payload form at once; one message throughout."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.show()
    messages: list[Any] = []
    editor.message_edited.connect(lambda _before, message: messages.append(message))
    editor.set_message(0, {"type": "state", "data": {}, "schema": {"type": "object", "properties": {}}})
    editor.tabs.setCurrentWidget(editor.schema_page)
    add_property(qtbot, editor.schema, "count", "integer")
    assert messages[-1] == {"type": "state", "data": {},
                            "schema": {"type": "object", "properties": {"count": {"type": "integer"}}}}
    editor.tabs.setCurrentIndex(0)
    add = editor.payload.form.root.editor.findChild(QToolButton, "add:count")  # the form on screen
    assert add is not None
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)
    assert messages[-1]["data"] == {"count": 0}
    assert editor.schema.rows["count"].node.type.currentText() == "integer"  # the schema tab kept its form


def test_tools_are_defined_with_a_form(qtbot: Any) -> None:
    """A tool gets a name, a description, parameters and an `_outputPath` const, without JSON."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.show()
    editor.set_message(0, {"type": "tool", "tool": {}})
    body = editor.body()
    qtbot.keyClicks(body.new_name, "lookupOrder")
    qtbot.keyClick(body.new_name, Qt.Key.Key_Return)
    node = body.boxes["lookupOrder"].node
    qtbot.keyClicks(node.description, "Fetch the order.")
    add_property(qtbot, node, "orderId", "string")
    node.rows["orderId"].required.setChecked(True)
    path = add_property(qtbot, node, "_outputPath", "string")
    type_text(qtbot, path.const, "†state.order")
    assert editor.message() == {"type": "tool", "tool": {"lookupOrder": {
        "type": "object", "properties": {"orderId": {"type": "string"},
                                         "_outputPath": {"type": "string", "const": "†state.order"}},
        "description": "Fetch the order.", "required": ["orderId"]}}}


def test_plan_calls_from_a_form_with_picker_completion_and_problems(qtbot: Any, window: MainWindow) -> None:
    """A call is made by picking a tool; a parameter takes a † reference picked from the completion list; an
    unknown tool and a path nothing writes are marked at their fields, listed, and counted by validate."""
    window.select_message(3)
    window.actions_by_name["insert_tool"].trigger()
    tools = window.editor.body()
    qtbot.keyClicks(tools.new_name, "greet")
    qtbot.keyClick(tools.new_name, Qt.Key.Key_Return)
    add_property(qtbot, tools.boxes["greet"].node, "who", "string")
    window.actions_by_name["insert_plan"].trigger()
    plan = window.editor.body()
    qtbot.mouseClick(plan.add_button, Qt.MouseButton.LeftButton)
    box = plan.boxes[0]
    assert box.tool.currentText() == "greet"  # the picker offers the defined tools
    assert [box.tool.itemText(i) for i in range(box.tool.count())] == ["greet"]
    line = box.fields["who"]
    assert isinstance(line, QLineEdit)
    window.activateWindow()
    line.setFocus()
    qtbot.keyClicks(line, "user")
    popup = line.completer().popup()
    qtbot.waitUntil(popup.isVisible)
    assert line.completer().currentCompletion() == "†state.user"
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert window.context()[5]["plan"] == [{"_tool": "greet", "who": "†state.user"}]
    assert not box.fields["who"].property("problems")
    line.clear()
    type_text(qtbot, line, "†state.nobody")
    assert box.fields["who"].property("problems") == ["nothing writes †state.nobody"]
    assert "nothing writes †state.nobody" in plan.problems.text()
    box.tool.lineEdit().selectAll()
    qtbot.keyClicks(box.tool.lineEdit(), "gret")
    qtbot.keyClick(box.tool.lineEdit(), Qt.Key.Key_Return)
    assert window.context()[5]["plan"][0]["_tool"] == "gret"
    assert "unknown tool 'gret'" in box.tool.toolTip()
    qtbot.waitUntil(lambda: window.diagnostics_label.text() == "⚠ 2 problems")


def test_the_watch_box_completes_references_something_writes(qtbot: Any, window: MainWindow) -> None:
    """Typing in the watch box offers the † references the document writes; a pick is pinned with Enter."""
    window.activateWindow()
    entry = window.watches.entry
    entry.setFocus()
    qtbot.keyClicks(entry, "user")
    popup = entry.completer().popup()
    qtbot.waitUntil(popup.isVisible)
    assert entry.completer().currentCompletion() == "†state.user"
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert entry.text() == "†state.user"
    qtbot.keyClick(entry, Qt.Key.Key_Return)
    assert [pin.label for pin in window.watches.model.pins][-1] == "†state.user"
