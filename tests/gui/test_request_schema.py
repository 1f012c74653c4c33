"""Edit → Request Schema…: the dialog's keys."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from contextdeck.gui._request_schema import RequestSchemaDialog

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def focus_name(widget: QWidget | None) -> str:
    assert widget is not None
    words = getattr(widget, "text", lambda: "")() or getattr(widget, "placeholderText", lambda: "")()
    return widget.objectName() or words


def test_tab_goes_through_the_request_schema_in_the_order_on_screen(qtbot: Any) -> None:
    """The dialog opened with the focus on its scroll area (a stop showing nothing), and Tab went from the schema's
    description to the new property's name at the bottom, then back up to the property above it (the order the
    widgets were made in). The focus starts on the schema's type; Tab goes top to bottom, left to right, round to
    the first control after Cancel, and Shift+Tab back the same way."""
    dialog = RequestSchemaDialog(SCHEMA)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    seen = [focus_name(QApplication.focusWidget())]
    for _ in range(16):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.append(focus_name(QApplication.focusWidget()))
    assert seen == ["schemaType", "nullable", "schemaDescription", "required", "✕", "schemaType", "nullable",
                    "schemaDescription", "schemaEnum", "schemaConst", "schemaDefault", "schemaPattern", "schemaFormat",
                    "schemaNewProperty", "+ property", "OK", "Cancel"]
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert focus_name(QApplication.focusWidget()) == "schemaType"
    back = []
    for _ in range(3):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
        back.append(focus_name(QApplication.focusWidget()))
    assert back == ["Cancel", "OK", "+ property"]


def test_the_request_schema_is_laid_out_from_the_top_down(qtbot: Any) -> None:
    """The schema was stretched over the whole dialog: its rows spread apart, a property's box in the middle with
    empty space above and below it. It keeps its own height at the top; the room left over stays below it."""
    dialog = RequestSchemaDialog(SCHEMA)
    qtbot.addWidget(dialog)
    dialog.resize(640, 520)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(lambda: dialog.node.height() == dialog.node.sizeHint().height())
    assert dialog.node.height() < 400


def test_enter_in_the_new_property_name_adds_it_and_leaves_the_dialog_open(qtbot: Any) -> None:
    """Enter in the name box adds the property (it must not be taken as the dialog's OK)."""
    dialog = RequestSchemaDialog(SCHEMA)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.node.new_name.setFocus()
    qtbot.keyClicks(dialog.node.new_name, "b")
    qtbot.keyClick(dialog.node.new_name, Qt.Key.Key_Return)
    assert dialog.isVisible()
    assert set(dialog.node.schema()["properties"]) == {"a", "b"}
