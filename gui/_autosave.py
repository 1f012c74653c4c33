"""Writing the recovery file on a worker thread, from a snapshot taken on the GUI thread."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QObject, QRunnable, Signal

from contextdeck._runtime import freeze_young
from contextdeck.engine import Context, Document, Shape, json_dumps

from ._disk import Fingerprint
from ._recovery import RecoveryStore


class _Messages:
    """Stands in for a `Context` where `Document.dumps` only reads `.messages`: a frozen list of them."""

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages


def snapshot(document: Document) -> Document:
    """The document as it is now, safe to serialise on another thread while edits go on.

    `Context.messages` copies the engine's list of the messages in order, a copy of pointers (cheap even on
    the GUI thread); the worker then reads only that list, and the messages
    are immutable dicts that edits replace, never mutate, so what it writes is the document as it was at
    this moment, whatever is edited meanwhile. Building a real `Context` would classify every message again.
    The copy is frozen at once (`freeze_young`): left young, every collection while the worker writes would
    walk all its items.
    """
    frozen = cast(Context, _Messages(document.context.messages))
    freeze_young()
    return dataclasses.replace(document, context=frozen, envelope=dict(document.envelope))


def serialise(document: Document) -> Iterator[bytes]:
    """The document in its shape, a message per piece (compact, a line each).

    One `dumps` of a large document is a single C call that keeps the GIL, and the GUI thread with
    it, for as long as it runs; a piece per message leaves room between pieces.
    """
    messages = document.context.messages
    if document.shape is Shape.JSONL:
        for message in messages:
            yield (json_dumps(message, indent=False) + "\n").encode("utf-8")
        return
    if document.shape is Shape.ARRAY:
        yield from _array(messages)
        yield b"\n"
        return
    request = document.to_json()
    yield b"{"
    for number, (key, value) in enumerate(request.items()):
        yield (",\n" if number else "\n").encode() + json_dumps(key, indent=False).encode("utf-8") + b": "
        if key == "context":
            yield from _array(messages)
        else:
            yield json_dumps(value, indent=False).encode("utf-8")
    yield b"\n}\n"


def _array(messages: list[Any]) -> Iterator[bytes]:
    yield b"["
    for number, message in enumerate(messages):
        yield (",\n" if number else "\n").encode() + json_dumps(message, indent=False).encode("utf-8")
    yield b"\n]"


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
        try:
            pieces = paced(serialise(self.document))
            result: object = self.store.write(self.key, pieces, self.original, self.document.shape, self.base)
        except Exception as error:  # reported to the window as a failed save, never a dead worker
            result = f"{type(error).__name__}: {error}"
        self.signals.done.emit(result)
