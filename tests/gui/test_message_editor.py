"""The message editor: one model of what the message is, read again after every edit, whichever part made it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as limits
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPlainTextEdit
from test_window import ORDERED, state_value
from test_window import settings as settings
from test_window import window as window

from contextdeck.engine import Context, Replace, payload_of
from contextdeck.gui._message_editor import Body, MessageEditor, read_message
from contextdeck.gui._message_editor._bodies import BODIES
from contextdeck.gui._message_editor._model import FORM_PARTS
from contextdeck.gui._window import MainWindow


def select_in_json(editor: MessageEditor, needle: str) -> None:
    """Shows the JSON tab and selects the first occurrence of `needle` in its text, as a mouse drag would."""
    editor.tabs.setCurrentWidget(editor.json)
    text = editor.json.text
    start = text.toPlainText().index(needle)
    cursor = text.textCursor()
    cursor.setPosition(start)
    cursor.setPosition(start + len(needle), QTextCursor.MoveMode.KeepAnchor)
    text.setTextCursor(cursor)
    text.setFocus()


def test_changing_the_type_in_the_header_converts_the_message_without_nesting(qtbot: Any,
                                                                              window: MainWindow) -> None:
    """Typing `input` over a text message's type makes an input message (its starting value), not
    `{"type":"i","data":{...}}`; the editor opens the payload form and the state view gains ¶input."""
    window.select_message(0)
    box = window.editor.header.type
    line = box.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, "input")
    assert window.context()[0] == ORDERED[0]  # nothing happens until the type is committed
    qtbot.keyClick(line, Qt.Key.Key_Return)
    message = window.context()[0]
    assert message["type"] == "input"
    assert "data" not in message
    assert payload_of(message) == {}
    assert window.editor.model().body is Body.PAYLOAD
    assert "#0 · input" in window.editor.title.text()
    window.set_follow_latest(True)
    qtbot.waitUntil(lambda: state_value(window, "¶input")[1] is not None)
    assert window.session.undo_stack.count() == 1
    window.session.undo_stack.undo()
    assert window.context()[0] == ORDERED[0]
    assert window.editor.model().body is Body.TEXT  # the undo re-opens the text editor


def test_typing_a_type_in_the_json_tab_never_nests(qtbot: Any, window: MainWindow) -> None:
    """Replacing `text` in `"type": "text"` with `state`, key by key, leaves exactly the typed message each time."""
    window.select_message(0)
    select_in_json(window.editor, '"text",')
    for typed in ('"', '"s', '"st', '"sta', '"stat', '"state', '"state"', '"state",'):
        qtbot.keyClicks(window.editor.json.text, typed[-1])
        shown = window.editor.json.text.toPlainText()
        try:
            expected = json.loads(shown)
        except ValueError:
            continue
        assert window.context()[0] == expected
        assert window.editor.message() == expected
    assert window.context()[0] == {"type": "state", "role": "system", "text": "Be brief."}
    assert window.editor.model().kind == "state"
    assert window.editor.payload.value() == {"role": "system", "text": "Be brief."}


def test_pasting_a_whole_data_message_reopens_the_editor_and_the_next_form_edit_stays_in_place(
        qtbot: Any, window: MainWindow) -> None:
    """A full state message pasted into a text message's JSON tab: the editor says state and shows its payload
    form; the next form edit changes the payload, never nests the message under `data`."""
    window.select_message(0)
    pasted = {"type": "state", "data": {"count": 1}, "schema": {"type": "object",
              "properties": {"count": {"type": "integer"}}}}
    window.editor.tabs.setCurrentWidget(window.editor.json)
    window.editor.json.text.selectAll()
    window.editor.json.text.insertPlainText(json.dumps(pasted))  # a paste is one insertion
    assert window.context()[0] == pasted
    assert "#0 · state" in window.editor.title.text()
    assert window.editor.header.type.currentText() == "state"
    window.editor.tabs.setCurrentIndex(0)
    slot = window.editor.payload.form.locate(("count",))
    assert slot is not None
    line = slot.editor.findChild(QLineEdit)
    line.selectAll()
    qtbot.keyClicks(line, "7")
    assert window.context()[0] == {**pasted, "data": {"count": 7}}
    window.select_message(1)
    window.select_message(0)  # re-selecting shows the same
    assert window.editor.payload.value() == {"count": 7}


def test_a_text_message_is_multi_line(qtbot: Any, window: MainWindow) -> None:
    """Enter in a text message's text is a line break; the role is in the header."""
    window.select_message(0)
    text = window.editor.body().text
    text.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(text, Qt.Key.Key_Return)
    qtbot.keyClicks(text, "Really.")
    assert window.context()[0]["text"] == "Be brief.\nReally."
    window.editor.header.role.setCurrentText("assistant")
    assert window.context()[0]["role"] == "assistant"


def test_a_message_without_a_form_says_why(qtbot: Any, window: MainWindow) -> None:
    """The form's place tells a run record, an advisor, a preset and a too-deep value apart from a shape it does
    not know, and each points to the JSON tab."""
    deep: Any = "leaf"
    for _ in range(45):
        deep = [deep]
    cases = [
        ({"type": "_run", "_run": {"call": 0}}, "A run record"),
        ({"type": "advisor", "id": "risk", "role": "Weigh the risk."}, "An advisor (017)"),
        ({"type": "preset", "model": "m"}, "A preset"),
        ({"type": "state", "data": deep}, "nested more than 40 levels deep"),
        ({"role": "user", "content": 3}, "no editor for this shape"),
        ({"role": "user", "content": [{"type": "text", "text": "a"}] * (FORM_PARTS + 1)},
         f"{FORM_PARTS + 1} content parts, more than the form shows"),
    ]
    for message, why in cases:
        window.apply_edit(Replace(0, message))
        window.select_message(0)
        assert window.editor.model().body is Body.RAW
        shown = window.editor.body().text()
        assert why in shown, (message, shown)
        assert "JSON tab" in shown


def test_a_plan_message_shows_its_final_output_in_the_form(qtbot: Any, window: MainWindow) -> None:
    """A model's final answer (a plan message with no calls and an `output`, as a bare context keeps it) showed
    only "+ call / + group" in the form: the output is shown under the calls and edited as they are, with who gave
    it in a line (the `_model` record is not edited there); typed null is refused, not applied; undo restores it."""
    answered = {"model": "fake-small", "usage": {"total_tokens": 18}, "latency_ms": 11, "replayed": False}
    plan = {"type": "plan", "plan": [], "output": {"total": 3}, "_model": answered}
    window.apply_edit(Replace(0, plan))
    window.select_message(0)
    body = window.editor.body()
    assert window.editor.model().body is Body.CALLS
    qtbot.waitUntil(body.output_box.isVisible)
    assert json.loads(body.output.text.toPlainText()) == {"total": 3}
    assert body.answered.text().startswith("Answered by fake-small · 18 tokens · 11 ms")
    body.output.text.setPlainText('{"total": 4}')
    assert window.context()[0] == {**plan, "output": {"total": 4}}
    body.output.text.setPlainText("null")
    assert window.context()[0]["output"] == {"total": 4}
    assert "null is no output" in body.output.status.text()
    window.session.undo_stack.undo()
    assert window.context()[0] == plan
    assert json.loads(body.output.text.toPlainText()) == {"total": 3}
    window.apply_edit(Replace(0, {"type": "plan", "plan": []}))
    window.select_message(0)
    assert not body.output_box.isVisible()  # a plan without an output has no box for one


def test_a_message_of_parts_edits_its_text_parts_and_keeps_the_others(qtbot: Any, window: MainWindow) -> None:
    """`{role, content: [parts]}` (OpenAI's form, kept by a trace import when a part is an image): each text part
    is a box of its own, the role is in the header, any other part is named and written back as it was."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 4096}}
    parts = [{"type": "text", "text": "What is this?"}, image, {"type": "input_text", "text": "Be brief."}]
    window.apply_edit(Replace(0, {"role": "user", "content": parts}))
    window.select_message(0)
    assert window.editor.model().body is Body.PARTS
    assert "(text message; parts)" in window.editor.title.text()
    assert window.editor.header.form.isRowVisible(window.editor.header.role)
    assert window.editor.header.role.currentText() == "user"
    first, second = window.editor.body().findChildren(QPlainTextEdit)
    (named,) = window.editor.body().findChildren(QLabel)
    qtbot.waitUntil(named.isVisible)
    assert named.text().startswith("Image: data:image/png;base64, 3 KB inline")
    first.setFocus()
    first.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(first, " A cat?")
    second.setPlainText("One word.")
    assert window.context()[0] == {"role": "user", "content": [
        {"type": "text", "text": "What is this? A cat?"}, image, {"type": "input_text", "text": "One word."}]}
    assert first.hasFocus(), "an edit written back leaves the boxes and the focus where they were"
    window.session.undo_stack.undo()
    window.session.undo_stack.undo()
    assert window.context()[0] == {"role": "user", "content": parts}


def test_header_fields_edit_instance_and_description(qtbot: Any, window: MainWindow) -> None:
    """The instance and description boxes set (and, emptied, remove) `_instance` and `description`."""
    window.select_message(1)
    qtbot.keyClicks(window.editor.header.instance, "one")
    qtbot.keyClicks(window.editor.header.description, "Who is talking")
    assert window.context()[1] == {"type": "state", "_instance": "one", "description": "Who is talking",
                                   "data": {"user": "Alex"}}
    assert "[one]" in window.editor.title.text()
    window.editor.header.instance.clear()
    window.editor.header.instance.textEdited.emit("")
    assert "_instance" not in window.context()[1]


def clipped_header_rows(editor: MessageEditor) -> list[str]:
    """The header's rows on screen drawn lower than their text needs."""
    form = editor.header.form
    clipped = []
    for row in range(form.rowCount()):
        label = form.itemAt(row, form.ItemRole.LabelRole).widget()
        field = form.itemAt(row, form.ItemRole.FieldRole).widget()
        if field.isVisible() and min(label.height() - label.sizeHint().height(),
                                     field.height() - field.sizeHint().height()) < 0:
            clipped.append(label.text())
    return clipped


def test_a_steps_output_shows_its_header_rows_at_their_height(qtbot: Any, refund_window: MainWindow) -> None:
    """F10 with the caret in the plan's form, twice: each output selected (#5, #6) shows its type, kind, instance
    and description rows whole, not at the height of the plan's two rows."""
    window, editor = refund_window, refund_window.editor
    window.select_message(4)
    editor.focus_body()
    qtbot.waitUntil(lambda: editor.body().isAncestorOf(QApplication.focusWidget()))
    step = next(action for action in window.menu("Run").actions() if action.text() == "Step")

    def whole() -> None:
        assert clipped_header_rows(editor) == []

    for output in (5, 6):
        step.trigger()
        qtbot.waitUntil(lambda output=output: window.document.selected_message() == output)
        qtbot.waitUntil(lambda: not window.inspector.debugger.running)  # type: ignore[attr-defined]
        assert editor.header.kind.isVisible()
        assert editor.header.instance.isVisible()
        qtbot.waitUntil(whole)


# -- the property: random edits through the form, the header and the JSON tab -----------------------------

KINDS = st.sampled_from(["state", "input", "data", "memory", "text", "tool", "plan", "error", "i"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("ab", max_size=3))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "data", "type", "_x"]), inner,
                                                 max_size=3)), max_leaves=6)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(KINDS)
    message: dict[str, Any] = {"type": kind}
    for key in draw(st.lists(st.sampled_from(["text", "data", "tool", "plan", kind, "role", "a", "_instance"]),
                             max_size=3, unique=True)):
        message[key] = draw(VALUES)
    return message


EDITS = st.one_of(
    st.tuples(st.just("json"), messages()),
    st.tuples(st.just("retype"), KINDS),
    st.tuples(st.just("header"), st.sampled_from(["_instance", "description", "kind", "role"]),
              st.text("ab①", max_size=2)),
    st.tuples(st.just("body"), VALUES),
    st.tuples(st.just("schema"), st.sampled_from(["a", "b", "type"])),
)


def apply(editor: MessageEditor, edit: tuple[Any, ...]) -> Any:
    """Makes one edit as a user would through that part; returns the body value a body edit wrote."""
    what = edit[0]
    if what == "json":
        editor.tabs.setCurrentWidget(editor.json)
        editor.json.text.selectAll()
        editor.json.text.insertPlainText(json.dumps(edit[1]))
    elif what == "retype":
        editor.header.type.setCurrentText(edit[1])
        editor.header.type.lineEdit().editingFinished.emit()
    elif what == "schema":
        if editor.tabs.isTabVisible(editor.tabs.indexOf(editor.schema_page)):
            editor.tabs.setCurrentWidget(editor.schema_page)
            editor.schema.type.setCurrentText("object")
            editor.schema.new_name.setText(edit[1])
            editor.schema.add_property()
    elif what == "header":
        line = {"_instance": editor.header.instance, "description": editor.header.description,
                "kind": editor.header.kind}.get(edit[1])
        if line is None:
            editor.header.role.setCurrentText(edit[2])
        else:
            line.setText(edit[2])
            line.textEdited.emit(edit[2])
    else:
        editor.tabs.setCurrentIndex(0)
        body = editor.body()
        model = editor.model()
        if model.body is Body.TEXT:
            body.text.setPlainText(edit[1] if isinstance(edit[1], str) else json.dumps(edit[1]))
            return body.text.toPlainText()
        if model.body is Body.RAW:
            return None
        if model.body is Body.PARTS:  # type into the first text part, if there is one
            for box in body.findChildren(QPlainTextEdit):
                box.setPlainText(edit[1] if isinstance(edit[1], str) else json.dumps(edit[1]))
                break
            return body.value()
        if model.body is Body.TOOLS:  # add a tool, or describe the first one
            if isinstance(edit[1], str) or not body.boxes:
                body.new_name.setText(str(edit[1])[:3] or "t")
                body.add_tool()
            else:
                line = next(iter(body.boxes.values())).node.description
                line.setText(json.dumps(edit[1])[:4])
                line.textEdited.emit(line.text())
            return body.value()
        if model.body is Body.CALLS:  # add a call or a group, or give the first call (perhaps in a group) a reason
            if isinstance(edit[1], str) and body.boxes:
                line = body.boxes[0].fields["_reasoningForCall"]
                line.setText(edit[1])
                line.textEdited.emit(edit[1])
            elif isinstance(edit[1], int | float) and not isinstance(edit[1], bool):
                body.add_group()
            else:
                body.add_call()
            return body.value()
        value = edit[1] if model.body is Body.PAYLOAD else (
            edit[1] if isinstance(edit[1], type(model.value)) else model.value)
        body.data.form.set_value(value, model.schema)  # what the form holds after the user's typing
        body.data.form.edited.emit()
        return body.data.value()
    return None


def check(editor: MessageEditor, context: Context) -> None:
    """The message is what the JSON tab shows, what the engine holds and reads, and what the form shows."""
    message = editor.message()
    assert json.dumps(message) == json.dumps(context[0])  # key order too
    assert editor.json.value() == message
    if editor.json.isVisible():
        assert json.loads(editor.json.text.toPlainText()) == message
    model = read_message(context[0])
    assert editor.model() == model
    assert context.info(0).form is model.form
    assert context.info(0).kind == model.kind
    body = editor.body()
    assert isinstance(body, BODIES[model.body])
    if model.body is not Body.RAW:
        assert body.value() == model.value
    assert editor.header.type.currentText() == model.type
    if model.body is Body.PAYLOAD and isinstance(message.get("schema"), dict):
        assert editor.schema.schema() == message["schema"]


@limits(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=messages(), edits=st.lists(EDITS, max_size=8))
def test_random_edits_keep_editor_json_and_engine_equal(qtbot: Any, start: dict[str, Any],
                                                        edits: list[tuple[Any, ...]]) -> None:
    """Any sequence of edits through the header, the form and the JSON tab leaves one message: the one the
    JSON tab shows, the one the engine holds and classifies, and the one the form edits; a form edit lands
    where the form showed its value (nothing nests)."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.show()
    context = Context([start])
    editor.message_edited.connect(lambda _before, message: context.apply(Replace(0, message)))
    editor.set_message(0, context[0])
    try:
        check(editor, context)
        for edit in edits:
            written = apply(editor, edit)
            check(editor, context)
            if edit[0] == "body" and written is not None:
                assert editor.model().value == written  # the edit is the body, not nested inside it
    finally:
        editor.shutdown()
