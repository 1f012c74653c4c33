"""Reading and parsing a document on a worker thread, with progress, cancellable."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Signal

from contextdeck.engine import Document, DocumentError, Shape, parse_document

from ._disk import Fingerprint, digest

CHUNK = 1 << 20  # progress is reported once per MiB read


@dataclass(frozen=True)
class Loaded:
    """A parsed document and the fingerprint of the bytes it came from."""

    document: Document
    fingerprint: Fingerprint


class _Signals(QObject):
    progress = Signal(int, int)
    loaded = Signal(object)  # Loaded
    failed = Signal(str)


class LoadTask(QRunnable):
    """Read `source` in chunks (reporting progress), then parse it; `cancel()` drops the result.

    `document_path` becomes the document's path (a recovery file's is its original); `shape` says
    whether to read JSON Lines (else the extension of `source` decides).
    """

    def __init__(self, source: Path, document_path: Path | None, *, shape: Shape | None = None) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the session holds it, and its signals, for as long as it matters
        self.source = source
        self.name = str(source)
        self.document_path = document_path
        self.jsonl = shape is Shape.JSONL if shape is not None else source.suffix.lower() == ".jsonl"
        self.signals = _Signals()
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def run(self) -> None:
        result: Loaded | str | None
        try:
            result = self._load()
        except DocumentError as error:
            result = str(error)
        except OSError as error:
            result = f"{self.name}: {error.strerror or error}"
        except Exception as error:  # never let a worker die silently: the window must hear of it
            result = f"{self.name}: {type(error).__name__}: {error}"
        if self.cancelled:
            return
        if isinstance(result, Loaded):
            self.signals.loaded.emit(result)
        elif result is not None:
            self.signals.failed.emit(result)

    def _load(self) -> Loaded | None:
        chunks: list[bytes] = []
        with self.source.open("rb") as stream:
            status = self.source.stat()
            total = max(status.st_size, 1)
            done = 0
            self.signals.progress.emit(0, total)
            while chunk := stream.read(CHUNK):
                if self.cancelled:
                    return None
                chunks.append(chunk)
                done += len(chunk)
                self.signals.progress.emit(min(done, total), total)
        raw = b"".join(chunks)
        fingerprint = Fingerprint(len(raw), status.st_mtime_ns, digest(raw))
        document = parse_document(raw, self.name, jsonl=self.jsonl, path=self.document_path)
        return None if self.cancelled else Loaded(document, fingerprint)
