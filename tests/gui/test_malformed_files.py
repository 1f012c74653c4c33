"""Anything the window cannot open is reported, and the open work stays (issue 31, item 4).

tests/gui/malformed/ holds small files, each malformed in its own way (nesting deeper than Python's recursion,
schemas whose keywords have the wrong types, messages that are not messages, bytes that are not UTF-8 …).
Each is opened in the real window over an edited document: the window either shows it (whatever it can show,
with its problems in the problem count) or says why it cannot; no exception escapes to Qt's event loop, and
the edited document stays open and unchanged when the file is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from contextdeck.engine import Insert
from contextdeck.gui._window import MainWindow

CORPUS = sorted((Path(__file__).parent / "malformed").iterdir())


@pytest.mark.parametrize("path", CORPUS, ids=[path.name for path in CORPUS])
def test_a_malformed_file_is_reported_or_shown_and_the_work_stays(qtbot: Any, refund_window: MainWindow,
                                                                  path: Path) -> None:
    """Open `path` over an edited document: shown (every view filled, each message selectable), or refused with
    a message naming the file, the edited document kept."""
    window = refund_window
    window.apply_edit(Insert(0, {"type": "text", "role": "user", "text": "unsaved work"}))
    before = window.session.document.dumps()
    failures: list[str] = []
    finished: list[bool] = []
    window.session.loadFailed.connect(failures.append)
    window.session.loadFinished.connect(lambda: finished.append(True))
    window.session.open(path)
    qtbot.waitUntil(lambda: bool(failures or finished), timeout=20000)
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
