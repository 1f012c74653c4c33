"""The window runs the cycle collector while its event loop waits, not in the middle of an edit."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from contextdeck._runtime import IDLE_YOUNG
from contextdeck.gui._idle import collect_while_idle


@pytest.fixture
def thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(10**8, 10, 10)  # only the idle hook collects while the test runs
    gc.collect()  # and no older generation is due yet
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("thresholds")
def test_the_event_loop_collects_when_it_waits(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert app is not None
    collect_while_idle(app)
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        kept = [[n] for n in range(2 * IDLE_YOUNG)]
        assert gc.get_count()[0] >= IDLE_YOUNG
        qtbot.waitUntil(lambda: bool(collections), timeout=2000)
    finally:
        gc.callbacks.remove(seen)
    assert collections[0] == 0  # a young collection: nothing older was due
    assert gc.get_count()[0] < IDLE_YOUNG
    del kept

