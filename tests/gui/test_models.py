"""The thin item models over the engine: Qt's model rules hold through every kind of edit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from contextdeck.engine import Context, CursorState, Form, Insert, Move, Remove, Replace, load_document
from contextdeck.gui._message_editor._model import with_body, with_payload
from contextdeck.gui._state import ChangedRole, StateModel
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


def test_timeline_model_obeys_qt_rules_as_its_solution_is_replaced(qtmodeltester: Any) -> None:
    """The solution row follows the document's solution: comes, changes its calls, goes."""
    context = Context([{"type": "text", "text": "a"}, {"type": "plan", "plan": [{"_tool": "x"}]}])
    model = TimelineModel(context)
    qtmodeltester.check(model, force_py=True)
    for solution in ({"calls": [{"_tool": "z"}], "output": None}, {"calls": [{"_tool": "y"}, {"_tool": "w"}]},
                     {"output": {"done": True}}, None, {"calls": []}):
        model.solution_replaced(solution)
        calls = solution.get("calls") if isinstance(solution, dict) else None
        assert model.rowCount() == len(context) + (calls is not None)
        if calls is not None:
            solution_row = model.index(len(context), 0)
            assert [model.getItem(model.index(row, 0, solution_row)) for row in range(len(calls))] == calls


def test_appends_while_held_become_rows_in_one_insert_a_turn(qtbot: Any, qtmodeltester: Any) -> None:
    """While a run holds the appends, its outputs become rows together on the next turn of the event loop (one row
    insert, not one each); another edit announces them first, and the release announces what is left."""
    context = small_context()
    model = TimelineModel(context, {"calls": [{"_tool": "z"}]})
    qtmodeltester.check(model, force_py=True)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    model.pace_for_a_run(True)
    for n in range(3):
        context.append({"type": "state", "data": {"n": n}})
    assert model.rowCount() == 5  # not rows yet: the four messages and the solution row
    assert model.getItem(model.index(4, 0)) == [{"_tool": "z"}]
    qtbot.waitUntil(lambda: model.rowCount() == 8)
    assert inserted == [(4, 6)]
    assert model.getItem(model.index(6, 0)) is context[6]
    context.append({"type": "text", "text": "a"})
    context.apply(Remove(0))  # announced first, then removed
    assert inserted[-1] == (7, 7)
    assert model.rowCount() == len(context) + 1
    context.append({"type": "text", "text": "b"})
    model.pace_for_a_run(False)
    assert inserted[-1] == (7, 7)
    assert len(inserted) == 3
    assert [model.getItem(model.index(row, 0)) for row in range(len(context))] == context.messages
    context.append({"type": "text", "text": "c"})  # not held: a row at once
    assert model.rowCount() == len(context) + 1


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


def _state_rows(model: StateModel) -> list[tuple[Any, ...]]:
    """Each root's key, value, setter and highlight, as the view reads them."""
    return [(model.index(row, 0).data(), model.index(row, 1).data(), model.index(row, 2).data(),
             model.index(row, 0).data(ChangedRole)) for row in range(model.rowCount())]


def _instances_context() -> Context:
    """Six instances, each set twice: at 6 every instance has its first value, at 12 its second."""
    return Context([{"type": "state", "_instance": f"i{n % 6}", "data": {"v": n}} for n in range(12)])


def test_a_state_shown_in_parts_tells_each_part_and_ends_as_shown_at_once(qtbot: Any) -> None:
    """A state whose identities all changed is shown a few rows per part: each part tells the views of its rows
    only, which show the new state while the rest still show the previous one; the end is the state shown at
    once."""
    context = _instances_context()
    source = CursorState(context)
    model = StateModel()
    model.set_state(None, source.at(6), source, 6)
    old = _state_rows(model)
    told: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, *_: told.append((first.row(), last.row())))
    parts = model.show_in_parts(11, source.at(12), source, 12, rows=4)
    next(parts)
    assert told == [(0, 0), (1, 1), (2, 2), (3, 3)]  # a row at a time: the view repaints those rows alone
    halfway = _state_rows(model)
    assert halfway[4:] == old[4:]
    assert all(new != before for new, before in zip(halfway[:4], old[:4], strict=True))
    assert list(parts) == []
    assert told == [(row, row) for row in range(6)]
    once = StateModel()
    once.set_state(11, source.at(12), source, 12)
    assert _state_rows(model) == _state_rows(once)
    assert [row[3] for row in _state_rows(model)].count(True) == 1  # message 11 set one instance's value


def test_a_state_left_half_shown_for_a_newer_one_ends_with_the_newer_highlight(qtbot: Any) -> None:
    """A newer state (another selected message) may come before the previous one is shown whole: its rows,
    values and highlights are then those of the newer state alone."""
    context = _instances_context()
    source = CursorState(context)
    model = StateModel()
    model.set_state(3, source.at(6), source, 6)
    assert _state_rows(model)[3][3] is True
    parts = model.show_in_parts(7, source.at(12), source, 12, rows=2)
    next(parts)  # rows 0 and 1 show the state at 12 with message 7 highlighted; rows 2-5 still the one at 6
    model.set_state(2, source.at(6), source, 6)
    once = StateModel()
    once.set_state(2, source.at(6), source, 6)
    assert _state_rows(model) == _state_rows(once)
    assert [row[3] for row in _state_rows(model)] == [False, False, True, False, False, False]


def test_watches_at_a_cursor_follow_edits_and_moves_through_the_engine(qtbot: Any) -> None:
    """At a cursor, an edit before it updates the pinned values (no refresh asked for); a move too. Following the
    latest, a pin shows "…" until its live watch's first fold is done, then every edit at once."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(4)])
    model = WatchModel()
    model.set_context(context, 2)
    model.add("†state.n")
    assert model.index(0, 1).data() == "1"
    context.insert(0, {"type": "state", "data": {"n": 9}})
    qtbot.waitUntil(lambda: model.index(0, 1).data() == "0")  # resolved in a slice after the edit
    assert model.index(0, 2).data() == "#1"
    model.set_cursor(1)
    qtbot.waitUntil(lambda: model.index(0, 1).data() == "9")  # resolved in slices after the move
    assert not model.is_busy()
    model.set_cursor(None)  # following the latest: the context's own watch, its first fold in slices meanwhile
    assert model.index(0, 1).data() == "…"
    assert model.is_busy()
    context.append({"type": "state", "data": {"n": 7}})
    qtbot.waitUntil(lambda: model.index(0, 1).data() == "7")
    context.append({"type": "state", "data": {"n": 8}})
    assert model.index(0, 1).data() == "8"  # live


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


def test_moving_the_time_cursor_tells_the_rows_whose_shade_changes(qtbot: Any) -> None:
    """Rows after the cursor are the future: a cursor move tells the views every row whose look changed, and
    only the rows between the old and the new cursor (a step repaints a row, not the screen)."""
    context = Context([{"type": "text", "text": f"m{n}"} for n in range(10)])
    model = TimelineModel(context, {"calls": [{"_tool": "z"}]})
    told: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, _roles: told.append((first.row(), last.row())))

    def futures() -> list[bool]:
        return [model.index(row, 0).data(LookRole)[-1] for row in range(model.rowCount())]

    for cursor, expected in ((2, (3, 10)), (5, (3, 5)), (4, (5, 5)), (None, (5, 10)), (0, (1, 10)), (9, (1, 9))):
        before = futures()
        model.set_cursor(cursor)
        after = futures()
        assert told[-1] == expected
        changed = [row for row in range(len(after)) if after[row] != before[row]]
        assert changed == list(range(expected[0], expected[1] + 1))
        solution = after[-1]  # the solution's row is after every message
        assert solution is (cursor is not None)
        assert after[:-1] == [cursor is not None and row > cursor for row in range(len(context))]
    count = len(told)
    model.set_cursor(9)
    assert len(told) == count  # the same cursor again: nothing to repaint
