"""Running one call (SPEC 6.4–6.7): resolve, validate, run the activity or take the latent result, build messages.

Never raises for a failing call: every failure becomes an `Outcome` with an error, turned into an error
message by the scheduler when the tick ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ._calls import CallPlan, Mode, Problem, check_parameters, resolve_call, scoped_context
from ._context import Context
from ._messages import MISSING
from ._outputs import Clock, OutputError, failure_messages, output_messages


@dataclass(frozen=True)
class Outcome:
    """What running a call gave: messages to append, or an error (`type`, `message`); `result` for the debugger."""

    index: int
    messages: tuple[dict[str, Any], ...] = ()  # with an error: the failure written to its `a || b` branch
    error: tuple[str, str] | None = None
    result: Any = None
    ephemeral: bool = False  # ran, and has nowhere to write (a latent thought or fire-and-forget)

    @property
    def ok(self) -> bool:
        return self.error is None


def in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run a sync activity in a daemon thread: a hung one neither blocks the loop nor the process's exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled or timed out meanwhile: the late result is dropped
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        try:
            value, error = fn(*args), None
        except Exception as exc:  # the activity's failure travels back as data
            value, error = None, exc
        except BaseException as exc:  # SystemExit and friends must not end the process from a thread
            value, error = None, RuntimeError(f"the activity raised {type(exc).__name__}")
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=work, name="contextdeck-activity", daemon=True).start()
    return future


async def invoke(plan: CallPlan, resolved: dict[str, Any], context: Context, timeout: float) -> Any:
    """Call the activity with (call, tool, context) under its timeout; exceptions propagate."""
    assert plan.activity is not None
    fn = plan.activity.fn
    limit = plan.activity.timeout if plan.activity.timeout is not None else timeout
    args = (resolved, plan.tool, scoped_context(context, plan))
    async with asyncio.timeout(limit):
        result = await fn(*args) if inspect.iscoroutinefunction(fn) else await in_thread(fn, *args)
        if inspect.isawaitable(result):
            result = await result
    return result


def failure(plan: CallPlan, error: BaseException, timeout: float) -> Outcome:
    if isinstance(error, TimeoutError):
        assert plan.activity is not None
        limit = plan.activity.timeout if plan.activity.timeout is not None else timeout
        text = f"activity {plan.activity.name!r} did not finish within {limit:g} s"
        return Outcome(plan.index, error=("timeout", text))
    return Outcome(plan.index, error=(type(error).__name__, str(error) or type(error).__name__))


def prepare(plan: CallPlan, context: Context) -> tuple[dict[str, Any], Problem | None]:
    """The call with references resolved, and the problem when its parameters break the tool's schema."""
    resolved = resolve_call(context, plan)
    return resolved, check_parameters(plan, resolved)


def conclude(plan: CallPlan, result: Any, clock: Clock) -> Outcome:
    """The outcome of a result: output messages, nothing (no destination), or an output error."""
    if plan.destinations is None:
        return Outcome(plan.index, result=result, ephemeral=True)
    try:
        messages = output_messages(plan, result, clock)
    except OutputError as error:
        return Outcome(plan.index, error=("output", str(error)), result=result)
    return Outcome(plan.index, tuple(messages), result=result)


async def perform(plan: CallPlan, context: Context, clock: Clock, timeout: float, provided: Any = MISSING) -> Outcome:
    """Run one ready call to its outcome. Cancellation propagates; everything else is an error outcome."""
    resolved, problem = prepare(plan, context)
    if problem is not None:
        return Outcome(plan.index, error=(problem.type, problem.message))
    if plan.mode is Mode.LATENT:
        return conclude(plan, provided if provided is not MISSING else resolved.get("_output"), clock)
    try:
        result = await invoke(plan, resolved, context, timeout)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        failed = failure(plan, error, timeout)
        assert failed.error is not None
        kind, text = failed.error
        return replace(failed, messages=tuple(failure_messages(plan, {"type": kind, "message": text}, clock)))
    return conclude(plan, result, clock)
