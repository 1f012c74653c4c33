"""Field widgets for single values: strings, numbers, booleans, enums, constants, date-times and raw JSON."""

from __future__ import annotations

import json
import math
from typing import Any

from PySide6.QtCore import QDateTime, QEvent, QObject, QSignalBlocker, Qt, QTimeZone
from PySide6.QtGui import QFontDatabase, QPalette, QValidator
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

from ._base import ERROR_COLOR, FieldEditor
from ._field import MISSING, Field, bounds_text


def dumps(value: Any) -> str:
    """Compact one-line JSON, as shown in raw fields and combo boxes."""
    return json.dumps(value, ensure_ascii=False)


class _WheelGuard(QObject):
    """Scrolling the form over a spin box, combo box or date editor scrolls the form, not the value,
    unless that widget has focus."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget) and not watched.hasFocus():
            event.ignore()
            return True
        return False


_WHEEL_GUARD = _WheelGuard()


def _guard_wheel(widget: QWidget) -> None:
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    widget.installEventFilter(_WHEEL_GUARD)


def _wrap(editor: FieldEditor, inner: QWidget) -> QHBoxLayout:
    layout = QHBoxLayout(editor)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(inner)
    editor.setFocusProxy(inner)
    return layout


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
        if self.line.text() != value:  # an echo of the user's own typing keeps the cursor where it is
            with QSignalBlocker(self.line):
                self.line.setText(value)

    def apply_read_only(self, flag: bool) -> None:
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
        if self.text.toPlainText() != value:
            with QSignalBlocker(self.text):
                self.text.setPlainText(value)

    def apply_read_only(self, flag: bool) -> None:
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

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        if self.parse(text) is not None:
            return QValidator.State.Acceptable, text, pos
        allowed = set("0123456789+-") | (set() if self.integer else set(".eE"))
        ok = all(ch in allowed for ch in text.strip())
        return (QValidator.State.Intermediate if ok else QValidator.State.Invalid), text, pos

    def display(self, number: int | float) -> None:
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
        self.display(number)
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
        _guard_wheel(self.box)
        self.box.lineEdit().textEdited.connect(self._typed)
        self.box.editingFinished.connect(self._finished)
        bounds = bounds_text(field)
        if bounds:
            self.box.lineEdit().setPlaceholderText(bounds)

    def _typed(self, text: str) -> None:
        number = self.box.parse(text)
        if number is not None:
            self.box.number = number
            self._user_changed(number)

    def _finished(self) -> None:
        """Leaving the box with text that is not a number shows the value again (which never changed)."""
        if self.box.parse(self.box.lineEdit().text()) is None:
            with QSignalBlocker(self.box.lineEdit()):
                self.box.display(self._value)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        shown = self.box.parse(self.box.lineEdit().text())
        if shown != value or type(shown) is not type(value):
            with QSignalBlocker(self.box.lineEdit()):
                self.box.display(value)
        self.box.number = value

    def apply_read_only(self, flag: bool) -> None:
        self.box.setReadOnly(flag)


ENUM_CHARACTERS = 32  # the widest an enum's box grows, in characters; its list shows every item whole


class EnumEditor(FieldEditor):
    """A combo box of the `enum` values. A value outside the enum is kept and listed, marked, not replaced."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.combo = QComboBox()
        self._choices = list(field.enum or ())
        for choice in self._choices:
            self._add(choice if isinstance(choice, str) else dumps(choice))
        self._fit()
        _wrap(self, self.combo).addStretch(1)
        _guard_wheel(self.combo)
        self.combo.activated.connect(lambda i: self._user_changed(self._choices[i]))

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.combo):
            if self._index(value) < 0:
                self._choices.append(value)
                self._add(f"{dumps(value)} (not allowed)")
                self._fit()
            self.combo.setCurrentIndex(self._index(value))

    def _add(self, text: str) -> None:
        self.combo.addItem(text)
        self.combo.setItemData(self.combo.count() - 1, text, Qt.ItemDataRole.ToolTipRole)

    def _fit(self) -> None:
        """The box as wide as its longest item up to `ENUM_CHARACTERS` (a longer one is elided in the box: it made
        the whole form scroll sideways, every field as wide as it); its list shows each item whole."""
        if not self.combo.count():
            return
        metrics = self.combo.fontMetrics()
        widest = max(metrics.horizontalAdvance(self.combo.itemText(i)) for i in range(self.combo.count()))
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        # Qt counts the length in widths of "x"
        self.combo.setMinimumContentsLength(min(math.ceil(widest / metrics.horizontalAdvance("x")), ENUM_CHARACTERS))
        view = self.combo.view()
        view.setTextElideMode(Qt.TextElideMode.ElideNone)
        # the text, the item's margins and a scroll bar's room (the view's own hint counts only the rows on screen)
        view.setMinimumWidth(widest + 2 * view.frameWidth() + 40)

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
        self.line.setToolTip("const: fixed by the schema")
        _wrap(self, self.line)
        self._blend()

    def _blend(self) -> None:
        """The window's colour behind the text: plainly not a box to type in, in light and dark themes."""
        palette = self.line.palette()
        palette.setColor(QPalette.ColorRole.Base, self.palette().color(QPalette.ColorRole.Window))
        self.line.setPalette(palette)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._blend()
        super().changeEvent(event)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        self.line.setText(value if isinstance(value, str) else dumps(value))

    def apply_read_only(self, flag: bool) -> None:
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
        if hasattr(self.edit, "setTimeZone"):  # Qt 6.7+
            self.edit.setTimeZone(QTimeZone.utc())
        else:
            self.edit.setTimeSpec(Qt.TimeSpec.UTC)
        self.edit.setDisplayFormat("yyyy-MM-dd HH:mm:ss 'UTC'")
        self.edit.setCalendarPopup(True)
        _wrap(self, self.edit).addStretch(1)
        _guard_wheel(self.edit)
        self.edit.dateTimeChanged.connect(self._changed)

    def _changed(self, moment: QDateTime) -> None:
        self._user_changed(moment.toUTC().toString(Qt.DateFormat.ISODate))

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        moment = parse_date_time(value)
        if moment is not None:
            with QSignalBlocker(self.edit):
                self.edit.setDateTime(moment.toUTC())

    def apply_read_only(self, flag: bool) -> None:
        self.edit.setReadOnly(flag)


class RawEditor(FieldEditor):
    """Any JSON value as one line of JSON text: for values the schema does not describe or that do not fit it."""

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.line = QLineEdit()
        self.line.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.line.setPlaceholderText("JSON")
        _wrap(self, self.line)
        self.line.textEdited.connect(self._typed)
        self.problem = ""

    def _typed(self, text: str) -> None:
        try:
            value = json.loads(text)
        except ValueError as error:
            self._show_problem(f"not JSON yet ({error}): the value is unchanged")
            return
        self._show_problem("")
        self._user_changed(value)

    def _show_problem(self, problem: str) -> None:
        self.problem = problem
        self.line.setToolTip(problem)
        palette = self.line.palette()
        palette.setColor(
            QPalette.ColorRole.Text, ERROR_COLOR if problem else self.palette().color(QPalette.ColorRole.Text)
        )
        self.line.setPalette(palette)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        try:
            shown = json.loads(self.line.text()) if self.line.text() else MISSING
        except ValueError:
            shown = MISSING
        if shown != value or dumps(shown) != dumps(value):
            self._show_problem("")
            with QSignalBlocker(self.line):
                self.line.setText(dumps(value))
                self.line.setCursorPosition(0)

    def apply_read_only(self, flag: bool) -> None:
        self.line.setReadOnly(flag)
