"""Where calls stand and what a tick did (SPEC 6.8, 6.11): frozen values the debugger shows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..protocol._records import record


class Status(StrEnum):
    PENDING = "pending"
    READY = "ready"
    BLOCKED = "blocked"
    AWAITING_APPROVAL = "awaiting approval"
    WAITING_FOR_OUTPUT = "waiting for output"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    FIRE_AND_FORGET = "fire-and-forget"
    CANCELLED = "cancelled"


SETTLED = frozenset({Status.DONE, Status.FAILED, Status.FIRE_AND_FORGET, Status.CANCELLED})
OPEN = frozenset({Status.PENDING, Status.READY, Status.BLOCKED, Status.AWAITING_APPROVAL,
                   Status.WAITING_FOR_OUTPUT})


@record
class CallState:
    """Where one call stands: `waiting_for` names the paths of a blocked call; `outputs` are message ids. Its
    fields are in slots: an execution keeps one for every call of its plan."""

    index: int
    call: Any
    status: Status = Status.PENDING
    waiting_for: tuple[str, ...] = ()
    error: dict[str, str] | None = None
    outputs: tuple[int, ...] = ()
    result: Any = None
    finished: bool = False  # a fire-and-forget run has ended (with `result` or `error`)
    failed_writers: tuple[int, ...] = ()  # a blocked call's writers that failed or were cancelled: it waits on them
    not_taken: bool = False  # a blocked call on a branch not taken: it holds no reader back (`_readiness.not_taken`)




def blocked_because(state: CallState, failed: str) -> str:
    """Why a blocked call waits, said after the paths it waits for: its writer that failed (`failed`, named as the
    caller names calls), else a branch not taken; "" when neither."""
    if failed:
        return f" (its writer {failed} failed)"
    return " (a branch not taken: no call left in the plan writes it)" if state.not_taken else ""


@dataclass(frozen=True)
class Decision:
    """What the approval hook says about a call: approve, reject (with a reason) or edit (with the new call)."""

    action: str
    reason: str = ""
    call: Any = None

    @classmethod
    def approve(cls) -> Decision:
        return cls("approve")

    @classmethod
    def reject(cls, reason: str = "rejected by the approval hook") -> Decision:
        return cls("reject", reason)

    @classmethod
    def edit(cls, call: Any) -> Decision:
        """Run `call` instead (it is re-checked; outputs record it as `_call`)."""
        return cls("edit", call=call)


Approver = Callable[[CallState], "Decision | Awaitable[Decision]"]


@dataclass(frozen=True)
class TickReport:
    """What a tick (or a step) did and left: calls started, blocked ones with their paths, errors appended."""

    ran: tuple[int, ...] = ()
    blocked: tuple[tuple[int, tuple[str, ...]], ...] = ()
    awaiting_approval: tuple[tuple[int, tuple[str, ...]], ...] = ()
    waiting_for_output: tuple[int, ...] = ()
    errors: tuple[dict[str, Any], ...] = ()
    refused: tuple[tuple[int, ...], ...] = ()
    stopped_at: int | None = None
    failed_at: int | None = None  # with `break_on_failure`: the call whose failure ended the tick early
    lazy: bool = False  # the plan is lazy (012): nothing ran, it waits for `approve_plan()`


@dataclass(frozen=True)
class Stale:
    """A call that ran with other inputs than it would receive now: `before` is what it received (None when
    only its digest was kept), `now` what it would receive; `edited` when the call itself changed since."""

    index: int
    before: dict[str, Any] | None
    now: dict[str, Any]
    edited: bool = False

    @property
    def changed(self) -> tuple[str, ...]:
        """The inputs whose values differ (all of them when only the digest was kept)."""
        if self.before is None:
            return tuple(self.now)
        keys = dict.fromkeys([*self.before, *self.now])
        return tuple(key for key in keys if self.before.get(key, _ABSENT) != self.now.get(key, _ABSENT))


_ABSENT = object()
