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


def tune_collector() -> None:
    """Apply `GC_THRESHOLDS` to this process (the window does this once, at start)."""
    gc.set_threshold(*GC_THRESHOLDS)


def collect_when_idle() -> int | None:
    """Run now the collection CPython would otherwise run in the middle of some later edit.

    Edits leave no cyclic garbage (tests/engine/test_garbage.py), so the collector only ever walks what
    they keep: a young collection after a hundred edits walks their results once, which takes 5-20 ms.
    The window calls this whenever its event loop is about to wait for input, so that walk happens
    between edits rather than inside one. It collects the oldest generation that is due by CPython's
    own counts, else the young one once it holds `IDLE_YOUNG` objects; it returns the generation it
    collected, or None when nothing was due.
    """
    counts, thresholds = gc.get_count(), gc.get_threshold()
    if counts[0] < IDLE_YOUNG or not gc.isenabled():
        return None
    generation = 2 if counts[2] > thresholds[2] else 1 if counts[1] > thresholds[1] else 0
    gc.collect(generation)
    return generation
