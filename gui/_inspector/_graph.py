"""The plan graph: calls as nodes, the state paths between them as edges, coloured by status, cycles in red."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSceneMouseEvent,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from contextdeck.engine import CallPlan, Status

from ._plan import Edge, PlanGraph, plan_graph
from ._style import CYCLE_COLOUR, STATUS_COLOURS

NODE_W, NODE_H = 190.0, 58.0
LAYER_GAP, ROW_GAP = 120.0, 34.0


class CallNode(QGraphicsItem):
    """One call: its tool, number and status; a click selects the call."""

    def __init__(self, call: CallPlan, status: Status, in_cycle: bool, on_click: Callable[[int], None]) -> None:
        super().__init__()
        self.call, self.status, self.in_cycle = call, status, in_cycle
        self._on_click = on_click
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        self.setToolTip(f"{call.label}: {status}" + (" · part of a cycle" if in_cycle else ""))

    def boundingRect(self) -> QRectF:
        return QRectF(-2, -2, NODE_W + 4, NODE_H + 4)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        colour = QColor(STATUS_COLOURS[self.status])
        fill = QColor(colour)
        fill.setAlpha(32)
        border = QColor(CYCLE_COLOUR) if self.in_cycle else colour
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border, 3.0 if self.in_cycle or self.isSelected() else 1.6))
        painter.setBrush(QColor("white"))
        rect = QRectF(0, 0, NODE_W, NODE_H)
        painter.drawRoundedRect(rect, 8, 8)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(QRectF(0, 0, 7, NODE_H), 3, 3)
        font = QFont(painter.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#1d2733"))
        name = QFontMetrics(font).elidedText(self.call.tool_name or "(no _tool)", Qt.TextElideMode.ElideRight, 150)
        painter.drawText(QRectF(16, 6, NODE_W - 20, 22), Qt.AlignmentFlag.AlignVCenter, name)
        font.setBold(False)
        painter.setFont(font)
        painter.setPen(QColor("#6b7f8e"))
        painter.drawText(QRectF(NODE_W - 44, 6, 38, 22), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                         f"#{self.call.index}")
        painter.setPen(colour)
        label = str(self.status) + (f" · {self.call.instance}" if self.call.instance else "")
        painter.drawText(QRectF(16, 30, NODE_W - 20, 20), Qt.AlignmentFlag.AlignVCenter, label)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        self._on_click(self.call.index)
        event.accept()


class PlanGraphView(QGraphicsView):
    """Draws a `PlanGraph`; `callClicked(call index)` when a node is clicked."""

    callClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setBackgroundBrush(QBrush(QColor("#f6f8fa")))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.graph: PlanGraph | None = None
        self.nodes: dict[int, CallNode] = {}
        self.edge_items: list[tuple[Edge, QGraphicsPathItem]] = []

    def show_plan(self, calls: Sequence[CallPlan], statuses: Sequence[Status]) -> None:
        """Lay out `calls` left to right by data flow, each with its status (the engine's)."""
        scene = self.scene()
        scene.clear()
        self.nodes.clear()
        self.edge_items.clear()
        graph = self.graph = plan_graph(calls)
        by_index = {c.index: c for c in calls}
        for column, layer in enumerate(graph.layers):
            for row, node in enumerate(layer):
                item = CallNode(by_index[node], statuses[node], graph.in_cycle(node), self.callClicked.emit)
                item.setPos(column * (NODE_W + LAYER_GAP), row * (NODE_H + ROW_GAP))
                scene.addItem(item)
                self.nodes[node] = item
        ports = self._ports(graph.edges)
        for edge in graph.edges:
            self._add_edge(edge, graph.edge_in_cycle(edge), ports[edge])
        if not calls:
            text = scene.addSimpleText("No calls: the document has no solution and no plan message.")
            text.setBrush(QColor("#6b7f8e"))
        else:
            self._legend([statuses[n] for n in graph.nodes], bool(graph.cycles))
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-30, -30, 30, 30))
        self.fit()

    def _legend(self, statuses: list[Status], cycle: bool) -> None:
        """A key under the graph: the colours of the statuses shown, and the cycle's red."""
        entries = [(str(s), QColor(STATUS_COLOURS[s])) for s in dict.fromkeys(statuses)]
        if cycle:
            entries.append(("cycle (refused: nothing runs until it is broken)", QColor(CYCLE_COLOUR)))
        y = self.scene().itemsBoundingRect().bottom() + 24
        x = 0.0
        for text, colour in entries:
            self.scene().addEllipse(x, y + 3, 10, 10, QPen(colour), QBrush(colour))
            label = self.scene().addSimpleText(text)
            label.setBrush(QColor("#4a5866"))
            label.setPos(x + 16, y)
            x += 16 + label.boundingRect().width() + 22

    def _ports(self, edges: Sequence[Edge]) -> dict[Edge, tuple[float, float]]:
        """Where each edge leaves its source and enters its target (y offsets), spread so edges never share one."""
        outgoing: dict[int, list[Edge]] = {}
        incoming: dict[int, list[Edge]] = {}
        for edge in edges:
            outgoing.setdefault(edge.source, []).append(edge)
            incoming.setdefault(edge.target, []).append(edge)

        def spread(group: list[Edge], other: Callable[[Edge], int]) -> dict[Edge, float]:
            group = sorted(group, key=lambda e: (self.nodes[other(e)].pos().y(), self.nodes[other(e)].pos().x()))
            step = NODE_H / (len(group) + 1)
            return {edge: step * (i + 1) for i, edge in enumerate(group)}

        out_y = {e: y for group in outgoing.values() for e, y in spread(group, lambda e: e.target).items()}
        in_y = {e: y for group in incoming.values() for e, y in spread(group, lambda e: e.source).items()}
        return {edge: (out_y[edge], in_y[edge]) for edge in edges}

    def _add_edge(self, edge: Edge, in_cycle: bool, ports: tuple[float, float]) -> None:
        source, target = self.nodes[edge.source], self.nodes[edge.target]
        colour = QColor(CYCLE_COLOUR if in_cycle else "#7a8b99")
        start = source.pos() + QPointF(NODE_W, ports[0])
        end = target.pos() + QPointF(0, ports[1])
        backwards = end.x() <= start.x()
        path = QPainterPath(start)
        if backwards:  # the edge that closes a cycle: around, below both nodes
            drop = max(start.y(), end.y()) + NODE_H / 2 + 26
            path.cubicTo(start + QPointF(50, 0), QPointF(start.x() + 50, drop), QPointF(start.x(), drop))
            path.lineTo(QPointF(end.x(), drop))
            path.cubicTo(QPointF(end.x() - 50, drop), end - QPointF(50, 0), end)
        else:
            bend = (end.x() - start.x()) / 2
            path.cubicTo(start + QPointF(bend, 0), end - QPointF(bend, 0), end)
        item = QGraphicsPathItem(path)
        item.setPen(QPen(colour, 2.4 if in_cycle else 1.6))
        item.setZValue(-1)
        item.setToolTip(f"#{edge.source} writes {edge.path}, which #{edge.target} reads")
        self.scene().addItem(item)
        head = QPainterPath(end)
        head.lineTo(end + QPointF(-9, -5))
        head.lineTo(end + QPointF(-9, 5))
        head.closeSubpath()
        arrow = self.scene().addPath(head, QPen(colour), QBrush(colour))
        arrow.setZValue(-1)
        label = QGraphicsSimpleTextItem(edge.path)
        label.setBrush(colour)
        # In the gap before the target, so a label never sits on a node the edge passes by.
        anchor = _point_at_x(path, end.x() - LAYER_GAP / 2) if not backwards else path.pointAtPercent(0.5)
        label.setPos(anchor + QPointF(-label.boundingRect().width() / 2, -18))
        self.scene().addItem(label)
        self.edge_items.append((edge, item))

    def fit(self) -> None:
        """Show the whole plan, shrinking a large one but never blowing a small one up."""
        self.resetTransform()
        rect = self.scene().sceneRect()
        view = self.viewport().rect()
        if rect.width() > view.width() or rect.height() > view.height():
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()


def _point_at_x(path: QPainterPath, x: float) -> QPointF:
    """The point of a left-to-right path whose x is nearest `x` (sampled: edges are short curves)."""
    samples = (path.pointAtPercent(step / 40) for step in range(41))
    return min(samples, key=lambda point: abs(point.x() - x))
