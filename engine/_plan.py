"""The plan as a graph (SPEC 6.9–6.10): units of execution, who feeds whom, and cycles.

A plan entry is a call, or a pattern group `{"all" | "any" | "race": [call, ...]}` (the seeds name the
patterns but give no syntax; this is ContextDeck's). Calls are numbered in plan order, group members
included, so "call 3" means the same thing in the plan, the debugger and the error messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._calls import CallPlan
from ._expressions import Reference

PATTERNS = ("all", "any", "race")


@dataclass(frozen=True)
class Unit:
    """What the scheduler starts at once: one call (`pattern` "one") or a pattern group of calls."""

    pattern: str
    members: tuple[int, ...]
    entry: int  # its position among the plan's entries


def group_of(entry: Any) -> tuple[str, Any] | None:
    """(pattern, members) when a plan entry is a pattern group, else None."""
    if isinstance(entry, dict) and len(entry) == 1:
        (key, members), = entry.items()
        if key in PATTERNS:
            return key, members
    return None


def flatten(entries: list[Any]) -> tuple[list[Any], list[Unit]]:
    """The calls of a plan in order, and the units that group them."""
    calls: list[Any] = []
    units: list[Unit] = []
    for position, entry in enumerate(entries):
        group = group_of(entry)
        if group is None:
            units.append(Unit("one", (len(calls),), position))
            calls.append(entry)
            continue
        pattern, members = group
        members = members if isinstance(members, list) else [members]
        start = len(calls)
        calls.extend(members)
        units.append(Unit(pattern, tuple(range(start, len(calls))), position))
    return calls, units


def _overlaps(a: Reference, b: Reference) -> bool:
    """Same kind, and one path is the other's parent, child or itself."""
    if a.kind != b.kind:
        return False
    short, long = (a.path, b.path) if len(a.path) <= len(b.path) else (b.path, a.path)
    return long[: len(short)] == short


def feeds(writer: CallPlan, reader: CallPlan) -> tuple[str, ...]:
    """The reads of `reader` that `writer` may write (an instanced writer feeds only its own instance)."""
    if writer.index == reader.index or writer.instance not in (None, reader.instance):
        return ()
    hit = [str(ref) for expr in reader.reads for ref in expr.references
           if any(_overlaps(ref, destination) for destination in writer.writes)]
    return tuple(dict.fromkeys(hit))


@dataclass(frozen=True)
class Graph:
    """`feeders[i]` maps each call that feeds call i to the paths of i it may write."""

    feeders: dict[int, dict[int, tuple[str, ...]]]

    @classmethod
    def of(cls, plans: list[CallPlan]) -> Graph:
        feeders: dict[int, dict[int, tuple[str, ...]]] = {plan.index: {} for plan in plans}
        for reader in plans:
            for writer in plans:
                paths = feeds(writer, reader)
                if paths:
                    feeders[reader.index][writer.index] = paths
        return cls(feeders)

    def cycles(self) -> list[tuple[int, ...]]:
        """The strongly connected groups of two or more calls (Tarjan), each in ascending order."""
        index_of: dict[int, int] = {}
        low: dict[int, int] = {}
        stack: list[int] = []
        on_stack: set[int] = set()
        found: list[tuple[int, ...]] = []
        counter = 0

        def visit(node: int) -> None:
            nonlocal counter
            index_of[node] = low[node] = counter
            counter += 1
            stack.append(node)
            on_stack.add(node)
            for nxt in self.feeders[node]:
                if nxt not in index_of:
                    visit(nxt)
                    low[node] = min(low[node], low[nxt])
                elif nxt in on_stack:
                    low[node] = min(low[node], index_of[nxt])
            if low[node] == index_of[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))

        for node in sorted(self.feeders):
            if node not in index_of:
                visit(node)
        return sorted(found)

    def describe_cycle(self, cycle: tuple[int, ...], plans: list[CallPlan]) -> str:
        members = set(cycle)
        links = [f"call {writer} feeds call {reader} through {', '.join(paths)}"
                 for reader in cycle for writer, paths in sorted(self.feeders[reader].items()) if writer in members]
        names = ", ".join(plans[i].label for i in cycle)
        return f"the calls {names} form a cycle: " + "; ".join(links)
