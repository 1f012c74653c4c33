"""Building the refund example from an empty document with menus, forms and pickers only (issue 15's "done when")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QComboBox, QLineEdit, QToolButton
from test_authoring import add_property, type_text
from test_window import settings as settings
from test_window import window as window

from contextdeck.gui._message_editor._schema import SchemaNode
from contextdeck.gui._request_schema import RequestSchemaDialog
from contextdeck.gui._window import MainWindow


def pick(qtbot: Any, combo: QComboBox, text: str) -> None:
    """Opens the combo box's list and clicks the entry `text`, as a mouse user does."""
    combo.showPopup()
    view = combo.view()
    index = view.model().index(combo.findText(text), 0)
    qtbot.waitUntil(lambda: view.isVisible() and not view.visualRect(index).isEmpty())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())


def click(qtbot: Any, button: QAbstractButton | None) -> None:
    """Clicks a button or check box (`QAbstractButton.click`: the press and release a mouse makes, wherever
    the button is laid out by then)."""
    assert button is not None
    button.click()


def prop(qtbot: Any, node: SchemaNode, name: str, kind: str, *, required: bool = False, **typed: str) -> SchemaNode:
    """A property through the schema editor: its name, type, required box, then text typed into its fields
    (`description`, `pattern`, `enum`, `minimum`, `const`)."""
    child = add_property(qtbot, node, name, kind)
    if required:
        click(qtbot, node.rows[name].required)
    for field, text in typed.items():
        type_text(qtbot, getattr(child, field), text)
    return child


def field_line(window: MainWindow, path: tuple[Any, ...]) -> QLineEdit:
    slot = window.editor.payload.form.locate(path)
    assert slot is not None, path
    editor = slot.editor
    line = editor if isinstance(editor, QLineEdit) else editor.findChild(QLineEdit)
    assert line is not None, path
    return line


def add_button(window: MainWindow, name: str) -> QToolButton:
    """The + add button of property `name` in the form on screen (forms of other schemas are kept hidden)."""
    button = window.editor.payload.form.root.editor.findChild(QToolButton, f"add:{name}")
    assert button is not None, name
    return button


def fill(qtbot: Any, window: MainWindow, path: tuple[Any, ...], text: str) -> None:
    """Adds the field at `path` (its + add button) and types `text` over its starting value."""
    click(qtbot, add_button(window, path[-1]))
    line = field_line(window, path)
    line.selectAll()
    qtbot.keyClicks(line, text)


def add_payload(qtbot: Any, window: MainWindow, name: str) -> None:
    click(qtbot, add_button(window, name))


def header(qtbot: Any, window: MainWindow, description: str) -> None:
    qtbot.keyClicks(window.editor.header.description, description)


def schema_tab(window: MainWindow) -> SchemaNode:
    window.editor.tabs.setCurrentWidget(window.editor.schema_page)
    return window.editor.schema


def form_tab(window: MainWindow) -> None:
    window.editor.tabs.setCurrentIndex(0)


def build_text(qtbot: Any, window: MainWindow) -> None:
    window.actions_by_name["insert_text"].trigger()
    pick(qtbot, window.editor.header.role, "system")
    qtbot.keyClicks(window.editor.body().text, "You handle refund requests. Check the order, apply the policy, and "
                                               "never refund more than was paid.")


def build_input(qtbot: Any, window: MainWindow) -> None:
    window.actions_by_name["insert_input"].trigger()
    header(qtbot, window, "The customer's refund request.")
    schema = schema_tab(window)
    prop(qtbot, schema, "orderId", "string", required=True, pattern="^[A-Z]-[0-9]{4}$", description="Order number")
    customer = prop(qtbot, schema, "customer", "object", required=True)
    prop(qtbot, customer, "name", "string", required=True)
    prop(qtbot, customer, "email", "string", required=True).format.setCurrentText("email")
    prop(qtbot, customer, "tier", "string", enum="standard, silver, gold")
    prop(qtbot, schema, "reason", "string")
    prop(qtbot, schema, "amount", "number", required=True, minimum="0", description="Amount requested, in EUR")
    form_tab(window)
    fill(qtbot, window, ("orderId",), "A-1042")
    add_payload(qtbot, window, "customer")  # starts with its required name and email
    for key, text in (("name", "Maya Chen"), ("email", "maya@example.com")):
        line = field_line(window, ("customer", key))
        qtbot.keyClicks(line, text)
    add_payload(qtbot, window, "tier")
    tier = window.editor.payload.form.locate(("customer", "tier")).editor.findChild(QComboBox)
    pick(qtbot, tier, "gold")
    fill(qtbot, window, ("reason",), "Arrived damaged")
    fill(qtbot, window, ("amount",), "89.5")


def build_state(qtbot: Any, window: MainWindow) -> None:
    window.actions_by_name["insert_state"].trigger()
    header(qtbot, window, "The workflow's scratchpad.")
    schema = schema_tab(window)
    click(qtbot, prop(qtbot, schema, "order", "object").nullable)
    policy = prop(qtbot, schema, "policy", "object")
    prop(qtbot, policy, "maxDays", "integer", minimum="1")
    prop(qtbot, policy, "autoApproveBelow", "number", minimum="0")
    prop(qtbot, schema, "eligibility", "object")
    prop(qtbot, schema, "refund", "object")
    log = prop(qtbot, schema, "log", "array")
    assert log.items is not None
    log.items.type.setCurrentText("string")
    prop(qtbot, schema, "approvals", "object")
    form_tab(window)
    add_payload(qtbot, window, "order")
    click(qtbot, window.editor.payload.form.locate(("order",)).editor.findChild(QCheckBox))  # null
    add_payload(qtbot, window, "policy")
    fill(qtbot, window, ("policy", "maxDays"), "30")
    fill(qtbot, window, ("policy", "autoApproveBelow"), "50")
    add_payload(qtbot, window, "log")


TOOLS = [
    ("lookupOrder", "Fetch the order from the shop's database.",
     [("orderId", "string", {}, True)], ("const", "†state.order")),
    ("checkEligibility", "Apply the refund policy to an order.",
     [("order", "object", {}, True), ("policy", "object", {}, True), ("reason", "string", {}, False)],
     ("pattern", "^†state\\.")),
    ("issueRefund", "Pay the refund back to the customer.",
     [("orderId", "string", {}, True), ("amount", "number", {"minimum": "0"}, True),
      ("approvedBy", "string", {}, False)], ("pattern", "^†state\\.")),
    ("notifyCustomer", "Send an email to the customer (fire-and-forget).",
     [("email", "string", {}, True), ("message", "string", {}, True)], None),
    ("logStep", "", [("entry", "string", {}, False)], ("any", "")),
]


def build_tools(qtbot: Any, window: MainWindow) -> None:
    window.actions_by_name["insert_tool"].trigger()
    body = window.editor.body()
    for name, description, parameters, output in TOOLS:
        qtbot.keyClicks(body.new_name, name)
        qtbot.keyClick(body.new_name, Qt.Key.Key_Return)
        node = body.boxes[name].node
        if description:
            qtbot.keyClicks(node.description, description)
        for parameter, kind, typed, required in parameters:
            prop(qtbot, node, parameter, kind, required=required, **typed)
        if output is not None:
            how, text = output
            path = prop(qtbot, node, "_outputPath", "string")
            if how != "any":
                type_text(qtbot, getattr(path, how), text)


def call(qtbot: Any, window: MainWindow, tool: str, **fields: str) -> None:
    """A call: + call, the tool picked from the list, then each field typed (`†` included)."""
    body = window.editor.body()
    click(qtbot, body.add_button)
    box = body.boxes[-1]
    pick(qtbot, box.tool, tool)
    for name, text in fields.items():
        widget = box.fields[name]
        if isinstance(widget, QComboBox):
            pick(qtbot, widget, text)
        else:
            type_text(qtbot, widget, text)


def build_plan(qtbot: Any, window: MainWindow) -> None:
    window.actions_by_name["insert_plan"].trigger()
    call(qtbot, window, "lookupOrder", orderId="†input.orderId", _outputPath="†state.order",
         _output='{"id": "A-1042", "total": 89.5, "daysSinceDelivery": 4, "items": ["kettle"]}')
    call(qtbot, window, "logStep", entry="order looked up", _outputPath="†state.log", _outputMethod="push",
         _output="order looked up")
    call(qtbot, window, "checkEligibility", order="†state.order", policy="†state.policy", reason="†input.reason",
         _outputPath="†state.eligibility", _outputMethod="merge", _output='{"eligible": true, "maxAmount": 89.5}')
    call(qtbot, window, "issueRefund", orderId="†input.orderId", amount="†input.amount",
         approvedBy="†state.approvals.refund", _outputPath="†state.refund")
    call(qtbot, window, "notifyCustomer", email="†input.customer.email",
         message="††refund issued for order A-1042", _reasoningForCall="Tell the customer once paid.")


def build_request_schema(qtbot: Any, window: MainWindow) -> None:
    window.actions_by_name["request_schema"].trigger()
    dialog = window.findChild(RequestSchemaDialog)
    prop(qtbot, dialog.node, "decision", "string", enum="refund, deny, escalate")
    click(qtbot, dialog.buttons.button(dialog.buttons.StandardButton.Ok))


def test_the_refund_example_is_built_from_an_empty_document_without_json(qtbot: Any, window: MainWindow,
                                                                        examples: Path, tmp_path: Path) -> None:
    """File → New, then only menus, forms and pickers through the real widgets: the saved document equals
    resources/examples/refund_workflow.json (modulo formatting), validate finds nothing, and no JSON was typed
    anywhere but the `_output` values of latent calls."""
    window.actions_by_name["new"].trigger()
    assert len(window.context()) == 0
    window.activateWindow()
    for step in (build_text, build_input, build_state, build_tools, build_plan, build_request_schema):
        step(qtbot, window)
    target = tmp_path / "refund.json"
    window.files.ask_save_path = lambda: str(target)  # type: ignore[method-assign]
    assert window.files.save_as_dialog()
    built = json.loads(target.read_text(encoding="utf-8"))
    expected = json.loads((examples / "refund_workflow.json").read_text(encoding="utf-8"))
    for index, (got, want) in enumerate(zip(built["context"], expected["context"], strict=True)):
        assert got == want, index
    assert built == expected
    qtbot.waitUntil(lambda: window.diagnostics_label.text() == "No problems")
    window.session.undo_stack.undo()  # the request schema is one undo step; without it the context is bare
    assert window.session.document.schema is None
    assert json.loads(window.session.document.dumps()) == expected["context"]
