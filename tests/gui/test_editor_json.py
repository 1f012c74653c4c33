"""The data editor's JSON tab: highlighted text, parse errors at line and column, kept in step with the form."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QTextCursor
from PySide6.QtWidgets import QLineEdit

from contextdeck.gui._editor import DataEditor

pytestmark = pytest.mark.usefixtures("qapp")

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}


@pytest.fixture
def editor(editor: DataEditor) -> DataEditor:
    """The shared editor, on its JSON tab."""
    editor.tabs.setCurrentWidget(editor.json)
    return editor


def type_at_end(qtbot: Any, editor: DataEditor, text: str) -> None:
    editor.json.text.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.json.text, text)


def type_name(qtbot: Any, editor: DataEditor, text: str) -> None:
    """Replace the form's name field by typing `text`, as a user would."""
    line = editor.form.locate(("name",)).editor.findChild(QLineEdit)
    line.selectAll()
    qtbot.keyClicks(line, text)


def test_the_json_tab_shows_the_value(editor: DataEditor) -> None:
    """The JSON tab holds the value as indented JSON."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    assert json.loads(editor.json.text.toPlainText()) == {"name": "Maya", "n": 1}
    assert "\n  " in editor.json.text.toPlainText()


def test_a_parse_error_names_line_and_column_and_keeps_the_value(editor: DataEditor, qtbot: Any) -> None:
    """Invalid JSON is reported at its line and column; the value and the form stay as they were."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    with qtbot.assertNotEmitted(editor.value_edited):
        editor.json.text.setPlainText('{\n  "name": "Maya",\n  "n": 1,\n}')
    assert editor.json.problem is not None
    line, column, _ = editor.json.problem
    assert (line, column) == (4, 1)
    assert editor.json.status.isVisible()
    assert "Line 4, column 1" in editor.json.status.text()
    assert editor.value() == {"name": "Maya", "n": 1}
    assert editor.form.value() == {"name": "Maya", "n": 1}


def test_a_json_edit_updates_the_form(editor: DataEditor, qtbot: Any) -> None:
    """A valid edit in the JSON tab emits the new value and shows it in the form."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    with qtbot.waitSignal(editor.value_edited) as blocker:
        editor.json.text.setPlainText('{"name": "Ann", "n": 2}')
    assert blocker.args[0] == {"name": "Ann", "n": 2}
    assert editor.form.locate(("name",)).editor.findChild(QLineEdit).text() == "Ann"
    assert editor.form.value() == {"name": "Ann", "n": 2}
    assert not editor.json.status.isVisible()


def test_typing_through_an_invalid_state(editor: DataEditor, qtbot: Any) -> None:
    """Keystrokes that pass through invalid JSON apply once the text is valid again."""
    editor.set_value([1, 2], None)
    editor.json.text.setPlainText("[1, 2]")
    edits: list[Any] = []
    editor.value_edited.connect(edits.append)
    cursor = editor.json.text.textCursor()
    cursor.setPosition(5)  # before "]"
    editor.json.text.setTextCursor(cursor)
    qtbot.keyClicks(editor.json.text, ", 3")
    assert edits == [[1, 2, 3]]  # "[1, 2,]" and "[1, 2, ]" were invalid and emitted nothing
    assert editor.form.value() == [1, 2, 3]


def test_a_form_edit_updates_the_json_text(editor: DataEditor, qtbot: Any) -> None:
    """Typing in the form rewrites the JSON tab's text."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    type_name(qtbot, editor, "Zoe")
    assert json.loads(editor.json.text.toPlainText()) == {"name": "Zoe", "n": 1}


def test_a_json_edit_without_schema_reshapes_the_inferred_form(editor: DataEditor) -> None:
    """Without a schema, a new key typed in JSON gets its own inferred field."""
    editor.set_value({"a": 1}, None)
    editor.json.text.setPlainText('{"a": 1, "b": true}')
    assert editor.form.locate(("b",)).editor.key == "boolean"


@pytest.mark.parametrize("dark", [False, True])
def test_highlighting_follows_the_palette(qtbot: Any, dark: bool) -> None:
    """Strings are coloured, in a colour that differs between light and dark palettes."""
    widget = DataEditor()
    qtbot.addWidget(widget)
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.Base, Qt.GlobalColor.black if dark else Qt.GlobalColor.white)
    widget.json.setPalette(palette)
    widget.show()
    widget.tabs.setCurrentWidget(widget.json)
    widget.set_value({"k": "v"}, None)
    block = widget.json.text.document().findBlockByNumber(1)  # '  "k": "v"'
    colours = {r.format.foreground().color().name() for r in block.layout().formats()}
    assert ("#85e89d" in colours) is dark
    assert ("#22863a" in colours) is not dark


def test_an_echoed_value_keeps_the_json_cursor(editor: DataEditor, qtbot: Any) -> None:
    """Loading back the value just typed in the JSON tab leaves its text and cursor alone."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    editor.json.text.setPlainText('{"name": "Maya", "n": 12}')
    cursor = editor.json.text.textCursor()
    cursor.setPosition(10)
    editor.json.text.setTextCursor(cursor)
    editor.set_value({"name": "Maya", "n": 12}, SCHEMA)
    assert editor.json.text.toPlainText() == '{"name": "Maya", "n": 12}'
    assert editor.json.text.textCursor().position() == 10


def test_a_hidden_json_tab_catches_up_when_shown(editor: DataEditor, qtbot: Any) -> None:
    """Edits made in the form while the JSON tab is hidden are in its text once it is shown."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    editor.tabs.setCurrentWidget(editor.form)
    type_name(qtbot, editor, "Ann")
    editor.tabs.setCurrentWidget(editor.json)
    assert json.loads(editor.json.text.toPlainText()) == {"name": "Ann", "n": 1}


def test_the_parse_error_spot_is_marked(editor: DataEditor) -> None:
    """The character where parsing failed is underlined in the text, and the mark goes once the text is fixed."""
    editor.set_value({"n": 1}, SCHEMA)
    editor.json.text.setPlainText('{"n": 1,, "m": 2}')
    marks = editor.json.text.extraSelections()
    assert len(marks) == 1
    assert marks[0].cursor.selectionStart() == 8  # line 1, column 9: the second comma
    editor.json.text.setPlainText('{"n": 1, "m": 2}')
    assert editor.json.text.extraSelections() == []


def test_reformatting_the_text_is_not_an_edit(editor: DataEditor, qtbot: Any) -> None:
    """Text that parses to the same value (other spacing) emits nothing."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    with qtbot.assertNotEmitted(editor.value_edited):
        editor.json.text.setPlainText('{"name":"Maya","n":1}')


def test_a_form_edit_replaces_invalid_json_text(editor: DataEditor, qtbot: Any) -> None:
    """After a parse error, an edit in the form writes the new value over the broken text."""
    editor.set_value({"name": "Maya", "n": 1}, SCHEMA)
    editor.json.text.setPlainText('{"name": ')
    editor.tabs.setCurrentWidget(editor.form)
    type_name(qtbot, editor, "Zoe")
    editor.tabs.setCurrentWidget(editor.json)
    assert json.loads(editor.json.text.toPlainText()) == {"name": "Zoe", "n": 1}
    assert editor.json.problem is None
    assert not editor.json.status.isVisible()
