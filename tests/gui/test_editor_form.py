"""The data editor's form: each widget kind from its schema, round-tripping and editing values."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDateTimeEdit, QLineEdit, QToolButton, QWidget

from contextdeck.gui._editor import DataEditor
from contextdeck.gui._editor._base import FieldEditor

pytestmark = pytest.mark.usefixtures("qapp")


@pytest.fixture
def editor(qtbot: Any) -> DataEditor:
    widget = DataEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 500)
    widget.show()
    return widget


def at(editor: DataEditor, *path: Any) -> FieldEditor:
    slot = editor.form.locate(path)
    assert slot is not None, f"no field at {path}"
    return slot.editor


def button(widget: QWidget, name: str) -> QToolButton:
    found = widget.findChild(QToolButton, name)
    assert found is not None, f"no button {name}"
    return found


def edit_line(qtbot: Any, line: QLineEdit, text: str) -> None:
    line.selectAll()
    qtbot.keyClick(line, Qt.Key.Key_Backspace)
    qtbot.keyClicks(line, text)


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Who"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "exclusiveMaximum": 1},
        "vip": {"type": "boolean"},
        "tier": {"enum": ["standard", "gold"]},
        "kind": {"const": "person"},
        "since": {"type": "string", "format": "date-time"},
        "nick": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"$ref": "#/$defs/address"},
    },
    "required": ["name", "age"],
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
VALUE = {
    "name": "Maya",
    "age": 30,
    "score": 0.5,
    "vip": True,
    "tier": "gold",
    "kind": "person",
    "since": "2024-05-01T10:30:00Z",
    "nick": None,
    "tags": ["a", "b"],
    "address": {"city": "Lyon"},
}


@pytest.mark.parametrize(
    ("path", "key", "widget"),
    [
        (("name",), "string", QLineEdit),
        (("age",), "integer", QWidget),
        (("score",), "number", QWidget),
        (("vip",), "boolean", QCheckBox),
        (("tier",), "enum", QComboBox),
        (("kind",), "const", QLineEdit),
        (("since",), "date-time", QDateTimeEdit),
        (("nick",), "nullable", QCheckBox),
        (("tags",), "array", QWidget),
        (("address",), "object", QWidget),
        (("address", "city"), "string", QLineEdit),
        (("tags", 1), "string", QLineEdit),
    ],
)
def test_each_schema_keyword_gets_its_widget(editor: DataEditor, path: tuple[Any, ...], key: str, widget: type) -> None:
    """Every kind of schema node is edited by the widget the table names for it, `$ref`s resolved."""
    editor.set_value(VALUE, SCHEMA)
    field = at(editor, *path)
    assert field.key == key
    assert field.findChild(widget) is not None or isinstance(field, widget)


def test_the_form_round_trips_the_value_unchanged(editor: DataEditor) -> None:
    """Loading a value and reading it back gives the same value, key order and number types included."""
    editor.set_value(VALUE, SCHEMA)
    assert editor.form.value() == VALUE
    assert list(editor.form.value()) == list(VALUE)
    assert isinstance(editor.form.value()["age"], int)


def test_set_value_emits_nothing(editor: DataEditor, qtbot: Any) -> None:
    """Loading a value is not a user edit."""
    with qtbot.assertNotEmitted(editor.value_edited):
        editor.set_value(VALUE, SCHEMA)


def test_typing_in_a_string_emits_the_whole_value(editor: DataEditor, qtbot: Any) -> None:
    """Editing a nested string emits value_edited with the whole new value."""
    editor.set_value(VALUE, SCHEMA)
    line = at(editor, "address", "city").findChild(QLineEdit)
    emitted: list[Any] = []
    editor.value_edited.connect(emitted.append)
    edit_line(qtbot, line, "Paris")
    assert emitted[-1] == {**VALUE, "address": {"city": "Paris"}}
    assert len(emitted) == len("Paris") + 1  # the clearing keystroke, then one per letter
    assert editor.value() == {**VALUE, "address": {"city": "Paris"}}


def test_typing_a_number_keeps_its_json_type(editor: DataEditor, qtbot: Any) -> None:
    """An integer typed stays an integer; a number keeps its fraction."""
    editor.set_value(VALUE, SCHEMA)
    edit_line(qtbot, at(editor, "age").findChild(QLineEdit), "41")
    edit_line(qtbot, at(editor, "score").findChild(QLineEdit), "0.25")
    assert editor.value()["age"] == 41
    assert isinstance(editor.value()["age"], int)
    assert editor.value()["score"] == 0.25


def test_number_arrows_stop_at_the_bounds(editor: DataEditor, qtbot: Any) -> None:
    """The arrow keys step an integer and never cross its maximum."""
    editor.set_value({**VALUE, "age": 149}, SCHEMA)
    line = at(editor, "age").findChild(QLineEdit)
    qtbot.keyClick(line, Qt.Key.Key_Up)
    qtbot.keyClick(line, Qt.Key.Key_Up)
    assert editor.value()["age"] == 150


def test_an_out_of_range_number_is_kept_not_clamped(editor: DataEditor) -> None:
    """A loaded value outside the bounds stays as it is (validation reports it)."""
    editor.set_value({**VALUE, "age": 400}, SCHEMA)
    assert editor.form.value()["age"] == 400
    assert at(editor, "age").findChild(QLineEdit).text() == "400"


def test_toggling_a_boolean_emits(editor: DataEditor, qtbot: Any) -> None:
    """Clicking a check box flips the boolean in the emitted value."""
    editor.set_value(VALUE, SCHEMA)
    with qtbot.waitSignal(editor.value_edited) as blocker:
        at(editor, "vip").findChild(QCheckBox).click()
    assert blocker.args[0]["vip"] is False


def test_choosing_an_enum_value(editor: DataEditor, qtbot: Any) -> None:
    """Picking another entry of the combo box sets the enum value."""
    editor.set_value(VALUE, SCHEMA)
    combo = at(editor, "tier").findChild(QComboBox)
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.keyClick(combo, Qt.Key.Key_Up)
    assert blocker.args[0]["tier"] == "standard"


def test_a_value_outside_the_enum_is_kept_and_marked(editor: DataEditor) -> None:
    """A value the enum does not list is shown as not allowed, never replaced by a listed one."""
    editor.set_value({**VALUE, "tier": "platinum"}, SCHEMA)
    combo = at(editor, "tier").findChild(QComboBox)
    assert "not allowed" in combo.currentText()
    assert editor.form.value()["tier"] == "platinum"


def test_const_is_read_only(editor: DataEditor) -> None:
    """A `const` shows its value and cannot be edited."""
    editor.set_value(VALUE, SCHEMA)
    line = at(editor, "kind").findChild(QLineEdit)
    assert line.text() == "person"
    assert line.isReadOnly()


def test_date_time_is_edited_in_utc(editor: DataEditor, qtbot: Any) -> None:
    """A date-time shows in UTC and an edit writes ISO 8601 with `Z`."""
    editor.set_value(VALUE, SCHEMA)
    edit = at(editor, "since").findChild(QDateTimeEdit)
    assert edit.dateTime().toString("yyyy-MM-dd HH:mm") == "2024-05-01 10:30"
    with qtbot.waitSignal(editor.value_edited) as blocker:
        edit.setDateTime(edit.dateTime().addSecs(3600))
    assert blocker.args[0]["since"] == "2024-05-01T11:30:00Z"


def test_an_untouched_date_time_keeps_its_spelling(editor: DataEditor, qtbot: Any) -> None:
    """A date-time written with an offset is not rewritten when another field changes."""
    editor.set_value({**VALUE, "since": "2024-05-01T12:30:00+02:00"}, SCHEMA)
    edit_line(qtbot, at(editor, "name").findChild(QLineEdit), "Ann")
    assert editor.value()["since"] == "2024-05-01T12:30:00+02:00"


def test_nullable_toggle(editor: DataEditor, qtbot: Any) -> None:
    """Unticking "null" gives the inner editor's value; ticking it again gives null."""
    editor.set_value(VALUE, SCHEMA)
    null = at(editor, "nick").findChild(QCheckBox)
    assert null.isChecked()
    with qtbot.waitSignal(editor.value_edited) as blocker:
        null.click()
    assert blocker.args[0]["nick"] == ""
    edit_line(qtbot, at(editor, "nick").findChild(QLineEdit), "mc")
    assert editor.value()["nick"] == "mc"
    with qtbot.waitSignal(editor.value_edited) as blocker:
        null.click()
    assert blocker.args[0]["nick"] is None


def test_array_add_remove_and_reorder(editor: DataEditor, qtbot: Any) -> None:
    """The array's buttons append an item, move items up and down, and remove them."""
    editor.set_value(VALUE, SCHEMA)
    tags = at(editor, "tags")
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.mouseClick(button(tags, "add-item"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["tags"] == ["a", "b", ""]
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.mouseClick(button(tags, "up:1"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["tags"] == ["b", "a", ""]
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.mouseClick(button(tags, "down:0"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["tags"] == ["a", "b", ""]
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.mouseClick(button(tags, "remove:0"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["tags"] == ["b", ""]
    edit_line(qtbot, at(editor, "tags", 1).findChild(QLineEdit), "c")
    assert editor.value()["tags"] == ["b", "c"]


def test_optional_properties_can_be_added_and_removed(editor: DataEditor, qtbot: Any) -> None:
    """An absent property has an add button; a present optional one a remove button."""
    editor.set_value({"name": "Maya", "age": 3}, SCHEMA)
    assert editor.form.locate(("vip",)) is None
    qtbot.mouseClick(button(editor, "add:vip"), Qt.MouseButton.LeftButton)
    assert editor.value() == {"name": "Maya", "age": 3, "vip": False}
    qtbot.mouseClick(button(editor, "remove:vip"), Qt.MouseButton.LeftButton)
    assert editor.value() == {"name": "Maya", "age": 3}


def test_properties_outside_the_schema_are_raw_json(editor: DataEditor, qtbot: Any) -> None:
    """A key the schema does not list is shown and editable as JSON, and kept."""
    editor.set_value({"name": "Maya", "age": 3, "extra": {"x": [1]}}, SCHEMA)
    raw = at(editor, "extra")
    assert raw.key == "raw"
    line = raw.findChild(QLineEdit)
    assert line.text() == '{"x": [1]}'
    edit_line(qtbot, line, '{"x": [2]}')
    assert editor.value()["extra"] == {"x": [2]}


def test_a_value_of_the_wrong_type_is_kept_as_raw_json(editor: DataEditor) -> None:
    """A string where the schema says integer is shown raw, not coerced."""
    editor.set_value({"name": "Maya", "age": "thirty"}, SCHEMA)
    assert at(editor, "age").key == "raw"
    assert editor.form.value()["age"] == "thirty"


ONE_OF = {
    "type": "object",
    "properties": {
        "payment": {
            "oneOf": [
                {
                    "title": "card",
                    "type": "object",
                    "properties": {"method": {"const": "card"}, "last4": {"type": "string"}},
                    "required": ["method"],
                },
                {
                    "title": "iban",
                    "type": "object",
                    "properties": {"method": {"const": "iban"}, "iban": {"type": "string"}},
                    "required": ["method", "iban"],
                },
            ]
        }
    },
}


def test_one_of_picks_the_fitting_branch(editor: DataEditor) -> None:
    """A oneOf value opens on the branch its discriminator matches."""
    editor.set_value({"payment": {"method": "iban", "iban": "FR76"}}, ONE_OF)
    choice = at(editor, "payment")
    assert choice.key == "choice"
    assert choice.findChild(QComboBox).currentText() == "iban"
    assert at(editor, "payment", "iban").findChild(QLineEdit).text() == "FR76"


def test_one_of_branch_switch(editor: DataEditor, qtbot: Any) -> None:
    """Choosing another branch replaces the value with that branch's starting value."""
    editor.set_value({"payment": {"method": "card", "last4": "4242"}}, ONE_OF)
    combo = at(editor, "payment").findChild(QComboBox)
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert blocker.args[0] == {"payment": {"method": "iban", "iban": ""}}
    edit_line(qtbot, at(editor, "payment", "iban").findChild(QLineEdit), "DE89")
    assert editor.value() == {"payment": {"method": "iban", "iban": "DE89"}}


def test_descriptions_are_tooltips(editor: DataEditor) -> None:
    """A property's description is the tooltip of its widget."""
    editor.set_value(VALUE, SCHEMA)
    assert "Who" in at(editor, "name").toolTip()


def test_inferred_form_without_schema(editor: DataEditor, qtbot: Any) -> None:
    """Without a schema each value gets the widget its type calls for, and edits round-trip."""
    value = {"title": "x", "count": 2, "done": False, "items": [{"id": 1}], "none": None}
    editor.set_value(value, None)
    assert [at(editor, k).key for k in ("title", "count", "done", "items", "none")] == [
        "string",
        "integer",
        "boolean",
        "array",
        "raw",
    ]
    assert at(editor, "items", 0, "id").key == "integer"
    edit_line(qtbot, at(editor, "items", 0, "id").findChild(QLineEdit), "7")
    assert editor.value() == {**value, "items": [{"id": 7}]}
    qtbot.mouseClick(button(at(editor, "items"), "add-item"), Qt.MouseButton.LeftButton)
    assert editor.value()["items"] == [{"id": 7}, {"id": 0}]


def test_read_only_disables_editing(editor: DataEditor) -> None:
    """A read-only editor offers no way to change the value."""
    editor.set_value(VALUE, SCHEMA)
    editor.set_read_only(True)
    assert at(editor, "name").findChild(QLineEdit).isReadOnly()
    assert at(editor, "tags").findChild(QToolButton, "add-item") is None
    assert editor.json.text.isReadOnly()
