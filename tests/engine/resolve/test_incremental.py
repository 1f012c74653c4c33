"""The indexed, incremental context agrees with the reference fold after any sequence of edits."""

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
    calls_back,
    compared_by_the_test,
    documents,
    edits,
    exactly,
    expressions,
    lane_messages,
    messages,
    moved_id,
    nested_messages,
    seen,
    untidy_messages,
    watch_lists,
)

from contextdeck.engine import (
    Context,
    Edit,
    Insert,
    Move,
    Remove,
    Replace,
    Resolution,
    classify,
    parse_expression,
)
from contextdeck.engine.protocol._messages import MISSING, get_path
from contextdeck.engine.protocol._methods import WRITE_METHODS, Method, write_at
from contextdeck.engine.resolve import _keys
from contextdeck.engine.resolve._fold import fold
from contextdeck.engine.resolve._incremental import _index, _patches, _tracks
from contextdeck.engine.resolve._resolution import Diagnostic


def reference(messages: list[dict[str, Any]], expr: str, instance: str | None, at: int | None = None) -> Resolution:
    """SPEC 4 the slow way: every write of the kind, global layer then instance layer, through `_fold.fold`."""
    expression = parse_expression(expr)
    infos = [classify(m) for m in messages[: len(messages) if at is None else max(0, at)]]
    diagnostics: list[Diagnostic] = []
    missing: list[str] = []
    for gate in expression.alternatives:
        values = []
        for ref in gate:
            layers: tuple[list[Any], list[Any]] = ([], [])
            for index, info in enumerate(infos):
                if info.kind == ref.kind and info.write is not None:
                    if info.instance is None:
                        layers[0].append((index, info.write))
                    elif info.instance == instance:
                        layers[1].append((index, info.write))
            values.append(fold(layers[0] + layers[1], ref.path, str(ref))[1])
        for value in values:
            diagnostics.extend(d for d in value.diagnostics if d not in diagnostics)
        absent = next((ref for ref, v in zip(gate, values, strict=True) if not v.found), None)
        if absent is None:
            sources = sorted({i for v in values for i in v.sources})
            return Resolution(expr, True, values[-1].value, sources, tuple(diagnostics))
        missing.append(str(absent))
    return Resolution(expr, False, None, (), tuple(diagnostics), tuple(missing))


watched = watch_lists(6)


@contextmanager
def checkpoints_every(writes: int) -> Iterator[None]:
    """Tracks keep a checkpoint every `writes` writes (small, so that small documents resume and splice),
    whole-kind tracks too, and farther apart from the 8th write of a lane on (`_index.SPREAD`, so that small
    documents have marks spread out); results keep their keys in chunks of as many (so that they are sealed and
    split), as checkpoints keep sources from as many on (`Ids`, spliced and rebased by the chunk); and a patched
    splice files the keys of any node its differences lie below, two nodes a layer at most (so that small documents
    file them, and let go of them)."""
    saved = (_index.CHECKPOINT_EVERY, _index.WHOLE_CHECKPOINT_EVERY, _keys.CHUNK, _index.SHARED_SOURCES, _index.SPREAD,
             _index.MOST_DEEP, _patches.DEEP_FROM)
    _index.CHECKPOINT_EVERY = _index.WHOLE_CHECKPOINT_EVERY = _keys.CHUNK = _index.SHARED_SOURCES = writes
    _index.SPREAD, _index.MOST_DEEP, _patches.DEEP_FROM = 2, 2, 0
    try:
        yield
    finally:
        (_index.CHECKPOINT_EVERY, _index.WHOLE_CHECKPOINT_EVERY, _keys.CHUNK, _index.SHARED_SOURCES, _index.SPREAD,
         _index.MOST_DEEP, _patches.DEEP_FROM) = saved


@pytest.mark.parametrize("spacing", [1, 3, 16])
@settings(max_examples=60, deadline=None)
@given(document=st.lists(messages(), max_size=24), watches=watched, data=st.data())
def test_watches_follow_every_edit(
    spacing: int, document: list[dict[str, Any]], watches: list[Any], data: st.DataObject
) -> None:
    """After every edit each watch equals a fresh fold, and is called back exactly when its result changed."""
    with checkpoints_every(spacing):
        _follow_edits(document, watches, data)


@pytest.mark.parametrize("edit", [
    Insert(2, {"type": "data", "kind": "s", "data": {"b": 1}}),
    Move(3, 2),  # planned against the folds its remove made
])
def test_a_write_of_another_lane_in_a_gap_is_folded_into_the_lane(edit: Any) -> None:
    """While the root is not an object every write of the kind can matter to a lane (here: make the root
    an object again, so that a push onto `a` applies); an edit in the middle finds the lanes it can change
    among the tracks whose folds scanned such gaps, not among all tracks of the kind."""
    ctx = Context([
        {"type": "data", "kind": "s", "data": {"a": 1}},
        {"type": "data", "kind": "s", "data": [1], "_outputPath": "†s"},
        {"type": "data", "kind": "s", "data": {"a": 7}, "_outputMethod": "push", "_outputPath": "†s.a"},
        {"type": "data", "kind": "s", "data": {"c": 1}},
        {"type": "data", "kind": "s", "data": {"a": 8}, "_outputMethod": "push", "_outputPath": "†s.a"},
    ])
    handles = [ctx.watch(expr, lambda _: None) for expr in ("†s.a", "†s.c", "†s")]
    assert handles[0].current.value == [8]
    ctx.apply(edit)
    assert handles[0].current.value == [7, 8]
    for handle in handles:
        assert handle.current == reference(ctx.messages, handle.expression.source, None)


@pytest.mark.parametrize("edit", [
    Insert(2, {"type": "data", "kind": "s", "_instance": "1", "data": {"b": 1}}),
    Move(3, 2),
])
def test_a_write_in_a_gap_of_an_instance_layer_is_folded_into_its_lane(edit: Any) -> None:
    """The same in an instance layer: the gap is the instance track's own, so an instance write in it
    is folded into the lanes of that view (and the global view's watches are left as they were)."""
    push = {"_outputMethod": "push", "_outputPath": "†s.a"}
    layer = [
        {"type": "data", "kind": "s", "_instance": "1", "data": [1], "_outputPath": "†s"},
        {"type": "data", "kind": "s", "_instance": "1", "data": {"a": 7}, **push},
        {"type": "data", "kind": "s", "_instance": "1", "data": {"c": 1}},
        {"type": "data", "kind": "s", "_instance": "1", "data": {"a": 8}, **push},
    ]
    ctx = Context([{"type": "data", "kind": "s", "data": {"a": 1}}, *layer])
    handles = [ctx.watch(expr, lambda _: None, instance=view) for expr in ("†s.a", "†s.c") for view in ("1", None)]
    assert handles[0].current.value == [8]
    ctx.apply(edit)
    assert handles[0].current.value == [7, 8]
    for handle in handles:
        assert handle.current == reference(ctx.messages, handle.expression.source, handle.instance)


def test_a_global_root_no_object_appended_before_any_instance_write_leaves_the_instance_layer_a_gap() -> None:
    """Found by the property below (a hypothesis example): a global append that leaves the root an array
    steps an instance track whose own layer is still empty; that layer is then one gap, so an empty
    object appended there next (no key: no lane of its own) still replaces the array for the lane."""
    ctx = Context([
        {"type": "data", "kind": "s", "data": {}, "_outputMethod": "merge", "_outputPath": "†s"},
        {"type": "text", "text": "hi"},
    ])
    handle = ctx.watch("†s.0", lambda _: None, instance="1")
    ctx.apply(Insert(2, {"type": "data", "kind": "s", "data": [None]}))
    assert handle.current.found
    ctx.apply(Insert(3, {"type": "data", "kind": "s", "_instance": "1", "data": {}}))
    assert handle.current == reference(ctx.messages, "†s.0", "1")
    assert not handle.current.found


@pytest.mark.parametrize("moves", [[(2, 4)], [(4, 1)], [(0, 4), (3, 0)], [(1, 3)]])
def test_a_moved_source_is_ranked_at_its_new_place(moves: list[tuple[int, int]]) -> None:
    """A move changes one kept order key, its message's: a watch's kept keys get that one replaced
    instead of being sorted again, so its sources follow the moved write (and a move of a message
    that is no source leaves them as they were, renumbered)."""
    push = {"_outputMethod": "push", "_outputPath": "†s.a"}
    ctx = Context([
        {"type": "data", "kind": "s", "data": {"a": [1]}},
        {"type": "text", "text": "between"},
        {"type": "data", "kind": "s", "data": {"a": 2}, **push},
        {"type": "data", "kind": "s", "data": {"b": 1}},
        {"type": "data", "kind": "s", "data": {"a": 3}, **push},
    ])
    handles = [ctx.watch(expr, lambda _: None) for expr in ("†s.a", "†s.a.1", "†s.b || †s.a")]
    for src, dst in moves:
        ctx.apply(Move(src, dst))
        for handle in handles:
            assert handle.current == reference(ctx.messages, handle.expression.source, None)


def test_a_whole_kind_grown_by_an_append_follows_it_in_every_view() -> None:
    """An appended write adds one source to a whole kind (or a problem): the step says which key it
    added, so the result's keys are the old ones plus that one instead of the two being compared; in
    the global view and under an instance layer, through sets, pushes and a conflict."""
    ctx = Context([
        {"type": "data", "kind": "s", "data": {"a": [1], "b": {"c": 1}}},
        {"type": "data", "kind": "s", "_instance": "1", "data": {"b": {"d": 2}}},
    ])
    handles = [ctx.watch("†s", lambda _: None, instance=view) for view in (None, "1")]
    push = {"_outputMethod": "push"}
    appended = [
        {"type": "data", "kind": "s", "data": {"a": 2}, **push, "_outputPath": "†s.a"},
        {"type": "data", "kind": "s", "_instance": "1", "data": {"e": 3}},
        {"type": "data", "kind": "s", "data": {"b": 4}, **push, "_outputPath": "†s.b"},  # a conflict
        {"type": "data", "kind": "s", "_instance": "1", "data": {"a": 5}, **push, "_outputPath": "†s.a"},
        {"type": "data", "kind": "s", "data": {"f": 6}},
    ]
    for message in appended:
        ctx.append(message)
        for handle in handles:
            assert handle.current == reference(ctx.messages, "†s", handle.instance)
    assert len(handles[1].current.sources) == 6  # every write but the conflict


def test_a_splice_keeps_the_gap_an_appended_write_left_open() -> None:
    """A lane's fold appended a root `set` of null (the root is no object: every later write of the kind
    matters to the lane, a gap open at the end), then an insert before it was spliced at that write's
    checkpoint. The splice kept the gap, so an empty object merged at the root and a push after it are
    folded into the lane (found by the property above: the push was said to fail onto a null)."""
    with checkpoints_every(1):
        ctx = Context([{"type": "text", "text": "hi"}])
        handle = ctx.watch("†s.a", lambda _: None)
        ctx.apply(Insert(1, {"type": "data", "kind": "s", "data": None}))
        ctx.apply(Insert(0, {"type": "data", "kind": "s", "data": None}))
        ctx.apply(Insert(3, {"type": "data", "kind": "s", "data": {}, "_outputMethod": "merge", "_outputPath": "†s"}))
        ctx.apply(Insert(4, {"type": "data", "kind": "s", "data": None, "_outputMethod": "push", "_outputPath": "†s"}))
        assert handle.current == reference(ctx.messages, "†s.a", None)
        assert [d.reason for d in handle.current.diagnostics] == ["push at the root: push onto an object, not an array"]


def test_an_instance_write_at_an_index_of_thousands_of_digits_follows_an_edit_of_the_array() -> None:
    """An instance layer's write at an index longer than Python converts (4,300 digits) is past the end of the
    global array under it: after the array is replaced by a longer one, the instance's watch says the conflict
    with the new length (the splice reads the index without converting it)."""
    huge = "1" * 4301
    ctx = Context([
        {"type": "data", "kind": "s", "data": {"x": [1, 2]}, "_outputPath": "†s.x"},
        {"type": "data", "kind": "s", "_instance": "1", "data": {"x": {huge: "z"}}, "_outputPath": f"†s.x.{huge}"},
    ])
    handle = ctx.watch("†s.x", lambda _: None, instance="1")
    ctx.apply(Replace(0, {"type": "data", "kind": "s", "data": {"x": [1, 2, 3]}, "_outputPath": "†s.x"}))
    assert handle.current == reference(ctx.messages, "†s.x", "1")
    assert handle.current.value == [1, 2, 3]
    assert handle.current.diagnostics[0].reason.endswith("outside an array of 3")


@pytest.mark.parametrize("spacing", [1, 2])
@settings(max_examples=150, deadline=None)
@given(document=st.lists(array_messages(), max_size=24), data=st.data())
def test_watches_of_arrays_follow_every_edit(spacing: int, document: list[dict[str, Any]], data: st.DataObject) -> None:
    """Arrays appended to, with keys written under them and elements written into (where tracks splice by
    substituting the array past the start the two folds share), stay exact too, whole kinds included."""
    watches = [("†s.a", None), ("†s.a", "1"), ("†s.a.0", "1"), ("†s.a.1 || †s.a", None), ("†s", "1"),
               ("†s.a.status", "1"), ("†s.a.0.n && †s", "1")]
    with checkpoints_every(spacing):
        _follow_edits(document, watches, data, array_messages())


@pytest.mark.parametrize("spacing", [1, 2])
@settings(max_examples=150, deadline=None)
@given(document=st.lists(array_messages(("r",)), max_size=24), data=st.data())
def test_watches_of_arrays_below_a_lane_follow_every_edit(
    spacing: int, document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The same for an array below a lane (a run's log, `†s.r.a`), where tracks splice with the array past the start
    the two folds share put back, unless a watch reads an element there; with the object above it written now and
    then, and whole kinds."""
    watches = [("†s.r.a", None), ("†s.r.a", "1"), ("†s.r.a.0", "1"), ("†s.r.a.1 || †s.r", None), ("†s", "1"),
               ("†s.r", "1"), ("†s.r.a.status", "1"), ("†s.r.a.0.n && †s", None), ("†s", None)]
    with checkpoints_every(spacing):
        _follow_edits(document, watches, data, array_messages(("r",)))


@pytest.mark.parametrize("spacing", [1, 4])
@settings(max_examples=150, deadline=None)
@given(document=st.lists(nested_messages(), max_size=30), data=st.data())
def test_watches_of_nested_fields_follow_every_edit(
    spacing: int, document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Folds that differ at one nested field (where tracks splice with that field patched, up to a write
    that replaces it) stay exact too, for the global view and under an instance layer."""
    watches = [("†s.a", None), ("†s.a.b", "1"), ("†s.a.b.c", "1"), ("†s.a.d || †s.a", "1"), ("†s", "1")]
    with checkpoints_every(spacing):
        _follow_edits(document, watches, data, nested_messages())


@pytest.mark.parametrize("spacing", [1, 3])
@settings(max_examples=150, deadline=None)
@given(document=st.lists(untidy_messages(), max_size=30), data=st.data())
def test_watches_of_untidy_documents_follow_every_edit(
    spacing: int, document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Conflicts (pushes onto a string, keys under an array, unusable paths) and whole-kind watches: after
    every edit each watch's value, sources and every diagnostic equal a fresh fold."""
    watches = [("†s", None), ("†s", "1"), ("†s.a", None), ("†s.a || †s.a", "1"), ("†s.b.x", "1"),
               ("†s.b.0 && †s.c.d", None), ("†s.c.d.e || †s", "1"), ("†s.a.0 || †s.b", None)]
    with checkpoints_every(spacing):
        _follow_edits(document, watches, data, untidy_messages())


@pytest.mark.parametrize("spacing", [1, 3])
@settings(max_examples=60, deadline=None)
@given(document=st.lists(untidy_messages(), max_size=30), data=st.data())
def test_checkpoints_rebased_at_once_keep_their_problems(
    spacing: int, document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Checkpoints whose pending rebases are applied all at once (`Marks.settled`; here after every splice
    that leaves one pending) hold each probe's problems as a prefix of the last checkpoint's: folds resumed
    from them after later edits still equal a fresh fold, every diagnostic included."""
    watches = [("†s", "1"), ("†s.a", None), ("†s.a || †s.a", "1"), ("†s.b.x", "1"), ("†s.a.0 || †s.b", "1")]
    saved = _tracks.MOST_REBASES
    _tracks.MOST_REBASES = 0
    try:
        with checkpoints_every(spacing):
            _follow_edits(document, watches, data, untidy_messages())
    finally:
        _tracks.MOST_REBASES = saved


@settings(max_examples=80, deadline=None)
@given(document=st.lists(untidy_messages(), max_size=30), data=st.data())
def test_checkpoints_settled_at_once_are_those_rebased_one_by_one(
    document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """A track's pending rebases applied to all its checkpoints at once (`Marks.settled`, each rebase's
    effect on the probes worked out once) give each checkpoint as reading it applies them (`Marks.get`):
    roots, sources, problems, resets and gaps, whatever rebases pile up over random edits."""
    watches = [("†s", "1"), ("†s.a", None), ("†s.a || †s.a", "1"), ("†s.b.x", "1"), ("†s.a.0 || †s.b", "1")]
    saved = _tracks.MOST_REBASES
    _tracks.MOST_REBASES = 10**6
    try:
        with checkpoints_every(1):
            ctx = Context(document)
            for expr, instance in watches:
                ctx.watch(expr, lambda _: None, instance=instance)
            for _ in range(data.draw(st.integers(1, 12))):
                ctx.apply(data.draw(edits(len(ctx), untidy_messages())))
            for track in ctx._watchers._tracks.values():
                assert track.fold is not None
                marks = track.fold.checkpoints
                one_by_one = [marks.get(index) for index in range(len(marks))]
                for settled, read in zip(marks.settled(), one_by_one, strict=True):
                    assert repr(settled.root) == repr(read.root)  # key order and number types too
                    now, then = settled.held, read.held
                    assert [tuple(s) for s in now.sources] == [tuple(s) for s in then.sources]
                    assert [d.items() for d in now.diagnostics] == [d.items() for d in then.diagnostics]
                    assert (settled.after, now.resets) == (read.after, then.resets)
                    assert now.gaps == then.gaps
    finally:
        _tracks.MOST_REBASES = saved


@pytest.mark.parametrize("spacing", [1, 2, 16])
@settings(max_examples=150, deadline=None)
@given(document=st.lists(lane_messages(), max_size=30), data=st.data())
def test_whole_kind_watches_follow_every_edit(
    spacing: int, document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Whole-kind folds repaired lane by lane (`_whole`: each lane the edit touches folded again from a
    lane mark, old and new side by side, sources and problems changed in place) equal a fresh fold after
    every edit: root objects over several lanes, conflicts, unusable paths, instance layers, and writes
    that replace the root (after which the usual repair takes over)."""
    watches = [("†s", None), ("†s", "1"), ("†s.a || †s", "1"), ("†s.b", None), ("†s.c.x && †s", "1")]
    with checkpoints_every(spacing):
        _follow_edits(document, watches, data, lane_messages())


@pytest.mark.parametrize("spacing", [1, 3, 16])
@settings(max_examples=100, deadline=None)
@given(
    document=st.lists(st.one_of(messages(), lane_messages(), untidy_messages()), max_size=40),
    watches=st.lists(st.tuples(st.one_of(expressions(), st.sampled_from(["†s", "†s.a", "†s.a || †s.b.x"])),
                               st.sampled_from(INSTANCES), st.booleans()), min_size=1, max_size=5),
    data=st.data(),
)
def test_watches_folded_in_slices_follow_the_edits_made_between_slices(
    spacing: int, document: list[dict[str, Any]], watches: list[Any], data: st.DataObject
) -> None:
    """A watch made with `slices` is pending (no answer yet) until `fold_some` has folded its new tracks, a few writes
    a call, whatever edits come between two calls (each may make a build start again); it is then called back once
    with a fresh fold's resolution, and from there follows every edit as a watch folded at once does."""
    with checkpoints_every(spacing):
        ctx = Context(document)
        calls: list[list[Resolution]] = []
        handles = []
        resolved = lambda handle: handle not in ctx._watchers._pending  # noqa: E731
        for expr, instance, sliced in watches:
            calls.append([])
            handles.append(ctx._watchers.add(parse_expression(expr), calls[-1].append, instance, 0 if sliced else None))
            assert resolved(handles[-1]) is not sliced  # (one folded at once folds the others' builds too)
        for number, handle in enumerate(handles):
            expr, instance, sliced = watches[number]
            assert calls[number] == ([reference(ctx.messages, expr, instance)] if sliced and resolved(handle) else [])
            calls[number].clear()
        for _ in range(data.draw(st.integers(0, 20))):
            if data.draw(st.booleans()):
                edit = data.draw(edits(len(ctx), st.one_of(messages(), lane_messages(), untidy_messages())))
                before, moved = [seen(ctx, handle.current) for handle in handles], moved_id(ctx, edit)
                was = [resolved(handle) for handle in handles]
                ctx.apply(edit)
                for number, handle in enumerate(handles):
                    expr, instance, _ = watches[number]
                    if was[number]:
                        fresh = reference(ctx.messages, expr, instance)
                        assert handle.current == fresh, (edit, expr, instance)
                        assert calls[number] == ([fresh] if calls_back(ctx, before[number], moved, fresh) else [])
                    assert resolved(handle) == was[number]
                    assert (was[number] or not calls[number])
            else:
                was = [resolved(handle) for handle in handles]
                ctx._watchers.fold_some(steps=data.draw(st.integers(1, 2)))
                for number, handle in enumerate(handles):
                    expr, instance, _ = watches[number]
                    first = [reference(ctx.messages, expr, instance)] if resolved(handle) and not was[number] else []
                    assert calls[number] == first
            for called in calls:
                called.clear()
        was = [resolved(handle) for handle in handles]
        while not ctx._watchers.fold_some(steps=2):
            pass
        for number, handle in enumerate(handles):
            expr, instance, _ = watches[number]
            fresh = reference(ctx.messages, expr, instance)
            assert resolved(handle)
            assert handle.current == fresh
            assert calls[number] == ([] if was[number] else [fresh])
        assert _indexed_gaps(ctx) == _gaps_of_the_folds(ctx)


@pytest.mark.parametrize("spacing", [1, 3, 16])
@settings(max_examples=100, deadline=None)
@given(document=st.lists(st.one_of(untidy_messages(), lane_messages()), max_size=40), steps=st.integers(1, 5))
def test_a_track_folded_in_slices_is_the_track_folded_at_once(
    spacing: int, document: list[dict[str, Any]], steps: int
) -> None:
    """A track's fold from scratch made `steps` writes at a time has the same value, sources, problems, gaps,
    checkpoints and lane marks as the same fold made at once: slicing it changes nothing an edit repairs later."""
    expressions = [("†s", None), ("†s", "1"), ("†s.a", "1"), ("†s.b.x", None), ("†s.c.d", "1")]
    with checkpoints_every(spacing):
        at_once, sliced = Context(document), Context(document)
        for expr, instance in expressions:
            at_once.watch(expr, lambda _: None, instance)
            sliced._watchers.add(parse_expression(expr), lambda _: None, instance, 0)
        while not sliced._watchers.fold_some(steps=steps):
            pass
        for key, track in at_once._watchers._tracks.items():
            made, other = track.fold, sliced._watchers._tracks[key].fold
            assert repr(made.state.root) == repr(other.state.root)
            assert made.gaps == other.gaps
            assert [(p.path, tuple(p.sources), p.diagnostics.items(), p.resets) for p in made.state.probes] == \
                [(p.path, tuple(p.sources), p.diagnostics.items(), p.resets) for p in other.state.probes]
            assert [(m.after, repr(m.root), m.held.gaps) for m in made.checkpoints.items] == \
                [(m.after, repr(m.root), m.held.gaps) for m in other.checkpoints.items]
            assert {lane: [(m.after, repr(m.root)) for m in marks] for lane, marks in made.lanes.items()} == \
                {lane: [(m.after, repr(m.root)) for m in marks] for lane, marks in other.lanes.items()}


PUSH = {"_outputPath": "†s.log", "_outputMethod": "push"}


@pytest.mark.parametrize(("expr", "between"), [
    ("†s", Insert(60, {"type": "data", "kind": "s", "_instance": "1", "data": {"z": 1}})),  # its own layer's end
    ("†s", Insert(60, {"type": "data", "kind": "s", "data": {"z": 1}})),  # the global layer's, under it
    ("†s", Insert(3, {"type": "data", "kind": "s", "_instance": "1", "data": {"y": 2}})),  # the middle
    ("†s", Remove(40)),
    ("†s.log", Insert(60, {"type": "data", "kind": "s", "_instance": "1", "data": {"log": 9}, **PUSH})),
    ("†s.log", "†s.log.0"),  # a watch of another path of its track: folded again, then ranked again
])
def test_sources_are_ranked_a_piece_a_call_after_a_sliced_fold(expr: str, between: Any) -> None:
    """Once a sliced build has folded a track it is installed, and the watch stays pending while its sources are
    ranked `8 * CHUNK` a call of `fold_some` (a whole kind's hundred thousand at a million messages): an edit
    meanwhile (an append to its own layer too), or a new path that folds the track again, leaves its first answer
    the reference fold's."""
    with checkpoints_every(1):
        document = [{"type": "data", "kind": "s", **({"_instance": "1"} if n % 3 else {}),
                     "data": {"log": n if n else []}, **(PUSH if n else {})} for n in range(60)]
        ctx = Context(document)
        calls: list[Resolution] = []
        handle = ctx._watchers.add(parse_expression(expr), calls.append, "1", 0)
        while ctx._watchers._builds:
            ctx._watchers.fold_some(steps=100)
        assert handle in ctx._watchers._pending  # folded, its sources not all ranked yet
        assert not calls
        if isinstance(between, str):
            other = ctx._watchers.add(parse_expression(between), lambda _: None, "1", 0)
        else:
            ctx.apply(between)
        while not ctx._watchers.fold_some():
            pass
        assert calls == [reference(ctx.messages, expr, "1")] == [handle.current]
        assert isinstance(between, Edit) or other.current == reference(ctx.messages, between, "1")


@st.composite
def ranked_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A write of kind `s`, global or of instance 1, most of them pushed to one log: many sources at one path."""
    message: dict[str, Any] = {"type": "data", "kind": "s", "data": {"log": draw(st.integers(0, 3)), "a": 1}}
    if draw(st.booleans()):
        message["_instance"] = "1"
    shape = draw(st.sampled_from(["push"] * 18 + ["set", "plain"]))  # (a set or a plain write resets the log)
    if shape != "plain":
        message |= {"_outputPath": "†s.log", "_outputMethod": shape}
    return message


@settings(max_examples=100, deadline=None)
@given(document=st.lists(ranked_messages(), min_size=24, max_size=60), data=st.data())
def test_edits_between_the_pieces_of_a_ranking_leave_each_first_answer_the_reference_folds(
    document: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Sources ranked `8 * CHUNK` a call of `fold_some` (here a chunk of one key: eight a call), with edits, new
    watches and folds of other builds between the calls: each watch's first answer, when it comes, is the reference
    fold's then, and every watch is the reference fold's at the end."""
    saved, _keys.CHUNK = _keys.CHUNK, 1
    try:
        with checkpoints_every(data.draw(st.sampled_from([1, 3, 16]))):
            ctx = Context(document)
            handles: list[tuple[Any, str, str | None, list[Resolution]]] = []

            def watch() -> None:
                expr = data.draw(st.sampled_from(["†s.log", "†s", "†s.log || †s.a", "†s.log.0"]))
                instance, calls = data.draw(st.sampled_from([None, "1"])), []
                handles.append((ctx._watchers.add(parse_expression(expr), calls.append, instance, 0), expr, instance,
                                calls))

            watch()
            while ctx._watchers._builds:  # its tracks folded: its sources are being ranked
                ctx._watchers.fold_some(steps=100)
            for _ in range(data.draw(st.integers(1, 16))):
                action = data.draw(st.sampled_from(["edit", "fold", "edit", "fold", "watch"]))
                if action == "edit":
                    ctx.apply(data.draw(edits(len(ctx), ranked_messages())))
                elif action == "watch":
                    watch()
                else:
                    was = [handle in ctx._watchers._pending for handle, *_ in handles]
                    ctx._watchers.fold_some(steps=data.draw(st.sampled_from([2, 100])))
                    for (handle, expr, instance, calls), pending in zip(handles, was, strict=True):
                        if pending and handle not in ctx._watchers._pending:
                            assert calls == [reference(ctx.messages, expr, instance)], (expr, instance)
            while not ctx._watchers.fold_some():
                pass
            for handle, expr, instance, calls in handles:
                assert calls, "every watch is answered"
                assert handle.current == reference(ctx.messages, expr, instance), (expr, instance)
    finally:
        _keys.CHUNK = saved


@contextmanager
def a_sixth_method() -> Iterator[None]:
    """`default` — write the value only where there is none yet — registered as one more `Method` record."""

    def apply(existing: Any, new: Any) -> Any:
        return new if existing is MISSING else existing

    def effect(before: Any, new: Any, rest: tuple[str, ...]) -> str | None:
        return "reset" if before is MISSING else None

    def covers(new: Any, rest: tuple[str, ...]) -> bool | None:
        return False  # what it does depends on what is there

    WRITE_METHODS["default"] = Method("default", apply, effect, covers)
    try:
        yield
    finally:
        del WRITE_METHODS["default"]


@st.composite
def defaulting_messages(draw: st.DrawFn) -> dict[str, Any]:
    message = draw(nested_messages())
    if draw(st.booleans()):
        message["_outputMethod"] = "default"
    return message


@settings(max_examples=100, deadline=None)
@given(document=st.lists(defaulting_messages(), max_size=20), data=st.data())
def test_a_sixth_method_is_one_record(document: list[dict[str, Any]], data: st.DataObject) -> None:
    """A write method added as one record in `_methods.WRITE_METHODS` is classified, indexed, folded,
    spliced and watched like the five (every watch equals a fresh fold after every edit), with no other
    change to the engine."""
    watches = [("†s.a", None), ("†s.a.b", "1"), ("†s", "1"), ("†s.a.d || †s.a.b.c", None)]
    with a_sixth_method(), checkpoints_every(2):
        ctx = Context(document)
        assert all(ctx.info(i).write.problem is None for i in range(len(ctx)))  # type: ignore[union-attr]
        _follow_edits(document, watches, data, defaulting_messages())


def _follow_edits(
    document: list[dict[str, Any]],
    watches: list[Any],
    data: st.DataObject,
    new: st.SearchStrategy[dict[str, Any]] | None = None,
) -> None:
    with compared_by_the_test():
        ctx = Context(document)
        calls: dict[int, list[Resolution]] = {}
        handles = []
        for number, (expr, instance) in enumerate(watches):
            calls[number] = []
            handles.append(ctx.watch(expr, calls[number].append, instance=instance))
            assert exactly(handles[-1].current) == exactly(reference(ctx.messages, expr, instance))
        for _ in range(data.draw(st.integers(1, 12))):
            edit = data.draw(edits(len(ctx), new))
            before, moved = [seen(ctx, handle.current) for handle in handles], moved_id(ctx, edit)
            ctx.apply(edit)
            for number, (handle, (expr, instance)) in enumerate(zip(handles, watches, strict=True)):
                fresh = exactly(reference(ctx.messages, expr, instance))
                assert exactly(handle.current) == fresh, (edit, expr, instance)  # renumbered when read
                assert exactly(ctx.resolve(expr, instance)) == fresh  # read from the watches' folds
                changed = calls_back(ctx, before[number], moved, fresh[0])  # not when only renumbered
                assert list(map(exactly, calls[number])) == ([fresh] if changed else [])
            for number in calls:
                calls[number].clear()
            assert _indexed_gaps(ctx) == _gaps_of_the_folds(ctx)


def _indexed_gaps(ctx: Context) -> dict[tuple[str, str | None], dict[_index.Gap, set[Any]]]:
    """The watchers' index of gaps, the views with none left out."""
    return {view: gaps for view, gaps in ctx._watchers._gaps.items() if gaps}


def _gaps_of_the_folds(ctx: Context) -> dict[tuple[str, str | None], dict[_index.Gap, set[Any]]]:
    """Per view, each gap of a kept fold and the tracks whose fold has it: what the watchers' index must hold."""
    gaps: dict[tuple[str, str | None], dict[_index.Gap, set[Any]]] = {}
    for track in ctx._watchers._tracks.values():
        view = gaps.setdefault((track.kind, track.instance), {})
        for gap in track.fold.gaps:
            view.setdefault(gap, set()).add(track)
    return {view: held for view, held in gaps.items() if held}


def test_an_edit_indexes_only_the_gaps_around_it() -> None:
    """A lane whose every write fails has a gap per write (its root is never an object): an edit in its middle
    indexes again only the gaps the repair made, not the thousands on either side it kept, and the index is still
    every fold's gaps."""

    class Counted(dict[Any, Any]):
        set_down = 0

        def setdefault(self, key: Any, default: Any = None) -> Any:
            Counted.set_down += 1
            return super().setdefault(key, default)

    def output(n: int) -> dict[str, Any]:  # the data holds no value at the path: a problem at every write
        return {"type": "data", "kind": "state", "data": n, "_outputPath": f"†state.runs.r1.steps.k{n}",
                "_outputMethod": "set"}

    ctx = Context([output(n) for n in range(3000)])
    ctx.watch("†state.runs.r1.steps.k5", lambda _: None)
    assert len(next(iter(ctx._watchers._tracks.values())).fold.gaps) > 3000
    ctx._watchers._gaps[("state", None)] = Counted(ctx._watchers._gaps[("state", None)])
    for edit in (lambda: ctx.insert(1500, output(-1)), lambda: ctx.remove(1500), lambda: ctx.replace(10, output(-2))):
        Counted.set_down = 0
        edit()
        assert Counted.set_down < 100  # (3,000 and more when every gap was indexed again)
        assert _indexed_gaps(ctx) == _gaps_of_the_folds(ctx)


def test_the_gap_index_forgets_a_closed_watchs_tracks() -> None:
    """Tracks whose folds scanned writes while the root was no object are found by their gaps (one test per
    gap, not per track); closing the last watch of a track takes its gaps out of that index."""
    ctx = Context([
        {"type": "data", "kind": "s", "data": None},
        {"type": "data", "kind": "s", "data": {"a": 1}},
        {"type": "data", "kind": "s", "data": {"b": 2}},
    ])
    handles = [ctx.watch(expr, lambda _: None) for expr in ("†s.a", "†s.b", "†s.b.c")]
    view = ctx._watchers._gaps[("s", None)]
    # Both lanes scanned the start up to the root's `set` of null (one gap, two tracks), then each its own.
    assert sorted(len(owners) for owners in view.values()) == [1, 1, 2]
    assert _indexed_gaps(ctx) == _gaps_of_the_folds(ctx)
    for handle in handles:
        handle.close()
        assert _indexed_gaps(ctx) == _gaps_of_the_folds(ctx)
    assert not ctx._watchers._gaps[("s", None)]


def test_an_appended_step_grows_kept_sources_by_one_copy() -> None:
    """An append's one step grows a kept probe's sources straight into a new tuple (a whole kind has
    thousands: no list that `freeze` copies again), the same sources as a step inside a fold, and leaves
    the kept tuple as it was."""
    state = _index.State([_index.Probe(())])
    state.step(1, classify({"type": "data", "kind": "s", "data": {"a": 1}}).write, 10)
    state.freeze()
    kept = state.probes[0].sources
    write = classify({"type": "data", "kind": "s", "data": {"b": 2}}).write
    last, usual = state.copy(), state.copy()
    last.step(2, write, 20, last=True)
    usual.step(2, write, 20)
    assert type(last.probes[0].sources) is tuple
    assert last.probes[0].sources == tuple(usual.probes[0].sources) == (1, 2)
    assert kept == (1,)


@settings(max_examples=150, deadline=None)
@given(documents, expressions(), st.sampled_from(INSTANCES), st.integers(-1, 14))
def test_resolve_and_time_travel_match_the_fold(
    document: list[dict[str, Any]], expr: str, instance: str | None, at: int
) -> None:
    """`resolve` with and without `at` equals the fold over the first `at` messages."""
    ctx = Context(document)
    assert ctx.resolve(expr, instance) == reference(document, expr, instance)
    assert ctx.resolve(expr, instance, at=at) == reference(document, expr, instance, at)


@settings(max_examples=100, deadline=None)
@given(documents, st.data())
def test_ids_stay_with_their_messages(document: list[dict[str, Any]], data: st.DataObject) -> None:
    """Through any edits, `index_of(id)` finds the very message the id was given to; removed ids are gone."""
    ctx = Context(document)
    owners = {ctx.id_at(i): ctx[i] for i in range(len(ctx))}
    for _ in range(data.draw(st.integers(1, 10))):
        edit = data.draw(edits(len(ctx)))
        if isinstance(edit, Remove):
            owners.pop(ctx.id_at(edit.index))
        ctx.apply(edit)
        if isinstance(edit, Insert):
            index = min(edit.index, len(ctx) - 1)
            owners[ctx.id_at(index)] = ctx[index]
        if isinstance(edit, Replace):
            owners[ctx.id_at(edit.index)] = ctx[edit.index]
        assert {ctx.id_at(i) for i in range(len(ctx))} == set(owners)
        for message_id, message in owners.items():
            assert ctx[ctx.index_of(message_id)] is message


def test_removed_id_is_a_key_error() -> None:
    """`index_of` of a removed message raises KeyError."""
    ctx = Context([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    gone = ctx.id_at(0)
    ctx.remove(0)
    try:
        ctx.index_of(gone)
    except KeyError:
        return
    raise AssertionError("index_of of a removed id must raise KeyError")


def test_move_keeps_ids_and_shifts_sources() -> None:
    """Moving a text message before a data message renumbers the watch's sources (the same message: no
    callback); `current` names its new index."""
    ctx = Context([{"type": "state", "data": {"a": 1}}, {"type": "text", "text": "x"}])
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append)
    first = ctx.id_at(0)
    ctx.apply(Move(1, 0))
    assert handle.current.sources == (1,)
    assert ctx.index_of(first) == 1
    assert calls == []


def test_many_inserts_at_one_spot_keep_the_order() -> None:
    """Inserting again and again at one place (which exhausts the room between order keys) keeps ids,
    order and watches right."""
    ctx = Context([{"type": "state", "data": {"n": 0}}, {"type": "state", "data": {"n": -1}}])
    handle = ctx.watch("†state.n", lambda _: None)
    last = ctx.id_at(1)
    for n in range(1, 150):
        ctx.insert(1, {"type": "state", "data": {"n": n}})
    assert [m["data"]["n"] for m in ctx.messages] == [0, *range(149, 0, -1), -1]
    assert ctx.index_of(last) == len(ctx) - 1
    assert handle.current == reference(ctx.messages, "†state.n", None)


def test_a_lane_mark_is_never_left_at_a_removed_write_with_a_problem() -> None:
    """Found by the property above: a repair put a lane mark at a write with a problem of its own (a
    `_outputPath` of another kind); removing that write refolds no lane, and the next append read the
    mark's vanished message."""
    document = [{"type": "s", "s": {"a": None}},
                {"type": "s", "s": {"a": None}, "_outputPath": "†s.a", "_outputMethod": "merge"}]
    watches = [("†s", None), ("†s", "1"), ("†s.a || †s", "1")]
    edits = [Insert(1, {"type": "s", "s": {"a": None}, "_outputPath": "†t.a"}), Remove(2), Remove(1),
             Insert(1, {"type": "s", "s": {"a": None}})]
    with checkpoints_every(2):
        ctx = Context(document)
        handles = [ctx.watch(expr, lambda _: None, instance=instance) for expr, instance in watches]
        for edit in edits:
            ctx.apply(edit)
            for handle, (expr, instance) in zip(handles, watches, strict=True):
                assert handle.current == reference(ctx.messages, expr, instance), (edit, expr)


def test_a_push_inserted_after_a_move_is_folded_from_the_right_checkpoint() -> None:
    """[A, A, B, A] moved to [B, A, A, A], then a push at `a` inserted at 1: before it only B (a write at `b`)
    was folded, so the push appends to nothing; the watch reported 'push onto a string' at message 1."""
    a = {"type": "s", "s": {"a": "oops"}, "_outputPath": "†s.a"}
    b = {"type": "s", "s": {"b": {"x": None}}, "_outputPath": "†s.b", "_outputMethod": "push"}
    push = {"type": "s", "s": {"a": None}, "_outputPath": "†s.a", "_outputMethod": "push"}
    with checkpoints_every(1):
        ctx = Context([])
        handle = ctx.watch("†s.a", lambda _: None)
        for edit in (Insert(0, a), Insert(1, b), Insert(2, a), Insert(0, a), Move(2, 0), Insert(1, push)):
            ctx.apply(edit)
        assert handle.current == reference(ctx.messages, "†s.a", None)


def test_a_slice_of_a_first_fold_copies_a_bounded_number_of_elements(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slice of a whole kind's first fold counts a write appending to a long array by the elements it copies
    (`FOLD_WORK` each): pushes onto arrays of thousands make slices of fewer writes, not `FOLD_STEPS` copies each."""
    document = [{"type": "data", "kind": "s", "data": {f"k{n % 2}": {"log": n}}, "_outputPath": f"†s.k{n % 2}.log",
                 "_outputMethod": "push"} for n in range(6000)]
    ctx, copied = Context(document), [0]

    def counted(root: Any, path: Any, method: str, value: Any, owned: Any = None) -> Any:
        before = get_path(root, path)
        copied[0] += len(before) if isinstance(before, list) else 0
        return write_at(root, path, method, value, owned)

    monkeypatch.setattr(_index, "write_at", counted)
    handle, most = ctx._watchers.add(parse_expression("†s"), lambda _: None, None, 0), 0
    while not ctx._watchers.fold_some():
        most, copied[0] = max(most, copied[0]), 0
    assert most <= 2 * _index.FOLD_STEPS * _index.FOLD_WORK
    assert handle.current == reference(ctx.messages, "†s", None)
