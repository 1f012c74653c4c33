"""The data editor's form: each widget kind from its schema, round-tripping and editing values."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QTextCursor, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QGroupBox,
    QLineEdit,
    QPlainTextEdit,
    QToolButton,
    QWidget,
)
from shiboken6 import isValid

from contextdeck.gui._editor import DataEditor
from contextdeck.gui._editor._base import FieldEditor, FieldSlot
from contextdeck.gui._editor._containers import PAGE
from contextdeck.gui._editor._form import SPARE_FORMS

pytestmark = pytest.mark.usefixtures("qapp")


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


REMOVE = (Qt.Key.Key_Delete, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)


def test_tab_never_stops_on_a_remove_button(editor: DataEditor, qtbot: Any) -> None:
    """Tab goes from field to field past the ✕ of each optional property and array item (a stop each doubled
    the keys through a form), and each ✕'s tooltip names the key that does its work from the field."""
    editor.set_value(VALUE, SCHEMA)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    removes = [b for b in editor.findChildren(QToolButton) if b.text() == "✕" and b.isVisibleTo(editor)]
    assert len(removes) >= 8  # the optional properties and the two tags
    assert all("Ctrl+Shift+Del in its field" in b.toolTip() for b in removes)
    at(editor, "score").focus_first()
    seen: list[QWidget] = []
    for _ in range(40):  # round the form (a date-time's Tab goes through its sections first)
        widget = QApplication.focusWidget()
        assert widget is not None
        seen.append(widget)
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
    assert len(set(seen)) > 8
    assert not any(isinstance(w, QToolButton) and w.text() == "✕" for w in seen)
    assert at(editor, "tags", 0).focusProxy() in seen


def test_the_remove_key_removes_the_field_with_the_focus(editor: DataEditor, qtbot: Any) -> None:
    """Ctrl+Shift+Del in an optional field removes it as its ✕ does, and the focus goes on to the next field (the
    last one, past the end; the array's add button when it is empty): typing goes on in the form."""
    editor.set_value(VALUE, SCHEMA)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    at(editor, "score").focus_first()
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.keyClick(QApplication.focusWidget(), *REMOVE)
    assert "score" not in blocker.args[0]
    assert QApplication.focusWidget() is at(editor, "vip").focusProxy()
    at(editor, "tags", 0).focus_first()
    qtbot.keyClick(QApplication.focusWidget(), *REMOVE)
    assert editor.value()["tags"] == ["b"]
    line = QApplication.focusWidget()
    assert line is at(editor, "tags", 0).focusProxy()
    assert line.selectedText() == "b"  # as Tab leaves it: typing replaces it
    qtbot.keyClick(line, *REMOVE)
    assert editor.value()["tags"] == []
    assert QApplication.focusWidget() is button(at(editor, "tags"), "add-item")
    name = at(editor, "name").focusProxy()
    name.setFocus()
    before = editor.value()
    qtbot.keyClick(name, *REMOVE)  # required, in no item: nothing to remove
    assert editor.value() == before
    assert QApplication.focusWidget() is name


def test_the_remove_key_in_an_items_field_removes_the_item(editor: DataEditor, qtbot: Any) -> None:
    """In a required field of an array's object item, Ctrl+Shift+Del removes the item (the innermost ✕ around the
    focus); in an optional one, the field alone."""
    schema = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"},
                                                                         "note": {"type": "string"}},
                                         "required": ["id"]}}
    editor.set_value([{"id": "a", "note": "x"}, {"id": "b"}], schema)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    at(editor, 0, "note").focus_first()
    qtbot.keyClick(QApplication.focusWidget(), *REMOVE)
    assert editor.value() == [{"id": "a"}, {"id": "b"}]
    at(editor, 0, "id").focus_first()
    qtbot.keyClick(QApplication.focusWidget(), *REMOVE)
    assert editor.value() == [{"id": "b"}]
    assert QApplication.focusWidget() is at(editor, 0, "id").focusProxy()


MOVE_UP = (Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
MOVE_DOWN = (Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)


def test_the_move_keys_move_the_item_with_the_focus(editor: DataEditor, qtbot: Any) -> None:
    """An item's ▲ ▼ are no Tab stops either: Ctrl+Shift+Up and Down in an item's field move the item as they do,
    the focus going with it (its text selected, as Tab leaves it), and past either end nothing moves; the
    arrows' tooltips name the keys."""
    editor.set_value(VALUE, SCHEMA)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    tags = at(editor, "tags")
    assert "Ctrl+Shift+Up in its field" in button(tags, "up:1").toolTip()
    assert "Ctrl+Shift+Down in its field" in button(tags, "down:0").toolTip()
    assert all(button(tags, f"{name}:{i}").focusPolicy() == Qt.FocusPolicy.NoFocus
               for name in ("up", "down") for i in (0, 1))
    at(editor, "tags", 0).focus_first()
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.keyClick(QApplication.focusWidget(), *MOVE_DOWN)
    assert blocker.args[0]["tags"] == ["b", "a"]
    line = QApplication.focusWidget()
    assert line is at(editor, "tags", 1).focusProxy()
    assert line.selectedText() == "a"
    qtbot.keyClick(line, *MOVE_DOWN)  # the last: stays
    assert editor.value()["tags"] == ["b", "a"]
    qtbot.keyClick(line, *MOVE_UP)
    assert editor.value()["tags"] == ["a", "b"]
    assert QApplication.focusWidget() is at(editor, "tags", 0).focusProxy()
    name = at(editor, "name").focusProxy()
    name.setFocus()
    before = editor.value()
    qtbot.keyClick(name, *MOVE_UP)  # in no item: nothing moves
    assert editor.value() == before


def test_the_move_keys_move_the_innermost_item(editor: DataEditor, qtbot: Any) -> None:
    """In a field of an object item, the keys move the item (the innermost array item around the focus)."""
    schema = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}
    editor.set_value([{"id": "a"}, {"id": "b"}], schema)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    at(editor, 1, "id").focus_first()
    qtbot.keyClick(QApplication.focusWidget(), *MOVE_UP)
    assert editor.value() == [{"id": "b"}, {"id": "a"}]
    assert QApplication.focusWidget() is at(editor, 0, "id").focusProxy()


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


def test_branches_of_one_type_are_told_apart(editor: DataEditor, qtbot: Any) -> None:
    """oneOf branches without titles, both objects: the combo box names each by the property whose const tells
    them apart (it listed "object", "object"), or by its place when nothing does; the value opens on its own."""
    refund = {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "card"}, "last4": {"type": "string"}}},
        {"type": "object", "properties": {"kind": {"enum": ["credit"]}, "amount": {"type": "number"}}},
        {"type": "string"}]}
    editor.set_value({"r": {"kind": "credit", "amount": 5}}, {"type": "object", "properties": {"r": refund}})
    combo = at(editor, "r").findChild(QComboBox)
    assert [combo.itemText(i) for i in range(combo.count())] == [
        'object: kind = "card"', 'object: kind = "credit"', "string"]
    assert combo.currentIndex() == 1
    plain = {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                       {"type": "object", "properties": {"b": {"type": "string"}}}]}
    editor.set_value({"p": {"b": "x"}}, {"type": "object", "properties": {"p": plain}})
    combo = at(editor, "p").findChild(QComboBox)
    assert [combo.itemText(i) for i in range(combo.count())] == ["object (option 1)", "object (option 2)"]


def test_all_of_branches_are_one_form(editor: DataEditor) -> None:
    """`allOf` (as pydantic writes a described reference, or a schema extended by another): the form shows the
    properties every branch lists, with their widgets and required marks (it was one line of raw JSON)."""
    schema = {
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
        "type": "object",
        "properties": {
            "home": {"allOf": [{"$ref": "#/$defs/Address"}], "description": "Where they live"},
            "order": {"allOf": [{"type": "object", "properties": {"id": {"type": "string"}}},
                                {"properties": {"qty": {"type": "integer", "minimum": 1}}, "required": ["qty"]}]},
        },
    }
    value = {"home": {"city": "Oslo"}, "order": {"id": "A-1", "qty": 2}}
    editor.set_value(value, schema)
    assert at(editor, "home").key == "object"
    assert at(editor, "home", "city").key == "string"
    assert "Where they live" in at(editor, "home").findChild(QGroupBox).toolTip()
    assert [at(editor, "order", name).key for name in ("id", "qty")] == ["string", "integer"]
    assert at(editor, "order").field.required == {"qty"}
    assert editor.value() == value


def test_pattern_properties_give_their_keys_widgets_and_new_keys(editor: DataEditor, qtbot: Any) -> None:
    """A key that `patternProperties` describes gets its schema's widget (it was raw JSON "not described by the
    schema"), and such an object takes new keys even under `additionalProperties: false`, each started as the
    pattern it matches says."""
    schema = {"type": "object", "properties": {"id": {"type": "string"}},
              "patternProperties": {"^x-": {"type": "integer", "description": "an extension"},
                                    "^(a|a)+$": {"type": "boolean"}},
              "additionalProperties": False}
    editor.set_value({"id": "1", "x-a": 3}, schema)
    assert at(editor, "x-a").key == "integer"
    assert "an extension" in at(editor, "x-a").toolTip()
    name = at(editor).findChild(QLineEdit, "new-key")
    assert name is not None
    name.setText("x-b")
    with qtbot.waitSignal(editor.value_edited):
        button(at(editor), "add-key").click()
    assert editor.value() == {"id": "1", "x-a": 3, "x-b": 0}
    name = at(editor).findChild(QLineEdit, "new-key")  # the rows were made again for the new key
    name.setText("a" * 40 + "!")  # the evil pattern is searched with a bound, not for minutes
    with qtbot.waitSignal(editor.value_edited):
        button(at(editor), "add-key").click()
    assert at(editor, "a" * 40 + "!").key == "raw"


def test_prefix_items_give_each_place_its_widget(editor: DataEditor, qtbot: Any) -> None:
    """A tuple (`prefixItems`): each first item gets its own schema's widget (they were raw JSON), the rest
    `items`'; + Add item starts the next place as its schema says."""
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 1}],
              "items": {"type": "boolean"}}
    editor.set_value(["kettle"], schema)
    assert at(editor, 0).key == "string"
    with qtbot.waitSignal(editor.value_edited):
        button(at(editor), "add-item").click()
    assert editor.value() == ["kettle", 0]
    assert at(editor, 1).key == "integer"
    with qtbot.waitSignal(editor.value_edited):
        button(at(editor), "add-item").click()
    assert editor.value() == ["kettle", 0, False]
    assert at(editor, 2).key == "boolean"


def test_then_and_else_offer_the_properties_they_ask_for(editor: DataEditor, qtbot: Any) -> None:
    """`if`/`then`/`else`: validation says then's `last4` is required, and the form offers it (+ add) with then's
    schema (before, the object listed only `kind`, with no way to add a key but the JSON tab); a name a branch
    requires without describing is offered as any value."""
    schema = {"type": "object", "properties": {"kind": {"enum": ["card", "bank"]}},
              "if": {"properties": {"kind": {"const": "card"}}},
              "then": {"properties": {"last4": {"type": "string", "pattern": "^[0-9]{4}$"}}, "required": ["last4"]},
              "else": {"required": ["iban"]}}
    editor.set_value({"kind": "card"}, schema)
    with qtbot.waitSignal(editor.value_edited):
        button(at(editor), "add:last4").click()
    assert editor.value() == {"kind": "card", "last4": ""}
    assert at(editor, "last4").key == "string"
    assert button(at(editor), "add:iban") is not None
    free = {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}
    editor.set_value({"a": 1}, free)  # lists no property: it keeps taking any new key
    assert at(editor).findChild(QLineEdit, "new-key") is not None


def test_a_long_enum_value_does_not_widen_the_form(editor: DataEditor, qtbot: Any) -> None:
    """An enum with a very long value: its box stops growing at a few dozen characters and the form keeps its width
    (the box grew to the whole value, the form scrolled sideways and every field grew as wide); the value is kept
    whole, and the list shows each item whole. A short value is never cut."""
    long = "refund to the original payment method " * 6
    editor.resize(500, 400)
    editor.show()
    qtbot.waitExposed(editor)
    editor.set_value({"how": long, "tier": "MAXIMUM"}, {"type": "object", "properties": {
        "how": {"enum": ["store credit", long]}, "tier": {"enum": ["MAXIMUM", "LOW"]}}})
    QApplication.processEvents()
    assert editor.form.horizontalScrollBar().maximum() == 0
    combo = at(editor, "how").findChild(QComboBox)
    assert combo.currentText() == long
    assert combo.view().minimumWidth() >= combo.fontMetrics().horizontalAdvance(long)
    tier = at(editor, "tier").findChild(QComboBox)
    assert tier.width() >= tier.fontMetrics().horizontalAdvance("MAXIMUM") + 20  # the text and the arrow
    assert editor.value() == {"how": long, "tier": "MAXIMUM"}


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
    assert button(at(editor, "tags"), "add-item").isHidden()
    assert button(at(editor, "tags"), "remove:0").parentWidget().isHidden()  # the row's button strip
    assert editor.json.text.isReadOnly()
    editor.set_read_only(False)
    assert not button(at(editor, "tags"), "add-item").isHidden()
    assert not at(editor, "name").findChild(QLineEdit).isReadOnly()
    assert not editor.json.text.isReadOnly()


def test_an_echoed_value_updates_in_place(editor: DataEditor, qtbot: Any) -> None:
    """Loading back the value the user just typed keeps the same widget and its cursor."""
    editor.set_value(VALUE, SCHEMA)
    line = at(editor, "address", "city").findChild(QLineEdit)
    line.setCursorPosition(2)
    qtbot.keyClicks(line, "X")
    editor.set_value(editor.value(), SCHEMA)
    assert at(editor, "address", "city").findChild(QLineEdit) is line
    assert line.text() == "LyXon"
    assert line.cursorPosition() == 3


def test_a_new_value_of_the_same_shape_is_shown(editor: DataEditor) -> None:
    """Loading another value (an undo, say) shows it in the existing widgets."""
    editor.set_value(VALUE, SCHEMA)
    editor.set_value({**VALUE, "name": "Zoe", "tags": ["x"], "nick": "z"}, SCHEMA)
    assert at(editor, "name").findChild(QLineEdit).text() == "Zoe"
    assert at(editor, "tags", 0).findChild(QLineEdit).text() == "x"
    assert editor.form.locate(("tags", 1)) is None
    assert at(editor, "nick").findChild(QLineEdit).text() == "z"
    assert editor.form.value() == {**VALUE, "name": "Zoe", "tags": ["x"], "nick": "z"}


def test_long_arrays_come_in_pages(editor: DataEditor, qtbot: Any) -> None:
    """A long array builds its first items and a button for more; the value keeps every item."""
    value = {"tags": [f"t{i}" for i in range(120)]}
    editor.set_value(value, SCHEMA)
    assert editor.form.locate(("tags", PAGE - 1)) is not None
    assert editor.form.locate(("tags", PAGE)) is None
    qtbot.mouseClick(button(at(editor, "tags"), "more-items"), Qt.MouseButton.LeftButton)
    assert at(editor, "tags", 2 * PAGE - 1).findChild(QLineEdit).text() == f"t{2 * PAGE - 1}"
    assert editor.form.locate(("tags", 2 * PAGE)) is None
    edit_line(qtbot, at(editor, "tags", 0).findChild(QLineEdit), "first")
    assert editor.value()["tags"] == ["first", *value["tags"][1:]]


def test_read_only_keyword_locks_its_field(editor: DataEditor) -> None:
    """A property marked `readOnly` in the schema cannot be edited; its neighbours can."""
    schema = {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}, "n": {"type": "string"}}}
    editor.set_value({"id": "x", "n": "y"}, schema)
    assert at(editor, "id").findChild(QLineEdit).isReadOnly()
    assert not at(editor, "n").findChild(QLineEdit).isReadOnly()


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": 5}}},
        {"type": "object", "properties": {"a": {"$ref": "http://example.com/remote.json"}}},
        {"type": "object", "properties": {"a": "not a schema"}},
        ["not", "a", "schema"],
        True,
    ],
)
def test_a_broken_schema_still_opens_the_value(editor: DataEditor, schema: Any) -> None:
    """A schema the form cannot use gives raw or inferred fields and keeps the value."""
    editor.set_value({"a": {"b": 1}}, schema)
    assert editor.form.value() == {"a": {"b": 1}}
    assert editor.form.locate(("a",)) is not None


def test_multi_line_strings_get_a_text_box(editor: DataEditor, qtbot: Any) -> None:
    """A string with line breaks is edited in a multi-line box, and typing there updates the value."""
    editor.set_value({"name": "line one\nline two", "age": 1}, SCHEMA)
    box = at(editor, "name").findChild(QPlainTextEdit)
    assert box.toPlainText() == "line one\nline two"
    box.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(box, "!")
    assert editor.value()["name"] == "line one\nline two!"


def test_the_wheel_over_an_unfocused_number_scrolls_past_it(editor: DataEditor) -> None:
    """Scrolling the form over a number it has not focused leaves the number alone."""
    editor.set_value(VALUE, SCHEMA)
    box = at(editor, "age").findChild(QAbstractSpinBox)
    centre = QPointF(box.rect().center())
    wheel = QWheelEvent(
        centre,
        box.mapToGlobal(centre),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(box, wheel)
    assert editor.form.value()["age"] == 30
    assert box.lineEdit().text() == "30"


def test_text_that_is_not_a_number_is_undone_on_leaving(editor: DataEditor, qtbot: Any) -> None:
    """Typing letters into a number changes nothing, and leaving the box shows the number again."""
    editor.set_value(VALUE, SCHEMA)
    box = at(editor, "age").findChild(QAbstractSpinBox)
    box.lineEdit().setText("")
    qtbot.keyClicks(box.lineEdit(), "-")
    assert editor.form.value()["age"] == 30
    box.editingFinished.emit()
    assert box.lineEdit().text() == "30"


def test_invalid_raw_json_is_flagged_and_not_applied(editor: DataEditor, qtbot: Any) -> None:
    """A raw field whose text is not JSON keeps the last value and says so in its tooltip."""
    editor.set_value({"name": "Maya", "age": 3, "extra": [1]}, SCHEMA)
    raw = at(editor, "extra")
    edit_line(qtbot, raw.findChild(QLineEdit), "[1,")
    assert editor.value()["extra"] == [1]
    assert "not JSON" in raw.findChild(QLineEdit).toolTip()
    qtbot.keyClicks(raw.findChild(QLineEdit), "2]")
    assert editor.value()["extra"] == [1, 2]
    assert raw.findChild(QLineEdit).toolTip() == ""


def test_an_added_property_takes_the_focus(editor: DataEditor, qtbot: Any) -> None:
    """After "+ add", typing goes into the new field."""
    editor.set_value({"name": "Maya", "age": 3}, SCHEMA)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    qtbot.mouseClick(button(editor, "add:nick"), Qt.MouseButton.LeftButton)
    qtbot.keyClicks(QApplication.focusWidget(), "mc")
    assert editor.value()["nick"] == "mc"


def test_free_form_objects_take_new_keys(editor: DataEditor, qtbot: Any) -> None:
    """An object without listed properties gets new keys by name; an existing key is never overwritten."""
    schema = {"type": "object", "properties": {"meta": {"type": "object"}}}
    editor.set_value({"meta": {"a": 1}}, schema)
    meta = at(editor, "meta")
    box = meta.findChild(QLineEdit, "new-key")
    qtbot.keyClicks(box, "a")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert editor.value() == {"meta": {"a": 1}}
    box.clear()
    qtbot.keyClicks(box, "b")
    with qtbot.waitSignal(editor.value_edited) as blocker:
        qtbot.keyClick(box, Qt.Key.Key_Return)
    assert blocker.args[0] == {"meta": {"a": 1, "b": None}}
    edit_line(qtbot, at(editor, "meta", "b").findChild(QLineEdit), '"x"')
    assert editor.value() == {"meta": {"a": 1, "b": "x"}}


def test_closed_objects_take_no_new_keys(editor: DataEditor) -> None:
    """`additionalProperties: false` offers no way to add other keys."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    editor.set_value({"a": "x"}, schema)
    assert editor.findChild(QLineEdit, "new-key") is None


def test_a_null_group_is_hidden_until_unticked(editor: DataEditor, qtbot: Any) -> None:
    """A nullable object that is null shows only its null box; unticking it shows the object's fields."""
    schema = {
        "type": "object",
        "properties": {"order": {"type": ["object", "null"], "properties": {"id": {"type": "string"}}}},
    }
    editor.set_value({"order": None}, schema)
    nullable = at(editor, "order")
    assert nullable.inner.isHidden()
    nullable.findChild(QCheckBox).click()
    assert not nullable.inner.isHidden()
    assert editor.value() == {"order": {}}


def test_tooltips_list_the_constraints(editor: DataEditor) -> None:
    """A field's tooltip gives its description, bounds, pattern and whether it is required."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMaximum": 10, "description": "How many"}},
        "required": ["n"],
    }
    editor.set_value({"n": 1}, schema)
    assert at(editor, "n").toolTip() == "How many\n≥ 0, < 10\nrequired"


def test_going_back_to_a_form_takes_its_widgets_back(editor: DataEditor, qtbot: Any) -> None:
    """A value of another form puts the form aside (hidden, nothing deleted); going back shows the new value
    in the same widgets, and typing there emits the whole value as before."""
    editor.set_value(VALUE, SCHEMA)
    form = editor.form.root.editor
    line = at(editor, "name").findChild(QLineEdit)
    editor.set_value({"other": 1}, None)
    assert editor.form.root.editor is not form
    assert form.isHidden()
    assert editor.form.value() == {"other": 1}
    with qtbot.assertNotEmitted(editor.value_edited):
        editor.set_value({**VALUE, "name": "Zoe"}, SCHEMA)
    assert editor.form.root.editor is form
    assert form.isVisible()
    assert at(editor, "name").findChild(QLineEdit) is line
    assert line.text() == "Zoe"
    emitted: list[Any] = []
    editor.value_edited.connect(emitted.append)
    edit_line(qtbot, line, "Ada")
    assert emitted[-1] == {**VALUE, "name": "Ada"}


def test_a_form_put_aside_keeps_no_marks(editor: DataEditor, qtbot: Any) -> None:
    """Problems mark the fields of the form on screen; a form put aside drops its marks, so taken back
    for another value it shows none of the old value's."""
    editor.set_value({**VALUE, "age": -1}, SCHEMA)
    qtbot.waitUntil(lambda: bool(at_slot(editor, "age").messages))
    form = editor.form.root.editor
    editor.set_value({"name": 5}, None)
    assert all(not slot.messages for slot in form.findChildren(FieldSlot))
    editor.set_value(VALUE, SCHEMA)
    assert editor.form.root.editor is form
    assert not at_slot(editor, "age").messages


def at_slot(editor: DataEditor, *path: Any) -> FieldSlot:
    slot = editor.form.locate(path)
    assert slot is not None, f"no field at {path}"
    return slot


def test_at_most_a_few_forms_are_kept_aside(editor: DataEditor, qtbot: Any) -> None:
    """Past `SPARE_FORMS` other forms, the least recently shown one is deleted."""
    editor.set_value(VALUE, SCHEMA)
    first = editor.form.root.editor
    for n in range(SPARE_FORMS):
        editor.set_value({f"key{n}": n}, None)
    assert isValid(first)
    editor.set_value({"one more": True}, None)
    qtbot.waitUntil(lambda: not isValid(first))
    assert len(editor.form._spares) == SPARE_FORMS


def test_a_new_keys_value_is_typed_over_its_starting_value(editor: DataEditor, qtbot: Any) -> None:
    """A key added by name takes the focus with its starting value selected: what is typed replaces it (real keys:
    the caret sat before `null`, and "x" typed made `"x"null`, which is not JSON)."""
    editor.set_value({"meta": {}}, {"type": "object", "properties": {"meta": {"type": "object"}}})
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    box = at(editor, "meta").findChild(QLineEdit, "new-key")
    qtbot.keyClicks(box, "b")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    value = QApplication.focusWidget()
    assert isinstance(value, QLineEdit)
    assert value.selectedText() == value.text() == "null"
    qtbot.keyClicks(value, '"x"')
    qtbot.keyClick(value, Qt.Key.Key_Return)
    assert editor.value() == {"meta": {"b": "x"}}
