"""Fixtures shared by the GUI tests."""

from __future__ import annotations

from typing import Any

import pytest

from contextdeck.gui._editor import DataEditor


@pytest.fixture
def editor(qtbot: Any) -> DataEditor:
    """A shown data editor, cleaned up after the test."""
    widget = DataEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 500)
    widget.show()
    return widget
