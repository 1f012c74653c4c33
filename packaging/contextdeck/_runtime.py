"""How the interactive application sets up the interpreter for steady latency."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from contextdeck.engine import json_building

# CPython runs a young collection every 700 allocations by default, a setting for small scripts. An
# edit in the middle of a 100k-message context renews about a thousand watch results, so at 700 the
# collector scans each of them several times, promotes them, and soon pays a full collection. At
# 10,000 most of an edit's garbage is freed by reference counting before a collection sees it.
# benchmarks/run.py measures edits under this setting (docs/performance.md, "The collector").
# The older generations are never collected on CPython's counts: what survives to an idle moment is frozen
# (`collect_when_idle`), so they only ever hold what survived young collections within one busy stretch of turns
# (a far jump's slices), and collecting them then walked tens of thousands of objects inside a turn, only to find
# cycles that freezing keeps anyway until `collect_everything`. CPython's defaults are (700, 10, 10).
NEVER = 2**30
GC_THRESHOLDS = (10_000, NEVER, NEVER)

# A thread that wants the GIL waits this long before the one holding it is asked to let go (CPython's default is
# 5 ms). The window's GUI thread enters Python many times a turn (event handlers, the style's hooks), and while a
# worker composes a request or validates, each entry waited up to the whole interval, so the window blocked many
# times longer than its own work. The worker pays a switch only when the GUI thread asks.
SWITCH_INTERVAL_S = 0.0002

# Below this many new objects a young collection at idle is not worth waking up for.
IDLE_YOUNG = 1_000

# What is frozen (at idle, and the documents loads build) may hold cyclic garbage that only a collection of
# everything frees (at idle about 1 % of it, measured: psygnal's signal instances of dropped engine objects; a
# document's own cycles once another replaces it). Once this many objects that may have become such garbage are
# frozen, and more than that collection would find alive, the next idle moment runs one whatever the user is doing:
# the bound on what can wait for a moment the user does not wait on (`collect_everything`). The bound grows with the
# heap, as the collection's cost does (a million messages are 4-7 million frozen objects), so that each object the
# collection walks was paid for by one that may be garbage; the document the latest load built is alive, not
# garbage that may be (`due`).
FREEZE_LIMIT = 10_000_000
# The count in O(1) runs high (`_freeze`), so when it says a collection of everything is due, the frozen objects are
# counted exactly first (`_counted_due`: a walk of the permanent generation's list, a small part of what the
# collection would cost). Not again before a quarter as many more were counted since the last exact count: a count
# that stays just under the bound would walk millions at every idle moment.
RECOUNT_SHARE = 4

# The permanent generation, in objects (absolute, what `gc.get_freeze_count` gives): all of it by the O(1) count at
# each freeze, exact as of each collection of everything and each recount (`_counted_due`); of it, what is known to
# be alive: what the last collection of everything left, and the document the latest load built (which leaves it
# once another load replaces it). The rest may be garbage (`due`).
_frozen = 0
_alive = 0
_recounted = 0  # `_frozen` as of the last exact count
_froze_since = False  # anything was frozen since the last collection of everything
_document = 0  # the objects the latest load froze (the document open now), counted in `_alive`
_older = 0  # objects collections left in the older generations since the last freeze (`_survivors_of`)
_young_before = 0  # the young count as the collection under way began
_loads = 0  # documents being built (or composed from: `loading`), on any thread
_building_documents = 0  # of them, loads of a document that will open: what the pause's end freezes is that document
_loads_lock = threading.Lock()


def tune_interpreter() -> None:
    """Apply `GC_THRESHOLDS` and `SWITCH_INTERVAL_S` to this process (the window does this once, at start)."""
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def collect_when_idle(everything: bool = True) -> int | None:
    """Collect the young generation now and freeze what survives, instead of collecting it later.

    Edits leave no cyclic garbage (tests/engine/document/test_garbage.py), so the collector only ever walks what
    they keep: the middle and oldest generations of a large window are long walks, so CPython's counts never
    make them due (`GC_THRESHOLDS`). The window calls
    this whenever its event loop is about to wait for input: once `IDLE_YOUNG` objects are new, a young
    collection frees the cycles that died since the last turn, and what is left is frozen
    (`gc.freeze`, O(1)), so no later collection walks it again. Cycles among frozen objects are freed by
    `collect_everything`, which this runs itself once one is due (enough may be garbage, counted exactly:
    `_counted_due`); with `everything` False, not now (the caller knows that what may be garbage is still held:
    `gui/_idle.py`). Returns the generation collected (2 for everything), or None when nothing was due or a load
    has the collector off.
    """
    if gc.get_count()[0] < IDLE_YOUNG or not gc.isenabled():
        return None
    gc.collect(0)
    _freeze()
    if everything and _counted_due():
        collect_everything()
        return 2
    return 0


def due() -> bool:
    """Whether a collection of everything is due by the frozen objects' count as it stands: once what may have
    become cyclic garbage since the last one (what is frozen, less what is known alive) passes `FREEZE_LIMIT` and
    what that collection would walk alive (what the last one left, and the document open now)."""
    return _frozen - _alive > max(FREEZE_LIMIT, _alive)


def _counted_due() -> bool:
    """`due`, on an exact count of the frozen objects when the O(1) count says so.

    The O(1) count runs high: objects promoted and freed while CPython's young count is at zero are not taken off
    (`_survivors_of`), and a document that a load replaced and reference counting freed stays in it. Counted
    exactly, what may be garbage is what is frozen and not known alive: the replaced document only as far as cycles
    keep it. Until a `RECOUNT_SHARE`th as many more were counted since the last exact count, not again: not due."""
    global _frozen, _recounted, _alive, _document
    if not due() or _frozen - _recounted <= _recounted // RECOUNT_SHARE:
        return False
    _frozen = _recounted = gc.get_freeze_count()  # a walk of a list
    # What a load counted as its document can run high too (what it froze held more than the document keeps): no
    # more is alive than is frozen.
    _alive = min(_alive, _frozen)
    _document = min(_document, _alive)
    return due()


class Load:
    """One load's part in a `loading` pause: `failed()` when the document it built will not be the one open."""

    def __init__(self, document: bool) -> None:
        self._document = document

    def failed(self) -> None:
        """The load failed or was cancelled: what it made is frozen as what may be garbage, and the document open
        now stays the one known alive."""
        global _building_documents
        if self._document:
            self._document = False
            with _loads_lock:
                _building_documents -= 1


@contextmanager
def loading(document: bool = True) -> Iterator[Load]:
    """The collector off while a document is built (on a worker thread), and the document frozen at the end;
    with `document` False, while a worker composes or checks on a snapshot of one (`gui/_background.py`).

    The engine pauses the collector while it parses and builds (`json_building`: each collection would walk
    the millions of objects made so far, while holding the GIL, so the GUI thread could not run Python
    meanwhile); this holds that pause over the whole load and, before the collector is back, freezes what is
    alive (O(1)) rather than leave it to a young collection. What a load froze is the document open now, alive,
    unless it said it `failed()` (an exception out of the block says so too); once another load replaces it, what
    is left of it in the frozen objects may be garbage (`due`): what reference counting frees is gone from them,
    what cycles keep waits for `collect_everything`. A worker's request of a million messages (its texts, each
    message's sources) is as big, and lives until the next replaces it: left to the collector, the young
    collections at idle on the GUI thread walked its containers as the worker made them. Loads and jobs on several
    threads share one pause.
    """
    global _loads, _document, _alive, _building_documents
    load = Load(document)
    with json_building():
        with _loads_lock:
            _loads += 1
            _building_documents += document
        try:
            yield load
        except BaseException:
            load.failed()
            raise
        finally:
            with _loads_lock:
                load._document = False  # its part is taken: a `failed()` after the pause ends changes nothing
                _loads -= 1
                if _loads == 0:
                    frozen = _freeze()
                    if _building_documents:  # the document it replaces is no longer known alive
                        _alive += frozen - _document
                        _document = frozen
                    _building_documents = 0


def freeze_young() -> None:
    """Freeze what is young now (O(1)), so that no young collection walks it again.

    For a large container made to live a while: the autosave's snapshot (a list of every message, read by a worker
    for a long while) would be walked by every young collection while it lived, a walk as long as the document.
    The rest of what is young is frozen with it, as at idle (its cycles wait for `collect_everything`)."""
    _freeze()


def _freeze() -> int:
    """Freeze every generation, counting what it holds in `_frozen`; returns the count.

    Both counts are O(1), read on the GUI thread after each slice: the young generation by its allocation count (a
    load leaves millions there), the older ones by what each collection since the last freeze left alive
    (`_survivors_of`): listing the older generations to count them would walk every object young collections
    promoted since the last freeze, more than a turn after a busy stretch at a million messages."""
    global _frozen, _older, _froze_since
    frozen = gc.get_count()[0] + _older
    _frozen += frozen
    _froze_since = _froze_since or frozen > 0
    gc.freeze()
    _older = 0
    return frozen


def _survivors_of(phase: str, info: dict[str, int]) -> None:
    """A collection's callback (`gc.callbacks`): what it left alive goes to the older generations, counted in
    `_older`, the young count as it began less what it found unreachable. CPython's young count is what the
    collector tracks made less what of it was freed, wherever it lived (an older or the frozen generation too),
    so this is what was kept alive since, about what the older generations hold, and it counts what anything
    else froze since (a run's tick, `engine/run/_execution.py`). It runs high: CPython takes a freed object off
    the young count only while that is above zero, as it is not just after a collection or a freeze; when it
    says a collection of everything is due, the frozen objects are counted exactly (`_counted_due`)."""
    global _older, _young_before
    if phase == "start":
        _young_before = gc.get_count()[0]
    else:
        _older = max(0, _older + _young_before - info["collected"])


gc.callbacks.append(_survivors_of)


def collect_everything() -> int | None:
    """A collection of every object, frozen ones included, then everything left frozen again.

    It walks the whole document (0.3-0.5 s at 100,000 messages): the window runs it when the user is not
    waiting on it (another application is in front), and `collect_when_idle` once it is due. It also frees
    what a replaced document left in cycles. Returns how many unreachable objects it found; None, doing nothing,
    when nothing was frozen (at idle, by a load) since the last one or a load has the collector off.
    """
    global _frozen, _alive, _recounted, _froze_since, _older, _document
    if not _froze_since or not gc.isenabled():
        return None
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    _frozen = _alive = _recounted = gc.get_freeze_count()  # a walk of a list: a small part of the collection's time
    _document = min(_document, _alive)  # (what a load counted can run high: `_counted_due`)
    _froze_since, _older = False, 0
    return found
