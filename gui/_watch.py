"""Watching the open file for changes by other programs."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

from . import _disk
from ._disk import Fingerprint

CHECK_DELAY_MS = 100  # editors replace files in several steps; look once they are done


class FileWatch(QObject):
    """Follows one file: `changed` says, once per change, that its content is no longer what we know.

    What we know is the fingerprint of what was last loaded or saved. Size and time decide quickly;
    the content hash decides for sure, so a new time with the same content is not a change.
    """

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path: Path | None = None
        self.known: Fingerprint | None = None
        self._reported: str | None = None  # the change already reported: its digest, or "gone"
        self._external = False
        self._timer = QTimer(self, singleShot=True, interval=CHECK_DELAY_MS)
        self._timer.timeout.connect(self._timed_check)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._timer.start)
        # The folder too: an editor that saves by renaming a new file over ours drops the file watch.
        self._watcher.directoryChanged.connect(self._timer.start)

    @property
    def external(self) -> bool:
        """The file differs from what we know (changed, replaced or deleted by someone else)."""
        return self._external

    def follow(self, path: Path | None, known: Fingerprint | None) -> None:
        """Watch `path`, known to hold `known` (None: unknown, or no file)."""
        self.stop()
        self.path, self.known = path, known
        self._reported, self._external = None, False
        self._watch()

    def stop(self) -> None:
        watched = self._watcher.files() + self._watcher.directories()
        if watched:
            self._watcher.removePaths(watched)

    def _watch(self) -> None:
        if self.path is None:
            return
        watched = self._watcher.files() + self._watcher.directories()
        for candidate in (self.path, self.path.parent):
            if candidate.exists() and os.fspath(candidate) not in watched:
                self._watcher.addPath(os.fspath(candidate))

    @Slot()
    def _timed_check(self) -> None:
        # Size and time first: the file is read and hashed only when they moved (never after our own
        # save). A same-size rewrite within one tick of the clock slips past here, not past a save's own check
        # (`_disk.differs`).
        self.check(thorough=False)

    def check(self, *, thorough: bool = True) -> None:
        """Look at the file now; emit `changed` if it differs and this change was not reported yet."""
        if self.path is None:
            return
        self._watch()
        now = _disk.current(self.path, self.known, thorough=thorough)
        if now is not None and self.known is not None and now.digest == self.known.digest:
            self.known = now  # touched, same content: remember the new time, so we need not rehash
            self._external, self._reported = False, None
            return
        if now is None and self.known is None:
            return
        self._external = True
        state = now.digest if now is not None else "gone"
        if state == self._reported:
            return
        self._reported = state
        if now is None:
            self.changed.emit(f"{self.path} was deleted or moved by another program.")
        else:
            self.changed.emit(f"{self.path} was changed on disk by another program.")
