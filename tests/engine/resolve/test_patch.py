"""The lemma behind patched splices (`_patches`, used by `_tracks`): when two folds differ at a few paths only, a write
that leaves those paths alone acts the same on both, and one that covers a path makes them agree there.

Tracks rely on it to splice an old fold after an edit that changed a few nested fields (a global write
under an instance layer, a replace in the middle), instead of folding the rest of the lane again.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contextdeck.engine.protocol._messages import MISSING, Write, get_path
from contextdeck.engine.protocol._methods import Conflict, Owned, write_at
from contextdeck.engine.resolve._fold import _effect
from contextdeck.engine.resolve._incremental import _patches
from contextdeck.engine.resolve._incremental._branches import touches
from contextdeck.engine.resolve._incremental._index import MOST_DEEP, Layer
from contextdeck.engine.resolve._incremental._patches import (
    Difference,
    Patch,
    _past_start,
    acts_on,
    apart_at,
    cover,
    covers,
    differences,
    identical,
    keeps_start,
    patch_at,
    patched,
)

SEGMENTS = ("a", "b", "c")
scalars = st.one_of(st.none(), st.booleans(), st.integers(0, 2), st.just("x"))
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(SEGMENTS), inner, max_size=3)),
    max_leaves=6,
)
paths = st.lists(st.sampled_from((*SEGMENTS, "0", "1")), min_size=0, max_size=3).map(tuple)  # (indices too)
writes = st.builds(Write, paths, st.sampled_from(["set", "merge", "assign", "push", "concat"]), values)


@st.composite
def differing_roots(draw: st.DrawFn) -> tuple[Any, Any]:
    """Two roots (objects) that differ in one or two places under lane "a": a value, or the order of an
    object's keys."""
    lane = draw(st.dictionaries(st.sampled_from(SEGMENTS), values, min_size=1, max_size=3))
    root = {"a": lane, **draw(st.dictionaries(st.sampled_from(("b", "c")), values, max_size=1))}
    other = root
    for _ in range(draw(st.integers(1, 2))):
        node, path = other, ["a"]
        for _ in range(draw(st.integers(0, 2))):
            child = node[path[-1]]
            if not isinstance(child, dict) or not child:
                break
            node, path = child, [*path, draw(st.sampled_from(sorted(child)))]
        here = get_path(other, tuple(path))
        if isinstance(here, dict) and len(here) > 1 and draw(st.booleans()):
            new = {key: here[key] for key in draw(st.permutations(list(here)))}  # its keys in another order
        elif isinstance(here, list) and here and draw(st.booleans()):  # an element put in, taken out or replaced
            at = draw(st.integers(0, len(here) - 1))
            new = [*here[:at], *draw(st.lists(values, max_size=2)), *here[at + draw(st.integers(0, 1)) :]]
        else:
            new = draw(values)
        other = patched(other, Patch(tuple(path), new, here))
    return root, other


def _patch_all(root: Any, targets: tuple[Difference, ...], source: Any, before: Any = None) -> Any:
    """`root` patched where `targets` are, to what `source` holds there (patches read from `source` and `before`,
    the root `root` was before writes appended to an array's part the two have alike: `root` itself when None)."""
    for target in targets:
        root = patched(root, patch_at(target, source, root if before is None else before))
    return root


class Refused(str):
    """A write's conflict, told apart from a string it sets."""


def _apply(root: Any, write: Write) -> Any:
    try:
        return write_at(root, write.path, write.method, write.value)
    except Conflict as conflict:
        return Refused(conflict.reason)


@settings(max_examples=600, deadline=None)
@given(differing_roots(), writes, paths)
def test_a_write_that_leaves_the_difference_alone_acts_the_same(
    pair: tuple[Any, Any], write: Write, probe: Any
) -> None:
    new, old = pair
    targets = differences(new, old, "a", {})
    if targets is None:
        return
    # The differences are exactly there: patching them gives the other lane, key order and all.
    assert identical(_patch_all(old, targets, new)["a"], new["a"])
    acts = [acts_on(write, target) for target in targets]
    if False in acts:
        return  # no claim: it acts on a difference by what it is
    after_new, after_old = _apply(new, write), _apply(old, write)
    if isinstance(after_new, Refused) or isinstance(after_old, Refused):
        assert (type(after_new), after_new) == (type(after_old), after_old)  # the same conflict on both sides
        return
    left = tuple(target for target, covered in zip(targets, acts, strict=True) if not covered)
    for target in left:
        if target.order:  # each side's keys of before first, then the same keys added since, in the same order
            first, was = list(get_path(new, target.path)), list(get_path(old, target.path))
            a, b = get_path(after_new, target.path), get_path(after_old, target.path)
            assert list(a)[: len(first)] == first
            assert [k for k in a if k not in first] == [k for k in b if k not in first and k not in was]
        elif target.at < 0:  # left alone on both sides (arrays may be appended to alike: patched below)
            assert identical(get_path(after_new, target.path), get_path(new, target.path))
            assert identical(get_path(after_old, target.path), get_path(old, target.path))
    if left:
        assert identical(_patch_all(after_old, left, new, old)["a"], after_new["a"])
    else:
        objects = isinstance(after_new, dict) and isinstance(after_old, dict)  # (else the whole roots are compared)
        assert identical(after_new.get("a"), after_old.get("a")) if objects else identical(after_new, after_old)
    probe = ("a", *probe)
    if not any(_past_start(target, probe) for target in targets):  # (such a probe refuses the patch: `patch_to`)
        assert _effect(write, new, probe) == _effect(write, old, probe)


def test_apart_at_names_a_path_where_two_values_differ_the_last_one_first() -> None:
    """`apart_at`: None for identical values (1 and 1.0, or keys in another order, are not); else a path as deep as
    objects of the same keys and arrays of one length lead; a path given as the last difference, checked first."""
    items = [{"status": "done", "n": 0}, {"status": "new", "n": 1}, {"status": "new", "n": 2}]
    changed = [dict(items[0]), items[1], {"status": "new", "n": 3}]
    assert apart_at({"a": items}, {"a": [dict(item) for item in items]}, None) is None
    assert apart_at({"a": items}, {"a": changed}, None) == ("a", "2", "n")
    assert apart_at({"a": items}, {"a": items[:2]}, None) == ("a",)  # (arrays of other lengths)
    assert apart_at({"n": 1}, {"n": 1.0}, None) == ("n",)
    assert apart_at({"x": 1, "y": 2}, {"y": 2, "x": 1}, None) == ()
    changed[1] = {"status": "done", "n": 1}
    assert apart_at({"a": items}, {"a": changed}, ("a", "2", "n")) == ("a", "2", "n")  # (not the first: "1")
    assert apart_at({"a": items}, {"a": changed}, ("a", "0")) == ("a", "1", "status")  # (alike there: walked)


def test_writes_that_cover_a_field_or_leave_it() -> None:
    """Each rule of `covers`, for a difference at a.b (so a is an object on both sides)."""
    target = ("a", "b")
    cases = [
        (Write(("a", "b"), "set", 1), True),
        (Write(("a",), "set", {}), True),
        (Write((), "set", 5), True),
        (Write(("a", "c"), "set", 1), None),
        (Write(("a", "b", "c"), "set", 1), False),  # inside it: depends on what it is
        (Write(("a", "b"), "merge", 1), True),
        (Write(("a", "b"), "merge", {"c": 1}), False),  # merged into what it is
        (Write(("a",), "merge", {"c": 1}), None),
        (Write(("a",), "merge", {"b": 2}), True),
        (Write(("a",), "merge", {"b": {"c": 1}}), False),
        (Write(("a",), "merge", 3), True),
        (Write((), "merge", {"a": {"b": [1]}}), True),
        (Write(("a",), "assign", {"b": {"c": 1}}), True),  # assign replaces the keys it names
        (Write(("a",), "assign", {"c": 1}), None),
        (Write(("a",), "assign", [1]), True),
        (Write(("a", "b"), "assign", {"c": 1}), False),
        (Write(("a", "b"), "push", 1), False),
        (Write(("a",), "concat", [1]), False),
        (Write(("a", "b"), "set", 1, problem="bad path"), None),
    ]
    assert [(write, covers(write, target)) for write, _ in cases] == cases


def test_the_differences_are_as_deep_as_the_same_keys_lead(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values differ where the keys above them are the same; an object whose keys are in another order is a
    difference of its own (after the others below it), and its values are compared further down; an object with
    other keys differs at each key one side lacks; two arrays below a lane, from the first element they differ at."""
    D = Difference
    new = {"a": {"x": 1, "b": {"c": 1, "d": [1]}}, "z": 0}
    assert differences(new, {"a": {"x": 1, "b": {"c": 2, "d": [1]}}, "z": 9}, "a", {}) == (D(("a", "b", "c")),)
    assert differences(new, {"a": {"x": 2, "b": {"c": 2, "d": [1]}}}, "a", {}) == (D(("a", "x")), D(("a", "b", "c")))
    assert differences(new, {"a": {"b": {"c": 1, "d": [1]}, "x": 1}}, "a", {}) == (D(("a",), order=True),)  # key order
    assert differences(new, {"a": {"b": {"d": [1], "c": 2}, "x": 1}}, "a", {}) == (
        D(("a", "b", "c")), D(("a", "b"), order=True), D(("a",), order=True),
    )
    assert differences(new, {"a": {"x": 1, "b": {"c": 1}}}, "a", {}) == (  # a key one side lacks
        D(("a", "b", "d")), D(("a", "b"), order=True),
    )
    assert differences(new, {"a": {"b": {"c": 1, "d": [1]}, "y": 1}}, "a", {}) == (  # and one the other lacks
        D(("a", "x")), D(("a", "y"), gone=True), D(("a",), order=True),
    )
    added = {"a": {f"k{n}": n for n in range(1000)}}
    assert differences({"a": {**added["a"], "new": 1}}, added, "a", {}) == (D(("a", "new")), D(("a",), order=True))
    # Arrays below a lane: apart from the start both have (a lane's own: `patch_to`); one empty, as values.
    assert differences(new, {"a": {"x": 1, "b": {"c": 1, "d": [2]}}}, "a", {}) == (D(("a", "b", "d"), at=0),)
    assert differences(new, {"a": {"x": 1, "b": {"c": 1, "d": [1, 3, 4]}}}, "a", {}) == (D(("a", "b", "d"), at=1),)
    assert differences(new, {"a": {"x": 1, "b": {"c": 1, "d": []}}}, "a", {}) == (D(("a", "b", "d")),)
    assert differences({"a": [1, 2]}, {"a": [1]}, None, {}) == (D(("a",)),)
    assert differences(new, {"b": 1}, "a", {}) is None  # not in the other
    assert differences([1], new, "a", {}) is None
    assert differences({"b": 1, "a": 1}, {"a": 1, "b": 1}, None, {}) is None  # the root's own keys in another order
    many = {"a": dict.fromkeys("pqrst", 0)}
    assert differences(many, {"a": dict.fromkeys("pqrst", 1)}, "a", {}) is None  # more than four
    monkeypatch.setattr(_patches, "MOST_DIFFERENCES", 5)
    assert differences(many, {"a": dict.fromkeys("pqrst", 1)}, "a", {}) == tuple(D(("a", k)) for k in "pqrst")


def test_a_key_only_the_old_side_has_stops_at_the_write_that_makes_it_again() -> None:
    """A key the new side lacks is taken out of the old roots (patched), until a write makes it again: that one
    would add it last on the new side alone, so it acts on the difference whatever it writes; a key only the new
    side has is put in, and a write that replaces it ends that difference as for any value."""
    gone, added = Difference(("a", "y"), gone=True), Difference(("a", "x"))
    cases = [
        (Write(("a", "y"), "set", 1), False, None),
        (Write(("a",), "merge", {"y": 1, "x": 2}), False, True),
        (Write(("a",), "assign", {"z": 1}), None, None),
        (Write(("a", "z"), "set", 1), None, None),
        (Write(("a",), "set", {}), False, True),
    ]
    assert [(write, acts_on(write, gone), acts_on(write, added)) for write, _, _ in cases] == cases
    old = {"a": {"y": 1, "z": 2}}
    assert patched(old, Patch(("a", "y"), MISSING, 1)) == {"a": {"z": 2}}
    assert list(patched(old, Patch(("a", "x"), 0, MISSING))["a"]) == ["y", "z", "x"]


def test_the_order_of_an_objects_keys_is_kept_by_every_write_that_does_not_replace_it() -> None:
    """Each rule of `acts_on` for objects at a.b whose keys are in two orders: writes inside it, and merges
    or assigns of objects into it, keep the order (and add new keys at the end); a write that replaces it
    ends the difference; any other write at it acts by what it is."""
    target = Difference(("a", "b"), order=True)
    cases = [
        (Write(("a", "b", "c"), "set", 1), None),  # inside it: a new key goes at the end on both sides
        (Write(("a", "b", "c", "d"), "push", 1), None),
        (Write(("a", "b"), "merge", {"c": 1}), None),
        (Write(("a",), "merge", {"b": {"c": 1}}), None),
        (Write(("a", "b"), "assign", {"c": 1}), None),
        (Write(("a", "c"), "set", 1), None),  # elsewhere
        (Write(("a", "b"), "set", {}), True),
        (Write(("a",), "assign", {"b": {"c": 1}}), True),
        (Write(("a",), "merge", {"b": 2}), True),
        (Write(("a", "b"), "push", 1), False),
        (Write(("a", "b"), "concat", [1]), False),
    ]
    assert [(write, acts_on(write, target)) for write, _ in cases] == cases
    # Patched, an object gets the new side's order first, then the keys added since.
    old = {"a": {"b": {"x": 1, "y": 2, "z": 3}}}
    assert list(patched(old, Patch(("a", "b"), ("y", "x"), ("x", "y"), order=True))["a"]["b"]) == ["y", "x", "z"]


def test_an_array_below_a_lane_is_kept_apart_past_the_start_both_have() -> None:
    """Two arrays below a lane that differ from element `at` on (`Difference.at`: a log with an entry put in): an
    append, a write into the start both have or under a key of the array acts alike on both; a write into an element
    past it acts on the difference; replacing the array covers it. The patch puts the new part back before what was
    appended since."""
    target = Difference(("a", "log"), at=2)
    acting = [
        (Write(("a", "log"), "push", 1), None), (Write(("a", "log"), "concat", [1]), None),
        (Write(("a", "log", "1"), "set", 1), None), (Write(("a", "log", "status"), "set", 1), None),
        (Write(("a", "other"), "push", 1), None), (Write(("a", "log", "2"), "set", 1), False),
        (Write(("a", "log", "5", "x"), "set", 1), False), (Write(("a", "log"), "set", []), True),
        (Write(("a",), "set", {}), True),
    ]
    assert [(write, acts_on(write, target)) for write, _ in acting] == acting
    new, old = {"a": {"log": [1, 2, 3]}}, {"a": {"log": [1, 2, 9, 3]}}
    assert differences(new, old, "a", {}) == (target,)
    assert patched({"a": {"log": [1, 2, 9, 3, 4]}}, patch_at(target, new, old)) == {"a": {"log": [1, 2, 3, 4]}}


@given(st.lists(st.tuples(st.integers(0, 6), st.lists(st.integers(0, 9), max_size=3), st.integers(0, 3)),
                min_size=1, max_size=6))
def test_patches_one_after_another_write_in_place_only_what_they_made(
    steps: list[tuple[int, list[int], int]]
) -> None:
    """Patches applied one after another with `owned` (a settle of a track's marks: a long array patched by several
    splices is copied once) give what copying at each gives, and leave the old root and every value it holds as it
    was (values are persistent)."""
    log = [{"n": n} for n in range(8)]
    root = {"a": {"log": log, "other": 1}, "b": 2}
    copied, in_place, owned, made = root, root, Owned(), None
    for at, new, dropped in steps:
        array = get_path(copied, ("a", "log"))
        at = min(at, len(array))
        patch = Patch(("a", "log"), new, array[at : at + dropped], prefix=True, at=at)
        copied, in_place = patched(copied, patch), patched(in_place, patch, owned)
        assert in_place == copied
        made = in_place["a"]["log"] if made is None else made
        assert in_place["a"]["log"] is made, "copied by the first patch, written in place by the others"
    key_patch = Patch(("a", "other"), MISSING, 1)
    assert patched(in_place, key_patch, owned) == patched(copied, key_patch) == {"a": {"log": made}, "b": 2}
    assert root == {"a": {"log": [{"n": n} for n in range(8)], "other": 1}, "b": 2}
    assert root["a"]["log"] is log


def test_the_writes_after_a_difference_cover_it_leave_it_or_stop() -> None:
    """`cover` reads the writes of a lane until each difference is covered, or one acts on it (each told by the
    write's order key: here, its id)."""
    writes = {
        1: Write(("a", "x"), "set", 1),  # covers a.x
        2: Write(("a", "y"), "set", 1),  # elsewhere
        3: Write(("a", "b", "c"), "set", 1),  # inside a.b: depends on it
        4: Write(("a", "b"), "set", 1),  # covers a.b
    }
    x, b = Difference(("a", "x")), Difference(("a", "b"))
    alone = Layer()  # (not the layer of these lists: every write of them is read)
    assert cover([1, 2, 3, 4], 0, writes, (x,), alone, int) == ((1,), None)
    assert cover([1, 2, 3, 4], 1, writes, (x,), alone, int) == ((None,), None)
    assert cover([1, 2, 3, 4], 0, writes, (x, b), alone, int) == ((1, None), 3)
    assert cover([1, 2, 4, 3], 0, writes, (x, b), alone, int) == ((1, 4), None)
    assert cover([1, 2, 3, 4], 0, writes, (x, b._replace(order=True)), alone, int) == ((1, 4), None)  # its keys' order


branch_writes = st.sampled_from(
    [
        Write(("a", "x"), "set", 1),
        Write(("a", "x", "c"), "set", 1),  # inside a target
        Write(("a", "y"), "set", {"c": 1}),
        Write(("a",), "merge", {"x": {"c": 2}}),  # reaches a.x
        Write(("a",), "merge", {"y": 2}),  # names another key: leaves a.x alone
        Write(("a",), "assign", {"x": 1}),
        Write(("a",), "set", {}),  # every key of the lane
        Write(("a",), "push", 1),
        Write((), "merge", {"a": {"x": {"c": 3}}}),
        Write((), "merge", {"a": {"y": 1}, "b": 1}),
        Write((), "set", {}),  # the root: every lane's
        Write(("b", "x"), "set", 1),
        Write(("a", "x"), "push", 1, problem="bad"),
        Write(("a", "x"), "merge", {"c": {"d": 1}}),  # reaches a.x.c.d
        Write(("a", "x", "c", "d"), "set", 1),
        Write(("a", "x"), "assign", {"c": 1}),
        Write(("a", "x", "c"), "merge", {"e": 1}),
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), branch_writes), max_size=30),
    st.lists(
        st.sampled_from([("a", "x"), ("a", "x", "c"), ("a", "y"), ("a", "y", "c"), ("a",), ("b", "x"),
                         ("a", "x", "c", "d"), ("a", "x", "e")]),
        min_size=1, max_size=3, unique=True,
    ),
    st.integers(0, 30),
    st.integers(0, 7),
)
def test_cover_reads_only_the_branches_of_its_targets_and_finds_the_same(
    added: list[tuple[int, Write]], paths: list[tuple[str, ...]], start: int, orders: int
) -> None:
    """Given the layer, `cover` reads only the writes of the keys its targets lie below, in the deepest node they
    share (`Layer.below`), and answers what reading every write of the lane answers; a target may be the order of
    an object's keys."""
    layer, written = Layer(), {}
    key = float  # ids are their own order keys
    for number, (slot, write) in enumerate(added):
        message_id = slot + number / 100
        written[message_id] = write
        layer.add(message_id, write, key)
    lanes = {path[0] for path in paths}
    assume(len(lanes) == 1)
    subset = layer.subset(lanes.pop())
    targets = tuple(Difference(path, order=bool(orders >> n & 1)) for n, path in enumerate(paths))
    position = min(start, len(subset))
    every = cover(subset, position, written, targets, Layer(), key)  # (not its layer: every write is read)
    for filed_from in (0, _patches.DEEP_FROM):  # a deeper node filed, or the lane's key read
        with mock.patch.object(_patches, "DEEP_FROM", filed_from):
            assert cover(subset, position, written, targets, layer, key) == every


ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "append", "discard"]),
        st.integers(0, 40),
        st.sampled_from(
            [
                Write(("a",), "push", 1),
                Write(("a",), "concat", [1]),
                Write(("a", "x"), "set", 1),
                Write((), "set", {}),
                Write(("b",), "push", 1),
                Write(("a",), "push", 1, problem="bad"),
            ]
        ),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_the_appending_tail_of_each_lane_is_kept_up_to_date(steps: list[tuple[str, int, Write]]) -> None:
    """Through any adds, appends and removes, where a lane's writes start only appending to its array is what a
    walk back from the end finds."""
    layer, written = Layer(), {}
    key = float  # ids are their own order keys
    for number, (op, slot, write) in enumerate(steps):
        if op == "append":
            written[1000 + number] = write  # after every write so far
            layer.append(1000 + number, write)
        elif op == "add":
            message_id = slot + number / 100  # distinct, anywhere in the order
            written[message_id] = write
            layer.add(message_id, write, key)
        elif written:
            message_id = sorted(written)[slot % len(written)]
            layer.discard(message_id, written.pop(message_id), key)
        for lane in ("a", "b"):
            subset = layer.subset(lane)
            walked = len(subset)
            while walked and _appends_at(written[subset[walked - 1]], lane):
                walked -= 1
            assert layer.appends_from(lane, written) == walked


array_ops = st.lists(
    st.tuples(
        st.sampled_from(["append", "add", "discard"]),
        st.integers(0, 40),
        st.sampled_from(
            [
                Write(("a",), "push", 1),
                Write(("a",), "concat", [1]),
                Write(("a", "x"), "set", 1),  # a key under the array: kept
                Write(("a", "0", "n"), "set", 1),  # into an element: kept below the common start
                Write(("a", "2"), "set", 1),
                Write(("a",), "set", []),  # replaces the array
                Write(("a",), "merge", {"x": 1}),  # acts on it by what it is
                Write((), "set", {}),  # the root: every lane's
                Write(("b",), "push", 1),
                Write(("a", "3"), "push", 1, problem="bad"),
            ]
        ),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(array_ops)
def test_what_a_layer_keeps_of_a_lanes_writes_is_what_they_say_read_afresh(
    steps: list[tuple[str, int, Write]],
) -> None:
    """Through appends, adds anywhere and removes, `keeps_start` answers from what the layer kept of the lane's
    writes (`once`) what reading them afresh does, from every position and for every common start."""
    layer, written = Layer(), {}
    key = float  # ids are their own order keys
    for number, (how, slot, write) in enumerate(steps):
        if how == "append":
            message_id = 100.0 + number  # after every other
            written[message_id] = write
            layer.append(message_id, write)
        elif how == "add":
            message_id = slot + number / 100  # distinct, anywhere in the order before the appended
            written[message_id] = write
            layer.add(message_id, write, key)
        elif written:
            message_id = sorted(written)[slot % len(written)]
            layer.discard(message_id, written.pop(message_id), key)
        subset = layer.subset("a")
        for position in (len(subset) // 2, len(subset), 0, len(subset) // 3, len(subset) // 2):  # on, and back
            afresh = keeps_start(Layer(), subset, position, written, "a")
            assert keeps_start(layer, subset, position, written, "a") == afresh


def test_a_layer_reads_a_lanes_writes_once_while_its_lists_stay_as_they_are() -> None:
    """A lane's writes read for one common start serve every other (a global push onto the array asks again
    one element further, of each instance layer under it); any write added or taken out reads them again."""

    class Counted(dict[int, Write]):
        reads = 0

        def __getitem__(self, message_id: int) -> Write:
            Counted.reads += 1
            return super().__getitem__(message_id)

    layer, written = Layer(), Counted()
    for message_id in range(300):
        shapes = Write(("a",), "push", 1), Write(("a", "x"), "set", 1), Write(("a", "0", "n"), "set", 1)
        write = shapes[message_id % 3]
        written[message_id] = write
        layer.append(message_id, write)
    subset = layer.subset("a")
    # (no write replaces the array, the largest index written into is 0: two arrays alike at it stay apart past it)
    assert keeps_start(layer, subset, 0, written, "a") == (None, False, 0)
    assert Counted.reads == 300
    assert keeps_start(layer, subset, 150, written, "a") == (None, False, 0)  # any position on, from what was read
    assert keeps_start(layer, subset, 0, written, "a") == (None, False, 0)
    assert Counted.reads == 300
    written[300] = appended = Write(("a", "5"), "set", 1)
    layer.append(300, appended)
    assert keeps_start(layer, subset, 0, written, "a") == (None, False, 5)
    assert Counted.reads == 300 + 301
    written[150.5] = replacing = Write(("a",), "set", [])  # type: ignore[index]
    layer.add(150.5, replacing, float)  # type: ignore[arg-type]
    assert keeps_start(layer, subset, 0, written, "a") == (151, True, 0)
    assert Counted.reads == 300 + 301 + 152
    assert keeps_start(layer, subset, 200, written, "a") == (None, False, 5)  # past that write: read from there
    assert Counted.reads == 300 + 301 + 152 + 102


def _appends_at(write: Write, lane: str) -> bool:
    return write.problem is None and write.method in ("push", "concat") and write.path == (lane,)


layer_writes = st.lists(
    st.sampled_from(
        [
            Write(("a",), "push", 1),
            Write(("a",), "set", 1),
            Write(("a", "x"), "set", 1),
            Write(("a", "x", "y"), "merge", {"z": 1}),
            Write(("a", "x"), "merge", {"y": {"z": 1}}),
            Write(("a", "x"), "assign", {"z": 2}),
            Write(("a", "x", "y", "z"), "set", 1),
            Write(("b",), "merge", {"x": 1, "y": 2}),
            Write(("c",), "set", 1),
            Write((), "set", {}),
            Write((), "merge", {"a": {"x": 1}, "d": 2}),
            Write((), "assign", {"b": 1}),
            Write(("a", "x"), "push", 1, problem="bad"),
        ]
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(layer_writes, st.integers(0, 30))
def test_a_write_appended_at_the_end_is_filed_as_one_added_there(writes: list[Write], cut: int) -> None:
    """`Layer.append` (what a context's append uses) files a write after every other exactly as `add` finds its
    place: the same ids in every lane, branch and tail. A lane's branches are made only when a write names
    one: writes at `a`, `c` or the root alone make none."""
    appended, added, key = Layer(), Layer(), float
    for message_id, write in enumerate(writes):
        if message_id < cut:  # the same start, made either way
            appended.add(message_id, write, key)
        else:
            appended.append(message_id, write)
        added.add(message_id, write, key)
    for name in Layer.__slots__:
        assert getattr(appended, name) == getattr(added, name), name
    assert ("c",) not in added.branches  # no write names a branch below `c`
    if Write(("a", "x"), "set", 1) in writes:
        assert "x" in added.branches[("a",)]


@settings(max_examples=200, deadline=None)
@given(layer_writes, st.sets(st.integers(0, 29)), st.integers(0, 30))
def test_a_branch_holds_exactly_the_writes_that_touch_it(writes: list[Write], removed: set[int], asked: int) -> None:
    """`Layer.below(node, key)` is every write that can touch `node.key`, in order, after writes are added and some
    taken out again: a lane's kept from the first write that names a key of it, a deeper node's filed when first asked
    (here after `asked` writes) and kept from then on. A lane none of whose writes names a key keeps no list of its
    own for it (`wide`)."""
    layer, key = Layer(), float
    nodes = [("a", "x"), ("a", "x", "y"), ("b", "x")]
    for message_id, write in enumerate(writes):
        if message_id == asked:
            for node in nodes:
                layer.below(node, "y", writes, key)
        layer.add(message_id, write, key)
    for message_id in removed & set(range(len(writes))):
        layer.discard(message_id, writes[message_id], key)
    kept = [i for i in range(len(writes)) if i not in removed]
    for node in [(lane,) for lane in "abcd"] + nodes:
        for name in "xyz":
            assert layer.below(node, name, writes, key) == [i for i in kept if touches(writes[i], (*node, name))], node
    assert ("c",) not in layer.wide
    assert set(layer.wide) == set(layer.branches)


def test_an_arrays_pushes_are_kept_once_not_once_per_index() -> None:
    """A list of items pushed onto a lane and marked by index (`items.N.status`): each push touches every index, and is
    kept once (`wide`), not in each index's list, which holds that index's own writes: what the layer keeps grows with
    the writes, not with writes times indices."""
    writes = [Write(("items",), "push", {"n": n}) if n % 2 == 0 else Write(("items", str(n // 4), "status"), "set", 1)
              for n in range(400)]
    layer = Layer()
    for message_id, write in enumerate(writes):
        layer.append(message_id, write)
    assert layer.wide[("items",)] == list(range(0, 400, 2))
    assert sum(map(len, layer.branches[("items",)].values())) == 200
    assert layer.below(("items",), "7", writes, int) == sorted([*range(0, 400, 2), 29, 31])


def test_a_layer_files_the_keys_of_the_deeper_nodes_last_asked_for() -> None:
    """A layer keeps the lists of the `MOST_DEEP` nodes below its lanes asked for last: asking for one more lets go of
    the one asked for longest ago, which is filed anew, from the lists that are, when asked for again."""
    writes = [Write(("runs", f"r{n % 3}", "steps", f"k{n}"), "set", n) for n in range(60)]
    layer = Layer()
    for message_id, write in enumerate(writes):
        layer.append(message_id, write)
    nodes = [("runs", f"r{n}", "steps") for n in range(MOST_DEEP + 1)]
    for node in nodes[:-1]:
        layer.below(node, "k3", writes, int)
    assert layer.below(nodes[0], "k0", writes, int) == [0]  # asked for again: now the last
    layer.below(nodes[-1], "k3", writes, int)
    assert layer.deep == [*nodes[2:-1], nodes[0], nodes[-1]]
    assert nodes[1] not in layer.branches
    layer.discard(4, writes[4], int)
    assert layer.below(nodes[1], "k7", writes, int) == [7]
    assert layer.below(nodes[1], "k4", writes, int) == []
    assert layer.deep == [*nodes[3:-1], nodes[0], nodes[-1], nodes[1]]


def test_a_lane_that_starts_appending_knows_where_its_tail_starts() -> None:
    """A lane whose first write appends keeps where its writes start to only append from then on (`Layer.tails`),
    made alike or added: the first repair that asks walks none of its writes (a log of thousands of pushes). A
    lane where nothing appends (a run's output: one a call) keeps nothing."""
    appended, added = Layer(), Layer()
    for message_id in range(1, 500):
        write = Write(("log",), "push", message_id) if message_id > 1 else Write(("log",), "concat", [0])
        appended.append(message_id, write)
        added.add(message_id, write, float)
        appended.append(1000 + message_id, Write((f"c{message_id}",), "set", message_id))
        added.add(1000 + message_id, Write((f"c{message_id}",), "set", message_id), float)
    assert appended.tails == added.tails == {"log": 0}
