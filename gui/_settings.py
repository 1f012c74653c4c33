"""Where the workbench keeps its settings and recovery files, and the recent-files list."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, QStandardPaths, Signal

ORGANIZATION = "ContextDeck"
APPLICATION = "ContextDeck"
RECENT_KEY = "files/recent"
MAX_RECENT = 10
# Writes the settings files (QSettings' own, not the documents' sidecars), one at a time in the order asked.
_SYNCER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextdeck-qsettings")


def default_settings() -> QSettings:
    """The user's settings: an INI file in the platform's config folder (e.g. ~/.config/ContextDeck/)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


class SyncApart(QObject):
    """Writes `settings` to its file on a worker thread, never on the GUI thread.

    QSettings writes itself on the next turn of the event loop after a change (an `UpdateRequest` to itself), and
    its write ends with an `fsync`: the GUI thread would wait for the disk on each theme switch or
    layout change. This eats that event and has a QSettings of the same file on a worker write it instead: the
    objects of one file in one process share their unwritten changes, and Qt locks the file for each (QSettings is
    reentrant, even over one file). Once written, `settings` syncs itself with nothing left to write (a look at
    the file), which lets it ask to be written again at its next change; if it changed while the worker wrote,
    that sync would write on the GUI thread, so the worker writes again first."""

    _written = Signal(object)  # what the file holds now: {key: value}

    def __init__(self, settings: QSettings) -> None:
        super().__init__(settings)
        self._settings = settings
        self._file, self._format = settings.fileName(), settings.format()
        self._written.connect(self._synced)  # queued: emitted by the worker, run in this object's thread
        settings.installEventFilter(self)
        # The worker's thread starts with the window: started by the first write (a document opened is remembered
        # in the recent files), it would start in the turn after the document's hand-over, where the GUI thread
        # waits for the interpreter lock while the load's thread holds it.
        _SYNCER.submit(_nothing)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            _SYNCER.submit(self._write)
            return True
        return False

    def _synced(self, written: dict[str, object]) -> None:
        if _values(self._settings) == written:
            self._settings.sync()
        else:
            _SYNCER.submit(self._write)

    def _write(self) -> None:
        settings = QSettings(self._file, self._format)
        settings.sync()
        if shiboken6.isValid(self):
            self._written.emit(_values(settings))


def _nothing() -> None:
    """A job that starts the worker's thread."""


def _values(settings: QSettings) -> dict[str, object]:
    return {key: settings.value(key) for key in settings.allKeys()}


def default_recovery_dir() -> Path:
    """`recovery/` in the platform's application-data folder (e.g. ~/.local/share/ContextDeck/ContextDeck/).

    That folder is named after the application's organisation and name; before `main` sets them
    (a test, a script) it would be named after the Python executable, so ours is used instead.
    """
    if QCoreApplication.organizationName() and QCoreApplication.applicationName():
        base = Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation))
    else:
        generic = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
        base = Path(generic) / ORGANIZATION / APPLICATION
    return base / "recovery"


def _read(settings: QSettings) -> list[str]:
    # Stored as one JSON string: QSettings' INI lists come back as a bare str when they hold one item.
    raw = settings.value(RECENT_KEY, "[]")
    try:
        value = json.loads(raw) if isinstance(raw, str) else []
    except ValueError:
        return []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _write(settings: QSettings, paths: list[str]) -> None:
    settings.setValue(RECENT_KEY, json.dumps(paths))


def recent_files(settings: QSettings) -> list[str]:
    """The recent files, most recent first; files that no longer exist are dropped (and forgotten)."""
    stored = _read(settings)
    present = [path for path in stored if Path(path).is_file()]
    if present != stored:
        _write(settings, present)
    return present


def remember(settings: QSettings, path: Path) -> None:
    """Put `path` first in the recent files, keeping at most `MAX_RECENT`."""
    name = str(path.resolve())
    paths = [name, *(item for item in _read(settings) if item != name)]
    _write(settings, paths[:MAX_RECENT])
