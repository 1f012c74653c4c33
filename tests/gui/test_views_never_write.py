"""A view never writes: only an edit the user makes changes the document (issue 31, item 1)."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from contextdeck.gui._window import MainWindow


def history(window: MainWindow) -> list[str]:
    stack = window.session.undo_stack
    return [stack.text(i) for i in range(stack.count())]


def test_a_theme_switch_after_the_json_tab_leaves_the_document_alone(qtbot: Any, refund_window: MainWindow) -> None:
    """Message 1's JSON tab, back to Form, message 4, View → Theme → Dark: nothing is written (the JSON tab's text,
    still message 1's, recoloured by the new theme, once overwrote message 4 with it)."""
    window = refund_window
    before = window.session.document.dumps()
    editor = window.editor
    window.select_message(1)
    editor.tabs.setCurrentWidget(editor.json)
    qtbot.waitUntil(lambda: '"input"' in editor.json.text.toPlainText())
    editor.tabs.setCurrentIndex(0)
    window.select_message(4)
    qtbot.waitUntil(lambda: not window.is_refreshing())
    for theme in ("dark", "light", "system", "dark"):
        window.actions_by_name[f"theme_{theme}"].trigger()
        QApplication.processEvents()
    assert window.session.document.dumps() == before
    assert history(window) == []
    assert window.editor.message() == window.context()[4]


def test_the_theme_keys_leave_the_document_alone(qtbot: Any, refund_window: MainWindow) -> None:
    """Ctrl+Alt+3 (Dark) and Ctrl+Alt+2 (Light) pressed while the editor shows another message than its JSON
    tab last did change no message."""
    window = refund_window
    before = window.session.document.dumps()
    editor = window.editor
    window.select_message(2)
    editor.tabs.setCurrentWidget(editor.json)
    qtbot.waitUntil(lambda: bool(editor.json.text.toPlainText()))
    editor.tabs.setCurrentIndex(0)
    window.select_message(len(window.context()) - 1)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    ctrl_alt = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    for key in (Qt.Key.Key_3, Qt.Key.Key_2, Qt.Key.Key_3):
        qtbot.keyClick(window.timeline.table, key, ctrl_alt)
    assert window.settings.value("view/theme") == "dark"
    assert window.session.document.dumps() == before
    assert history(window) == []


def test_an_edit_made_from_another_message_is_refused(qtbot: Any, refund_window: MainWindow,
                                                      caplog: Any) -> None:
    """The window writes an editor's edit only when the message it was made from is the document's: a stale
    buffer can never overwrite a message."""
    window = refund_window
    before = window.session.document.dumps()
    window.select_message(4)
    stale = window.context()[1]
    with caplog.at_level(logging.WARNING):
        window.editor.message_edited.emit(stale, {**stale, "note": "typed"})
    assert window.session.document.dumps() == before
    assert "refused" in caplog.text
    current = window.context()[4]
    window.editor.message_edited.emit(current, {**current, "note": "typed"})
    assert window.context()[4]["note"] == "typed"
    assert history(window) == ["Edit message 4"]
