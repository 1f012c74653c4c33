"""The plan graph: calls as nodes, the paths between them as edges, statuses as colours, cycles in red."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette, QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem

from contextdeck.engine import CallPlan, Context, Execution, Status, load_document
from contextdeck.gui._inspector._graph import FRAME_GAP, NODE_H, NODE_W, READABLE, ZOOM_STEP, PlanGraphView
from contextdeck.gui._inspector._plan import plan_graph
from contextdeck.gui._inspector._style import CYCLE_COLOUR, STATUS_COLOURS
from contextdeck.gui._theme import apply_theme

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



def _refund_graph(qtbot: Any, examples: Path, width: int, height: int) -> PlanGraphView:
    """The refund example's plan graph, shown in a view of `width` × `height`."""
    execution = Execution(load_document(examples / "refund_workflow.json"))
    view = PlanGraphView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    view.show_plan(execution.plans, [state.status for state in execution.states])
    return view

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
    view = _refund_graph(qtbot, examples, 900, 500)
    node = view.nodes[2]
    point = view.mapFromScene(node.sceneBoundingRect().center())
    with qtbot.waitSignal(view.callClicked) as clicked:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert clicked.args == [2]


def test_the_keys_choose_a_node_as_a_click_does(qtbot: Any, examples: Path) -> None:
    """Nodes were chosen by the mouse only. With the graph's focus, the first arrow chooses the first call; Down and
    Up go through a layer, Right and Left along the data flow (to the layer's nearest row), Home and End to the
    first and last call, Enter the chosen one again: each emits the call as a click does, draws it chosen (the
    others not) and scrolls it into sight. Ctrl+arrows stay the view's."""
    view = _refund_graph(qtbot, examples, 240, 120)  # less than a layer: the chosen node must be scrolled to
    assert view.graph is not None
    assert view.graph.layers == ((0, 1, 3, 4), (2,))
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    emitted: list[int] = []
    view.callClicked.connect(emitted.append)
    keys = [Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Right, Qt.Key.Key_Left, Qt.Key.Key_Up,
            Qt.Key.Key_End, Qt.Key.Key_Home, Qt.Key.Key_Return, Qt.Key.Key_Up]
    for key in keys:
        qtbot.keyClick(view, key)
        chosen = emitted[-1]
        assert [index for index, node in view.nodes.items() if node.chosen] == [chosen]
        centre = view.mapFromScene(view.nodes[chosen].sceneBoundingRect().center())
        assert view.viewport().rect().contains(centre), (key, chosen)
    assert emitted == [0, 1, 3, 2, 0, 0, 2, 0, 0, 0]
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert len(emitted) == len(keys)
    view.choose(3)  # the Calls panel's selection
    assert [index for index, node in view.nodes.items() if node.chosen] == [3]
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert emitted[-1] == 2


def test_the_chosen_node_has_a_ring_while_the_graph_has_the_keys(qtbot: Any, examples: Path) -> None:
    """The chosen node's frame for the keys was drawn under its thick border, unseen (screenshot at 100k): a ring in
    the highlight colour outside the border, there while the graph has the focus, gone without it."""
    view = _refund_graph(qtbot, examples, 900, 500)
    view.choose(0)
    left, middle = view.nodes[0].pos().x(), view.nodes[0].pos().y() + NODE_H / 2  # the node's own left edge
    background = QApplication.palette().color(QPalette.ColorRole.Window).lightness()

    def ring() -> int:
        """How far the darkest pixel just outside the node's left edge is from the background."""
        return max(abs(pixel_lightness(view, QPointF(left - FRAME_GAP + dx, middle)) - background)
                   for dx in (-1.5, -0.5, 0.5, 1.5))

    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    assert ring() > 40
    view.clearFocus()
    qtbot.waitUntil(lambda: not view.hasFocus())
    assert ring() < 10


@pytest.fixture
def refund_graph(qtbot: Any, examples: Path) -> Iterator[PlanGraphView]:
    """The refund plan's graph in a view as small as the docked pane at its default size."""
    view = _refund_graph(qtbot, examples, 560, 160)
    yield view
    apply_theme("light")


def pixel_lightness(view: PlanGraphView, scene_point: QPointF) -> int:
    image = view.grab().toImage()
    point = view.mapFromScene(scene_point)
    return QColor(image.pixel(point.x() + view.viewport().x(), point.y() + view.viewport().y())).lightness()


def test_the_graph_follows_the_dark_theme(qtbot: Any, refund_graph: PlanGraphView) -> None:
    """Switching to the dark theme turns the background and the inside of the nodes dark, and back."""
    node = refund_graph.nodes[0]
    inside = node.mapToScene(QPointF(NODE_W - 30, NODE_H - 8))  # inside the node, away from its text
    apply_theme("dark")
    qtbot.waitUntil(lambda: refund_graph.backgroundBrush().color().lightness() < 80)
    assert pixel_lightness(refund_graph, inside) < 80
    legend = [item for item in refund_graph.scene().items() if isinstance(item, QGraphicsSimpleTextItem)
              and item.data(0) == "text"]
    assert legend
    assert all(item.brush().color().lightness() > 160 for item in legend)  # light text on the dark ground
    apply_theme("light")
    qtbot.waitUntil(lambda: refund_graph.backgroundBrush().color().lightness() > 200)
    assert pixel_lightness(refund_graph, inside) > 200


def test_the_graph_is_readable_at_its_default_size_and_zooms(qtbot: Any, refund_graph: PlanGraphView) -> None:
    """At the pane's default size the plan is not shrunk to illegible text; Ctrl+=, Ctrl+-, Ctrl+wheel zoom,
    Ctrl+0 fits again; a chosen zoom survives a resize."""
    default = refund_graph.zoom()
    assert default >= READABLE
    assert QFontMetrics(refund_graph.font()).height() * default >= 11  # pixels of a line of text (was 6)
    refund_graph.setFocus()
    qtbot.keyClick(refund_graph, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert refund_graph.zoom() == pytest.approx(default * ZOOM_STEP)
    qtbot.keyClick(refund_graph, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(refund_graph, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert refund_graph.zoom() == pytest.approx(default / ZOOM_STEP)
    refund_graph.resize(600, 200)
    assert refund_graph.zoom() == pytest.approx(default / ZOOM_STEP)
    centre = QPointF(refund_graph.viewport().rect().center())
    wheel = QWheelEvent(centre, refund_graph.viewport().mapToGlobal(centre), QPoint(), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.ControlModifier, Qt.ScrollPhase.NoScrollPhase,
                        False)
    QApplication.sendEvent(refund_graph.viewport(), wheel)
    assert refund_graph.zoom() == pytest.approx(default * ZOOM_STEP)
    qtbot.keyClick(refund_graph, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert refund_graph.zoom() == pytest.approx(refund_graph_fit(refund_graph))


def refund_graph_fit(view: PlanGraphView) -> float:
    """The zoom `fit` chooses for the view's size now."""
    rect, size = view.scene().sceneRect(), view.viewport().rect()
    return max(min(1.0, size.width() / rect.width(), size.height() / rect.height()), READABLE)
