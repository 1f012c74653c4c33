"""`Cursor`: watches follow a time cursor through cursor moves and edits, always equal to `Context.resolve`,
and are called back exactly when their result changed."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import calls_back, documents, edits, moved_id, seen, watch_lists

from contextdeck.engine import Context, Cursor, Remove, Resolution, free_later, free_some, parse_expression
from contextdeck.engine.resolve import _graveyard, _keys
from contextdeck.engine.resolve._incremental import _index
from contextdeck.engine.resolve._incremental._index import FOLD_STEPS


def key(resolution: Resolution) -> tuple[Any, ...]:
    return (resolution.found, resolution.value if resolution.found else None, tuple(resolution.sources))


@settings(max_examples=150, deadline=None)
@given(documents, watch_lists(4), st.data())
def test_watches_at_a_cursor_equal_resolve_after_every_move_and_edit(
    messages: list[dict[str, Any]], pins: list[tuple[str, str | None]], data: st.DataObject
) -> None:
    """After any sequence of cursor moves (None is the latest) and edits, every watch's `current` is what
    `Context.resolve` gives at the cursor (sliced or not: once its steps ran); a changed watch was called
    back, with the new result."""
    context = Context(messages)
    sliced = data.draw(st.booleans())
    cursor = Cursor(context, data.draw(st.one_of(st.none(), st.integers(0, len(messages) + 1))), sliced=sliced)
    calls: list[list[Resolution]] = [[] for _ in pins]
    watches = [cursor.watch(expression, calls[n].append, instance) for n, (expression, instance) in enumerate(pins)]
    for _ in range(data.draw(st.integers(1, 6))):
        before, moved = [seen(context, w.current) for w in watches], None
        for log in calls:
            log.clear()
        if data.draw(st.booleans()):
            cursor.move(data.draw(st.one_of(st.none(), st.integers(0, len(context) + 1))))
        else:
            edit = data.draw(edits(len(context)))
            moved = moved_id(context, edit)
            context.apply(edit)
        for _ in cursor.steps():  # sliced: the pending watches, a few at a time
            pass
        assert cursor.pending == 0
        for n, watch in enumerate(watches):
            expression, instance = pins[n]
            expected = context.resolve(expression, instance, cursor.at)
            assert key(watch.current) == key(expected), (expression, instance, cursor.at)  # renumbered when read
            if calls_back(context, before[n], moved, expected):
                assert calls[n], "a changed watch is called back"
            if calls[n]:
                assert key(calls[n][-1]) == key(expected)
            else:  # not called back: at most renumbered (the same messages)
                assert before[n] == seen(context, expected)
    cursor.close()


@settings(max_examples=150, deadline=None)
@given(documents, watch_lists(4), st.data())
def test_watches_of_a_sliced_cursor_moved_and_edited_between_its_steps_are_exact_once_resolved(
    messages: list[dict[str, Any]], pins: list[tuple[str, str | None]], data: st.DataObject
) -> None:
    """A sliced cursor (following the latest or not) is moved and its context edited between any two of its steps,
    with a chunk of one key (sources ranked eight a call): a watch neither pending at the cursor nor waiting for its
    first fold is what `Context.resolve` gives there, and once the steps are done every watch is."""
    saved, _keys.CHUNK = _keys.CHUNK, 1
    try:
        context = Context(messages)
        cursor = Cursor(context, data.draw(st.one_of(st.none(), st.integers(0, len(messages) + 1))), sliced=True)
        watches = [cursor.watch(expression, lambda _: None, instance) for expression, instance in pins]
        for _ in range(data.draw(st.integers(1, 8))):
            action = data.draw(st.sampled_from(["steps", "move", "edit"]))
            if action == "move":
                cursor.move(data.draw(st.one_of(st.none(), st.integers(0, len(context) + 1))))
            elif action == "edit":
                context.apply(data.draw(edits(len(context))))
            else:
                for _ in itertools.islice(cursor.steps(), data.draw(st.integers(1, 3))):
                    pass
            for watch, (expression, instance) in zip(watches, pins, strict=True):
                waiting = watch in cursor._pending or (watch.live is not None and not watch.resolved)
                if watch.resolved and not waiting:
                    expected = context.resolve(expression, instance, cursor.at)
                    assert key(watch.current) == key(expected), (expression, instance, cursor.at)
        for _ in cursor.steps():
            pass
        for watch, (expression, instance) in zip(watches, pins, strict=True):
            assert key(watch.current) == key(context.resolve(expression, instance, cursor.at)), (expression, instance)
        cursor.close()
    finally:
        _keys.CHUNK = saved


def test_a_renumbering_at_a_cursor_resolves_nothing_and_calls_back_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """An insert above the sources, at a past cursor or following the latest, is no change: no resolve, no
    callback, and `current` names the shifted indices."""
    context = Context([{"type": "state", "data": {"n": 1}}, {"type": "text"}, {"type": "state", "data": {"m": 2}}])
    past, latest = Cursor(context, 2), Cursor(context)
    calls: list[Resolution] = []
    watches = [past.watch("†state.n", calls.append), latest.watch("†state.n", calls.append)]
    resolved: list[str] = []
    resolve = context.resolve
    monkeypatch.setattr(context, "resolve", lambda e, *a: (resolved.append(str(e.source)), resolve(e, *a))[1])
    context.insert(0, {"type": "text", "text": "above"})
    assert (calls, resolved) == ([], [])
    assert [w.current.sources for w in watches] == [(1,), (1,)]
    assert watches[1].current is watches[1].live.current  # type: ignore[union-attr]  # a live one is the context's


def test_a_move_resolves_only_the_watches_it_can_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stepping over a `state` write resolves the `state` watch again, not the `input` one."""
    context = Context([{"type": "input", "input": {"n": 0}}, *({"type": "state", "data": {"n": n}} for n in range(5))])
    cursor = Cursor(context, 3)
    state = cursor.watch("†state.n", lambda r: None)
    cursor.watch("†input.n", lambda r: None)
    resolved: list[str] = []
    resolve = context.resolve
    monkeypatch.setattr(context, "resolve", lambda e, *a: (resolved.append(str(e.source)), resolve(e, *a))[1])
    cursor.move(4)
    assert resolved == ["†state.n"]
    assert state.current.value == 2


def test_following_the_latest_calls_back_only_the_watches_it_changes() -> None:
    """A cursor moved to follow the latest calls back the watches whose value is another there, not the others."""
    context = Context([{"type": "input", "input": {"n": 0}}, *({"type": "state", "data": {"n": n}} for n in range(5))])
    cursor = Cursor(context, 3)
    calls: list[str] = []
    cursor.watch("†state.n", lambda r: calls.append("state"))
    cursor.watch("†input.n", lambda r: calls.append("input"))
    cursor.move(None)
    assert calls == ["state"]


def test_a_sliced_cursor_resolves_pending_watches_in_slices() -> None:
    """With `sliced`, a far jump notes every watch as pending and `steps` resolves them a few at a time, and
    the path's first fold up to the cursor (2,890 writes more) a slice of at most `FOLD_STEPS` at a time."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(3000)])
    cursor = Cursor(context, 10, sliced=True)
    watches = [cursor.watch("†state.n", lambda r: None) for _ in range(40)]
    cursor.move(2900)
    assert cursor.pending == 40
    assert watches[0].current.value == 9
    folded = [context._lanes._steps for _ in cursor.steps()]
    assert len(folded) >= 40 + 2890 // FOLD_STEPS
    assert max(b - a for a, b in itertools.pairwise([10, *folded])) <= FOLD_STEPS
    assert {w.current.value for w in watches} == {2899}


def test_a_sliced_cursor_leaving_the_latest_closes_its_context_watches_in_its_steps() -> None:
    """Moving a sliced cursor off the latest keeps each watch's value and closes the context watches they followed
    in its steps, one a step: meanwhile an append, which the latest would show, calls back no watch."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(10)])
    cursor = Cursor(context, None, sliced=True)
    calls: list[Resolution] = []
    watches = [cursor.watch("†state.n", calls.append) for _ in range(3)]
    for _ in cursor.steps():
        pass
    calls.clear()
    cursor.move(10)
    assert len(context._watchers._watches) == 3  # (not closed yet)
    context.append({"type": "state", "data": {"n": 99}})
    assert calls == []
    assert [w.current.value for w in watches] == [9, 9, 9]
    assert len(list(cursor.steps())) == 3
    assert not context._watchers._watches
    assert [w.current.value for w in watches] == [9, 9, 9]


def test_a_sliced_cursor_joining_the_latest_makes_its_context_watches_in_its_steps() -> None:
    """Moving a sliced cursor to the latest makes the context watch each of its watches follows in its steps, one a
    step (hundreds at once are more than a frame): until then a watch is unresolved, keeps its value and counts as
    pending; once joined, it follows the latest, an append included, and is called back. Moved off again before all
    joined, those still to join are resolved at the new cursor."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(10)])
    cursor = Cursor(context, 5, sliced=True)
    calls: list[Resolution] = []
    watches = [cursor.watch("†state.n", calls.append) for _ in range(3)]
    for _ in cursor.steps():
        pass
    calls.clear()
    cursor.move(None)
    assert [w.live for w in watches] == [None, None, None]  # (none made in the move)
    assert (cursor.pending, [w.resolved for w in watches]) == (3, [False, False, False])
    assert [w.current.value for w in watches] == [4, 4, 4]
    steps = cursor.steps()
    next(steps)
    assert [w.live is not None for w in watches] == [True, False, False]
    next(steps)
    assert [w.live is not None for w in watches] == [True, True, False]
    for _ in steps:
        pass
    assert cursor.pending == 0
    assert [w.current.value for w in watches] == [9, 9, 9]
    assert [c.value for c in calls] == [9, 9, 9]
    cursor.move(7)
    for _ in cursor.steps():
        pass
    assert [w.current.value for w in watches] == [6, 6, 6]
    cursor.move(None)
    steps = cursor.steps()
    next(steps)
    cursor.move(2)  # before all joined: each resolved at the new cursor
    for _ in cursor.steps():
        pass
    assert (cursor.pending, [w.live for w in watches]) == (0, [None, None, None])
    assert [w.current.value for w in watches] == [1, 1, 1]
    cursor.move(None)
    for _ in cursor.steps():
        pass
    assert len(context._watchers._watches) == 3
    calls.clear()
    context.append({"type": "state", "data": {"n": 99}})
    assert [w.current.value for w in watches] == [99, 99, 99]
    assert [c.value for c in calls] == [99, 99, 99]


def test_leaving_the_latest_lets_go_of_what_each_watch_kept_before_it_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving off the latest, the resolution each watch kept before it followed (a whole kind's value and sources
    each at a million messages) goes to the graveyard, freed in its slices, not in the move: the resolutions first,
    then each value a slice at a time (freed with its resolution, one step of the resolutions freed whole kinds:
    a step past its time); the watches show the latest."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    context = Context([{"type": "state", "data": {"n": n, f"k{n}": n}} for n in range(10)])
    cursor = Cursor(context, 5, sliced=True)
    watches = [cursor.watch("†state", lambda _resolution: None) for _ in range(2)] + [
        cursor.watch("†state.n", lambda _resolution: None)]
    for _ in cursor.steps():
        pass
    kept = [watch._resolution for watch in watches]
    assert [resolution.value for resolution in kept][1:] == [{"n": 4, **{f"k{n}": n for n in range(5)}}, 4]
    cursor.move(None)
    for _ in cursor.steps():
        pass
    free_later(lambda: None)
    try:
        cursor.move(10)
        buried = [id(thing) for thing in _graveyard._buried]
        values = [id(resolution.value) for resolution in kept[:2]]
        assert buried[-3:] == [*values, id(_graveyard._buried[-1])]
        assert [id(resolution) for resolution in _graveyard._buried[-1]] == [id(resolution) for resolution in kept]
        del kept
        assert free_some(float("inf")) or _graveyard.only_held()  # (a value its path's log holds too: kept for it)
    finally:
        free_later(None)
    assert [w.current.value for w in watches][2] == 9


@pytest.mark.parametrize("sliced", [False, True])
def test_a_write_in_another_lane_changes_what_a_later_root_push_does(sliced: bool) -> None:
    """`†t.a` set, then a push at the root of `t`: the push fails on the object, and its problem is a
    diagnostic of `†t.b` too. Removing the set (in lane `a`) lets the push apply: a watch of `†t.b` at a past
    cursor is resolved again although it reads another lane. (Found by the property test above.)"""
    context = Context([{"type": "text", "text": "hi"},
                       {"type": "data", "kind": "t", "data": {"a": None}, "_outputPath": "†t.a"},
                       {"type": "data", "kind": "t", "data": None, "_outputMethod": "push", "_outputPath": "†t"},
                       {"type": "text", "text": "after"}])
    cursor = Cursor(context, 3, sliced=sliced)
    calls: list[Resolution] = []
    watch = cursor.watch("†t.b", calls.append)
    assert [d.reason for d in watch.current.diagnostics] == ["push at the root: push onto an object, not an array"]
    context.apply(Remove(1))
    for _ in cursor.steps():
        pass
    assert watch.current.diagnostics == ()
    assert watch.current.diagnostics == context.resolve("†t.b", None, cursor.at).diagnostics
    assert calls == []  # a callback is for a changed found, value or source messages, not diagnostics
    cursor.close()


@pytest.mark.parametrize("sliced", [False, True])
def test_a_cursor_moved_over_a_global_write_resolves_the_lanes_an_instance_push_at_the_root_reads(
    sliced: bool,
) -> None:
    """An instance's push at the root folds after every global write, earlier ones in the context too: with the
    global `†t.a` merged the push fails on the object, without it the push makes the array. A cursor moved back
    over that global write, in lane `a`, resolves again a watch of the instance's `†t.0`, in another lane, and
    calls it back with what it finds there now."""
    context = Context([{"type": "data", "kind": "t", "_instance": "1", "data": 7, "_outputMethod": "push",
                        "_outputPath": "†t"},
                       {"type": "data", "kind": "t", "data": {"a": None}, "_outputPath": "†t.a"}])
    cursor = Cursor(context, sliced=sliced)
    calls: list[Resolution] = []
    watch = cursor.watch("†t.0", calls.append, "1")
    for _ in cursor.steps():
        pass
    assert not watch.current.found
    cursor.move(1)
    for _ in cursor.steps():
        pass
    assert (watch.current.found, watch.current.value) == (True, 7)
    assert watch.current == context.resolve("†t.0", "1", 1)
    assert [call.value for call in calls] == [7]
    cursor.close()


def test_a_sliced_cursors_new_watch_folds_a_long_path_in_slices_then_calls_back() -> None:
    """With `sliced`, a watch made at a cursor whose path is not folded that far is pending after one slice of its
    first fold (at most `FOLD_STEPS` writes), not yet `resolved`; `steps` folds the rest a slice at a time and calls
    it back with its first resolution. A short fold is resolved at once."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(3000)])
    cursor = Cursor(context, 2900, sliced=True)
    calls: list[Resolution] = []
    watch = cursor.watch("†state.n", calls.append)
    assert (cursor.pending, watch.resolved, calls) == (1, False, [])
    first = context._lanes._steps
    assert first <= FOLD_STEPS
    folded = [context._lanes._steps for _ in cursor.steps()]
    assert len(folded) >= 2900 // FOLD_STEPS
    assert max(b - a for a, b in itertools.pairwise([first, *folded])) <= FOLD_STEPS
    assert watch.resolved
    assert [r.value for r in calls] == [2899]
    assert watch.current.value == 2899
    short = cursor.watch("†state.n", calls.append)  # the same path, folded now: at once, no callback
    assert (short.resolved, cursor.pending, len(calls), short.current.value) == (True, 0, 1, 2899)


def test_a_new_watch_still_folding_when_the_cursor_follows_the_latest_is_called_back() -> None:
    """A watch whose first fold was still pending when the cursor moved to follow the latest is folded live in the
    cursor's steps then, and called back with that first resolution."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(3000)])
    cursor = Cursor(context, 2900, sliced=True)
    calls: list[Resolution] = []
    watch = cursor.watch("†state.n", calls.append)
    cursor.move(None)
    assert (watch.resolved, cursor.pending, calls) == (False, 1, [])
    assert len(list(cursor.steps())) >= 3000 // FOLD_STEPS - 1
    assert watch.resolved
    assert [r.value for r in calls] == [2999]
    assert cursor.pending == 0


def test_a_sliced_cursors_watch_made_without_folding_now_waits_for_its_steps() -> None:
    """Without `fold_now`, nothing of a new watch's first fold is done at once, however short, even for a path
    already folded: it is pending, and `steps` resolves it and calls it back."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(5)])
    cursor = Cursor(context, 4, sliced=True)
    calls: list[Resolution] = []
    watch = cursor.watch("†state.n", calls.append, fold_now=False)
    assert (watch.resolved, cursor.pending, context._lanes._steps) == (False, 1, 0)
    for _ in cursor.steps():
        pass
    assert [r.value for r in calls] == [3]
    again = cursor.watch("†state.n", calls.append, fold_now=False)
    assert (again.resolved, cursor.pending) == (False, 1)
    assert len(list(cursor.steps())) == 1  # folded already: one step
    assert again.current.value == 3


def test_following_the_latest_a_sliced_cursors_new_watch_folds_its_tracks_in_slices(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Following the latest, a sliced cursor's new watch is the context's own, whose new tracks (a global and an
    instance one) are folded at most `FOLD_STEPS` writes a step: a slice of each at once, the rest in `steps`;
    it is `resolved` and called back with its first resolution when both are, an edit in between included."""
    stepped: list[int] = []
    step = _index.State.step
    monkeypatch.setattr(_index.State, "step", lambda state, *args, **kwargs: (stepped.append(1),
                                                                               step(state, *args, **kwargs))[1])
    context = Context([{"type": "state", "data": {f"k{n % 7}": n}, **({"_instance": "①"} if n % 3 else {})}
                       for n in range(3000)])
    cursor = Cursor(context, None, sliced=True)
    calls: list[Resolution] = []
    watch = cursor.watch("†state", calls.append, "①")
    assert (watch.resolved, cursor.pending, calls) == (False, 1, [])
    assert len(stepped) <= 2 * FOLD_STEPS
    context.insert(1, {"type": "state", "data": {"k0": "early"}})  # what was folded starts again
    counts = [len(stepped) for _ in cursor.steps()]
    assert max(b - a for a, b in itertools.pairwise(counts)) <= FOLD_STEPS
    assert (watch.resolved, cursor.pending) == (True, 0)
    assert calls == [context.resolve("†state", "①")] == [watch.current]
    context.append({"type": "state", "data": {"k0": "late"}, "_instance": "①"})
    assert calls[-1].value["k0"] == "late" == watch.current.value["k0"]


def test_a_watch_made_live_without_folding_now_waits_for_the_cursors_steps() -> None:
    """Moving a sliced cursor to follow the latest folds none of its watches' live tracks in that call: each is
    pending until `steps`, which calls it back; moved back to a cursor before that, it is resolved there."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(300)])
    cursor = Cursor(context, 10, sliced=True)
    calls: list[Resolution] = []
    watch = cursor.watch("†state.n", calls.append)
    assert watch.current.value == 9
    cursor.move(None)
    assert (watch.resolved, cursor.pending, calls) == (False, 1, [])
    cursor.move(20)
    assert (watch.resolved, cursor.pending) == (False, 1)
    list(cursor.steps())
    assert [r.value for r in calls] == [19]
    assert watch.resolved
    cursor.move(None)
    list(cursor.steps())
    assert [r.value for r in calls] == [19, 299]
    assert watch.current.value == 299


def test_a_cursor_watch_takes_what_a_context_watch_takes() -> None:
    """`Cursor.watch` took only a string (an `Expression` failed inside the parser with an AttributeError): it takes
    a string or an `Expression` as `Context.watch` does, and refuses anything else, or a callback that is not
    callable, with the same TypeError."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(5)])
    cursor = Cursor(context, 3)
    assert cursor.watch(parse_expression("†state.n"), lambda _: None).current.value == 2
    for cursor_or_context in (cursor, context):
        with pytest.raises(TypeError, match=r"expected an expression .* got int"):
            cursor_or_context.watch(7, lambda _: None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"watch '†state\.n': the callback is not callable: str"):
            cursor_or_context.watch("†state.n", "print")  # type: ignore[arg-type]


def raises_first(heard: list[object]) -> Any:
    def fails(resolution: Resolution) -> None:
        heard.append("raised")
        raise RuntimeError("a callback's own bug")
    return fails


def test_a_callback_raising_in_a_sliced_first_fold_holds_back_no_other_callback_of_that_slice() -> None:
    """Following the latest with `sliced`, two watches of one path are folded in the same slice: the first one's
    callback raised and the second was called only in the next slice. Both are called in that slice, and the error
    then reaches the caller of `steps`, as after an edit."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(3000)])
    cursor = Cursor(context, None, sliced=True)
    heard: list[object] = []
    cursor.watch("†state.n", raises_first(heard))
    cursor.watch("†state.n", lambda resolution: heard.append(resolution.value))
    with pytest.raises(RuntimeError, match="a callback's own bug"):
        for _ in cursor.steps():
            pass
    assert heard == ["raised", 2999]
    assert cursor.pending == 0


def test_a_callback_raising_after_a_move_holds_back_no_other_callback() -> None:
    """Not sliced, a move calls back every watch whose result changed even when an earlier callback raises (the
    rest waited for the next move or edit); that error then reaches the caller of `move`."""
    context = Context([{"type": "state", "data": {"n": n}} for n in range(30)])
    cursor = Cursor(context, 20)
    heard: list[object] = []
    cursor.watch("†state.n", raises_first(heard))
    cursor.watch("†state.n", lambda resolution: heard.append(resolution.value))
    with pytest.raises(RuntimeError, match="a callback's own bug"):
        cursor.move(25)
    assert heard == ["raised", 24]
    assert cursor.pending == 0
