"""The plan graph: calls as nodes, the paths between them as edges, statuses as colours, cycles in red."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from contextdeck.engine import CallPlan, Context, Execution, Status, load_document
from contextdeck.gui._inspector._graph import PlanGraphView
from contextdeck.gui._inspector._plan import plan_graph
from contextdeck.gui._inspector._style import CYCLE_COLOUR, STATUS_COLOURS

CYCLE = [{"_tool": "a", "x": "†state.p", "_outputPath": "†state.q"},
         {"_tool": "b", "x": "†state.q.deep", "_outputPath": "†state.p"},
         {"_tool": "c", "x": "†state.q", "_outputPath": "†state.r"}]


def plans(context: Context, solution: Any = None) -> list[CallPlan]:
    return Execution(context, solution).plans


def test_edges_follow_paths_parents_and_children() -> None:
    """A write at †state.q feeds reads of †state.q.deep (a child) and of †state.q; the cycle a↔b is found."""
    calls = plans(Context([{"type": "plan", "plan": CYCLE}]))
    graph = plan_graph(calls)
    assert {(e.source, e.target) for e in graph.edges} == {(0, 1), (1, 0), (0, 2)}
    assert graph.cycles == ((0, 1),)
    assert graph.layers == ((0,), (1, 2))


def test_instanced_writes_feed_only_their_instance() -> None:
    """A call of instance ① writing †state.v does not feed a call of instance ② reading it."""
    plan = [{"_tool": "w", "_instance": "①", "_outputPath": "†state.v"},
            {"_tool": "r", "_instance": "②", "x": "†state.v"},
            {"_tool": "r", "_instance": "①", "x": "†state.v"}]
    calls = plans(Context([{"type": "plan", "plan": plan}]))
    assert [(e.source, e.target) for e in plan_graph(calls).edges] == [(0, 2)]


def test_nodes_are_coloured_by_status_and_cycles_red(qtbot: Any) -> None:
    """Each node carries its call's status colour; nodes and edges of a cycle are drawn red."""
    calls = plans(Context([{"type": "plan", "plan": CYCLE}]))
    view = PlanGraphView()
    qtbot.addWidget(view)
    view.show_plan(calls, [Status.BLOCKED, Status.BLOCKED, Status.DONE])
    assert set(view.nodes) == {0, 1, 2}
    assert view.nodes[0].in_cycle
    assert not view.nodes[2].in_cycle
    assert view.nodes[2].status is Status.DONE
    pens = {(e.source, e.target): item.pen().color() for e, item in view.edge_items}
    assert pens[(0, 1)] == QColor(CYCLE_COLOUR)
    assert pens[(0, 2)] != QColor(CYCLE_COLOUR)
    assert STATUS_COLOURS[Status.DONE] != CYCLE_COLOUR


def test_clicking_a_node_selects_its_call(qtbot: Any, examples: Path) -> None:
    """A click on checkEligibility's node emits its call index."""
    document = load_document(examples / "refund_workflow.json")
    execution = Execution(document)
    view = PlanGraphView()
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    view.show_plan(execution.plans, [state.status for state in execution.states])
    node = view.nodes[2]
    point = view.mapFromScene(node.sceneBoundingRect().center())
    with qtbot.waitSignal(view.callClicked) as clicked:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert clicked.args == [2]
