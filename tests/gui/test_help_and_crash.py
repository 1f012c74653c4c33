"""Help → Contents shows the installed manual, About names the version, and an unexpected error is logged and shown
in a dialog with the details to copy."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QLabel

from contextdeck import __version__
from contextdeck.gui import _crash
from contextdeck.gui._crash import CrashDialog, ExceptionReporter, start_log, stop_log
from contextdeck.gui._help import HelpBrowser, about_text
from contextdeck.gui._window import MainWindow


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    path = start_log(tmp_path / "log")
    assert path is not None
    yield path
    stop_log()


@pytest.fixture
def reporter(qtbot: Any) -> Iterator[ExceptionReporter]:
    hooks = ExceptionReporter()
    hooks.install()
    yield hooks
    hooks.uninstall()
    if hooks.dialog is not None:
        hooks.dialog.close()


def raise_one() -> None:
    """Calls the installed `sys.excepthook` as Qt does for an exception a slot did not catch."""
    import sys

    try:
        _ = 1 / 0
    except ZeroDivisionError:
        sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]


def test_f1_opens_the_manual(qtbot: Any, refund_window: MainWindow) -> None:
    """F1 (Help → ContextDeck Help) shows the README; its links to docs/ open in the same browser."""
    action = refund_window.findChild(QAction, "help")
    assert action.shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)
    action.trigger()
    browser = refund_window.findChild(HelpBrowser)
    assert isinstance(browser, HelpBrowser)
    qtbot.waitUntil(browser.isVisible)
    assert "ContextDeck" in browser.browser.toPlainText()
    assert browser.browser.source().fileName() == "README.md"
    assert browser.windowTitle() == "ContextDeck Help — README.md"  # it said "ContextDeck Help — "
    browser.browser.setSource(browser.browser.source().resolved("docs/install.md"))
    assert "Installing ContextDeck" in browser.browser.toPlainText()
    assert browser.windowTitle() == "ContextDeck Help — install.md"
    browser.close()


def test_the_manuals_contents_are_reached_by_keys(qtbot: Any, refund_window: MainWindow) -> None:
    """Alt+Home goes back to the README from any page, as Back and Forward have their keys: the toolbar's buttons
    take no focus (Tab in the page goes from link to link)."""
    refund_window.findChild(QAction, "help").trigger()
    browser = refund_window.findChild(HelpBrowser)
    assert isinstance(browser, HelpBrowser)
    qtbot.waitUntil(browser.isVisible)
    browser.activateWindow()
    qtbot.waitUntil(browser.isActiveWindow)
    browser.browser.setSource(browser.browser.source().resolved("docs/install.md"))
    browser.browser.setSource(browser.browser.source().resolved("files.md"))
    qtbot.keyClick(browser.browser, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert browser.browser.source().fileName() == "install.md"
    qtbot.keyClick(browser.browser, Qt.Key.Key_Home, Qt.KeyboardModifier.AltModifier)
    assert browser.browser.source().fileName() == "README.md"
    browser.close()


def test_about_names_the_version(log_file: Path) -> None:
    """About says which ContextDeck it is, on which Qt, and where its log is."""
    text = about_text()
    assert f"ContextDeck {__version__}" in text
    assert str(log_file) in text


def test_an_unexpected_error_is_logged_and_shown(qtbot: Any, log_file: Path, reporter: ExceptionReporter) -> None:
    """The traceback goes to the log file and into a dialog (after the failed call returns), whose Copy Details
    puts it on the clipboard; the dialog names the log file."""
    raise_one()
    assert reporter.dialog is None  # shown on the next turn of the event loop, not inside the failed call
    qtbot.waitUntil(lambda: reporter.dialog is not None and reporter.dialog.isVisible())
    dialog = reporter.dialog
    assert isinstance(dialog, CrashDialog)
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = log_file.read_text(encoding="utf-8")
    assert "unexpected error" in logged
    assert "ZeroDivisionError: division by zero" in logged
    assert "ZeroDivisionError: division by zero" in dialog.details
    assert f"ContextDeck {__version__}" in dialog.details
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == dialog.details
    assert any(str(log_file) in label.text() for label in dialog.findChildren(QLabel))


def test_one_dialog_at_a_time(qtbot: Any, log_file: Path, reporter: ExceptionReporter) -> None:
    """Errors while the dialog is open are logged, not stacked in more dialogs."""
    raise_one()
    qtbot.waitUntil(lambda: reporter.dialog is not None)
    first = reporter.dialog
    raise_one()
    qtbot.wait(50)
    assert reporter.dialog is first
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert log_file.read_text(encoding="utf-8").count("ZeroDivisionError: division by zero") == 2


def test_an_error_in_a_thread_is_shown_on_the_gui_thread(qtbot: Any, log_file: Path,
                                                         reporter: ExceptionReporter) -> None:
    """A worker thread's uncaught exception reaches the same dialog, opened by the GUI thread."""
    def fail() -> None:
        raise ValueError("in a worker")

    worker = threading.Thread(target=fail)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: reporter.dialog is not None and reporter.dialog.isVisible())
    assert reporter.dialog is not None
    assert "ValueError: in a worker" in reporter.dialog.details


def test_the_log_folder_is_the_users_state_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """On Linux the log goes to $XDG_STATE_HOME/contextdeck/log (~/.local/state/contextdeck/log)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert _crash.log_folder() == tmp_path / "contextdeck" / "log"
