"""The pieces whole-kind repairs (`_whole`) are made of: writing into one lane's value alone, and the
sources of a repaired fold edited in place."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_incremental import reference

from contextdeck.engine import Context, Replace
from contextdeck.engine.protocol._expressions import parse_expression
from contextdeck.engine.protocol._messages import MISSING
from contextdeck.engine.protocol._methods import WRITE_METHODS, Conflict, write_at, write_below
from contextdeck.engine.resolve import _keys
from contextdeck.engine.resolve._incremental._whole import _edited_sources
from contextdeck.engine.resolve._keys import Ids

SEGMENTS = ("a", "b", "0", "1")
scalars = st.one_of(st.none(), st.booleans(), st.integers(0, 2), st.just("x"))
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(SEGMENTS), inner, max_size=3)),
    max_leaves=6,
)


def _outcome(write: Any) -> tuple[str, Any]:
    try:
        return "applied", write()
    except Conflict as conflict:
        return "failed", conflict.reason


@settings(max_examples=400, deadline=None)
@given(
    root=st.dictionaries(st.sampled_from(SEGMENTS), values, max_size=3),
    path=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map(tuple),
    method=st.sampled_from(sorted(WRITE_METHODS)),
    new=values,
)
def test_writing_into_a_lane_alone_is_writing_at_the_root(root: dict[str, Any], path: tuple[str, ...], method: str,
                                                          new: Any) -> None:
    """`write_below` of the lane's value gives what `write_at` of the whole root leaves in that lane, and
    fails with the very same reason (it names the whole path)."""
    lane = path[0]
    whole = _outcome(lambda: write_at(root, path, method, new).get(lane, MISSING))
    alone = _outcome(lambda: write_below(root.get(lane, MISSING), path, method, new))
    assert alone == whole
    if whole[0] == "failed":
        assert Conflict(whole[1]).reported(method, path).startswith(f"{method} at {'.'.join(path)}: ")


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_sources_edited_in_place_equal_the_sorted_set(data: st.DataObject) -> None:
    """A repaired fold's sources: the new head (or the old one kept), then the old ones past the old head
    less the lost and with the gained in key order, whichever of them lie at the same place or at either
    end; from a tuple or from `Ids` in chunks of any size, with a head of either."""
    saved, _keys.CHUNK = _keys.CHUNK, data.draw(st.integers(1, 8))
    try:
        keys = data.draw(st.lists(st.integers(0, 60), unique=True, max_size=40).map(sorted))
        key_of = dict(zip(range(100, 100 + len(keys)), keys, strict=True))
        ids = list(key_of)
        cut = data.draw(st.integers(0, len(ids)))
        sources = tuple(ids) if data.draw(st.booleans()) else Ids(ids)
        lost = set(data.draw(st.lists(st.sampled_from(ids[cut:]), unique=True)) if ids[cut:] else [])
        free = [k for k in range(61) if k not in keys]
        gained = []
        for number, k in enumerate(data.draw(st.lists(st.sampled_from(free), unique=True, max_size=4))):
            key_of[1000 + number] = k
            gained.append(1000 + number)
        head = data.draw(st.none() | st.lists(st.integers(500, 600), max_size=9).map(tuple))  # None: the same
        if head is not None and data.draw(st.booleans()):
            head = Ids(head)
        before = tuple(sources[:cut]) if head is None else tuple(head)
        kept = [m for m in sources[cut:] if m not in lost]
        expected = before + tuple(sorted(kept + gained, key=key_of.__getitem__))
        got = _edited_sources(sources, cut, head, lost, gained, key_of.__getitem__)
        assert tuple(got) == expected
        if not (lost or gained) and (head is None or not (head or cut)):
            assert got is sources  # nothing to change: the very same tuple, which results compare by identity
        else:
            assert type(got) is Ids
            assert got == Ids(expected)
            assert len(got) == len(expected)
            assert [got[i] for i in range(len(got))] == list(expected)
    finally:
        _keys.CHUNK = saved


def test_edited_sources_copy_only_the_chunks_they_change() -> None:
    """An edit of a whole kind's sources copies the chunks it falls in, and shares the others (the head's
    included when an instance fold's global part is replaced by the global fold's own `Ids`)."""
    keys = {m: m * 10 for m in range(5000)}
    sources = Ids(range(5000))
    edited = _edited_sources(sources, 0, None, {2600}, [], keys.__getitem__)
    assert isinstance(edited, Ids)
    assert tuple(edited) == (*range(2600), *range(2601, 5000))
    shared = {id(chunk) for chunk in sources._chunks} & {id(chunk) for chunk in edited._chunks}
    assert len(shared) == len(sources._chunks) - 1
    head = Ids(range(10000, 12048))
    keys.update({m: m * 10 for m in range(10000, 12048)})
    keys[7777] = 26005
    instance = _edited_sources(edited, 1024, head, set(), [7777], keys.__getitem__)
    assert tuple(instance) == (*range(10000, 12048), *range(1024, 2600), 7777, *range(2601, 5000))
    assert all(any(chunk is mine for mine in instance._chunks) for chunk in head._chunks)


def _counted_steps(monkeypatch: Any) -> list[int]:
    """A one-item list counting the writes whole-kind repairs fold into a lane from now on."""
    from contextdeck.engine.resolve._incremental import _whole

    steps = [0]
    step = _whole._step

    def counted(*args: Any) -> Any:
        steps[0] += 1
        return step(*args)

    monkeypatch.setattr(_whole, "_step", counted)
    return steps


def _state(data: object, **extra: object) -> dict[str, object]:
    return {"type": "state", "data": data, **extra}


def test_a_difference_kept_apart_is_folded_only_at_the_writes_that_act_on_it(monkeypatch: Any) -> None:
    """A replace early in a lane makes `k.x` an object where it was a number; of the 300 later writes of
    the lane only two act on `k.x` (they write keys into it). The whole-kind repair folds the old side from
    a lane mark up to each of them and patches it, instead of folding both sides write by write; the lane
    marks it leaves in between (the old ones, patched) serve later edits there. Every result is the fold's."""
    from contextdeck.engine import Context

    messages = [_state({"k": {"x": 0, "y": 0}})]
    for n in range(300):
        where = {100: ("x", "b"), 200: ("x", "c")}.get(n, ("y",))
        data: object = n
        for segment in reversed(("k", *where)):
            data = {segment: data}
        messages.append(_state(data, _outputPath="†state.k." + ".".join(where)))
    ctx = Context(messages)
    handle = ctx.watch("†state", lambda _: None)
    ctx.replace(300, messages[300])  # the lane's first repair folds it from the start: a mark every 16 writes
    steps = _counted_steps(monkeypatch)
    ctx.replace(2, _state({"k": {"x": {"a": 1}}}, _outputPath="†state.k.x"))
    assert steps[0] < 100  # both sides stepped over every later write: about 600
    assert handle.current == Context(ctx.messages).resolve("†state")
    assert handle.current.value["k"] == {"x": {"a": 1, "b": 100, "c": 200}, "y": 299}
    for index in (150, 120, 260):  # edits in between resume from the marks the repair left
        ctx.replace(index, _state({"k": {"y": -index}}, _outputPath="†state.k.y"))
        assert handle.current == Context(ctx.messages).resolve("†state")
    ctx.insert(180, _state({"k": {"x": 7}}, _outputPath="†state.k.x"))
    assert handle.current == Context(ctx.messages).resolve("†state")
    assert handle.current.value["k"]["x"] == {"c": 200}


def test_a_whole_kind_track_folded_from_scratch_keeps_lane_marks(monkeypatch: Any) -> None:
    """A whole-kind track folded from scratch keeps a lane mark every few writes of each lane, so that the
    first repair of a lane folds it from a mark just before the edit, not from the start of the layer (290
    writes here, each folded once more); every result is still the fold's."""
    from contextdeck.engine import Context

    messages = [_state({"k": {"x": n, "y": -n}}, _outputPath="†state.k") for n in range(300)]
    messages[150] = _state({"other": 1})
    ctx = Context(messages)
    handle = ctx.watch("†state", lambda _: None)
    steps = _counted_steps(monkeypatch)
    ctx.replace(290, _state({"k": {"x": "new"}}, _outputPath="†state.k"))
    assert steps[0] < 40  # from the start of the layer: about 300
    assert handle.current == Context(ctx.messages).resolve("†state")
    assert handle.current.value == {"k": {"x": 299, "y": -299}, "other": 1}
    for index in (10, 150, 150, 295):
        ctx.remove(index)
        assert handle.current == Context(ctx.messages).resolve("†state")


def test_edited_sources_keep_their_tail_for_appends() -> None:
    """An instance fold's sources, grown by appends and edited under a changed global part again and again,
    stay in a few chunks: the tail appends grew stays the tail (sealed at each edit, it made a chunk of a few
    items each time)."""
    keys = {m: m for m in range(100_000)}
    own = list(range(50_000, 53_000))
    head: tuple[int, ...] = tuple(range(2000))
    sources = _edited_sources(Ids(own), 0, head, set(), [], keys.__getitem__)
    for round_ in range(300):
        sources = sources.plus([60_000 + 3 * round_, 60_001 + 3 * round_])  # (the instance layer's appends)
        grown = (*head, 10_000 + round_)
        sources = _edited_sources(sources, len(head), grown, set(), [], keys.__getitem__)
        head = grown
    assert isinstance(sources, Ids)
    assert tuple(sources) == (*head, *own, *sorted(60_000 + 3 * r + k for r in range(300) for k in (0, 1)))
    assert len(sources._chunks) <= 2 * len(sources) // _keys.CHUNK + 2


def test_a_failed_global_write_leaves_an_instance_whole_kinds_sources_as_they_are() -> None:
    """A global push onto a string fails: the global fold's problems grow, its sources do not. The instance
    view's whole kind then keeps its very sources (thousands, not copied) and gains the problem; every
    result is the fold's."""
    from contextdeck.engine import Context

    messages = [_state({"log": "not an array", "k": 0}, _outputPath="†state")]
    messages += [_state({"k": n}, _outputPath="†state.k", _instance="1") for n in range(50)]
    ctx = Context(messages)
    handle = ctx.watch("†state", lambda _: None, instance="1")
    track = ctx._watchers._tracks["state", "1", None]
    assert track.fold is not None
    kept = track.fold.state.probes[0].sources
    ctx.append(_state({"log": {"n": 1}}, _outputPath="†state.log", _outputMethod="push"))
    assert track.fold.state.probes[0].sources is kept
    assert handle.current == Context(ctx.messages).resolve("†state", "1")
    assert [d.message_index for d in handle.current.diagnostics] == [51]
    ctx.append(_state({"k": -1}, _outputPath="†state.k"))  # one that applies: a source of both layers
    assert handle.current == Context(ctx.messages).resolve("†state", "1")
    assert handle.current.sources == (0, *range(1, 51), 52)


def test_a_write_moved_between_layers_tells_how_an_instance_whole_kinds_sources_changed(monkeypatch: Any) -> None:
    """A replace that moves a write from the global layer to an instance layer (and back) repairs the
    instance whole kind in two halves; halfway the write may be a source of both layers. The two halves'
    changes are told as one (counted, `SourceEdit.net`), so the result's keys are the old ones edited, not
    found by comparing the thousands of sources; every result is the fold's, whether the write applies or
    fails on either side."""
    from contextdeck.engine import Context
    from contextdeck.engine.resolve._incremental import _watches

    messages = [_state({"k": n, "log": []}) for n in range(30)]
    messages += [_state({"k": n}, _instance="1") for n in range(40)]
    messages += [_state({"m": n}) for n in range(30)]
    told: list[bool] = []
    grown = _watches._grown

    def spy(state: Any, probe: Any, old: Any, *args: Any, **kwargs: Any) -> Any:
        if not probe.path:
            told.append(any(edit.sources is old.sources for edit in probe.edits))
        return grown(state, probe, old, *args, **kwargs)

    ctx = Context(messages)
    handles = [ctx.watch("†state", lambda _: None, instance=view) for view in (None, "1")]
    monkeypatch.setattr(_watches, "_grown", spy)
    replacements = [
        (10, _state({"k": -1}, _instance="1")),  # global to instance, applies on both sides
        (10, messages[10]),  # and back
        (85, _state({"m": -1}, _instance="1")),  # after the instance layer's writes
        (85, _state({"log": 1}, _outputPath="†state.log", _outputMethod="push")),  # back, a push
        (20, _state({"log": 2}, _outputPath="†state.k", _outputMethod="push", _instance="1")),  # one that fails
        (20, messages[20]),
    ]
    for index, message in replacements:
        told.clear()
        ctx.replace(index, message)
        fresh = Context(ctx.messages)
        for view, handle in zip((None, "1"), handles, strict=True):
            assert handle.current == fresh.resolve("†state", view)
        assert told
        assert all(told), (index, told)


def test_a_replaced_root_write_that_names_the_lanes_it_creates_in_another_order_orders_the_root_again() -> None:
    """A data message at the root of a kind creates `c` and `d` in its own order; replaced by one that names
    them the other way round, neither lane's first write moved, yet the root's keys follow the new order
    (a hypothesis example of `test_whole_kind_watches_follow_every_edit`)."""
    document = [
        {"type": "s", "s": {"a": None}},
        {"type": "s", "s": {"c": None, "d": None}, "_instance": "1"},
        {"type": "s", "s": {"a": None}},
    ]
    ctx = Context(json.loads(json.dumps(document)))
    handles = [ctx.watch("†s", lambda _: None, instance=view) for view in (None, "1")]
    ctx.apply(Replace(index=1, message={"type": "s", "s": {"d": None, "a": None, "c": None}, "_instance": "1"}))
    for handle, view in zip(handles, (None, "1"), strict=True):
        fresh = Context(ctx.messages).resolve("†s", view)
        assert handle.current == fresh
        assert json.dumps(handle.current.value) == json.dumps(fresh.value)  # {"a", "d", "c"}: key order too


def test_an_instance_whole_kind_follows_a_global_change_whose_sources_nobody_told(monkeypatch: Any) -> None:
    """A global layer that sets its root (so it is not repaired lane by lane) gains a merge of many new keys
    in the middle of the context: its fold is folded on to the end and does not tell how its sources changed.
    The instance whole kind above it is still repaired lane by lane, its global part compared (not told),
    and every result is the fold's."""
    from contextdeck.engine.resolve._incremental import _whole

    untold: list[bool] = []
    changes = _whole._changes

    def spy(before: Any, now: Any) -> Any:
        found = changes(before, now)
        untold.append(found is None)
        return found

    monkeypatch.setattr(_whole, "_changes", spy)
    messages = [_state({"a": 1}, _outputPath="†state", _outputMethod="set")]
    messages += [_state({f"x{n}": n}) for n in range(5)]
    messages += [_state({f"i{n}": n}, _instance="1") for n in range(5)]
    ctx = Context(messages)
    handle = ctx.watch("†state", lambda _: None, instance="1")
    ctx.insert(6, _state({f"k{n}": n for n in range(6)}))
    assert untold == [True]
    assert handle.current == Context(ctx.messages).resolve("†state", "1")
    assert handle.current.sources == tuple(range(12))


def test_a_whole_kind_fold_never_changes_a_value_it_showed(monkeypatch: Any) -> None:
    """A whole-kind track's first fold writes in place only what it made since its last checkpoint or lane mark:
    every checkpoint root and lane mark, folded at once (after the path log's slices, `fold_ahead`) or in slices
    (`full` keeping one `Owned` across them), is the reference fold's value at its write, and every value shown
    stays as it was while folds go on."""
    from contextdeck.engine.resolve._incremental import _index

    monkeypatch.setattr(_index, "WHOLE_CHECKPOINT_EVERY", 4)
    monkeypatch.setattr(_index, "CHECKPOINT_EVERY", 3)
    messages: list[dict[str, Any]] = []
    for n in range(40):
        messages.append(_state({f"k{n % 5}": {"n": n}, "items": {f"i{n}": n}}))
        messages.append(_state({"items": {f"j{n}": [n]}}, _instance="1"))
        if n % 3 == 0:
            messages.append(_state({f"a{n}": n, "k1": {"m": n}}, _outputPath="†state", _outputMethod="assign"))
        if n % 4 == 0:
            messages.append(_state({"n": n}, _outputPath="†state.log", _outputMethod="push"))
    for sliced in (False, True):
        _fold_and_check_marks(Context(messages), messages, sliced)


def _fold_and_check_marks(ctx: Context, messages: list[dict[str, Any]], sliced: bool) -> None:
    shown: list[tuple[Any, Any]] = []
    for view in (None, "1"):
        if sliced:
            handle = ctx._watchers.add(parse_expression("†state"), lambda _: None, view, slices=0)
            slices = 0
            while not ctx._watchers.fold_some(steps=5):
                slices += 1
            assert slices > 3
        else:
            while not ctx.fold_ahead("†state", view, steps=5):
                pass
            handle = ctx.watch("†state", lambda _: None, instance=view)
        assert handle.current == reference(ctx.messages, "†state", view)
        fold = ctx._watchers._tracks["state", view, None].fold
        assert fold is not None
        marks = [(f"†state.{lane}", mark) for lane, kept in fold.lanes.items() for mark in kept]
        marks += [("†state", fold.checkpoints.get(index)) for index in range(len(fold.checkpoints))]
        assert len(marks) > 20
        for expr, mark in marks:  # (an instance fold goes on from the global fold's end)
            at = ctx._store.order.index_of(mark.after) + 1
            folded = [m for m in ctx.messages[: len(messages) if view else at] if "_instance" not in m]
            folded += [m for m in ctx.messages[:at] if view and m.get("_instance") == view]
            assert mark.root == reference(folded, expr, view).value, (expr, at)
        shown += [(value, copy.deepcopy(value)) for value in (handle.current.value, *(mark.root for _, mark in marks))]
    ctx.append(_state({"items": {"last": 1}}))
    assert ctx.resolve("†state.items", "1").value["last"] == 1
    assert all(value == was for value, was in shown)
