"""Who feeds whom among a plan's calls (`Graph.feeders`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine.calls._activities import Activities
from contextdeck.engine.calls._calls import plan_call
from contextdeck.engine.calls._plan import ByIndex, Graph


def test_feeders_name_every_call_in_plan_order_and_what_feeds_it() -> None:
    """Every call has its feeders, with the paths they may write; a call nobody feeds has none, in a
    read-only mapping (shared by all of them: a large plan keeps no empty dict per call)."""
    calls = [
        {"_tool": "a", "_outputPath": "†state.x", "_output": 1},
        {"_tool": "b", "_outputPath": "†state.y", "_output": "†state.x.n"},
        {"_tool": "c", "_outputPath": "†state.z", "_output": 2},
        {"_tool": "d", "_outputPath": "†state.w", "_output": {"y": "†state.y", "z": "†state.z"}},
    ]
    graph = Graph.of([plan_call(index, call, {}, Activities()) for index, call in enumerate(calls)])
    assert list(graph.feeders) == [0, 1, 2, 3]
    assert graph.feeders == {0: {}, 1: {0: ("†state.x.n",)}, 2: {}, 3: {1: ("†state.y",), 2: ("†state.z",)}}
    with pytest.raises(TypeError):
        graph.feeders[0][1] = ("†state.x",)  # type: ignore[index]
    assert graph.cycles() == []


def test_a_mapping_by_call_index_gives_its_items_in_index_order() -> None:
    """`ByIndex.items()` (read from its list: the search for cycles reads every call's) holds what looking
    up each key gives, the gaps left out, as a mapping's items view does."""
    records = _Records([None, "a", None, "c", None])
    assert list(records.items()) == [(1, "A"), (3, "C")] == [(key, records[key]) for key in records]
    assert len(records.items()) == 2
    assert (3, "C") in records.items()
    assert (2, None) not in records.items()
    assert dict(records.items()) == {1: "A", 3: "C"} == records


class _Records(ByIndex[str]):
    """A `ByIndex` that makes what it keeps into its value, as a run record's calls do."""

    def made(self, kept: str) -> str:
        return kept.upper()


@given(st.lists(st.frozensets(st.integers(0, 7), max_size=3), min_size=1, max_size=8))
def test_cycles_are_the_calls_that_reach_each_other(reads: list[frozenset[int]]) -> None:
    """`Graph.cycles` (which never walks onto a call fed by none) finds every group of two or more calls that
    feed each other round: the calls each of which reaches the other through who feeds whom, found here by
    following the feeders from each call."""
    calls = [{"_tool": "t", "_outputPath": f"†state.p{index}",
              "_output": {f"r{read}": f"†state.p{read}.x" for read in sorted(reads_of)}}
             for index, reads_of in enumerate(reads)]
    graph = Graph.of([plan_call(index, call, {}, Activities()) for index, call in enumerate(calls)])

    def reached(start: int) -> set[int]:
        seen: set[int] = set()
        todo = [start]
        while todo:
            for writer in graph.feeders[todo.pop()]:
                if writer not in seen:
                    seen.add(writer)
                    todo.append(writer)
        return seen

    reach = {index: reached(index) for index in range(len(calls))}
    groups = {tuple(sorted(j for j in range(len(calls)) if j == i or (j in reach[i] and i in reach[j])))
              for i in range(len(calls)) if i in reach[i]}
    assert graph.cycles() == sorted(group for group in groups if len(group) > 1)


_PATHS = ["†state", "†state.r", "†state.r.x", "†state.s", "†other.r"]


@given(st.lists(st.tuples(st.sampled_from([None, "i1", "i2"]), st.sampled_from(_PATHS),
                          st.lists(st.sampled_from(_PATHS), max_size=2)), min_size=1, max_size=8))
def test_the_feeders_are_every_pair_that_feeds_each_other(calls: list[tuple[str | None, str, list[str]]]) -> None:
    """`Graph.of` finds its feeders through an index of the writers (by kind, first segment and instance, so that a
    call in each of thousands of instances meets only its own instance's writers and the global ones): they are
    exactly what `feeds` says of every pair of calls, whole kinds, nested paths and instances among them."""
    from contextdeck.engine.calls._plan import feeds

    plans = [plan_call(index, {"_tool": "t", "_outputPath": path, "_output": {f"r{n}": read for n, read
                                                                              in enumerate(reads)},
                               **({"_instance": instance} if instance else {})}, {}, Activities())
             for index, (instance, path, reads) in enumerate(calls)]
    graph = Graph.of(plans)
    expected = {reader.index: {writer.index: paths for writer in plans if (paths := feeds(writer, reader))}
                for reader in plans}
    assert graph.feeders == expected
