"""The log file and the exception hook: what goes wrong in the window is written to a rotating log in the user's
log folder and shown in a dialog with the details to copy, instead of going to the stderr a desktop window
does not have."""

from __future__ import annotations

import logging
import platform
import sys
import threading
import traceback
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

import PySide6
from PySide6.QtCore import QObject, QStandardPaths, Qt, QtMsgType, QUrl, Signal, qInstallMessageHandler, qVersion
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from contextdeck import __version__

LOG_NAME = "contextdeck.log"
LOG_BYTES = 1_000_000  # then contextdeck.log.1 ... .3: a few MB at most, never more
LOG_BACKUPS = 3

log = logging.getLogger("contextdeck")
_handler: RotatingFileHandler | None = None


def log_folder() -> Path:
    """The user's log folder: `$XDG_STATE_HOME/contextdeck/log` (~/.local/state/…) where Qt knows the state
    location (6.7 and later), else the cache folder's."""
    where = getattr(QStandardPaths.StandardLocation, "GenericStateLocation",
                    QStandardPaths.StandardLocation.GenericCacheLocation)
    return Path(QStandardPaths.writableLocation(where)) / "contextdeck" / "log"


def log_path() -> Path | None:
    """The log file being written, None before `start_log` (and in a screenshot, which keeps nothing)."""
    return Path(_handler.baseFilename) if _handler is not None else None


def start_log(folder: Path | None = None) -> Path | None:
    """Log to `folder/contextdeck.log` (the user's log folder by default), rotated at `LOG_BYTES`: this
    program's records, Python's warnings and Qt's warnings. Returns the file, or None when it cannot be
    written (the window runs without a log rather than not at all)."""
    global _handler
    folder = folder or log_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(folder / LOG_NAME, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS,
                                      encoding="utf-8")
    except OSError as error:
        print(f"contextdeck: cannot write the log in {folder}: {error}", file=sys.stderr)
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    stop_log()
    _handler = handler
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(min(root.level, logging.INFO) or logging.INFO)
    logging.captureWarnings(True)
    qInstallMessageHandler(_qt_message)
    log.info("started: %s", _versions())
    return Path(handler.baseFilename)


def stop_log() -> None:
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None
        qInstallMessageHandler(None)


_QT_LEVELS = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
              QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
              QtMsgType.QtFatalMsg: logging.CRITICAL}


def _qt_message(kind: QtMsgType, _context: object, message: str) -> None:
    """Qt's messages into the log, and on stderr as Qt would print them."""
    logging.getLogger("qt").log(_QT_LEVELS.get(kind, logging.WARNING), "%s", message)
    print(message, file=sys.stderr)


def _versions() -> str:
    return (f"ContextDeck {__version__}, Python {platform.python_version()}, Qt {qVersion()}, "
            f"PySide6 {PySide6.__version__}, {platform.platform()}")


class CrashDialog(QDialog):
    """An unexpected error: what happened in a line, the details to copy, where the log is."""

    def __init__(self, summary: str, details: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CrashDialog")
        self.setWindowTitle("ContextDeck — Unexpected Error")
        self.resize(720, 460)
        self.details = details
        text = QLabel(f"<b>Something went wrong:</b> {_escaped(summary)}<br>The window keeps running. If it "
                      "misbehaves, save your work under a new name and restart ContextDeck. To report the "
                      "problem, copy the details below.", self)
        text.setWordWrap(True)
        shown = QPlainTextEdit(details, self)
        shown.setReadOnly(True)
        shown.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        path = log_path()
        where = QLabel(f"The log: {path}" if path is not None else "No log file is written.", self)
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton("&Copy Details", self)
        self.copy_button.clicked.connect(self.copy)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        if path is not None:
            folder = QPushButton("Open Log &Folder", self)
            folder.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent))))
            buttons.addButton(folder, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (text, shown, where, buttons):
            layout.addWidget(widget)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.details)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ExceptionReporter(QObject):
    """`sys.excepthook` and `threading.excepthook`: an exception nothing caught (in a slot, an event handler,
    a thread) is logged with its traceback and shown in a `CrashDialog`, one at a time (more while one is
    open go to the log only). The dialog opens on the GUI thread's next turn, never inside the failed call."""

    reported = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dialog: CrashDialog | None = None
        self.reported.connect(self._show, Qt.ConnectionType.QueuedConnection)
        self._previous: tuple[Callable[..., object], Callable[..., object]] | None = None

    def install(self) -> None:
        self._previous = (sys.excepthook, threading.excepthook)
        sys.excepthook = self.hook
        threading.excepthook = self._thread_hook

    def uninstall(self) -> None:
        if self._previous is not None:
            sys.excepthook, threading.excepthook = self._previous
            self._previous = None

    def hook(self, kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):  # Ctrl+C in the terminal that started the window: quit
            sys.__excepthook__(kind, error, trace)
            QApplication.quit()
            return
        log.error("unexpected error", exc_info=(kind, error, trace))
        details = f"{_versions()}\n\n{''.join(traceback.format_exception(kind, error, trace))}"
        self.reported.emit(f"{kind.__name__}: {error}", details)

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            self.hook(args.exc_type, args.exc_value, args.exc_traceback)

    def _show(self, summary: str, details: str) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            return
        parent = QApplication.activeWindow()
        self.dialog = CrashDialog(summary, details, parent)
        self.dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog.destroyed.connect(self._forget)
        self.dialog.show()

    def _forget(self) -> None:
        self.dialog = None
