"""`DataEditor`: the public widget, a "Form" tab and a "JSON" tab over one JSON value, validated as it changes."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from ._form import FormView
from ._json_editor import JsonEditor
from ._validation import Problem, Validator


class DataEditor(QWidget):
    """Edits one JSON value through a form generated from its JSON Schema, or as raw JSON text.

    `set_value` loads a value (emits nothing); each user edit, in either tab, emits `value_edited` with the
    whole new value and updates the other tab. Validation runs in the application's worker process after each
    change and emits `validation_changed`; problems show at their fields, the rest in a summary above the form.
    """

    value_edited = Signal(object)
    validation_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None, json_tab: bool = True) -> None:
        """`json_tab=False`: the form alone (the message editor has one JSON tab for the whole message)."""
        super().__init__(parent)
        self._value: Any = None
        self._schema: dict[str, Any] | None = None
        self._errors: list[Problem] = []
        self.form = FormView()
        # A child of the editor even without its tab: Qt deletes it with the editor. Left parentless, it outlived
        # the editor's window until the cycle collector freed it, and that crashed (contextdeck/_runtime.py).
        self.json = JsonEditor(self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.form, "Form")
        if json_tab:
            self.tabs.addTab(self.json, "JSON")
        else:
            self.json.hide()
        self.tabs.tabBar().setVisible(json_tab)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.validator = Validator(self)
        self.validator.finished.connect(self._validated)
        self.form.edited.connect(self._form_edited)
        self.json.edited.connect(self._json_edited)

    def set_value(self, value: Any, schema: dict[str, Any] | None, *, check_at_once: bool = False) -> None:
        """Shows `value` under `schema` (a form inferred from the value when None) in both tabs; emits nothing.
        Validated after the edits' debounce, or with `check_at_once` in the next turn (`Validator.request`)."""
        self._value, self._schema = value, schema
        self.form.set_value(value, schema)
        self.json.set_value(value)
        self.validator.request(value, schema, at_once=check_at_once)

    def prepare(self, value: Any, schema: dict[str, Any] | None, *, push_out: bool = False,
                needed: bool = False) -> bool:
        """Makes the form of `value`'s shape ahead of time (`FormView.prepare`); whether it made one."""
        return self.form.prepare(value, schema, push_out=push_out, needed=needed)

    def show_prepared(self) -> bool:
        """Shows once, out of sight, a form `prepare` made (`FormView.show_prepared`); whether there was one."""
        return self.form.show_prepared()

    def value(self) -> Any:
        """The current JSON value."""
        return self._value

    def set_read_only(self, flag: bool) -> None:
        self.form.set_read_only(flag)
        self.json.set_read_only(flag)

    def errors(self) -> list[Problem]:
        """The problems of the latest validation, as (path, message)."""
        return list(self._errors)

    def _form_edited(self) -> None:
        self._value = self.form.value()
        self.json.set_value(self._value)
        self._changed()

    def _json_edited(self, value: Any) -> None:
        self._value = value
        if self._schema is None:
            self.form.set_value(value, None)  # the inferred form follows the data's new shape
        else:
            self.form.reload(value)
        self._changed()

    def _changed(self) -> None:
        self.validator.request(self._value, self._schema)
        self.value_edited.emit(self._value)

    def _validated(self, problems: list[Problem]) -> None:
        self._errors = list(problems)
        self.form.show_problems(self._errors)
        self.validation_changed.emit(self.errors())

    def closeEvent(self, event: QCloseEvent) -> None:
        self.validator.shutdown()
        super().closeEvent(event)
