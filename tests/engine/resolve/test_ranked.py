"""Watch resolutions keep order keys and the problems of their folds and work out indices only when read:
they read exactly like the plain tuples they stand for, and stay what they were when delivered,
whatever is edited afterwards."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import documents, edits, watch_lists

from contextdeck.engine import Context, Resolution
from contextdeck.engine.resolve import _paranoid
from contextdeck.engine.resolve._keys import Keys
from contextdeck.engine.resolve._order import Order
from contextdeck.engine.resolve._resolution import Diagnostic, _shifted


@settings(max_examples=150, deadline=None)
@given(documents, watch_lists(4), st.data())
def test_delivered_sources_stay_snapshots(
    document: list[dict[str, Any]], watched: list[Any], data: st.DataObject
) -> None:
    """Every resolution a callback got still reads, after all later edits, the sources and diagnostics a fresh
    fold gave then."""
    ctx = Context(document)
    delivered: list[tuple[Resolution, str, str | None]] = []
    for expr, instance in watched:
        ctx.watch(expr, lambda r, e=expr, i=instance: delivered.append((r, e, i)), instance=instance)
    expected: list[Resolution] = []
    for _ in range(data.draw(st.integers(1, 8))):
        ctx.apply(data.draw(edits(len(ctx))))
        fresh = Context(ctx.messages)
        expected += [fresh.resolve(e, i) for _, e, i in delivered[len(expected) :]]
    assert [(r.sources, r.diagnostics) for r, _, _ in delivered] == [(r.sources, r.diagnostics) for r in expected]


def test_sources_and_diagnostics_are_plain_tuples_that_serialise() -> None:
    """A watch's sources are a plain tuple of message indices and its diagnostics a tuple of
    Diagnostic: json and orjson write them, pickle keeps the resolution, and nothing reads as anything
    but what it is."""
    ctx = Context([
        {"type": "state", "data": {"log": "oops"}},
        {"type": "text", "text": "x"},
        {"type": "state", "data": {"log": 1}, "_outputPath": "†state.log", "_outputMethod": "push"},
        {"type": "state", "data": {"log": 2}, "_outputPath": "†state.log", "_outputMethod": "push"},
    ])
    handle = ctx.watch("†state.log", lambda _: None)
    ctx.insert(0, {"type": "text", "text": "renumbers everything"})
    current = handle.current
    assert type(current.sources) is tuple
    assert current.sources == (1,)
    assert orjson.loads(orjson.dumps(current.sources)) == [1]
    assert json.loads(json.dumps(current.sources)) == [1]
    assert [d.message_index for d in current.diagnostics] == [3, 4]
    assert orjson.loads(orjson.dumps(current.diagnostics))[0]["message_index"] == 3
    assert pickle.loads(pickle.dumps(current)) == current == ctx.resolve("†state.log")
    assert hash(Resolution("†s.a", True, 1, (0, 2))) == hash(Resolution("†s.a", True, 1, [0, 2]))


def test_a_resolution_is_frozen() -> None:
    """No field of a resolution can be set or deleted, the lazily worked out ones included."""
    diagnostic = Diagnostic(0, "†s.a", "conflict")
    resolution = Resolution("†s.a", True, {"x": [1]}, (0, 2), (diagnostic,), ())
    assert (resolution.sources, resolution.diagnostics) == ((0, 2), (diagnostic,))
    assert repr(resolution).startswith("Resolution(expression='†s.a', found=True, value={'x': [1]}, sources=(0, 2)")
    for name in ("value", "sources", "diagnostics", "_sources"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(resolution, name, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        del resolution.found


def test_a_snapshot_survives_edits_to_the_order() -> None:
    """A snapshot ranks its keys as they were, whatever is inserted, appended or popped after it."""
    order = Order()
    order.extend([1, 2, 3])
    ranks = order.snapshot()
    last = order.key[3]
    order.insert(3, 4)  # an append
    assert order.snapshot() is not ranks
    assert ranks.rank(last) == 2
    order.insert(0, 5)
    order.pop(2)
    assert ranks.ranks((order.key[1], last)) == (0, 2)
    assert (order.index_of(1), order.index_of(3)) == (1, 2)


# An edit of the order: ("insert", index, at the same spot as last time), ("pop", index) or ("look",):
# take a snapshot, or read every snapshot taken so far.
order_edits = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(0, 1_000), st.booleans()),
        st.tuples(st.just("pop"), st.integers(0, 1_000)),
        st.just(("snapshot",)),
        st.just(("look",)),
    ),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 6), order_edits)
def test_every_snapshot_ranks_its_keys_as_they_were(size: int, steps: list[tuple[Any, ...]]) -> None:
    """Snapshots share the order's list and its notes of later changes: however many inserts (middle,
    end, one spot again and again, so that the order relabels), pops and reads follow, each snapshot
    ranks its keys as they were when it was taken."""
    order = Order()
    order.extend(range(size))
    taken: list[tuple[Any, list[int]]] = []
    next_id, spot = size, 0
    for step in steps:
        if step[0] == "insert":
            spot = spot if step[2] else step[1] % (len(order) + 1)
            spot = min(spot, len(order))
            order.insert(spot, next_id)
            next_id += 1
        elif step[0] == "pop" and len(order):
            order.pop(step[1] % len(order))
        elif step[0] == "snapshot":
            taken.append((order.snapshot(), list(order.keys)))
        else:
            for ranks, keys in taken:
                assert ranks.ranks(tuple(keys)) == tuple(range(len(keys)))
    for ranks, keys in taken:
        assert ranks.ranks(tuple(keys)) == tuple(range(len(keys)))
        assert [ranks.rank(key) for key in keys] == list(range(len(keys)))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8), order_edits, st.data())
def test_sources_shifted_by_the_changes_since_equal_ranking_again(
    size: int, steps: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    """The indices of kept keys worked out from their indices at a snapshot and the keys added or taken
    out since (`_shifted`: a renumbered watch whose sources were read) equal ranking them again."""
    order = Order()
    order.extend(range(size))
    ranks = order.snapshot()
    kept = tuple(sorted(data.draw(st.sets(st.sampled_from(order.keys)))))
    before = ranks.ranks(kept)
    next_id = size
    for step in steps:
        if step[0] == "insert":
            order.insert(step[1] % (len(order) + 1), next_id)
            next_id += 1
        elif step[0] == "pop" and len(order) > len(kept):
            at = step[1] % len(order)
            if order.keys[at] not in kept:  # a kept key taken out: its watch is refolded instead
                order.pop(at)
    if order.generation:
        return  # relabelled: the keys mean nothing now (the watches fold again)
    changes = order.shifted(ranks.start, kept[-1] if kept else -1) or []
    assert _shifted(Keys(kept), before, changes) == order.snapshot().ranks(kept)


def test_a_snapshot_taken_before_a_relabel_keeps_its_ranks() -> None:
    order = Order()
    order.extend([0, 1])
    before = order.snapshot()
    keys = tuple(order.keys)
    order.pop(0)
    for message_id in range(2, 80):  # one spot: the keys run out of room
        order.insert(1, message_id)
    assert order.generation == 1
    assert before.ranks(keys) == (0, 1)
    assert order.snapshot().rank(order.key[1]) == 0


def test_watches_stay_exact_across_a_relabel() -> None:
    """Seventy inserts at one spot run out of room between two order keys and relabel every key; watches,
    the sources they delivered before, and their callbacks stay exact."""
    ctx = Context([{"type": "state", "data": {"a": [1]}}, {"type": "state", "data": {"b": 1}}])
    seen: list[Resolution] = []
    handle = ctx.watch("†state.b", seen.append)
    written: list[Resolution] = []
    first = ctx.watch("†state.a", written.append).current
    for n in range(70):
        ctx.insert(1, {"type": "state", "data": {"a": n}} if n % 2 else {"type": "text"})
        assert handle.current == Context(ctx.messages).resolve("†state.b")
        assert handle.current.sources == (n + 2,)
    assert ctx._store.order.generation > 0
    assert seen == []  # the same message all along, renumbered: across the relabel too
    # Each later write of `a` lands before the first one written (n = 1), which stays the last in the fold.
    assert [r.value for r in written] == [1]
    assert ctx.watch("†state.a", lambda _: None).current.sources == (69,)
    assert first.sources == (0,)


@settings(max_examples=100, deadline=None)
@given(documents, watch_lists(4), st.data())
def test_the_last_sources_are_those_of_all_the_sources(
    document: list[dict[str, Any]], watched: list[Any], data: st.DataObject
) -> None:
    """`last_sources(k)` reads as `sources[-k:]` after any edits, without ranking every source first (a whole
    kind's hundred thousand at a million messages, for a view that shows three)."""
    ctx = Context(document)
    watches = [ctx.watch(expr, lambda _: None, instance=instance) for expr, instance in watched]
    for _ in range(data.draw(st.integers(0, 6))):
        ctx.apply(data.draw(edits(len(ctx))))
        for watch, count in zip(watches, data.draw(st.lists(st.integers(0, 5), min_size=len(watches),
                                                            max_size=len(watches))), strict=True):
            result = watch.current
            last = result.last_sources(count)
            assert last == (result.sources[-count:] if count else ())


def test_the_last_sources_rank_only_those(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_paranoid, "ENABLED", False)  # (paranoid mode reads every source to check it)
    context = Context([{"type": "data", "kind": "state", "data": {f"k{n}": n}} for n in range(2_000)])
    watch = context.watch("†state", lambda _: None)
    context.insert(1_000, {"type": "text", "text": "in the middle: later sources move up one"})
    result = watch.current
    assert result.last_sources(3) == (1_998, 1_999, 2_000)
    assert result._sources is None  # the other 1,997 were never ranked
    assert result.sources[-3:] == (1_998, 1_999, 2_000)
