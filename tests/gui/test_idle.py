"""The window runs the cycle collector while its event loop waits, not in the middle of an edit, and
walks everything only when another application is in front."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, QEvent, QObject, QSettings, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from contextdeck import _runtime
from contextdeck._runtime import IDLE_YOUNG
from contextdeck.gui import _idle
from contextdeck.gui._app import create_window
from contextdeck.gui._idle import collect_while_idle


class Node:
    """An object in a reference cycle: only the cycle collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def app() -> Iterator[QApplication]:
    """The application collecting while idle for this test only; nothing it froze stays frozen."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = gc.get_threshold()
    gc.set_threshold(10**8, 10, 10)  # only the idle hook collects while the test runs
    gc.collect()
    gc.freeze()  # as after a load: the generations hold only what the test makes
    _runtime._frozen = _runtime._alive = _runtime._recounted = gc.get_freeze_count()  # alive, as after a collection
    _runtime._older, _runtime._froze_since = 0, False
    collect_while_idle(app)
    yield app
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    assert dispatcher is not None
    dispatcher.aboutToBlock.disconnect(_idle.idle)
    app.applicationStateChanged.disconnect(_idle._state_changed)
    gc.unfreeze()
    _runtime._frozen = _runtime._alive = _runtime._recounted = _runtime._older = 0
    gc.set_threshold(*before)


def test_the_event_loop_collects_the_young_and_freezes_the_rest_when_it_waits(qtbot: QtBot,
                                                                               app: QApplication) -> None:
    """A young collection while the loop waits (a cycle that died is freed), and the survivors are frozen."""
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collections.append(info["generation"])

    dead = Node()
    gone = weakref.ref(dead)
    del dead
    frozen = gc.get_freeze_count()
    gc.callbacks.append(seen)
    try:
        kept = [[n] for n in range(2 * IDLE_YOUNG)]
        assert gc.get_count()[0] >= IDLE_YOUNG
        qtbot.waitUntil(lambda: bool(collections), timeout=2000)
    finally:
        gc.callbacks.remove(seen)
    assert collections[0] == 0  # a young collection: never an older one at idle
    assert gone() is None
    assert gc.get_freeze_count() >= frozen + len(kept)
    del kept


def test_leaving_the_application_frees_cycles_that_died_frozen(qtbot: QtBot, app: QApplication) -> None:
    """A cycle frozen while alive and dropped later is freed when another application comes to the front."""
    alive = Node()
    gone = weakref.ref(alive)
    kept = [[n] for n in range(2 * IDLE_YOUNG)]
    qtbot.waitUntil(lambda: gc.get_count()[0] < IDLE_YOUNG, timeout=2000)  # frozen at idle
    del alive
    gc.collect()
    assert gone() is not None
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationInactive)
    assert gone() is None
    del kept


def test_the_document_a_switch_replaces_is_freed_when_another_application_comes_to_the_front(
        qtbot: QtBot, app: QApplication, open_window: Any, examples: Path) -> None:
    """Open A with a cycle holding A's context (as a closure of a view or of the engine can) alive until another
    document replaces it; open B, and the cycle dies. The load froze it, so ordinary collections leave A's
    context, and the collection of everything when another application comes to the front frees it. (Before, the
    window kept every replaced document's timeline model as its child, and that model the whole document.)"""
    window = open_window(examples / "refund_workflow.json")
    context = window.context()
    gone = weakref.ref(context)
    knot: list[object] = [context]
    knot.append(knot)
    del context
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "moderation_batch.json")
    del knot
    # the views let go of A, some in slices of the window's turns (the state's folds: `StateView._close_left`)
    qtbot.waitUntil(lambda: not window.state_view.is_busy() and not window._busy())
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # what the window deletes later
    gc.collect()
    assert gone() is not None  # frozen: no ordinary collection walks it
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationInactive)
    assert gone() is None

def test_a_closed_window_leaves_the_collector_no_live_qt_object(qtbot: QtBot, tmp_path: Path, examples: Path) -> None:
    """Every Qt object a window makes is deleted with it: what a full collection frees afterwards are wrappers
    whose Qt objects are gone. (The data editor's JSON editor, without a tab, and the calls model and debugger had
    no Qt parent: they outlived the window until the collector freed them, see collector_clears_first.py.)"""
    gc.unfreeze()
    gc.collect()  # what earlier tests left: only this window's garbage is looked at below
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, tmp_path / "recovery")
    window.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    window.show()
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "refund_workflow.json")
    for index in range(len(window.context())):  # every kind of message's form
        window.select_message(index)
    window.session.close()
    window.close()
    with qtbot.waitSignal(window.destroyed, timeout=5000):
        window.deleteLater()  # as pytest-qt does with the windows of every other test
    del window
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        alive = sorted({type(thing).__name__ for thing in gc.garbage
                        if isinstance(thing, QObject) and shiboken6.isValid(thing)})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert alive == []


def test_the_collector_clearing_a_deleted_editors_highlighter_first_does_not_crash() -> None:
    """The crash seen during landings, in a fixed order (collector_clears_first.py): in a process of its own, a
    closed data editor's JSON highlighter cleared as the collector clears cyclic garbage, then the JSON editor
    dropped. It ended in a segfault while the JSON editor had no Qt parent."""
    script = Path(__file__).with_name("collector_clears_first.py")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert (result.returncode, result.stdout.strip()) == (0, "survived"), result.stderr[-2000:]


def test_a_worker_job_runs_with_the_collector_off_and_what_it_made_is_frozen(qtbot: QtBot,
                                                                             app: QApplication) -> None:
    """A job on the window's worker (composing a request, checking a document) runs with the collector paused,
    and what it made is frozen when it ends: a request of a million messages is as big as the document, and the
    young collections at idle walked its containers while the worker made them. It is not the document open
    now (`loading`'s count of what is alive)."""
    from contextdeck.gui._background import BackgroundRunner

    document = _runtime._document
    runner = BackgroundRunner(0)
    results: list[Any] = []
    runner.finished.connect(results.append)
    runner.request(lambda: (gc.isenabled(), [[n] for n in range(2 * IDLE_YOUNG)]))
    qtbot.waitUntil(lambda: bool(results), timeout=5000)
    enabled, made = results[0]
    assert not enabled
    assert gc.isenabled()
    assert not any(thing is made for thing in gc.get_objects())  # frozen
    assert _runtime._document == document
    runner.shutdown()


def test_a_collection_of_everything_waits_for_the_windows_slices(qtbot: QtBot, app: QApplication,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """While slices are pending (a replaced document still held by views, or freed by the graveyard a slice at a
    time), an idle moment collects and freezes the young generation only; a collection of everything that is due
    runs at the first idle moment after them."""
    from contextdeck.gui._slices import slices

    everything: list[bool] = []
    monkeypatch.setattr(_runtime, "_counted_due", lambda: True)  # due, counted exactly
    monkeypatch.setattr(_runtime, "collect_everything", lambda: everything.append(True))

    class Job(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.left = 3

        def step(self) -> None:
            self.left -= 1
            if self.left:
                slices().start(self.step)

    job = Job()
    slices().start(job.step)
    kept = [[n] for n in range(2 * IDLE_YOUNG)]
    _idle.idle()
    assert everything == []
    assert gc.get_count()[0] < IDLE_YOUNG  # the young generation collected and frozen all the same
    qtbot.waitUntil(lambda: not job.left and not slices().pending)
    kept += [[n] for n in range(2 * IDLE_YOUNG)]
    _idle.idle()
    assert everything
    del kept
