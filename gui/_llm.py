"""The LLM view: the request exactly as the model receives it, as of the time cursor (engine `compose_request`).

Two tabs: Messages (each under its role, the text `contextdeck render` prints) and Schema (the composed
solution schema, with the tools offered and the model settings). Problems of the request (an unknown tool
reference) show above the tabs. Rendered only while the view is seen, in the background for big documents; each
tab lays out only the lines in sight (`LinesView`: the Messages text is ten megabytes at a million messages).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from contextdeck.engine import Activities, Context, LLMMessage, Request, compose_request, let_go

from ._background import BackgroundRunner
from ._lines import FindBar, LinesView, line_starts, role_style, searched
from ._seen import seen

if TYPE_CHECKING:
    from ._document_model import DocumentModel

BACKGROUND_FROM = 5_000  # messages: smaller contexts render at once, within one turn
ROLE_COLOURS = {"system": "#d97706", "user": "#2563eb", "assistant": "#059669", "schema": "#7c3aed"}


class LLMView(QWidget):
    """The request as the model receives it; composing waits until the view is visible.

    `activities` and `tools` are asked for at each render (the loaded activities decide which tools are
    explicit; the tool registry answers `"tool": "Tool.name"`). Double-clicking a message emits
    `sourceActivated` with the first context message it was made from.
    """

    sourceActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.problems = QLabel()
        self.problems.setObjectName("llmProblems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: #dc2626;")
        self.problems.hide()
        self.messages = LinesView("Nothing reaches the model yet.")
        self.messages.styles = role_style(ROLE_COLOURS)
        self.messages.setToolTip("Double-click a message to select the context message it comes from")
        self.messages.activated.connect(self._activated)  # a double click, or Enter (the place found, or the top line)
        self._starts: list[int] = []  # where each message's text starts, and the messages it came from
        self._sources: list[tuple[int, ...]] = []
        self.schema = LinesView("No schema yet.")
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.messages, "Messages")
        self.tabs.addTab(self.schema, "Schema")
        self.find_bar = FindBar(self.text_in_front)
        for text in (self.messages, self.schema):
            self.find_bar.follow(text)
        self.tabs.currentChanged.connect(self.find_bar.forget_count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.problems)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.find_bar)
        self.activities: Callable[[], Activities | None] = lambda: None
        self.tools: Callable[[], dict[str, Any] | None] = lambda: None
        self.request: Request | None = None
        self._shown: Rendered | None = None  # what is shown (let go of once another is)
        self._context: Context | None = None
        self._at: int | None = None
        self._document_schema: Any = None
        self._stale = False
        self.runner = BackgroundRunner(0, self)
        self.runner.finished.connect(self._rendered)

    def text_in_front(self) -> LinesView:
        """The tab in front: what Find searches and where Go to Pane (Alt+7) puts the keys."""
        return self.schema if self.tabs.currentWidget() is self.schema else self.messages

    def follow(self, document: DocumentModel) -> None:
        """Show the request of `document` at its time cursor whenever its views are due (a selection, an edit)."""
        self._document = document
        document.viewsDue.connect(self._views_due)  # a bound method: Qt drops it with the view

    def _views_due(self) -> None:
        document = self._document
        self.show_context(document.context(), document.at(), document.document.schema)

    def show_context(self, context: Context, at: int | None, schema: Any = None) -> None:
        """Compose the request of `context` (the document's `schema`) as of the first `at` messages now if
        seen, else when it is shown."""
        self._context, self._at, self._document_schema, self._stale = context, at, schema, True
        if seen(self):
            self.render_now()

    def refresh(self, *_changed: object) -> None:
        """Compose again (activities or the tool registry changed)."""
        if self._context is not None:
            self.show_context(self._context, self._at, self._document_schema)

    def render_now(self) -> None:
        if self._context is None or not self._stale:
            return
        self._stale = False
        context, at, schema = self._context, self._at, self._document_schema
        activities, tools = self.activities(), self.tools()

        def compose(source: Any, with_searched: bool = True) -> Rendered:
            request = compose_request(source, schema, at=at, activities=activities, tools=tools)
            return Rendered.of(request, with_searched=with_searched)

        if len(context) < BACKGROUND_FROM:  # a small text: folded at the first find, if Find is used at all
            self._rendered(compose(context, with_searched=False))
            return
        self.runner.request_view(context, compose)  # on a frozen copy: the worker never touches the live context

    def _rendered(self, rendered: object) -> None:
        if isinstance(rendered, Exception):
            self.messages.show_text(f"Could not compose the request: {rendered}")
            return
        if not isinstance(rendered, Rendered):
            return
        shown, self._shown = self._shown, rendered
        request = self.request = rendered.request
        self.messages.show_text(rendered.messages, rendered.message_lines, rendered.messages_searched)
        self._starts, self._sources = rendered.starts, rendered.sources
        self.schema.show_text(rendered.schema, rendered.schema_lines, rendered.schema_searched)
        if shown is not None:  # freed in slices (the graveyard), not in this turn (more than a frame at 1M)
            let_go(shown.parts, shown.sources, shown.starts)
        problems = [str(problem) for problem in request.problems]
        self.problems.setText("⚠ " + "\n⚠ ".join(problems) if problems else "")
        self.problems.setVisible(bool(problems))

    def source_at(self, position: int) -> int | None:
        """The first context message the message at character `position` of the Messages text comes from."""
        found = bisect_right(self._starts, position) - 1
        return self._sources[found][0] if found >= 0 and self._sources[found] else None

    def _activated(self, position: int) -> None:
        source = self.source_at(position)
        if source is not None:
            self.sourceActivated.emit(source)

    def text(self) -> str:
        """The whole Messages text."""
        return self.messages.full_text

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.render_now()


@dataclass(frozen=True)
class Rendered:
    """A request and its texts, made where it was composed (the worker, for a big document): the Messages text
    (megabytes at 100,000 messages), where each message's text starts in it and what it came from, the Schema text,
    where each line of the two texts starts, and what Find searches in each (`searched`: their case folds; made
    only on the worker, else None and made by the view at its first find). Once another is shown, its lists are let
    go of (`let_go`): the request's messages (`parts`, a list the graveyard can empty), their starts and sources."""

    request: Request
    parts: list[LLMMessage]  # the request's messages in a list: the graveyard frees them a slice at a time
    messages: str
    starts: list[int]
    sources: list[tuple[int, ...]]
    schema: str
    message_lines: Sequence[int]
    schema_lines: Sequence[int]
    messages_searched: str | None
    schema_searched: str | None

    @classmethod
    def of(cls, request: Request, *, with_searched: bool = True) -> Rendered:
        starts, sources, start = [], [], 0
        for message in request.messages:  # the layout of `messages_text`: role line, text, blank line
            starts.append(start)
            sources.append(message.sources)
            start += len(f"--- {message.role} ---\n{message.text}\n\n")
        messages, schema = request.messages_text(), _schema_text(request)
        return cls(request, list(request.messages), messages, starts, sources, schema, line_starts(messages),
                   line_starts(schema), searched(messages) if with_searched else None,
                   searched(schema) if with_searched else None)


def _schema_text(request: Request) -> str:
    offered = ", ".join(f"{tool.name} ({'latent' if tool.latent else 'explicit: no _output'})"
                        for tool in request.tools)
    lines = [f"Tools offered: {offered or 'none'}"]
    if request.config:
        lines.append(f"Model settings (presets): {request.config_text()}")
    return "\n".join(lines) + "\n\n" + request.schema_text()
