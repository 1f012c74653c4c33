"""Replacing and editing forms leaves no cyclic garbage: the window freezes what survives each turn of its
event loop (contextdeck/_runtime.py), and a cycle that dies frozen waits for a collection of everything."""

from __future__ import annotations

import collections
import gc
import json
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot
from shiboken6 import isValid

from contextdeck.gui._editor._form import SPARE_FORMS
from contextdeck.gui._message_editor import MessageEditor


def kinds_of_message(examples: Path) -> list[dict[str, Any]]:
    """One message of each type of the refund example (each opens another body or form), and more payloads
    of other shapes than the form editor keeps aside, so that forms are deleted too."""
    document = json.loads((examples / "refund_workflow.json").read_text(encoding="utf-8"))
    firsts: dict[str, dict[str, Any]] = {}
    for message in document["context"]:
        firsts.setdefault(message["type"], message)
    shapes = [{"type": "state", "data": {f"field{n}": n}} for n in range(SPARE_FORMS + 2)]
    return [*firsts.values(), *shapes]


def test_selecting_and_editing_forms_leaves_no_cyclic_garbage(qtbot: QtBot, examples: Path) -> None:
    """Every kind of message shown twice over (forms made, put aside, taken back and deleted) and a field
    typed in: afterwards the collector finds nothing unreachable."""
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.resize(600, 700)
    editor.show()
    messages = kinds_of_message(examples)
    editor.set_message(0, messages[0])
    first_form = None
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(2):
            for index, message in enumerate(messages):
                editor.set_message(index, message)
                if first_form is None and message["type"] == "input":
                    first_form = editor.payload.form.root.editor
                    line = first_form.findChild(QLineEdit)
                    assert line is not None
                    qtbot.keyClicks(line, "x")  # a user's edit: the message is edited through the form
        qtbot.waitUntil(lambda: not isValid(first_form))  # put aside, then deleted (later, by Qt)
        gc.collect()
        garbage = collections.Counter(type(thing).__name__ for thing in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not garbage
    editor.shutdown()
