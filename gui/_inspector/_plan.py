"""The plan as a graph (SPEC 6.9), for drawing: the engine's edges and cycles, and a layered layout (Qt-free)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from graphlib import TopologicalSorter

from contextdeck.engine import CallPlan, Graph


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


def plan_graph(plans: Sequence[CallPlan], graph: Graph | None = None) -> PlanGraph:
    """The data-flow graph of the calls (the engine's `Graph`, as the scheduler sees it: `graph` when it is at hand),
    and layers for drawing."""
    graph = Graph.of(list(plans)) if graph is None else graph
    edges = [Edge(writer, reader, paths)
             for reader in sorted(graph.feeders) for writer, paths in sorted(graph.feeders[reader].items())]
    nodes = tuple(plan.index for plan in plans)
    cycles = tuple(graph.cycles())
    return PlanGraph(nodes, tuple(edges), cycles, _layers(nodes, edges, cycles))


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
    for node in TopologicalSorter(preds).static_order():  # what is left is acyclic: feeders come first
        depth[node] = max((depth[p] + 1 for p in preds[node]), default=0)

    layers: dict[int, list[int]] = {}
    for node in nodes:
        layers.setdefault(depth[node], []).append(node)
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
