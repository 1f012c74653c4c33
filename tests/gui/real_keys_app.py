"""The window on DOC in a process of its own, for tests/gui/test_real_keys.py: real key events from xdotool
under Xvfb and a window manager. Prints "ready" once the window is active on the document's last message, then
a line for each thing a test may wait for: "focus: CLASS NAME" (the focus widget's class and object name),
"selected: N" (message N selected, in the editor),
"menu shown: TITLE" and "menu hidden: TITLE", "undo: TEXT" (an undo step). Each save (Ctrl+S, sent as keys)
writes DOC back."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from contextdeck.gui._app import create_window, open_and_wait


def say(line: str) -> None:
    print(line, flush=True)


class Menus(QObject):
    """Says each menu shown or hidden: a key meant for an open menu is typed once it is on screen."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(watched, QMenu) and event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            shown = "shown" if event.type() == QEvent.Type.Show else "hidden"
            say(f"menu {shown}: {watched.title().replace('&', '')}")
        return False


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
            say("ready")
        else:
            window.activateWindow()
            QTimer.singleShot(100, ready)

    QTimer.singleShot(0, ready)
    stack = window.session.undo_stack
    stack.indexChanged.connect(lambda index: say(f"undo: {stack.text(index - 1)}"))
    window.document.messageSelected.connect(lambda index: say(f"selected: {index}"))
    app.focusChanged.connect(lambda _old, new: say(f"focus: {type(new).__name__} {new.objectName() if new else ''}"))
    menus = Menus(app)
    app.installEventFilter(menus)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
