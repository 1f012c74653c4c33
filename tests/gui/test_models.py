"""The thin item models over the engine: Qt's model rules hold through every kind of edit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from contextdeck.engine import Context, Form, Insert, Move, Remove, Replace, load_document
from contextdeck.gui._message_editor._model import with_body, with_payload
from contextdeck.gui._state import StateModel
from contextdeck.gui._timeline_model import InstanceRole, ItemRole, KindRole, LookRole, SummaryRole, TimelineModel
from contextdeck.gui._watches import WatchModel, parse_pin

PLAN = {"type": "plan", "plan": [{"_tool": "a", "_outputPath": "†state.x"}, {"_tool": "b", "q": "†state.x"}]}


def small_context() -> Context:
    return Context([
        {"type": "text", "role": "user", "text": "hi"},
        {"type": "state", "_instance": "①", "data": {"x": 1}},
        dict(PLAN),
        {"type": "state", "data": {"y": [1, 2]}},
    ])


def test_timeline_model_obeys_qt_rules_through_every_edit(qtmodeltester: Any) -> None:
    """Inserts, removals, moves and replacements (a plan's calls changing too) keep the model consistent."""
    context = small_context()
    model = TimelineModel(context, {"calls": [{"_tool": "z"}]})
    qtmodeltester.check(model, force_py=True)
    for edit in (Insert(0, {"type": "text", "text": "new"}), Move(3, 0), Move(0, 4), Remove(1),
                 Replace(2, {"type": "plan", "plan": [{"_tool": "only"}]}), Replace(1, {"type": "text", "text": "t"})):
        context.apply(edit)  # the tester, still connected, checks every begin/end pair and the model after it


def test_timeline_rows_follow_the_context(qtbot: Any) -> None:
    """Row n is message n; plan calls and the solution's calls are child rows; getItem gives engine objects."""
    context = small_context()
    model = TimelineModel(context, {"calls": [{"_tool": "z"}]})
    assert model.rowCount() == len(context) + 1
    plan = model.index(2, 0)
    assert model.rowCount(plan) == 2
    assert model.getItem(model.index(1, 0, plan)) == PLAN["plan"][1]
    assert model.index(1, 0).data(InstanceRole) == "①"
    assert model.index(1, 0).data(KindRole) == "state"
    assert model.getItem(model.index(4, 0)) == [{"_tool": "z"}]
    context.move(2, 0)
    assert model.getItem(model.index(0, 0)) is context[0]
    assert model.index(0, 0).data(ItemRole) == context[0]
    assert model.rowCount(model.index(0, 0)) == 2


def test_a_rows_look_follows_replace_move_and_remove(qtbot: Any) -> None:
    """What a row paints is kept per message, yet always that of the message as it is now, at its row now."""
    context = small_context()
    model = TimelineModel(context)

    def looks() -> list[tuple[Any, ...]]:
        return [model.index(row, 0).data(LookRole)[:5] for row in range(len(context))]

    def fresh() -> list[tuple[Any, ...]]:
        new = TimelineModel(context)
        new.detach()
        return [new.index(row, 0).data(LookRole)[:5] for row in range(len(context))]

    assert looks() == fresh()
    context.apply(Replace(1, {"type": "state", "_instance": "②", "data": {"x": "changed"}}))
    assert model.index(1, 0).data(LookRole)[2] == "②"
    assert looks() == fresh()
    context.apply(Move(0, 3))
    assert looks() == fresh()
    context.apply(Remove(1))
    context.apply(Insert(1, {"type": "text", "role": "user", "text": "new"}))
    assert looks() == fresh()


def test_a_plan_groups_row_names_its_pattern_and_calls(qtbot: Any) -> None:
    """A group entry of a plan is a child row `all (a | b@①)`, not a call with an unknown tool."""
    plan = {"type": "plan", "plan": [{"all": [{"_tool": "a"}, {"_tool": "b", "_instance": "①"}]}, {"_tool": "c"}]}
    model = TimelineModel(Context([plan]))
    group = model.index(0, 0, model.index(0, 0))
    assert (group.data(KindRole), group.data(SummaryRole)) == ("all", "(a | b@①)")
    assert group.data(Qt.ItemDataRole.DisplayRole) == "all(a | b@①)"


def test_a_drop_asks_for_a_move_and_changes_nothing_itself(qtbot: Any) -> None:
    """dropMimeData emits moveRequested(src, dst) and leaves the context alone (the undo stack edits it)."""
    context = small_context()
    model = TimelineModel(context)
    with qtbot.waitSignal(model.moveRequested) as blocker:
        assert not model.dropMimeData(model.mimeData([model.index(0, 0)]), Qt.DropAction.MoveAction, 3, 0,
                                      QModelIndex())
    assert blocker.args == [0, 2]
    assert context[0]["type"] == "text"


def test_state_model_obeys_qt_rules(qtmodeltester: Any, examples: Path) -> None:
    """The state tree of the refund example is a valid model."""
    model = StateModel()
    model.refresh(load_document(examples / "refund_workflow.json").context, None, 2)
    qtmodeltester.check(model, force_py=True)


def test_state_model_names_the_message_that_set_each_value(qtbot: Any) -> None:
    """The instance's value node says message 1 set it, and message 1 is highlighted as the changer."""
    context = small_context()
    model = StateModel()
    model.refresh(context, None, 3)
    labels = [model.index(row, 0).data() for row in range(model.rowCount())]
    assert labels == ["¶state [①]", "¶state"]
    assert model.hasChildren(model.index(1, 0))
    assert not model.rowCount(model.index(1, 0))  # its rows are made when it is first shown open
    model.fetchMore(model.index(1, 0))
    y = model.index(0, 0, model.index(1, 0))
    assert y.data() == "y"
    assert y.siblingAtColumn(2).data() == "#3"
    assert y.data(Qt.ItemDataRole.UserRole + 3) is True  # ChangedRole: the selected message set it


def test_state_model_says_what_the_setter_replaced(qtbot: Any) -> None:
    """The "Set by" tooltip names the setter and the value it shadowed, as the engine's blame has them."""
    context = Context([{"type": "state", "data": {"n": 1}}, {"type": "state", "data": {"n": 2}},
                       {"type": "state", "data": {"m": 0}}])
    model = StateModel()
    model.refresh(context, None, None)
    model.fetchMore(model.index(0, 0))
    n = model.index(0, 2, model.index(0, 0))
    assert n.data() == "#1"
    assert model.tooltip(n) == "Set by message 1; click to jump there\nIt replaced: 1"
    assert context.blame("†state.n").entries[-1].shadowed == 1
    m = model.index(1, 2, model.index(0, 0))
    assert model.tooltip(m).endswith("It replaced: nothing (it was not set)")
    assert model.tooltip(m.siblingAtColumn(0)) == "¶state.m\n0"  # the key and value columns: path and JSON


def test_watches_at_a_cursor_follow_edits_and_moves_through_the_engine(qtbot: Any) -> None:
    """At a cursor, an edit before it updates the pinned values (no refresh asked for); a move too."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(4)])
    model = WatchModel()
    model.set_context(context, 2)
    model.add("†state.n")
    assert model.index(0, 1).data() == "1"
    with qtbot.waitSignal(model.dataChanged):
        context.insert(0, {"type": "state", "data": {"n": 9}})
    assert model.index(0, 1).data() == "0"
    assert model.index(0, 2).data() == "#1"
    model.set_cursor(1)
    qtbot.waitUntil(lambda: model.index(0, 1).data() == "9")  # resolved in slices after the move
    assert not model.is_busy()
    model.set_cursor(None)
    context.append({"type": "state", "data": {"n": 7}})
    assert model.index(0, 1).data() == "7"


def test_watch_model_obeys_qt_rules_and_reports_missing_and_malformed(qtmodeltester: Any) -> None:
    """A found value, a missing path and a malformed expression with its position, live after an edit."""
    context = small_context()
    model = WatchModel()
    model.set_context(context)
    model.add("†state.y.1")
    model.add("†state.z || †input.z")
    model.add("†state..a")
    qtmodeltester.check(model, force_py=True)
    assert model.index(0, 1).data() == "2"
    assert model.index(1, 1).data() == "missing †state.z, †input.z"
    assert model.index(2, 1).data().startswith("malformed:")
    assert "position 7" in model.index(2, 1).data()
    context.append({"type": "state", "data": {"z": "now"}})
    assert model.index(1, 1).data() == '"now"'


def test_a_pinned_instance_is_read_after_the_at_sign() -> None:
    """`expr @①` watches for instance ①."""
    assert parse_pin("†state.x @①") == ("†state.x", "①")
    assert parse_pin("†state.x") == ("†state.x", None)


def test_payload_goes_back_under_its_key() -> None:
    """Shorthand, `data` and loose-key payloads are written back where they were read from, order kept."""
    assert with_payload({"type": "input", "input": {"a": 1}, "schema": {}}, {"a": 2}) == \
        {"type": "input", "input": {"a": 2}, "schema": {}}
    assert list(with_payload({"type": "state", "data": 1, "_instance": "i"}, 2)) == ["type", "data", "_instance"]
    assert with_payload({"type": "note", "_instance": "i", "a": 1}, {"b": 2}) == \
        {"type": "note", "_instance": "i", "b": 2}
    assert with_payload({"type": "note", "a": 1}, {"type": 2}) == {"type": "note", "data": {"type": 2}}


def test_a_text_message_body_is_its_text() -> None:
    """For a text message the form edits the `text` string; the rest of the message stays."""
    message = {"type": "text", "role": "system", "text": "a"}
    assert Context([message]).info(0).form is Form.TEXT
    assert with_body(message, "b\nc") == {"type": "text", "role": "system", "text": "b\nc"}
    assert json.dumps(with_payload({"type": "data", "kind": "k", "x": 1}, {"y": 2})) == \
        '{"type": "data", "kind": "k", "y": 2}'
