"""Docks stacked in one place show their whole titles as tabs (Qt would elide them to "St…")."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar

from contextdeck.gui._window import MainWindow


def dock_tabs(window: MainWindow) -> dict[str, QTabBar]:
    """Each visible tab title of the window's dock areas, with its tab bar."""
    return {bar.tabText(i): bar for bar in window.findChildren(QTabBar) if bar.isVisible() for i in range(bar.count())}


def test_the_right_docks_tabs_show_whole_titles(qtbot: Any, refund_window: MainWindow) -> None:
    window = refund_window
    window.resize(1440, 880)
    tabs = dock_tabs(window)
    assert {"State", "LLM view", "Call inspector", "Output audit"} <= tabs.keys()
    bar = tabs["State"]
    assert bar.elideMode() == Qt.TextElideMode.ElideNone
    assert bar.usesScrollButtons()
    # Each tab is as wide as its title: nothing is cut to "St…".
    metrics = bar.fontMetrics()
    for index in range(bar.count()):
        assert bar.tabRect(index).width() >= metrics.horizontalAdvance(bar.tabText(index))
