"""Where the workbench keeps its settings and recovery files, and the recent-files list."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

ORGANIZATION = "ContextDeck"
APPLICATION = "ContextDeck"
RECENT_KEY = "files/recent"
MAX_RECENT = 10


def default_settings() -> QSettings:
    """The user's settings: an INI file in the platform's config folder (e.g. ~/.config/ContextDeck/)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def default_recovery_dir() -> Path:
    """The platform's application-data folder, `recovery/` inside it."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base) / "recovery"


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
    settings.sync()


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
