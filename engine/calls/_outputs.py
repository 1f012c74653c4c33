"""The messages a call leaves behind (SPEC 6.5, 6.7): outputs with audit metadata, and error messages."""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from collections.abc import Callable
from typing import Any

from attrs import frozen

from ..document import _json
from ..document._validate import json_path
from ..protocol._expressions import Reference
from ..protocol._messages import MISSING, RECORD_TYPE, body_of, get_path, kind_of, payload_of, written_at
from ._calls import CallPlan, Mode

Clock = Callable[[], str]
Message = dict[str, Any]


@frozen
class OutputError(Exception):
    """A result that cannot be written (not JSON, or a returned message that fits no destination)."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def utc_now() -> str:
    """The default clock: ISO 8601 UTC to the second, as the seeds write `_date`. The answers of one second are
    one string: a run asks twice a call (`_date`, `_run.started`), thousands of times a second, and would keep two
    strings a call (about 140 bytes)."""
    second = int(time.time())
    last = _LAST_SECOND[0]
    if last[0] != second:
        last = _LAST_SECOND[0] = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return last[1]


# The last second `utc_now` told, and its text (one tuple, replaced whole: threads may ask at once).
_LAST_SECOND: list[tuple[int, str]] = [(-1, "")]


def fixed_clock(moment: str) -> Clock:
    """A clock that always answers `moment` (normalised to UTC `...Z`), so runs can be reproduced."""
    parsed = dt.datetime.fromisoformat(moment.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    parsed = parsed.astimezone(dt.UTC)
    text = parsed.strftime("%Y-%m-%dT%H:%M:%S") + (f".{parsed.microsecond:06d}" if parsed.microsecond else "") + "Z"
    return lambda: text


# What a result may be, so that the document it goes into can always be saved and read back (limits the
# user sees in docs/execution.md): the document's own limits, less the levels a saved request, the message and
# the output path around a result take.
MAX_RESULT_DEPTH = _json.MAX_DEPTH - 54
MAX_INTEGER_DIGITS = _json.MAX_INT_DIGITS
MAX_RESULT_BYTES = 16 * 1024 * 1024
_INTEGER_BOUND = 10**MAX_INTEGER_DIGITS


def check_json(value: Any, where: str = "$") -> None:
    """Raise `OutputError` unless `value` is plain JSON a document can hold: finite numbers, string keys, at
    most `MAX_RESULT_DEPTH` levels, integers of at most `MAX_INTEGER_DIGITS` digits. The error names the path.

    Walks without recursion: a value nested thousands deep is refused, not a RecursionError.
    """
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        node, at, level = stack.pop()
        if node is None or isinstance(node, str | bool):
            continue
        if isinstance(node, int):
            if abs(node) >= _INTEGER_BOUND:
                digits = int(node.bit_length() * 0.30103)
                raise OutputError(f"{_place(at, where, level)}: an integer of about {digits} digits (at most "
                                  f"{MAX_INTEGER_DIGITS} can be saved)")
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                raise OutputError(f"{_place(at, where, level)}: {node} is not a JSON number")
            continue
        if not isinstance(node, list | tuple | dict):
            name = type(node).__name__
            raise OutputError(f"{_place(at, where, level)}: {'an' if name[0] in 'aeiou' else 'a'} {name} is not JSON")
        if level >= MAX_RESULT_DEPTH:
            raise OutputError(_cycle(value, where) or f"{_place(at, where, level)}: nested deeper than "
                                                      f"{MAX_RESULT_DEPTH} levels")
        if isinstance(node, dict):
            for key in node:
                if not isinstance(key, str):
                    raise OutputError(f"{_place(at, where, level)}: key {key!r} is not a string")
            items = [(item, f"{at}.{key}", level + 1) for key, item in node.items()]
        else:
            items = [(item, f"{at}[{index}]", level + 1) for index, item in enumerate(node)]
        stack.extend(reversed(items))  # the first problem in document order is the one reported


def _cycle(value: Any, where: str) -> str | None:
    """Where `value` contains itself, said so: a cycle is nested past any limit too, but that says less."""
    found = _json.unwritable(value)
    if found is None or found[1] != _json.CYCLE:
        return None
    at = where + json_path(found[0])[1:]
    return f"{_place(at, where, len(found[0]))}: {_json.CYCLE}"


# The levels of a path an output error shows in full.
_SHOWN_LEVELS = 12


def _place(at: str, where: str, level: int) -> str:
    """Path `at` (`level` levels below `where`) as an error says it: one hundreds of levels deep by its first
    `_SHOWN_LEVELS` segments and its depth."""
    if level <= _SHOWN_LEVELS:
        return at
    cut, count = len(where), 0
    for position in range(len(where), len(at)):
        if at[position] in ".[":
            count += 1
            if count > _SHOWN_LEVELS:
                cut = position
                break
    return f"{at[:cut]}… ({level} levels)"


def check_size(value: Any, where: str = "$") -> None:
    """Raise `OutputError` when `value` (plain JSON, see `check_json`) is more than `MAX_RESULT_BYTES` as JSON."""
    if value is None or type(value) in (bool, int, float):
        return  # a number's digits are bounded by `check_json`
    size = len(_json.dumps(value, indent=False).encode("utf-8", "surrogatepass"))
    if size > MAX_RESULT_BYTES:
        raise OutputError(f"{where}: {size:,} bytes of JSON, more than the {MAX_RESULT_BYTES:,} a result may be")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def wrap(path: tuple[str, ...], value: Any) -> Any:
    """`value` wrapped in objects along `path`: ("user", "status") -> {"user": {"status": value}}."""
    for segment in reversed(path):
        value = {segment: value}
    return value


def is_message(result: Any) -> bool:
    """An activity's result that is a message is appended as it is: a dict with a string `type`, or 001's
    `{role, content}` with a typed `content` object, which stands for that object everywhere (`body_of`)."""
    return isinstance(result, dict) and (isinstance(result.get("type"), str) or body_of(result) is not result)


def _audit(plan: CallPlan, destination: Reference | None, date: str | None, run: Message | None) -> Message:
    """The keys the engine writes on a call's output: a result can claim no other call, path or instance (008).
    `date` None: no `_date` (an imported result whose time no trace recorded)."""
    audit: Message = {}
    if plan.instance is not None:
        audit["_instance"] = plan.call["_instance"]
    audit["_call"] = plan.call
    if date is not None:
        audit["_date"] = date
    if plan.method != "set":
        audit["_outputMethod"] = plan.method
    if destination is not None:
        path = str(destination)
        if path == plan.output_path:  # one string, not two; and the write holds the plan's own path (`written_at`)
            audit["_outputPath"] = plan.output_path
            written_at(plan.output_path, destination.kind, destination.path)
        else:
            audit["_outputPath"] = path
    if run is not None:
        audit["_run"] = run
    return audit


def output_messages(plan: CallPlan, result: Any, clock: Clock, run: Message | None = None, *,
                    alternative: int = 0) -> list[Message]:
    """The messages that write `result` to the call's destinations (SPEC 6.5); `run` is their `_run` audit.

    `a || b`: a plain value goes to `a`, unless `alternative` picks another (a model may choose).
    """
    if plan.destinations is None:
        return []
    check_json(result, "result")
    check_size(result, "result")
    if plan.mode is Mode.EXPLICIT and is_message(result):  # a latent `_output` is always a plain value
        return _adopted(plan, _plain(body_of(result)), clock, run)
    alternatives = plan.destinations.alternatives
    if not 0 <= alternative < len(alternatives):
        raise OutputError(f"there is no alternative {alternative} in {plan.output_path!r}")
    return _written(plan, alternatives[alternative], result, clock, run)


def _written(plan: CallPlan, alternative: tuple[Reference, ...], value: Any, clock: Clock,
             run: Message | None) -> list[Message]:
    value = _plain(value)
    run = None if run is None else _json.sharing_keys(run)  # a run's messages and audits have a few shapes
    return [output_message(plan, ref, value, clock(), run) for ref in alternative]  # `a && b`: the same value to each


def output_message(plan: CallPlan, destination: Reference, value: Any, date: str | None,
                   run: Message | None) -> Message:
    """The data message writing plain JSON `value` at one of the call's destinations, with the call's audit."""
    return _json.sharing_keys({"type": "data", "kind": destination.kind, "data": wrap(destination.path, value),
                               **_audit(plan, destination, date, run)})


def failure_messages(plan: CallPlan, error: dict[str, str], clock: Clock, run: Message | None = None) -> list[Message]:
    """A run-time failure written to the call's last branch of `a || b` (012: the engine fills †state.error).

    Empty when the output path has no second branch: the failure is then an error message (SPEC 6.7).
    The `_run` audit names the error, so the record knows the call failed.
    """
    if plan.destinations is None or len(plan.destinations.alternatives) < 2:
        return []
    run = {**(run or {}), "error": error}
    return _written(plan, plan.destinations.alternatives[-1], error, clock, run)


def run_record_message(call: Any, clock: Clock, run: Message) -> Message:
    """What a call that ran and writes nothing leaves (a latent thought, a fire-and-forget start): audit only."""
    return {"type": RECORD_TYPE, "_call": call, "_date": clock(), "_run": run}


def _adopted(plan: CallPlan, message: Message, clock: Clock, run: Message | None) -> list[Message]:
    """A data message an activity returned (its body, in the typed form the engine writes), written at each
    destination its data fills in the first alternative where it fills one: it picks its branch of `a || b` (003),
    and fans out over `a && b` as a plain value does (SPEC 6.5), one output message per destination.

    The engine writes the audit metadata itself: the message's own `_`-keys (`_call`, `_outputPath`, `_date`,
    `_instance`, `_run`, ...) are dropped, so a result can neither claim another call nor another path, nor leave
    its call's instance (008).
    """
    kind = kind_of(message)
    if message.get("type") == "error":  # (format.md §8: error messages are the engine's record of a failed call)
        raise OutputError("the returned error message is not written: an activity fails its call by raising an "
                          "exception, and the engine writes the error message with the call that failed")
    if kind is None:
        raise OutputError(f"the returned message of type {message.get('type')!r} is not a data message")
    assert plan.destinations is not None
    payload = payload_of(message)
    for alternative in plan.destinations.alternatives:
        fitting = [ref for ref in alternative if ref.kind == kind and get_path(payload, ref.path) is not MISSING]
        if fitting:
            adopted = {key: value for key, value in message.items() if not key.startswith("_")}
            return [{**adopted, **_audit(plan, ref, clock(), run)} for ref in fitting]
    raise OutputError(f"the returned ¶{kind} message fills none of the destinations {plan.output_path!r}"
                      + _read_as_message(plan.destinations.alternatives[0][0]))


def _read_as_message(destination: Reference) -> str:
    """A hint for an activity that meant a plain object with a `type` key (`{"type": "rain"}`) as its value: SPEC
    6.4 reads it as a message, so its author is shown the data message that writes a value at the destination."""
    example = json.dumps({"type": "data", "kind": destination.kind, "data": wrap(destination.path, _VALUE)},
                         ensure_ascii=False).replace(json.dumps(_VALUE), "...")
    return (" (a result with a string 'type' is read as a message, SPEC 6.4: to write an object with a 'type' key "
            f"as a value, return it in a data message, e.g. {example})")


_VALUE = "\x00value"  # stands for the value in `_read_as_message`'s example


def error_message(call: Any, error_type: str, text: str, clock: Clock, run: Message | None = None,
                  details: Message | None = None) -> Message:
    """`{"type":"error","data":{"call":…,"error":{"type":…,"message":…}},"_date":…}` (SPEC 6.7), with `_run`.

    `details` add keys to the error (a model's raw `reply` when its answer did not validate).
    """
    error = {"type": error_type, "message": text, **(details or {})}
    message: Message = {"type": "error", "data": {"call": call, "error": error}, "_date": clock()}
    if run is not None:
        message["_run"] = run
    return message
