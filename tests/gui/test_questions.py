"""Questions whose answer changes something take Alt and a button's letter, never the letter alone."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from contextdeck.gui._questions import Question, confirm_code


def typed_into(qtbot: Any, box: QMessageBox, text: str) -> list[Any]:
    """`text` typed into `box`, open and active; the buttons it clicks, as they are clicked."""
    chosen: list[Any] = []
    box.buttonClicked.connect(lambda button: chosen.append(box.standardButton(button)))
    box.open()
    box.activateWindow()
    qtbot.waitUntil(box.isActiveWindow)
    qtbot.keyClicks(box, text)
    assert not any(button.isDown() for button in box.buttons())  # (a mnemonic's click shows its button down at once)
    return chosen


def test_a_letter_alone_runs_no_code_and_alt_with_it_does(qtbot: Any) -> None:
    """"Load activities?" is Qt's Yes and Cancel: a Y typed while it came up (the end of a file name) ran the file. Y
    alone does nothing; Alt+Y answers Yes."""
    box = Question(QMessageBox.Icon.Warning, "Load activities?", "acts.py is Python code.",
                   QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
    qtbot.addWidget(box)
    chosen = typed_into(qtbot, box, "acts.py")
    assert chosen == []
    qtbot.keyClick(box, Qt.Key.Key_Y, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: bool(chosen))
    assert chosen == [QMessageBox.StandardButton.Yes]


def test_a_letter_alone_answers_nothing_in_the_unsaved_changes_question(qtbot: Any, open_window: Any) -> None:
    """The D of a file name typed after Ctrl+O, while the unsaved changes question came up, discarded the edits (Qt's
    message box takes a button's letter alone). Letters alone do nothing; Escape still cancels."""
    window = open_window(None)
    box = window.files.unsaved_question("opening another document")
    assert typed_into(qtbot, box, "/tmp/adder.json sd") == []
    assert box.isVisible()
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not box.isVisible())


@pytest.mark.parametrize(("key", "loads"), [(Qt.Key.Key_Return, False), (Qt.Key.Key_Escape, False)])
def test_confirm_code_defaults_to_cancel(qtbot: Any, key: Qt.Key, loads: bool) -> None:
    """Enter takes the default, Cancel; Escape cancels. The file's name is in the question."""
    seen: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        seen.append(box.text())
        qtbot.keyClick(box, key)

    QTimer.singleShot(0, answer)
    assert confirm_code(None, "Load activities?", "/tmp/acts.py", "Loading it runs it now.") is loads
    assert "<b>acts.py</b> is Python code." in seen[0]
