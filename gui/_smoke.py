"""A self-test of an installed or frozen ContextDeck, offscreen, run as a child module:

    contextdeck --child-module contextdeck.gui._smoke SHOT.png

It opens the bundled refund example in the window, types an order number the input's schema `pattern`
refuses into its form field, waits for the validation worker's answer at that field, and renders the window
to SHOT.png. Exit 0 when the field shows the error; 1, with what went wrong, otherwise. `make bundle` runs it
inside the bundle, where the worker is started through the bundle's own executable."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from ._app import FIRST_DOCUMENT, create_window, open_and_wait, save_picture, settle

FIELD = ("orderId",)  # the refund example's input: `"pattern": "^[A-Z]-[0-9]{4}$"`
TYPED = "not an order"
LIMIT_S = 60.0  # a worker starting on a busy machine


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: contextdeck --child-module contextdeck.gui._smoke SHOT.png", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory(prefix="contextdeck-smoke-") as scratch:
        settings = QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat)
        window = create_window(settings, Path(scratch) / "recovery")
        window.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]  # the typed field
        window.resize(1440, 880)
        window.show()
        try:
            return _check(window, Path(argv[0]))
        finally:
            window.session.close()
            window.close()
            del app


def _check(window: object, shot: Path) -> int:
    from ._window import MainWindow

    assert isinstance(window, MainWindow)
    failure = open_and_wait(window, FIRST_DOCUMENT)
    if failure is not None:
        return _fail(f"cannot open {failure}")
    window.select_message(1)
    slot = window.editor.payload.form.locate(FIELD)
    line = slot.editor.findChild(QLineEdit) if slot is not None else None
    if slot is None or line is None:
        return _fail(f"no form field {'.'.join(FIELD)} for message 1")
    line.selectAll()
    QTest.keyClicks(line, TYPED)
    deadline = time.monotonic() + LIMIT_S
    while not slot.messages and time.monotonic() < deadline:
        QTest.qWait(50)
    if not slot.messages:
        return _fail(f"no validation answer at {'.'.join(FIELD)} within {LIMIT_S:.0f} s "
                     f"(the form shows {window.editor.payload.errors()})")
    settle(window)
    unsaved = save_picture(window.grab(), str(shot))
    if unsaved is not None:
        return _fail(unsaved)
    print(f"smoke: {FIRST_DOCUMENT.name} opened; {'.'.join(FIELD)} = {TYPED!r}: {slot.messages[0]}; "
          f"window rendered to {shot}")
    return 0


def _fail(reason: str) -> int:
    print(f"smoke: FAILED: {reason}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
