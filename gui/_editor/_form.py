"""The form tab: a summary of problems at the top, the generated form below, errors placed at their fields."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from ._base import ERROR_COLOR, MOVE_DOWN_KEY, MOVE_UP_KEY, REMOVE_KEY, FieldEditor, FieldSlot, show_once
from ._containers import ArrayEditor, refill
from ._field import Field, field_from_schema, field_from_value
from ._validation import Problem
from ._widgets import KIT, make_editor

# Forms of other kinds of value kept for when the user comes back to one (`FormView._take_root`).
SPARE_FORMS = 6
# The most fields a form made ahead of its selection may have (`FormView.prepare`): each field is widgets made and
# polished, so a bigger form made in one go would hold the event loop for more than a frame.
PREPARED_FIELDS = 12
# And a form made ahead takes at most this much GUI-thread CPU at the cost per field of the last one made ahead
# (before any, `FIELD_S`): a field's cost varies with the machine and its load, so a count alone can pass a frame.
PREPARED_S = 0.008
FIELD_S = 0.001


def count_fields(value: Any, limit: int = PREPARED_FIELDS + 1) -> int:
    """How many values `value` holds, itself and nested (counting stops past `limit`)."""
    count, stack = 0, [value]
    while stack and count < limit:
        item = stack.pop()
        count += 1
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def describe(path: tuple[Any, ...]) -> str:
    """A path as the user reads it: `customer.email`, `items[2].name`, `(root)`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "(root)"


class FormView(QScrollArea):
    """The generated form. `edited` fires after a user's change; `value()` is then the whole new value."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(6)
        self.summary = QLabel()
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        palette = self.summary.palette()
        palette.setColor(self.summary.foregroundRole(), ERROR_COLOR)
        tint = QColor(ERROR_COLOR)
        tint.setAlpha(36)  # a tint over the window colour reads on light and dark palettes
        palette.setColor(QPalette.ColorRole.Window, tint)
        self.summary.setPalette(palette)
        self.summary.setAutoFillBackground(True)
        self.summary.setMargin(6)
        self.summary.hide()
        self._layout.addWidget(self.summary)
        self.root: FieldSlot = FieldSlot(make_editor(Field(), None))
        self.root.edited.connect(self.edited)
        self._layout.addWidget(self.root)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.field = Field()
        self._field_s = FIELD_S  # GUI-thread CPU a field of the last form made ahead took (`prepare`)
        self._schema: Mapping[str, Any] | None = None  # the schema `field` was made from
        self._read_only = False
        self._problems: list[Problem] = []
        self._spares: list[FieldEditor] = []  # root editors of other forms, hidden in the root slot (`_take_root`)
        self._unshown: list[FieldEditor] = []  # spares made ahead and never shown yet (`show_prepared`)
        # One key each for the whole form, not one per field: a nested field's would be ambiguous with its item's.
        for key, work in ((REMOVE_KEY, self._remove_focused), (MOVE_UP_KEY, lambda: self._move_focused(-1)),
                          (MOVE_DOWN_KEY, lambda: self._move_focused(1))):
            QShortcut(QKeySequence(key), self, work).setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)

    def _focused_slots(self) -> Iterator[FieldSlot]:
        """The slots around the focus, innermost first."""
        widget = QApplication.focusWidget()
        while widget is not None and widget is not self:
            if isinstance(widget, FieldSlot):
                yield widget
            widget = widget.parentWidget()

    def _remove_focused(self) -> None:
        """Removes the innermost field or item with a ✕ that holds the focus, as that ✕ does."""
        for slot in self._focused_slots():
            if slot.remove is not None:
                slot.remove.click()
                return

    def _move_focused(self, step: int) -> None:
        """Moves the innermost array item that holds the focus a place up (-1) or down, as its ▲ or ▼ does."""
        for slot in self._focused_slots():
            array = slot.parentWidget()
            while array is not None and not isinstance(array, FieldEditor):
                array = array.parentWidget()
            if isinstance(array, ArrayEditor) and not array.read_only:
                index = next(index for index, item in array.slots.items() if item is slot)
                array.move_item(index, index + step)
                return

    def set_value(self, value: Any, schema: Any) -> None:
        """Rebuilds the form for `value` (inferring a form from it when there is no schema); emits nothing."""
        self.field = self._field_for(value, schema)
        self._schema = schema if isinstance(schema, Mapping) else None
        self._take_root(value)
        self.reload(value)

    def _field_for(self, value: Any, schema: Any) -> Field:
        # a schema that is not an object (a list, say) gets the inferred form; validation reports the schema
        if not isinstance(schema, Mapping):
            return field_from_value(value)
        if schema is self._schema or schema == self._schema:  # the same schema again: same descriptor
            return self.field
        return field_from_schema(schema)

    def prepare(self, value: Any, schema: Any, *, push_out: bool = False, needed: bool = False) -> bool:
        """Makes, ahead of its selection, the form a value of this shape would need, and puts it aside as a form
        shown before; emits nothing, shows nothing. Whether it made one: not when this form is shown or kept
        already, not when it has more than `PREPARED_FIELDS` fields or would take more than `PREPARED_S` (made in
        one go, it would hold the event loop too long), and not when `SPARE_FORMS` are kept unless `push_out` (then
        the least recently shown goes). `needed`: the selection shows it next (`MessageEditor`), so it is made
        whatever its size, pushing out another if need be.

        A form made the first time it is shown costs the selection's call its widgets made and polished under the
        application's style sheet, then shown and laid out for the first time; one shown before is only swapped
        in. Making it is one half of that work, `show_prepared` the other."""
        field = self._field_for(value, schema)
        key = KIT.key(field, value)
        if any(editor.field == field and editor.key == key for editor in (self.root.editor, *self._spares)):
            return False
        fields = count_fields(value)
        if not needed and (fields > PREPARED_FIELDS or fields * self._field_s > PREPARED_S or (
                len(self._spares) >= SPARE_FORMS and not push_out)):
            return False
        began = time.thread_time()
        made = KIT.make(field, value)
        if fields <= PREPARED_FIELDS:  # (counted exactly)
            self._field_s = (time.thread_time() - began) / fields
        made.setParent(self.root)  # hidden: a child is shown only when asked
        self._put_aside(made)
        self._unshown.append(made)
        return True

    def show_prepared(self) -> bool:
        """Shows once, out of sight, a form `prepare` made (polished, laid out and shown now, not in the selection
        that takes it): the second half of making a form ahead, in a turn of its own. Whether there was one."""
        while self._unshown:
            made = self._unshown.pop(0)
            if made in self._spares:  # not taken by a selection, nor pushed out, meanwhile
                show_once(made)
                return True
        return False

    def _put_aside(self, editor: FieldEditor) -> None:
        self._spares.append(editor)
        if len(self._spares) > SPARE_FORMS:
            # Hidden and out of the layout already: `discard`'s reparenting would restyle every widget of the
            # form, for nothing.
            self._spares.pop(0).deleteLater()

    def _take_root(self, value: Any) -> None:
        """A value of another form (the user selected another kind of message): the root's editor is put
        aside, and one made before for this field and kind of value is taken back, when there is one.

        Deleting a form's widgets costs the next turn of the event loop a visible pause at every such selection,
        and going back and forth between a few kinds of message is what a user does. At most `SPARE_FORMS` are
        kept; the least recently shown is deleted when another is put aside.
        """
        key = KIT.key(self.field, value)
        current = self.root.editor
        if current.field == self.field and current.key == key:
            return
        spare = next((editor for editor in self._spares if editor.field == self.field and editor.key == key), None)
        if spare is None:
            spare = KIT.make(self.field, value)
        else:
            self._spares.remove(spare)
        aside = self.root.swap_editor(spare)
        self._problems = []  # another form's problems: the next validation tells this one's
        for slot in aside.findChildren(FieldSlot):
            slot.show_errors(())
        self._put_aside(aside)

    def reload(self, value: Any) -> None:
        """Shows a new value under the same schema, in place where its shape allows; emits nothing."""
        refill(KIT, self.root, self.field, value, self._read_only)
        self.show_problems(self._problems)

    def value(self) -> Any:
        return self.root.editor.value()

    def set_read_only(self, flag: bool) -> None:
        self._read_only = flag
        self.root.editor.set_read_only(flag)

    def locate(self, path: tuple[Any, ...]) -> FieldSlot | None:
        """The slot of the field at `path`, or None when the form has no widget there."""
        slot: FieldSlot | None = self.root
        for step in path:
            slot = slot.editor.slot(step) if slot is not None else None
        return slot

    def show_problems(self, problems: list[Problem]) -> None:
        """Each problem at its field; problems at the root or at paths without a widget in the summary."""
        self._problems = list(problems)
        placed: dict[int, tuple[FieldSlot, list[str]]] = {}
        loose: list[str] = []
        for path, message in problems:
            slot = self.locate(path)
            if slot is None or (slot is self.root and slot.editor.container):
                loose.append(f"{describe(path)}: {message}" if path else message)
            else:
                placed.setdefault(id(slot), (slot, []))[1].append(message)
        for slot in (self.root, *self.root.editor.findChildren(FieldSlot)):  # not the spare forms
            entry = placed.get(id(slot))
            slot.show_errors(tuple(entry[1]) if entry else ())
        self.summary.setText("\n".join(f"⚠ {line}" for line in loose))
        self.summary.setVisible(bool(loose))
