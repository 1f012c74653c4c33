"""Activity workers: a reused pool of processes (`_worker`), so that an activity's call can be ended for real.

A cancelled or timed-out call's process is killed, and waited for, before `cancel()` returns or the timeout
is reported: nothing of it runs afterwards. A process that dies mid-call (`os._exit`, a segfault, the kernel's
OOM killer) is that call's error, and the next call gets a new process. Each worker runs one call at a time;
at most `POOL_SIZE` run at once and the rest wait for one (their timeout starts when they do).

Each worker has one thread here that reads its answers (never a thread per call). What the activity prints
goes to two capture files per worker, emptied before each call and read after it, at most `CAPTURE_LIMIT`
bytes of each.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import pickle
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import IO, Any

from contextdeck._child import child_command

from ..calls._outputs import MAX_RESULT_BYTES
from ..document import _json
from ..protocol._records import record
from ._frames import CAPTURE_VARIABLE, FrameTooLarge, read_frame, write_frame

WORKER_MODULE = "contextdeck.engine.run._worker"
POOL_SIZE = max(4, os.cpu_count() or 1)
IDLE_SECONDS = 300.0  # a worker unused this long is let go (the next call starts a new one)
CAPTURE_LIMIT = 64 * 1024


@record
class Captured:
    """What a call printed: the first `CAPTURE_LIMIT` bytes of each stream, with a note of what was left out."""

    stdout: str = ""
    stderr: str = ""

    def audit(self) -> dict[str, str]:
        """The `_run` keys for it: only the streams that said something."""
        return {name: text for name, text in (("stdout", self.stdout), ("stderr", self.stderr)) if text}


SILENT = Captured()  # a call that printed nothing


@record
class Ran:
    """A call's result and what it printed."""

    result: Any
    captured: Captured = SILENT


class ActivityTimedOut(TimeoutError):
    """A call its worker did not answer in time (the worker is killed), with what it had printed."""

    def __init__(self, captured: Captured) -> None:
        super().__init__()
        self.captured = captured


class ActivityFailed(Exception):
    """A call that failed in its worker: the exception's class name (or `crash`, `output`), its message, the
    traceback as text, and what it printed."""

    def __init__(self, kind: str, message: str, traceback: str | None = None,
                 captured: Captured = SILENT) -> None:
        super().__init__(message)
        self.kind, self.message, self.traceback, self.captured = kind, message, traceback, captured


def _ended(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exited with code {code}"


def _read_capture(file: IO[bytes]) -> str:
    fd = file.fileno()
    size = os.fstat(fd).st_size
    text = os.pread(fd, CAPTURE_LIMIT, 0).decode("utf-8", "replace")
    if size > CAPTURE_LIMIT:
        text += f"\n… ({size - CAPTURE_LIMIT:,} more bytes not kept)"
    return text


@dataclass
class _Pending:
    """The call a worker is answering: where its answer goes."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Ran]


class _Worker:
    """One worker process, the capture files it prints into, and the thread that reads its answers."""

    def __init__(self) -> None:
        # Closed when the pool lets a dead worker go (what it printed last is read first).
        self.out = tempfile.TemporaryFile()  # noqa: SIM115
        self.err = tempfile.TemporaryFile()  # noqa: SIM115
        program, arguments = child_command(WORKER_MODULE)
        posix = os.name == "posix"
        env = {**os.environ, CAPTURE_VARIABLE: str(self.out.fileno())} if posix else dict(os.environ)
        self.process = subprocess.Popen(
            [program, *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
            pass_fds=(self.out.fileno(),) if posix else (), env=env,
            start_new_session=posix)  # a Ctrl+C at the terminal is the application's to handle, not the worker's
        self.pending: _Pending | None = None
        self.dead = False
        self.ready = False  # it has imported what it needs and said so: a call's timeout starts from there
        self.idle_since = time.monotonic()
        self.reader = threading.Thread(target=self._read, name="contextdeck-worker-reader", daemon=True)
        self.reader.start()

    @property
    def alive(self) -> bool:
        return not self.dead and self.process.poll() is None

    async def call(self, request: dict[str, Any], limit: float, job: Job | None = None) -> Ran:
        """Send one call and wait for its answer, at most `limit` seconds; killed when cancelled or late (what
        it printed until then is the `job`'s `captured`)."""
        await self._started()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Ran] = loop.create_future()
        self.pending = _Pending(loop, future)
        try:
            assert self.process.stdin is not None
            write_frame(self.process.stdin, pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, OSError):
            pass  # it died meanwhile: the reader reports how, through the future
        try:
            async with asyncio.timeout(limit):
                return await future
        except TimeoutError:  # the call ends now, with its process; what it printed tells where it was
            self.kill()
            raise ActivityTimedOut(self._captured()) from None
        except asyncio.CancelledError:
            self.kill()
            if job is not None:
                job.captured = self._captured()
            raise
        finally:
            self.pending = None

    async def _started(self) -> None:
        """Wait until the process has started (its imports take a while on a busy machine); a crash raises."""
        if self.ready:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Ran] = loop.create_future()
        self.pending = _Pending(loop, future)
        try:
            if not self.ready:  # the reader sets `ready` before it looks for someone to tell
                await future
        except asyncio.CancelledError:
            self.kill()
            raise
        finally:
            self.pending = None

    def kill(self) -> None:
        """End the process, and the processes it started, and wait for it: nothing it was doing goes on after
        this returns."""
        self.dead = True
        if self.process.poll() is None:
            if os.name == "posix":  # its own process group (`start_new_session`): its children are in it
                with contextlib.suppress(OSError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.wait()

    def close(self) -> None:
        """Let an idle worker go: it leaves when its request pipe closes."""
        self.dead = True
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while True:
            try:
                frame = read_frame(self.process.stdout, MAX_RESULT_BYTES + 1024)
            except FrameTooLarge as error:  # the worker checks sizes itself: this one is not playing by the rules
                self.kill()
                self._settle(ActivityFailed("output", f"result: {error} of JSON, more than the {MAX_RESULT_BYTES:,}"
                                                      " a result may be"))
                break
            except (OSError, ValueError):
                frame = None
            if frame is None:
                self.dead = True
                code = self.process.wait()
                captured = self._captured()
                self._settle(ActivityFailed("crash", f"its worker process {_ended(code)} before it answered",
                                            captured=captured))
                break
            if not self.ready:  # its first frame, empty: it is ready
                self.ready = True
                self._settle(Ran(None))
                continue
            self._settle(self._answer(frame))

    def discard(self) -> None:
        """A worker that is gone: its capture files are closed (what it printed has been read)."""
        self.kill()
        for file in (self.out, self.err):
            file.close()

    def _captured(self) -> Captured:
        try:
            return Captured(_read_capture(self.out), _read_capture(self.err))
        except (OSError, ValueError, AttributeError):  # closed, or no `os.pread` here: the call goes on without
            return Captured()

    def _answer(self, frame: bytes) -> Ran | ActivityFailed:
        captured = self._captured()
        try:
            answer = _json.parse(frame)
        except ValueError as error:
            return ActivityFailed("output", f"result: {error}", captured=captured)
        if "error" in answer:
            failure = answer["error"]
            return ActivityFailed(failure["type"], failure["message"], failure.get("traceback"), captured)
        return Ran(answer["result"], captured)

    def _settle(self, outcome: Ran | ActivityFailed) -> None:
        pending = self.pending
        if pending is None:
            return

        def settle() -> None:
            if pending.future.done():
                return
            if isinstance(outcome, ActivityFailed):
                pending.future.set_exception(outcome)
            else:
                pending.future.set_result(outcome)

        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            pending.loop.call_soon_threadsafe(settle)


class WorkerPool:
    """Up to `size` worker processes, started when first needed and kept for the next calls; one left idle
    for `idle_seconds` is let go (by one thread of the pool's, started with its first idle worker)."""

    def __init__(self, size: int = POOL_SIZE, idle_seconds: float = IDLE_SECONDS) -> None:
        self.size = size
        self.idle_seconds = idle_seconds
        self._reaper: threading.Thread | None = None
        self._idle: list[_Worker] = []
        self._busy = 0
        self._waiting: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self._lock = threading.Lock()

    async def run(self, request: dict[str, Any], limit: float, job: Job) -> Ran:
        worker = await self._acquire()
        job.worker = worker
        try:
            return await worker.call(request, limit, job)
        finally:
            job.worker = None
            self._release(worker)

    async def _acquire(self) -> _Worker:
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        self._busy += 1
                        return worker
                    worker.discard()
                start = self._busy < self.size
                if start:
                    self._busy += 1
                else:
                    turn: asyncio.Future[None] = loop.create_future()
                    self._waiting.append((loop, turn))
            if start:
                try:
                    return _Worker()
                except BaseException:
                    self._release(None)
                    raise
            try:
                await turn
            except asyncio.CancelledError:
                with self._lock:
                    try:
                        self._waiting.remove((loop, turn))
                    except ValueError:  # a release woke this one already: its turn goes to the next waiter
                        self._wake_next()
                raise

    def _release(self, worker: _Worker | None) -> None:
        with self._lock:
            self._busy -= 1
            if worker is not None:
                if worker.alive:
                    self._keep_idle(worker)
                else:
                    worker.discard()
            self._wake_next()

    def _wake_next(self) -> None:
        """Under the lock: wake the first waiter still waiting on a loop still open (a wake-up sent to one that is
        not would be lost, and the next waiter would wait for another release, for ever if none comes)."""
        while self._waiting:
            loop, turn = self._waiting.popleft()
            if not turn.done():
                try:
                    loop.call_soon_threadsafe(_wake, turn)
                except RuntimeError:  # its loop closed: nobody waits there
                    continue
                return

    def prestart(self) -> None:
        """Start a worker now when none is there, so that the first call does not wait for its start."""
        with self._lock:
            if self._idle or self._busy:
                return
            self._busy += 1
        try:
            worker = _Worker()
        finally:
            with self._lock:
                self._busy -= 1
        with self._lock:
            self._keep_idle(worker)

    def _keep_idle(self, worker: _Worker) -> None:
        """Under the lock: `worker` waits for the next call, and is let go if none comes in time."""
        worker.idle_since = time.monotonic()
        self._idle.append(worker)
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name="contextdeck-worker-reaper", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        while True:
            time.sleep(min(self.idle_seconds / 2, 30.0))
            now = time.monotonic()
            with self._lock:
                old = [worker for worker in self._idle if now - worker.idle_since >= self.idle_seconds]
                self._idle = [worker for worker in self._idle if worker not in old]
            for worker in old:
                worker.discard()

    def close(self) -> None:
        """Let every idle worker go (the application is leaving)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def shutdown(self) -> None:
        """Let every idle worker go and wait until each has left."""
        with self._lock:
            idle = list(self._idle)
        self.close()
        for worker in idle:
            worker.process.wait()


def _wake(turn: asyncio.Future[None]) -> None:
    if not turn.done():
        turn.set_result(None)


class Job:
    """One call's run in a worker, which `kill()` ends at once (an `Execution`'s `cancel`)."""

    def __init__(self) -> None:
        self.worker: _Worker | None = None
        self.captured = Captured()  # what it printed before it was cancelled

    def kill(self) -> None:
        if self.worker is not None:
            self.worker.kill()


class Jobs:
    """The calls of one execution running in workers, by call index, so that they can be ended at once."""

    def __init__(self, pool: WorkerPool | None = None) -> None:
        self._pool = pool
        self.running: dict[int, Job] = {}
        self.cancelled: dict[int, Captured] = {}  # what cancelled calls printed, for their error message

    async def run(self, index: int, request: dict[str, Any], limit: float) -> Ran:
        job = Job()
        self.running[index] = job
        try:
            return await (self._pool or shared_pool()).run(request, limit, job)
        except asyncio.CancelledError:
            self.cancelled[index] = job.captured
            raise
        finally:
            if self.running.get(index) is job:
                del self.running[index]

    def stop(self, indices: Any = None) -> None:
        """Kill the workers of calls `indices` (all when None), and wait for them to be gone."""
        for index, job in list(self.running.items()):
            if indices is None or index in indices:
                job.kill()


_shared: WorkerPool | None = None


def shared_pool() -> WorkerPool:
    """The process's pool, made at its first use; its idle workers are let go when the process exits."""
    global _shared
    if _shared is None:
        _shared = WorkerPool()
        atexit.register(_shared.close)
    return _shared




def prestart_workers() -> None:
    """Start an activity worker ahead of the first call (the window does when activities are loaded)."""
    shared_pool().prestart()
