"""The raw JSON tab: highlighted text, parse errors shown at line and column, the last valid value kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from PySide6.QtCore import QEvent, QRegularExpression, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QPalette,
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from ._base import ERROR_COLOR, CtrlTabTypesTab

# One rule per JSON token kind; keys before strings so a key keeps its colour. (light, dark) colours.
_RULES: Final = (
    ("number", r"-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b", ("#005cc5", "#79b8ff")),
    ("literal", r"\b(?:true|false|null)\b", ("#d73a49", "#f97583")),
    ("string", r'"(?:[^"\\]|\\.)*"', ("#22863a", "#85e89d")),
    ("key", r'"(?:[^"\\]|\\.)*"(?=\s*:)', ("#6f42c1", "#b392f0")),
)


_UNSET: Final = object()


def _same(a: Any, b: Any) -> bool:
    """The same JSON value (`1` is not `true`, `1.0` is not `1`, key order counts)."""
    return a is not _UNSET and json.dumps(a) == json.dumps(b)


def _dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


class JsonHighlighter(QSyntaxHighlighter):
    """Colours JSON tokens, with colours picked for the palette's light or dark base."""

    def __init__(self, document: QTextDocument, dark: bool) -> None:
        super().__init__(document)
        self._rules: list[tuple[QRegularExpression, QTextCharFormat]] = []
        self.dark: bool | None = None
        self.set_dark(dark)

    def set_dark(self, dark: bool) -> None:
        """Picks the colours for a dark (or light) background and recolours the text."""
        if dark == self.dark:
            return
        self.dark = dark
        self._rules = []
        for _name, pattern, (light, night) in _RULES:
            form = QTextCharFormat()
            form.setForeground(QColor(night if dark else light))
            self._rules.append((QRegularExpression(pattern), form))
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        for pattern, form in self._rules:
            matches = pattern.globalMatch(text)
            while matches.hasNext():
                match = matches.next()
                self.setFormat(match.capturedStart(), match.capturedLength(), form)


class JsonEditor(QWidget):
    """JSON text; `edited` carries each new valid value the user types. Invalid text is reported, not applied.

    `check` (optional) says why a parsed value is refused (a message without a `type`, say), or None: a
    refused value is reported under the text like a parse error and not applied either.
    """

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None, check: Callable[[Any], str | None] | None = None) -> None:
        super().__init__(parent)
        self._check = check
        self.text = QPlainTextEdit()
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setTabStopDistance(self.text.fontMetrics().horizontalAdvance(" ") * 2)
        CtrlTabTypesTab(self.text)  # Tab goes on to the next control; Ctrl+Tab types a tab
        self.highlighter = JsonHighlighter(self.text.document(), _dark(self.palette()))
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        palette = self.status.palette()
        palette.setColor(self.status.foregroundRole(), ERROR_COLOR)
        self.status.setPalette(palette)
        self.status.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.text)
        layout.addWidget(self.status)
        self.problem: tuple[int, int, str] | None = None  # (line, column, message), 1-based; 0, 0: refused
        self._value: Any = None
        self._loading = False
        self._stale = False
        self._text = ""  # the text as last written or typed: a change of colours alone is no edit
        self.text.textChanged.connect(self._changed)

    def set_value(self, value: Any) -> None:
        """Shows `value` as indented JSON; emits nothing. Text that already says `value` is left alone.

        While the tab is hidden the text is only marked stale (formatting and highlighting a big value
        costs more than building its form) and written when the tab is shown."""
        self._value = value
        if not self.isVisible():
            self._stale = True
            return
        self._render()

    def showEvent(self, event: QShowEvent) -> None:
        if self._stale:
            self._render()
        super().showEvent(event)

    def _render(self) -> None:
        self._stale = False
        value = self._value
        if self.problem is None and _same(self._parsed(), value):
            return  # an echo of the user's own edit: the cursor stays where it is
        self._loading = True
        try:
            self._text = json.dumps(value, indent=2, ensure_ascii=False)
            self.text.setPlainText(self._text)
        finally:
            self._loading = False
        self._show_problem(None)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.set_dark(_dark(self.palette()))
        super().changeEvent(event)

    def value(self) -> Any:
        """The last valid value (the text may be mid-edit and invalid)."""
        return self._value

    def set_read_only(self, flag: bool) -> None:
        self.text.setReadOnly(flag)

    def _parsed(self) -> Any:
        try:
            return json.loads(self.text.toPlainText())
        except ValueError:
            return _UNSET

    def _changed(self) -> None:
        # Only typing is an edit. `textChanged` also comes when the highlighter recolours the text (a theme
        # switch), and a stale text is an older value's: written back, it would overwrite the value shown now.
        text = self.text.toPlainText()
        if self._loading or self._stale or text == self._text:
            return
        self._text = text
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            self._show_problem((error.lineno, error.colno, error.msg))
            return
        refusal = self._check(value) if self._check is not None else None
        if refusal is not None:
            self._show_problem(None)
            self.problem = (0, 0, refusal)
            self.status.setText(f"{refusal} — the last valid value is kept")
            self.status.show()
            return
        self._show_problem(None)
        if not _same(value, self._value):
            self._value = value
            self.edited.emit(value)

    def _show_problem(self, problem: tuple[int, int, str] | None) -> None:
        self.problem = problem
        if problem is None:
            self.status.hide()
            self.text.setExtraSelections([])
            return
        line, column, message = problem
        self.status.setText(f"Line {line}, column {column}: {message} — the last valid value is kept")
        self.status.show()
        mark = QTextEdit.ExtraSelection()
        mark.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        mark.format.setUnderlineColor(ERROR_COLOR)
        mark.format.setBackground(QColor(ERROR_COLOR.red(), ERROR_COLOR.green(), ERROR_COLOR.blue(), 60))
        block = self.text.document().findBlockByNumber(line - 1)
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.Right, n=max(0, min(column - 1, block.length() - 1)))
        cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor)
        mark.cursor = cursor
        self.text.setExtraSelections([mark])
