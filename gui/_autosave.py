"""Writing files on a worker thread, from a snapshot taken on the GUI thread: the recovery file, and the
document's own file when it is saved."""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QObject, QRunnable, Signal

from contextdeck._runtime import freeze_young
from contextdeck.engine import Context, Document, describe_exception, os_reason, write_atomically

from . import _disk
from ._disk import Fingerprint
from ._recovery import RecoveryStore


class _Messages:
    """Stands in for a `Context` where `Document.dumps` only reads `.messages`: a frozen copy of them."""

    def __init__(self, messages: Sequence[Any]) -> None:
        self.messages = messages


def snapshot(document: Document, messages: Sequence[Any] | None = None) -> Document:
    """The document as it is now, safe to serialise on another thread while edits go on.

    `Context.messages` copies the engine's list of the messages in order, a copy of pointers; the worker then
    reads only that list, and the messages are immutable dicts that edits replace, never mutate, so what it writes
    is the document as it was at this moment, whatever is edited meanwhile. Building a real `Context` would
    classify every message again. The copy is frozen at once (`freeze_young`): left young, every collection while
    the worker writes would walk all its items. `messages` is such a copy taken already: the autosave's, taken in
    slices (`Snapshot`, as its pieces): at a million messages the copy is more than a turn of the GUI thread.
    """
    if messages is None:
        messages = document.context.messages
        freeze_young()
    frozen = cast(Context, _Messages(messages))
    return dataclasses.replace(document, context=frozen, envelope=dict(document.envelope))


def serialise(document: Document, *, indent: bool = False) -> Iterator[bytes]:
    """The document's bytes a piece at a time (`Document.pieces`); compact for a recovery file."""
    for piece in document.pieces(indent=indent):
        yield piece.encode("utf-8")


PIECES_PER_STEP = 256  # a few tenths of a millisecond of serialising at a time
STEP_PAUSE_S = 0.001  # then a pause, with the interpreter lock free


def paced(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """`pieces`, a step at a time, with a pause between steps.

    The worker serialises in Python and holds the interpreter lock while it does. Running flat out beside
    a turn of the GUI thread, it would make that thread wait for the lock at each of its calls into Qt (up to
    a switch interval each), several times the turn's own work. Paced, the lock is never held for more than
    a step; the file takes longer to write, and the recovery file it replaces stays whole until then.
    """
    iterator = iter(pieces)
    while step := list(islice(iterator, PIECES_PER_STEP)):
        yield from step
        time.sleep(STEP_PAUSE_S)


class _Signals(QObject):
    done = Signal(object)  # the recovery file's Path, or the error's text


class SaveTask(QRunnable):
    """Writes the document's file; `result` is then its new `Fingerprint` (None when it cannot be read back) or
    the reason it was not saved, in words, and `done` is emitted.

    `guard` is the file as it was opened or last saved (its path and fingerprint): when it now holds something
    else, another program changed it and nothing is written. Reading, hashing and writing all happen here, so a
    large file keeps the window's thread waiting for none of it.
    """

    def __init__(self, document: Document, target: Path, guard: tuple[Path, Fingerprint | None] | None) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.document = document
        self.target = target
        self.guard = guard
        self.result: Fingerprint | str | None = None
        self.signals = _Signals()

    def run(self) -> None:
        try:
            self.result = self._write()
        except Exception as error:  # reported to the window as a failed save, never a dead worker
            self.result = f"Could not save {self.target}: {type(error).__name__}: {error}"
        self.signals.done.emit(self.result)

    def _write(self) -> Fingerprint | str | None:
        if self.guard is not None and _disk.differs(*self.guard):
            return (f"{self.target} was changed on disk by another program since it was opened; "
                    "reload it, save under another name, or overwrite it deliberately.")
        hashing = hashlib.sha256()
        size = 0

        def hashed(pieces: Iterable[bytes]) -> Iterator[bytes]:
            nonlocal size
            for piece in pieces:
                hashing.update(piece)
                size += len(piece)
                yield piece

        try:
            write_atomically(self.target, hashed(paced(serialise(self.document, indent=True))))
        except ValueError as unwritable:  # the edits refuse what cannot be written; never a traceback all the same
            return f"Could not save {self.target}: {describe_exception(unwritable)}"
        except OSError as error:
            return f"Could not save {self.target}: {os_reason(error)}"
        try:
            return Fingerprint(size, self.target.stat().st_mtime_ns, hashing.hexdigest())
        except OSError:
            return None


class AutosaveTask(QRunnable):
    def __init__(self, store: RecoveryStore, key: str, document: Document, original: Path | None,
                 base: Fingerprint | None) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.store = store
        self.key = key
        self.document = document
        self.original = original
        self.base = base
        self.signals = _Signals()

    def run(self) -> None:
        self.signals.done.emit(write_recovery(self.store, self.key, self.document, self.original, self.base))


def write_recovery(store: RecoveryStore, key: str, document: Document, original: Path | None,
                   base: Fingerprint | None, *, pace: bool = True) -> Path | str:
    """Write `document`'s recovery file (`paced` unless told otherwise): its path, or the reason it was not
    written, in words (`recovery_failure` says it to the user)."""
    pieces = serialise(document)
    try:
        return store.write(key, paced(pieces) if pace else pieces, original, document.shape, base)
    except Exception as error:  # reported to the window as a failed save, never a dead worker or a traceback
        return f"{type(error).__name__}: {error}"


def recovery_failure(store: RecoveryStore, reason: str) -> str:
    """What the window says when `store` could not write a recovery file, `reason` being `write_recovery`'s."""
    return f"Could not write the recovery file in {store.directory}: {reason}"
