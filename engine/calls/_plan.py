"""The plan as a graph (SPEC 6.9): who feeds whom, and cycles. Plan entries and groups: `_groups`."""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from types import MappingProxyType
from typing import Any, TypeVar, cast

from ..protocol._expressions import Reference
from ..protocol._groups import Unit
from ._calls import CallPlan, Problem


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
    destinations = writer.writes
    hit: list[str] = []
    for expression in reader.reads:  # loops, not generators: a large plan asks this of each call another feeds
        for ref in expression.references:
            for destination in destinations:
                if _overlaps(ref, destination):
                    if (text := str(ref)) not in hit:
                        hit.append(text)
                    break
    return tuple(hit)


def reads_own_writes(plan: CallPlan) -> bool:
    """Whether a call reads what it writes (a counter): it reads the value from before its own write."""
    return any(_overlaps(ref, destination) for expr in plan.reads for ref in expr.references
               for destination in plan.writes)


_V = TypeVar("_V")
_index = attrgetter("index")
_NOBODY: frozenset[int] = frozenset()  # the writers of a path nothing writes
# What a call nobody feeds maps to: one read-only mapping shared by them all (most calls of a large plan).
_NO_FEEDERS: Mapping[int, tuple[str, ...]] = MappingProxyType({})


class ByIndex(Mapping[int, _V]):
    """A read-only mapping from call indices, kept as a list by index (None: no value there): what a large plan
    keeps one of per call (a dict of 100,000 calls costs 52 bytes a call, a list 8). What is kept at an index is
    given as it is, unless a subclass makes it into the mapping's value (`made`)."""

    __slots__ = ("kept",)

    def __init__(self, kept: Sequence[Any]) -> None:
        self.kept = kept

    def __getitem__(self, index: int) -> _V:
        found = self.kept[index] if 0 <= index < len(self.kept) else None
        if found is None:
            raise KeyError(index)
        return self.made(found)

    def made(self, kept: Any) -> _V:
        """The mapping's value of what is kept at an index: itself."""
        return cast(_V, kept)

    def __iter__(self) -> Iterator[int]:
        return (index for index, found in enumerate(self.kept) if found is not None)

    def __len__(self) -> int:
        return len(self.kept) - self.kept.count(None)

    def items(self) -> ItemsView[int, _V]:
        return _Items(self)


class _Items(ItemsView[int, _V]):
    """A `ByIndex`'s items read from its list: not a lookup of each index its keys give (a plan's 100,000)."""

    _mapping: ByIndex[_V]

    def __iter__(self) -> Iterator[tuple[int, _V]]:
        kept = self._mapping.kept
        if type(self._mapping).made is ByIndex.made:  # what it keeps is its value (a graph's feeders)
            return ((index, found) for index, found in enumerate(kept) if found is not None)
        made = self._mapping.made
        return ((index, made(found)) for index, found in enumerate(kept) if found is not None)


@dataclass(frozen=True)
class Graph:
    """`feeders[i]` maps each call that feeds call i to the paths of i it may write; `error_readers` are the
    calls that read the `error` kind, which no call's destination writes but every error message does."""

    feeders: Mapping[int, Mapping[int, tuple[str, ...]]]
    error_readers: tuple[int, ...] = ()

    @cached_property
    def readers(self) -> dict[int, list[int]]:
        """Who each writer feeds, in call order (`feeders` turned round); a writer that feeds none is absent."""
        readers: dict[int, list[int]] = {}
        for reader, fed_by in self.feeders.items():
            for writer in fed_by:
                readers.setdefault(writer, []).append(reader)
        return readers

    @classmethod
    def of(cls, plans: list[CallPlan]) -> Graph:
        kept: list[Mapping[int, tuple[str, ...]] | None] = [None] * (max(map(_index, plans), default=-1) + 1)
        readers: list[CallPlan] = []  # a call that reads nothing is fed by none
        error_readers: list[int] = []
        # Index the destinations that may meet a read by kind, then first segment (None: the whole kind), so each
        # read meets only writers that may overlap it: a whole kind's read (`†state`) meets every writer of it, a
        # whole kind's write (`†state`) every read of it.
        heads: dict[str, set[str]] = {}  # per kind read, the first segments read
        whole: set[str] = set()  # the kinds read whole
        for plan in plans:  # one loop over the calls for all three (a large plan has 100,000)
            kept[plan.index] = _NO_FEEDERS
            if plan.reads:
                readers.append(plan)
                for read in plan.reads:
                    for ref in read.references:
                        if ref.kind == "error" and error_readers[-1:] != [plan.index]:
                            error_readers.append(plan.index)
                        if ref.path:
                            if (read_heads := heads.get(ref.kind)) is None:
                                heads[ref.kind] = {ref.path[0]}
                            else:
                                read_heads.add(ref.path[0])
                        else:
                            whole.add(ref.kind)
        feeders: ByIndex[Mapping[int, tuple[str, ...]]] = ByIndex(kept)
        if not readers:
            return cls(feeders)
        errors = tuple(error_readers)
        # kind -> first segment (None: whole) -> the writer's instance (None: global) -> writers: an instanced writer
        # feeds only its own instance (`feeds`), so a reader meets the global writers and its instance's, never the
        # other instances' (a run of a call in each of thousands of instances, all writing one path).
        writers: dict[str, dict[str | None, dict[str | None, set[int]]]] = {}
        for writer in plans:
            destinations = writer.destinations
            if destinations is None:
                continue
            for ref in destinations.references:
                read_heads = heads.get(ref.kind)
                if read_heads is None and ref.kind not in whole:
                    continue  # a kind nothing reads (most writers of a run document write one key each)
                head = ref.path[0] if ref.path else None
                if head is None or ref.kind in whole or (read_heads is not None and head in read_heads):
                    writing = writers.setdefault(ref.kind, {}).setdefault(head, {})
                    writing.setdefault(writer.instance, set()).add(writer.index)
        of_kind: dict[str, dict[str | None, set[int]]] = {}
        for kind, written in writers.items():
            for instances in written.values():
                for instance, indices in instances.items():
                    of_kind.setdefault(kind, {}).setdefault(instance, set()).update(indices)
        for reader in readers:
            met: list[set[int]] = []  # the writers each reference may meet
            instance = reader.instance
            for expression in reader.reads:
                for ref in expression.references:
                    by_head = writers.get(ref.kind)
                    if by_head is None:
                        continue  # nothing writes the kind (the calls that read the instance's input)
                    # its head's writers and the whole kind's, or the kind's every writer for a whole kind's read
                    for by_instance in ((of_kind[ref.kind],) if not ref.path
                                        else (by_head.get(ref.path[0]), by_head.get(None))):
                        if by_instance is None:
                            continue
                        if found := by_instance.get(None):
                            met.append(found)
                        if instance is not None and (found := by_instance.get(instance)):
                            met.append(found)
            if not met:
                continue
            candidates = met[0] if len(met) == 1 else set().union(*met)
            if len(candidates) == 1:  # one writer may feed it: most readers of a large plan
                (index,) = candidates
                paths = feeds(plans[index], reader)
                if paths:
                    kept[reader.index] = {index: paths}
                continue
            fed = {index: paths for index in sorted(candidates) if (paths := feeds(plans[index], reader))}
            if fed:
                kept[reader.index] = fed
        return cls(feeders, errors)

    def cycles(self) -> list[tuple[int, ...]]:
        """The strongly connected groups of two or more calls (Tarjan, iterative: long chains are fine)."""
        order: dict[int, int] = {}
        low: dict[int, int] = {}
        stack: list[int] = []
        on_stack: set[int] = set()
        found: list[tuple[int, ...]] = []
        feeders = self.feeders
        # A call fed by none is in no cycle: no walk starts there, nor steps onto it (a large plan's writers).
        for root in sorted(index for index, its in feeders.items() if its):
            if root in order:
                continue
            work = [(root, iter(feeders[root]))]
            order[root] = low[root] = len(order)
            stack.append(root)
            on_stack.add(root)
            while work:
                node, edges = work[-1]
                nxt = next(edges, None)
                if nxt is not None:
                    if nxt not in order:
                        if not (onward := feeders[nxt]):
                            continue  # fed by none: no cycle goes through it
                        order[nxt] = low[nxt] = len(order)
                        stack.append(nxt)
                        on_stack.add(nxt)
                        work.append((nxt, iter(onward)))
                    elif nxt in on_stack:
                        low[node] = min(low[node], order[nxt])
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(tuple(sorted(component)))
        return sorted(found)

    def describe_cycle(self, cycle: tuple[int, ...], plans: Sequence[CallPlan], origins: Origins | None = None,
                       *, instance: bool = False) -> str:
        """The cycle's calls and the paths that link them, each call numbered as written (`origins`: where the run
        repeats calls per instance, 013); `instance`: the instance its copies run for is said too."""
        members = set(cycle)
        number = written_number(origins)
        links = [f"call {number(writer)} feeds call {number(reader)} through {', '.join(paths)}"
                 for reader in cycle for writer, paths in sorted(self.feeders[reader].items()) if writer in members]
        names = ", ".join(f"{number(i)} ({plans[i].tool_name or '?'})" for i in cycle)
        copied = _copied_for(cycle, origins) if instance else None
        said = "" if copied is None else f" for instance {copied}"
        return f"calls {names}{said} form a cycle: " + "; ".join(links)


# For each call the run plans, the index of the call as written and the instance it is a copy for (None: the call
# as written), as `run/_instancing.copied_from` gives them.
Origins = Sequence[tuple[int, str | None]]


def written_number(origins: Origins | None) -> Callable[[int], int]:
    """A run's call index to the call's number as written."""
    return _same if origins is None else lambda index: origins[index][0]


def _same(index: int) -> int:
    return index


def _copied_for(calls: Iterable[int], origins: Origins | None) -> str | None:
    """The instance the copies among `calls` run for (a copy feeds only its own instance's calls, so one)."""
    return None if origins is None else next((origins[i][1] for i in calls if origins[i][1] is not None), None)


def link_problems(units: Sequence[Unit], plans: Sequence[CallPlan], graph: Graph,
                  structural: dict[int, list[Problem]], origins: Origins | None = None) -> tuple[tuple[int, ...], ...]:
    """What the calls' links refuse, added to `structural` by call index: calls of one group that feed each other
    (they run together) and every cycle; the cycles, in order (a run's set-up, and so the turn check).
    `origins`: the calls as written, where the run repeats some per instance (013): the problems name the calls
    as the user wrote them, and the place they are said at names the instance."""
    number = written_number(origins)
    for unit in units:
        if unit.pattern == "one":
            continue
        members = [plans[i] for i in unit.members]
        linked = [(a.index, b.index) for a in members for b in members if feeds(a, b)]
        if linked:
            text = f"calls of one {unit.pattern!r} group run together and cannot feed each other: " + ", ".join(
                f"call {number(a)} feeds call {number(b)}" for a, b in linked)
            for i in unit.members:
                structural.setdefault(i, [Problem("group", text)])
    cycles = tuple(graph.cycles())
    for cycle in cycles:
        text = graph.describe_cycle(cycle, plans, origins)
        for index in cycle:
            structural.setdefault(index, []).append(Problem("cycle", text))
    return cycles
