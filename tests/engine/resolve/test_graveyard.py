"""The graveyard (`resolve/_graveyard.py`): what the engine lets go of is freed at once, or, once a thread turned
it on, buried and freed a slice at a time, each list or dict only once nothing else holds it."""

from __future__ import annotations

import itertools
import sys
import threading
import weakref
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from contextdeck.engine import Context, free_later, free_some, let_go, only_held
from contextdeck.engine.resolve import _graveyard
from contextdeck.engine.resolve._incremental._index import Checkpoint
from contextdeck.engine.resolve._keys import CHUNK, Ids


@pytest.fixture
def buried(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The graveyard on for this thread (nothing asks for `free_some`: the test does), empty at first."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    asked: list[None] = []
    free_later(lambda: asked.append(None))
    try:
        yield _graveyard._buried
    finally:
        free_later(None)


def _freed_all() -> bool:
    """`free_some` until it is done, or all it has left is still held elsewhere, in a few calls."""
    return any(free_some(float("inf")) or only_held() for _ in range(5))


class _Freed:
    """A stand-in for a mark: counts itself freed."""

    count = 0

    def __del__(self) -> None:
        _Freed.count += 1


@pytest.mark.parametrize("cost", [1e-6, 0.0003, 0.003])  # an entry's freeing, in seconds
def test_a_step_between_two_looks_at_the_clock_frees_what_fits_its_time(
        monkeypatch: pytest.MonkeyPatch, cost: float) -> None:
    """Between two looks at the clock `free_some` frees one entry of a list at first, twice as many after a quick
    step and half as many after a slow one (`STEP_S`), at most `SLICE`: an entry may be a mark holding a whole
    kind's value (64 of those between two looks were 19 ms at a million messages). The next list starts with one
    entry again, and `free_some` stops at the deadline with the rest still buried."""
    looks: list[int] = []  # entries freed at each look at the clock
    clock = SimpleNamespace(perf_counter=lambda: looks.append(_Freed.count) or _Freed.count * cost)
    monkeypatch.setattr(_graveyard, "time", clock)
    monkeypatch.setattr(_graveyard, "_buried", [[_Freed() for _ in range(300)] for _ in range(2)])
    _Freed.count = 0
    assert not free_some(100 * cost)
    assert 0 < _Freed.count < 600
    assert free_some(float("inf"))
    assert _Freed.count == 600
    steps = [after - before for before, after in itertools.pairwise(looks) if after > before]
    assert steps[0] == 1
    assert steps[list(itertools.accumulate(steps)).index(300) + 1] == 1  # the second list
    assert max(steps) == (_graveyard.SLICE if cost < 1e-5 else 2 if cost < _graveyard.STEP_S else 1)


def test_the_list_under_a_chain_let_go_of_starts_with_one_entry(monkeypatch: pytest.MonkeyPatch,
                                                                 buried: list[Any]) -> None:
    """A chain is let go of a link a step (`unlinked`), each step quick; the list buried under it still starts with
    one entry between two looks at the clock, not as many as the chain's steps grew to: its entries may be marks,
    each much more to free than a link."""
    looks: list[int] = []  # entries freed at each look at the clock
    monkeypatch.setattr(_graveyard, "time", SimpleNamespace(perf_counter=lambda: looks.append(_Freed.count) or 0.0))
    buried += [[_Freed() for _ in range(_graveyard.SLICE)], iter([None] * _graveyard.SLICE)]
    _Freed.count = 0
    assert free_some(float("inf"))
    assert _Freed.count == _graveyard.SLICE
    steps = [after - before for before, after in itertools.pairwise(looks) if after > before]
    assert steps[:3] == [1, 2, 4]


def test_a_dict_is_emptied_a_slice_at_a_time_and_only_when_nothing_else_holds_it(
        monkeypatch: pytest.MonkeyPatch, buried: list[Any]) -> None:
    """A state's writers may name every path of a whole kind: one let go of is emptied `SLICE` entries between two
    looks at the clock; one still held elsewhere (a fold's mark, a view) is let go of, never emptied. (This is
    also the check that `_ALONE` counts the references CPython sees while `free_some` looks.)"""
    class Writers(dict[tuple[str, ...], int]):  # (a dict that can be followed by a weak reference)
        pass

    slice_ = _graveyard.SLICE
    sizes: list[int] = []
    alone = Writers({(str(n),): n for n in range(3 * slice_)})
    seen = weakref.ref(alone)
    held: dict[tuple[str, ...], int] = {("kept",): 1}
    clock = SimpleNamespace(perf_counter=lambda: sizes.append(len(seen() or ())) or 0.0)
    monkeypatch.setattr(_graveyard, "time", clock)
    let_go(alone, held)
    del alone  # (the graveyard's is the only reference left)
    assert not free_some(1.0)
    assert not free_some(1.0)  # (the held one is looked at again at each call)
    assert only_held()
    assert held == {("kept",): 1}
    # Held first (let go of at once), then at each look twice as many of the other (the clock says no time passed),
    # at most a slice; emptied, it is freed.
    steps = [before - after for before, after in itertools.pairwise(sizes) if before != after]
    assert steps == [1, 2, 4, 8, 16, 32, *[slice_] * 2, 3 * slice_ - 191]
    assert seen() is None
    assert not buried


def test_a_list_still_held_when_looked_at_is_kept_and_emptied_in_steps_once_alone(
        monkeypatch: pytest.MonkeyPatch, buried: list[Any]) -> None:
    """A list let go of while something else still holds it (a replaced document's writes, which its path logs and
    folds hold until the last of them goes) is kept, not let go of: its last other holder does not free it whole,
    `free_some` says it is not done while it keeps one, and a later call empties it a step at a time."""
    entries = [_Freed() for _ in range(300)]
    holder = [entries]
    let_go(entries)
    del entries
    _Freed.count = 0
    assert not free_some(float("inf"))  # not done: one is still held
    assert only_held()
    assert not buried
    assert _Freed.count == 0
    holder.clear()  # its last other holder lets go of it
    assert _Freed.count == 0  # not freed whole there
    looks: list[int] = []  # entries freed at each look at the clock
    monkeypatch.setattr(_graveyard, "time", SimpleNamespace(perf_counter=lambda: looks.append(_Freed.count) or 0.0))
    assert free_some(1.0)
    assert _Freed.count == 300
    steps = [after - before for before, after in itertools.pairwise(looks) if after > before]
    assert len(steps) > 1
    assert max(steps) <= _graveyard.SLICE


def test_a_list_held_by_another_buried_one_is_emptied_after_it(buried: list[Any]) -> None:
    """A list still held by a buried one when looked at (a mark's writers under the marks) is emptied once the other
    is: `free_some` says it is not done until it looked at the held ones after freeing something."""
    inner = [_Freed() for _ in range(10)]
    outer = [inner]
    let_go(outer, inner)  # (the inner one is looked at first)
    del inner, outer
    _Freed.count = 0
    calls = 1
    while not free_some(float("inf")):
        calls += 1
    assert calls == 2
    assert _Freed.count == 10
    assert not buried
    assert not _graveyard._held


def test_a_list_buried_twice_and_still_held_is_emptied_once_alone(buried: list[Any]) -> None:
    """Kept while held, a list buried twice (a state's writers shared by two marks) is kept once: alone, it is
    emptied, and nothing of it is left in the graveyard."""
    entries = [_Freed() for _ in range(10)]
    holder = [entries]
    let_go(entries, entries)
    _Freed.count = 0
    assert not free_some(float("inf"))  # (looked at twice, freeing nothing)
    assert list(_graveyard._held.values()) == [entries]
    assert entries == holder[0]  # not emptied while held
    del entries
    holder.clear()
    assert free_some(float("inf"))
    assert _Freed.count == 10
    assert not buried
    assert not _graveyard._held


def test_off_or_on_another_thread_nothing_is_buried(buried: list[Any]) -> None:
    """The command line (the graveyard off) and the window's worker threads free what they let go of at once."""
    done = threading.Thread(target=let_go, args=([1, 2, 3],))
    done.start()
    done.join()
    assert not buried
    free_later(None)
    context = _logged()
    context.replace(1, {"type": "s", "s": {"a": 9}})
    assert not buried


def _logged() -> Context:
    """A context whose path logs of `†s.a` (global and instance "i") are folded and read."""
    context = Context([{"type": "s", "s": {"a": n, "b": n}} for n in range(40)]
                      + [{"type": "s", "_instance": "i", "s": {"a": {"x": n}}} for n in range(5)]
                      + [{"type": "s", "s": {"a": "bad"}, "_outputPath": "†s.a.x", "_outputMethod": "push"}])
    assert context.resolve("†s.a").value == 39
    assert context.resolve("†s.a.x", "i").value == 4
    assert context.resolve("†s.a").diagnostics  # (the bad push: a problem in the log)
    return context


def test_the_path_logs_an_edit_drops_are_buried_and_all_freed_later(buried: list[Any]) -> None:
    """An edit in a path's lane drops its logs: their big lists (steps, changes, problems, marks, results) wait in
    the graveyard instead of being freed in the edit, and `free_some` frees them all."""
    context = _logged()
    logs = list(context._lanes._logs.values())
    assert len(logs) == 3  # †s.a, †s.a.x and †s.a.x @i
    lists = {id(part) for log in logs for part in (log.ids, log.changes, log.change_keys, log.failed,
                                                   log.problems_at, log.marks, log.sealed, log.results)}
    sizes = sum(len(log.ids) for log in logs)
    del logs
    context.replace(3, {"type": "s", "s": {"a": -1}})
    assert not context._lanes._logs
    assert lists == {id(thing) for thing in buried}
    assert sum(len(thing) for thing in buried if isinstance(thing, list)) >= sizes  # none emptied yet
    assert _freed_all()
    assert not buried
    assert context.resolve("†s.a.x", "i").value == 4  # made again, after the edit


def _push(n: int, instance: str | None = None) -> dict[str, Any]:
    message = {"type": "s", "s": {"a": n}, "_outputPath": "†s.a", "_outputMethod": "push"}
    return message if instance is None else {**message, "_instance": instance}


def test_resolutions_made_before_the_edit_still_read_right_once_it_is_all_freed(buried: list[Any]) -> None:
    """Resolutions kept from before the edit (their sources worked out when first read, in chunks, an instance's
    merged with the global ones) read the same once the logs they came from are freed."""
    messages = [_push(n) if n % 10 else _push(-n, "i") for n in range(3000)]
    context = Context(messages)
    asked = [("†s.a", "i", None), ("†s.a", None, None), ("†s.a", None, 700), ("†s.a", "i", 2000)]
    kept = [context.resolve(*question) for question in asked]
    context.insert(0, {"type": "s", "s": {"a": []}, "_outputPath": "†s.a"})
    assert buried
    assert _freed_all()
    again = Context(messages)
    assert [kept.sources for kept in kept] == [again.resolve(*question).sources for question in asked]


def test_a_relabel_lets_go_of_every_log(buried: list[Any]) -> None:
    """A relabel of the order drops every log (their keys name nothing any more): through the graveyard too."""
    context = _logged()
    assert context._lanes._logs
    context._lanes.clear()
    assert not context._lanes._logs
    assert not context._lanes._once
    assert context._lanes._steps == 0
    assert buried
    assert _freed_all()


def test_a_context_let_go_of_is_buried_and_all_freed_later(buried: list[Any]) -> None:
    """A replaced document is freed where its last holder drops it (a view's slice, the hand-over): its messages,
    writes, order and path logs wait in the graveyard instead of being freed there, and `free_some` frees them."""
    context = _logged()
    first, size = context[0], len(context)
    logs = {id(log.ids) for log in context._lanes._logs.values()}
    assert logs
    del context
    assert any(isinstance(thing, list) and len(thing) == size and thing[0] is first for thing in buried)  # whole
    assert logs <= {id(thing) for thing in buried}
    assert _freed_all()
    assert not buried


def test_a_dying_contexts_path_logs_are_buried_in_one_go(buried: list[Any]) -> None:
    """A replaced document's path logs (hundreds at a million messages) are buried together, the graveyard asked
    once, with the dict that holds them on top (freed first, so that their lists are alone when freed)."""
    context = _logged()
    lanes = context._lanes
    held, store = lanes._logs, context._store  # (the store is buried on its own when it goes: held here)
    lists = {id(part) for log in held.values() for part in (log.ids, log.changes, log.change_keys, log.failed,
                                                          log.problems_at, log.marks, log.sealed, log.results)}
    del context
    buried.clear()
    asked: list[None] = []
    free_later(lambda: asked.append(None))
    del lanes
    assert asked == [None]
    assert buried[-1] is held
    assert len(held) == 3
    assert lists | {id(store.writes), id(store.order.key)} == {id(thing) for thing in buried[:-1]}
    del held, store
    assert _freed_all()
    assert not buried


def test_a_dying_contexts_writes_are_emptied_in_steps_after_its_path_logs(buried: list[Any],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's writes and order keys, which every path log of a replaced document holds, are emptied a step at a
    time once the logs are gone: the last log freed is not their last holder (freeing them whole at a million
    messages was a quarter of a second in one step)."""
    context = _logged()
    store = context._store
    writes, keys, size = id(store.writes), id(store.order.key), len(store.writes)
    del context, store
    ticks = itertools.count()
    monkeypatch.setattr(_graveyard, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    seen: dict[int, list[int]] = {writes: [], keys: []}
    while buried:
        free_some(next(ticks) + 2)  # (one step a call: the clock moves on by one at each look)
        for thing in buried:
            if id(thing) in seen:
                seen[id(thing)].append(len(thing))
    assert 0 < min(seen[writes]) < size
    assert 0 < min(seen[keys]) < size


def test_a_track_whose_last_watch_closes_lets_go_of_its_marks(buried: list[Any]) -> None:
    """Closing the last watch of a whole kind (turning Follow Latest off closes every pin's) buries its track's
    checkpoints and each lane's marks instead of freeing them in the call; the watch of another kind keeps its own,
    and `free_some` frees them all."""
    context = Context([{"type": "s", "s": {f"k{n % 3}": [n]}, "_outputMethod": "merge"} for n in range(600)])
    whole, other = context.watch("†s", lambda _: None), context.watch("†t", lambda _: None)
    fold = context._watchers._tracks["s", None, None].fold
    assert fold is not None
    assert fold.checkpoints.items
    assert fold.lanes
    marks = fold.checkpoints.items
    lanes = sorted(len(kept) for kept in fold.lanes.values())
    del fold
    whole.close()
    assert buried[0] == []  # its sources' chunks: none in 600 writes
    assert isinstance(buried[1], Iterator)  # its first mark's problems (`unlinked`)
    assert buried[2] is marks
    assert lanes == sorted(len(thing) for thing in buried[3:])  # each lane's marks, as a list
    assert ("t", None, None) in context._watchers._tracks
    first = marks[0]
    held = sys.getrefcount(first)  # (the list's reference among them)
    del marks, whole  # (as a cursor drops a watch it closed: then nothing but the graveyard holds them)
    assert _freed_all()
    assert not buried
    assert sys.getrefcount(first) == held - 1  # emptied, not only let go of
    assert other.current == context.resolve("†t")


def test_an_instance_tracks_marks_let_go_of_what_they_share_after_them(buried: list[Any]) -> None:
    """An instance's whole-kind fold starts from its global fold: every one of its marks holds all the global
    problems (a link each) and sources (a chunk each). Its track buries them under its marks, so that they are freed
    after the marks (the problems a link a step, `unlinked`), not all with the first mark; `free_some` frees them."""
    bad = {"type": "s", "s": {"a": "text"}, "_outputPath": "†s.a", "_outputMethod": "push"}
    global_part = [{"type": "s", "s": {"a": "text", f"k{n}": n}} if n % 2 else bad for n in range(600)]
    context = Context([*global_part, *({"type": "s", "_instance": "i", "s": {"b": n}} for n in range(600))])
    whole, own = context.watch("†s", lambda _: None), context.watch("†s", lambda _: None, "i")
    track = context._watchers._tracks["s", "i", None]
    assert track.fold is not None
    marks = track.fold.checkpoints.items
    problems = marks[0].held.diagnostics[0]
    assert len(problems) >= 200  # the global ones (a push onto text)
    del track
    own.close()
    whole.close()
    below = next(at for at, thing in enumerate(buried) if thing is marks)
    assert any(isinstance(thing, Iterator) for thing in buried[:below])
    del marks, problems, own, whole
    assert _freed_all()
    assert not buried


def test_a_track_whose_last_watch_closes_lets_go_of_its_sources_chunks(buried: list[Any]) -> None:
    """A whole kind's sources (its fold's `Ids`, its result's and the watch's `Keys`: a chunk per `CHUNK` writes)
    are freed a chunk a step when its last watch closes, not all in the call: its track buries their chunks."""
    context = Context([{"type": "s", "s": {f"k{n % 3}": [n]}, "_outputMethod": "merge"} for n in range(3 * CHUNK)])
    whole = context.watch("†s", lambda _: None)
    track = context._watchers._tracks["s", None, None]
    assert track.fold is not None
    ids = [probe.sources for probe in track.fold.state.probes if isinstance(probe.sources, Ids)]
    chunks = [*track.results[()].keys._chunks, *(chunk for sources in ids for chunk in sources._chunks)]
    assert len(chunks) >= 4
    del track, ids
    whole.close()
    held = {id(chunk) for thing in buried if isinstance(thing, list) for chunk in thing}
    assert {id(chunk) for chunk in chunks} <= held
    first = chunks[0]
    del chunks, whole  # (as a cursor drops a watch it closed: then nothing but the graveyard holds them)
    count = sys.getrefcount(first)
    assert _freed_all()
    assert not buried
    assert sys.getrefcount(first) < count  # emptied, not only let go of


def test_a_step_is_split_by_what_its_entries_hold_not_by_their_count(buried: list[Any]) -> None:
    """A step frees entries worth its size: an entry is worth one and the items of each list or dict only it holds,
    itself or in a tuple (a mark's root and writers). One worth more than the step has left is not freed in it but
    buried under the list, to be emptied in steps of its own; one still held elsewhere is worth one."""
    # A fold's marks (`Checkpoint`, a named tuple) are weighed as tuples are.
    marks = [Checkpoint(n, {"root": n}, {(str(i),): i for i in range(1_000)}) for n in range(3)]
    buried.append(marks)
    _graveyard._step(marks, 64)
    assert not marks  # three marks, each worth its tuple and its root's one item: their writers were worth more
    assert [len(each) for each in buried] == [1_000, 1_000, 1_000, 0]  # under the list, untouched
    _graveyard._step(buried[0], 64)
    assert len(buried[0]) == 1_000 - 64
    buried[:] = [lists := [[n] * 10 for n in range(20)]]
    _graveyard._step(lists, 64)  # each worth 11: five freed, then each worth more than is left, buried
    assert len(lists) == 20 - 5 - 9
    assert [len(each) for each in buried] == [10] * 9 + [6]
    one = [0] * 10_000
    shared = [one] * 70
    _graveyard._step(shared, 64)  # held elsewhere: worth one each, freed (let go of) here
    assert len(shared) == 70 - 64
    assert len(buried) == 10
