"""001's custom content types in the window: the timeline shows the message the content stands for, the editor
edits it and writes each edit back inside `content`, and undo gives back the user's form."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLineEdit
from test_window import settings as settings
from test_window import window_on

from contextdeck.engine import Context
from contextdeck.gui._message_editor import Body
from contextdeck.gui._timeline_model import InstanceRole, KindRole, SummaryRole, TimelineModel, TypeRole
from contextdeck.gui._window import MainWindow

INPUT = {"type": "input", "_instance": "①", "input": {"amount": 5},
         "schema": {"type": "object", "properties": {"amount": {"type": "integer"}}}}
WRAPPED = [
    {"role": "system", "content": {"type": "text", "text": "Be brief."}},
    {"role": "user", "content": INPUT},
    {"role": "user", "content": {"type": "plan", "plan": [{"_tool": "a"}, {"_tool": "b"}]}},
    {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
]


def test_timeline_rows_show_what_the_content_stands_for(qtbot: Any) -> None:
    """The input row says input with its instance, the plan row has its calls, text rows their role and text."""
    model = TimelineModel(Context(copy.deepcopy(WRAPPED)))
    rows = [model.index(row, 0) for row in range(len(WRAPPED))]
    assert [row.data(KindRole) for row in rows] == ["text", "input", "plan", "text"]
    assert [row.data(TypeRole) for row in rows] == ["text", "input", "plan", "text"]
    assert rows[1].data(InstanceRole) == "①"
    assert rows[1].data(SummaryRole) == '{amount: 5}'
    assert model.rowCount(rows[2]) == 2
    assert rows[2].data(SummaryRole) == "2 calls: a → b"
    assert rows[0].data(SummaryRole) == "system: Be brief."
    assert rows[3].data(SummaryRole) == "user: one two"


@pytest.fixture
def window(qtbot: Any, settings: QSettings, tmp_path: Path) -> Iterator[MainWindow]:
    yield from window_on(qtbot, settings, tmp_path, "wrapped.json", WRAPPED)


def test_the_data_editor_edits_the_payload_inside_the_content(qtbot: Any, window: MainWindow) -> None:
    """The wrapped input opens the payload form under its schema; a typed value lands in `content.input`, the
    wrapper stays; undo gives back the message as it was written."""
    window.select_message(1)
    editor = window.editor
    assert editor.model().body is Body.PAYLOAD
    assert (editor.model().kind, editor.model().instance) == ("input", "①")
    assert editor.header.type.currentText() == "input"
    assert editor.header.instance.text() == "①"
    slot = editor.payload.form.locate(("amount",))
    assert slot is not None
    line = slot.editor.findChild(QLineEdit)
    line.selectAll()
    qtbot.keyClicks(line, "7")
    assert window.context()[1] == {"role": "user", "content": {**INPUT, "input": {"amount": 7}}}
    assert window.context().resolve("†input.amount", instance="①").value == 7
    while window.session.undo_stack.canUndo():
        window.session.undo_stack.undo()
    assert window.context()[1] == WRAPPED[1]


def test_the_header_writes_inside_the_content_and_the_role_beside_it(qtbot: Any, window: MainWindow) -> None:
    """`_instance` and `description` go into the content object; the role stays the wrapper's."""
    window.select_message(1)
    header = window.editor.header
    header.instance.clear()
    qtbot.keyClicks(header.instance, "two")
    qtbot.keyClicks(header.description, "How much")
    assert window.context()[1] == {"role": "user",
                                   "content": {**INPUT, "_instance": "two", "description": "How much"}}
    assert header.form.isRowVisible(header.role)
    header.role.setCurrentText("system")
    assert window.context()[1]["role"] == "system"
    assert window.context()[1]["content"]["_instance"] == "two"


def test_a_wrapped_text_edits_its_text_and_role(qtbot: Any, window: MainWindow) -> None:
    """A `{"type": "text"}` content is edited as text: the text inside the content, the role beside it."""
    window.select_message(0)
    editor = window.editor
    assert editor.model().body is Body.TEXT
    text = editor.body().text
    text.selectAll()
    qtbot.keyClicks(text, "Be short.")
    assert window.context()[0] == {"role": "system", "content": {"type": "text", "text": "Be short."}}
    assert editor.header.role.currentText() == "system"
    qtbot.keyClick(text, Qt.Key.Key_Return)
    assert window.context()[0]["content"]["text"] == "Be short.\n"
