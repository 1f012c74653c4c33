"""The window runs the cycle collector while its event loop waits, not in the middle of an edit, and
walks everything only when another application is in front."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QAbstractEventDispatcher, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from contextdeck import _runtime
from contextdeck._runtime import IDLE_YOUNG, collect_when_idle
from contextdeck.gui import _idle
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
    _runtime._frozen = 0
    collect_while_idle(app)
    yield app
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    assert dispatcher is not None
    dispatcher.aboutToBlock.disconnect(collect_when_idle)
    app.applicationStateChanged.disconnect(_idle._state_changed)
    gc.unfreeze()
    _runtime._frozen = 0
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
