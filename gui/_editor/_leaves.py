"""Field widgets for single values: strings, numbers, booleans, enums, constants, date-times and raw JSON."""

from __future__ import annotations

import json
import math
from typing import Any

from PySide6.QtCore import QDateTime, QSignalBlocker, Qt, QTimeZone
from PySide6.QtGui import QFontDatabase, QValidator
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from ._base import FieldEditor
from ._field import Field


def dumps(value: Any) -> str:
    """Compact one-line JSON, as shown in raw fields and combo boxes."""
    return json.dumps(value, ensure_ascii=False)


def _wrap(editor: FieldEditor, inner: QWidget) -> None:
    layout = QHBoxLayout(editor)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(inner)
    editor.setFocusProxy(inner)


class StringEditor(FieldEditor):
    """A one-line string. `pattern` and lengths are checked by validation, never by truncating the text."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.line = QLineEdit()
        if field.format:
            self.line.setPlaceholderText(field.format)
        _wrap(self, self.line)
        self.line.textEdited.connect(self._user_changed)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.line):
            self.line.setText(value)

    def set_read_only(self, flag: bool) -> None:
        self.line.setReadOnly(flag)


class TextEditor(FieldEditor):
    """A string with line breaks, in a small multi-line box."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.text = QPlainTextEdit()
        self.text.setTabChangesFocus(True)
        self.text.setFixedHeight(self.text.fontMetrics().lineSpacing() * 4 + 12)
        _wrap(self, self.text)
        self.text.textChanged.connect(lambda: self._user_changed(self.text.toPlainText()))

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.text):
            self.text.setPlainText(value)

    def set_read_only(self, flag: bool) -> None:
        self.text.setReadOnly(flag)


class BooleanEditor(FieldEditor):
    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.check = QCheckBox()
        _wrap(self, self.check)
        self.check.toggled.connect(self._user_changed)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.check):
            self.check.setChecked(bool(value))


class NumberBox(QAbstractSpinBox):
    """A spin box over Python numbers: any size of integer, floats shown as written, bounds honoured by the
    arrows but never by clamping what is typed or loaded (an out-of-range value stays and is reported)."""

    def __init__(self, field: Field, integer: bool) -> None:
        super().__init__()
        self.field, self.integer = field, integer
        self.number: int | float = 0
        self.setKeyboardTracking(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    def parse(self, text: str) -> int | float | None:
        text = text.strip()
        try:
            return int(text)
        except ValueError:
            pass
        if self.integer:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None

    def validate(self, text: str, pos: int) -> QValidator.State:
        if self.parse(text) is not None:
            return QValidator.State.Acceptable
        allowed = set("0123456789+-") | (set() if self.integer else set(".eE"))
        ok = all(ch in allowed for ch in text.strip())
        return QValidator.State.Intermediate if ok else QValidator.State.Invalid

    def show(self, number: int | float) -> None:
        self.number = number
        self.lineEdit().setText(repr(number) if isinstance(number, float) else str(number))

    def _step(self) -> int | float:
        step = self.field.multiple_of or 1
        return int(step) if self.integer and float(step).is_integer() else step

    def _low(self) -> float:
        low = self.field.minimum if self.field.minimum is not None else -math.inf
        if self.field.exclusive_minimum is not None:
            low = max(low, self.field.exclusive_minimum + (1 if self.integer else 0))
        return low

    def _high(self) -> float:
        high = self.field.maximum if self.field.maximum is not None else math.inf
        if self.field.exclusive_maximum is not None:
            high = min(high, self.field.exclusive_maximum - (1 if self.integer else 0))
        return high

    def stepBy(self, steps: int) -> None:
        number = self.number + steps * self._step()
        number = min(max(number, self._low()), self._high())
        keep_int = isinstance(self.number, int) and isinstance(self._step(), int) and float(number).is_integer()
        if self.integer or keep_int:
            number = int(number)
        self.show(number)
        self.lineEdit().textEdited.emit(self.lineEdit().text())

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:
        flags = QAbstractSpinBox.StepEnabledFlag.StepNone
        if self.isReadOnly():
            return flags
        if self.number < self._high():
            flags |= QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if self.number > self._low():
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags


class NumberEditor(FieldEditor):
    """`number` and `integer`; the bounds are in the tooltip and limit the arrows."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.box = NumberBox(field, integer="integer" in field.type and "number" not in field.type)
        _wrap(self, self.box)
        self.box.lineEdit().textEdited.connect(self._typed)
        bounds = bounds_text(field)
        if bounds:
            self.box.lineEdit().setPlaceholderText(bounds)

    def _typed(self, text: str) -> None:
        number = self.box.parse(text)
        if number is not None:
            self.box.number = number
            self._user_changed(number)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.box.lineEdit()):
            self.box.show(value)

    def set_read_only(self, flag: bool) -> None:
        self.box.setReadOnly(flag)


def bounds_text(field: Field) -> str:
    """The numeric bounds as a short phrase, e.g. `≥ 0, < 100`."""
    parts = []
    if field.minimum is not None:
        parts.append(f"≥ {field.minimum:g}")
    if field.exclusive_minimum is not None:
        parts.append(f"> {field.exclusive_minimum:g}")
    if field.maximum is not None:
        parts.append(f"≤ {field.maximum:g}")
    if field.exclusive_maximum is not None:
        parts.append(f"< {field.exclusive_maximum:g}")
    if field.multiple_of is not None:
        parts.append(f"multiple of {field.multiple_of:g}")
    return ", ".join(parts)


class EnumEditor(FieldEditor):
    """A combo box of the `enum` values. A value outside the enum is kept and listed, marked, not replaced."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.combo = QComboBox()
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._choices = list(field.enum or ())
        for choice in self._choices:
            self.combo.addItem(choice if isinstance(choice, str) else dumps(choice))
        _wrap(self, self.combo)
        self.layout().addStretch(1)
        self.combo.activated.connect(lambda i: self._user_changed(self._choices[i]))

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.combo):
            if self._index(value) < 0:
                self._choices.append(value)
                self.combo.addItem(f"{dumps(value)} (not allowed)")
            self.combo.setCurrentIndex(self._index(value))

    def _index(self, value: Any) -> int:
        for i, choice in enumerate(self._choices):
            if choice == value and type(choice) is type(value):
                return i
        return -1


class ConstEditor(FieldEditor):
    """A `const`: shown, never editable."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.line = QLineEdit()
        self.line.setReadOnly(True)
        self.line.setFrame(False)
        _wrap(self, self.line)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        self.line.setText(value if isinstance(value, str) else dumps(value))

    def set_read_only(self, flag: bool) -> None:
        pass


def parse_date_time(text: str) -> QDateTime | None:
    """An ISO 8601 date-time with an offset or `Z`, else None."""
    moment = QDateTime.fromString(text, Qt.DateFormat.ISODateWithMs)
    return moment if moment.isValid() and len(text) > 10 else None


class DateTimeEditor(FieldEditor):
    """`format: date-time`, edited in UTC and written back as ISO 8601 with `Z`."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.edit = QDateTimeEdit()
        self.edit.setTimeZone(QTimeZone.utc())
        self.edit.setDisplayFormat("yyyy-MM-dd HH:mm:ss 'UTC'")
        self.edit.setCalendarPopup(True)
        _wrap(self, self.edit)
        self.layout().addStretch(1)
        self.edit.dateTimeChanged.connect(self._changed)

    def _changed(self, moment: QDateTime) -> None:
        self._user_changed(moment.toUTC().toString(Qt.DateFormat.ISODate))

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        moment = parse_date_time(value)
        if moment is not None:
            with QSignalBlocker(self.edit):
                self.edit.setDateTime(moment.toUTC())

    def set_read_only(self, flag: bool) -> None:
        self.edit.setReadOnly(flag)


class RawEditor(FieldEditor):
    """Any JSON value as one line of JSON text: for values the schema does not describe or that do not fit it."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.line = QLineEdit()
        self.line.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        _wrap(self, self.line)
        self.line.textEdited.connect(self._typed)
        self.problem = ""

    def _typed(self, text: str) -> None:
        try:
            value = json.loads(text)
        except ValueError as error:
            self.problem = f"not JSON: {error}"
            self.line.setToolTip(self.problem)
            return
        self.problem = ""
        self.line.setToolTip("")
        self._user_changed(value)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.line):
            self.line.setText(dumps(value))
            self.line.setCursorPosition(0)

    def set_read_only(self, flag: bool) -> None:
        self.line.setReadOnly(flag)
