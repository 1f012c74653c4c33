"""The interpreter settings the interactive application runs with."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from contextdeck._runtime import GC_THRESHOLDS, tune_collector


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
