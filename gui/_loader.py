"""Reading and parsing a document on a worker thread, with progress, cancellable."""

from __future__ import annotations

import codecs
import hashlib
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Signal

from contextdeck._runtime import loading
from contextdeck.engine import Document, DocumentError, Shape

from ._disk import Fingerprint
from ._inspector._calls import Reads, watch_reads
from ._stepwise import Cancelled, parse_stepwise

CHUNK = 1 << 20  # progress is reported once per MiB read
TOTAL = 1000  # progress is in thousandths of the whole load
# At most one progress signal a frame. Each cross-thread emit lets go of the GIL and takes it back; done much
# more often than the interpreter's switch interval, that keeps resetting the GUI thread's switch request, and
# the GUI thread would starve for the whole parse.
PROGRESS_INTERVAL = 0.016
READ_SHARE = 0.1  # reading the bytes; parsing and building the context are the rest


@dataclass(frozen=True)
class Loaded:
    """A parsed document, the fingerprint of the bytes it came from, and the watches on its calls' reads."""

    document: Document
    fingerprint: Fingerprint
    reads: Reads  # made here, before the hand-over, for the calls panel (`watch_reads`)


class _Signals(QObject):
    progress = Signal(int, int)
    loaded = Signal(object)  # Loaded
    failed = Signal(str)


class LoadTask(QRunnable):
    """Read `source` in chunks, then parse it a message at a time; `cancel()` drops the result.

    Progress goes out as (done, 1000), at most once per thousandth and once per `PROGRESS_INTERVAL`.

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
        self._reported = -1
        self._reported_at = -PROGRESS_INTERVAL  # the first report goes out at once

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def run(self) -> None:
        result: Loaded | str | None
        with loading() as load:  # the collector off while the document is built, the document frozen after
            try:
                result = self._load()
            except Cancelled:
                result = None
            except DocumentError as error:
                result = str(error)
            except OSError as error:
                result = f"{self.name}: {error.strerror or error}"
            except Exception as error:  # never let a worker die silently: the window must hear of it
                result = f"{self.name}: {type(error).__name__}: {error}"
            if self.cancelled or not isinstance(result, Loaded):
                load.failed()  # the document open now stays open: what this made is not it
        if self.cancelled:
            return
        if isinstance(result, Loaded):
            self.signals.loaded.emit(result)
        elif result is not None:
            self.signals.failed.emit(result)

    def _progress(self, fraction: float) -> None:
        done = min(int(fraction * TOTAL), TOTAL)
        now = time.monotonic()
        if done > self._reported and (done == TOTAL or now - self._reported_at >= PROGRESS_INTERVAL):
            self._reported, self._reported_at = done, now
            self.signals.progress.emit(done, TOTAL)

    def _load(self) -> Loaded:
        # Hash and decode a chunk at a time too: one call over a whole 100 MB file would keep the GIL.
        chunks: list[bytes] = []
        parts: list[str] | None = None if self.jsonl else []
        decoder = codecs.getincrementaldecoder("utf-8")()
        hasher = hashlib.sha256()
        self._progress(0)
        with self.source.open("rb") as stream:
            status = self.source.stat()
            size = max(status.st_size, 1)
            done = 0
            while chunk := stream.read(CHUNK):
                if self.cancelled:
                    raise Cancelled
                chunks.append(chunk)
                hasher.update(chunk)
                parts = _decoded(decoder, parts, chunk)
                done += len(chunk)
                self._progress(READ_SHARE * min(done / size, 1))
        parts = _decoded(decoder, parts, b"", final=True)
        fingerprint = Fingerprint(done, status.st_mtime_ns, hasher.hexdigest())
        document = parse_stepwise(chunks, self.name, jsonl=self.jsonl, path=self.document_path, parts=parts,
                                  report=lambda part: self._progress(READ_SHARE + (1 - READ_SHARE) * part),
                                  cancelled=lambda: self.cancelled)
        reads = watch_reads(document.context, document.solution)
        self._progress(1)
        return Loaded(document, fingerprint, reads)


def _decoded(decoder: codecs.IncrementalDecoder, parts: list[str] | None, chunk: bytes, *,
             final: bool = False) -> list[str] | None:
    """`parts` with `chunk` decoded onto it; None once the bytes are not UTF-8 (the engine will say where)."""
    if parts is None:
        return None
    try:
        parts.append(decoder.decode(chunk, final))
    except UnicodeDecodeError:
        return None
    return parts
