"""The guard against PySide6 6.12's lost references to None keeps long sessions alive."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from contextdeck.gui import _none_guard


@pytest.mark.skipif(not _none_guard.affected(), reason="None is immortal on this Python")
def test_void_calls_cannot_exhaust_nones_reference_count(qtbot: Any) -> None:
    """Many more void calls than None had references still leave it with plenty after a top-up."""
    label = QLabel()
    qtbot.addWidget(label)
    _none_guard.install()
    start = sys.getrefcount(None)
    for _ in range(20_000):
        label.setText("x")
    _none_guard.top_up()
    assert sys.getrefcount(None) >= min(start - 20_000, _none_guard.LOW)
    assert sys.getrefcount(None) > 100_000
