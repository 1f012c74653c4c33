"""Field widgets that hold other fields: objects (titled groups), arrays (add, remove, reorder),
a choice of `oneOf`/`anyOf` branch, and the null toggle of a nullable value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ._base import FieldEditor, FieldSlot
from ._field import MISSING, Field, field_from_value

Make = Callable[[Field, Any], FieldEditor]  # builds the editor for a field and a value (the widget table)
Default = Callable[[Field], Any]  # the value a new field starts with
Pick = Callable[[Field, Any], int]  # the index of the branch of a choice that a value fits


def _button(text: str, tip: str, slot: Callable[[], None]) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.clicked.connect(slot)
    return button


class _Group(FieldEditor):
    """A titled group box with a grid inside: [label | slot | buttons] per row."""

    container = True

    def __init__(self, field: Field, make: Make, default: Default, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self._make, self._default = make, default
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

    def set_title(self, title: str, tooltip: str) -> None:
        self.box.setTitle(title)
        self.box.setToolTip(tooltip)

    def slot(self, key: Any) -> FieldSlot | None:
        return self.slots.get(key)

    def set_read_only(self, flag: bool) -> None:
        self.read_only = flag
        if self._value is not None:
            self.set_value(self._value)  # rebuilt without the add, remove and move buttons

    def _clear(self) -> None:
        for widget in self._rows:
            self.grid.removeWidget(widget)
            widget.setParent(None)  # gone from the tree at once, not only when deleteLater runs
            widget.deleteLater()
        self._rows.clear()
        self.slots.clear()

    def _add(self, widget: QWidget, row: int, col: int, span: int = 1, align: Qt.AlignmentFlag | None = None) -> None:
        self._rows.append(widget)
        if align is None:
            self.grid.addWidget(widget, row, col, 1, span)
        else:
            self.grid.addWidget(widget, row, col, 1, span, align)

    def _place(self, row: int, label: str, tip: str, slot: FieldSlot, key: Any) -> None:
        """A leaf sits right of its label; a container spans the row under its own title."""
        self.slots[key] = slot
        slot.editor.set_read_only(self.read_only)
        if tip:
            slot.editor.setToolTip(tip)
            slot.show_errors(())
            slot._base_tooltip = tip
        if slot.editor.container:
            slot.editor.set_title(label, tip)
            self._add(slot, row, 0, 2)
            return
        name = QLabel(label)
        name.setToolTip(tip)
        name.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        name.setMinimumHeight(slot.editor.sizeHint().height() + 4)  # centred on the widget, not the error below
        name.setBuddy(slot.editor)
        self._add(name, row, 0, align=Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignRight)
        self._add(slot, row, 1)


class ObjectEditor(_Group):
    """An object: one row per schema property (in schema order, a `*` on the required ones), then the keys
    the schema does not describe, as raw JSON. Absent properties can be added, optional ones removed."""

    def set_value(self, value: Any) -> None:
        super().set_value(dict(value))
        self._clear()
        row = 0
        listed = {name for name, _ in self.field.properties}
        for name, sub in self.field.properties:
            row = self._row(row, name, sub)
        for name in self._value:
            if name not in listed:
                row = self._row(row, name, self._extra_field(name))

    def _extra_field(self, name: str) -> Field:
        if self.field.inferred:
            return field_from_value(self._value[name])
        if self.field.additional_properties is not None:
            return self.field.additional_properties
        return Field(description="not described by the schema")

    def _row(self, row: int, name: str, sub: Field) -> int:
        required = name in self.field.required and not self.field.inferred
        label = f"{sub.title or name}{' *' if required else ''}"
        tip = "\n".join(p for p in (sub.description, "required" if required else "") if p)
        if name not in self._value:
            absent = QLabel(label)
            absent.setEnabled(False)
            absent.setToolTip(tip)
            self._add(absent, row, 0, align=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not self.read_only:
                add = _button("＋", f"add {name}", lambda: self._set_key(name, self._default(sub)))
                add.setObjectName(f"add:{name}")
                self._add(add, row, 1, align=Qt.AlignmentFlag.AlignLeft)
            return row + 1
        slot = FieldSlot(self._make(sub, self._value[name]))
        slot.editor.edited.connect(lambda: self._child_edited(name, slot))
        self._place(row, label, tip, slot, name)
        if not required and not self.read_only and not self.field.inferred:
            remove = _button("✕", f"remove {name}", lambda: self._remove_key(name))
            remove.setObjectName(f"remove:{name}")
            self._add(remove, row, 2, align=Qt.AlignmentFlag.AlignTop)
        return row + 1

    def _child_edited(self, name: str, slot: FieldSlot) -> None:
        self._value = {**self._value, name: slot.editor.value()}
        self.edited.emit()

    def _set_key(self, name: str, value: Any) -> None:
        self.set_value({**self._value, name: value})
        self.edited.emit()

    def _remove_key(self, name: str) -> None:
        self.set_value({k: v for k, v in self._value.items() if k != name})
        self.edited.emit()


class ArrayEditor(_Group):
    """An array: one row per item with move up, move down and remove; an add button below."""

    def item_field(self, index: int) -> Field:
        if self.field.items is not None:
            return self.field.items
        if self.field.inferred:
            return field_from_value(self._value[index]) if index < len(self._value) else self._like_last()
        return Field()

    def _like_last(self) -> Field:
        return field_from_value(self._value[-1]) if self._value else Field()

    def set_value(self, value: Any) -> None:
        super().set_value(list(value))
        self._clear()
        for index, item in enumerate(self._value):
            slot = FieldSlot(self._make(self.item_field(index), item))
            slot.editor.edited.connect(lambda i=index, s=slot: self._child_edited(i, s))
            self._place(index, f"{index}", "", slot, index)
            if slot.editor.container:  # a container spans label and slot; its index is its title
                slot.editor.set_title(f"[{index}]", "")
            if not self.read_only:
                self._add(self._buttons(index), index, 2, align=Qt.AlignmentFlag.AlignTop)
        if not self.read_only:
            add = _button("＋ Add item", "append an item", self._append)
            add.setObjectName("add-item")
            add.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            self._add(add, len(self._value), 0, 2, Qt.AlignmentFlag.AlignLeft)
        if not self._value and self.read_only:
            self._add(QLabel("(empty)"), 0, 0, 2)

    def _buttons(self, index: int) -> QWidget:
        buttons = QWidget()
        layout = QHBoxLayout(buttons)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        up = _button("▲", "move up", lambda: self.move(index, index - 1))
        down = _button("▼", "move down", lambda: self.move(index, index + 1))
        remove = _button("✕", "remove", lambda: self.remove(index))
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
        field = self.field.items if self.field.items is not None else self._like_last()
        self.set_value([*self._value, self._default(field)])
        self.edited.emit()

    def move(self, src: int, dst: int) -> None:
        """Moves the item at `src` to `dst` (the user's reorder)."""
        if not (0 <= src < len(self._value) and 0 <= dst < len(self._value)) or src == dst:
            return
        items = list(self._value)
        items.insert(dst, items.pop(src))
        self.set_value(items)
        self.edited.emit()

    def remove(self, index: int) -> None:
        """Removes the item at `index` (the user's delete)."""
        self.set_value([v for i, v in enumerate(self._value) if i != index])
        self.edited.emit()


class ChoiceEditor(FieldEditor):
    """`oneOf`/`anyOf` (or several types): a combo box of branches above the editor of the chosen one."""

    def __init__(self, field: Field, make: Make, default: Default, pick: Pick, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self._make, self._default, self._pick = make, default, pick
        self.branches = field.branches
        self.combo = QComboBox()
        for i, branch in enumerate(self.branches):
            self.combo.addItem(branch.label if branch.label != "any" else f"option {i + 1}")
            self.combo.setItemData(i, branch.description, Qt.ItemDataRole.ToolTipRole)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.inner = FieldSlot(make(Field(), None))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        top = QHBoxLayout()
        top.addWidget(self.combo)
        top.addStretch(1)
        layout.addLayout(top)
        layout.addWidget(self.inner)
        self.combo.activated.connect(self._switch)
        self.read_only = False

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        index = self._pick(self.field, value)
        with QSignalBlocker(self.combo):
            self.combo.setCurrentIndex(index)
        self._show(index, value)

    def _show(self, index: int, value: Any) -> None:
        editor = self._make(self.branches[index], value)
        editor.set_read_only(self.read_only)
        editor.edited.connect(self._inner_edited)
        self.inner.replace_editor(editor)

    def _inner_edited(self) -> None:
        self._user_changed(self.inner.editor.value())

    def _switch(self, index: int) -> None:
        """The user chose another branch: keep the value when it fits that branch, else start from its default."""
        branch = self.branches[index]
        value = self._value if self._pick(self.field, self._value) == index else self._default(branch)
        self._show(index, value)
        self._value = MISSING  # force the signal even when the value stays the same
        self._user_changed(value)

    def slot(self, key: Any) -> FieldSlot | None:
        return self.inner.editor.slot(key)

    def set_read_only(self, flag: bool) -> None:
        self.read_only = flag
        self.combo.setEnabled(not flag)
        self.inner.editor.set_read_only(flag)


class NullableEditor(FieldEditor):
    """A value that may be null: a "null" check box beside the editor of the non-null value."""

    def __init__(self, field: Field, make: Make, default: Default, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self._make, self._default = make, default
        self.inner_field = replace(field, nullable=False)
        self.null = QCheckBox("null")
        self.null.setToolTip("the value is null")
        self.read_only = False
        self.inner = FieldSlot(make(Field(), None))
        self._show(default(self.inner_field))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.inner, 1)
        layout.addWidget(self.null, 0, Qt.AlignmentFlag.AlignTop)
        self.null.toggled.connect(self._toggled)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        with QSignalBlocker(self.null):
            self.null.setChecked(value is None)
        if value is not None:
            self._show(value)
        self._sync_enabled()

    def _show(self, value: Any) -> None:
        editor = self._make(self.inner_field, value)
        editor.set_read_only(self.read_only)
        editor.edited.connect(lambda: self._user_changed(self.inner.editor.value()))
        self.inner.replace_editor(editor)

    def _sync_enabled(self) -> None:
        self.inner.setEnabled(not self.null.isChecked())

    def _toggled(self, null: bool) -> None:
        self._sync_enabled()
        self._user_changed(None if null else self.inner.editor.value())

    def slot(self, key: Any) -> FieldSlot | None:
        return None if self._value is None else self.inner.editor.slot(key)

    def set_read_only(self, flag: bool) -> None:
        self.read_only = flag
        self.null.setEnabled(not flag)
        self.inner.editor.set_read_only(flag)
