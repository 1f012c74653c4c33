"""The window on DOC in a process of its own, for tests/gui/test_real_keys.py: real key events from xdotool
under Xvfb and a window manager. Prints "ready" once the window is active on the document's last message;
each save (Ctrl+S, sent as keys) writes DOC back."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from contextdeck.gui._app import create_window, open_and_wait


def main(path: Path, folder: Path) -> int:
    app = QApplication([sys.argv[0]])
    settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, folder / "recovery")
    window.show()
    if open_and_wait(window, path) is not None:
        return 1
    window.raise_()
    window.activateWindow()

    def ready() -> None:
        if window.isActiveWindow() and not window.is_refreshing():
            print("ready", flush=True)
        else:
            window.activateWindow()
            QTimer.singleShot(100, ready)

    QTimer.singleShot(0, ready)
    stack = window.session.undo_stack
    stack.indexChanged.connect(lambda index: print("undo:", stack.text(index - 1), file=sys.stderr, flush=True))
    app.focusChanged.connect(lambda _old, new: print("focus:", type(new).__name__, new.objectName() if new else "",
                                                     file=sys.stderr, flush=True))
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
