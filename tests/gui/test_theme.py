"""Switching the theme: what it costs the GUI thread grows with the widgets, never with their depth."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from contextdeck.gui._theme import apply_theme


class StyleChanges(QObject):
    """Counts the StyleChange events a widget receives (each is a re-polish of it)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.StyleChange:
            self.count += 1
        return False


def test_a_theme_switch_polishes_a_deep_widget_a_fixed_number_of_times(qtbot: Any) -> None:
    """The editor's forms nest widgets a dozen deep: a switch re-polishes the deepest twice (cleared, set), not
    once per ancestor as replacing one style sheet by another does (28 times for two switches here)."""
    apply_theme("light")
    top = QWidget()
    qtbot.addWidget(top)
    parent = top
    for _ in range(12):
        child = QWidget(parent)
        QVBoxLayout(parent).addWidget(child)
        parent = child
    deepest = QLineEdit(parent)
    top.show()
    changes = StyleChanges()
    deepest.installEventFilter(changes)
    apply_theme("dark")
    apply_theme("light")
    assert 0 < changes.count <= 4  # 2 per switch
