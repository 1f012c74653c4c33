"""The data editor's validation: off the GUI process, shown at the field the error's path names."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QLineEdit

from contextdeck.gui._editor import DataEditor
from contextdeck.gui._editor._validation import TIMED_OUT

pytestmark = pytest.mark.usefixtures("qapp")

WAIT = 10_000  # a worker process starting on a busy machine; the wait ends as soon as the signal comes


@pytest.fixture
def editor(qtbot: Any) -> DataEditor:
    widget = DataEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 500)
    widget.show()
    return widget


def load(qtbot: Any, editor: DataEditor, value: Any, schema: dict[str, Any] | None) -> list[Any]:
    """Loads a value and waits for its validation; returns the problems."""
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        editor.set_value(value, schema)
    problems: list[Any] = blocker.args[0]
    return problems


SCHEMA = {
    "type": "object",
    "properties": {
        "orderId": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"},
        "customer": {
            "type": "object",
            "properties": {"email": {"type": "string"}, "age": {"type": "integer", "minimum": 18}},
            "required": ["email"],
        },
        "lines": {
            "type": "array",
            "items": {"type": "object", "properties": {"qty": {"type": "integer", "minimum": 1}}},
        },
    },
    "required": ["orderId"],
    "additionalProperties": False,
}


def test_a_valid_value_has_no_problems(qtbot: Any, editor: DataEditor) -> None:
    """A value the schema accepts validates to an empty list and shows no error."""
    problems = load(qtbot, editor, {"orderId": "A-1042", "customer": {"email": "m@x"}}, SCHEMA)
    assert problems == []
    assert editor.errors() == []
    assert not editor.form.summary.isVisible()


def test_errors_show_at_nested_fields(qtbot: Any, editor: DataEditor) -> None:
    """An error inside a nested object shows under that field, with a red frame and in its tooltip."""
    load(qtbot, editor, {"orderId": "A-1042", "customer": {"email": "m@x", "age": 12}}, SCHEMA)
    assert editor.errors() == [(("customer", "age"), "12 is less than the minimum of 18")]
    slot = editor.form.locate(("customer", "age"))
    assert slot is not None
    assert slot.messages == ("12 is less than the minimum of 18",)
    assert slot.findChild(QLabel, "fieldError").isVisible()
    assert "minimum of 18" in slot.editor.toolTip()
    assert editor.form.locate(("orderId",)).messages == ()


def test_errors_show_at_array_items(qtbot: Any, editor: DataEditor) -> None:
    """An error in the second item of an array shows at that item's field, not the first's."""
    load(qtbot, editor, {"orderId": "A-1042", "lines": [{"qty": 2}, {"qty": 0}]}, SCHEMA)
    assert editor.form.locate(("lines", 1, "qty")).messages == ("0 is less than the minimum of 1",)
    assert editor.form.locate(("lines", 0, "qty")).messages == ()


def test_root_errors_go_to_the_summary(qtbot: Any, editor: DataEditor) -> None:
    """Errors about the whole value (a missing required key, an unknown key) show in the summary on top."""
    load(qtbot, editor, {"customer": {"email": "m@x"}, "zzz": 1}, SCHEMA)
    assert editor.form.summary.isVisible()
    assert "'orderId' is a required property" in editor.form.summary.text()
    assert "'zzz' was unexpected" in editor.form.summary.text()


def test_editing_a_field_revalidates(qtbot: Any, editor: DataEditor) -> None:
    """Fixing a field's value clears its error after the next validation."""
    load(qtbot, editor, {"orderId": "bad"}, SCHEMA)
    slot = editor.form.locate(("orderId",))
    assert "does not match" in slot.messages[0]
    line = slot.editor.findChild(QLineEdit)
    line.selectAll()
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT, check_params_cb=lambda p: p == []):
        qtbot.keyClicks(line, "B-2000")
    assert editor.form.locate(("orderId",)).messages == ()


def test_only_the_latest_request_is_reported(qtbot: Any, editor: DataEditor) -> None:
    """Several quick edits give one validation, of the last value."""
    reports: list[Any] = []
    editor.validation_changed.connect(reports.append)
    editor.set_value({"orderId": "bad"}, SCHEMA)
    editor.set_value({"orderId": "A-0001"}, SCHEMA)
    qtbot.waitUntil(lambda: reports != [], timeout=WAIT)
    # the worker answers in order, so a stale answer would come before the answer to this next request
    problems = load(qtbot, editor, {"orderId": "A-0001", "zzz": 1}, SCHEMA)
    assert reports == [[], problems]


CATASTROPHIC = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}


def test_a_catastrophic_pattern_does_not_block_the_event_loop(qtbot: Any, editor: DataEditor) -> None:
    """While `^(a+)+$` backtracks on "aaa…!", the event loop keeps running, and the validation times out."""
    load(qtbot, editor, {"code": "aaa"}, CATASTROPHIC)  # the worker is up
    ticks: list[int] = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        editor.set_value({"code": "a" * 40 + "!"}, CATASTROPHIC)
    timer.stop()
    assert blocker.args[0] == [((), TIMED_OUT)]
    # the match ran for the whole ~1 s limit: a blocked loop would have ticked a handful of times at most
    assert len(ticks) >= 30
    assert TIMED_OUT in editor.form.summary.text()
    # and the next validation works (the stuck worker was replaced)
    assert load(qtbot, editor, {"code": "aaa"}, CATASTROPHIC) == []


def test_without_a_schema_there_is_nothing_to_validate(qtbot: Any, editor: DataEditor) -> None:
    """An inferred form reports no problems."""
    assert load(qtbot, editor, {"a": 1}, None) == []


def test_a_broken_schema_is_reported_not_raised(qtbot: Any, editor: DataEditor) -> None:
    """A schema that is not a valid JSON Schema is named in the summary."""
    problems = load(qtbot, editor, {"a": 1}, {"type": "object", "properties": {"a": {"type": "nonsense"}}})
    assert problems[0][1].startswith("the schema is invalid")
    assert editor.form.summary.isVisible()
