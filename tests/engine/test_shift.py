"""Lazily renumbered indices (`_shift.Shifted`) behave exactly like the tuple they stand for, forever."""

from __future__ import annotations

import copy
import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context, Insert, Move, Remove, Resolution
from contextdeck.engine._resolution import Indices
from contextdeck.engine._shift import Shift, Shifted


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[int], int, list[Shift]]:
    """Sorted indices in a context of `size` messages, then edits that never move or remove one of them."""
    size = draw(st.integers(1, 40))
    indices = sorted(draw(st.sets(st.integers(0, size - 1), max_size=size)))
    named = set(indices)
    shifts = []
    for _ in range(draw(st.integers(0, 80))):  # past Shifted.LONGEST, so chains are worked out on the way
        kind = draw(st.sampled_from(("insert", "remove", "move")))
        free = [i for i in range(size) if i not in named]
        if kind == "insert" or not free:
            shift = Shift.insert(draw(st.integers(0, size)))
            size += 1
        elif kind == "remove":
            shift = Shift.remove(draw(st.sampled_from(free)))
            size -= 1
        else:
            src, dst = draw(st.sampled_from(free)), draw(st.integers(0, size - 1))
            if src == dst:
                continue
            shift = Shift.move(src, dst)
        named = {shift.index(i) for i in named}
        shifts.append(shift)
    return indices, size, shifts


def check_same(lazy: Indices, expected: list[int]) -> None:
    """Every way of reading `lazy` gives what the plain tuple `expected` gives."""
    plain = tuple(expected)
    assert lazy == expected
    assert lazy == plain
    assert expected == lazy
    assert plain == lazy
    assert not lazy != plain  # noqa: SIM202 (the operator itself is under test)
    assert lazy == Indices(plain)
    assert Indices(plain) == lazy
    assert list(lazy) == expected
    assert tuple(lazy) == plain
    assert len(lazy) == len(plain)
    assert bool(lazy) == bool(plain)
    assert hash(lazy) == hash(plain)
    assert repr(lazy) == repr(plain)
    assert lazy[:] == plain
    assert sorted(lazy) == expected
    assert lazy._last() == (plain[-1] if plain else -1)
    if plain:
        assert lazy[0] == plain[0]
        assert lazy[-1] == plain[-1]
        assert plain[len(plain) // 2] in lazy
    assert -1 not in lazy
    for restored in (pickle.loads(pickle.dumps(lazy)), copy.deepcopy(lazy), copy.copy(lazy)):
        assert restored == plain
        assert list(restored) == expected


@settings(max_examples=300, deadline=None)
@given(histories())
def test_shifted_indices_equal_the_eagerly_renumbered_tuple(history: tuple[list[int], int, list[Shift]]) -> None:
    """After any sequence of shifts, lazily renumbered indices read exactly as renumbering each index does."""
    indices, _, shifts = history
    lazy: Indices = Indices(indices)
    expected = list(indices)
    for shift in shifts:
        renumbered = shift.indices(lazy)
        before = list(lazy)
        expected = [shift.index(i) for i in expected]
        assert list(renumbered) == expected  # worked out first: `_moved` must not depend on it
        moved = renumbered is not lazy and isinstance(renumbered, Shifted) and renumbered._moved()
        assert moved == (expected != before)
        lazy = renumbered
        assert lazy._last() == (expected[-1] if expected else -1)
    check_same(lazy, expected)


@settings(max_examples=200, deadline=None)
@given(histories())
def test_shifted_indices_are_snapshots(history: tuple[list[int], int, list[Shift]]) -> None:
    """Indices handed out earlier keep their value while later shifts renumber their successors."""
    indices, _, shifts = history
    lazy: Indices = Indices(indices)
    expected = list(indices)
    kept: list[tuple[Indices, list[int]]] = [(lazy, expected)]
    for shift in shifts:
        lazy = shift.indices(lazy)
        expected = [shift.index(i) for i in expected]
        kept.append((lazy, expected))
    for snapshot, value in reversed(kept):  # read the newest first: it works out the shared chain
        check_same(snapshot, value)


def test_shifted_indices_compare_in_order_and_concatenate() -> None:
    """Ordering, concatenation and repetition treat lazy indices as the tuple of their values."""
    lazy = Shift.insert(0).indices(Indices((0, 2)))
    assert isinstance(lazy, Shifted)
    assert lazy < (2, 4)
    assert lazy <= (1, 3)
    assert lazy > (1, 2)
    assert lazy >= (1, 3)
    assert lazy + (9,) == (1, 3, 9)  # noqa: RUF005 (the operator itself is under test)
    assert (0, *lazy) == (0, 1, 3)
    assert (0,) + lazy == (0, 1, 3)  # noqa: RUF005
    assert lazy * 2 == (1, 3, 1, 3)
    assert lazy.count(3) == 1
    assert lazy.index(3) == 1
    assert list(reversed(lazy)) == [3, 1]
    assert {lazy: "x"}[(1, 3)] == "x"
    assert f"{lazy}" == "(1, 3)"


def test_delivered_resolutions_keep_their_sources_after_later_edits() -> None:
    """A resolution a watch delivered still names the indices it named then, after edits before them."""
    messages: list[dict[str, Any]] = [
        {"type": "data", "kind": "state", "data": {"log": [1]}},
        {"type": "text", "role": "user", "text": "hi"},
        {"type": "data", "kind": "state", "_outputPath": "†state.log", "_outputMethod": "push", "data": {"log": 2}},
        {"type": "data", "kind": "state", "_outputPath": "†state.log", "_outputMethod": "push", "data": {"log": 3}},
    ]
    ctx = Context(messages)
    seen: list[Resolution] = []
    handle = ctx.watch("†state.log", seen.append)
    other = ctx.watch("†state.log && †state.log", lambda _: None)
    first = handle.current
    assert first.sources == [0, 2, 3]
    filler = {"type": "text", "role": "user", "text": "more"}
    for edit in (Insert(0, filler), Insert(2, filler), Move(0, 3), Remove(1), Insert(1, filler), Insert(0, filler)):
        ctx.apply(edit)
        assert handle.current == ctx.resolve("†state.log")
        assert other.current.sources == handle.current.sources
    assert first.sources == [0, 2, 3]
    assert [list(r.sources) for r in seen] == [
        [1, 3, 4],  # insert at 0
        [1, 4, 5],  # insert at 2
        [0, 4, 5],  # move 0 -> 3
        [0, 3, 4],  # remove 1
        [0, 4, 5],  # insert at 1
        [1, 5, 6],  # insert at 0
    ]
    assert handle.current.sources == [1, 5, 6]
    assert any(isinstance(r.sources, Shifted) for r in seen)  # the lazy path was taken
    assert pickle.loads(pickle.dumps(handle.current)) == ctx.resolve("†state.log")


def test_a_renumbered_watch_is_called_back_even_when_its_sources_were_read_first() -> None:
    """A watch whose sources an edit renumbered is called back, even if another watch read them first."""
    push = {"type": "data", "kind": "state", "_outputPath": "†state.log", "_outputMethod": "push", "data": {"log": 2}}
    ctx = Context(
        [
            {"type": "data", "kind": "state", "data": {"log": [1]}},
            {"type": "data", "kind": "state", "data": {"other": 1}},
            push,
            {"type": "text", "role": "user", "text": "hi"},
        ]
    )
    calls: list[list[int]] = []
    both = ctx.watch("†state.other && †state.log", lambda _: None)  # refolded: it reads the log first
    ctx.watch("†state.log", lambda r: calls.append(list(r.sources)))
    ctx.move(1, 3)
    assert calls == [[0, 1]]
    assert both.current == ctx.resolve("†state.other && †state.log")
