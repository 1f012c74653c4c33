"""Every view follows the `DocumentModel` itself (ARCHITECTURE.md, the GUI's one path): no window pushes.

The views are made here with a document model, its session and the command API only, and no `MainWindow`:
a selection, a Follow Latest, an edit, an undo and another document reach each view through the model's
signals alone. A view that stopped subscribing (its `follow`) and waited for the window to push into it
again fails here; `test_the_window_pushes_nothing_into_a_view` reads the window's source for such pushes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt

from contextdeck.engine import Context, Document, Shape
from contextdeck.gui import _window
from contextdeck.gui._commands import Commands
from contextdeck.gui._document_model import DocumentModel
from contextdeck.gui._llm import LLMView
from contextdeck.gui._message_editor import MessageEditor
from contextdeck.gui._session import DocumentSession
from contextdeck.gui._state import PathRole, SourceRole, StateView
from contextdeck.gui._status_bar import CursorLabel
from contextdeck.gui._timeline import TimelinePanel
from contextdeck.gui._timeline_model import LookRole, TimelineModel
from contextdeck.gui._watches import WatchPanel

MESSAGES: list[dict[str, Any]] = [
    {"type": "text", "role": "system", "text": "You help."},
    {"type": "state", "data": {"user": "Alex"}},
    {"type": "state", "data": {"user": "Sam"}},
]


class Views:
    """The window's views over one document model, with no window."""

    def __init__(self, qtbot: Any, settings: QSettings, tmp_path: Path) -> None:
        self.session = DocumentSession(settings, tmp_path / "recovery")
        self.session.open_document(Document(Context([dict(m) for m in MESSAGES]), Shape.ARRAY))
        self.document = DocumentModel(self.session, self.session)
        self.commands = Commands(self.document, self.session.undo_stack, self.session)
        self.timeline, self.label, self.editor = TimelinePanel(), CursorLabel(), MessageEditor()
        self.state, self.llm, self.watches = StateView(), LLMView(), WatchPanel()
        for view in (self.timeline, self.label, self.editor, self.state, self.llm, self.watches):
            qtbot.addWidget(view)
            view.follow(self.document)
        self.llm.show()  # composes only when seen
        self.timeline.set_model(TimelineModel(self.document.context(), None))
        self.pin = self.watches.model.add("†state.user")

    def state_user(self) -> tuple[str, Any] | None:
        model = self.state.state_model
        found = model.match(model.index(0, 0), PathRole, "¶state.user", 1,
                            Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)
        return (str(found[0].siblingAtColumn(1).data()), found[0].siblingAtColumn(2).data(SourceRole)) \
            if found else None

    def future(self, row: int) -> bool:
        model = self.timeline.model()
        assert model is not None
        return bool(model.data(model.index(row, 0), LookRole)[-1])

    def pin_value(self) -> Any:
        resolution = self.pin.resolution
        return None if resolution is None or not resolution.found else resolution.value


@pytest.fixture
def views(qtbot: Any, tmp_path: Path) -> Iterator[Views]:
    made = Views(qtbot, QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), tmp_path)
    yield made
    made.editor.shutdown()
    made.llm.runner.shutdown()
    made.session.close()
    made.session.deleteLater()  # with the model and the command API, its children


def test_a_selection_reaches_every_view_through_the_model(qtbot: Any, views: Views) -> None:
    """Selecting message 1 in the model: the editor shows it at once and the timeline shades the rows after it;
    on the next turns the label says where the cursor is, and the state, the LLM view and the watches read the
    context as of message 1."""
    views.document.set_selected(1)
    assert views.editor.message() == MESSAGES[1]
    assert views.future(2)
    assert not views.future(1)
    qtbot.waitUntil(lambda: views.label.text() == "As of message #1")
    qtbot.waitUntil(lambda: views.state_user() == ('"Alex"', 1))
    qtbot.waitUntil(lambda: "You help." in views.llm.text())
    qtbot.waitUntil(lambda: views.pin_value() == "Alex")

    views.document.set_follow_latest(True)  # at once, no edit or selection
    assert views.label.text() == "As of the latest message"
    assert not views.future(2)
    qtbot.waitUntil(lambda: views.state_user() == ('"Sam"', 2))
    qtbot.waitUntil(lambda: views.pin_value() == "Sam")


def test_an_edit_and_its_undo_reach_every_view_through_the_model(qtbot: Any, views: Views) -> None:
    """A replace through the command API, then its undo: the editor shows the selected message as it is now,
    the state and the watch follow after the edit's pause."""
    views.document.set_selected(2)
    qtbot.waitUntil(lambda: views.state_user() == ('"Sam"', 2))
    kim = {"type": "state", "data": {"user": "Kim"}}
    assert views.commands.replace(2, kim, "Kim")
    assert views.editor.message() == kim
    qtbot.waitUntil(lambda: views.state_user() == ('"Kim"', 2))
    qtbot.waitUntil(lambda: views.pin_value() == "Kim")
    views.commands.undo()
    assert views.editor.message() == MESSAGES[2]
    qtbot.waitUntil(lambda: views.state_user() == ('"Sam"', 2))
    assert views.pin_value() == "Sam"

    views.commands.insert(0, {"type": "text", "role": "user", "text": "first"})  # renumbers the cursor
    qtbot.waitUntil(lambda: views.label.text() == "As of message #3")


def test_while_a_run_appends_the_views_follow_its_edits_later_and_at_once_after(qtbot: Any, views: Views,
                                                                                 monkeypatch: Any) -> None:
    """While a run appends (`pace_for_a_run`), an edit's `viewsDue` waits `REFRESH_WHILE_RUNNING_MS` from the first
    edit not shown, however many edits follow (a recompute inside a short run cost a third of it); when the run
    ends, the views follow `REFRESH_MS` after the last edit, as after any edit."""
    from contextdeck.gui import _document_model

    monkeypatch.setattr(_document_model, "REFRESH_WHILE_RUNNING_MS", 60_000)
    views.document.set_selected(2)
    qtbot.waitUntil(lambda: not views.document.views_pending())
    due: list[None] = []
    views.document.viewsDue.connect(lambda: due.append(None))
    views.document.pace_for_a_run(True)
    views.commands.insert(len(views.document.context()), {"type": "state", "data": {"user": "Kim"}})
    qtbot.wait(4 * _document_model.REFRESH_MS)
    views.commands.insert(len(views.document.context()), {"type": "text", "text": "another output"})
    qtbot.wait(4 * _document_model.REFRESH_MS)
    assert due == []
    assert views.document.views_pending()
    views.document.pace_for_a_run(False)
    qtbot.waitUntil(lambda: due == [None])


def test_another_document_reaches_every_view_through_the_model(qtbot: Any, views: Views) -> None:
    """Another document opened in the session: the editor shows nothing (from the slice after the hand-over), the
    pins resolve in the new context."""
    views.document.set_selected(1)
    assert views.editor.message() == MESSAGES[1]
    views.session.open_document(Document(Context([{"type": "state", "data": {"user": "Lee"}}]), Shape.ARRAY))
    qtbot.waitUntil(lambda: views.editor.message() is None)
    views.timeline.set_model(TimelineModel(views.document.context(), None))
    qtbot.waitUntil(lambda: views.pin_value() == "Lee")
    qtbot.waitUntil(lambda: views.state_user() == ('"Lee"', 0))


PUSHES = {"refresh", "show_context", "set_cursor", "set_context", "set_message", "set_state"}
VIEWS = {"state_view", "llm_view", "watches", "editor", "timeline", "cursor_label", "_model"}


def test_the_window_pushes_nothing_into_a_view() -> None:
    """The window's source calls none of the views' showing methods: each view reads the model itself."""
    tree = ast.parse(Path(_window.__file__).read_text(encoding="utf-8"))
    pushes = [f"{node.lineno}: {ast.unparse(node.func)}" for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PUSHES
              and any(part in VIEWS for part in ast.unparse(node.func.value).split("."))]
    assert pushes == []
