"""The two questions the debugger asks a person, as non-modal dialogs that answer through a signal.

`ApprovalDialog`: approve, reject (with a reason) or edit a call before it runs. `OutputDialog`: type the
result of a latent call that has no `_output`, checked against the tool's `_output` schema when it has one.
"""

from __future__ import annotations

import html
import itertools
import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import CallAnalysis, Decision

from .._editor import DataEditor
from .._editor._base import CtrlTabTypesTab
from ._style import MISSING_COLOUR


def _mono() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def parse_json(text: str) -> tuple[Any, str | None]:
    """The JSON value of `text`, or an error naming the line and column."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, f"line {error.lineno}, column {error.colno}: {error.msg}"


def tab_as_laid_out(box: QDialogButtonBox) -> None:
    """Tab through `box`'s buttons left to right, as the platform's button order lays them out: Qt's order was Run
    edited call, Approve, Reject for Approve, Reject, Run edited call on screen."""
    shown = sorted(box.buttons(), key=lambda button: button.x())
    for before, after in itertools.pairwise(shown):
        QWidget.setTabOrder(before, after)


class ApprovalDialog(QDialog):
    """Shows the call as it will run; `decided(Decision)` once the person chooses."""

    decided = Signal(object)

    def __init__(self, call: CallAnalysis, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Approve {call.label}?")
        self.setModal(False)
        self._original = call.call
        tool = html.escape(str(call.tool_name))  # a name is text, never markup
        intro = QLabel(f"<b>{tool}</b> is about to run ({call.mode}). Its parameters resolve to:")
        intro.setTextFormat(Qt.TextFormat.RichText)
        self.resolved = resolved = QPlainTextEdit(json.dumps(call.resolved_call, indent=2, ensure_ascii=False),
                                                  readOnly=True)
        resolved.setFont(_mono())
        self.editor = QPlainTextEdit(json.dumps(call.call, indent=2, ensure_ascii=False))
        self.editor.setFont(_mono())
        CtrlTabTypesTab(self.editor)  # Tab goes on to the reason and the buttons; Ctrl+Tab types a tab
        self.reason = QLineEdit(placeholderText="Why it is rejected (goes into the error message)")
        self.error = QLabel()
        self.error.setStyleSheet(f"color: {MISSING_COLOUR}")
        buttons = QDialogButtonBox()
        # Alt and a letter answer from anywhere in the dialog, as the other questions that change something do; never
        # a main menu's letter (F, E, V, R, H): an Alt+E meant for the Edit menu as the dialog came up would decide
        self.approve_button = buttons.addButton("&Approve", QDialogButtonBox.ButtonRole.AcceptRole)
        self.edit_button = buttons.addButton("Run e&dited call", QDialogButtonBox.ButtonRole.ApplyRole)
        self.reject_button = buttons.addButton("Re&ject", QDialogButtonBox.ButtonRole.RejectRole)
        self.approve_button.clicked.connect(lambda: self._answer(Decision.approve()))
        self.reject_button.clicked.connect(self._reject)
        self.edit_button.clicked.connect(self._edit)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(resolved, 1)
        layout.addWidget(QLabel("The call as written (edit it to change what runs):"))
        layout.addWidget(self.editor, 2)
        layout.addWidget(self.reason)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.buttons = buttons
        self.resize(560, 520)
        self._done = False

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        tab_as_laid_out(self.buttons)
        # The keys start on what there is to read first, never on a button: the dialog can open while the person
        # is typing elsewhere, and an approval decides a side effect (a stray Space or Enter must answer nothing).
        self.resolved.setFocus(Qt.FocusReason.OtherFocusReason)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Enter presses a button only where the focus is on one: QDialog would press Approve from the resolved call
        # or the reason (the next button in the focus chain), a decision nobody took.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not isinstance(self.focusWidget(), QPushButton):
            event.accept()
            return
        super().keyPressEvent(event)

    def _answer(self, decision: Decision) -> None:
        if not self._done:
            self._done = True
            self.decided.emit(decision)
            self.close()

    def _reject(self) -> None:
        self._answer(Decision.reject(self.reason.text().strip() or "rejected in the debugger"))

    def _edit(self) -> None:
        value, problem = parse_json(self.editor.toPlainText())
        if problem is None and not isinstance(value, dict):
            problem = "a call must be a JSON object"
        if problem is not None:
            self.error.setText(problem)
            return
        self._answer(Decision.approve() if value == self._original else Decision.edit(value))

    def _closed(self) -> None:
        if not self._done:  # closing the window is a rejection, never a silent approval
            self._done = True
            self.decided.emit(Decision.reject("the approval dialog was closed"))

    def reject(self) -> None:  # Escape hides the dialog without a close event
        self._closed()
        super().reject()

    def closeEvent(self, event: Any) -> None:
        self._closed()
        super().closeEvent(event)


CHECKING = "Checking the value: it is written once checked."


class OutputDialog(QDialog):
    """Asks for the result of a latent call; `answered(value)` or `cancelled()`.

    With an `_output` schema the value is edited in the workbench's DataEditor (a form from the schema,
    validated off the GUI thread; Write waits for the validation of the latest edit). Without one, as JSON.
    """

    answered = Signal(object)
    cancelled = Signal()
    askModel = Signal()  # "Ask model": the model gives the result instead (shown when one is set up)

    def __init__(self, call: CallAnalysis, parent: QWidget | None = None, *, can_ask_model: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Output of {call.label}")
        self.setModal(False)
        rule = _output_schema(call)
        self.schema = rule
        places = call.branches[0] if call.branches else ()
        first = " and ".join(f"<code>{html.escape(str(r))}</code>" for r in places) or "nowhere"
        others = " (the first of its branches)" if len(call.branches) > 1 else ""
        tool = html.escape(str(call.tool_name))  # names and paths are text, never markup
        intro = QLabel(f"<b>{tool}</b> is latent and has no <code>_output</code>: type its result as JSON. "
                       f"It will be written to {first}{others}.")
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        self.editor = QPlainTextEdit(json.dumps(_example(rule), indent=2, ensure_ascii=False))
        self.editor.setFont(_mono())
        CtrlTabTypesTab(self.editor)  # Tab goes on to the buttons; Ctrl+Tab types a tab
        self.form: DataEditor | None = None
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {MISSING_COLOUR}")
        buttons = QDialogButtonBox()
        self.write_button = QPushButton("&Write output")
        buttons.addButton(self.write_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.ask_model_button = QPushButton("&Ask model")
        self.ask_model_button.setToolTip("Ask the model set up in Run → Models… for this result (validated)")
        buttons.addButton(self.ask_model_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.ask_model_button.setVisible(can_ask_model)  # after: adding a button to the box shows it
        self.ask_model_button.clicked.connect(self._ask_model)
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.write_button.clicked.connect(self._write)
        self.write_button.setToolTip("Ctrl+Enter, from the text too (where Enter starts a line)")
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, self._write_soon)
        self._write_checked = False  # Ctrl+Enter came while the latest edit was being validated
        cancel.clicked.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        if rule:
            self.form = DataEditor()
            self.form.value_edited.connect(lambda _value: self.write_button.setEnabled(False))
            self.form.validation_changed.connect(self._validated)
            self.write_button.setEnabled(False)  # until the first validation answers
            self.form.set_value(_example(rule), rule, check_at_once=True)
            layout.addWidget(self.form, 1)
        else:
            layout.addWidget(self.editor, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(520, 380)
        self._done = False

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # The keys where the result is typed: the form's first field, or the JSON text (the form opened with the focus
        # on its Form / JSON tab bar, and the value typed went nowhere).
        if self.form is not None:
            self.form.form.root.editor.focus_first()
        else:
            self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def set_text(self, text: str) -> None:
        """Type `text` as JSON (into the JSON tab when there is a form)."""
        if self.form is not None:
            self.form.tabs.setCurrentWidget(self.form.json)
            self.form.json.text.setPlainText(text)
        else:
            self.editor.setPlainText(text)

    def _write_soon(self) -> None:
        """Ctrl+Enter: Write now, or once the latest edit is validated (typed, then Ctrl+Enter at once, the key
        came while Write waited for the validation, and was lost)."""
        if self.write_button.isEnabled():
            self.write_button.click()
        elif self.form is not None:
            self._write_checked = True
            self.error.setText(CHECKING)

    def _validated(self, problems: list[Any]) -> None:
        self.write_button.setEnabled(True)
        self.error.setText("; ".join(_problem_text(p) for p in problems))
        if self._write_checked:
            self._write_checked = False
            self.write_button.click()

    def _write(self) -> None:
        if self.form is not None:
            value, problem = self.form.value(), None
            if self.form.json.problem is not None:
                line, column, message = self.form.json.problem
                problem = f"line {line}, column {column}: {message}"
            elif self.form.errors():
                problem = "; ".join(_problem_text(p) for p in self.form.errors())
        else:
            value, problem = parse_json(self.editor.toPlainText())
        if problem is not None:
            self.error.setText(problem)
            return
        self._done = True
        self.answered.emit(value)
        self.close()

    def _ask_model(self) -> None:
        self._done = True
        self.askModel.emit()
        self.close()

    def _closed(self) -> None:
        if not self._done:
            self._done = True
            self.cancelled.emit()

    def reject(self) -> None:  # Escape hides the dialog without a close event: the run must not wait on
        self._closed()
        super().reject()

    def closeEvent(self, event: Any) -> None:
        self._closed()
        super().closeEvent(event)


def _output_schema(call: CallAnalysis) -> dict[str, Any]:
    properties = call.tool.schema.get("properties") if call.tool is not None else None
    rule = properties.get("_output") if isinstance(properties, dict) else None
    return rule if isinstance(rule, dict) else {}


def _example(schema: dict[str, Any]) -> Any:
    """A starting value of the schema's type, so the person edits rather than types from nothing."""
    kind = schema.get("type")
    starts = {"object": {}, "array": [], "string": "", "number": 0, "integer": 0, "boolean": True, "null": None}
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if kind == "object" and isinstance(schema.get("properties"), dict):
        return {name: _example(sub) for name, sub in schema["properties"].items() if isinstance(sub, dict)}
    return starts.get(kind, "") if isinstance(kind, str) else ""


def _problem_text(problem: Any) -> str:
    """A DataEditor problem (path, message) as `$.a.b: message`."""
    path, message = problem
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) + f": {message}"
