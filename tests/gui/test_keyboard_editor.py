"""The message editor from the keyboard: the caret where typing goes, Tab through every control in visual order,
and every glyph button named (issue 31, item 3)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QCheckBox, QComboBox, QPlainTextEdit, QToolButton, QWidget

from contextdeck.gui._message_editor._focus import controls
from contextdeck.gui._window import MainWindow


def focused() -> QWidget | None:
    return QApplication.focusWidget()


def active(qtbot: Any, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def tab_through(qtbot: Any, window: MainWindow, limit: int = 200) -> list[QWidget]:
    """Presses Tab from the focused control until the focus leaves the editor; the controls it stopped at."""
    seen: list[QWidget] = []
    for _ in range(limit):
        widget = focused()
        assert widget is not None
        if not window.editor.isAncestorOf(widget):
            return seen
        seen.append(widget)
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
    raise AssertionError("Tab never left the editor")


def test_after_insert_the_caret_is_in_the_new_messages_body(qtbot: Any, refund_window: MainWindow) -> None:
    """Insert Text Message, then type: the letters are the new message's text (not lost on the tab bar)."""
    window = refund_window
    active(qtbot, window)
    window.select_message(0)
    window.timeline.table.setFocus()
    window.actions_by_name["insert_text"].trigger()
    qtbot.waitUntil(lambda: isinstance(focused(), QPlainTextEdit))
    qtbot.keyClicks(focused(), "Hello")
    qtbot.waitUntil(lambda: window.context()[1].get("text") == "Hello")


def test_after_insert_of_a_plan_the_focus_is_in_its_body(qtbot: Any, refund_window: MainWindow) -> None:
    """A new plan's body has no field yet: the focus is on its first control (+ call), not on the header's Type."""
    window = refund_window
    active(qtbot, window)
    window.actions_by_name["insert_plan"].trigger()
    page = window.editor.tabs.currentWidget()
    qtbot.waitUntil(lambda: focused() is not None and page.isAncestorOf(focused()))
    assert not isinstance(focused(), QComboBox) or focused().objectName() != "headerType"


def test_alt_2_goes_to_the_body_not_the_type(qtbot: Any, refund_window: MainWindow) -> None:
    """Alt+2 puts the focus in the body's first field; typed text lands in the body, the message keeps its type."""
    window = refund_window
    active(qtbot, window)
    window.select_message(0)  # a text message
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    assert isinstance(focused(), QPlainTextEdit)
    assert focused().objectName() == "messageText"
    window.select_message(1)  # the input: a form
    qtbot.waitUntil(lambda: window.editor.message() == window.context()[1])
    window.timeline.table.setFocus()
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    widget = focused()
    assert widget is not None
    assert window.editor.tabs.currentWidget().isAncestorOf(widget)


def test_tab_visits_every_control_in_visual_order_and_leaves_a_text_body(qtbot: Any,
                                                                        refund_window: MainWindow) -> None:
    """From the Type box Tab goes down the header, the tab bar, then the body; Tab in a text body moves on (the
    text is unchanged), and the next Tab leaves the editor. Shift+Tab comes back the same way."""
    window = refund_window
    active(qtbot, window)
    window.select_message(0)
    editor = window.editor
    editor.header.findChild(QComboBox, "headerType").setFocus()
    text = window.context()[0]["text"]
    seen = tab_through(qtbot, window)
    names = [widget.objectName() for widget in seen]
    assert names[0] == "headerType"
    assert names[-1] == "messageText"
    assert names.index("qt_tabwidget_tabbar") < names.index("messageText")
    assert seen == controls(editor)  # every control, in visual order
    tops = [widget.mapTo(editor, widget.rect().topLeft()).y() for widget in seen]
    assert tops == sorted(tops)
    assert window.context()[0]["text"] == text  # Tab typed nothing
    assert not editor.isAncestorOf(focused())
    qtbot.keyClick(focused(), Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is seen[-1]


def test_tab_passes_the_forms_remove_buttons_and_ctrl_shift_del_removes(qtbot: Any,
                                                                        refund_window: MainWindow) -> None:
    """In the state's form, where every field is optional, Tab visits each field once and no ✕ (a stop each made
    twice the keys); Ctrl+Shift+Del in `policy.maxDays` removes it from the document, the focus on the next field."""
    window = refund_window
    active(qtbot, window)
    window.select_message(2)
    editor = window.editor
    qtbot.waitUntil(lambda: editor.message() == window.context()[2])
    form = editor.payload.form
    assert sum(b.text() == "✕" for b in form.findChildren(QToolButton) if b.isVisibleTo(form)) >= 5
    editor.header.findChild(QComboBox, "headerType").setFocus()
    seen = tab_through(qtbot, window)
    assert seen == controls(editor)
    assert not any(isinstance(w, QToolButton) and w.text() == "✕" for w in seen)
    days = form.locate(("policy", "maxDays"))
    assert days is not None
    days.editor.focus_first()
    qtbot.keyClick(focused(), Qt.Key.Key_Delete,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.context()[2]["data"]["policy"] == {"autoApproveBelow": 50})
    below = form.locate(("policy", "autoApproveBelow"))
    assert below is not None
    assert focused() is below.editor.focusProxy()


def test_ctrl_tab_types_a_tab_in_a_text_body(qtbot: Any, refund_window: MainWindow) -> None:
    """Ctrl+Tab in a text body types a tab character (the tab widget does not take it)."""
    window = refund_window
    active(qtbot, window)
    window.select_message(0)
    body = window.editor.body().text
    body.setFocus()
    body.moveCursor(body.textCursor().MoveOperation.End)
    qtbot.keyClick(body, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.context()[0]["text"].endswith("\t"))
    assert window.editor.tabs.currentIndex() == 0


def test_ctrl_tab_to_the_schema_tab_puts_the_focus_on_its_first_field(qtbot: Any, refund_window: MainWindow) -> None:
    """Ctrl+Tab from a form field showed the Schema tab with the focus where Qt's creation order put it (a property's
    `required` box; for a schema not made yet, the page itself, from which Tab left the editor past every control
    of the schema). It is on the tab's first field; from the page itself Tab goes there too, Shift+Tab to the tab
    bar."""
    window = refund_window
    active(qtbot, window)
    window.select_message(1)
    editor = window.editor
    field = editor.first_field()
    assert field is not None
    field.setFocus()
    qtbot.keyClick(field, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert editor.tabs.currentWidget() is editor.schema_page
    first = editor.first_field()
    assert first is not None
    assert editor.schema_page.isAncestorOf(first)
    assert focused() is first
    page = editor.schema_page
    page.setFocus()
    qtbot.keyClick(page, Qt.Key.Key_Tab)
    assert focused() is first
    page.setFocus()
    qtbot.keyClick(page, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is editor.tabs.tabBar()


def test_the_schema_editors_required_and_remove_are_in_the_tab_order(qtbot: Any, refund_window: MainWindow) -> None:
    """In the Schema tab Tab reaches each property's `required` box and its ✕, after the property's name row."""
    window = refund_window
    active(qtbot, window)
    window.select_message(1)
    editor = window.editor
    editor.tabs.setCurrentWidget(editor.schema_page)
    qtbot.waitUntil(lambda: bool(editor.schema.findChildren(QCheckBox)))
    editor.first_field().setFocus()
    seen = tab_through(qtbot, window)
    required = [w for w in seen if isinstance(w, QCheckBox) and w.text() == "required"]
    removes = [w for w in seen if isinstance(w, QToolButton) and w.text() == "✕"]
    assert len(required) == len(removes) >= 5
    assert all(seen.index(box) + 1 == seen.index(remove) for box, remove in zip(required, removes, strict=True))


def test_a_scrolled_schema_tab_keeps_its_order_and_alt_2_shows_its_first_field(qtbot: Any,
                                                                             refund_window: MainWindow) -> None:
    """The Schema tab scrolled to its end: the controls keep their order (the scrolled-out ones are not taken for
    controls above the header), Alt+2 brings its first field into sight, and Shift+Tab from it goes to the editor's
    tab bar (it left the editor for a dock's tab bar, from a field out of sight)."""
    window = refund_window
    active(qtbot, window)
    window.select_message(1)
    editor = window.editor
    editor.tabs.setCurrentWidget(editor.schema_page)
    qtbot.waitUntil(lambda: editor.schema.isVisible())
    order = controls(editor)
    bar = editor.schema_page.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())
    assert controls(editor) == order
    window.timeline.table.setFocus()
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    first = focused()
    assert first is not None
    assert first is order[order.index(editor.tabs.tabBar()) + 1]
    assert not first.visibleRegion().isEmpty()
    qtbot.keyClick(first, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is editor.tabs.tabBar()


def test_a_property_added_from_the_keyboard_is_in_sight(qtbot: Any, refund_window: MainWindow) -> None:
    """Enter in the Schema tab's name box adds the property and puts the focus on its type, scrolled into sight
    (the focus went to a row below the bottom of the tab: typing changed a type nobody could see)."""
    window = refund_window
    active(qtbot, window)
    window.select_message(1)
    editor = window.editor
    editor.tabs.setCurrentWidget(editor.schema_page)
    qtbot.waitUntil(lambda: editor.schema.isVisible())
    box = editor.schema.new_name
    for name in ("alpha", "beta", "gamma"):
        QApplication.processEvents()  # laid out
        editor.schema_page.ensureWidgetVisible(box, 0, 0)  # the name box at the bottom edge, as Tab leaves it
        box.setFocus()
        qtbot.keyClicks(box, name)
        qtbot.keyClick(box, Qt.Key.Key_Return)
        chosen = editor.schema.rows[name].node.type
        assert focused() is chosen
        for _ in range(3):  # the new row is shown, laid out and scrolled to in the turns that follow
            QApplication.processEvents()
        assert chosen.height() >= chosen.minimumSizeHint().height()
        assert chosen.visibleRegion().boundingRect().height() == chosen.height()


def test_every_glyph_button_has_a_name_and_a_tooltip(qtbot: Any, refund_window: MainWindow) -> None:
    """Every button showing no word (✕ ↑ ↓ ⊞ ⇱ or an icon alone) has an accessible name and a tooltip, in
    every message's Form and Schema tabs."""
    window = refund_window
    missing: set[str] = set()
    for index in range(len(window.context())):
        window.select_message(index)
        for tab in range(window.editor.tabs.count()):
            window.editor.tabs.setCurrentIndex(tab)
            QApplication.processEvents()
            for button in window.findChildren(QAbstractButton):
                if not button.isVisible() or any(c.isalpha() for c in button.text()):
                    continue
                if not button.accessibleName() or not button.toolTip():
                    missing.add(f"{type(button).__name__} {button.text()!r} {button.objectName()!r} "
                                f"in {type(button.parentWidget()).__name__} {button.parentWidget().objectName()!r}"
                                f" {button.accessibleName()!r} {button.toolTip()!r}")
    print(*sorted(missing), sep="\n")
    assert not missing
