"""Watch sources kept as order keys and ranked lazily (`_ranked.Ranked`) read exactly like the indices
they stand for, and stay what they were when delivered, whatever is edited afterwards."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import documents, edits, watch_lists

from contextdeck.engine import Context, Resolution
from contextdeck.engine._order import Order
from contextdeck.engine._ranked import Ranked
from contextdeck.engine._resolution import Diagnostic, Indices


@settings(max_examples=150, deadline=None)
@given(documents, watch_lists(4), st.data())
def test_delivered_sources_stay_snapshots(
    document: list[dict[str, Any]], watched: list[Any], data: st.DataObject
) -> None:
    """Every resolution a callback got still reads, after all later edits, the indices a fresh fold gave then."""
    ctx = Context(document)
    delivered: list[tuple[Resolution, str, str | None]] = []
    for expr, instance in watched:
        ctx.watch(expr, lambda r, e=expr, i=instance: delivered.append((r, e, i)), instance=instance)
    expected: list[tuple[int, ...]] = []
    for _ in range(data.draw(st.integers(1, 8))):
        ctx.apply(data.draw(edits(len(ctx))))
        fresh = Context(ctx.messages)
        expected += [tuple(fresh.resolve(e, i).sources) for _, e, i in delivered[len(expected) :]]
    assert [tuple(r.sources) for r, _, _ in delivered] == expected


def test_ranked_reads_as_the_tuple_it_stands_for() -> None:
    """Length, items, order, equality with tuples and lists, hashing, repr, JSON and pickling."""
    order = Order()
    order.extend([10, 11, 12, 13])
    keys = (order.key[11], order.key[13])
    ranked = Ranked(keys, order.snapshot())
    assert len(ranked) == 2
    assert list(ranked) == [1, 3]
    assert (ranked[-1], ranked[:1]) == (3, (1,))
    assert ranked == (1, 3) == ranked
    assert ranked == [1, 3]
    assert ranked != (1, 2)
    assert ranked != (1,)
    assert hash(ranked) == hash((1, 3))
    assert repr(ranked) == "(1, 3)"
    assert json.dumps(ranked) == "[1, 3]"
    assert ranked < (2,)
    assert ranked + (5,) == (1, 3, 5)  # noqa: RUF005 -- concatenation is what is tested
    assert 3 in ranked
    assert ranked.index(3) == 1
    assert pickle.loads(pickle.dumps(ranked)) == (1, 3)
    assert tuple(ranked) == (1, 3)
    assert sorted(ranked, reverse=True) == [3, 1]
    first, second = ranked
    assert (first, second) == (1, 3)
    empty = Ranked((), order.snapshot())
    assert empty == ()
    assert empty._last() == -1


def test_a_resolution_with_other_sources_is_the_same_frozen_resolution() -> None:
    """`with_sources` (made without the dataclass's `__init__`) equals `dataclasses.replace`."""
    diagnostic = Diagnostic(0, "†s.a", "conflict")
    resolution = Resolution("†s.a", True, {"x": [1]}, Indices((0, 2)), (diagnostic,), ())
    twin = resolution.with_sources(Indices((1, 3)))
    assert twin == dataclasses.replace(resolution, sources=Indices((1, 3)))
    assert (twin.expression, twin.found, twin.value, twin.diagnostics, twin.missing) == (
        "†s.a", True, {"x": [1]}, (diagnostic,), ()
    )
    assert twin.sources == (1, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        twin.value = 2  # type: ignore[misc]


def test_a_snapshot_survives_edits_to_the_order() -> None:
    """The order copies its keys before an edit that would renumber a snapshot; an append does not need to."""
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


def test_watches_stay_exact_across_a_relabel() -> None:
    """Seventy inserts at one spot run out of room between two order keys and relabel every key; watches,
    the sources they delivered before, and their callbacks stay exact."""
    ctx = Context([{"type": "state", "data": {"a": [1]}}, {"type": "state", "data": {"b": 1}}])
    seen: list[Resolution] = []
    handle = ctx.watch("†state.b", seen.append)
    first = ctx.watch("†state.a", lambda _: None).current
    for n in range(70):
        ctx.insert(1, {"type": "state", "_outputMethod": "push", "data": {"a": n}} if n % 2 else {"type": "text"})
        assert handle.current == Context(ctx.messages).resolve("†state.b")
    assert ctx._order.generation > 0
    assert [tuple(r.sources) for r in seen] == [(n,) for n in range(2, 72)]
    assert first.sources == (0,)
