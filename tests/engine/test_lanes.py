"""`resolve` of references nobody watches reads lane logs (`engine/_lanes.py`): equal to the reference fold
after any edits, at any cut, and kept or dropped as edits require."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import (
    INSTANCES,
    array_messages,
    edits,
    expressions,
    lane_messages,
    messages,
    nested_messages,
    untidy_messages,
)
from incremental_strategies import paths as write_paths
from incremental_strategies import values as json_values
from test_incremental import reference

from contextdeck.engine import Context, _lanes
from contextdeck.engine._fold import _effect
from contextdeck.engine._lanes import along, effect, reduced, toward
from contextdeck.engine._messages import Write, get_path
from contextdeck.engine._methods import WRITE_METHODS, Conflict, write_at


@contextmanager
def marks_every(steps: int, most: int | None = None) -> Iterator[None]:
    """Logs keep a root every `steps` steps (small, so that `at` replays), and at most `most` steps."""
    saved = _lanes.MARK_EVERY, _lanes.MOST_STEPS
    _lanes.MARK_EVERY = steps
    if most is not None:
        _lanes.MOST_STEPS = most
    try:
        yield
    finally:
        _lanes.MARK_EVERY, _lanes.MOST_STEPS = saved


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


def _check(ctx: Context, data: st.DataObject, most: int) -> None:
    """A few references, in random views and at random cuts, resolved (so logs are made and read) and
    compared with the reference fold."""
    messages = ctx.messages
    for _ in range(data.draw(st.integers(1, most))):
        expr = data.draw(st.one_of(REFERENCES, expressions()))
        instance = data.draw(st.sampled_from(INSTANCES))
        at = data.draw(st.one_of(st.none(), st.integers(-1, len(messages) + 1)))
        assert ctx.resolve(expr, instance, at=at) == reference(messages, expr, instance, at), (expr, instance, at)


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
    with marks_every(spacing, most):
        ctx = Context(data.draw(st.lists(new, max_size=24)))
        _check(ctx, data, 6)
        for _ in range(data.draw(st.integers(1, 10))):
            ctx.apply(data.draw(edits(len(ctx), new)))
            _check(ctx, data, 4)


@settings(max_examples=300, deadline=None)
@given(before=json_values, new=json_values, rest=write_paths)
def test_every_method_reads_no_more_of_the_value_before_it_than_its_reduction(before: Any, new: Any, rest: Any) -> None:
    """A method's effect on any path at or below its own is the same on the reduced value (an array's
    length, the keys the new value names): a sixth method whose effect reads more fails here."""
    for method in WRITE_METHODS.values():
        assert method.effect(reduced(before, new), new, rest) == method.effect(before, new, rest), method.name


@settings(max_examples=500, deadline=None)
@given(root=json_values, path=write_paths, method=st.sampled_from(sorted(WRITE_METHODS)), new=json_values,
       lane=st.sampled_from([None, "a", "b", "0"]), below=write_paths)
def test_a_write_shape_tells_its_effect_on_any_path_of_its_log(
    root: Any, path: Any, method: str, new: Any, lane: str | None, below: Any
) -> None:
    """What a log keeps of the root before a write (`along`, and `reduced` along `toward`) gives
    `_fold._effect` on any path the log is read for: the lane and below it, or a whole kind's root."""
    write = Write(path, method, new)
    try:
        write_at(root, path, method, new)
    except Conflict:
        return  # a failed write has no effect: logs keep its problem instead
    containers, before = along(root, path)
    assert before is get_path(root, path)
    shape = containers, reduced(before, toward(write, lane))
    target = () if lane is None else (lane, *below)
    assert effect(write, *shape, target) == _effect(write, root, target)


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
    assert ctx.resolve("†s.a.x", "1").value == 1
    logs = dict(ctx._lanes._logs)
    ctx.append(_state("b", 5))
    ctx.insert(0, _state("c", 1, "2"))
    assert dict(ctx._lanes._logs) == logs
    assert ctx.resolve("†s.a.y", "1").sources == (3,)  # another path, read from the kept log
    assert ctx._lanes._logs[("s", "1", "a", 1)] is logs[("s", "1", "a", 1)]
    ctx.insert(2, _state("a", {"x": 7}))  # a global write in the lane: both views' logs go
    assert not ctx._lanes._logs
    resolution = ctx.resolve("†s.a.x", "1")
    assert (resolution.value, resolution.sources) == (7, (2,))


def test_an_instance_view_at_a_cut_continues_from_the_global_log_there() -> None:
    """Time travel in an instance view reads one instance log per number of global writes before the cut:
    a cut moved past an instance write reads the same log, past a global write of the lane another."""
    ctx = Context([_state("a", 1), _state("a", 2, "1"), _state("a", 3, "1"), _state("a", 4), _state("a", 5, "1")])
    assert [ctx.resolve("†s.a", "1", at=at).value for at in (1, 2, 3)] == [1, 2, 3]
    assert set(ctx._lanes._logs) == {("s", None, "a", 0), ("s", "1", "a", 1)}
    assert ctx.resolve("†s.a", "1", at=4).sources == (2,)  # the global layer first, then the instance one
    assert ctx.resolve("†s.a", "1").sources == (4,)
    assert set(ctx._lanes._logs) == {("s", None, "a", 0), ("s", "1", "a", 1), ("s", "1", "a", 2)}


def test_logs_keep_at_most_their_budget_of_steps() -> None:
    """Past `MOST_STEPS` folded writes the least recently read logs are dropped; results stay exact."""
    document = [_state(lane, n) for n in range(5) for lane in "abcdefgh"]
    with marks_every(2, most=12):
        ctx = Context(document)
        for lane in "abcdefgh":
            assert ctx.resolve(f"†s.{lane}").sources == (32 + "abcdefgh".index(lane),)
            assert ctx._lanes._steps <= 12
        assert ("s", None, "h", 0) in ctx._lanes._logs
        assert ("s", None, "a", 0) not in ctx._lanes._logs
