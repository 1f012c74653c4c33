"""Field widgets that hold other fields: objects (titled groups) and arrays (add, remove, reorder).

A new value of the same shape updates the widgets in place (focus and cursor survive an echo of the user's
own edit); a value of another shape rebuilds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .._glyphs import glyph_button
from ._base import MOVE_DOWN_KEY, MOVE_UP_KEY, REMOVE_KEY, FieldEditor, FieldSlot, discard
from ._field import Field, describe_field, field_from_value


@dataclass(frozen=True)
class Kit:
    """What containers need from the widget table (passed in, so the table can import the containers)."""

    make: Callable[[Field, Any], FieldEditor]  # the editor for a field and a value, filled
    key: Callable[[Field, Any], str]  # the table key `make` would pick
    default: Callable[[Field], Any]  # the value a new field starts with
    pick: Callable[[Field, Any], int]  # the branch of a choice that a value fits best


def refill(kit: Kit, slot: FieldSlot, field: Field, value: Any, read_only: bool) -> None:
    """Shows `value` in `slot`: in place when its editor is of the right kind, else in a new editor."""
    if slot.editor.field == field and slot.editor.key == kit.key(field, value):
        slot.editor.set_value(value)
    else:
        slot.replace_editor(kit.make(field, value))
    slot.editor.set_read_only(read_only)


@cache
def _row_height() -> int:
    return QLineEdit().sizeHint().height() + 4  # + the slot's margins


def _button(text: str, tip: str, slot: Callable[[], None]) -> QToolButton:
    button = glyph_button(text, tip[:1].upper() + tip[1:])
    button.setAutoRaise(True)
    button.clicked.connect(slot)
    return button


def _keyed(button: QToolButton, key: str) -> QToolButton:
    """`button`, no Tab stop (a stop per ✕ ▲ ▼ tripled the keys through a form), its tooltip naming the key that
    does its work from within its field (`FormView`), as the menus name keys."""
    named = QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText)
    button.setToolTip(f"{button.toolTip()} ({named} in its field)")
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return button


class _Group(FieldEditor):
    """A titled group box with a grid inside: [label | slot | buttons] per row."""

    container = True

    def __init__(self, field: Field, kit: Kit, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.kit = kit
        self.box = QGroupBox()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.box)
        self.grid = QGridLayout(self.box)
        self.grid.setContentsMargins(8, 6, 4, 6)
        self.grid.setHorizontalSpacing(8)
        self.grid.setVerticalSpacing(2)
        self.grid.setColumnStretch(1, 1)
        self.slots: dict[Any, FieldSlot] = {}
        self.read_only = False
        self._rows: list[QWidget] = []
        self._roles: dict[QWidget, str] = {}  # "edit": shown only when editable; "view": only when read-only

    def set_title(self, title: str, tooltip: str) -> None:
        self.box.setTitle(title)
        self.box.setToolTip(tooltip)

    def slot(self, key: Any) -> FieldSlot | None:
        return self.slots.get(key)

    def focus_first(self) -> None:
        for slot in self.slots.values():
            slot.editor.focus_first()
            return

    def apply_read_only(self, flag: bool) -> None:
        """Hides the add, remove and move buttons rather than rebuilding: the main window switches this often."""
        if flag == self.read_only:
            return
        self.read_only = flag
        for slot in self.slots.values():
            slot.editor.set_read_only(flag)
        for widget, role in self._roles.items():
            widget.setVisible((role == "view") == flag)

    def _rebuild(self) -> None:
        raise NotImplementedError

    def _clear(self) -> None:
        for widget in self._rows:
            self.grid.removeWidget(widget)
            discard(widget)
        self._rows.clear()
        self._roles.clear()
        self.slots.clear()

    def _add(
        self, widget: QWidget, row: int, col: int, span: int = 1, align: Qt.AlignmentFlag | None = None, role: str = ""
    ) -> None:
        self._rows.append(widget)
        if align is None:
            self.grid.addWidget(widget, row, col, 1, span)
        else:
            self.grid.addWidget(widget, row, col, 1, span, align)
        if role:
            self._roles[widget] = role
            if (role == "view") != self.read_only:
                widget.hide()

    def _remove_button(self, key: Any, what: str, remove: Callable[[], None]) -> QToolButton:
        """The ✕ of the field at `key`, which `remove` takes out (`REMOVE_KEY` in the field: `_keyed`)."""
        def removing() -> None:
            if self.read_only:
                return
            focus = QApplication.focusWidget()
            inside = focus is not None and self.slots[key].isAncestorOf(focus)
            place = list(self.slots).index(key)
            remove()
            if inside:  # its widgets are gone: the focus goes on to the next field, never back to Qt's chain
                self._focus_near(place)

        button = _keyed(_button("✕", f"remove {what}", removing), REMOVE_KEY)
        self.slots[key].remove = button
        return button

    def _focus_near(self, place: int) -> None:
        """Puts the focus on the field now at `place` (the last one, past the end), else the group's first control."""
        slots = list(self.slots.values())
        if slots:
            slots[min(place, len(slots) - 1)].editor.focus_first()
            return
        tab = Qt.FocusPolicy.TabFocus
        stops = (w for row in self._rows for w in (row, *row.findChildren(QWidget)) if w.focusPolicy() & tab == tab)
        next((w for w in stops if not w.isHidden()), self).setFocus()

    def _place(self, row: int, label: str, tip: str, slot: FieldSlot, key: Any) -> None:
        """A leaf sits right of its label; a container spans the row under its own title."""
        self.slots[key] = slot
        slot.editor.set_read_only(self.read_only)
        if tip:
            slot.set_tooltip(tip)
        if slot.editor.container:
            slot.editor.set_title(label, tip)
            self._add(slot, row, 0, 2)
            return
        name = QLabel(label)
        name.setToolTip(tip)
        name.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        # as tall as one line of widgets, so the label sits level with the first line, not with an error below
        name.setMinimumHeight(_row_height())
        name.setBuddy(slot.editor)
        self._add(name, row, 0, align=Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignRight)
        self._add(slot, row, 1)


class ObjectEditor(_Group):
    """An object: one row per schema property (in schema order, a `*` on the required ones), then the keys
    the schema does not describe, as raw JSON. Absent properties can be added, optional ones removed."""

    def set_value(self, value: Any) -> None:
        value = dict(value)
        same_keys = self._value is not None and list(value) == list(self._value)
        super().set_value(value)
        if not same_keys:
            self._rebuild()
            return
        for name, slot in self.slots.items():
            refill(self.kit, slot, self._field_of(name), value[name], self.read_only)

    def _rebuild(self) -> None:
        self._clear()
        row = 0
        listed = {name for name, _ in self.field.properties}
        for name, _sub in self.field.properties:
            row = self._row(row, name)
        for name in self._value:
            if name not in listed:
                row = self._row(row, name)
        field = self.field
        free_form = not field.properties or field.additional_properties is not None or field.inferred
        if (free_form and not field.closed) or field.pattern_properties:  # keys its patterns match may be added
            self._key_row(row)

    def _key_row(self, row: int) -> None:
        """A free-form object takes new keys: a name box and an add button."""
        strip = QWidget()
        layout = QHBoxLayout(strip)
        layout.setContentsMargins(2, 0, 0, 0)
        name = QLineEdit()
        name.setObjectName("new-key")
        name.setPlaceholderText("new key")
        name.setMaximumWidth(160)
        add = _button("+ add key", "add a property with this name", lambda: self._new_key(name))
        add.setObjectName("add-key")
        name.returnPressed.connect(add.click)
        layout.addWidget(name)
        layout.addWidget(add)
        layout.addStretch(1)
        self._add(strip, row, 1, role="edit")

    def _new_key(self, box: QLineEdit) -> None:
        name = box.text().strip()
        if not name or name in self._value:
            box.selectAll()  # nothing to add, or already there: a key is never overwritten
            return
        self._set_key(name, self.kit.default(self._field_of_new(name)))

    def _field_of_new(self, name: str) -> Field:
        return self.field.property_field(name) or Field()

    def _field_of(self, name: str) -> Field:
        if self.field.inferred and name not in dict(self.field.properties):
            return field_from_value(self._value[name])
        return self.field.property_field(name) or Field(description="not described by the schema")

    def _row(self, row: int, name: str) -> int:
        sub = self._field_of(name) if name in self._value else dict(self.field.properties)[name]
        required = name in self.field.required and not self.field.inferred
        label = f"{sub.title or name}{' *' if required else ''}"
        tip = describe_field(sub, required)
        if name not in self._value:
            absent = QLabel(label)
            absent.setEnabled(False)
            absent.setToolTip(tip)
            absent.setMinimumHeight(_row_height())
            self._add(absent, row, 0, align=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            add = _button("+ add", f"add {name}", lambda: self._set_key(name, self.kit.default(sub)))
            add.setObjectName(f"add:{name}")
            self._add(add, row, 1, align=Qt.AlignmentFlag.AlignLeft, role="edit")
            return row + 1
        slot = FieldSlot(self.kit.make(sub, self._value[name]))
        slot.edited.connect(lambda: self._child_edited(name, slot))
        self._place(row, label, tip, slot, name)
        if not required and not self.field.inferred:
            remove = self._remove_button(name, name, lambda: self._remove_key(name))
            remove.setObjectName(f"remove:{name}")
            self._add(remove, row, 2, align=Qt.AlignmentFlag.AlignTop, role="edit")
        return row + 1

    def _child_edited(self, name: str, slot: FieldSlot) -> None:
        self._value = {**self._value, name: slot.editor.value()}
        self.edited.emit()

    def _set_key(self, name: str, value: Any) -> None:
        self.set_value({**self._value, name: value})
        self.edited.emit()
        # the user added it to type into it: its starting value (`null` for a value of any type) is selected
        self.slots[name].editor.focus_first()

    def _remove_key(self, name: str) -> None:
        self.set_value({k: v for k, v in self._value.items() if k != name})
        self.edited.emit()


PAGE = 20  # array items built at first; every field is widgets to build, so long arrays come in pages


class ArrayEditor(_Group):
    """An array: one row per item with move up, move down and remove; an add button below. Long arrays show
    their first items and a button for more (the JSON tab always has all of them)."""

    shown = PAGE

    def item_field(self, index: int) -> Field:
        if index < len(self.field.prefix_items):
            return self.field.prefix_items[index]
        if self.field.items is not None:
            return self.field.items
        if self.field.inferred:
            return field_from_value(self._value[index])
        return Field()

    def set_value(self, value: Any) -> None:
        value = list(value)
        same_length = self._value is not None and len(value) == len(self._value)
        super().set_value(value)
        if not same_length:
            self._rebuild()
            return
        for index, slot in self.slots.items():
            refill(self.kit, slot, self.item_field(index), value[index], self.read_only)

    def _rebuild(self) -> None:
        self._clear()
        for index, item in enumerate(self._value[: self.shown]):
            slot = FieldSlot(self.kit.make(self.item_field(index), item))
            slot.edited.connect(lambda i=index, s=slot: self._child_edited(i, s))
            self._place(index, f"{index}", "", slot, index)
            if slot.editor.container:  # a container spans label and slot; its index is its title
                slot.editor.set_title(f"[{index}]", "")
            self._add(self._buttons(index, slot), index, 2, align=Qt.AlignmentFlag.AlignTop, role="edit")
        row = min(len(self._value), self.shown)
        if len(self._value) > self.shown:
            more = _button(f"Show more ({self.shown} of {len(self._value)} shown)", "build the next items", self._more)
            more.setObjectName("more-items")
            self._add(more, row, 0, 2, Qt.AlignmentFlag.AlignLeft)
            row += 1
        add = _button("+ Add item", "append an item", self._append)
        add.setObjectName("add-item")
        self._add(add, row, 0, 2, Qt.AlignmentFlag.AlignLeft, role="edit")
        if not self._value:
            self._add(QLabel("(empty)"), row + 1, 0, 2, role="view")

    def _buttons(self, index: int, slot: FieldSlot) -> QWidget:
        buttons = QWidget()
        layout = QHBoxLayout(buttons)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        up = _keyed(_button("▲", "move up", lambda: self.move_item(index, index - 1)), MOVE_UP_KEY)
        down = _keyed(_button("▼", "move down", lambda: self.move_item(index, index + 1)), MOVE_DOWN_KEY)
        remove = self._remove_button(index, "this item", lambda: self.remove_item(index))
        up.setEnabled(index > 0)
        down.setEnabled(index < len(self._value) - 1)
        for name, button in (("up", up), ("down", down), ("remove", remove)):
            button.setObjectName(f"{name}:{index}")
            layout.addWidget(button)
        return buttons

    def _child_edited(self, index: int, slot: FieldSlot) -> None:
        items = list(self._value)
        items[index] = slot.editor.value()
        self._value = items
        self.edited.emit()

    def _append(self) -> None:
        if len(self._value) < len(self.field.prefix_items):
            field = self.field.prefix_items[len(self._value)]
        elif self.field.items is not None:
            field = self.field.items
        else:  # no schema for items: a new item shaped like the last one
            field = field_from_value(self._value[-1]) if self._value else Field()
        self._value = [*self._value, self.kit.default(field)]
        if len(self._value) - 1 <= self.shown:  # all were shown: show the new one too
            self.shown = max(self.shown, len(self._value))
        self._rebuild()
        self.edited.emit()
        if len(self._value) - 1 in self.slots:
            self.slots[len(self._value) - 1].editor.focus_first()

    def _more(self) -> None:
        self.shown += PAGE
        self._rebuild()

    def move_item(self, src: int, dst: int) -> None:
        """Moves the item at `src` to `dst` (the user's reorder); a focus inside the item goes with it."""
        if not (0 <= src < len(self._value) and 0 <= dst < len(self._value)) or src == dst:
            return
        focus = QApplication.focusWidget()
        inside = src in self.slots and focus is not None and self.slots[src].isAncestorOf(focus)
        items = list(self._value)
        items.insert(dst, items.pop(src))
        self._value = items
        self._rebuild()
        self.edited.emit()
        if inside and dst in self.slots:
            self.slots[dst].editor.focus_first()

    def remove_item(self, index: int) -> None:
        """Removes the item at `index` (the user's delete)."""
        self._value = [v for i, v in enumerate(self._value) if i != index]
        self._rebuild()
        self.edited.emit()
