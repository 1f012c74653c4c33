"""`resolve` of references nobody watches reads lane logs (`engine/_lanes.py`): equal to the reference fold
after any edits, at any cut, and kept or dropped as edits require."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from incremental_strategies import (
    INSTANCES,
    array_messages,
    compared_by_the_test,
    edits,
    exactly,
    expressions,
    lane_messages,
    messages,
    nested_messages,
    untidy_messages,
)
from incremental_strategies import paths as write_paths
from incremental_strategies import values as json_values
from strategies import wrap
from test_incremental import a_sixth_method, defaulting_messages, reference

from contextdeck.engine import Context
from contextdeck.engine.protocol._messages import Write, get_path
from contextdeck.engine.protocol._methods import WRITE_METHODS, Conflict, deep_merge, write_at
from contextdeck.engine.resolve import _keys
from contextdeck.engine.resolve._fold import _effect
from contextdeck.engine.resolve._incremental import _lanes
from contextdeck.engine.resolve._incremental._branches import touches, touching


@contextmanager
def marks_every(steps: int, most: int | None = None) -> Iterator[None]:
    """Logs keep a root every `steps` steps (small, so that `at` replays), and at most `most` steps."""
    saved = _lanes.MARK_EVERY, _lanes.MOST_STEPS, _lanes.STEPS_PER_MESSAGE
    _lanes.MARK_EVERY = steps
    if most is not None:
        _lanes.MOST_STEPS, _lanes.STEPS_PER_MESSAGE = most, 0
    try:
        yield
    finally:
        _lanes.MARK_EVERY, _lanes.MOST_STEPS, _lanes.STEPS_PER_MESSAGE = saved


@contextmanager
def chunks_of(size: int) -> Iterator[None]:
    """Sources kept in chunks of `size` keys (`_keys.CHUNK`): with a few, small documents have chunked sources."""
    saved = _keys.CHUNK
    _keys.CHUNK = size
    try:
        yield
    finally:
        _keys.CHUNK = saved


DOCUMENTS = {
    "mixed": messages(),
    "untidy": untidy_messages(),
    "lanes": lane_messages(),
    "nested": nested_messages(),
    "arrays": array_messages(),
}
REFERENCES = st.sampled_from(
    ["†s", "†s.a", "†s.a.0", "†s.a.b", "†s.a.b.c", "†s.b", "†s.b.x", "†s.b.0", "†s.b.0.x", "†s.c", "†s.c.d",
     "†s.c.d.e", "†s.0", "†t.a", "†s.a || †s.b", "†s.c.d && †s.a"]
)
READ = st.one_of(REFERENCES, expressions())  # made once: a strategy made per draw is validated again each time


def _check(ctx: Context, data: st.DataObject, most: int) -> None:
    """A few references, in random views and at random cuts, resolved (so logs are made and read) and
    compared with the reference fold."""
    messages = ctx.messages
    for _ in range(data.draw(st.integers(1, most))):
        expr = data.draw(READ)
        instance = data.draw(st.sampled_from(INSTANCES))
        at = data.draw(st.one_of(st.none(), st.integers(-1, len(messages) + 1)))
        with compared_by_the_test():
            got = exactly(ctx.resolve(expr, instance, at=at))
        assert got == exactly(reference(messages, expr, instance, at)), (expr, instance, at)


@pytest.mark.parametrize("shape", sorted(DOCUMENTS))
@pytest.mark.parametrize(("spacing", "most"), [(1, 100_000), (3, 100_000), (2, 6)])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_unwatched_resolve_equals_the_fold_after_every_edit(
    shape: str, spacing: int, most: int, data: st.DataObject
) -> None:
    """After every edit, unwatched references (whole kinds, lanes, paths under arrays, conflicts, `||`,
    `&&`), in the global and instance views and at any `at`, equal the fold from scratch: value, found,
    sources and every diagnostic. Logs made before an edit are read after it, unless it dropped them;
    with room for six steps only, logs are dropped for room too."""
    new = DOCUMENTS[shape]
    with marks_every(spacing, most), chunks_of(data.draw(st.sampled_from([_keys.CHUNK, 1, 2]))):
        ctx = Context(data.draw(st.lists(new, max_size=24)))
        _check(ctx, data, 6)
        for _ in range(data.draw(st.integers(1, 10))):
            ctx.apply(data.draw(edits(len(ctx), new)))
            _check(ctx, data, 4)


BRANCHES = st.sampled_from([("a",), ("b",), ("0",), ("a", "b"), ("a", "0"), ("b", "0", "a"), ("0", "a", "b")])


def _objects_above(root: Any, branch: tuple[str, ...]) -> bool:
    return all(isinstance(get_path(root, branch[:size]), dict) for size in range(len(branch)))


@st.composite
def _roots(draw: st.DrawFn, branch: tuple[str, ...]) -> Any:
    """A root whose nodes above `branch` are mostly objects: values merged in at random places along it."""
    root: Any = {}
    for _ in range(draw(st.integers(1, 3))):
        at = branch[: draw(st.integers(0, len(branch)))]
        root = deep_merge(root, wrap((*at, *draw(write_paths)), draw(json_values)))
    return root


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), path=write_paths, method=st.sampled_from(sorted(WRITE_METHODS)), new=json_values,
       branch=BRANCHES, below=write_paths)
def test_a_write_that_does_not_touch_a_branch_leaves_it_and_every_path_below_alone(
    data: st.DataObject, path: Any, method: str, new: Any, branch: tuple[str, ...], below: Any
) -> None:
    """While every node above a branch is an object, a write that does not touch it (`touches`) keeps them
    objects, leaves the value at the branch as it was, is no source of any path at or below it, and fails,
    if it does, with a problem of its own path only: so a path's fold may skip it (`_branches`)."""
    root = data.draw(_roots(branch))
    write = Write(path, method, new)
    if not _objects_above(root, branch) or touches(write, branch):
        return
    target = (*branch, *below)
    try:
        after = write_at(root, path, method, new)
    except Conflict:
        assert path[: len(target)] != target[: len(path)]  # not a problem of the path or anything above it
        return
    assert _objects_above(after, branch)
    assert get_path(after, branch) == get_path(root, branch)
    assert type(get_path(after, branch)) is type(get_path(root, branch))
    assert _effect(write, root, target) is None


@settings(max_examples=500, deadline=None)
@given(path=write_paths, method=st.sampled_from(sorted(WRITE_METHODS)), new=json_values, branch=BRANCHES)
def test_a_write_that_touches_a_branch_touches_every_node_above_it(
    path: Any, method: str, new: Any, branch: tuple[str, ...]
) -> None:
    """Touching is inherited upwards, so the writes of a branch are a subset of its parent's (`subsets_of`
    fills in the levels between the lane and the branch from the lane's writes)."""
    write = Write(path, method, new)
    if touches(write, branch):
        assert all(touches(write, branch[:size]) for size in range(len(branch)))
    expected = [0, 1, 2] if touches(write, branch) else []
    assert touching([0, 1, 2], dict.fromkeys(range(3), write), branch) == expected


def _state(lane: str, value: Any, instance: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "s", "s": {lane: value}, "_outputPath": f"†s.{lane}"}
    if instance is not None:
        message["_instance"] = instance
    return message


def test_an_edit_in_another_lane_keeps_the_log_and_one_in_the_lane_drops_it() -> None:
    """A log outlives edits that cannot change it (another lane, another instance) and is made again
    after one that can (its lane, a global write under an instance view)."""
    merged = {"type": "s", "s": {"a": {"y": 3}}, "_instance": "1"}  # plain data: merged at the root
    ctx = Context([_state("a", {"x": 1}), _state("b", 2), merged])
    assert ctx.resolve("†s.a", "1").value == {"x": 1, "y": 3}
    logs = dict(ctx._lanes._logs)
    ctx.append(_state("b", 5))
    ctx.insert(0, _state("c", 1, "2"))
    assert dict(ctx._lanes._logs) == logs
    assert ctx.resolve("†s.a", "1").sources == (1, 3)  # read from the kept logs
    assert ctx._lanes._logs[("s", "1", ("a",), 1)] is logs[("s", "1", ("a",), 1)]
    ctx.insert(2, _state("a", {"x": 7}))  # a global write in the lane: both views' logs go
    assert not ctx._lanes._logs
    resolution = ctx.resolve("†s.a.x", "1")
    assert (resolution.value, resolution.sources) == (7, (2,))


def test_an_append_looks_only_at_the_logs_it_can_change() -> None:
    """An appended write is checked against the logs of its lanes and of the whole kind, and those whose fold's gap
    is still open: a chain of calls, each reading what the one before wrote, keeps its cost a call constant."""
    ctx = Context([_state(f"c{n}", n) for n in range(50)])
    for n in range(50):
        ctx.resolve(f"†s.c{n}")
    looked: list[object] = []
    inside = _lanes._inside
    _lanes._inside = lambda log, key: looked.append(log) or inside(log, key)  # type: ignore[assignment,func-returns-value]
    try:
        ctx.append(_state("c50", 50))
        assert (looked, len(ctx._lanes._logs)) == ([], 50)
        ctx.append(_state("c7", 7))  # its lane's log goes, unasked
        assert (looked, len(ctx._lanes._logs)) == ([], 49)
        ctx.insert(0, _state("d", 1))  # not appended: every log of the kind is asked
        assert len(looked) == 49
    finally:
        _lanes._inside = inside


def test_an_instance_append_looks_only_at_its_instance_logs() -> None:
    """An appended instance write is checked against the logs of its own instance only: a run of instance calls,
    each reading its own output, keeps its cost a call constant however many instances keep logs."""
    ctx = Context([_state("r", n, str(n)) for n in range(50)])
    for n in range(50):
        assert ctx.resolve("†s.r", str(n)).value == n
    looked: list[object] = []

    class Counted(dict):  # type: ignore[type-arg]
        def get(self, key: Any, default: Any = None) -> Any:
            looked.append(key)
            return super().get(key, default)

    ctx._lanes._logs = Counted(ctx._lanes._logs)
    ctx.append(_state("r", 99, "7"))
    assert {key[:2] for key in looked} == {("s", "7")}  # type: ignore[index]
    assert (ctx.resolve("†s.r", "7").value, ctx.resolve("†s.r", "8").value) == (99, 8)


def test_an_append_in_another_lane_drops_a_log_whose_gap_is_open() -> None:
    """While the root is not an object a log's fold steps every write: an append in any lane can change it (here
    the root becomes an object, so the instance's push at the root meets another conflict)."""
    push = {"type": "s", "s": 1, "_outputPath": "†s", "_outputMethod": "push", "_instance": "1"}
    ctx = Context([{"type": "s", "s": 5, "_outputPath": "†s"}, push])
    assert ctx.resolve("†s.a", "1") == reference(ctx.messages, "†s.a", "1", None)
    ctx.append(_state("b", 1))
    assert not ctx._lanes._logs
    assert ctx.resolve("†s.a", "1") == reference(ctx.messages, "†s.a", "1", None)


def test_a_log_never_changes_a_value_it_showed() -> None:
    """A log writes in place only the containers it made since it last showed its root: its marks, and every value
    `resolve` gave out at any cut, stay as they were while the log folds on and replays other cuts."""
    document = [_state(f"k{n % 13}", {"n": n}) for n in range(60)]
    document += [{"type": "s", "s": n, "_outputPath": "†s.list", "_outputMethod": "push"} for n in range(30)]
    with marks_every(4):
        ctx = Context(document)
        shown = []
        for at in (10, 50, 30, 33, 75, 7, 90, None, 62, 63, 3):
            for expr in ("†s", "†s.list", "†s.k3"):
                resolution = ctx.resolve(expr, at=at)
                assert resolution == reference(ctx.messages, expr, None, at), (expr, at)
                shown.append((resolution.value, copy.deepcopy(resolution.value)))
            log = ctx._lanes._logs[("s", None, (), 0)]
            shown.extend((mark.root, copy.deepcopy(mark.root)) for mark in log.marks)
        assert all(value == was for value, was in shown)


def test_an_instance_view_at_a_cut_continues_from_the_global_log_there() -> None:
    """Time travel in an instance view reads one instance log per number of global writes before the cut:
    a cut moved past an instance write reads the same log, past a global write of the lane another."""
    ctx = Context([_state("a", 1), _state("a", 2, "1"), _state("a", 3, "1"), _state("a", 4), _state("a", 5, "1")])
    assert [ctx.resolve("†s.a", "1", at=at).value for at in (1, 2, 3)] == [1, 2, 3]
    assert set(ctx._lanes._logs) == {("s", None, ("a",), 0), ("s", "1", ("a",), 1)}
    assert ctx.resolve("†s.a", "1", at=4).sources == (2,)  # the global layer first, then the instance one
    assert ctx.resolve("†s.a", "1").sources == (4,)
    assert set(ctx._lanes._logs) == {("s", None, ("a",), 0), ("s", "1", ("a",), 1), ("s", "1", ("a",), 2)}


def test_logs_keep_at_most_their_budget_of_steps() -> None:
    """Past their budget of folded writes, logs read once are dropped, the newest first: a second pass over
    more paths than fit finds the first one kept (dropping the oldest, it would find none). A log read again
    is kept before those, and results stay exact."""
    document = [_state(lane, n) for n in range(5) for lane in "abcdefgh"]
    with marks_every(2, most=12):
        ctx = Context(document)
        logs = ctx._lanes._logs
        for lane in "abcdefgh":
            assert ctx.resolve(f"†s.{lane}").sources == (32 + "abcdefgh".index(lane),)
            assert ctx._lanes._steps <= 12
        assert set(logs) == {("s", None, ("a",), 0), ("s", None, ("h",), 0)}
        for lane in "abcdefgh":
            kept = ("s", None, (lane,), 0) in logs
            assert ctx.resolve(f"†s.{lane}").sources == (32 + "abcdefgh".index(lane),)
            assert kept == (lane == "a")
        assert ("s", None, ("a",), 0) in logs  # read twice: kept before the logs read once
        ctx.resolve("†s.c")
        ctx.resolve("†s.c")
        ctx.resolve("†s.d")  # room for two logs of 5 steps: the one read once goes
        assert set(logs) == {("s", None, ("c",), 0), ("s", None, ("d",), 0)}


def test_logs_keep_as_many_steps_as_the_document_has_messages_times_two() -> None:
    """The budget grows with the document: 80 messages keep 160 folded steps, though `MOST_STEPS` is 12."""
    document = [_state(lane, n) for n in range(10) for lane in "abcdefgh"]
    with marks_every(2, most=12):
        _lanes.STEPS_PER_MESSAGE = 2
        ctx = Context(document)
        for lane in "abcdefgh":
            ctx.resolve(f"†s.{lane}")
        assert ctx._lanes._steps >= 80
        assert len(ctx._lanes._logs) == 8


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_layer_keeps_the_writes_of_every_branch_below_a_node(data: st.DataObject) -> None:
    """After random edits, `Layer.below(node, key)` holds exactly the ids of the layer's writes that touch the
    branch `node.key`, in order (what a path's fold and `cover` read instead of filtering the lane): a lane's
    kept from the start, a deeper node's filed when first asked and kept through the edits after it."""
    new = data.draw(st.sampled_from(sorted(DOCUMENTS)))
    ctx = Context(data.draw(st.lists(DOCUMENTS[new], max_size=16)))
    store = ctx._store
    branches = [("a", "b"), ("a", "0"), ("b", "x"), ("b", "0"), ("c", "d"), ("0", "a"), ("x", "y"),
                ("a", "b", "c"), ("a", "b", "0"), ("a", "0", "x"), ("b", "x", "y", "z")]

    def check() -> None:
        for layer in store.layers.values():
            for branch in branches:
                expected = [m for m in layer.all if touches(store.writes[m], branch)]
                found = layer.below(branch[:-1], branch[-1], store.writes, store.order.key.__getitem__)
                assert found == expected, branch

    check()
    for _ in range(data.draw(st.integers(0, 8))):
        ctx.apply(data.draw(edits(len(ctx), DOCUMENTS[new])))
        check()


def test_a_resolve_at_a_cut_folds_up_to_the_cut_and_a_later_one_goes_on() -> None:
    """Time travel folds a path's writes only as far as the cut; a resolve past it continues the same log
    from where it stopped (the marks and the steps before stay), and every result equals the fold."""
    document = [_state("a", n) if n % 2 else _state("b", n, "1") for n in range(40)]
    with marks_every(4):
        ctx = Context(document)
        messages = ctx.messages
        assert ctx.resolve("†s.a", at=10).value == 9
        log = ctx._lanes._logs[("s", None, ("a",), 0)]
        assert len(log.ids) == 5
        assert log.fold is not None
        assert ctx._lanes._steps == 5
        for at in (30, 12, None, 3):
            assert ctx.resolve("†s.a", at=at) == reference(messages, "†s.a", None, at), at
        assert ctx._lanes._logs[("s", None, ("a",), 0)] is log
        assert len(log.ids) == 20
        assert log.fold is None
        assert ctx._lanes._steps == 20


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_sixth_method_needs_nothing_more_of_path_logs(data: st.DataObject) -> None:
    """A write method registered as one more record after the engine was imported (`default`: write only
    where nothing is yet) is indexed a level down and folded into path logs like the five: unwatched
    resolves equal the fold after every edit."""
    with a_sixth_method():
        ctx = Context(data.draw(st.lists(defaulting_messages(), max_size=16)))
        _check(ctx, data, 6)
        for _ in range(data.draw(st.integers(1, 6))):
            ctx.apply(data.draw(edits(len(ctx), defaulting_messages())))
            _check(ctx, data, 4)


@pytest.mark.parametrize("shape", sorted(DOCUMENTS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # big documents drawn
@given(data=st.data())
def test_a_first_fold_in_slices_equals_one_in_one_go_and_the_fold(shape: str, data: st.DataObject) -> None:
    """`fold_ahead` folds a path's logs a few steps per call (never more than it is given), edits may come
    between two calls, and once it says all is folded, `resolve` folds nothing more: its result equals a
    twin context's resolved in one go, and the reference fold."""
    new = DOCUMENTS[shape]
    with marks_every(data.draw(st.integers(1, 4))), chunks_of(data.draw(st.sampled_from([_keys.CHUNK, 1, 2]))):
        document = data.draw(st.lists(new, max_size=24))
        sliced, whole = Context(document), Context(document)
        for _ in range(data.draw(st.integers(1, 5))):
            expr = data.draw(READ)
            instance = data.draw(st.sampled_from(INSTANCES))
            at = data.draw(st.one_of(st.none(), st.integers(-1, len(sliced) + 1)))
            steps = data.draw(st.integers(1, 5))
            for _ in range(10_000):
                if data.draw(st.integers(0, 9)) == 0:  # an edit between two slices
                    edit = data.draw(edits(len(sliced), new))
                    sliced.apply(edit)
                    whole.apply(edit)
                before = sliced._lanes._steps
                done = sliced.fold_ahead(expr, instance, at, steps=steps)
                assert sliced._lanes._steps - before <= steps
                if done:
                    break
            else:
                pytest.fail("never folded")
            before = sliced._lanes._steps
            got = sliced.resolve(expr, instance, at=at)
            assert sliced._lanes._steps == before  # all folded ahead
            assert got == whole.resolve(expr, instance, at=at) == reference(sliced.messages, expr, instance, at)


def test_a_whole_kind_folded_in_slices_takes_one_call_per_slice() -> None:
    """A whole kind's first fold of 40 writes, 8 steps at a time: the fifth call folds the last 8 and says it is
    done, and the resolve after it folds nothing and equals the fold."""
    document = [_state("abcd"[n % 4], n) for n in range(40)]
    ctx = Context(document)
    answers = [ctx.fold_ahead("†s", steps=8) for _ in range(5)]
    assert answers == [False] * 4 + [True]
    assert ctx._lanes._steps == 40
    assert ctx.resolve("†s") == reference(ctx.messages, "†s", None, None)
    assert ctx._lanes._steps == 40


def test_two_references_whose_logs_pass_the_bound_are_folded_ahead_to_the_end() -> None:
    """`†s.a && †s.b` over logs of 40 steps each, with room for 50: folded 8 steps at a time, the second's fold
    does not drop the first's log (held while the expression is folded ahead), so the fold ahead ends; before,
    each dropped the other at every call and it never did."""
    document = [_state("ab"[n % 2], n) for n in range(80)]
    with marks_every(8, most=50):
        ctx = Context(document)
        answers = [ctx.fold_ahead("†s.a && †s.b", steps=8) for _ in range(11)]
        assert answers[-1], "the fold ahead never ended"
        assert ctx.resolve("†s.a && †s.b") == reference(ctx.messages, "†s.a && †s.b", None, None)


def test_a_value_read_at_a_cut_stays_as_it_was_when_its_log_folds_on() -> None:
    """A log of pushes appends in place to an array it made since its last mark; an array it gave away (a
    result at a cut, a mark, an instance log's start) is never appended to: each stays what it was."""
    document = [{**_state("a", n), "_outputMethod": "push"} for n in range(50)]
    document += [{**_state("a", n, "1"), "_outputMethod": "push"} for n in range(50, 60)]
    with marks_every(64):
        ctx = Context(document)
        early = ctx.resolve("†s.a", at=20).value
        assert early == list(range(20))
        mine = ctx.resolve("†s.a", "1").value
        assert mine == list(range(60))
        assert ctx.resolve("†s.a").value == list(range(50))
        assert early == list(range(20))
        assert mine == list(range(60))
        assert ctx.resolve("†s.a", "1", at=55) == reference(ctx.messages, "†s.a", "1", 55)


def test_an_instances_whole_kind_is_merged_with_the_global_one_in_the_slices_of_its_fold() -> None:
    """An instance's whole kind has its own writes' keys among its kind's global ones as sources: at a million
    messages, merging them is milliseconds. `fold_ahead` merges them a piece per `MERGE_STEPS` of its steps,
    after the folds, and the resolve after it merges nothing; its sources are the fold's."""
    document = [_state("abcd"[n % 4], n, "i" if n % 3 else None) for n in range(90)]
    pieces: list[bool] = []  # per piece merged, whether a resolve merged it
    resolving = [False]
    step = _keys.Merging.step

    def counted(merging: _keys.Merging) -> _keys.Keys | None:
        if merging.result is None:
            pieces.append(resolving[0])
        return step(merging)

    with chunks_of(4), pytest.MonkeyPatch.context() as patch:
        patch.setattr(_keys.Merging, "step", counted)
        ctx = Context(document)
        calls = 0
        while not ctx.fold_ahead("†s", "i", 80, steps=2 * _lanes.MERGE_STEPS):
            calls += 1
            assert calls < 100, "never folded"
        folded = len(pieces)
        resolving[0] = True
        got = ctx.resolve("†s", "i", 80)
    assert folded > 2
    assert not any(pieces)
    assert got == reference(ctx.messages, "†s", "i", 80)
