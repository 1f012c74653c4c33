"""In a big document the editor shows a selected message in slices after the selection's turn (its form made, then
shown once out of sight, then swapped in, then repainted), ending as when it was shown in the selection's call
(typing right after the selection: tests/gui/test_select_turns.py). The tests lower `SHOWN_LATER_FROM` to a small
document's size."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QLineEdit

from contextdeck.gui._message_editor import _editor
from contextdeck.gui._slices import slices
from contextdeck.gui._window import MainWindow

COUNT = 200


def _messages() -> list[dict[str, Any]]:
    """Text messages, state messages of one shape and, every seventh, of a shape of its own."""
    messages: list[dict[str, Any]] = []
    for n in range(COUNT):
        if n % 7 == 0:
            messages.append({"type": "state", "_instance": "q", "data": {f"key {n}": {"deep": [n, n + 1]}}})
        elif n % 2 == 0:
            messages.append({"type": "text", "role": "user", "text": f"text {n}"})
        else:
            messages.append({"type": "state", "_instance": f"p{n % 5}", "data": {"label": f"l {n}", "n": n}})
    return messages


@pytest.fixture
def window(open_messages: Any, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    monkeypatch.setattr(_editor, "SHOWN_LATER_FROM", COUNT // 2)
    return open_messages(_messages(), "big.json")


def _settled(window: MainWindow) -> bool:
    return not window._busy() and not window.state_view.is_busy()


def _line_edits(window: MainWindow) -> list[str]:
    return [edit.text() for edit in window.editor.body().findChildren(QLineEdit) if edit.isVisible()]


def test_the_selected_message_is_shown_after_the_selection_s_turn(qtbot: Any, window: MainWindow) -> None:
    """The selection's call leaves the editor as it was; the slices that follow make the new form and show the
    message, the form holding its values, as a selection shown at once does."""
    window.select_message(11)
    qtbot.waitUntil(lambda: _settled(window))
    assert window.editor.message() == window.context()[11]
    window.select_message(98)  # a shape of its own: a form never made
    assert window.selected_message() == 98
    assert window.editor.message() == window.context()[11]
    assert slices().pending
    qtbot.waitUntil(lambda: window.editor.message() == window.context()[98])
    assert "#98" in window.editor.title.text()
    assert window.editor.payload.form.value() == window.context()[98]["data"]  # read from its widgets
    qtbot.waitUntil(lambda: _settled(window))
    assert window.editor.updatesEnabled()  # shown with updates off, repainted in the slice after


def test_a_later_selection_replaces_the_one_being_shown(qtbot: Any, window: MainWindow) -> None:
    """Two selections before the slices come: the editor ends on the second."""
    window.select_message(21)
    window.select_message(33)
    qtbot.waitUntil(lambda: _settled(window))
    assert window.editor.message() == window.context()[33]
    assert "l 33" in _line_edits(window)
