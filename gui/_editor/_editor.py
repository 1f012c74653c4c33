"""`DataEditor`: the public widget, a "Form" tab and a "JSON" tab over one JSON value."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QVBoxLayout, QWidget


class DataEditor(QWidget):
    """Edits one JSON value through a schema-driven form or its raw JSON text."""

    value_edited = Signal(object)
    validation_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._value: Any = None
        self._schema: dict[str, Any] | None = None
        self._errors: list[tuple[tuple[Any, ...], str]] = []
        self._tabs = QTabWidget(self)
        self._form = QLabel("")
        self._json = QPlainTextEdit()
        self._tabs.addTab(self._form, "Form")
        self._tabs.addTab(self._json, "JSON")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._tabs)
        self._json.textChanged.connect(self._on_json_text)
        self._loading = False

    def set_value(self, value: Any, schema: dict[str, Any] | None) -> None:
        self._value, self._schema = value, schema
        self._loading = True
        self._json.setPlainText(json.dumps(value, indent=2, ensure_ascii=False))
        self._form.setText(json.dumps(value, ensure_ascii=False)[:200])
        self._loading = False

    def value(self) -> Any:
        return self._value

    def set_read_only(self, flag: bool) -> None:
        self._json.setReadOnly(flag)

    def errors(self) -> list[tuple[tuple[Any, ...], str]]:
        return list(self._errors)

    def _on_json_text(self) -> None:
        if self._loading:
            return
        try:
            value = json.loads(self._json.toPlainText())
        except ValueError:
            return
        if value != self._value:
            self._value = value
            self.value_edited.emit(value)
