"""The document session: the open document, its file, saving, autosave and recovery, recent files.

A Qt object without a window: the main window shows `session.document`, pushes its edits on
`session.undo_stack` (whose clean state is the saved state) and listens to the signals.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QObject, QSettings, QThreadPool, QTimer, Signal, Slot
from PySide6.QtGui import QUndoStack

from contextdeck.engine import Context, ContextView, Document, Pieces, Shape, let_go, sweep_temporaries

from . import _settings
from ._autosave import AutosaveTask, SaveTask, recovery_failure, snapshot, write_recovery
from ._background import Snapshot
from ._disk import Fingerprint
from ._inspector._calls import Reads
from ._loader import Loaded, LoadTask
from ._recovery import RecoveryCandidate, RecoveryStore, new_key
from ._sidecar import DocumentSidecar, SidecarStore
from ._slices import slices
from ._watch import FileWatch

__all__ = ["DocumentSession", "RecoveryCandidate"]

AUTOSAVE_DELAY_MS = 2000
# Changes that never pause still autosave: at most this long after the first unsaved one.
AUTOSAVE_MAX_WAIT_S = 10.0


class DocumentSession(QObject):
    """One open document and everything about its file (see docs/files.md)."""

    documentReplaced = Signal()
    pathChanged = Signal(object)  # Path | None
    dirtyChanged = Signal(bool)
    loadStarted = Signal(str)
    loadProgress = Signal(int, int)
    loadFinished = Signal()
    loadCancelled = Signal()
    loadFailed = Signal(str)
    saveFailed = Signal(str)
    externallyModified = Signal(str)
    autosaved = Signal(object)  # Path of the recovery file just written
    autosaveFailed = Signal(str)  # the recovery file could not be written (a background matter: no dialog)

    def __init__(self, settings: QSettings, recovery_dir: Path | None = None, parent: QObject | None = None,
                 *, autosave_delay_ms: int = AUTOSAVE_DELAY_MS) -> None:
        super().__init__(parent)
        self.settings = settings
        self.undo_stack = QUndoStack(self)
        self._recovery = RecoveryStore(recovery_dir if recovery_dir is not None else _settings.default_recovery_dir())
        # The open document's own settings (watches, breakpoints, expanded paths), beside the recovery folder.
        self.sidecar = DocumentSidecar(SidecarStore(self._recovery.directory.parent / "documents"), self)
        self._document = Document(Context([]), Shape.ARRAY)
        self._path: Path | None = None
        self._called: str | None = None  # an untitled document's own name (an import's agent or file), if any
        self._source: Path | None = None  # the file an untitled document was imported from, if any
        self._forced_dirty = False  # recovered content: unsaved although the undo stack is clean
        self._dirty = False
        self._key = new_key()  # this document's recovery files
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)
        self._load: LoadTask | None = None
        self._handing: Loaded | None = None  # a load's result, until the slice that hands it over
        self._recovering: RecoveryCandidate | None = None
        self._reads: Reads = {}  # see `take_reads`
        self._autosave_task: AutosaveTask | None = None
        self._autosave_copy: Snapshot | None = None  # the messages being copied for the next autosave
        self._autosave_again = False
        self._pending_since: float | None = None
        self._saving = False
        self._changes = 0  # undo stack moves, so that a save knows whether the document changed while it wrote

        self._autosave_timer = QTimer(self, singleShot=True, interval=autosave_delay_ms)
        self._autosave_timer.timeout.connect(self._autosave)
        self._watch = FileWatch(self)
        self._watch.changed.connect(self.externallyModified)
        self.undo_stack.indexChanged.connect(self._stack_changed)
        self.undo_stack.cleanChanged.connect(self._update_dirty)

    # -- state -------------------------------------------------------------------------------------

    @property
    def document(self) -> Document:
        return self._document

    def take_reads(self) -> Reads:
        """The watches the loader made on the open document's calls' reads (`watch_reads`), for the calls panel
        to keep; empty once taken, and for a document that was not loaded from a file."""
        reads, self._reads = self._reads, {}
        return reads

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def called(self) -> str | None:
        """The name an untitled document came with (an imported trace's agent or file); None for any other."""
        return self._called

    @property
    def source(self) -> Path | None:
        """The file an untitled document was imported from (its file dialogs start beside it); None for any other."""
        return self._source

    @property
    def name(self) -> str:
        """What the document is called: its file's stem; untitled, the name it came with (an imported trace's agent
        or file), else `untitled`. Exports and suggested file names use it."""
        return self._path.stem if self._path is not None else self._called or "untitled"

    @property
    def recovery_dir(self) -> Path:
        return self._recovery.directory

    @property
    def autosave_delay_ms(self) -> int:
        return self._autosave_timer.interval()

    @autosave_delay_ms.setter
    def autosave_delay_ms(self, value: int) -> None:
        self._autosave_timer.setInterval(value)

    def is_dirty(self) -> bool:
        return self._forced_dirty or not self.undo_stack.isClean()

    def is_loading(self) -> bool:
        return self._load is not None

    def wait_idle(self, msecs: int = -1) -> bool:
        """Block until the worker threads (loading, autosave) are done; for quitting and for tests."""
        return self._pool.waitForDone(msecs)

    def externally_modified(self) -> bool:
        """The file on disk was changed by another program since we loaded or saved it."""
        return self._watch.external

    def recent_files(self) -> list[str]:
        return _settings.recent_files(self.settings)

    # -- new, open, recover ---------------------------------------------------------------------------

    def new(self) -> None:
        """An empty untitled document (the caller has asked about unsaved changes)."""
        self.cancel_load(quiet=True)
        self._adopt(Document(Context([]), Shape.ARRAY), None, None)

    def open_document(self, document: Document, name: str | None = None, source: Path | None = None) -> None:
        """A document made here (an imported trace) as the open one: untitled, and unsaved until it is saved; until
        then it is called `name` and its file dialogs start beside `source`, the file it was made from."""
        self.cancel_load(quiet=True)
        self._adopt(document, None, None, called=name, source=source)
        self._forced_dirty = True
        self._update_dirty()

    def open(self, path: str | os.PathLike[str]) -> None:
        """Read and parse `path` on a worker thread; `documentReplaced` or `loadFailed` tells the end."""
        source = Path(path).absolute()  # recovery and recent files outlive the working directory
        sweep_temporaries(source.parent, source.name)  # what saves of it killed midway left behind
        self._start(LoadTask(source, source), None)

    def recover(self, candidate: RecoveryCandidate) -> None:
        """Open a recovery file as an unsaved document at its original path (loaded like `open`)."""
        task = LoadTask(candidate.recovery_file, candidate.original_path, shape=candidate.shape)
        self._start(task, candidate)

    def cancel_load(self, *, quiet: bool = False) -> None:
        """Stop the load under way, if any; its result is discarded and the open document stays."""
        task, self._load, self._recovering, self._handing = self._load, None, None, None
        if task is None:
            return
        task.cancel()
        if not quiet:
            self.loadCancelled.emit()

    def _start(self, task: LoadTask, candidate: RecoveryCandidate | None) -> None:
        self.cancel_load()
        self._load, self._recovering = task, candidate
        task.signals.progress.connect(self._load_progress)
        task.signals.loaded.connect(self._loaded)
        task.signals.failed.connect(self._load_failed)
        self.loadStarted.emit(str(task.source))
        self._pool.start(task)

    @Slot(int, int)
    def _load_progress(self, done: int, total: int) -> None:
        if self._load is not None and self.sender() is self._load.signals:
            self.loadProgress.emit(done, total)

    @Slot(object)
    def _loaded(self, loaded: Loaded) -> None:
        if self._load is None or self.sender() is not self._load.signals:
            return  # a cancelled load that finished anyway
        # The hand-over (every view taking the document) is a slice of the window's turns: in the turn the result
        # arrived in, it followed the old document's slices or its pins' folding ahead (which waits while one is due).
        self._handing = loaded
        slices().start(self._hand_over, first=True)

    def _hand_over(self) -> None:
        loaded, self._handing = self._handing, None
        if loaded is None:
            return  # cancelled since it finished
        candidate, self._load, self._recovering = self._recovering, None, None
        if candidate is None:
            path = self._adopt(loaded.document, loaded.document.path, loaded.fingerprint, reads=loaded.reads)
            if path is not None:
                _settings.remember(self.settings, path)
        else:
            self._adopt(loaded.document, candidate.original_path, candidate.base, candidate, reads=loaded.reads)
        self.loadFinished.emit()
        if candidate is not None:
            self.check_disk()

    @Slot(str)
    def _load_failed(self, message: str) -> None:
        if self._load is None or self.sender() is not self._load.signals:
            return
        self._load, self._recovering = None, None
        self.loadFailed.emit(message)

    def _adopt(self, document: Document, path: Path | None, known: Fingerprint | None,
               recovered: RecoveryCandidate | None = None, *, reads: Reads | None = None,
               called: str | None = None, source: Path | None = None) -> Path | None:
        """Make `document` the open one; the previous one's recovery files go."""
        self._autosave_timer.stop()
        self._drop_copy()
        self._pending_since = None
        if recovered is None or recovered.key != self._key:
            self._drop_recovery()
        if recovered is not None:
            self._key = self._recovery.claim(recovered)
        document.path = path
        self._document = document
        self._called, self._source = called, source
        self._reads = dict(reads or {})
        self.sidecar.switch(path)
        self._forced_dirty = recovered is not None
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self._set_file(path, known)
        self.documentReplaced.emit()
        self._update_dirty()
        return path

    # -- save ---------------------------------------------------------------------------------------

    def save(self, *, force: bool = False) -> bool:
        """Save to the document's file; refuses (False, `saveFailed`) when another program changed it,
        unless `force`."""
        if self._path is None:
            self.saveFailed.emit("The document has no file yet: use Save As.")
            return False
        return self._save(self._path, force=force)

    def save_as(self, path: str | os.PathLike[str], *, force: bool = False) -> bool:
        """Save to `path` (the caller has confirmed replacing another file). A `.jsonl` name writes JSON
        Lines, any other name JSON; a saved request keeps its envelope and cannot become JSON Lines."""
        return self._save(Path(path).absolute(), force=force)

    def _save(self, target: Path, *, force: bool) -> bool:
        shape = _shape_for(self._document.shape, target)
        if shape is None:
            self.saveFailed.emit(
                f"Could not save {target}: a saved request (with its schema and solution) cannot be written "
                "as JSON Lines; choose a .json name."
            )
            return False
        if self._saving:
            self.saveFailed.emit(f"Could not save {target}: a save is already under way.")
            return False
        same = self._path is not None and _same_file(target, self._path)
        guard = (self._path, self._watch.known) if same and not force and self._path is not None else None
        task = SaveTask(dataclasses.replace(snapshot(self._document), shape=shape), target, guard)
        changes = self._changes
        self._saving = True
        try:
            self._wait_for(task)
        finally:
            self._saving = False
        if isinstance(task.result, str):
            self.saveFailed.emit(task.result)
            return False
        self._document.shape = shape
        self._document.path = target
        self.sidecar.move(target)
        self._forced_dirty = False
        self._set_file(target, task.result)
        _settings.remember(self.settings, target)
        if self._changes == changes:
            self.undo_stack.setClean()
            self._autosave_timer.stop()
            self._pending_since = None
            self._drop_recovery()
        else:  # edited while it was written (a run went on): the file holds no state of the undo stack
            self.undo_stack.resetClean()
        self._update_dirty()
        return True

    def _wait_for(self, task: SaveTask) -> None:
        """Run `task` on a worker and wait for it with the window's thread free: it paints and keeps its
        timers (a run goes on) while the user's keys and clicks wait until the file is written, so what is
        saved is the document as it was when the user asked."""
        loop = QEventLoop()
        task.signals.done.connect(loop.quit)
        self._pool.start(task)
        loop.exec(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)

    # -- the file on disk --------------------------------------------------------------------------

    def _set_file(self, path: Path | None, known: Fingerprint | None) -> None:
        changed = path != self._path
        self._path = path
        self._watch.follow(path, known)
        if changed:
            self.pathChanged.emit(path)

    def check_disk(self, *, thorough: bool = True) -> None:
        """Compare the file with what we loaded or saved; report a change once (`externallyModified`).

        The file watcher calls this; the window may too (say, when it is activated again).
        """
        self._watch.check(thorough=thorough)

    # -- dirty state and autosave ---------------------------------------------------------------------

    @Slot()
    def _update_dirty(self) -> None:
        dirty = self.is_dirty()
        if dirty != self._dirty:
            self._dirty = dirty
            self.dirtyChanged.emit(dirty)

    @Slot()
    def _stack_changed(self) -> None:
        self._changes += 1
        self._update_dirty()
        self.mark_changed()

    def mark_changed(self) -> None:
        """The document was edited: autosave a few seconds after the changes pause (or at most
        `AUTOSAVE_MAX_WAIT_S` after the first)."""
        now = time.monotonic()
        if self._pending_since is None:
            self._pending_since = now
        if now - self._pending_since < AUTOSAVE_MAX_WAIT_S or not self._autosave_timer.isActive():
            self._autosave_timer.start()

    @Slot()
    def _autosave(self) -> None:
        """Write the recovery file: copy the messages in slices of the window's turns (`Snapshot`), then write
        them on a worker (`_write`)."""
        self._pending_since = None
        if not self.is_dirty():
            self._drop_recovery()
            return
        if self._autosave_task is not None or self._autosave_copy is not None:
            self._autosave_again = True  # one write at a time, so an older one never lands last
            return
        self._autosave_copy = Snapshot(self._document.context, self._write, self, infos=False)

    def _write(self, view: ContextView) -> None:
        """The copy is taken: write it (the document as it was at the copy's last slice)."""
        self._drop_copy()
        messages = view.messages  # (the pieces `Context.view_steps` copied; the worker reads them as they are)
        if not self.is_dirty():  # saved while it was copied
            _let_go_of(messages)
            self._drop_recovery()
            return
        task = AutosaveTask(self._recovery, self._key, snapshot(self._document, messages), self._path,
                            self._watch.known)
        task.signals.done.connect(self._autosaved)
        self._autosave_task = task
        self._pool.start(task)

    def _write_aside(self) -> None:
        """Write the recovery file here and now, as the autosave would (the session is ending: no later turn)."""
        result = write_recovery(self._recovery, self._key, snapshot(self._document), self._path, self._watch.known,
                                pace=False)
        if not isinstance(result, Path):  # said as an autosave's failure is
            self.autosaveFailed.emit(recovery_failure(self._recovery, result))

    def _drop_copy(self) -> None:
        """Stop the copy under way for an autosave, if any (the document it copies was replaced or closed)."""
        copy, self._autosave_copy = self._autosave_copy, None
        if copy is not None:
            copy.drop()
            copy.deleteLater()

    @Slot(object)
    def _autosaved(self, result: object) -> None:
        task, self._autosave_task = self._autosave_task, None
        if task is None:
            return
        # The copy of the message list it wrote goes in slices: freed here, a million messages' list is a turn's
        # worth of the GUI thread on its own.
        _let_go_of(task.document.context.messages)
        if task.key != self._key or not self.is_dirty():
            self._remove_recovery(task.key)  # saved or replaced while it was being written
        elif isinstance(result, Path):
            self.autosaved.emit(result)
        else:
            self.autosaveFailed.emit(recovery_failure(self._recovery, str(result)))
        if self._autosave_again:
            self._autosave_again = False
            self._autosave()

    def _drop_recovery(self) -> None:
        if self._autosave_task is None:
            self._remove_recovery(self._key)
        # else: the write under way removes its file when it sees it is no longer wanted
        self._key = new_key()

    def _remove_recovery(self, key: str) -> None:
        # On a worker (`close` waits for it): unlinking a big file is the kernel freeing its blocks, in the thread
        # that asks; a million messages' was most of the frame of the turn that handed the next document over.
        self._pool.start(partial(self._recovery.remove, key))

    def recovery_candidates(self) -> list[RecoveryCandidate]:
        """Unsaved work left behind by sessions that are no longer running, newest first."""
        return self._recovery.candidates()

    def discard_recovery(self, candidate: RecoveryCandidate) -> None:
        self._recovery.remove(candidate.key)

    def close(self, *, keep_unsaved: bool = False) -> None:
        """End the session: the caller has asked about unsaved changes, and no recovery file is left. With
        `keep_unsaved` (no one to ask: the window was told to end), unsaved changes are written aside at once
        instead, and their recovery file stays to be offered at the next start."""
        self.cancel_load(quiet=True)
        self._autosave_timer.stop()
        self._drop_copy()
        self._pool.waitForDone()
        task, self._autosave_task = self._autosave_task, None  # its late `done` finds no task and does nothing
        if task is not None and task.key != self._key:
            self._remove_recovery(task.key)  # a document replaced while it was written aside
        if keep_unsaved and self.is_dirty():
            self._write_aside()
        else:
            self._drop_recovery()
        self._pool.waitForDone()
        self._watch.stop()
        self.sidecar.flush()


def _let_go_of(messages: Sequence[Any]) -> None:
    """Let go of an autosave's copy of the messages: its pieces (`Pieces`, each a list), or the one list."""
    if isinstance(messages, Pieces):
        let_go(*messages.pieces)
    elif isinstance(messages, list):
        let_go(messages)


def _shape_for(shape: Shape, target: Path) -> Shape | None:
    """The shape to write at `target`: JSON Lines by extension; a request cannot be JSON Lines."""
    if target.suffix.lower() == ".jsonl":
        return None if shape is Shape.REQUEST else Shape.JSONL
    return Shape.ARRAY if shape is Shape.JSONL else shape


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b
