"""The call inspector: what the selected call will receive, where each value came from, where its output goes."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import (
    MISSING,
    OPEN,
    CallAnalysis,
    CallRecord,
    Context,
    Parameter,
    Problem,
    body_of,
    get_path,
    is_approval,
    scoped_indices,
)

from ._destinations import DestinationsView
from ._style import LINK_COLOUR, MISSING_COLOUR, STATUS_COLOURS, WARNING_COLOUR, NoteBox, heading

PARAM, WRITTEN, RESOLVED, SOURCE, RECEIVED = range(5)
# A stale parameter's row: a translucent amber over the view's own base, light in the light theme and dark in the
# dark one, so the palette's text stays readable on it (an opaque light yellow kept light text in the dark theme).
STALE_BACKGROUND = QColor(245, 180, 40, 56)
SOURCE_ROLE = Qt.ItemDataRole.UserRole + 1
PARAMS_MAX_HEIGHT = 280  # about nine rows; more scroll inside the table
TABS_MIN_HEIGHT = 180  # the tab strip and about eight lines of the call as it will run


def describe(value: Any) -> str:
    """A value as one line of JSON for tables; MISSING says so."""
    if value is MISSING:
        return "—"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _badge(text: str, colour: str) -> str:
    return (f'<span style="background-color:{colour}; color:white; font-weight:600;">'
            f"&nbsp;{text}&nbsp;</span>")


def _source_label(context: Context, index: int) -> str:
    info = context.info(index)
    name = info.kind or str(body_of(context[index]).get("type"))
    return f"#{index} {name}" + (f"[{info.instance}]" if info.instance else "")


_JSON_WORDS = {"None": "null", "True": "true", "False": "false"}


def _html(text: str) -> str:
    return escape(text, quote=False)  # quotes stay as typed: the label's text is searched for them


def problem_message(problem: Problem) -> str:
    """A problem's message as the inspector shows it beside its path: without the path again (the engine's
    message starts with it, for the command line) and with JSON's words for a value (`null`, not `None`)."""
    message = problem.message
    if problem.where and message.startswith(f"{problem.where}: "):
        message = message[len(problem.where) + 2:]
    word, _, rest = message.partition(" ")
    return f"{_JSON_WORDS[word]} {rest}" if word in _JSON_WORDS and rest else message


class ParametersTable(QTreeWidget):
    """The parameters' table, never shorter than its rows (up to its maximum height): the inspector scrolls."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(hint.width(), min(self.sizeHint().height(), self.maximumHeight()))


class CallInspector(QWidget):
    """Shows one `CallAnalysis`; `sourceActivated(message index)` when a value's source is clicked."""

    sourceActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context: Context | None = None
        self._call: CallAnalysis | None = None
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        title_font = self.title.font()
        title_font.setPointSizeF(title_font.pointSizeF() * 1.25)
        self.title.setFont(title_font)
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.params = ParametersTable()
        self.params.setHeaderLabels(["parameter", "as written", "resolved now", "from", "received then"])
        self.params.setRootIsDecorated(False)
        self.params.setAlternatingRowColors(True)
        self.params.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.params.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.params.header().setStretchLastSection(True)
        self.params.itemClicked.connect(self._item_clicked)
        self.destinations = DestinationsView()
        self.method = QLabel()
        self.problems = NoteBox()
        self.problems.setWordWrap(True)
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        self.schema = QPlainTextEdit(readOnly=True)
        self.resolved_call = QPlainTextEdit(readOnly=True)
        self.ran = QPlainTextEdit(readOnly=True)
        self.ran_links = QLabel()
        self.ran_links.setTextFormat(Qt.TextFormat.RichText)
        self.ran_links.setWordWrap(True)
        self.ran_links.linkActivated.connect(lambda link: self.sourceActivated.emit(int(link)))
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        for edit in (self.schema, self.resolved_call, self.ran):
            edit.setFont(mono)
        self.scoped = QTreeWidget()
        self.scoped.setHeaderLabels(["message", "value it sees"])
        self.scoped.setRootIsDecorated(False)
        self.scoped.itemClicked.connect(self._item_clicked)
        self.scope_note = QLabel()
        self.scope_note.setWordWrap(True)
        self._layout()
        self.show_call(None, None)

    def _layout(self) -> None:
        self.params.setUniformRowHeights(True)
        self.params.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.params.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        self.params.setMaximumHeight(PARAMS_MAX_HEIGHT)
        self.params.setObjectName("callParameters")  # roomier rows (`_touches.ROW_PADDING`)
        scoped_page = QWidget()
        scoped_layout = QVBoxLayout(scoped_page)
        scoped_layout.setContentsMargins(4, 4, 4, 4)
        scoped_layout.addWidget(self.scope_note)
        scoped_layout.addWidget(self.scoped)
        ran_page = QWidget()
        ran_layout = QVBoxLayout(ran_page)
        ran_layout.setContentsMargins(4, 4, 4, 4)
        ran_layout.addWidget(self.ran_links)
        ran_layout.addWidget(self.ran, 1)
        # Short titles, each explained by its tooltip: the strip fits the inspector's width at 1280 pixels
        # ("Call as it will run … Context it receives" needed its scroll arrows).
        self.tabs = QTabWidget()
        for page, title, tip in ((self.resolved_call, "Will run", "The call as it will run: its parameters resolved"),
                                 (ran_page, "Ran", "The call as it ran: when, how long, what it received, "
                                  "its error and what it printed"),
                                 (self.schema, "Tool schema", "The schema of the call's tool"),
                                 (scoped_page, "Context", "The context the call receives (its _scopes)")):
            self.tabs.setTabToolTip(self.tabs.addTab(page, title), tip)
        self.tabs.setMinimumHeight(TABS_MIN_HEIGHT)
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addStretch(1)
        # The parts keep the room they need (the parameters their rows, up to PARAMS_MAX_HEIGHT; the tabs a few
        # lines) and the inspector scrolls as a whole when its dock is shorter: at 1280x800 squeezing them into
        # the dock left the parameters about two rows.
        body = QWidget()
        self.scroller = QScrollArea()
        self.scroller.setWidget(body)
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroller)
        layout = QVBoxLayout(body)
        layout.setSpacing(6)
        layout.addLayout(header)
        layout.addWidget(self.summary)
        layout.addWidget(self.problems)
        layout.addWidget(heading("Parameters"))
        layout.addWidget(self.params)
        layout.addWidget(heading("Output"))
        layout.addWidget(self.destinations)
        layout.addWidget(self.method)
        layout.addSpacing(4)
        layout.addWidget(self.tabs, 1)

    # -- showing ----------------------------------------------------------------------------------

    @property
    def call(self) -> CallAnalysis | None:
        return self._call

    def show_call(self, context: Context | None, call: CallAnalysis | None, record: CallRecord | None = None) -> None:
        """Show the engine's analysis of a call of `context` (None clears the inspector).

        `record`: what the document says the call did (its latest run), shown beside what it would do now.
        """
        self._context, self._call = context, call
        self.params.clear()
        self.scoped.clear()
        self._show_run(context, record)
        self.tabs.setTabText(0, "Would run now" if record is not None else "Will run")
        self.tabs.setTabToolTip(0, "The call as it would run now: its parameters resolved today" if record is not None
                                else "The call as it will run: its parameters resolved")
        if context is None or call is None:
            self.title.setText("<b>No call selected</b>")
            self.summary.setText("Select a call in the Calls panel or the plan graph.")
            self.problems.hide()
            self.destinations.set_output("", (), "")
            self.method.setText("")
            self.schema.setPlainText("")
            self.resolved_call.setPlainText("")
            return
        name = call.tool_name or "(no _tool)"
        badge = _badge(str(call.status), STATUS_COLOURS[call.status])
        self.title.setText(f"<b>{name}</b> &nbsp;<span style='color:gray'>call #{call.index}</span> &nbsp;{badge}")
        self.summary.setText(self._summary(call))
        self._show_problems(call)
        received = record.audit.get("inputs") if record is not None else None
        self.params.setColumnHidden(RECEIVED, not isinstance(received, dict))
        changed = False
        for param in call.parameters:
            item = self._param_item(context, param)
            self._mark_problems(item, param.name, call)
            if isinstance(received, dict):
                changed |= self._mark_received(item, param, received)
            self.params.addTopLevelItem(item)
        if changed or (record is not None and record.edited):
            self.title.setText(self.title.text() + " " + _badge("stale", WARNING_COLOUR))
        for column in (PARAM, WRITTEN, RESOLVED, RECEIVED):
            self.params.resizeColumnToContents(column)
            self.params.setColumnWidth(column, min(self.params.columnWidth(column) + 12, 260))
        note = "no _outputPath: " + ("fire-and-forget (run, not awaited)" if call.fire_and_forget
                                     else "an ephemeral thought (nothing is written)")
        self.destinations.set_output(call.tool_name or "call", call.branches, note)
        drawn = self.destinations.destinations()
        self.destinations.setToolTip("\n".join(f"branch {b + 1}: {ref}" for b, _f, ref in drawn))
        plan = call.plan
        prescribed = " (prescribed by the tool)" if plan.prescribed else ""
        self.method.setText(f"method <b>{plan.method}</b> · path <code>{plan.output_path or '—'}</code>{prescribed}")
        self.schema.setPlainText(_json(call.tool.schema) if call.tool else
                                 f"No tool named {call.tool_name!r} is defined: the call is latent.")
        self.resolved_call.setPlainText(_json(call.resolved_call))
        self._show_scope(context, call)

    def _mark_received(self, item: QTreeWidgetItem, param: Parameter, received: dict[str, Any]) -> bool:
        """What the call received when it ran; a value that differs now is highlighted. True when it differs."""
        then = received.get(param.name, MISSING)
        item.setText(RECEIVED, describe(then))
        item.setToolTip(RECEIVED, "what the call received when it ran")
        if then != param.resolved:
            for column in range(self.params.columnCount()):
                item.setBackground(column, QBrush(STALE_BACKGROUND))
            item.setToolTip(RESOLVED, f"changed since it ran: it received {describe(then)}")
            return True
        return False

    def _show_run(self, context: Context | None, record: CallRecord | None) -> None:
        """The "Call as it ran" tab: start, duration, inputs, error, what it printed, traceback, messages left."""
        self.tabs.setTabEnabled(1, record is not None)
        if context is None or record is None:
            self.ran.setPlainText("")
            self.ran_links.setText("")
            return
        audit = record.audit
        lines = []
        if "started" in audit:
            lines.append(f"started  {audit['started']}")
        if isinstance(audit.get("seconds"), int | float):
            lines.append(f"took     {audit['seconds']:.3f} s")
        if record.error is not None:
            lines.append(f"failed   {record.error.get('type')}: {record.error.get('message')}")
        if record.edited:
            lines.append("the call was edited in the plan since it ran")
        if "inputs" in audit:
            lines += ["", "received:", _json(audit["inputs"])]
        elif "digest" in audit:
            lines += ["", f"received inputs with digest {audit['digest']} (too large to keep)"]
        for stream in ("stdout", "stderr"):  # what the activity printed, kept by its worker (docs/execution.md)
            if isinstance(audit.get(stream), str):
                lines += ["", f"printed to {stream}:", audit[stream].rstrip("\n")]
        if isinstance(audit.get("traceback"), str):
            lines += ["", audit["traceback"]]
        if not audit:
            lines.append("recorded before runs kept their inputs and times (only the call as written)")
        self.ran.setPlainText("\n".join(lines))
        links = []
        for entry in record.last:
            what = "error" if entry.error is not None and not entry.output else "run record" if entry.ran else "output"
            links.append(f"<a href='{entry.position}' style='color:{LINK_COLOUR}'>#{entry.position}</a> {what}")
        self.ran_links.setText("Left " + ", ".join(links) + " (click to select in the timeline)")

    def _summary(self, call: CallAnalysis) -> str:
        """Mode, tool, instance, what it waits for, and its reason, on one wrapped line."""
        parts = [f"<b>{call.mode}</b>"]
        if call.tool is not None:
            origin = call.tool.message_index
            parts.append("tool from code" if origin is None else f"tool defined at message #{origin}")
            description = call.tool.schema.get("description")
            if isinstance(description, str):
                parts.append(f"<i>{description}</i>")
        else:
            parts.append("no tool definition")
        if call.instance is not None:
            parts.append(f"instance <b>{call.instance}</b>")
        if call.waiting_for:
            paths = ", ".join(f"<code style='color:{MISSING_COLOUR}'>{m}</code>" for m in call.waiting_for)
            parts.append(f"waits for {paths}")
        if call.needs_output and call.status in OPEN:  # a call that ran (an imported one's result) waits for nothing
            parts.append("waits for an output typed in or given by an LLM")
        reasoning = call.call.get("_reasoningForCall") if isinstance(call.call, dict) else None
        if isinstance(reasoning, str):
            parts.append(f"reason: <i>{reasoning}</i>")
        return " · ".join(parts)

    def _show_problems(self, call: CallAnalysis) -> None:
        """What keeps the call from running (red), then parameters judged with the values resolved now."""
        if not call.problems and not call.warnings:
            self.problems.hide()
            return
        lines = [f"<span style='color:{MISSING_COLOUR}'>⚠ <code>{_html(p.where)}</code> {_html(p.type)}: "
                 f"{_html(problem_message(p))}</span>" for p in call.problems]
        lines += [f"<span style='color:{WARNING_COLOUR}'>⚠ <code>{_html(p.where)}</code> "
                  f"{_html(problem_message(p))} <i>(with the values resolved now)</i></span>" for p in call.warnings]
        self.problems.setText("<br>".join(lines))
        self.problems.show()

    def _param_item(self, context: Context, param: Parameter) -> QTreeWidgetItem:
        item = QTreeWidgetItem([param.name, describe(param.written), "", ""])
        item.setToolTip(WRITTEN, _json(param.written))
        if param.error:
            item.setText(RESOLVED, f"malformed: {param.error}")
            item.setForeground(RESOLVED, QBrush(QColor(MISSING_COLOUR)))
        elif param.resolved is MISSING:
            item.setText(RESOLVED, "missing " + ", ".join(param.missing))
            approval = any(is_approval(m) for m in param.missing)
            item.setText(SOURCE, "an approval, not yet given" if approval else "not written yet")
            item.setForeground(SOURCE, QBrush(QColor("gray")))
            item.setForeground(RESOLVED, QBrush(QColor(MISSING_COLOUR)))
            font = item.font(RESOLVED)
            font.setBold(True)
            item.setFont(RESOLVED, font)
        else:
            item.setText(RESOLVED, describe(param.resolved))
            item.setToolTip(RESOLVED, _json(param.resolved))
        sources = param.sources
        if sources:
            item.setText(SOURCE, ", ".join(_source_label(context, i) for i in sources))
            item.setData(SOURCE, SOURCE_ROLE, sources[-1])
            item.setForeground(SOURCE, QBrush(QColor(LINK_COLOUR)))
            item.setToolTip(SOURCE, "Click to select that message in the timeline")
        elif not param.lookups:
            item.setText(SOURCE, "literal")
            item.setForeground(SOURCE, QBrush(QColor("gray")))
        return item

    def _mark_problems(self, item: QTreeWidgetItem, name: str, call: CallAnalysis) -> None:
        """A problem about this parameter shows on its row too (the banner lists them all)."""
        def about(problems: tuple[Problem, ...]) -> list[Problem]:
            return [p for p in problems if p.where == f"$.{name}" or p.where.startswith((f"$.{name}.", f"$.{name}["))]

        blocking, own = about(call.problems), about(call.problems) + about(call.warnings)
        if not own:
            return
        colour = MISSING_COLOUR if blocking else WARNING_COLOUR
        item.setText(RESOLVED, "⚠ " + item.text(RESOLVED))
        item.setForeground(RESOLVED, QBrush(QColor(colour)))
        item.setToolTip(RESOLVED, "\n".join(f"{p.where}: {problem_message(p)}" for p in own))

    def _show_scope(self, context: Context, call: CallAnalysis) -> None:
        scopes = call.plan.scopes
        if not scopes:
            self.scope_note.setText("No _scopes: the call receives no context messages.")
            return
        where = f"instance {call.instance} and global" if call.instance else "global"
        self.scope_note.setText(f"_scopes {', '.join(scopes)} → the {where} messages of those kinds:")
        for index in scoped_indices(context, call.plan.scopes, call.instance):
            value = context.info(index).write
            shown = describe(get_path(value.value, ()) if value is not None else MISSING)
            item = QTreeWidgetItem([_source_label(context, index), shown])
            item.setData(0, SOURCE_ROLE, index)
            item.setForeground(0, QBrush(QColor(LINK_COLOUR)))
            self.scoped.addTopLevelItem(item)

    def _item_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        index = item.data(column, SOURCE_ROLE)
        if isinstance(index, int):
            self.sourceActivated.emit(index)

    def source_item(self, name: str) -> QTreeWidgetItem | None:
        """The parameters row of `name` (tests and keyboard users reach the source through it)."""
        found = self.params.findItems(name, Qt.MatchFlag.MatchExactly, PARAM)
        return found[0] if found else None
