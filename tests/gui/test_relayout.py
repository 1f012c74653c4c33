"""An edit does not lay out the whole main window when nothing it shows changed size.

Qt lays a widget's ancestors out again, up to the main window, whenever one of them is laid out (1-2 ms per edit at
100,000 messages): typing into a form, whose message comes back to the
editor unchanged, and Undo's new name after each edit, in the toolbar, no longer start one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar, QWidget

from contextdeck.gui._window import MainWindow

MESSAGES = [
    {"type": "text", "role": "user", "text": "hi"},
    {"type": "state", "data": {"label": "a", "n": 1}},
    {"type": "state", "data": {"label": "b", "n": 2}},
]


class LayoutRequests(QObject):
    """Counts the layout requests a widget receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def settled() -> None:
    """Every posted event delivered, and those their delivery posted (a layout request climbs one widget a time)."""
    for _ in range(10):
        QCoreApplication.sendPostedEvents()


def edit(window: MainWindow, data: dict[str, Any]) -> None:
    window.editor.payload.value_edited.emit(data)  # what the form sends as the user types
    settled()


def test_typing_into_a_form_does_not_lay_out_the_main_window(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    window = open_messages(MESSAGES, "typing.json")
    window.select_message(1)
    edit(window, {"label": "a", "n": 10})  # the first edit enables Undo: the toolbar may change
    # The window's first layout at the size it opened at, and the views' refresh after that edit, settle first.
    qtbot.waitUntil(lambda: not window.document.views_pending() and not window.state_view.is_busy())
    settled()
    requests = LayoutRequests(window)
    for n in (11, 12, 13):
        edit(window, {"label": "a", "n": n})
    assert window.context()[1]["data"] == {"label": "a", "n": 13}
    assert window.editor.message() == window.context()[1]  # the editor holds the message as edited
    assert requests.count == 0


def test_the_toolbars_undo_keeps_its_name_and_undoes(open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    window = open_messages(MESSAGES, "undo.json")
    toolbar = window.findChild(QToolBar, "MainToolBar")
    assert toolbar is not None
    buttons = {action.objectName(): action for action in toolbar.actions()}
    undo, redo = buttons["undo_button"], buttons["redo_button"]
    menu_undo = window.findChild(QAction, "undo")
    assert menu_undo is not None
    assert not undo.isEnabled()
    window.select_message(1)
    edit(window, {"label": "a", "n": 10})
    assert undo.isEnabled()
    window.select_message(2)
    settled()
    requests = LayoutRequests(toolbar)
    edit(window, {"label": "b", "n": 20})  # a new step: the Edit menu's Undo is renamed after it
    assert "2" in menu_undo.text()
    assert undo.text() == "&Undo"
    assert requests.count == 0
    undo.trigger()
    assert window.context()[2]["data"] == {"label": "b", "n": 2}
    assert redo.isEnabled()
    redo.trigger()
    assert window.context()[2]["data"] == {"label": "b", "n": 20}
