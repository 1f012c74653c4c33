"""Anything the window cannot open is reported, and the open work stays (issue 31, item 4).

tests/gui/malformed/ holds small files, each malformed in its own way (nesting deeper than Python's recursion,
schemas whose keywords have the wrong types, messages that are not messages, bytes that are not UTF-8 …).
Each is opened in the real window over an edited document: the window either shows it (whatever it can show,
with its problems in the problem count) or says why it cannot; no exception escapes to Qt's event loop, and
the edited document stays open and unchanged when the file is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from contextdeck.engine import Insert
from contextdeck.gui._app import create_window
from contextdeck.gui._inspector._async import release
from contextdeck.gui._window import MainWindow

CORPUS = sorted((Path(__file__).parent / "malformed").iterdir())
REFUND = Path(__file__).resolve().parents[2] / "resources" / "examples" / "refund_workflow.json"


@pytest.fixture(scope="module")
def window(qapp: QApplication, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainWindow]:
    """One real window for every file (conftest's `refund_window` makes one a test), as a user opens file after
    file in one window. Each case opens the refund example in it again first (`refund`), so each starts on the
    same document, edited the same way; what a case checks is the window's answer to one open. A file that
    left the window broken still fails: its own case when an exception reaches Qt's loop, the next case when
    the refund example no longer opens or shows in every view."""
    folder = tmp_path_factory.mktemp("malformed")
    settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    shared = create_window(settings, folder / "recovery")
    settings.setParent(shared)
    shared.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    shared.show()
    yield shared
    shared.session.close()
    release()
    shared.close()
    shared.deleteLater()


@pytest.fixture
def refund(qtbot: Any, window: MainWindow) -> MainWindow:
    """The shared window on the refund example, opened afresh (the edited document of the case before dropped)."""
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(REFUND)
    return window


@pytest.mark.parametrize("path", CORPUS, ids=[path.name for path in CORPUS])
def test_a_malformed_file_is_reported_or_shown_and_the_work_stays(qtbot: Any, refund: MainWindow,
                                                                  path: Path) -> None:
    """Open `path` over an edited document: shown (every view filled, each message selectable), or refused with
    a message naming the file, the edited document kept."""
    window = refund
    window.apply_edit(Insert(0, {"type": "text", "role": "user", "text": "unsaved work"}))
    before = window.session.document.dumps()
    failures: list[str] = []
    finished: list[bool] = []

    def failed(message: str) -> None:
        failures.append(message)

    def done() -> None:
        finished.append(True)

    window.session.loadFailed.connect(failed)
    window.session.loadFinished.connect(done)
    try:
        window.session.open(path)
        qtbot.waitUntil(lambda: bool(failures or finished), timeout=20000)
    finally:  # (the window outlives the case)
        window.session.loadFailed.disconnect(failed)
        window.session.loadFinished.disconnect(done)
    if failures:
        assert path.name in failures[0] or str(path) in failures[0]
        assert window.session.document.dumps() == before
        assert window.session.is_dirty()
        return
    for index in range(len(window.context())):  # every message shown in the editor and the views
        window.select_message(index)
        for tab in range(window.editor.tabs.count()):
            window.editor.tabs.setCurrentIndex(tab)
            QApplication.processEvents()
    window.llm_dock.raise_()
    window.diagnostics.check(window.session.document)
    qtbot.waitUntil(lambda: not window.is_refreshing())
    QApplication.processEvents()
