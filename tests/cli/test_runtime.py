"""The interpreter settings the interactive application runs with."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from contextdeck._runtime import GC_THRESHOLDS, IDLE_YOUNG, collect_when_idle, tune_collector


@pytest.fixture
def thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("thresholds")
def test_tune_collector_sets_the_thresholds_the_benchmark_measures() -> None:
    """The young generation is collected every 10,000 allocations, not CPython's default 700."""
    gc.set_threshold(700, 10, 10)
    tune_collector()
    assert gc.get_threshold() == GC_THRESHOLDS == (10_000, 10, 10)


@pytest.mark.usefixtures("thresholds")
def test_collect_when_idle_runs_the_collection_that_is_due() -> None:
    """Nothing below `IDLE_YOUNG` new objects; then the young generation, or an older one that is due."""
    gc.set_threshold(10**8, 10, 10)  # no collection of its own while this test counts
    gc.collect()
    kept = [[n] for n in range(IDLE_YOUNG // 2)]
    assert collect_when_idle() is None
    kept += [[n] for n in range(IDLE_YOUNG)]
    assert gc.get_count()[0] >= IDLE_YOUNG
    assert collect_when_idle() == 0
    assert gc.get_count()[0] < IDLE_YOUNG
    for _ in range(11):  # eleven young collections make the middle generation due (threshold 10)
        kept += [[n] for n in range(IDLE_YOUNG)]
        collect_when_idle()
    kept += [[n] for n in range(IDLE_YOUNG)]
    assert gc.get_count()[1] == 0  # it was collected along the way, and its count started again
    del kept


@pytest.mark.usefixtures("thresholds")
def test_collect_when_idle_leaves_a_disabled_collector_alone() -> None:
    """While a load has the collector off, idle time does not turn collections back on."""
    gc.set_threshold(10**8, 10, 10)
    kept = [[n] for n in range(2 * IDLE_YOUNG)]
    gc.disable()
    try:
        assert collect_when_idle() is None
        assert gc.get_count()[0] >= IDLE_YOUNG
    finally:
        gc.enable()
    del kept
