"""The interpreter settings the interactive application runs with."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest

from contextdeck import _runtime
from contextdeck._runtime import (
    GC_THRESHOLDS,
    IDLE_YOUNG,
    SWITCH_INTERVAL_S,
    collect_everything,
    collect_when_idle,
    freeze_young,
    loading,
    tune_interpreter,
)
from contextdeck.engine.document._json import BATCH_YOUNG


class Node:
    """An object in a reference cycle: only the cycle collector frees it."""

    def __init__(self) -> None:
        self.me = self


def forget_the_counts() -> None:
    """The runtime's counts as at a start: nothing frozen, nothing known alive."""
    _runtime._frozen = _runtime._alive = _runtime._recounted = _runtime._document = _runtime._older = 0
    _runtime._froze_since = False


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only what the test calls collects; everything it froze is unfrozen afterwards. What the process had frozen
    before the test is left out of the frozen objects' exact count (`gc.get_freeze_count`), as if they were none."""
    before = gc.get_threshold()
    gc.set_threshold(10**8, 10, 10)
    gc.collect()
    gc.freeze()  # as after a load: the generations hold only what the test makes
    earlier, count = gc.get_freeze_count(), gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: count() - earlier)
    forget_the_counts()
    yield
    gc.unfreeze()
    forget_the_counts()
    gc.set_threshold(*before)


def young(count: int) -> list[list[int]]:
    """`count` new objects the collector tracks."""
    return [[n] for n in range(count)]


@pytest.mark.usefixtures("collector")
def test_tune_interpreter_sets_the_thresholds_the_benchmark_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    """The young generation is collected every 10,000 allocations, not CPython's default 700; a thread that wants
    the GIL (the window's GUI thread, while a worker composes) gets it after 0.2 ms, not CPython's 5 ms."""
    gc.set_threshold(700, 10, 10)
    monkeypatch.setattr(sys, "setswitchinterval", lambda seconds: switched.append(seconds))
    switched: list[float] = []
    tune_interpreter()
    assert gc.get_threshold() == GC_THRESHOLDS
    assert GC_THRESHOLDS[0] == 10_000
    assert switched == [SWITCH_INTERVAL_S]
    assert SWITCH_INTERVAL_S < 0.001


@pytest.mark.usefixtures("collector")
def test_a_busy_stretch_never_collects_the_older_generations() -> None:
    """Turns without an idle moment between them (a far jump's slices) make many young collections; what survives
    them is not walked again by a collection of the middle or oldest generation (CPython's counts ran one after every
    ten young ones, 11-30 ms inside a turn), only frozen at the next idle moment."""
    tune_interpreter()
    generations: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        kept = [young(GC_THRESHOLDS[0] + 1) for _ in range(25)]
    finally:
        gc.callbacks.remove(seen)
    assert len(generations) >= 25
    assert set(generations) == {0}
    del kept


@pytest.mark.usefixtures("collector")
def test_collect_when_idle_frees_the_young_cycles_and_freezes_what_survives() -> None:
    """Nothing below `IDLE_YOUNG` new objects; then a young collection (a cycle that died is freed) and
    the survivors go to the permanent generation, which no later collection walks."""
    kept = young(IDLE_YOUNG // 2)
    assert collect_when_idle() is None
    dead = Node()
    gone = weakref.ref(dead)
    del dead
    frozen = gc.get_freeze_count()
    kept += young(IDLE_YOUNG)
    assert collect_when_idle() == 0
    assert gone() is None
    assert gc.get_freeze_count() >= frozen + len(kept)
    assert gc.get_count()[0] < 100  # emptied (a thread an earlier test left may have allocated a few since)
    del kept


@pytest.mark.usefixtures("collector")
def test_a_cycle_frozen_alive_is_freed_by_collect_everything() -> None:
    """A cycle that dies after idle time froze it survives collections (the price of freezing) until
    `collect_everything`, which walks the frozen objects too."""
    alive = Node()
    gone = weakref.ref(alive)
    kept = young(IDLE_YOUNG)
    assert collect_when_idle() == 0
    del alive
    gc.collect()
    assert gone() is not None
    assert (collect_everything() or 0) >= 1
    assert gone() is None
    assert collect_everything() is None  # nothing frozen since
    del kept


@pytest.mark.usefixtures("collector")
def test_past_the_limit_idle_time_collects_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once `FREEZE_LIMIT` young objects were frozen since the last collection of everything, the next
    idle moment runs one: what freezing keeps of cyclic garbage is bounded."""
    monkeypatch.setattr(_runtime, "FREEZE_LIMIT", 3 * IDLE_YOUNG)
    alive = Node()
    gone = weakref.ref(alive)
    kept = young(IDLE_YOUNG)
    assert collect_when_idle() == 0
    del alive
    kept += young(IDLE_YOUNG)
    assert collect_when_idle() == 0
    assert gone() is not None
    kept += young(IDLE_YOUNG + IDLE_YOUNG // 2)  # well past the limit: another thread may free a few meanwhile
    assert collect_when_idle() == 2
    assert gone() is None
    del kept


@pytest.mark.usefixtures("collector")
def test_the_document_a_load_built_is_not_walked_at_the_next_idle_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A load of more than `FREEZE_LIMIT` objects (a million messages are about 15 million: seconds to walk) leaves
    no collection of everything due: the document is alive. Idle time's freezes count against the document's
    size, so that such a collection runs once it would find about as much that may be garbage as alive."""
    monkeypatch.setattr(_runtime, "FREEZE_LIMIT", 2 * IDLE_YOUNG)
    with loading():
        document = young(5 * IDLE_YOUNG)
    kept = young(IDLE_YOUNG + 10)
    assert not _runtime.due()
    assert collect_when_idle() == 0  # a young collection, not everything
    for _ in range(3):
        kept += young(IDLE_YOUNG + 10)
        assert collect_when_idle() == 0
    kept += young(2 * IDLE_YOUNG)  # more than the document frozen at idle since the load
    assert collect_when_idle() == 2
    del document, kept


@pytest.mark.usefixtures("collector")
def test_a_replaced_document_that_cycles_keep_is_garbage_a_collection_frees(monkeypatch: pytest.MonkeyPatch) -> None:
    """The document a load built counts as alive until another load replaces it; what cycles keep of it then (a
    closure of a view holding its context) is garbage that the next idle moment's collection of everything frees,
    once it passes the bound: memory holds about one document's worth at most."""
    monkeypatch.setattr(_runtime, "FREEZE_LIMIT", 2 * IDLE_YOUNG)
    with loading():
        first = Node()
        first.items = young(5 * IDLE_YOUNG)  # type: ignore[attr-defined]
    gone = weakref.ref(first)
    with loading():
        second = young(5 * IDLE_YOUNG)
    del first  # replaced
    kept = young(2 * IDLE_YOUNG)
    assert collect_when_idle() == 2
    assert gone() is None
    del second, kept


@pytest.mark.usefixtures("collector")
def test_a_replaced_document_reference_counting_freed_is_not_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replaced document with no cycle is freed by reference counting as soon as it is let go of; the O(1) count
    does not see those frees (CPython's young count is at zero after the load's freeze), so it says a collection
    of everything is due. Counted exactly, nothing may be garbage but what idle time froze since: none runs (at a
    million messages it walks everything alive on the GUI thread)."""
    monkeypatch.setattr(_runtime, "FREEZE_LIMIT", 2 * IDLE_YOUNG)
    with loading():
        first = young(5 * IDLE_YOUNG)
    with loading():
        second = young(5 * IDLE_YOUNG)
    del first  # replaced, freed at once
    kept = young(2 * IDLE_YOUNG)
    counts: list[int] = []  # (read back from here: another test's thread may free what is frozen meanwhile)
    count = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counts.append(count()) or counts[-1])
    assert collect_when_idle() == 0
    assert counts  # counted exactly
    assert _runtime._frozen == counts[-1]
    assert not _runtime.due()
    del second, kept


@pytest.mark.usefixtures("collector")
def test_an_exact_count_that_found_nothing_due_is_not_made_at_every_idle_moment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What may be garbage just under the bound, and objects frozen at each idle moment and freed right after
    (while CPython's young count is at zero): the O(1) count is over the bound at every idle moment, the exact count
    (a walk of every frozen object) under it. It is made again only once a quarter as many more objects were
    counted since the last one, and no collection of everything runs."""
    monkeypatch.setattr(_runtime, "FREEZE_LIMIT", 2 * IDLE_YOUNG)
    with loading():
        document = young(32 * IDLE_YOUNG)  # the bound: what is alive
    kept = young(27 * IDLE_YOUNG)  # frozen at idle: may be garbage
    assert collect_when_idle() == 0
    counts: list[int] = []
    count = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counts.append(1) or count())
    for _ in range(12):
        brief = young(3 * IDLE_YOUNG)
        assert collect_when_idle() == 0
        del brief  # freed at once: the O(1) count keeps it
    assert 2 <= len(counts) <= 6
    del document, kept


@pytest.mark.usefixtures("collector")
def test_what_young_collections_promoted_counts_towards_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy stretch's young collections move their survivors to the middle generation; the next idle freeze
    takes them with the young ones, so they count towards `FREEZE_LIMIT` (the bound on cycles kept frozen). The
    count never lists a generation (a walk of every object promoted: 20-30 ms at a million messages), and what a
    collection found dead is not counted."""
    promoted = young(5 * IDLE_YOUNG)
    dead = [Node() for _ in range(2 * IDLE_YOUNG)]
    del dead
    gc.collect(0)  # a young collection inside the busy stretch
    assert gc.get_count()[0] < IDLE_YOUNG
    more = young(3 * IDLE_YOUNG)
    gc.collect(0)
    fresh = young(IDLE_YOUNG)

    def listed(*args: object) -> list[object]:
        raise AssertionError("a generation was listed to count it")

    monkeypatch.setattr(gc, "get_objects", listed)
    assert collect_when_idle() == 0
    assert 9 * IDLE_YOUNG <= _runtime._frozen < 10 * IDLE_YOUNG
    del promoted, more, fresh


@pytest.mark.usefixtures("collector")
def test_a_disabled_collector_is_left_alone() -> None:
    """While a load has the collector off, idle time neither collects nor freezes, nor walks everything."""
    kept = young(2 * IDLE_YOUNG)
    _runtime._froze_since = True
    gc.disable()
    try:
        assert collect_when_idle() is None
        assert collect_everything() is None
        assert gc.get_count()[0] >= IDLE_YOUNG
    finally:
        gc.enable()
    del kept


@pytest.mark.usefixtures("collector")
def test_a_load_keeps_the_collector_off_and_freezes_the_document_it_built() -> None:
    """While a document is built (loads on several threads share the pause) the collector is off; at the end what
    was built is frozen and counted, so the next collection of everything runs and frees what the replaced
    document left in cycles (it was frozen alive by the load)."""
    previous = Node()  # the open document's cycle, alive while the next one loads
    gone = weakref.ref(previous)
    with loading():
        assert not gc.isenabled()
        with loading():  # another load, on another thread: they share the pause
            document = young(2 * IDLE_YOUNG)
        assert not gc.isenabled()  # the first is still under way
    assert gc.isenabled()
    assert gc.get_count()[0] < IDLE_YOUNG  # frozen, not left to a young collection
    del previous  # replaced
    gc.collect()
    assert gone() is not None
    assert (collect_everything() or 0) >= 1
    assert gone() is None
    del document


@pytest.mark.usefixtures("collector")
def test_what_a_worker_composed_is_frozen_as_what_may_become_garbage() -> None:
    """A worker's compose or check (`loading(document=False)`) pauses the collector and freezes what it made, which
    counts as what may become garbage (the next request replaces it), not as the document open now; one that
    shares the pause with a load leaves the load's document counted as alive."""
    with loading(document=False):
        assert not gc.isenabled()
        request = young(2 * IDLE_YOUNG)
    assert gc.isenabled()
    assert gc.get_count()[0] < IDLE_YOUNG  # frozen
    assert _runtime._document == 0
    assert _runtime._frozen >= 2 * IDLE_YOUNG
    with loading(document=False):
        with loading():
            document = young(3 * IDLE_YOUNG)
        more = young(IDLE_YOUNG)  # the compose ends last: its freeze takes the document too
    assert _runtime._document >= 4 * IDLE_YOUNG
    del request, document, more


@pytest.mark.usefixtures("collector")
def test_a_load_leaves_a_collector_that_was_off_off() -> None:
    """A collector switched off before a load (a benchmark, a test) stays off after it."""
    gc.disable()
    try:
        with loading():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_command_collects_the_young_generation_less_often_and_gives_it_back(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """While a command of the command line runs its young threshold is at least `BATCH_YOUNG` (the older ones
    kept); when it ends, even by an error, the process has its thresholds back."""
    from contextdeck import _cli

    seen: list[tuple[int, int, int]] = []
    real = _cli.validate
    monkeypatch.setattr(_cli, "validate", lambda *a, **k: seen.append(gc.get_threshold()) or real(*a, **k))
    document = tmp_path / "doc.jsonl"
    document.write_text('{"type": "state", "data": {"a": 1}}\n')
    before = gc.get_threshold()
    assert _cli.main(["validate", str(document)]) == 0
    assert seen == [(max(before[0], BATCH_YOUNG), *before[1:])]
    assert gc.get_threshold() == before
    assert _cli.main(["validate", str(tmp_path / "missing.jsonl")]) != 0
    assert gc.get_threshold() == before


@pytest.mark.usefixtures("collector")
def test_no_more_is_known_alive_than_is_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a load froze beside its document (what it made that dies after the hand-over) is counted as the
    document; an exact count that finds fewer frozen objects than are known alive takes that down to it, so that
    what is frozen later and may be garbage is not hidden behind the difference."""
    monkeypatch.setattr(_runtime, "FREEZE_LIMIT", 2 * IDLE_YOUNG)
    with loading():
        document = young(4 * IDLE_YOUNG)
        scratch = young(4 * IDLE_YOUNG)  # the load's own, frozen with the document
    del scratch
    brief = young(9 * IDLE_YOUNG)
    freeze_young()
    del brief  # counted, and freed at once
    kept = young(IDLE_YOUNG + 100)
    assert collect_when_idle() == 0  # counted exactly: about 5 * IDLE_YOUNG frozen, less than the 8 known alive
    # (the exact count it made: a later one may find fewer, as objects frozen before the test die meanwhile)
    assert _runtime._alive == _runtime._recounted < 8 * IDLE_YOUNG
    kept += young(6 * IDLE_YOUNG)  # may be garbage: more than is alive
    assert collect_when_idle() == 2
    del document, kept


@pytest.mark.usefixtures("collector")
def test_the_next_load_takes_off_no_more_than_its_document_left_alive() -> None:
    """A collection of everything counts what it left alive; the document open then counts for no more of it than
    that, so that the next load, which replaces it, does not take off of what is alive more than there was."""
    with loading():
        document = young(4 * IDLE_YOUNG)
        scratch = young(4 * IDLE_YOUNG)  # the load's own, frozen with the document
    del scratch
    assert (collect_everything() or 0) >= 0
    assert _runtime._document <= _runtime._alive < 5 * IDLE_YOUNG  # the document, not what the load counted
    with loading():
        second = young(4 * IDLE_YOUNG)
    assert _runtime._alive >= 4 * IDLE_YOUNG
    del document, second



@pytest.mark.usefixtures("collector")
@pytest.mark.parametrize("how", ["said", "raised"])
def test_a_load_that_failed_leaves_the_open_document_the_one_known_alive(how: str) -> None:
    """A load that failed or was cancelled (it says so, `Load.failed()`, or an exception leaves its block) opens
    nothing: what it froze counts as what may be garbage, and the document open before stays the one known alive."""
    with loading():
        document = young(4 * IDLE_YOUNG)
    before = (_runtime._document, _runtime._alive)
    scratch: list[list[int]] = []
    with pytest.raises(ValueError, match="no document") if how == "raised" else nullcontext(), loading() as load:
        scratch += young(3 * IDLE_YOUNG)
        if how == "raised":
            raise ValueError("no document")
        load.failed()
    assert (_runtime._document, _runtime._alive) == before
    assert _runtime._frozen >= before[1] + 3 * IDLE_YOUNG  # frozen all the same, as what may be garbage
    with loading():
        second = young(IDLE_YOUNG)
    assert _runtime._document >= IDLE_YOUNG  # a load that opens its document counts it again
    del document, scratch, second
