"""Field widgets that wrap one other field: a choice of `oneOf`/`anyOf` branch, and the null toggle of a
nullable value."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QVBoxLayout, QWidget

from ._base import FieldEditor, FieldSlot
from ._containers import Kit, refill
from ._field import MISSING, Field, branch_labels


class ChoiceEditor(FieldEditor):
    """`oneOf`/`anyOf` (or several types): a combo box of branches above the editor of the chosen one."""

    def __init__(self, field: Field, kit: Kit, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.kit = kit
        self.branches = field.branches
        self.read_only = False
        self.combo = QComboBox()
        for i, (branch, label) in enumerate(zip(self.branches, branch_labels(self.branches), strict=True)):
            self.combo.addItem(label)
            self.combo.setItemData(i, branch.description, Qt.ItemDataRole.ToolTipRole)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.setToolTip("oneOf" if field.one_of else "anyOf" if field.any_of else "type")
        self.inner = FieldSlot(kit.make(Field(), None))
        self.inner.edited.connect(lambda: self._user_changed(self.inner.editor.value()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        top = QHBoxLayout()
        top.addWidget(self.combo)
        top.addStretch(1)
        layout.addLayout(top)
        layout.addWidget(self.inner)
        self.combo.activated.connect(self._switch)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        index = self.kit.pick(self.field, value)
        with QSignalBlocker(self.combo):
            self.combo.setCurrentIndex(index)
        self._show(index, value)

    def _show(self, index: int, value: Any) -> None:
        refill(self.kit, self.inner, self.branches[index], value, self.read_only)

    def _switch(self, index: int) -> None:
        """The user chose another branch: keep the value when it fits that branch, else start from its default."""
        branch = self.branches[index]
        value = self._value if self.kit.pick(self.field, self._value) == index else self.kit.default(branch)
        self._show(index, value)
        self._value = MISSING  # the branch changed: signal even when the value is the same
        self._user_changed(value)

    def slot(self, key: Any) -> FieldSlot | None:
        return self.inner.editor.slot(key)

    def focus_first(self) -> None:
        self.combo.setFocus(Qt.FocusReason.TabFocusReason)

    def apply_read_only(self, flag: bool) -> None:
        self.read_only = flag
        self.combo.setEnabled(not flag)
        self.inner.editor.set_read_only(flag)


class NullableEditor(FieldEditor):
    """A value that may be null: a "null" check box beside the editor of the non-null value."""

    def __init__(self, field: Field, kit: Kit, parent: QWidget | None = None) -> None:
        super().__init__(field, parent)
        self.kit = kit
        self.inner_field = replace(field, nullable=False)
        self.read_only = False
        self.null = QCheckBox("null")
        self.null.setToolTip("the value is null")
        self.inner = FieldSlot(kit.make(self.inner_field, kit.default(self.inner_field)))
        self.inner.edited.connect(lambda: self._user_changed(self.inner.editor.value()))
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
            refill(self.kit, self.inner, self.inner_field, value, self.read_only)
        self._show_inner(value is not None)

    def _show_inner(self, shown: bool) -> None:
        """Null: a leaf stays in view, disabled (it shows what a value would be); a group is hidden."""
        self.inner.setEnabled(shown)
        self.inner.setVisible(shown or not self.inner.editor.container)

    def _toggled(self, null: bool) -> None:
        self._show_inner(not null)
        self._user_changed(None if null else self.inner.editor.value())

    def slot(self, key: Any) -> FieldSlot | None:
        return None if self._value is None else self.inner.editor.slot(key)

    def focus_first(self) -> None:
        if self._value is None:
            self.null.setFocus(Qt.FocusReason.TabFocusReason)
        else:
            self.inner.editor.focus_first()

    def apply_read_only(self, flag: bool) -> None:
        self.read_only = flag
        self.null.setEnabled(not flag)
        self.inner.editor.set_read_only(flag)
