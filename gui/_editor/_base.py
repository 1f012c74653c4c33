"""The contract every field widget keeps, and the slot that frames a field and shows its errors."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QAbstractButton, QLabel, QPlainTextEdit, QSizePolicy, QVBoxLayout, QWidget

from ._field import Field

ERROR_COLOR = QColor("#e5534b")  # readable on light and dark palettes alike
# Removes the field or item around the focus, as its ✕ does: the ✕ buttons are no Tab stops (docs/editor.md).
# None of Qt's text-editing keys (Ctrl+Backspace and Ctrl+Delete delete a word, Shift+Delete cuts).
REMOVE_KEY = "Ctrl+Shift+Del"
# Move the array item around the focus up or down a place, as its ▲ ▼ do (no Tab stops either).
MOVE_UP_KEY, MOVE_DOWN_KEY = "Ctrl+Shift+Up", "Ctrl+Shift+Down"


class CtrlTabTypesTab(QObject):
    """In a text box of several lines, Tab goes on to the next control and Ctrl+Tab types a tab (docs/workbench.md:
    a text box that kept Tab for itself was a trap on the way through the editor)."""

    def __init__(self, text: QPlainTextEdit) -> None:
        super().__init__(text)
        self._text = text
        text.setTabChangesFocus(True)
        text.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._text and event.type() in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) and \
                isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Tab and \
                event.modifiers() == Qt.KeyboardModifier.ControlModifier:
            if event.type() == QEvent.Type.ShortcutOverride:
                event.accept()  # ours, not a shortcut's (the tab widget's next tab)
            elif not self._text.isReadOnly():
                self._text.insertPlainText("\t")
            return True
        return False


class FieldEditor(QWidget):
    """One JSON value edited through widgets. The value is the truth; widgets are a view of it.

    `set_value` never emits; a user's change emits `edited` once the new value is in place.
    Leaves keep the value they were given until the user edits them, so an untouched field is never rewritten
    (a date-time stays as it was written, 1.0 stays 1.0).
    """

    edited = Signal()
    container = False  # objects and arrays: drawn as a titled group rather than beside a label

    def __init__(self, field: Field, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = field
        self._value: Any = None
        self.key = ""  # the widget-table key that made this editor (set by the factory)

    def value(self) -> Any:
        return self._value

    def set_value(self, value: Any) -> None:
        self._value = value

    def set_read_only(self, flag: bool) -> None:
        """Read-only when the editor is, or when the schema says `readOnly`."""
        self.apply_read_only(flag or self.field.read_only)

    def apply_read_only(self, flag: bool) -> None:
        self.setEnabled(not flag)

    def focus_first(self) -> None:
        """Puts the keyboard focus where typing edits this value (leaves proxy it to their widget), as Tab would:
        a line's text selected, so that typing replaces it."""
        self.setFocus(Qt.FocusReason.TabFocusReason)

    def slot(self, key: Any) -> FieldSlot | None:
        """The slot of the child at `key` (a property name or an array index), None for leaves."""
        return None

    def set_title(self, title: str, tooltip: str) -> None:
        """Containers show their name as a group title; leaves are labelled by their parent."""

    def _user_changed(self, value: Any) -> None:
        if value != self._value or type(value) is not type(self._value):
            self._value = value
            self.edited.emit()


OUT_OF_SIGHT = 10_000  # pixels left of its parent: where `show_once` shows a widget


def show_once(widget: QWidget) -> None:
    """Shows hidden `widget` and hides it again at once, out of its parent's sight: nothing is painted or repainted,
    but its widgets are polished (under the application's style sheet), laid out and shown, which a widget's first
    `show` costs, so that its next one is cheap."""
    where = widget.pos()
    widget.move(where.x() - widget.width() - OUT_OF_SIGHT, where.y())
    widget.show()
    widget.hide()
    widget.move(where)


def discard(widget: QWidget) -> None:
    """Take `widget` out of the window now and delete it later.

    Hidden first: a widget added to a shown layout is shown by a queued call, and one replaced within the same
    turn of the event loop would otherwise be shown by it after losing its parent, as a window of its own.
    """
    widget.hide()
    widget.setParent(None)  # gone from the tree at once, not only when deleteLater runs
    widget.deleteLater()


class FieldSlot(QWidget):
    """Holds one editor (relaying its `edited`); when its path has validation errors, a red frame, the message
    below, and a tooltip."""

    edited = Signal()

    def __init__(self, editor: FieldEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        editor.edited.connect(self.edited)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(2, 2, 2, 2)
        self._layout.setSpacing(1)
        self._layout.addWidget(editor)
        self._message: QLabel | None = None  # made on the first error: most fields never need one
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self._base_tooltip = editor.toolTip()
        self.messages: tuple[str, ...] = ()
        # The ✕ that removes this field, set by its container; `REMOVE_KEY` clicks it. (The button, not its slot:
        # a function of the container's, kept here, would make a reference cycle of every form.)
        self.remove: QAbstractButton | None = None

    def replace_editor(self, editor: FieldEditor) -> None:
        """Swaps in a new editor (the value changed kind) and deletes the old one; errors are cleared until
        the next validation."""
        discard(self.swap_editor(editor))

    def swap_editor(self, editor: FieldEditor) -> FieldEditor:
        """Swaps in `editor` and returns the one it replaced, hidden and out of the layout (still a child of
        this slot, which relays only the new one's edits); errors are cleared until the next validation."""
        old = self.editor
        self._layout.replaceWidget(old, editor)
        old.edited.disconnect(self.edited)
        old.hide()
        self.editor = editor
        editor.edited.connect(self.edited)
        editor.show()
        self.messages = ()
        self._render()
        return old

    def set_tooltip(self, tip: str) -> None:
        """The field's own tooltip (its description); error messages are added below it."""
        self._base_tooltip = tip
        self._render()

    def show_errors(self, messages: tuple[str, ...]) -> None:
        if messages == self.messages:
            return
        self.messages = messages
        self._render()

    def _label(self) -> QLabel:
        if self._message is None:
            self._message = QLabel(self)
            self._message.setObjectName("fieldError")
            self._message.setWordWrap(True)
            self._message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            palette = self._message.palette()
            palette.setColor(self._message.foregroundRole(), ERROR_COLOR)
            self._message.setPalette(palette)
            self._layout.addWidget(self._message)
        return self._message

    def _render(self) -> None:
        messages = self.messages
        if messages or self._message is not None:
            self._label().setText("\n".join(messages))
            self._label().setVisible(bool(messages))
        tip = "\n".join(part for part in (self._base_tooltip, *(f"⚠ {m}" for m in messages)) if part)
        self.editor.setToolTip(tip)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.messages:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(ERROR_COLOR, 1.5))
        rect = QRectF(self.editor.geometry()).adjusted(-1.25, -1.25, 1.25, 1.25)
        painter.drawRoundedRect(rect, 3, 3)
