"""The window shows the engine's truth: random edits, undos and cursor moves through the real window, and
after each one the state view's rows, the pinned watches and the calls panel's statuses equal what
`Context.resolve`, `Context.blame` and a fresh `Execution` say (issue 11, "Done when")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QSettings

from contextdeck.engine import MISSING, Context, Execution, Insert, Move, Remove, Replace, get_path
from contextdeck.gui._app import create_window
from contextdeck.gui._state import NodeRole, SourceRole, StateNode
from contextdeck.gui._window import MainWindow

SEGMENTS = ("a", "b", "0")
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["x", "y"]))
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=2), st.dictionaries(st.sampled_from(SEGMENTS), children,
                                                                              max_size=2)),
    max_leaves=4,
)
TOOL = {"type": "tool", "tool": {
    "w": {"type": "object", "properties": {"_outputPath": {"enum": ["†state.a", "†state.b"]}}},
    "r": {"type": "object", "properties": {"x": {"type": "integer"}}},
}}
PINS = (("†state.a", None), ("†state.b || †state.a", None), ("†state.a.b", "p1"), ("†state", "p1"),
        ("†input.a && †state.b", None), ("†state..", None))


@st.composite
def writes(draw: st.DrawFn) -> dict[str, Any]:
    """A data message of `state` or `input`, global or of instance p1, any method, at a short path."""
    kind = draw(st.sampled_from(("state", "state", "input")))
    path = draw(st.lists(st.sampled_from(SEGMENTS), max_size=2))
    method = draw(st.sampled_from((None, "set", "merge", "assign", "push", "concat")))
    value = draw(values)
    for segment in reversed(path):
        value = {segment: value}
    message: dict[str, Any] = {"type": kind, "data" if kind == "state" else "input": value}
    if path or method is not None:
        message["_outputPath"] = "†" + ".".join((kind, *path))
    if method is not None:
        message["_outputMethod"] = method
    if draw(st.booleans()):
        message["_instance"] = "p1"
    return message


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    """A plan whose calls read and write state paths: ready, blocked, failed (the tool's enum), cycles."""
    calls = []
    for tool in draw(st.lists(st.sampled_from(("w", "r", "z")), min_size=1, max_size=3)):
        call: dict[str, Any] = {"_tool": tool}
        if draw(st.booleans()):
            call["x"] = draw(st.sampled_from(("†state.a", "†state.b", "†state.c", "†state.approvals.ok", 3)))
        if draw(st.booleans()):
            call["_outputPath"] = draw(st.sampled_from(("†state.a", "†state.b", "†state.c")))
        if draw(st.booleans()):
            call["_output"] = 1
        calls.append(call)
    return {"type": "plan", "plan": calls}


messages = st.one_of(writes(), writes(), writes(), plans(), st.just(TOOL), st.just({"type": "text", "text": "hi"}))


@st.composite
def actions(draw: st.DrawFn, size: int) -> tuple[str, Any]:
    """What a user does: an edit (through the undo stack), undo, a click on a message, Follow latest."""
    choice = draw(st.sampled_from(("insert", "remove", "replace", "move", "undo", "select", "follow")))
    if size == 0 or choice == "insert":
        return "edit", Insert(draw(st.integers(0, size)), draw(messages))
    index = st.integers(0, size - 1)
    if choice == "remove":
        return "edit", Remove(draw(index))
    if choice == "replace":
        return "edit", Replace(draw(index), draw(messages))
    if choice == "move":
        return "edit", Move(draw(index), draw(index))
    if choice == "select":
        return "select", draw(index)
    return choice, draw(st.booleans())


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> MainWindow:
    win = create_window(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), tmp_path / "recovery")
    qtbot.addWidget(win)
    win.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    win.show()
    for expression, instance in PINS:
        win.watches.model.add(expression + (f" @{instance}" if instance else ""))
    yield win
    win.session.close()


def _json(value: Any) -> str:
    return "(missing)" if value is MISSING else json.dumps(value, sort_keys=True)


def _resolution(result: Any) -> tuple[Any, ...]:
    return (result.found, _json(result.value) if result.found else None, tuple(result.sources))


def disagreements(window: MainWindow) -> list[str]:
    """Where a view differs from the engine at the window's cursor (empty when they agree)."""
    context, at = window.context(), window.at()
    found: list[str] = []
    model = window.state_view.state_model
    identities = context.identities(at)
    rows = [model.index(row, 0).data(NodeRole) for row in range(model.rowCount())]
    if [(n.kind, n.instance) for n in rows] != identities:
        return [f"state rows {[(n.kind, n.instance) for n in rows]} != identities {identities}"]
    for row, node in enumerate(rows):
        found += _node_disagreements(context, at, model.index(row, 0), node)
        model.fetchMore(model.index(row, 0))  # its rows, as when it is shown open
        for child in range(model.rowCount(model.index(row, 0))):
            index = model.index(child, 0, model.index(row, 0))
            found += _node_disagreements(context, at, index, index.data(NodeRole))
    for pin in window.watches.model.pins:
        try:
            expected = context.resolve(pin.expression, pin.instance, at)
        except ValueError:
            if pin.error is None:
                found.append(f"watch {pin.label}: malformed, shown as {pin.resolution}")
            continue
        if pin.resolution is None or _resolution(pin.resolution) != _resolution(expected):
            found.append(f"watch {pin.label}: {pin.resolution} != {expected}")
    calls = window.inspector.model  # type: ignore[attr-defined]
    execution = Execution(context, window.session.document.solution)
    shown = [(calls.status(row), calls.getItem(row).waiting_for) for row in range(calls.rowCount())]
    truth = [(state.status, state.waiting_for) for state in execution.states]
    if shown != truth:
        found.append(f"calls {shown} != Execution {truth}")
    return found


def _node_disagreements(context: Context, at: int | None, index: Any, node: StateNode) -> list[str]:
    if node.value is MISSING:  # "… N more"
        return []
    expression = "†" + ".".join((node.kind, *node.path))
    whole = context.resolve(f"†{node.kind}", node.instance, at).value
    value = get_path(whole, node.path)
    if _json(value) != _json(node.value):
        return [f"{node.key}: shows {node.value!r}, the engine has {value!r}"]
    blame = context.blame(expression, node.instance, at) if all(s.isidentifier() or s.isdigit()
                                                               for s in node.path) else None
    if blame is not None and blame.entries and index.siblingAtColumn(2).data(SourceRole) != blame.entries[-1].index:
        return [f"{node.key}: set by #{index.siblingAtColumn(2).data(SourceRole)}, blame says "
                f"#{blame.entries[-1].index}"]
    return []


def settle(qtbot: Any, window: MainWindow) -> None:
    """Wait until every view has caught up (debounced refreshes, slices) and agrees, else fail with the diff."""
    try:
        qtbot.waitUntil(lambda: not disagreements(window), timeout=5000)
    except AssertionError:
        pytest.fail("\n".join(disagreements(window)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(messages, max_size=8), st.data())
def test_every_view_equals_the_engine_after_random_edits(
    qtbot: Any, window: MainWindow, tmp_path: Path, document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """State rows (value and "set by"), watch values and calls statuses equal resolve, blame and Execution."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)
    settle(qtbot, window)
    for _ in range(data.draw(st.integers(1, 5))):
        action, argument = data.draw(actions(len(window.context())))
        if action == "edit":
            window.apply_edit(argument)
        elif action == "undo":
            window.session.undo_stack.undo()
        elif action == "select":
            window.set_follow_latest(False)
            window.select_message(argument)
        else:
            window.set_follow_latest(argument)
        settle(qtbot, window)
