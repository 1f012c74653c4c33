"""A result's source keys grow at their end without a copy, and every holder keeps reading its own."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context
from contextdeck.engine.resolve import _keys
from contextdeck.engine.resolve._keys import EMPTY_KEYS, Keys, sort_in_pieces


def test_an_append_extends_the_shared_list_in_place() -> None:
    """Keys grown by their last grower share its list (no copy); the keys grown from are unchanged."""
    before = Keys((1, 4, 9))
    grown = before.plus((12, 15))
    assert grown._tail is before._tail  # the same list, extended: nothing copied
    assert grown == (1, 4, 9, 12, 15)
    assert len(grown) == 5
    assert before == (1, 4, 9)
    assert len(before) == 3
    assert list(before) == [1, 4, 9]
    assert before[-1] == 9
    assert grown.grows(before)
    assert not before.grows(grown)


def test_keys_grown_twice_from_the_same_keys_each_keep_their_own() -> None:
    """Two holders that grow the same keys: the second gets a list of its own, and neither sees the other's."""
    before = Keys((1, 4))
    first = before.plus((5,))
    second = before.plus((7, 8))
    assert second._tail is not first._tail
    assert (before, first, second) == ((1, 4), (1, 4, 5), (1, 4, 7, 8))
    assert second.grows(before)
    assert not second.grows(first)
    assert first != second
    assert Keys((1, 4, 5)) == first


def test_the_empty_keys_stay_empty() -> None:
    """Growing the shared empty keys never changes what they are."""
    assert EMPTY_KEYS.plus((3,)) == (3,)
    assert EMPTY_KEYS.plus((5,)) == (5,)
    assert EMPTY_KEYS == ()
    assert not EMPTY_KEYS
    assert len(EMPTY_KEYS) == 0
    assert not EMPTY_KEYS._tail


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 3)), max_size=25))
def test_every_holder_reads_the_keys_it_was_made_with(growths: list[tuple[int, int]]) -> None:
    """Keys grown from any earlier holder, in any order, each equal the tuple model: a holder's keys never
    change, whoever grows the shared list after it."""
    made: list[tuple[Keys, tuple[int, ...]]] = [(EMPTY_KEYS, ())]
    for source, count in growths:
        keys, model = made[source % len(made)]
        start = (model[-1] + 1) if model else 0
        added = tuple(range(start, start + count))
        made.append((keys.plus(added), model + added))
        for held, expected in made:
            assert held == expected
            assert tuple(held) == expected
            assert list(held) == list(expected)
            assert [held.locate(key) for key in expected] == list(range(len(expected)))


def _data(kind: str, data: dict[str, object], instance: str | None = None) -> dict[str, object]:
    message: dict[str, object] = {"type": "data", "kind": kind, "data": data}
    if instance is not None:
        message["_instance"] = instance
    return message


def test_an_append_grows_a_whole_kinds_keys_in_place_and_keeps_no_old_sources() -> None:
    """After a write appended to a watched whole kind (global under an instance view too), the watch's keys
    are its old ones grown in place, and the kept folds no longer hold the sources they grew from."""
    ctx = Context([_data("s", {"a": 1}), _data("s", {"b": 2}, "i"), _data("s", {"c": 3})])
    watches = [ctx.watch("†s", lambda _: None), ctx.watch("†s", lambda _: None, instance="i")]
    for message in (_data("s", {"d": 4}), _data("s", {"e": 5}, "i"), _data("s", {"a": 6})):
        before = [watch._resolution._keys for watch in watches]
        ctx.append(message)
        for watch, was in zip(watches, before, strict=True):
            if len(watch._resolution._keys) > len(was):
                assert watch._resolution._keys._tail is was._tail  # grown in place: no copy
            assert watch.current == ctx.resolve("†s", watch.instance)
        for track in ctx._watchers._tracks.values():
            assert track.fold is not None
            assert all(not probe.edits for probe in track.fold.state.probes)
    assert watches[1].current.sources == (0, 1, 2, 3, 4, 5)


@contextmanager
def chunks_of(size: int) -> Iterator[None]:
    saved, _keys.CHUNK = _keys.CHUNK, size
    try:
        yield
    finally:
        _keys.CHUNK = saved


operations = st.lists(
    st.tuples(
        st.sampled_from(["plus", "edited"]),
        st.integers(0, 30),  # which holder to start from
        st.lists(st.integers(0, 60), max_size=4),  # keys to take out (those present)
        st.lists(st.integers(0, 60), max_size=5),  # keys to add
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 60), unique=True, max_size=12), operations)
def test_edited_and_grown_keys_equal_the_tuple_model(
    start: list[int], steps: list[tuple[str, int, list[int], list[int]]]
) -> None:
    """Keys appended to or edited in the middle, from any earlier holder, in chunks of 2 (sealed, split and
    shared): each holder equals its tuple model, and reads, searches and compares as the model does."""
    with chunks_of(2):
        _follow(start, steps)


def _follow(start: list[int], steps: list[tuple[str, int, list[int], list[int]]]) -> None:
    made: list[tuple[Keys, tuple[int, ...]]] = [(Keys(sorted(start)), tuple(sorted(start)))]
    for how, source, lost, added in steps:
        keys, model = made[source % len(made)]
        if how == "plus":
            base = (model[-1] + 1) if model else 0
            more = tuple(range(base, base + len(added)))
            made.append((keys.plus(more), model + more))
        else:
            gone = sorted(set(lost) & set(model))
            edited = keys.edited(gone, sorted(set(added)))
            assert edited is not None
            made.append((edited, tuple(sorted(set(model).difference(gone).union(added)))))
            absent = next((key for key in range(61) if key not in model), None)
            if absent is not None:
                assert keys.edited([absent], []) is None
        for held, expected in made:
            assert tuple(held) == expected
            assert held == expected
            assert len(held) == len(expected)
            assert [held[i] for i in range(-len(expected), len(expected))] == [*expected, *expected]
        held, expected = made[-1]
        for key in range(-1, 62):
            assert held.locate(key) == bisect_left(expected, key)
            assert held.locate(key + 1) == bisect_right(expected, key)
        for other, theirs in made:
            assert (held == other) == (expected == theirs)
            assert held.grows(other) == (expected[: len(theirs)] == theirs)
        assert all(held.tail(at) == list(expected[at:]) for at in range(len(expected) + 1))


class _Counted(int):
    """An order key that counts the comparisons that read it."""

    reads = 0

    def __eq__(self, other: object) -> bool:
        _Counted.reads += 1
        return int(self) == other

    def __ne__(self, other: object) -> bool:
        _Counted.reads += 1
        return int(self) != other

    __hash__ = int.__hash__


def test_keys_laid_out_alike_compare_chunk_by_chunk_without_reading_a_key() -> None:
    """A whole kind's sources at a million messages are a hundred thousand keys, each an integer scattered in
    memory: two results of the same messages hold the very same key objects, and keys laid out alike compare
    as tuples, chunk by chunk, telling each key by its address (before: one comparison per key)."""
    items = [_Counted(key) for key in range(0, 6 * _keys.CHUNK + 7, 3)]
    one, other = Keys.owning(list(items)), Keys.run(items, 0, len(items), [])
    _Counted.reads = 0
    assert one == other
    assert _Counted.reads == 0
    changed = Keys.owning([*items[:-1], _Counted(items[-1] + 1)])
    assert one != changed
    assert _Counted.reads <= 2  # only the key that differs was read (a tuple comparison reads it twice)


def test_a_run_shares_the_chunks_sealed_from_its_start_and_is_laid_out_as_a_copy() -> None:
    """`Keys.run` over an only-growing list: every run from the same start shares its sealed chunks, and each is
    laid out as `owning` lays out a copy of the same items."""
    items = list(range(4 * _keys.CHUNK))
    sealed: list[tuple[int, ...]] = []
    short = Keys.run(items, 5, 3 * _keys.CHUNK, sealed)
    items += range(4 * _keys.CHUNK, 6 * _keys.CHUNK)
    long = Keys.run(items, 5, 6 * _keys.CHUNK - 1, sealed)
    for keys, stop in ((short, 3 * _keys.CHUNK), (long, 6 * _keys.CHUNK - 1)):
        copy = Keys.owning(items[5:stop])
        assert list(keys) == items[5:stop]
        assert (keys._offsets, keys._sealed) == (copy._offsets, copy._sealed)
    assert all(a is b for a, b in zip(short._chunks, long._chunks, strict=False))
    assert list(Keys.run(items, 0, 3, sealed=[])) == [0, 1, 2]


class _Lookups(list[int]):
    """Order keys by message id, counting the lookups."""

    count = 0

    def __getitem__(self, index: int) -> int:  # type: ignore[override]
        self.count += 1
        return super().__getitem__(index)


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(1, 4),
    keys=st.lists(st.integers(0, 10**6), unique=True, max_size=300),
    data=st.data(),
)
def test_keys_sorted_in_pieces_are_the_sorted_keys_a_piece_of_lookups_a_step(
    size: int, keys: list[int], data: st.DataObject
) -> None:
    """`sort_in_pieces` gives the sorted order keys of a fold's sources (one ascending run, or two: an instance's own
    after the global ones; any order too), laid out as `owning` lays them out, and looks up at most `8 * CHUNK`
    keys between two steps (a whole kind's hundred thousand are each a cache miss)."""
    with chunks_of(size):
        by_key = sorted(range(len(keys)), key=keys.__getitem__)
        cut = data.draw(st.integers(0, len(keys)))
        ids = data.draw(st.sampled_from([by_key, by_key[cut:] + by_key[:cut], by_key[::-1]]))
        key = _Lookups(keys)
        pieces: list[tuple[Keys | None, int]] = []  # each step's answer and the lookups it made
        for piece in sort_in_pieces(ids, key):
            pieces.append((piece, key.count))
            key.count = 0
        made = pieces[-1][0]
        assert isinstance(made, Keys)
        assert all(piece is None for piece, _ in pieces[:-1])
        assert max(count for _, count in pieces) <= 8 * size
        copy = Keys.owning(sorted(keys))
        assert list(made) == list(copy)
        assert (made._offsets, made._sealed) == (copy._offsets, copy._sealed)
