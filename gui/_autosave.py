"""Writing the recovery file on a worker thread, from a snapshot taken on the GUI thread."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QObject, QRunnable, Signal

from contextdeck.engine import Context, Document

from ._disk import Fingerprint
from ._recovery import RecoveryStore


class _Messages:
    """Stands in for a `Context` where `Document.dumps` only reads `.messages`: a frozen list of them."""

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages


def snapshot(document: Document) -> Document:
    """The document as it is now, safe to serialise on another thread while edits go on.

    Copying the list is cheap (messages are immutable dicts that edits replace, never mutate);
    building a real `Context` would classify every message again.
    """
    frozen = cast(Context, _Messages(document.context.messages))
    return dataclasses.replace(document, context=frozen, envelope=dict(document.envelope))


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
            data = self.document.dumps().encode("utf-8")
            result: object = self.store.write(self.key, data, self.original, self.document.shape, self.base)
        except Exception as error:  # reported to the window as a failed save, never a dead worker
            result = f"{type(error).__name__}: {error}"
        self.signals.done.emit(result)
