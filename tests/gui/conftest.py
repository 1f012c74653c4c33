"""Fixtures shared by the GUI tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings
from PySide6.QtWidgets import QApplication, QWidget

from contextdeck.gui._app import create_window
from contextdeck.gui._editor import DataEditor
from contextdeck.gui._inspector._async import release
from contextdeck.gui._keyboard import FocusFrames
from contextdeck.gui._theme import apply_theme
from contextdeck.gui._window import MainWindow

# ms a wait may last for what a loaded 2-core machine makes slow: work that starts a worker process (a delegated
# run, the output form's validation) and a run's coroutine waiting for its share of the GUI thread.
LOADED_MS = 30_000


@pytest.fixture(autouse=True)
def deleted_after_each_test() -> Iterator[None]:
    """The widgets pytest-qt closed after the test (`deleteLater`) are deleted at once, by Qt.

    Otherwise they wait for the next test's event loop, and a collection of everything in between (the idle
    tests run one) frees their wrappers while their Qt objects are alive: the collector then has Python delete
    Qt objects in an order Qt does not expect, the crash that tests/gui/collector_clears_first.py replays."""
    yield
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(autouse=True)
def loop_let_go() -> Iterator[None]:
    """A test whose window spawned a task (an import, a run) left the window's loop called the running one: a
    later test's `asyncio.run` (the command line's `eval`) then failed "cannot be called from a running event
    loop", so that test files passed alone and failed after test_traces_window.py."""
    yield
    release()


@pytest.fixture(autouse=True)
def keys_out_of_use() -> None:
    """Each test starts as after a click: the keyboard's `FocusFrames` lives as long as the application, and a
    key one test pressed put the next test's focused widget in a ring its pixels were compared without."""
    app = QApplication.instance()
    frames = app.findChild(FocusFrames) if app is not None else None
    if frames is not None:
        frames.keys_in_use = False
        frames.frame(None)


def switch_theme(theme: str) -> None:
    """Switch the application's theme, and let the widgets hear of the new palette (Qt posts the change to each)."""
    apply_theme(theme)
    QApplication.processEvents()


@pytest.fixture
def theme() -> Iterator[Callable[[str], None]]:
    """`theme("dark")` switches the application's theme (`switch_theme`); the light theme is back after the test,
    however it ends, so no later test runs dark."""
    switch_theme("light")
    yield switch_theme
    switch_theme("light")


@pytest.fixture
def editor(qtbot: Any) -> DataEditor:
    """A shown data editor, cleaned up after the test."""
    widget = DataEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 500)
    widget.show()
    return widget


@pytest.fixture
def refund_window(qtbot: Any, tmp_path: Path, examples: Path) -> Iterator[MainWindow]:
    """The real window (which installs the inspector itself) on the refund workflow; settings in tmp_path."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = create_window(settings, tmp_path / "recovery")
    settings.setParent(win)  # deleted with the window, as everything it uses (see deleted_after_each_test)
    qtbot.addWidget(win)
    win.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    win.show()
    with qtbot.waitSignal(win.document.documentShown, timeout=10000):
        win.session.open(examples / "refund_workflow.json")
    yield win
    win.session.close()
    release()


WindowMaker = Callable[[Path | None], MainWindow]


@pytest.fixture
def open_window(qtbot: Any, tmp_path: Path) -> Iterator[WindowMaker]:
    """Makes real windows as a start of the application would (its settings and data folders in tmp_path,
    so a second window is the next start), each on a document (or none) and active; closed after the test."""
    made: list[MainWindow] = []

    def make(path: Path | None) -> MainWindow:
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        window = create_window(settings, tmp_path / "recovery")
        settings.setParent(window)
        qtbot.addWidget(window)
        window.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
        window.show()
        if path is not None:
            with qtbot.waitSignal(window.document.documentShown, timeout=10000):
                window.session.open(path)
        window.activateWindow()  # after the load's progress dialog
        qtbot.waitUntil(window.isActiveWindow)
        made.append(window)
        return window

    yield make
    for window in made:
        window.session.close()


@pytest.fixture
def open_messages(open_window: WindowMaker, tmp_path: Path) -> Callable[[list[Any], str], MainWindow]:
    """A window on a document of these messages (written to tmp_path under the name given), its cursor where the
    test puts it: Follow Latest off."""
    def make(messages: list[Any], name: str) -> MainWindow:
        path = tmp_path / name
        path.write_text(json.dumps(messages), encoding="utf-8")
        window = open_window(path)
        window.set_follow_latest(False)
        return window

    return make


class Painted(QObject):
    """Counts the paints of `widget` and everything in it."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.widget, self.count = widget, 0
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget) and \
                (watched is self.widget or self.widget.isAncestorOf(watched)):
            self.count += 1
        return False
