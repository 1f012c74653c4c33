"""How the interactive application sets up the interpreter for steady latency."""

from __future__ import annotations

import gc

# CPython runs a young collection every 700 allocations by default, a setting for small scripts. An
# edit in the middle of a 100k-message context renews about a thousand watch results, so at 700 the
# collector scans each of them several times, promotes them, and soon pays a full collection. At
# 10,000 most of an edit's garbage is freed by reference counting before a collection sees it.
# benchmarks/run.py measures edits under this setting (docs/performance.md has the comparison).
GC_THRESHOLDS = (10_000, 10, 10)


def tune_collector() -> None:
    """Apply `GC_THRESHOLDS` to this process (the window does this once, at start)."""
    gc.set_threshold(*GC_THRESHOLDS)
