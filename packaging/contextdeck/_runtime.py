"""How the interactive application sets up the interpreter for steady latency."""

from __future__ import annotations

import gc

# CPython runs a young collection every 700 allocations by default, a setting for small scripts. An
# edit in the middle of a 100k-message context renews about a thousand watch results, so at 700 the
# collector scans each of them several times, promotes them, and soon pays a full collection. At
# 10,000 most of an edit's garbage is freed by reference counting before a collection sees it.
# benchmarks/run.py measures edits under this setting (docs/performance.md has the comparison).
GC_THRESHOLDS = (10_000, 10, 10)

# Below this many new objects a young collection at idle is not worth waking up for.
IDLE_YOUNG = 1_000

# What idle time freezes may hold cyclic garbage that only a collection of everything frees (about 1 %
# of it, measured: psygnal's signal instances of dropped engine objects). Past this many young objects
# frozen since the last such collection, the next idle moment runs one whatever the user is doing: the
# bound on what can wait for a moment the user does not wait on (`collect_everything`).
FREEZE_LIMIT = 10_000_000

_frozen = 0  # young objects frozen at idle since the last collection of everything


def tune_collector() -> None:
    """Apply `GC_THRESHOLDS` to this process (the window does this once, at start)."""
    gc.set_threshold(*GC_THRESHOLDS)


def collect_when_idle() -> int | None:
    """Collect the young generation now and freeze what survives, instead of collecting it later.

    Edits leave no cyclic garbage (tests/engine/test_garbage.py), so the collector only ever walks what
    they keep: the middle and oldest generations of a window at 100,000 messages took 13-31 and 43-80 ms
    per collection, whenever CPython's counts made them due. The window calls this whenever its event loop
    is about to wait for input: once `IDLE_YOUNG` objects are new, a young collection (about 1 ms) frees
    the cycles that died since the last turn, and what is left is frozen (`gc.freeze`, O(1)), so no later
    collection walks it again. Cycles among frozen objects are freed by `collect_everything`, which this
    runs itself once `FREEZE_LIMIT` young objects were frozen since the last one. Returns the generation
    collected (2 for everything), or None when nothing was due or a load has the collector off.
    """
    global _frozen
    young = gc.get_count()[0]
    if young < IDLE_YOUNG or not gc.isenabled():
        return None
    if _frozen + young > FREEZE_LIMIT:
        collect_everything()
        return 2
    gc.collect(0)
    gc.freeze()
    _frozen += young
    return 0


def collect_everything() -> int | None:
    """A collection of every object, frozen ones included, then everything left frozen again.

    It walks the whole document (about 0.5 s at 100,000 messages): the window runs it when the user is not
    waiting on it (another application is in front), and `collect_when_idle` past `FREEZE_LIMIT`. Returns
    how many unreachable objects it found; None, doing nothing, when nothing was frozen at idle since the
    last one or a load has the collector off.
    """
    global _frozen
    if not _frozen or not gc.isenabled():
        return None
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    _frozen = 0
    return found
