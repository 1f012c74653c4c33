"""What the screen says is true (issue 31, item 4): each note, label and layout matches what is selected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QFrame

from contextdeck.gui._message_editor import MessageEditor
from contextdeck.gui._timeline import EMPTY_PLAN, NO_PLAN
from contextdeck.gui._window import MainWindow


def test_an_empty_plan_is_not_told_to_select_a_plan(qtbot: Any, refund_window: MainWindow) -> None:
    """A plan without calls selected: the calls' place says the plan has none yet, not "Select a plan message"."""
    window = refund_window
    window.actions_by_name["insert_plan"].trigger()
    QApplication.processEvents()
    assert window.context()[window.selected_message()]["type"] == "plan"
    note = window.timeline.calls_note
    assert note.isVisible()
    assert note.text() == EMPTY_PLAN
    window.select_message(0)  # a text message: the general note again
    QApplication.processEvents()
    assert note.text() == NO_PLAN


def test_the_schema_tab_stacks_its_properties_from_the_top(qtbot: Any) -> None:
    """In a tall Schema tab the property boxes sit under each other at the top; the spare room is below them
    (the boxes floated mid-pane between bands of empty space)."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.resize(700, 900)
    editor.show()
    editor.set_message(0, {"type": "state", "data": {}, "schema": {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}})
    editor.tabs.setCurrentWidget(editor.schema_page)
    qtbot.waitUntil(lambda: editor.schema.isVisible())
    QApplication.processEvents()
    boxes = [box for box in editor.schema.findChildren(QFrame) if box.frameShape() == QFrame.Shape.StyledPanel
             and box.isVisible()]
    assert len(boxes) == 2
    viewport = editor.schema_page.viewport().height()
    assert editor.schema.height() <= editor.schema.sizeHint().height() + 2 < viewport
    upper, lower = sorted(boxes, key=lambda box: box.mapTo(editor.schema, box.rect().topLeft()).y())
    gap = lower.mapTo(editor.schema, lower.rect().topLeft()).y() - \
        upper.mapTo(editor.schema, upper.rect().bottomLeft()).y()
    assert gap < 20


def test_the_inspector_says_a_problem_once_in_json(qtbot: Any, refund_window: MainWindow) -> None:
    """checkEligibility's `order` resolves to null: the inspector names the path once and says `null` (it said
    "$.order $.order: None is not of type 'object'")."""
    inspector = refund_window.inspector
    inspector.panel.view.select_call(2)
    problems = inspector.inspector.problems
    qtbot.waitUntil(lambda: "$.order" in problems.text())
    text = problems.text()
    assert text.count("$.order") == 1
    assert "None" not in text
    assert "null is not of type" in text


def test_a_new_document_says_what_to_do_and_what_the_cursor_is(qtbot: Any, open_window: Any) -> None:
    """A new, empty document: the editor offers no field to type into (it showed an editable-looking `null`)
    but says how to begin; the loop's status says the document is empty (not only "waiting for the next
    turn"); once there are messages the status bar says which one the views show, the time cursor, and its
    tooltip explains it."""
    window = open_window(None)
    editor = window.editor
    assert editor.nothing.isVisible()
    assert "Insert" in editor.nothing.text()
    assert not editor.tabs.isVisible()
    assert "empty document" in window.turns.label.toolTip()
    assert window.cursor_label.text() == ""
    window.actions_by_name["insert_text"].trigger()
    qtbot.waitUntil(lambda: window.cursor_label.text() == "As of message #0")
    assert "time cursor" in window.cursor_label.toolTip()
    assert editor.tabs.isVisible()
    assert not editor.nothing.isVisible()
    assert "empty document" not in window.turns.label.toolTip()
    window.actions_by_name["follow"].trigger()
    qtbot.waitUntil(lambda: window.cursor_label.text() == "As of the latest message")


def test_after_a_run_the_views_show_what_it_wrote(qtbot: Any, refund_window: MainWindow) -> None:
    """Continue with message 1 selected: when the run stops, the time cursor is on the last message it wrote,
    and the State pane shows the state the run left (before, it stayed as of message 1: no `state` at all)."""
    window = refund_window
    inspector = window.inspector
    window.select_message(1)
    before = len(window.context())
    next(a for a in window.menu("Run").actions() if a.text() == "Continue").trigger()
    qtbot.waitUntil(lambda: not inspector.debugger.running and len(window.context()) > before, timeout=20000)
    qtbot.waitUntil(lambda: window.selected_message() == len(window.context()) - 1)
    model = window.state_view.model()

    def roots() -> dict[str, str]:
        return {model.index(row, 0).data(): model.index(row, 1).data() for row in range(model.rowCount())}

    # what lookupOrder wrote (null before the run); the pane follows the selection on a later turn (`viewsDue`)
    qtbot.waitUntil(lambda: 'order: {id: "A-1042"' in roots().get("¶state", ""), timeout=10000)


def test_the_run_shows_what_it_wrote_in_a_turn_of_its_own(qtbot: Any, refund_window: MainWindow) -> None:
    """When a run stops, the last message it wrote is selected on a later turn of the event loop, not in the run's
    last one: the editor's new page and the timeline's scroll do not add up with the run's last piece of work."""
    window = refund_window
    debugger = window.inspector.debugger
    window.select_message(1)
    at_stop: list[int | None] = []
    debugger.stateChanged.connect(lambda: None if debugger.running else at_stop.append(window.selected_message()))
    next(a for a in window.menu("Run").actions() if a.text() == "Continue").trigger()
    qtbot.waitUntil(lambda: bool(at_stop), timeout=20000)
    assert at_stop == [1]  # as the run stopped: not yet
    qtbot.waitUntil(lambda: window.selected_message() == len(window.context()) - 1)


def test_the_output_audit_raised_after_its_message_was_deleted_shows_nothing(
        qtbot: Any, refund_window: MainWindow) -> None:
    """The audit remembers the message selected while its tab was hidden; raised after that message is gone,
    it shows no message instead of raising IndexError (found by the no-write property test)."""
    window = refund_window
    docks = window.inspector.docks
    docks["Call inspector"].raise_()
    qtbot.waitUntil(lambda: docks["Output audit"].visibleRegion().isEmpty())
    window.inspector.wiring.show_message(len(window.context()))  # remembered: a message since removed
    docks["Output audit"].raise_()
    qtbot.waitUntil(lambda: not docks["Output audit"].visibleRegion().isEmpty())


def test_the_calls_panels_message_is_the_panels_not_a_second_status_line(
        qtbot: Any, refund_window: MainWindow, tmp_path: Path) -> None:
    """The calls panel's own message ("Activities not loaded: …") sits in a box at the panel's top, under its
    toolbar and above its table, and is hidden while there is none: at the bottom of the panel, right above
    the status bar's message, it read as two status lines."""
    panel = refund_window.inspector.panel
    assert panel.message.isHidden()
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n", encoding="utf-8")
    panel.confirm = lambda parent, file: True
    assert panel.load_activities(str(broken)) is False
    qtbot.waitUntil(panel.message.isVisible)
    assert "broken.py:1:5: syntax error" in panel.message.text()
    top = panel.message.mapTo(refund_window, panel.message.rect().bottomLeft()).y()
    assert top < panel.view.mapTo(refund_window, panel.view.rect().topLeft()).y()
    status = refund_window.statusBar().mapTo(refund_window, refund_window.statusBar().rect().topLeft()).y()
    assert status - top > panel.view.height()  # the table is between it and the status bar
    assert panel.message.fill() == panel.message.palette().color(QPalette.ColorRole.AlternateBase)
    panel.message.setText("")
    assert panel.message.isHidden()


def test_an_empty_last_plan_is_named_not_denied(qtbot: Any, refund_window: MainWindow) -> None:
    """A new, empty plan message after the refund plan: the calls panel says the last plan (#5) has no calls
    yet (it said the document had no plan message at all, with one of five calls right above)."""
    from contextdeck.gui._inspector._panel import EMPTY_PLAN

    panel = refund_window.inspector.panel
    refund_window.select_message(4)
    refund_window.insert_message("Plan")
    qtbot.waitUntil(lambda: panel.message.text() == EMPTY_PLAN.format(5))
    assert panel.message.isVisible()
    refund_window.commands.undo()
    qtbot.waitUntil(lambda: panel.message.text() == "")


def test_the_calls_of_the_selected_plan_follow_its_first_and_last_call(qtbot: Any, refund_window: MainWindow) -> None:
    """A new plan selected, its first call added in the editor: the timeline lists it under the messages (it kept
    saying the plan had no calls until another row was selected and this one again); its last removed: the note."""
    window = refund_window
    window.actions_by_name["insert_plan"].trigger()
    qtbot.waitUntil(lambda: window.timeline.calls_note.isVisible())
    plan = window.selected_message()
    body = window.editor.body()
    body.add_button.click()
    qtbot.waitUntil(lambda: len(window.context()[plan]["plan"]) == 1)
    assert window.selected_message() == plan
    qtbot.waitUntil(lambda: window.timeline.calls.isVisible())
    assert window.timeline.calls.model().rowCount(window.timeline.calls.rootIndex()) == 1
    window.commands.undo()
    qtbot.waitUntil(lambda: window.context()[plan]["plan"] == [])
    qtbot.waitUntil(lambda: window.timeline.calls_note.isVisible())
    assert window.timeline.calls_note.text() == EMPTY_PLAN
