"""The output audit panel: for an output message, the call that made it and what it changed at its path."""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent
from PySide6.QtWidgets import QFormLayout, QLabel, QTextBrowser, QVBoxLayout, QWidget

from contextdeck.engine import Context

from .._touches import dark
from ._audit_data import Audit, audit
from ._style import LINK_COLOUR, heading

# (text, background) of a diff's added, removed and hunk lines, for a light and for a dark palette
_DIFF_COLOURS = {
    False: {"+": ("#1f7a3f", "#e6f6ea"), "-": ("#a52a2a", "#fbeaea"), "@": ("#6b7f8e", "transparent")},
    True: {"+": ("#8fdca8", "#1d3526"), "-": ("#f0a3a3", "#42262a"), "@": ("#9aabb9", "transparent")},
}


class OutputAudit(QWidget):
    """Shows the audit of the selected message; `callActivated(call index)` when the call link is clicked."""

    callActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._audit: Audit | None = None
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.call_link = QLabel()
        self.call_link.setTextFormat(Qt.TextFormat.RichText)
        self.call_link.linkActivated.connect(self._link)
        # Tab reaches a link to a pending call and Enter or Space follows it, as a click does (`eventFilter`: a
        # label's own keyboard links answer Enter only once Tab has moved inside its text); no link, no stop
        self._href: str | None = None
        self.call_link.installEventFilter(self)
        self.date = QLabel()
        self.method = QLabel()
        self.path = QLabel()
        self.run = QLabel()
        self.run.setWordWrap(True)
        for label in (self.date, self.method, self.path, self.run):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.call_json = QTextBrowser()
        self.diff = QTextBrowser()
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.call_json.setFont(mono)
        self.diff.setFont(mono)
        form = QFormLayout()
        form.addRow("call", self.call_link)
        form.addRow("_date", self.date)
        form.addRow("_outputMethod", self.method)
        form.addRow("_outputPath", self.path)
        form.addRow("_run", self.run)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addLayout(form)
        layout.addWidget(heading("Call as written"))
        layout.addWidget(self.call_json, 1)
        layout.addWidget(heading("Value at the path, before → after"))
        layout.addWidget(self.diff, 2)
        self.show_message(None, None)

    @property
    def audit(self) -> Audit | None:
        return self._audit

    def show_message(self, context: Context | None, index: int | None, solution: object = None) -> None:
        """Audit message `index` of `context`; anything that is not an output message says so."""
        found = audit(context, index, solution) if context is not None and index is not None else None
        self._audit = found
        self._href = None if found is None or found.call_index is None else f"call:{found.call_index}"
        self.call_link.setFocusPolicy(Qt.FocusPolicy.NoFocus if self._href is None else Qt.FocusPolicy.StrongFocus)
        if found is None:
            self.heading.setText("<b>Not an output message</b><br><span style='color:gray'>Select a message "
                                 "that a call wrote (it carries <code>_call</code>).</span>")
            for label in (self.call_link, self.date, self.method, self.path, self.run):
                label.setText("—")
            self.call_json.setPlainText("")
            self.diff.setPlainText("")
            return
        self.heading.setText(f"<b>Output message #{found.message_index}</b>"
                             + (f" · instance {html.escape(found.instance)}" if found.instance else ""))
        tool = found.call.get("_tool", "?") if isinstance(found.call, dict) else "?"
        if found.call_index is None:
            note = "<span style='color:gray'>(not in the pending calls)</span>"
            self.call_link.setText(f"{html.escape(str(tool))} {note}")
        else:
            self.call_link.setText(f"<a href='{self._href}' style='color:{LINK_COLOUR}'>"
                                   f"#{found.call_index} {html.escape(str(tool))}</a>")
        self.date.setText(found.date or "—")
        self.method.setText(found.method)
        self.path.setText((found.path or "—") + (f"  ⚠ {found.problem}" if found.problem else ""))
        self.run.setText(run_summary(found.run))
        self.run.setToolTip(json.dumps(found.run.get("inputs"), indent=2, ensure_ascii=False)
                            if found.run and "inputs" in found.run else "")
        self.call_json.setPlainText(json.dumps(found.call, indent=2, ensure_ascii=False))
        self.diff.setHtml(_diff_html(found.diff, dark(self.palette())))

    def changeEvent(self, event: QEvent) -> None:
        # The theme changed: the diff's colours are in its HTML, so it is written again in the new ones.
        if event.type() == QEvent.Type.PaletteChange and self._audit is not None:
            self.diff.setHtml(_diff_html(self._audit.diff, dark(self.palette())))
        super().changeEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched is self.call_link and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and self._href is not None):
            self._link(self._href)
            return True
        return super().eventFilter(watched, event)

    def _link(self, href: str) -> None:
        if href.startswith("call:"):
            self.callActivated.emit(int(href[5:]))


def run_summary(run: dict[str, Any] | None) -> str:
    """One line about how the call ran: when, how long, what it received (hover for the inputs)."""
    if not run:
        return "— (written before runs were recorded)"
    parts = []
    if "started" in run:
        parts.append(f"started {run['started']}")
    if isinstance(run.get("seconds"), int | float):
        parts.append(f"took {run['seconds']:.3f} s")
    if isinstance(run.get("inputs"), dict):
        parts.append("received " + ", ".join(run["inputs"]) if run["inputs"] else "received nothing")
    elif "digest" in run:
        parts.append("inputs kept as a digest")
    if isinstance(run.get("model"), dict):
        parts.append(model_summary(run["model"]))
    printed = [stream for stream in ("stdout", "stderr") if run.get(stream)]
    if printed:  # the text itself is in the call inspector's "Ran" tab
        parts.append(f"printed to {' and '.join(printed)} (the call inspector's Ran tab shows it)")
    return " · ".join(parts) or "—"


def model_summary(model: dict[str, Any]) -> str:
    """Who answered a latent call and what it cost: `answered by M (T tokens: I in, O out; L ms)`."""
    found = model.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    tokens = f"{usage.get('total_tokens', '?')} tokens: {usage.get('prompt_tokens', '?')} in, " \
             f"{usage.get('completion_tokens', '?')} out"
    replayed = ", replayed from the recording" if model.get("replayed") else ""
    return f"answered by {model.get('model', '?')} ({tokens}; {model.get('latency_ms', '?')} ms{replayed})"


def _diff_html(lines: list[str], dark_palette: bool) -> str:
    if not lines:
        return "<i>no change at the path</i>"
    rows = []
    for line in lines[2:]:  # the ---/+++ file header says nothing here
        colour, background = _DIFF_COLOURS[dark_palette].get(line[:1], ("inherit", "transparent"))
        rows.append(f"<div style='color:{colour}; background:{background}; white-space:pre'>{html.escape(line)}</div>")
    return "<pre style='margin:0'>" + "".join(rows) + "</pre>"
