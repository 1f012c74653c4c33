"""The audit of one output message (SPEC 6.5): its call, date, method, path, and the value before and after.

Qt-free: the audit panel renders this value.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from contextdeck.engine import MISSING, Context, body_of, flatten, pending_calls, read_record


@dataclass(frozen=True)
class Audit:
    """What an output message says about how it was made, and what it changed at its path."""

    message_index: int
    call: Any
    call_index: int | None
    date: str | None
    method: str
    path: str | None
    instance: str | None
    before: Any
    after: Any
    problem: str | None = None
    run: dict[str, Any] | None = None  # its `_run` audit: start, duration, inputs (docs/format.md §9)

    @property
    def diff(self) -> list[str]:
        """A unified diff of the value at the path, before and after the message."""
        before, after = _lines(self.before), _lines(self.after)
        return list(difflib.unified_diff(before, after, "before", "after", lineterm="", n=3))


def _lines(value: Any) -> list[str]:
    if value is MISSING:
        return ["(not set)"]
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False).splitlines()


def is_output(message: Any) -> bool:
    return isinstance(message, dict) and "_call" in body_of(message)


def audit(context: Context, index: int, solution: Any = None) -> Audit | None:
    """The audit of message `index`, or None when it is not an output message (it has no `_call`)."""
    message = body_of(context[index])
    if not is_output(message):
        return None
    info = context.info(index)
    write = info.write
    path = "†" + ".".join((info.kind or "data", *write.path)) if write is not None and write.path else None
    explicit = message.get("_outputPath")
    if isinstance(explicit, str):
        path = explicit
    before = after = MISSING
    if path is not None and write is not None and write.problem is None:
        before, after = _change(context, path, info.instance, index)
    call_index = _call_of(context, index, solution)
    method = message.get("_outputMethod", "set")
    date = message.get("_date")
    run = message.get("_run")
    return Audit(index, message["_call"], call_index, date if isinstance(date, str) else None, str(method), path,
                 info.instance, before, after, write.problem if write is not None else None,
                 run if isinstance(run, dict) else None)


def _call_of(context: Context, index: int, solution: Any) -> int | None:
    """The pending call the message is a record of, as the engine's run record matches them."""
    entries, plan_index = pending_calls(context, solution)
    calls, _ = flatten(entries)
    record = read_record(context, calls, plan_index)
    return next((call for call, found in record.calls.items() if any(e.position == index for e in found.entries)),
                None)


def _change(context: Context, path: str, instance: str | None, index: int) -> tuple[Any, Any]:
    """The value at `path` before and after message `index`, from the engine's blame up to it: what the
    message shadowed and what it made (the same value twice when it did not change the path)."""
    try:
        blame = context.blame(path, instance=instance, at=index + 1)
    except ValueError:
        return MISSING, MISSING
    last = blame.entries[-1] if blame.entries else None
    if last is not None and last.index == index:
        return last.shadowed, last.value
    value = blame.value if blame.found else MISSING
    return value, value
