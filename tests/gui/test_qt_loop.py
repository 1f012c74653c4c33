"""The window's asyncio loop (`QtLoop`): `call_soon` callbacks wait in one queue that a zero timer runs a turn at a
time, in the order they were asked, as asyncio's own loop runs them."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from PySide6.QtCore import QEventLoop, QTimer
from pytestqt.qtbot import QtBot

from contextdeck.gui._inspector._async import QtLoop, event_loop, spawn


def test_the_window_runs_its_coroutines_on_the_batching_loop(qtbot: QtBot) -> None:
    assert isinstance(event_loop(), QtLoop)


def test_callbacks_run_in_the_order_asked_and_one_asked_meanwhile_after_them(qtbot: QtBot) -> None:
    loop = event_loop()
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        loop.call_soon(ran.append, "asked by first")

    loop.call_soon(first)
    for name in ("second", "third"):
        loop.call_soon(ran.append, name)
    qtbot.waitUntil(lambda: len(ran) == 4)
    assert ran == ["first", "second", "third", "asked by first"]


def test_call_soon_starts_no_qt_timer_of_its_own(qtbot: QtBot) -> None:
    """qasync would start one Qt timer per callback (its `_SimpleTimer`); the queue starts none of those."""
    loop = event_loop()
    timers = loop._timer._SimpleTimer__callbacks  # type: ignore[attr-defined]  # (earlier tests' `call_later`s wait)
    before = set(timers)
    ran: list[int] = []
    for number in range(100):
        loop.call_soon(ran.append, number)
    assert set(timers) == before
    qtbot.waitUntil(lambda: len(ran) == 100)
    assert ran == list(range(100))


def test_a_cancelled_callback_does_not_run(qtbot: QtBot) -> None:
    loop = event_loop()
    ran: list[str] = []
    loop.call_soon(ran.append, "cancelled").cancel()
    loop.call_soon(ran.append, "kept")
    qtbot.waitUntil(lambda: ran == ["kept"])
    qtbot.wait(20)
    assert ran == ["kept"]


def test_a_callback_that_raises_is_reported_and_the_others_run(qtbot: QtBot) -> None:
    loop = event_loop()
    reported: list[dict[str, Any]] = []
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        ran: list[str] = []

        def fails() -> None:
            raise ValueError("broken callback")

        loop.call_soon(fails)
        loop.call_soon(ran.append, "after it")
        qtbot.waitUntil(lambda: ran == ["after it"])
        assert [str(context["exception"]) for context in reported] == ["broken callback"]
    finally:
        loop.set_exception_handler(handler)


def test_tasks_and_callbacks_from_other_threads_run_on_the_gui_thread(qtbot: QtBot) -> None:
    loop = event_loop()
    threads: list[int] = []

    async def steps() -> int:
        for _ in range(5):
            await asyncio.sleep(0)
        done = loop.create_future()
        worker = threading.Thread(target=lambda: loop.call_soon_threadsafe(done.set_result, threading.get_ident()))
        worker.start()
        threads.append(await done)
        worker.join()
        return threading.get_ident()

    task = spawn(steps())
    qtbot.waitUntil(task.done)
    assert task.result() == threading.get_ident()
    assert len(threads) == 1
    assert threads[0] != threading.get_ident()


def test_a_callback_running_a_nested_event_loop_leaves_the_others_run_once_in_order(qtbot: QtBot) -> None:
    """A callback that opens a modal dialog runs a nested event loop, in which the queue's timer runs the callbacks
    asked before it: the turn that ran it finds none left, and each runs once."""
    loop = event_loop()
    ran: list[str] = []
    reported: list[dict[str, Any]] = []
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:

        def nested() -> None:
            ran.append("nested")
            loop.call_soon(ran.append, "asked inside")
            inner = QEventLoop()
            QTimer.singleShot(50, inner.quit)
            inner.exec()

        loop.call_soon(nested)
        for name in ("second", "third"):
            loop.call_soon(ran.append, name)
        qtbot.waitUntil(lambda: len(ran) == 4)
        qtbot.wait(20)
        assert ran == ["nested", "second", "third", "asked inside"]
        assert reported == []
    finally:
        loop.set_exception_handler(handler)
