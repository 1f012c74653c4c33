"""Buttons that show a glyph (✕ ↑ ↓ ⊞ ⇱) or an icon instead of a word: each also has a name that a screen
reader says and a tooltip that a pointer shows, both the action in words."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QLineEdit, QToolButton, QWidget


def name_glyph(button: QAbstractButton, glyph: str, name: str) -> None:
    """Shows `glyph` on `button`, named `name` (its accessible name and tooltip)."""
    button.setText(glyph)
    button.setAccessibleName(name)
    button.setToolTip(name)


def glyph_button(glyph: str, name: str) -> QToolButton:
    """A tool button showing `glyph`, named `name`."""
    button = QToolButton()
    name_glyph(button, glyph, name)
    return button


_QT_BUTTONS = {  # Qt's own glyph buttons, by their object names
    "qt_dockwidget_closebutton": "Close this pane",
    "qt_dockwidget_floatbutton": "Float this pane (or dock it back)",
    "ScrollLeftButton": "Scroll the tabs left",
    "ScrollRightButton": "Scroll the tabs right",
    "qt_toolbar_ext_button": "More tools",
}


def name_qt_buttons(root: QWidget) -> None:
    """Names Qt's own glyph buttons under `root` (a dock's close and float, a tab bar's scroll arrows, a
    toolbar's overflow, a line edit's clear button) that have no name or no tooltip yet."""
    for button in root.findChildren(QAbstractButton):
        if any(character.isalpha() for character in button.text()):
            continue
        action = button.defaultAction() if isinstance(button, QToolButton) else None
        name = _QT_BUTTONS.get(button.objectName()) or (action.toolTip() or action.text() if action else "") or \
            ("Clear the text" if isinstance(button.parentWidget(), QLineEdit) else "")
        if name and not button.accessibleName():
            button.setAccessibleName(name)
        if name and not button.toolTip():
            if action is not None:
                action.setToolTip(name)  # the button shows its action's
            button.setToolTip(name)
