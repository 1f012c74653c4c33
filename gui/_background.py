"""Run a slow engine function (validate, render, compose) on a snapshot of the messages, off the GUI thread.

The snapshot is a new list of the context's own message dicts (never mutated: edits replace them), so the
worker reads a consistent document while the user goes on editing; only the latest request's result is
delivered. `request_view` takes that snapshot (`Context.view_steps`) in slices of the GUI thread's turns, a
tenth of a second of copying at a million messages, then runs the job on it. A job on a snapshot whose result is
no longer wanted (a newer request, or its owner closed: `stop`, `when_idle`) stops at its next read of a message
(`Stopped`) instead of running on for seconds beside the one that replaced it; a coroutine's job (`stoppable`) stops
so at its next check once the coroutine is cancelled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, QRunnable, QThreadPool, QTimer, Signal

from contextdeck._runtime import freeze_young, loading
from contextdeck.engine import Context, ContextView, MessageInfo

from ._slices import slices

Job = Callable[[], Any]
T = TypeVar("T")
VIEW_SLICE_S = 0.004  # GUI-thread CPU a turn spends copying a snapshot
# Messages copied a step: a small part of `VIEW_SLICE_S`, so that a slice that stops before the step that would pass
# its budget ends near it (a slice overshoots its budget by up to a step).
VIEW_STEP = 5_000


class Stopped(BaseException):
    """Raised in a worker's job when it reads a message of its snapshot after its result stopped being wanted.
    A BaseException, as asyncio's CancelledError: an engine function's `except Exception` does not take it."""


class _Stop:
    __slots__ = ("stopped",)

    def __init__(self) -> None:
        self.stopped = False  # set on the GUI thread, read by the worker at each message (a bool: no lock needed)


@dataclass(frozen=True)
class StoppingView(ContextView):
    """A snapshot a worker's job reads (`Messages`): each read of a message or of its info raises `Stopped` once
    the job's result is no longer wanted, so a job the user left (a closed Next Turn dialog, an LLM view at a
    cursor moved since) ends at its next message."""

    stop: _Stop

    def __getitem__(self, index: int) -> dict[str, Any]:
        if self.stop.stopped:
            raise Stopped
        return self.messages[index]

    def info(self, index: int) -> MessageInfo:
        if self.stop.stopped:
            raise Stopped
        return self.infos[index]


class _Signals(QObject):
    done = Signal(int, object)  # generation, result


class _Task(QRunnable):
    def __init__(self, job: Callable[[_Stop], Any], generation: int) -> None:
        super().__init__()
        self.signals = _Signals()
        self._job, self._generation = job, generation
        self.stop = _Stop()

    def run(self) -> None:
        try:
            with loading(document=False):  # the collector off while it runs, what it made frozen after
                result = self._job(self.stop)
        except Exception as error:  # shown as the result; a worker must never take the window down
            result = error
        except Stopped as stopped:  # (never shown: a newer request, or none, is what is wanted)
            result = stopped
        self._job = lambda _stop: None  # what it read (a snapshot of a million messages) is freed here, not on the GUI
        self.result = result
        self.signals.done.emit(self._generation, result)


def waited(job: Job) -> Any:
    """`job()` on a worker thread, its result (an exception it raised, raised here), the window's thread waiting in an
    event loop of its own meanwhile: it paints and keeps its timers, while the user's keys and clicks wait until the
    job is done (as a save waits for its file: what the job reads is what the user asked for)."""
    task = _Task(lambda _stop: job(), 0)
    task.setAutoDelete(False)
    loop = QEventLoop()
    task.signals.done.connect(loop.quit)
    QThreadPool.globalInstance().start(task)
    loop.exec(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
    result = task.result
    if isinstance(result, BaseException):
        raise result
    return result


async def stoppable(job: Callable[[Callable[[], None]], T]) -> T:
    """`job(check)` on a worker thread, for a coroutine on the window's event loop. Once the coroutine is cancelled
    (the user's Cancel), `check()` raises `Stopped`: the job ends at its next check, never reported, instead of
    reading on to its end, holding the interpreter's lock the window's thread waits for."""
    stop = _Stop()

    def check() -> None:
        if stop.stopped:
            raise Stopped

    def run() -> T:
        try:
            return job(check)
        except Stopped:  # (no one's result: the coroutine awaiting it was cancelled)
            return cast(T, None)

    try:
        return await asyncio.to_thread(run)
    finally:
        stop.stopped = True


class Snapshot(QObject):
    """A `Context.view()` taken in slices (`Context.view_steps`, a few milliseconds of each turn its job is given),
    then handed to `then`. What each slice copied is frozen (`freeze_young`, by `Slices`): the view's lists grow
    without allocating much, so they would stay young, and the next young collection would walk their million
    items on the GUI thread. With `infos` False, the messages alone (`Context.view_steps`): the autosave's copy."""

    def __init__(self, context: Context, then: Callable[[ContextView], None], parent: QObject | None = None,
                 *, infos: bool = True) -> None:
        super().__init__(parent)
        self._steps: Generator[None, None, ContextView] | None = context.view_steps(VIEW_STEP, infos=infos)
        self._then = then
        slices().start(self._work)

    def _work(self) -> None:
        self.take(time.thread_time() + VIEW_SLICE_S)

    def take(self, deadline: float | None = None) -> None:
        """Copy until the next step would end past `deadline` (thread time, at the last step's cost; at least
        one step; None: to the end), then ask for another slice or hand the copy over."""
        steps = self._steps
        if steps is None:
            return
        try:
            now = time.thread_time()
            while True:
                began = now
                next(steps)
                now = time.thread_time()
                if deadline is not None and now + (now - began) > deadline:
                    break
        except StopIteration as done:
            self._steps = None
            freeze_young()  # (a slice's is frozen after it by `Slices`; a copy taken whole, here)
            self._then(done.value)
            return
        slices().start(self._work)

    @property
    def taking(self) -> bool:
        return self._steps is not None

    def drop(self) -> None:
        """Stop: nothing is handed over."""
        self._steps = None


async def view_of(context: Context) -> ContextView:
    """A snapshot of `context` taken in slices (`Snapshot`), for a coroutine on the window's event loop."""
    taken: asyncio.Future[ContextView] = asyncio.get_running_loop().create_future()

    def hand_over(view: ContextView) -> None:
        if not taken.done():
            taken.set_result(view)

    snapshot = Snapshot(context, hand_over)
    try:
        return await taken
    finally:
        snapshot.drop()
        snapshot.deleteLater()


class BackgroundRunner(QObject):
    """`request(job)` (debounced by `delay_ms`); `finished(result)` with the latest job's result."""

    finished = Signal(object)
    started = Signal()  # a job began on the worker thread (the latest one finishes with `finished`)

    def __init__(self, delay_ms: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._generation = 0
        self._job: Callable[[_Stop], Any] | None = None
        self._timer = QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(self._start)
        self._tasks: list[_Task] = []
        self._snapshot: Snapshot | None = None
        self._idle: Callable[[], None] | None = None  # what `when_idle` waits to call

    def request(self, job: Job) -> None:
        self._queue(lambda _stop: job())

    def request_view(self, context: Context, job: Callable[[ContextView], Any]) -> None:
        """`request(job(view))` once a snapshot of `context` is taken (in slices: `Snapshot`); the job reads it
        as a `StoppingView`, so a newer request stops it at its next message."""
        self.stop()

        def taken(view: ContextView) -> None:
            def reading(stop: _Stop) -> Any:
                joined = view.joined()  # on the worker
                return job(StoppingView(joined.messages, joined.infos, stop))
            self._queue(reading)

        self._snapshot = Snapshot(context, taken, self)

    def _queue(self, job: Callable[[_Stop], Any]) -> None:
        self.stop()
        self._job = job
        self._timer.start()

    def stop(self) -> None:
        """Drop what waits (a snapshot being taken, a job waiting for its delay) and stop the jobs that run
        (`StoppingView`): no result is delivered until the next request's."""
        self._drop_snapshot()
        self._timer.stop()
        self._job = None
        self._generation += 1
        for task in self._tasks:
            task.stop.stopped = True

    def _drop_snapshot(self) -> None:
        if self._snapshot is not None:
            self._snapshot.drop()
            self._snapshot.deleteLater()
            self._snapshot = None

    @property
    def busy(self) -> bool:
        """A snapshot is being taken, a job waits for its delay, or one runs."""
        return (self._snapshot is not None and self._snapshot.taking) or self._timer.isActive() or bool(self._tasks)

    def _start(self) -> None:
        job, self._job = self._job, None  # the task holds it while it runs, no longer
        if job is None:
            return
        task = _Task(job, self._generation)
        task.setAutoDelete(False)
        task.signals.done.connect(self._done)
        self._tasks.append(task)
        self._pool.start(task)
        self.started.emit()

    def _done(self, generation: int, result: object) -> None:
        self._tasks = [t for t in self._tasks if t.signals is not self.sender()]
        if generation == self._generation:
            self.finished.emit(result)
        if self._idle is not None and not self._tasks:
            idle, self._idle = self._idle, None
            idle()

    def when_idle(self, then: Callable[[], None]) -> None:
        """`stop`, and call `then` once no job runs (at once when none does): what deletes its owner calls this
        first, since the pool, deleted with a job running, waits for it on the GUI thread."""
        self.stop()
        if self._tasks:
            self._idle = then
        else:
            then()

    def shutdown(self) -> None:
        """Stop and wait for a job under way (before the window goes)."""
        self.stop()
        self._pool.clear()
        self._pool.waitForDone()

    def flush(self) -> None:
        """Run the pending job now and wait for its result (screenshots, benchmarks, tests)."""
        if self._snapshot is not None:
            self._snapshot.take()
        if self._timer.isActive():
            self._timer.stop()
            self._start()
        self._pool.waitForDone()
        QCoreApplication.sendPostedEvents()
