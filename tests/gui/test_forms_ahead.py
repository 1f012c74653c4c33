"""While the window is idle, the message editor makes the forms of the shapes the document has (`FormsAhead`); a
selection then takes the form made ahead, and shows and edits its message exactly as a form made for it would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QDialog, QLineEdit
from shiboken6 import isValid

from contextdeck.gui._editor import DataEditor, _form
from contextdeck.gui._editor._form import FIELD_S, PREPARED_FIELDS, SPARE_FORMS
from contextdeck.gui._message_editor._ahead import IDLE_MS
from contextdeck.gui._window import MainWindow

pytestmark = pytest.mark.usefixtures("qapp")

COUNT = 121  # the last message, which the window opens on, is text: no payload form is made


def _messages() -> list[dict[str, Any]]:
    """Text, input and state messages in turn, each kind with payloads of its own shape."""
    shapes = [
        lambda n: {"type": "text", "role": "user", "text": f"text {n}"},
        lambda n: {"type": "input", "_instance": "a", "input": {"post": n, "text": f"post {n}"}},
        lambda n: {"type": "state", "_instance": "a", "data": {"label": f"l {n}", "n": n}},
    ]
    return [shapes[n % 3](n) for n in range(COUNT)]


@pytest.fixture
def window(open_messages: Any) -> MainWindow:
    return open_messages(_messages(), "shapes.json")


def _spares(window: MainWindow) -> list[Any]:
    return list(window.editor.payload.form._spares)


def test_a_selection_takes_the_form_made_ahead_and_edits_its_message(qtbot: Any, window: MainWindow) -> None:
    """Opened on a text message, the window makes the input and state forms while idle, hidden; selecting a state
    message shows that very form, filled with its payload, and typing into it edits that message."""
    window.select_message(0)
    qtbot.waitUntil(lambda: len(_spares(window)) >= 2 and not window.forms_ahead.pending(), timeout=5000)
    made = _spares(window)
    assert all(not form.isVisible() for form in made)
    window.select_message(50)  # a state message: label "l 50", n 50
    form = window.editor.payload.form.root.editor
    assert any(form is spare for spare in made)
    assert form.isVisible()
    label = next(edit for edit in form.findChildren(QLineEdit) if edit.text() == "l 50")
    label.setFocus()
    qtbot.waitUntil(label.hasFocus)
    qtbot.keyClicks(QApplication.focusWidget(), "!")
    assert window.context()[50]["data"] == {"label": "l 50!", "n": 50}


def test_forms_are_made_and_shown_ahead_in_slices_of_the_windows_turns(qtbot: Any, window: MainWindow) -> None:
    """Each form made ahead, and each shown once, is a slice of the window's turns (`slices()`), never work of a
    timer of its own that could share a turn with another slice."""
    import inspect

    from contextdeck.gui._slices import Slices

    editor = window.editor
    outside: list[str] = []
    made: list[str] = []
    prepare, show_prepared = editor.prepare, editor.show_prepared

    def in_a_slice() -> bool:
        return any(frame.function == "_run" and isinstance(frame.frame.f_locals.get("self"), Slices)
                   for frame in inspect.stack())

    def preparing(message: Any, *, push_out: bool = False) -> bool:
        made.append("made")
        if not in_a_slice():
            outside.append("made")
        return bool(prepare(message, push_out=push_out))

    def showing() -> bool:
        if not in_a_slice():
            outside.append("shown")
        return bool(show_prepared())

    editor.prepare, editor.show_prepared = preparing, showing  # type: ignore[method-assign]
    window.select_message(0)
    # inspect.stack() in every call is slow on a loaded machine: a wide bound, never reached when it works
    qtbot.waitUntil(lambda: len(_spares(window)) >= 2 and not window.forms_ahead.pending(), timeout=20_000)
    assert made
    assert outside == []


def test_no_form_is_made_ahead_while_a_modal_dialog_is_open(qtbot: Any, window: MainWindow) -> None:
    """A window-modal dialog over the window (Next Turn, Models…) holds the forms made ahead: its own turns are
    the ones the user waits for. Once it closes, they are made."""
    dialog = QDialog(window)
    made: list[Any] = []
    prepare = window.editor.prepare

    def preparing(message: Any, *, push_out: bool = False) -> bool:
        made.append(message)
        return bool(prepare(message, push_out=push_out))

    dialog.open()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is dialog)
    # Counted from here: until the dialog is the active modal widget, forms may still be made ahead (a loaded
    # machine takes some turns to get there).
    window.editor.prepare = preparing  # type: ignore[method-assign]
    window.select_message(0)
    qtbot.wait(4 * IDLE_MS)  # (waiting for nothing to happen: the forms would be made within two of these)
    assert window.forms_ahead.pending()
    assert made == []
    dialog.reject()
    qtbot.waitUntil(lambda: len(_spares(window)) >= 2 and not window.forms_ahead.pending(), timeout=5000)
    assert made


def test_a_form_made_ahead_looks_like_one_made_for_the_selection(qtbot: Any, open_window: Any,
                                                                 tmp_path: Path) -> None:
    """The editor showing a state message through a form made ahead is pixel for pixel the editor showing it through
    a form made in the selection (a window that made nothing ahead)."""
    path = tmp_path / "shapes.json"
    path.write_text(json.dumps(_messages()), encoding="utf-8")
    hints = QGuiApplication.styleHints()
    flash = hints.cursorFlashTime()
    hints.setCursorFlashTime(0)  # a text cursor that blinks would be caught on or off
    pictures = []
    for ahead in (True, False):
        win = open_window(path)
        win.resize(900, 700)
        # (the docks' widths follow what they showed when first laid out, which a loaded machine reorders: the same
        # for both windows, so that the editor between them is as wide in both)
        win.resizeDocks([win.timeline_dock, win.state_dock], [260, 300], Qt.Orientation.Horizontal)
        win.set_follow_latest(False)
        if not ahead:
            win.forms_ahead.selected = lambda index: None  # type: ignore[method-assign]
        win.select_message(0)
        qtbot.waitUntil(lambda w=win: not w.forms_ahead.pending() and not w.is_refreshing(), timeout=5000)
        if ahead:
            qtbot.waitUntil(lambda w=win: len(_spares(w)) >= 2, timeout=5000)
        win.select_message(50)
        qtbot.waitUntil(lambda w=win: not w.is_refreshing() and not w.state_view.is_busy(), timeout=5000)
        focus = QApplication.focusWidget()
        if focus is not None:  # which window is active when the picture is taken is not what this compares
            focus.clearFocus()
        QApplication.processEvents()
        pictures.append(win.editor.grab().toImage())
        win.close()
    hints.setCursorFlashTime(flash)
    assert pictures[0] == pictures[1]


def test_a_form_made_ahead_never_pushes_out_a_form_the_user_has_seen(qtbot: Any) -> None:
    """With `SPARE_FORMS` forms kept aside, nothing more is made ahead; nor a form of more than `PREPARED_FIELDS`
    fields (made in one go it would hold the event loop)."""
    editor = DataEditor()
    qtbot.addWidget(editor)
    editor.show()
    editor.set_value({"first": 0}, None)
    assert editor.prepare({"other": 1}, None)
    assert not editor.prepare({"other": 2}, None)  # the same shape: made already
    assert not editor.prepare({"first": 3}, None)  # the shape shown
    assert not editor.prepare({f"k{n}": n for n in range(PREPARED_FIELDS)}, None)
    for n in range(SPARE_FORMS):
        editor.set_value({f"seen{n}": n}, None)
    kept = list(editor.form._spares)
    assert len(kept) == SPARE_FORMS
    assert not editor.prepare({"never shown": 1}, None)
    assert editor.form._spares == kept
    assert all(isValid(form) for form in kept)
    # The next message's form (the user steps through the timeline) may push out the least recently shown.
    assert editor.prepare({"next": 1}, None, push_out=True)
    assert editor.form._spares[:-1] == kept[1:]
    qtbot.waitUntil(lambda: not isValid(kept[0]))


def test_a_form_that_would_take_too_long_is_not_made_ahead(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A form whose fields, at the cost per field of the last one made ahead (before any, `FIELD_S`), would take
    more than `PREPARED_S` is not made ahead (its selection makes it): on a slow machine, fewer fields are."""
    monkeypatch.setattr(_form, "PREPARED_S", 3 * FIELD_S)
    editor = DataEditor()
    qtbot.addWidget(editor)
    editor.show()
    editor.set_value({"first": 0}, None)
    assert not editor.prepare({"a": 1, "b": 2, "c": 3}, None)  # four values
    assert editor.prepare({"a": 1, "b": 2}, None)  # three


def test_a_form_taken_before_it_was_shown_once_is_complete_and_edits(qtbot: Any) -> None:
    """A value of a shape whose form was made ahead but not yet shown once (the second half of the work, a turn
    later) takes that form: shown, filled with the value, and a user's typing edits the value."""
    editor = DataEditor()
    qtbot.addWidget(editor)
    editor.show()
    editor.set_value({"first": 0}, None)
    assert editor.prepare({"name": "made ahead", "n": 1}, None)
    made = editor.form._spares[-1]
    assert not made.isVisible()
    with qtbot.waitSignal(editor.value_edited) as edited:
        editor.set_value({"name": "shown", "n": 2}, None)
        assert editor.form.root.editor is made
        assert made.isVisible()
        assert not editor.show_prepared()  # taken: nothing is left to show once
        line = next(edit for edit in made.findChildren(QLineEdit) if edit.text() == "shown")
        qtbot.keyClicks(line, "!")
    assert edited.args == [{"name": "shown!", "n": 2}]
