"""The plan as a graph (SPEC 6.9): a call that writes P feeds every call that reads P, a parent or a child of P.

Qt-free (it belongs in the engine beside the scheduler's cycle check): edges, cycles and a layered layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextdeck.engine import Reference

from ._analysis import CallAnalysis


@dataclass(frozen=True)
class Edge:
    """`source` may write `paths`, which `target` reads (the reader's references, as the engine names them)."""

    source: int
    target: int
    paths: tuple[str, ...]

    @property
    def path(self) -> str:
        return ", ".join(self.paths)


@dataclass(frozen=True)
class PlanGraph:
    """Nodes are call indices; `cycles` are the strongly connected groups of more than one call."""

    nodes: tuple[int, ...]
    edges: tuple[Edge, ...]
    cycles: tuple[tuple[int, ...], ...]
    layers: tuple[tuple[int, ...], ...]

    def in_cycle(self, node: int) -> bool:
        return any(node in cycle for cycle in self.cycles)

    def edge_in_cycle(self, edge: Edge) -> bool:
        return any(edge.source in cycle and edge.target in cycle for cycle in self.cycles)

    @property
    def feeders(self) -> dict[int, dict[int, tuple[str, ...]]]:
        """For each call, the calls that feed it and the paths they may write (the engine's `Graph.feeders`)."""
        found: dict[int, dict[int, tuple[str, ...]]] = {node: {} for node in self.nodes}
        for edge in self.edges:
            found[edge.target][edge.source] = edge.paths
        return found


def _related(a: Reference, b: Reference) -> bool:
    """Same kind, and one path is a prefix of the other (the same path, a parent or a child)."""
    if a.kind != b.kind:
        return False
    shorter = min(len(a.path), len(b.path))
    return a.path[:shorter] == b.path[:shorter]


def _sees(writer: CallAnalysis, reader: CallAnalysis) -> bool:
    """A global write is seen by every instance; an instance's write only by calls of that instance."""
    return writer.instance is None or writer.instance == reader.instance


def plan_graph(calls: Sequence[CallAnalysis]) -> PlanGraph:
    """The data-flow graph of the calls, its cycles, and layers for drawing (cycles share a layer)."""
    edges: list[Edge] = []
    for writer in calls:
        for reader in calls:
            if writer.index == reader.index or not _sees(writer, reader):
                continue  # a call reading what it writes reads the value before its own write: no cycle
            hits = [str(r) for r in reader.reads if any(_related(w, r) for w in writer.writes)]
            if hits:
                edges.append(Edge(writer.index, reader.index, tuple(dict.fromkeys(hits))))
    nodes = tuple(c.index for c in calls)
    cycles = _cycles(nodes, edges)
    return PlanGraph(nodes, tuple(edges), cycles, _layers(nodes, edges, cycles))


def _cycles(nodes: tuple[int, ...], edges: list[Edge]) -> tuple[tuple[int, ...], ...]:
    """Tarjan's strongly connected components with more than one node, each sorted, in plan order."""
    successors: dict[int, list[int]] = {n: [] for n in nodes}
    for edge in edges:
        successors[edge.source].append(edge.target)
    index_of: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    found: list[tuple[int, ...]] = []

    def visit(node: int) -> None:
        index_of[node] = low[node] = len(index_of)
        stack.append(node)
        on_stack.add(node)
        for nxt in successors[node]:
            if nxt not in index_of:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index_of[nxt])
        if low[node] == index_of[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(tuple(sorted(group)))

    for node in nodes:
        if node not in index_of:
            visit(node)
    return tuple(sorted(found))


def _layers(
    nodes: tuple[int, ...], edges: list[Edge], cycles: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """Longest-path layering, with the back edges of each cycle (to an earlier call of it) left out.

    Inside a cycle only edges to later calls remain and the cycles' condensation is acyclic, so what is
    left is acyclic and a cycle reads left to right, its closing edge drawn backwards.
    """
    cycle_of = {n: cycle for cycle in cycles for n in cycle}
    preds: dict[int, set[int]] = {n: set() for n in nodes}
    for edge in edges:
        if not (edge.source in cycle_of.get(edge.target, ()) and edge.source > edge.target):
            preds[edge.target].add(edge.source)
    depth: dict[int, int] = {}

    def level(node: int) -> int:
        if node not in depth:
            depth[node] = 0  # guards recursion; what is left is acyclic
            depth[node] = max((level(p) + 1 for p in preds[node]), default=0)
        return depth[node]

    layers: dict[int, list[int]] = {}
    for node in nodes:
        layers.setdefault(level(node), []).append(node)
    ordered = [layers[k] for k in sorted(layers)]
    # One barycentre pass: a node sits near the average row of the nodes that feed it (fewer crossings).
    row: dict[int, float] = {n: float(i) for i, n in enumerate(ordered[0])} if ordered else {}
    for layer in ordered[1:]:
        def centre(node: int) -> float:
            rows = [row[p] for p in preds[node] if p in row]
            return sum(rows) / len(rows) if rows else float("inf")
        layer.sort(key=lambda n: (centre(n), n))
        row.update({n: float(i) for i, n in enumerate(layer)})
    return tuple(tuple(layer) for layer in ordered)
