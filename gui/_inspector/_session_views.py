"""The views of delegate sessions: a page per session (breadcrumbs, its context, its calls) and the call stack."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from .._timeline_delegate import TimelineDelegate
from .._timeline_model import ItemRole, TimelineModel
from ._calls import CallsView
from ._sessions import Frame, Sessions

NO_SESSION = ("<p>No delegate session is open.</p><p>On a call with <code>_delegate</code> (a request file next "
              "to the document, or <code>anonymous</code>), <b>Step Into</b> (F11) opens its session here: the "
              "delegate's context and calls, stepped one by one. <b>Step Out</b> (Shift+F11) writes its output "
              "in the caller.</p>")
# The document's own session made current again (the call stack, a breadcrumb) while delegate sessions stay open:
# "No delegate session is open" was said of sessions the call stack listed.
ELSEWHERE = ("<p>The document's own session is current: its calls are in the Calls panel.</p><p>{open} open: choose "
             "one in the Call stack (View → Go to Pane → Call stack) to show it here.</p>")


def breadcrumbs(sessions: Sessions, upto: int) -> str:
    """The path from the document to session `upto`: each caller a link back to its session."""
    parts = [f'<a href="{i}">{html.escape(frame.title)}</a>' for i, frame in enumerate(sessions.frames[:upto])]
    parts.append(f"<b>{html.escape(sessions.frames[upto].title)}</b>")
    return " › ".join(parts)


class SessionPage(QWidget):
    """One delegate session: breadcrumbs back to the caller, its context (read-only), its calls, the steps."""

    def __init__(self, sessions: Sessions, frame: Frame, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        assert frame.loop is not None
        self.sessions, self.frame = sessions, frame
        self.crumbs = QLabel()
        self.crumbs.setTextFormat(Qt.TextFormat.RichText)
        self.crumbs.setWordWrap(True)
        self.crumbs.linkActivated.connect(lambda href: sessions.switch(int(href)))
        toolbar = QToolBar("Delegate session")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for name in ("step_into", "step_over", "step_out"):
            toolbar.addAction(sessions.actions_by_name[name])
        document = frame.loop.document
        self.context_model = TimelineModel(document.context, document.solution, self)
        self.messages = QTreeView()
        self.messages.setModel(self.context_model)
        self.messages.setItemDelegate(TimelineDelegate(self.messages))
        self.messages.setHeaderHidden(True)
        self.messages.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.messages.setToolTip("The delegate's context: its own messages, the parent's scoped ones (resolved "
                                 "when the session opened) and the call's parameters as its input")
        self.message = QPlainTextEdit(readOnly=True)
        self.message.setPlaceholderText("Select a message of the delegate's context to see it whole")
        self.messages.selectionModel().currentChanged.connect(self._show_message)
        self.calls = CallsView(frame.model)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        frame.debugger.stopped.connect(self.status.setText)
        frame.debugger.callFocused.connect(self.calls.select_call)
        context = QSplitter(Qt.Orientation.Horizontal)
        context.addWidget(self.messages)
        context.addWidget(self.message)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(context)
        split.addWidget(self.calls)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        context.setStretchFactor(0, 3)
        context.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.crumbs)
        layout.addWidget(toolbar)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        for view in (self.messages, self.calls):  # Tab leaves the tables, as in every pane of the window
            view.setTabKeyNavigation(False)
        self.messages.expandAll()
        self.context_model.rowsInserted.connect(lambda *_: self.messages.expandAll())

    def refresh(self) -> None:
        position = self.sessions.frames.index(self.frame)
        self.crumbs.setText(breadcrumbs(self.sessions, position))

    def _show_message(self, index: QModelIndex) -> None:
        item = self.context_model.data(index, ItemRole) if index.isValid() else None
        self.message.setPlainText("" if item is None else json.dumps(item, indent=2, ensure_ascii=False))

    def detach(self) -> None:
        self.frame.debugger.stopped.disconnect(self.status.setText)
        self.context_model.detach()


class SessionsView(QStackedWidget):
    """The delegate sessions' pages, the current one in front; a hint while the document's own is current."""

    def __init__(self, sessions: Sessions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sessions = sessions
        hint = QLabel(NO_SESSION)
        hint.setWordWrap(True)
        hint.setAlignment(Qt.AlignmentFlag.AlignTop)
        hint.setMargin(12)
        self.addWidget(hint)
        self.hint = hint
        self.pages: dict[int, SessionPage] = {}  # by id(frame)
        sessions.opened.connect(self._opened)
        sessions.changed.connect(self.sync)

    def _opened(self, frame: Frame) -> None:
        page = SessionPage(self.sessions, frame)
        self.pages[id(frame)] = page
        self.addWidget(page)
        self.sync()

    def page(self, frame: Frame) -> SessionPage | None:
        return self.pages.get(id(frame))

    def sync(self) -> None:
        """Pages for the frames on the stack only; the current frame's in front with fresh breadcrumbs."""
        alive = {id(frame) for frame in self.sessions.frames}
        for key in [key for key in self.pages if key not in alive]:
            page = self.pages.pop(key)
            page.detach()
            self.removeWidget(page)
            page.deleteLater()
        for page in self.pages.values():
            page.refresh()
        current = self.page(self.sessions.frame)
        opened = len(self.sessions.frames) - 1
        self.hint.setText(NO_SESSION if not opened else ELSEWHERE.format(
            open="A delegate session is" if opened == 1 else f"{opened} delegate sessions are"))
        self.setCurrentWidget(current if current is not None else self.hint)


class CallStackView(QListWidget):
    """The delegations from the document down to the deepest open session; a click switches session."""

    def __init__(self, sessions: Sessions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sessions = sessions
        self.setToolTip("The call stack of delegate sessions: the document, then each delegated call stepped into")
        sessions.changed.connect(self.refresh)
        self.currentRowChanged.connect(self._row_changed)
        self.refresh()

    def refresh(self) -> None:
        self.blockSignals(True)
        try:
            self.clear()
            for depth, frame in enumerate(self.sessions.frames):
                caller = "" if depth == 0 else "   " * (depth - 1) + "└ "
                item = QListWidgetItem(caller + frame.title)
                item.setToolTip("the document's own session" if depth == 0 else
                                f"the delegate session of call #{frame.caller} in "
                                f"{self.sessions.frames[depth - 1].title}")
                self.addItem(item)
            self.setCurrentRow(self.sessions.current)
        finally:
            self.blockSignals(False)

    def _row_changed(self, row: int) -> None:
        self.sessions.switch(row)


__all__ = ["CallStackView", "SessionPage", "SessionsView", "breadcrumbs"]
