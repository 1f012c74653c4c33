"""The plan graph: calls as nodes, the state paths between them as edges, coloured by status, cycles in red."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QApplication,
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
FRAME_GAP = 4.5  # the chosen node's focus ring, this far outside its border
LAYER_GAP, ROW_GAP = 120.0, 34.0
# Zoom: fitting a big plan never shrinks it below READABLE (its text stays legible; scroll instead);
# Ctrl+wheel and Ctrl+=/- zoom between MIN_ZOOM and MAX_ZOOM, Ctrl+0 fits again.
READABLE, MIN_ZOOM, MAX_ZOOM, ZOOM_STEP = 0.85, 0.2, 4.0, 1.25
TEXT_ROLE = 0  # QGraphicsItem data key: "text" or "muted", so a theme change recolours the plain labels


def _colour(role: QPalette.ColorRole) -> QColor:
    """A colour of the application's palette (light or dark, as the theme is now)."""
    return QApplication.palette().color(role)


class CallNode(QGraphicsItem):
    """One call: its tool, number and status; a click selects the call. The selected call's node is drawn with a
    thick border (`chosen`), and a ring in the highlight colour round it while the graph has the keys."""

    def __init__(self, call: CallPlan, status: Status, in_cycle: bool, on_click: Callable[[int], None]) -> None:
        super().__init__()
        self.call, self.status, self.in_cycle = call, status, in_cycle
        self.chosen = False
        self._on_click = on_click
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        self.setToolTip(f"{call.label}: {status}" + (" · part of a cycle" if in_cycle else ""))

    def boundingRect(self) -> QRectF:
        return QRectF(-FRAME_GAP - 2, -FRAME_GAP - 2, NODE_W + 2 * FRAME_GAP + 4, NODE_H + 2 * FRAME_GAP + 4)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        colour = QColor(STATUS_COLOURS[self.status])
        fill = QColor(colour)
        fill.setAlpha(32)
        border = QColor(CYCLE_COLOUR) if self.in_cycle else colour
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border, 3.0 if self.in_cycle or self.chosen else 1.6))
        painter.setBrush(_colour(QPalette.ColorRole.Base))
        rect = QRectF(0, 0, NODE_W, NODE_H)
        view = widget.parentWidget() if widget is not None else None
        if self.chosen and view is not None and view.hasFocus():  # outside the border, which would cover it
            painter.save()
            painter.setPen(QPen(_colour(QPalette.ColorRole.Highlight), 1.6))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect.adjusted(-FRAME_GAP, -FRAME_GAP, FRAME_GAP, FRAME_GAP), 11, 11)
            painter.restore()
        painter.drawRoundedRect(rect, 8, 8)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(QRectF(0, 0, 7, NODE_H), 3, 3)
        font = QFont(painter.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(_colour(QPalette.ColorRole.Text))
        name = QFontMetrics(font).elidedText(self.call.tool_name or "(no _tool)", Qt.TextElideMode.ElideRight, 150)
        painter.drawText(QRectF(16, 6, NODE_W - 20, 22), Qt.AlignmentFlag.AlignVCenter, name)
        font.setBold(False)
        painter.setFont(font)
        painter.setPen(_colour(QPalette.ColorRole.PlaceholderText))
        painter.drawText(QRectF(NODE_W - 44, 6, 38, 22), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                         f"#{self.call.index}")
        painter.setPen(colour)
        label = str(self.status) + (f" · {self.call.instance}" if self.call.instance else "")
        painter.drawText(QRectF(16, 30, NODE_W - 20, 20), Qt.AlignmentFlag.AlignVCenter, label)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        self._on_click(self.call.index)
        event.accept()


class PlanGraphView(QGraphicsView):
    """Draws a `PlanGraph`; `callClicked(call index)` when a node is clicked, or chosen by the keys: the arrows go
    from the selected call to the next one along the data flow (Left, Right: the layer before or after, at about the
    same height) or within its layer (Up, Down); Home and End to the first and the last call drawn."""

    callClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setBackgroundBrush(QBrush(_colour(QPalette.ColorRole.Window)))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.graph: PlanGraph | None = None
        # The keys' map of the graph drawn (`_next`): its layers that hold calls, and each call's (layer, row).
        self._layers: list[Sequence[int]] = []
        self._where: dict[int, tuple[int, int]] = {}
        self.note = ""  # what the scene says while there are no calls
        self.nodes: dict[int, CallNode] = {}
        self._legend_items: list[QGraphicsItem] = []
        self.redraws = 0  # whole layouts drawn, and nodes repainted for a new status (tests, benchmarks)
        self.repainted = 0
        self.edge_items: list[tuple[Edge, QGraphicsPathItem]] = []
        self._zoomed = False  # the user chose a zoom: keep it (until Ctrl+0) instead of fitting on resize
        self.chosen: int | None = None  # the selected call (`choose`), drawn and moved from by the keys
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        zooms: list[tuple[str, str, list[QKeySequence], Callable[[], None]]] = [
            ("zoom_in", "Zoom In", [QKeySequence(QKeySequence.StandardKey.ZoomIn), QKeySequence("Ctrl+=")],
             self.zoom_in),
            ("zoom_out", "Zoom Out", [QKeySequence(QKeySequence.StandardKey.ZoomOut), QKeySequence("Ctrl+-")],
             self.zoom_out),
            ("zoom_fit", "Fit the Plan", [QKeySequence("Ctrl+0")], self.zoom_fit),
        ]
        for name, text, keys, run in zooms:
            action = QAction(text, self)
            action.setObjectName(name)
            # The platform's zoom keys and the ones people type (Ctrl+= is Ctrl++ without Shift); once each.
            action.setShortcuts(list(dict.fromkeys(keys)))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(run)
            self.addAction(action)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

    def show_plan(self, calls: Sequence[CallPlan], statuses: Sequence[Status], note: str = "") -> None:
        """Lay out `calls` left to right by data flow, each with its status (the engine's); without calls, `note`
        says why (the calls panel's words).

        The same calls with new statuses repaint only the nodes whose status changed (and the legend when
        the set of statuses did): a run moves statuses on at every step, the layout stays.
        """
        drawn = [node.call.call for node in sorted(self.nodes.values(), key=lambda n: n.call.index)]
        if self.graph is not None and len(drawn) == len(calls) and drawn == [c.call for c in calls] and \
                (calls or note == self.note):
            self._update_statuses(calls, statuses)
            return
        self.note = "" if calls else note
        self.redraws += 1
        scene = self.scene()
        scene.clear()
        self.nodes.clear()
        self.edge_items.clear()
        graph = self.graph = plan_graph(calls)
        self._layers = [layer for layer in graph.layers if layer]
        self._where = {node: (column, row) for column, layer in enumerate(self._layers)
                       for row, node in enumerate(layer)}
        by_index = {c.index: c for c in calls}
        for column, layer in enumerate(graph.layers):
            for row, node in enumerate(layer):
                item = CallNode(by_index[node], statuses[node], graph.in_cycle(node), self.callClicked.emit)
                item.setPos(column * (NODE_W + LAYER_GAP), row * (NODE_H + ROW_GAP))
                item.chosen = node == self.chosen
                scene.addItem(item)
                self.nodes[node] = item
        ports = self._ports(graph.edges)
        for edge in graph.edges:
            self._add_edge(edge, graph.edge_in_cycle(edge), ports[edge])
        if not calls:
            text = scene.addSimpleText(note)
            text.setData(TEXT_ROLE, "muted")
            text.setBrush(_colour(QPalette.ColorRole.PlaceholderText))
        else:
            self._legend([statuses[n] for n in graph.nodes], bool(graph.cycles))
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-30, -30, 30, 30))
        self.fit()

    def _update_statuses(self, calls: Sequence[CallPlan], statuses: Sequence[Status]) -> None:
        legend_before = {node.status for node in self.nodes.values()}
        for call in calls:
            node = self.nodes[call.index]
            node.call = call
            if node.status != statuses[call.index]:
                node.status = statuses[call.index]
                node.setToolTip(f"{call.label}: {node.status}" + (" · part of a cycle" if node.in_cycle else ""))
                node.update()
                self.repainted += 1
        if {node.status for node in self.nodes.values()} != legend_before:
            for item in self._legend_items:
                self.scene().removeItem(item)
            assert self.graph is not None
            self._legend([statuses[n] for n in self.graph.nodes], bool(self.graph.cycles))

    def _legend(self, statuses: list[Status], cycle: bool) -> None:
        """A key under the graph: the colours of the statuses shown, and the cycle's red."""
        entries = [(str(s), QColor(STATUS_COLOURS[s])) for s in dict.fromkeys(statuses)]
        if cycle:
            entries.append(("cycle (refused: nothing runs until it is broken)", QColor(CYCLE_COLOUR)))
        y = self.scene().itemsBoundingRect().bottom() + 24
        x = 0.0
        self._legend_items = []
        for text, colour in entries:
            dot = self.scene().addEllipse(x, y + 3, 10, 10, QPen(colour), QBrush(colour))
            label = self.scene().addSimpleText(text)
            self._legend_items += [dot, label]
            label.setData(TEXT_ROLE, "text")
            label.setBrush(_colour(QPalette.ColorRole.Text))
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

    def choose(self, call: int | None) -> None:
        """Draw `call` (the Calls panel's selected call) as the selected one, in sight."""
        for index in (self.chosen, call):
            node = self.nodes.get(index) if index is not None else None
            if node is not None:
                node.chosen = index == call
                node.update()
        self.chosen = call
        node = self.nodes.get(call) if call is not None else None
        if node is not None:
            self.ensureVisible(node, 20, 20)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        moved = self._next(Qt.Key(event.key())) if not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier \
            else None
        if moved is None:
            super().keyPressEvent(event)
            return
        event.accept()
        self.choose(moved)
        self.callClicked.emit(moved)

    def _next(self, key: Qt.Key) -> int | None:
        """The call the key goes to from the chosen one (from none: the first); None when the key does not move."""
        layers, where = self._layers, self._where
        moves = (Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home, Qt.Key.Key_End,
                 Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
        if not layers or key not in moves:
            return None
        if key == Qt.Key.Key_End:
            return layers[-1][-1]
        if self.chosen not in where or key == Qt.Key.Key_Home:
            return layers[0][0]
        column, row = where[self.chosen]
        if key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            column = min(max(column + (1 if key == Qt.Key.Key_Right else -1), 0), len(layers) - 1)
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            row += 1 if key == Qt.Key.Key_Down else -1
        layer = layers[column]
        return layer[min(max(row, 0), len(layer) - 1)]

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self._frame_chosen()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._frame_chosen()

    def _frame_chosen(self) -> None:
        node = self.nodes.get(self.chosen) if self.chosen is not None else None
        if node is not None:
            node.update()

    def fit(self) -> None:
        """Show the whole plan at its natural size, shrinking a large one but never below `READABLE`
        (scroll to see the rest) and never blowing a small one up. A zoom the user chose is kept."""
        if self._zoomed:
            return
        rect = self.scene().sceneRect()
        view = self.viewport().rect()
        scale = min(1.0, view.width() / max(rect.width(), 1.0), view.height() / max(rect.height(), 1.0))
        self._set_zoom(max(scale, READABLE))
        for bar in (self.horizontalScrollBar(), self.verticalScrollBar()):  # too big to fit: from its start
            bar.setValue(bar.minimum())

    def zoom(self) -> float:
        """The scale the plan is drawn at (1.0: natural size)."""
        return float(self.transform().m11())

    def zoom_by(self, factor: float) -> None:
        self._zoomed = True
        self._set_zoom(self.zoom() * factor)

    def zoom_in(self) -> None:
        self.zoom_by(ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom_by(1 / ZOOM_STEP)

    def zoom_fit(self) -> None:
        """Back to the default: the whole plan, as large as fits but readable (Ctrl+0)."""
        self._zoomed = False
        self.fit()

    def _set_zoom(self, scale: float) -> None:
        scale = min(max(scale, MIN_ZOOM), MAX_ZOOM)
        self.setTransform(QTransform.fromScale(scale, scale))

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom_by(ZOOM_STEP ** (event.angleDelta().y() / 120))
            event.accept()
        else:
            super().wheelEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()

    def changeEvent(self, event: QEvent) -> None:
        # The theme changed (View → Theme, or the system's scheme): the background and the plain labels
        # follow; the nodes read the palette whenever they paint.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.setBackgroundBrush(QBrush(_colour(QPalette.ColorRole.Window)))
            roles = {"text": QPalette.ColorRole.Text, "muted": QPalette.ColorRole.PlaceholderText}
            for item in self.scene().items():
                role = roles.get(str(item.data(TEXT_ROLE)))
                if role is not None and isinstance(item, QGraphicsSimpleTextItem):
                    item.setBrush(_colour(role))
            self.scene().update()
        super().changeEvent(event)


def _point_at_x(path: QPainterPath, x: float) -> QPointF:
    """The point of a left-to-right path whose x is nearest `x` (sampled: edges are short curves)."""
    samples = (path.pointAtPercent(step / 40) for step in range(41))
    return min(samples, key=lambda point: abs(point.x() - x))
