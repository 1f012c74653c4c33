"""Questions whose answer changes something (save, discard, run code): answered by Alt and a button's letter only.

A message box of Qt's also takes a button's letter alone. The letters of something typed while a question comes up
(a file name after Ctrl+O, before the unsaved changes question took the keys) then answer it: a D discarded the
edits, a Y would run a file of code. Enter, Escape and Tab work as ever.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QMessageBox, QWidget

__all__ = ["Question", "confirm_code"]

_CHORDS = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.MetaModifier


class Question(QMessageBox):
    """A QMessageBox whose buttons' letters answer only with Alt."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not event.modifiers() & _CHORDS and event.text().isprintable() and event.text().strip():
            event.accept()  # a letter alone (Enter, Escape and Tab are not printable)
            return
        super().keyPressEvent(event)


def confirm_code(parent: QWidget | None, title: str, path: str, runs: str) -> bool:
    """Ask before running the Python file `path` (`runs`: what loading it does, as HTML); Cancel is the default."""
    box = Question(QMessageBox.Icon.Warning, title,
                   f"<p><b>{Path(path).name}</b> is Python code. {runs}</p>", QMessageBox.StandardButton.Yes
                   | QMessageBox.StandardButton.Cancel, parent)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Yes
