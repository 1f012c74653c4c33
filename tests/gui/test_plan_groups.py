"""The plan form edits pattern groups and instances through its own widgets, not only the JSON tab."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from test_authoring import add_property, type_text
from test_build_refund import click, pick
from test_window import settings as settings
from test_window import window as window

from contextdeck.engine import Insert
from contextdeck.gui._message_editor._calls import PATTERNS
from contextdeck.gui._window import MainWindow


def test_plan_groups_and_instances_from_the_plan_form(qtbot: Any, window: MainWindow) -> None:
    """A group is added, its pattern picked, calls added to it, a call grouped on its own, taken out and a group
    undone, `_instance` picked from the document's instances: the plan is what the form shows, and problems of a
    call inside a group are marked at its own box (calls numbered through groups)."""
    window.apply_edit(Insert(4, {"type": "state", "_instance": "①", "data": {"user": "Kim"}}))
    window.select_message(4)
    window.actions_by_name["insert_tool"].trigger()
    tools = window.editor.body()
    for name in ("greet", "wave"):
        qtbot.keyClicks(tools.new_name, name)
        qtbot.keyClick(tools.new_name, Qt.Key.Key_Return)
    add_property(qtbot, tools.boxes["greet"].node, "who", "string")
    window.actions_by_name["insert_plan"].trigger()
    plan = window.editor.body()

    def written() -> Any:
        return window.context()[6]["plan"]

    click(qtbot, plan.add_group_button)
    assert written() == [{"all": [{"_tool": "greet"}]}]
    pick(qtbot, plan.groups[0].pattern, PATTERNS["any"])
    assert written() == [{"any": [{"_tool": "greet"}]}]
    pick(qtbot, plan.boxes[0].tool, "wave")
    click(qtbot, plan.groups[0].add_button)
    assert written() == [{"any": [{"_tool": "wave"}, {"_tool": "greet"}]}]
    instance = plan.boxes[0].fields["_instance"]
    assert isinstance(instance, QLineEdit)
    assert instance.completer().model().stringList() == ["①"]  # the instances the document names
    type_text(qtbot, instance, "①")
    type_text(qtbot, plan.boxes[1].fields["who"], "†state.nobody")
    assert written() == [{"any": [{"_tool": "wave", "_instance": "①"}, {"_tool": "greet", "who": "†state.nobody"}]}]
    assert plan.boxes[1].fields["who"].property("problems") == ["nothing writes †state.nobody"]
    assert not plan.boxes[0].fields["_instance"].property("problems")
    assert "call 1 $.who" in plan.problems.text()

    click(qtbot, plan.add_button)  # a call after the group, then a group of its own
    assert written()[1] == {"_tool": "greet"}
    click(qtbot, plan.boxes[2].regroup)
    assert written()[1] == {"all": [{"_tool": "greet"}]}
    click(qtbot, plan.boxes[0].regroup)  # wave@① out of the `any` group: it follows the group
    assert written() == [{"any": [{"_tool": "greet", "who": "†state.nobody"}]}, {"_tool": "wave", "_instance": "①"},
                         {"all": [{"_tool": "greet"}]}]
    click(qtbot, plan.groups[0].ungroup)
    click(qtbot, plan.groups[2].remove)
    assert written() == [{"_tool": "greet", "who": "†state.nobody"}, {"_tool": "wave", "_instance": "①"}]
    assert window.editor.model().value == written() == plan.value()  # the form and the message agree
    assert [box.title() for box in plan.boxes] == ["Call 0", "Call 1"]
