"""Per-document settings kept across restarts: pinned watches, breakpoints, expanded state paths, dock layout.

Never beside the document: its folder is the user's (under version control, shared, read-only). Each
document has one small JSON file in the application-data folder, named by a hash of the document's
absolute path, written atomically (`_disk.write_file`) a moment after a change and when another document replaces
it, on a worker thread (a write waits for the disk, longer than a frame on a busy one), and at once when the
window closes.
See docs/files.md.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from ._disk import write_file

__all__ = ["DocumentSidecar", "SidecarStore"]

FORMAT = "contextdeck-document-settings/1"
WRITE_DELAY_MS = 500  # changes come in bursts (expanding a tree, pinning several watches): one write each
# One worker for every window's settings: the writes of one file land in the order they were asked.
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextdeck-settings")


def _absolute(document: Path) -> Path:
    try:
        return document.resolve()
    except OSError:
        return document.absolute()


class SidecarStore:
    """The folder of sidecar files: one JSON object of settings per document path."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def file_for(self, document: Path) -> Path:
        key = hashlib.sha256(os.fsencode(_absolute(document))).hexdigest()[:32]
        return self.directory / f"{key}.json"

    def read(self, document: Path) -> dict[str, Any]:
        """The settings kept for `document`; {} when none, or when the file is unreadable or another's."""
        try:
            raw = json.loads(self.file_for(document).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("document") != str(_absolute(document)):
            return {}
        values = raw.get("values")
        return values if isinstance(values, dict) else {}

    def write(self, document: Path, values: dict[str, Any]) -> str | None:
        """Replace the settings of `document` atomically; None on success, else why not."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            return str(error)
        record = {"format": FORMAT, "document": str(_absolute(document)), "values": values}
        return write_file(self.file_for(document), json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8"))

    def prune(self) -> int:
        """Remove the settings of documents that no longer exist; how many were removed."""
        removed = 0
        for file in self.directory.glob("*.json") if self.directory.is_dir() else ():
            try:
                document = json.loads(file.read_text(encoding="utf-8")).get("document")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(document, str) and not Path(document).exists():
                with contextlib.suppress(OSError):
                    file.unlink()
                    removed += 1
        return removed


class DocumentSidecar(QObject):
    """The open document's settings, by key: `value(key, default)` and `set_value(key, value)`.

    Values are JSON values (lists, objects, strings, numbers, booleans, None) and are copied in and
    out. An untitled document's settings live in memory until Save As gives it a path. Keys in use:
    "watches" (pinned expressions, as typed), "expanded" (state view paths), "breakpoints", "layout" (the
    window's docks, `QMainWindow.saveState` in base64), "experiments" (the Experiments pane's).
    """

    writeFailed = Signal(str)  # the settings file could not be written (a background matter: no dialog)
    switching = Signal()  # the open document's settings are about to be written: keep what is kept only on leaving
    switched = Signal()  # another document's settings are in (the session then announces the document)

    def __init__(self, store: SidecarStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self._document: Path | None = None
        self._values: dict[str, Any] = {}
        self._pending = False  # changed since the last write
        self._writing: Future[None] | None = None  # the write on the worker, if one was asked for
        self._written: dict[Path, Future[None]] = {}  # by settings file, the last write asked for (`switch`)
        self._timer = QTimer(self, singleShot=True, interval=WRITE_DELAY_MS)
        self._timer.timeout.connect(self._write_apart)

    @property
    def document(self) -> Path | None:
        return self._document

    def value(self, key: str, default: Any = None) -> Any:
        return copy.deepcopy(self._values.get(key, default))

    def set_value(self, key: str, value: Any) -> None:
        """Keep `value` under `key` (written a moment later); raises ValueError when it is not JSON."""
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"the setting {key!r} must be a JSON value: {error}") from error
        if self._values.get(key) == value and key in self._values:
            return
        self._values[key] = copy.deepcopy(value)
        self._pending = True
        if self._document is not None:
            self._timer.start()

    def switch(self, document: Path | None) -> None:
        """Another document is open: what is pending for this one is written on the worker (a write waits for the
        disk twice, most of a frame, in the turn that hands the new document over), then that one's settings are
        read: the same document's are the values being written; another's from its file, once a write of that file
        under way is done."""
        self.switching.emit()
        leaving, values = self._document, self._values
        self._timer.stop()
        self._write_apart()
        self._document, self._pending = document, False
        if document is None:
            self._values = {}
        elif leaving == document:
            self._values = values
        else:  # (another name of the leaving document shares its file: read once its write is done)
            written = self._written.pop(self.store.file_for(document), None)
            if written is not None:
                written.result()
            self._values = self.store.read(document)
        self.switched.emit()

    def holds(self, document: Path) -> bool:
        """Whether these are `document`'s settings (it is the open document, under whatever name)."""
        return self._document is not None and _absolute(self._document) == _absolute(document)

    def update(self, document: Path, key: str, change: Callable[[Any], Any]) -> None:
        """Set `key` of `document`'s settings to `change(its value now)`, whether or not it is the open document (a
        run that ends after its document was left keeps its results there). Another document's file is read and
        written on the worker, after the writes of it asked for before; opening it waits for this one."""
        if self.holds(document):
            self.set_value(key, change(self.value(key)))
            return

        def write() -> None:
            values = self.store.read(document)
            values[key] = change(copy.deepcopy(values.get(key)))
            self._write(document, values)

        file = self.store.file_for(document)
        self._written = {file: future for file, future in self._written.items() if not future.done()}
        self._written[file] = _WRITER.submit(write)

    def move(self, document: Path) -> None:
        """The document was saved under another name: its settings go with it."""
        if not self.holds(document):
            self._document = document
            if self._values:
                self._pending = True
                self._timer.start()

    def flush(self) -> None:
        """Write pending changes now (closing), after the writes on the worker, if any."""
        self._timer.stop()
        if self._writing is not None:
            self._writing.result()
            self._writing = None
        if not self._pending or self._document is None:
            return
        self._pending = False
        self._write(self._document, dict(self._values))

    def _write_apart(self) -> None:
        if not self._pending or self._document is None:
            return
        self._pending = False
        self._writing = _WRITER.submit(self._write, self._document, dict(self._values))  # (values are replaced whole)
        self._written = {file: future for file, future in self._written.items() if not future.done()}
        self._written[self.store.file_for(self._document)] = self._writing

    def _write(self, document: Path, values: dict[str, Any]) -> None:
        error = self.store.write(document, values)
        if error is not None:
            with contextlib.suppress(RuntimeError):  # the window closed meanwhile: nobody to tell
                self.writeFailed.emit(f"Could not keep the settings of {document.name} in {self.store.directory}: "
                                      f"{error}")
