"""The state at the cursor (`CursorState`, engine/_state.py) agrees with resolve and blame wherever the
cursor goes, marks or not, and follows edits of the context."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import (
    MISSING,
    Context,
    CursorState,
    Edit,
    IdentityState,
    Insert,
    Move,
    Replace,
    free_later,
    free_some,
)
from contextdeck.engine.document import _state as _blame
from contextdeck.engine.document._state import Folds, state_steps
from contextdeck.engine.resolve import _graveyard

SEGMENTS = ("a", "b", "0", "1")
keys = st.sampled_from(SEGMENTS)
scalars = st.one_of(st.none(), st.integers(-2, 2), st.sampled_from(["x", ""]))
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=3)),
    max_leaves=5,
)


@st.composite
def writes(draw: st.DrawFn) -> dict[str, Any]:
    """A data message of two kinds, global or for one of two instances, with any method at a short path."""
    kind = draw(st.sampled_from(("state", "input")))
    path = draw(st.lists(keys, max_size=2))
    method = draw(st.sampled_from((None, "set", "merge", "assign", "push", "concat")))
    value = draw(values)
    for segment in reversed(path):
        value = {segment: value}
    message: dict[str, Any] = {"type": "data", "kind": kind, "data": value}
    if path or method is not None:
        message["_outputPath"] = "†" + ".".join((kind, *path))
    if method is not None:
        message["_outputMethod"] = method
    instance = draw(st.sampled_from((None, "p1", "p2")))
    if instance is not None:
        message["_instance"] = instance
    return message


contexts = st.lists(st.one_of(writes(), writes(), st.just({"type": "text", "text": "hi"})), max_size=14)


def _state(context: Context, at: int, layers: Folds) -> list[IdentityState]:
    out: list[IdentityState] = []
    for _ in state_steps(context, at, layers, out):
        pass
    return out


def _paths(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [path, *(p for key, child in items for p in _paths(child, (*path, str(key))))]


@settings(max_examples=150, deadline=None)
@given(contexts, st.lists(st.integers(0, 15), min_size=1, max_size=6), st.integers(1, 3))
def test_the_state_and_its_setters_match_the_engine_at_every_cursor(
    messages: list[dict[str, Any]], cursors: list[int], spacing: int
) -> None:
    """At every cursor, visited in any order with the same (reused) folds, each identity's value is
    `ctx.resolve("†kind")`'s and each path's "set by" is the last write of `ctx.blame` (in fold order: global layer,
    then instance layer), one of `ctx.resolve(...).sources`."""
    context = Context(messages)
    layers = Folds(0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_blame, "SPACING", spacing)  # marks every few writes, so that cursors resume from them
        for at in cursors:
            state = _state(context, at, layers)
            assert [folded.identity for folded in state] == context.identities(at)
            for folded in state:
                kind, instance = folded.identity
                whole = context.resolve(f"†{kind}", instance, at)
                assert folded.value == (whole.value if whole.found else MISSING)
                if folded.value is MISSING:  # every write failed: nothing to show, nobody set it
                    assert folded.writer == {}
                    continue
                for path in _paths(folded.value):
                    expression = "†" + ".".join((kind, *path))
                    last = context.blame(expression, instance, at).entries[-1].index
                    assert last in context.resolve(expression, instance, at).sources
                    assert folded.writer.get(path) == last, (folded.identity, path)


def _counted_folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The index of each write folded from now on (`_blame.fold_step` counted)."""
    folded: list[int] = []
    step = _blame.fold_step

    def counted(root: Any, writer: dict[tuple[str, ...], int], index: int, write: Any, owned: Any = None
                ) -> Generator[None, None, Any]:
        folded.append(index)
        return (yield from step(root, writer, index, write, owned))

    monkeypatch.setattr(_blame, "fold_step", counted)
    return folded


def test_a_step_forward_folds_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving the cursor one message on folds one write more, not the history again (the last answer is kept);
    a jump back resumes from a mark, not from the start."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(100)])
    layers = Folds(0)
    _state(context, 70, layers)
    folded = _counted_folds(monkeypatch)
    state = _state(context, 71, layers)
    assert folded == [70]
    assert (state[0].value, state[0].writer[("n",)]) == ({"n": 70}, 70)
    folded.clear()
    state = _state(context, 40, layers)
    assert 0 < len(folded) < _blame.SPACING
    assert (state[0].value, state[0].writer[("n",)]) == ({"n": 39}, 39)


def test_a_big_value_is_noted_in_slices() -> None:
    """One message with a 5,000-key object is folded in several slices, not one long step, and every key
    names its setter; a later merge of one key names the later message for that key only."""
    big = {f"k{n}": {"v": n} for n in range(5000)}
    context = Context([{"type": "state", "data": big}, {"type": "state", "data": {"k7": {"v": -1}}}])
    out: list[IdentityState] = []
    slices = sum(1 for _ in state_steps(context, None, Folds(0), out))
    assert slices >= 5000 * 2 // _blame.FOLD_WORK
    writer = out[0].writer
    assert (writer[("k7", "v")], writer[("k8", "v")], writer[("k4999",)], writer[()]) == (1, 0, 0, 1)


def test_each_write_that_copies_a_long_array_is_a_slice_of_its_own() -> None:
    """A push or concat copies the array it appends to: onto a long one, each is followed by a look at the clock
    (a document's log of a million entries made a slice of seven such writes many frames long)."""
    long = list(range(_blame.FOLD_WORK))
    appends = [{"type": "data", "kind": "state", "data": {"log": [n]}, "_outputPath": "†state.log",
                "_outputMethod": method} for n, method in zip(range(20), ("push", "concat") * 10, strict=True)]
    context = Context([{"type": "state", "data": {"log": long}}, *appends])
    out: list[IdentityState] = []
    slices = sum(1 for _ in state_steps(context, None, Folds(0), out))
    assert slices >= len(appends)
    assert (out[0].value["log"][-2:], out[0].writer[("log",)]) == ([[18], 19], 20)


def test_a_marks_copy_of_who_set_each_path_begins_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mark copies the map of who set each path, one long step when the map is big (at a million messages, tens of
    thousands of entries scattered over the heap): the step before it yields True, so that a caller working in
    slices begins its next slice with it. Each piece so announced makes one mark of a map of `LONG_COPY` paths or
    more; the marks of smaller maps (every 16 writes of a small identity) are made unannounced, in passing."""
    monkeypatch.setattr(_blame, "LONG_COPY", 200)
    context = Context([{"type": "state", "data": {f"k{n}": n, "n": n}} for n in range(400)])
    folds = Folds(0)
    steps = state_steps(context, None, folds, [])

    def marks() -> list[Any]:
        return [mark for track in folds.global_tracks.values() for mark in track.marks]

    pieces: list[tuple[bool, list[int]]] = []  # per piece: announced as long, the sizes of the maps of its marks
    end = object()
    long_next: Any = next(steps)
    while long_next is not end:
        before = len(marks())
        following = next(steps, end)
        pieces.append((bool(long_next), [len(mark.held) for mark in marks()[before:]]))
        long_next = following
    announced = [sizes for long, sizes in pieces if long]
    passing = [size for long, sizes in pieces if not long for size in sizes]
    assert len(announced) >= 3
    assert all(len(sizes) == 1 and sizes[0] >= 200 for sizes in announced)
    assert passing
    assert all(size < 200 for size in passing)


def test_resuming_from_a_mark_that_names_many_paths_begins_a_slice() -> None:
    """A cursor moved back resumes the fold from a mark, copying who set each path: with 4,096 paths or more that is a
    long step too, announced as the mark's own copy is (the first step yields True); a small one is not."""
    context = Context([{"type": "state", "data": {f"k{n}": n}} for n in range(6000)])
    folds = Folds(0)
    for _ in state_steps(context, None, folds, []):
        pass
    track = folds.global_tracks["state"]
    assert len(track.marks[-1].held) >= 4096 > len(track.marks[1].held)
    far, near = (state_steps(context, index, folds, []) for index in (track.counts[-1] + 3, track.counts[1] + 3))
    assert next(far) is True
    assert next(near) is not True


def test_the_state_reads_only_the_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The state folds each identity's writes from the context's index of them: no message is looked at
    one by one, however many there are, and the instance layers fold on their global layer."""
    context = Context([{"type": "state", "_instance": f"p{n % 3}", "data": {"n": n}} for n in range(100)]
                      + [{"type": "text", "text": "hi"}] * 100)
    monkeypatch.setattr(context, "info", lambda index: pytest.fail(f"message {index} looked at"))
    state = _state(context, 150, Folds(0))
    assert [(f.identity, f.value, f.writer[("n",)]) for f in state] == [
        (("state", f"p{n}"), {"n": 99 - (99 - n) % 3}, 99 - (99 - n) % 3) for n in range(3)
    ]


def test_the_state_follows_edits_and_knows_what_each_write_shadowed() -> None:
    """After an edit the next computation sees the new messages; blame names what the setter replaced."""
    context = Context([{"type": "state", "data": {"n": 1}}, {"type": "state", "data": {"n": 2}}])
    state = CursorState(context)
    assert state.at()[0].value == {"n": 2}
    context.append({"type": "state", "data": {"n": 3, "m": 0}})
    (identity,) = state.at()
    assert identity.value == {"n": 3, "m": 0}
    assert identity.writer.get(("n",)) == 2
    entry = state.blame("state", None, ("n",)).entries[-1]
    assert (entry.index, entry.shadowed, entry.value) == (2, 2, 3)
    assert state.at(1)[0].value == {"n": 1}
    state.close()


@st.composite
def _edits(draw: st.DrawFn) -> tuple[Any, ...]:
    """What the window does between two slices of the state view: a slice, a new cursor, or an edit (a form
    edit of a data message = Replace, a duplicate, a move, undo, redo)."""
    return draw(st.one_of(
        st.tuples(st.just("slices"), st.integers(1, 5)),
        st.tuples(st.just("cursor"), st.integers(0, 20)),
        st.tuples(st.just("replace"), st.integers(0, 40), writes()),
        st.tuples(st.just("duplicate"), st.integers(0, 40)),
        st.tuples(st.just("move"), st.integers(0, 40), st.integers(0, 40)),
        st.tuples(st.just("undo")),
        st.tuples(st.just("redo")),
    ))


@settings(max_examples=200, deadline=None)
@given(st.lists(writes(), min_size=1, max_size=14), st.integers(0, 15), st.lists(_edits(), max_size=12))
def test_a_computation_under_way_follows_edits_made_between_its_slices(
    messages: list[dict[str, Any]], start: int, actions: list[tuple[Any, ...]]
) -> None:
    """The window slices `CursorState.steps` and edits the context between two slices (its refresh comes
    later, debounced): whatever the edits, a computation finished after them is the state of the context as
    it is then, never a fold of the old scan over the new messages (paranoid mode checks every result)."""
    context = Context(messages)
    state = CursorState(context)
    undo: list[Edit] = []
    redo: list[Edit] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_blame, "FOLD_WRITES", 1)
        patch.setattr(_blame, "SPACING", 1)
        at, out = start, list[IdentityState]()
        steps = state.steps(at, out)
        for action in actions:
            size = len(context)
            if action[0] == "slices":
                for _ in range(action[1]):
                    if next(steps, StopIteration) is StopIteration:  # done: the next refresh
                        out = []
                        steps = state.steps(at, out)
                continue
            if action[0] == "cursor":
                at, out = action[1], []
                steps = state.steps(at, out)
                continue
            if action[0] in ("undo", "redo"):
                done, other = (undo, redo) if action[0] == "undo" else (redo, undo)
                if done:
                    other.append(context.apply(done.pop()))
                continue
            edit: Edit = (
                Replace(action[1] % size, action[2]) if action[0] == "replace"
                else Insert(action[1] % size + 1, dict(context[action[1] % size])) if action[0] == "duplicate"
                else Move(action[1] % size, action[2] % size)
            )
            undo.append(context.apply(edit))
            redo.clear()
        for _ in steps:
            pass
        expected = CursorState(Context(context.messages)).at(at)
        assert [(f.identity, f.value, f.writer) for f in out] == [(f.identity, f.value, f.writer) for f in expected]
    state.close()


def test_an_append_keeps_the_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an append the state folds the new write only (a running document appends output after output);
    after any other edit it folds again from the start."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(100)])
    state = CursorState(context)
    state.at()
    folded = _counted_folds(monkeypatch)
    context.append({"type": "state", "data": {"n": 100}})
    assert state.at()[0].writer[("n",)] == 100
    assert folded == [100]
    folded.clear()
    context.replace(0, {"type": "state", "data": {"m": 0}})
    assert state.at()[0].value == {"m": 0, "n": 100}
    assert len(folded) == 101
    state.close()


def test_an_append_to_a_layer_that_had_no_write_is_folded() -> None:
    """A global write appended to a kind only instances wrote (and an instance's first write appended) is in
    the state computed next, with the folds kept across the append."""
    context = Context([{"type": "state", "_instance": "a", "data": {"x": 1}}])
    state = CursorState(context)
    assert [(s.identity, s.value) for s in state.at()] == [(("state", "a"), {"x": 1})]
    context.append({"type": "state", "data": {"g": 2}})
    context.append({"type": "state", "_instance": "b", "data": {"y": 3}})
    assert [(s.identity, s.value) for s in state.at()] == [
        (("state", "a"), {"x": 1, "g": 2}), (("state", None), {"g": 2}), (("state", "b"), {"g": 2, "y": 3}),
    ]
    state.close()


def test_an_instance_fold_started_again_on_another_global_count_is_freed_in_slices(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A cursor move past a global write starts each instance's fold again: the old fold's marks and writers are
    buried for `free_some`, not freed in the slice that moved (at a million messages, tens of milliseconds)."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    monkeypatch.setattr(_graveyard, "_due", [])  # (off again after the test)
    free_later(lambda: None)
    monkeypatch.setattr(_blame, "SPACING", 2)
    context = Context([{"type": "state", "data": {"g": 0}},
                       *({"type": "state", "_instance": "i", "data": {f"k{n}": n}} for n in range(8)),
                       {"type": "state", "data": {"g": 1}},
                       {"type": "state", "_instance": "i", "data": {"last": 1}}])
    state = CursorState(context)
    state.at(9)
    track = state._folds.instance_tracks[("state", "i")][1]
    writers = [mark.held for mark in track.marks]
    assert len(writers) > 1
    assert all(writers)
    state.at(11)  # past the second global write: the instance folds on the new global value
    assert state._folds.instance_tracks[("state", "i")][1] is not track
    assert any(buried is track.marks for buried in _graveyard._buried)
    assert all(any(writer is buried for buried in _graveyard._buried) for writer in writers)
    del track, writers
    assert any(free_some(float("inf")) for _ in range(5))  # (a writer still held when looked at: a later call)
    assert not _graveyard._buried
    state.close()


def test_a_closed_state_lets_go_of_its_folds_whole_and_the_graveyard_buries_a_track_a_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing a state (the state view's, another document opened) buries nothing in the call: its folds are one
    thing for the graveyard, which buries a track (its marks and their writers) a step, then frees them. Burying
    every mark at once was one slice of the window's at a million messages (47,000 marks over 77 tracks)."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    monkeypatch.setattr(_graveyard, "_due", [])  # (off again after the test)
    free_later(lambda: None)
    monkeypatch.setattr(_blame, "SPACING", 2)
    context = Context([{"type": "state", "_instance": f"i{n % 3}", "data": {f"k{n}": n}} for n in range(12)])
    state = CursorState(context)
    state.at()
    folds = state._folds
    tracks = [*folds.global_tracks.values(), *(track for _, track in folds.instance_tracks.values())]
    assert len(tracks) == 4
    assert all(len(track.marks) > 1 for track in tracks[1:])
    state.close()
    (steps,) = _graveyard._buried  # the folds, their marks not yet touched
    assert all(track.marks for track in tracks)
    next(steps)
    assert len(folds.global_tracks) + len(folds.instance_tracks) == 3
    assert sum(any(buried is track.marks for buried in _graveyard._buried) for track in tracks) == 1
    del tracks
    assert any(free_some(float("inf")) for _ in range(5))
    assert not _graveyard._buried
    assert not folds.global_tracks
    assert not folds.instance_tracks


def test_a_fold_never_changes_a_value_it_showed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The state's fold writes in place only what it made since its last mark: every mark's root and every state
    given out is the resolved value at its cursor, and stays so while the fold goes on, back and forth."""
    import copy

    monkeypatch.setattr(_blame, "SPACING", 3)
    messages: list[dict[str, Any]] = []
    for n in range(60):
        messages.append({"type": "state", "data": {f"k{n % 7}": {"n": n}, "items": {f"i{n}": [n]}}})
        if n % 5 == 0:
            messages.append({"type": "state", "data": {"n": n}, "_outputPath": "†state.items.i0",
                             "_outputMethod": "push"})
            messages.append({"type": "state", "data": {f"a{n}": n}, "_outputPath": "†state", "_outputMethod": "assign"})
    context, layers = Context(messages), Folds(0)
    shown: list[tuple[Any, Any]] = []
    for at in (20, len(messages), 7, 40, 41, None):
        value = _state(context, at if at is not None else len(messages), layers)[0].value
        assert value == context.resolve("†state", at=at).value
        shown.append((value, copy.deepcopy(value)))
    track = layers.global_tracks["state"]
    assert len(track.marks) > 10
    for mark in track.marks[1:]:  # (the first: the start, nothing)
        assert mark.root == context.resolve("†state", at=context._store.order.index_of(mark.after) + 1).value
        shown.append((mark.root, copy.deepcopy(mark.root)))
    _state(context, 10, layers)
    _state(context, len(messages), layers)
    assert all(value == was for value, was in shown)
