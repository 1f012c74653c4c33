"""The window's worker (`BackgroundRunner`): a job on a snapshot of the messages whose result is no longer wanted
stops at its next message instead of running on beside the one that replaced it."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from contextdeck.engine import Context, ContextView, Messages
from contextdeck.gui._background import BackgroundRunner, Snapshot

MESSAGES = 50


def context() -> Context:
    return Context([{"type": "text", "role": "user", "text": f"m{n}"} for n in range(MESSAGES)])


class Held:
    """A job that reads the first message, waits until `go` is set, then reads every message: what it read
    and how it ended are noted."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.started, self.go = threading.Event(), threading.Event()
        self.read = 0
        self.ended: str | None = None

    def __call__(self, messages: Messages) -> str:
        try:
            messages[0]
            self.started.set()
            self.go.wait(10)
            for index in range(len(messages)):
                messages.info(index)
                self.read += 1
        except BaseException as error:
            self.ended = type(error).__name__
            raise
        self.ended = "done"
        return self.name


def test_a_newer_request_stops_the_job_under_way_at_its_next_message(qtbot: QtBot) -> None:
    """The LLM view at a cursor moved since, Check Document after another edit: the job on the older snapshot
    stops at its next read of a message (`Stopped`) and only the newer job's result is delivered."""
    runner = BackgroundRunner(0)
    results: list[Any] = []
    runner.finished.connect(results.append)
    first, second = Held("first"), Held("second")
    second.go.set()
    runner.request_view(context(), first)
    qtbot.waitUntil(first.started.is_set, timeout=5000)
    runner.request_view(context(), second)
    first.go.set()
    qtbot.waitUntil(lambda: results == ["second"], timeout=5000)
    assert (first.ended, first.read) == ("Stopped", 0)
    assert (second.ended, second.read) == ("done", MESSAGES)
    runner.shutdown()


def test_a_stopped_runners_job_ends_and_says_nothing(qtbot: QtBot) -> None:
    """`stop` (its owner closed): the job ends at its next message, nothing is delivered, and `when_idle`'s
    callback follows its end."""
    runner = BackgroundRunner(0)
    results: list[Any] = []
    runner.finished.connect(results.append)
    job = Held("job")
    runner.request_view(context(), job)
    qtbot.waitUntil(job.started.is_set, timeout=5000)
    idle: list[bool] = []
    runner.when_idle(lambda: idle.append(True))
    assert idle == []  # it still runs
    job.go.set()
    qtbot.waitUntil(lambda: idle == [True], timeout=5000)
    assert (job.ended, job.read) == ("Stopped", 0)
    qtbot.wait(50)
    assert results == []
    assert not runner.busy
    runner.shutdown()


@pytest.mark.parametrize(("cost_ms", "steps"), [(1.0, 4), (0.7, 6), (10.0, 1)])
def test_a_snapshot_slice_ends_within_its_budget(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch,
                                                 cost_ms: float, steps: int) -> None:
    """A slice of the worker's copy (`Snapshot.take`) stops before the step that would end past its deadline, at
    the last step's cost, instead of going past it by up to a step (a step of 20,000 messages was 2-3 ms under
    load, a slice of 4 ms 8-13); a step dearer than the whole budget still goes on, one a slice."""
    clock = [100.0]
    taken: list[int] = []
    view_steps = Context.view_steps

    def costed(self: Context, step: int | None = None, *, infos: bool = True) -> Generator[None, None, ContextView]:
        copying = view_steps(self, 1, infos=infos)
        try:
            while True:
                next(copying)
                clock[0] += cost_ms / 1000
                taken.append(1)
                yield
        except StopIteration as done:
            view: ContextView = done.value
            return view

    monkeypatch.setattr(Context, "view_steps", costed)
    snapshot = Snapshot(context(), lambda _view: None)
    monkeypatch.setattr(time, "thread_time", lambda: clock[0])  # the clock `take` reads
    snapshot.take(clock[0] + 0.0045)
    monkeypatch.undo()
    assert len(taken) == steps
    assert clock[0] <= 100.0045 or steps == 1
    snapshot.drop()


def test_a_job_reads_the_snapshot_joined_on_its_own_thread(qtbot: QtBot) -> None:
    """The copy is taken on the GUI thread as pieces (a list a step); the job reads it as plain lists, joined on
    the worker's thread, never the GUI thread's: every message and info in order."""
    seen: list[Any] = []

    def job(messages: Messages) -> None:
        view = messages
        assert isinstance(view, ContextView)
        seen.append((threading.get_ident(), type(view.messages), type(view.infos),
                     [view[index]["text"] for index in range(len(view))],
                     [view.info(index).form for index in range(len(view))]))

    runner = BackgroundRunner(0)
    runner.request_view(context(), job)
    qtbot.waitUntil(lambda: bool(seen) and not runner.busy, timeout=5000)
    ((thread, messages, infos, texts, forms),) = seen
    assert thread != threading.get_ident()
    assert (messages, infos) == (list, list)
    assert texts == [f"m{n}" for n in range(MESSAGES)]
    assert forms == ["text"] * MESSAGES
    runner.shutdown()
