"""Running one call (SPEC 6.4–6.7): resolve, validate, run the activity or take the latent result, build messages.

Never raises for a failing call: every failure becomes an `Outcome` with an error, turned into an error
message by the scheduler when the tick ends.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..calls._activities import Activity, error_type
from ..calls._calls import CallPlan, Mode, Problem, check_parameters, copied, resolve_call, scoped_context
from ..calls._output_check import OUTPUT_SCHEMA_ERROR, output_problem, written_value
from ..calls._outputs import Clock, OutputError, failure_messages, is_message, output_messages, run_record_message
from ..calls._record import inputs_audit, result_audit
from ..document._context import Context
from ..protocol._errors import describe_exception
from ..protocol._messages import MISSING
from ..protocol._records import record
from ._pool import ActivityFailed, ActivityTimedOut, Jobs, Ran


@record
class Outcome:
    """What running a call gave: messages to append, or an error (`type`, `message`); `result` for the debugger."""

    index: int
    messages: tuple[dict[str, Any], ...] = ()  # with an error: the failure written to its `a || b` branch
    error: tuple[str, str] | None = None
    result: Any = None
    ephemeral: bool = False  # ran, and has nowhere to write (a latent thought or fire-and-forget)
    audit: dict[str, Any] | None = None  # the `_run` audit its messages carry (docs/format.md §9)
    waiting: bool = False  # a delegated call whose session waits: nothing to write yet

    @property
    def ok(self) -> bool:
        return self.error is None


class _Threads:
    """A few daemon threads shared by every sync activity run in-process (never a thread per call).

    Daemon threads: a hung activity neither blocks the loop nor the process's exit. When all of them are
    busy, calls wait for one; their timeout runs meanwhile.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started = 0
        self._idle = 0

    def submit(self, work: Callable[[], None]) -> None:
        with self._lock:
            if self._idle == 0 and self._started < self.size:
                self._started += 1
                threading.Thread(target=self._serve, name="contextdeck-activity", daemon=True).start()
        self._work.put(work)

    def _serve(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            work = self._work.get()
            with self._lock:
                self._idle -= 1
            work()


IN_PROCESS_THREADS = 32
_threads = _Threads(IN_PROCESS_THREADS)

Settled = tuple["asyncio.Future[Any]", Any, BaseException | None]


class _Results:
    """Results of sync activities, handed back to their event loop in batches: one wake-up of the loop for
    every result that came meanwhile, not one per call (each is a write to the loop's self-pipe and a
    callback of its own: a large part of a trivial call's cost)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Settled]] = (
            weakref.WeakKeyDictionary())

    def put(self, loop: asyncio.AbstractEventLoop, settled: Settled) -> None:
        with self._lock:
            batch = self._waiting.get(loop)
            if batch is not None:  # a hand-back is on its way: this result goes with it
                batch.append(settled)
                return
            self._waiting[loop] = [settled]
        try:
            loop.call_soon_threadsafe(self._hand_back, loop)
        except RuntimeError:  # the loop closed: nobody is waiting any more
            with self._lock:
                self._waiting.pop(loop, None)

    def _hand_back(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            batch = self._waiting.pop(loop, [])
        for future, value, error in batch:
            if future.done():  # cancelled or timed out meanwhile: the late result is dropped
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)


_results = _Results()


class Raised(Exception):
    """A `BaseException` an activity raised in this process (`sys.exit`, `KeyboardInterrupt`, ...), carried back as
    the call's failure under its own name, as a worker process reports it: raised on as it is, it would end the
    run, or the whole program, and lose what the run had made."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(describe_exception(raised))
        self.error_type = type(raised).__name__
        self.__cause__ = raised


def in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run a sync activity on one of the shared daemon threads; its result comes back to the loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def work() -> None:
        try:
            value, error = fn(*args), None
        except Exception as exc:  # the activity's failure travels back as data
            value, error = None, exc
        except BaseException as exc:  # SystemExit and friends must not end the process from a thread
            value, error = None, Raised(exc)
        _results.put(loop, (future, value, error))

    _threads.submit(work)
    return future


def limit_of(plan: CallPlan, timeout: float) -> float:
    assert plan.activity is not None
    return plan.activity.timeout if plan.activity.timeout is not None else timeout


_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


async def invoke(plan: CallPlan, resolved: dict[str, Any], context: Context, timeout: float,
                 jobs: Jobs | None = None) -> Ran:
    """Call the activity with (call, tool, context) under its timeout; its failure propagates.

    With `jobs`, an activity loaded from a file runs in a worker process (`_pool`); otherwise here, on copies
    of its arguments, so that what it changes in them changes nothing of the document or the record.
    """
    assert plan.activity is not None
    activity = plan.activity
    limit = limit_of(plan, timeout)
    scoped = scoped_context(context, plan)
    if plan.prescribed:  # the call names no path: the activity is told the tool's, to pick a branch by (003)
        resolved = {**resolved, "_outputPath": plan.output_path}
    if jobs is not None and activity.source is not None:
        request = {"file": activity.source, "name": activity.name, "call": resolved, "tool": plan.tool,
                   "context": scoped}
        return await jobs.run(plan.index, request, limit)
    call, tool = copied(resolved), copied(plan.tool)
    fn = activity.fn
    try:
        async with asyncio.timeout(limit):
            result = await fn(call, tool, scoped) if activity.asynchronous else await in_thread(fn, call, tool, scoped)
            if type(result) not in _PLAIN and inspect.isawaitable(result):  # (the ABC check is slow; JSON never awaits)
                result = await result
    except (Exception, asyncio.CancelledError):  # a failure, a timeout, a cancel: as they are
        raise
    except BaseException as raised:  # an async activity's `sys.exit`: the call's failure, not the program's end
        raise Raised(raised) from raised
    return Ran(_own(result, activity))


def _own(result: Any, activity: Activity) -> Any:
    """A copy of what an in-process activity returned: one that keeps it and changes it later (another call,
    a task of its own) must not change the record. What cannot be copied is not JSON, which the output
    check refuses. A typed activity's result is made anew by its return type's check (`_typed`), not copied."""
    if type(result) not in (dict, list) or (activity.typing is not None and activity.typing.returns is not None):
        return result
    try:
        return copied(result)
    except Exception:  # any failure to copy: the output check says what is wrong
        return result


def failure(plan: CallPlan, error: BaseException, timeout: float, audit: dict[str, Any] | None = None) -> Outcome:
    if isinstance(error, TimeoutError):
        assert plan.activity is not None
        text = f"activity {plan.activity.name!r} did not finish within {limit_of(plan, timeout):g} s"
        if isinstance(error, ActivityTimedOut) and audit is not None:
            audit = {**audit, **error.captured.audit()}
        return Outcome(plan.index, error=("timeout", text), audit=audit)
    if isinstance(error, ActivityFailed):  # in its worker: the failure comes as text, with what it printed
        assert plan.activity is not None
        if audit is not None:
            audit = {**audit, **error.captured.audit()}
            if error.traceback:
                audit["traceback"] = error.traceback
        text = error.message if error.kind != "crash" else f"activity {plan.activity.name!r}: {error.message}"
        return Outcome(plan.index, error=(error.kind, text), audit=audit)
    if audit is not None:  # the activity raised: where, for the audit view (never shown to the LLM)
        audit = {**audit, "traceback": "".join(traceback.format_exception(error)).rstrip()}
    return Outcome(plan.index, error=(error_type(error), describe_exception(error)), audit=audit)


def prepare(plan: CallPlan, context: Context) -> tuple[dict[str, Any], Problem | None]:
    """The call with references resolved, and the problem when its parameters break the tool's schema."""
    resolved = resolve_call(context, plan)
    return resolved, check_parameters(plan, resolved)


def inputs_of(resolved: dict[str, Any]) -> dict[str, Any]:
    """What a call reads, resolved: its parameters, and a latent call's `_output`."""
    return {key: value for key, value in resolved.items() if not key.startswith("_") or key == "_output"}


def started_audit(audit: dict[str, Any], resolved: dict[str, Any], clock: Clock) -> dict[str, Any]:
    """The `_run` audit of a run that starts now: the call's position, its start, and what it received."""
    return {**audit, "started": clock(), **inputs_audit(inputs_of(resolved))}


@record
class Provided:
    """A result given from outside to a latent call: the value, the branch of `a || b` it goes to, and
    `_run` keys to add (a model's exchange, `model`)."""

    value: Any
    alternative: int = 0
    audit: dict[str, Any] | None = None


def conclude(plan: CallPlan, result: Any, clock: Clock, audit: dict[str, Any] | None = None,
             alternative: int = 0) -> Outcome:
    """The outcome of a result: output messages, a run record (no destination), or an output error (a result
    that cannot be written, or that breaks the tool's `_output` schema)."""
    if plan.destinations is None:
        problem = output_problem(plan, result) if result is not None else None
        if problem is not None:
            return Outcome(plan.index, error=(OUTPUT_SCHEMA_ERROR, problem), result=result, audit=audit)
        records = () if audit is None else (run_record_message(plan.call, clock, audit),)
        return Outcome(plan.index, records, result=result, ephemeral=True, audit=audit)
    try:
        messages = output_messages(plan, result, clock, audit, alternative=alternative)
    except OutputError as error:
        return Outcome(plan.index, error=("output", str(error)), result=result, audit=audit)
    returned = plan.mode is Mode.EXPLICIT and is_message(result)
    value = written_value(plan, messages[0]) if returned else result
    problem = output_problem(plan, value) if value is not MISSING else None
    if problem is not None:
        return Outcome(plan.index, error=(OUTPUT_SCHEMA_ERROR, problem), result=result, audit=audit)
    return Outcome(plan.index, tuple(messages), result=result, audit=audit)


@dataclass(frozen=True)
class Replayed:
    """An activity's result recorded in an earlier run of the same call with the same inputs: given again
    instead of running the activity (an experiment's `--replay-activities`)."""

    value: Any


@dataclass(frozen=True)
class Withheld:
    """The activity is not to run (a dry run): the call fails with `reason` instead."""

    reason: str


# Asked before an activity runs, with the tool's name and the digest of the call's resolved inputs: a result
# to give instead (`Replayed`), a refusal (`Withheld`), or None to run the activity.
Replay = Callable[[str, str], Replayed | Withheld | None]

Timer = Callable[[], float]


async def perform(plan: CallPlan, context: Context, clock: Clock, timeout: float, provided: Provided | None = None,
                  audit: dict[str, Any] | None = None, timer: Timer = time.perf_counter,
                  jobs: Jobs | None = None, replay: Replay | None = None) -> Outcome:
    """Run one ready call to its outcome. Cancellation propagates; everything else is an error outcome.

    `audit` (the call's identity) is completed with the start, the inputs and the duration (`timer`, seconds).
    """
    start = timer()

    def _timed(audit: dict[str, Any], start: float) -> dict[str, Any]:
        return {**audit, "seconds": round(timer() - start, 6)}

    resolved, problem = prepare(plan, context)
    audit = started_audit(audit or {}, resolved, clock)
    if problem is not None:
        return Outcome(plan.index, error=(problem.type, problem.message), audit=_timed(audit, start))
    if plan.mode is Mode.LATENT:
        if provided is None:
            return conclude(plan, resolved.get("_output"), clock, _timed(audit, start))
        audit = {**audit, **(provided.audit or {})}
        return conclude(plan, provided.value, clock, _timed(audit, start), provided.alternative)
    if replay is not None and plan.activity is not None and plan.tool_name is not None:
        given = replay(plan.tool_name, audit["digest"])
        if isinstance(given, Withheld):
            return Outcome(plan.index, error=("withheld", given.reason), audit=_timed(audit, start))
        if isinstance(given, Replayed):
            audit = {**audit, **result_audit(given.value), "replayed": True}
            return _branched(plan, conclude(plan, given.value, clock, _timed(audit, start)), clock)
    try:
        ran = await invoke(plan, resolved, context, timeout, jobs)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        return _branched(plan, failure(plan, error, timeout, _timed(audit, start)), clock)
    ended = {**audit, **result_audit(ran.result)}
    ended["seconds"] = round(timer() - start, 6)
    ended.update(ran.captured.audit())
    return _branched(plan, conclude(plan, ran.result, clock, ended), clock)


def _branched(plan: CallPlan, outcome: Outcome, clock: Clock) -> Outcome:
    """An activity whose result cannot be written (not JSON, a message filling no destination, one breaking the
    tool's `_output` schema) failed as one that raised did: 012's plan handles it in the last branch of `a || b`."""
    if outcome.error is None or outcome.messages:
        return outcome
    kind, text = outcome.error
    branch = failure_messages(plan, {"type": kind, "message": text}, clock, outcome.audit)
    return replace(outcome, messages=tuple(branch)) if branch else outcome
