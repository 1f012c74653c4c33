"""References a call's instance never finds (013): the path only other instances' data have.

A call for an instance (its `_instance`, or a copy the run makes of a call per instance) reads the global layer
and its own. When what it reads is written only in other instances' data (by no global data message, no
schema, no output path of any plan, nor the call's own instance), it is never found: the call waits forever,
without a word. "Written" is static (`calls/_written`): a place whose shape is open accepts every path.
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..calls._calls import in_parameters
from ..calls._written import (
    Heads,
    Node,
    approval_gate,
    heads_of,
    merge_path,
    merge_read,
    of_schema,
    read_destinations,
    read_plans,
    unwritten_at,
)
from ..document._context import Context
from ..document._validate import call_place, json_path
from ..document._view import Messages, by_position
from ..protocol._errors import ExpressionError
from ..protocol._expressions import OUTPUT_PATH, Expression, Occurrence, Reference, Where, occurrences
from ..protocol._groups import PlanReading, PlanReadings
from ..protocol._messages import body_of, payload_of
from ..resolve._resolution import Diagnostic
from ._instancing import instances_of


class Ran(Protocol):
    """What `never_found` reads of a run (`Execution` is one; this module is below it): its context, its calls
    planned (`CallPlan`s by index, each copy with its instance) and its solution."""

    @property
    def context(self) -> Messages: ...

    @property
    def plans(self) -> Any: ...

    @property
    def solution(self) -> Any: ...


@dataclass(frozen=True)
class Unseen:
    """A reference of call `call` (of the plan message `plan`; None: the solution's) at `where` that `instance`
    never finds; `holders`: the instances whose data have it."""

    plan: int | None
    call: int
    where: Where
    reference: Reference
    instance: str
    holders: tuple[str, ...]
    stranger: bool  # no data message has the instance


# (kind, path, instance) -> whether the instance never finds the path: each judged once.
_Judged = dict[tuple[str, tuple[str, ...], str], bool]
# A reference to judge: (plan message, call, where in the call, the reference, the instance it is read for, the
# expression it is in).
_Read = tuple[int | None, int, Where, Reference, str, Expression]


def odd_instance(value: Any, *, call: bool) -> str | None:
    """Why an `_instance` (a call's, or a data message's with `call` False) is no instance id, or None. 013 names an
    instance by a short token (`①`, `employee_B`), and a number is read as its text (format.md §2); an empty one, a
    boolean, an array or an object is read as Python's text of it (`True`, `[1]`): an instance of that name, which a
    model filling an optional field, or a slip, never meant. A warning: the run goes on, as for an unknown instance."""
    if value is None or (type(value) is str and value) or type(value) in (int, float):
        return None
    shown = json.dumps(value, ensure_ascii=False, default=str)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    runs, instead = ("the call runs for", "a global call") if call else ("the message is the data of", "global data")
    return (f"{shown} is not an instance id (013: a short token, a non-empty string or a number): {runs} an instance "
            f"named {str(value)!r}; leave _instance out for {instead}")


def odd_data_instance(text: str, context: Messages, index: int) -> str | None:
    """`odd_instance` of the `_instance` of the data message at `index`, whose text (`MessageInfo.instance`, Python's
    `str` of it) is kept: the message is read only when the text may be one it refuses, so a document's ordinary
    messages are never read again."""
    if text[:1] not in _ODD_TEXTS and text not in _ODD_TEXTS:
        return None
    return odd_instance(body_of(context[index]).get("_instance"), call=False)


# Every `_instance` `odd_instance` refuses reads, as `str` writes it, as one of these ("" is the empty one's), or
# starts with one (an array's, an object's).
_ODD_TEXTS = frozenset(("", "[", "{", "True", "False"))


def instance_problems(context: Messages, plans: PlanReadings) -> list[Diagnostic]:
    """Warnings for what the calls of `plans` (as the run repeats them per instance) read that their instance never
    finds, each at its call as written, with the reference's position in its expression and the instances."""
    ids, kinds = instances_of(context)
    if not ids:
        return []
    reads = [read for index, reading in plans.items() if reading is not None
             for read in _plan_reads(index, reading, ids, kinds)]
    return [Diagnostic(plan, call_place(plan, f"call {call} {json_path(where)}"), said, "warning")
            for plan, call, where, said in _told(context, lambda: plans, reads, ids)]


def turn_instance_problems(context: Messages, reading: PlanReading, places: list[str]) -> list[Diagnostic]:
    """`instance_problems` of a turn's calls (`reading`), each at its field in the turn (`places`: each call's
    JSON path, `$.calls[0]`): the context's plans and the turn's own output paths write for the instance."""
    ids, kinds = instances_of(context)
    if not ids:
        return []
    reads = list(_plan_reads(None, reading, ids, kinds))

    def plans() -> PlanReadings:  # read only when the data leave a read unwritten
        return {**read_plans(context), None: reading}

    return [Diagnostic(None, places[call] + json_path(where)[1:], said, "warning")
            for _, call, where, said in _told(context, plans, reads, ids)]


def _plan_reads(index: int | None, reading: PlanReading, ids: list[str], kinds: set[str]) -> Iterator[_Read]:
    """What the calls of one plan read of an instanced kind, once for each instance they run for."""
    for number, (call, found) in enumerate(zip(reading.calls, reading.reads, strict=True)):
        if not found:  # it reads nothing: most calls of a run
            continue
        for where, ref, expression in _reads(found, kinds):
            # A call without `_instance` that reads an instanced kind runs once per instance (013).
            instance = call.get("_instance")
            for name in ids if instance is None else [str(instance)]:
                yield index, number, where, ref, name, expression


def _told(context: Messages, plans: Callable[[], PlanReadings], reads: list[_Read],
          ids: list[str]) -> list[tuple[int | None, int, Where, str]]:
    """Each reference some instance never finds, once for the copies of its call: (plan, call, where, what)."""
    told: dict[tuple[int | None, int, Where, str, int], list[Unseen]] = {}
    for unseen in _unseen(context, plans, reads, ids):
        told.setdefault((unseen.plan, unseen.call, unseen.where, str(unseen.reference), unseen.reference.start),
                        []).append(unseen)
    return [(plan, call, where, _said(group)) for (plan, call, where, _, _), group in told.items()]


def never_found(execution: Ran, indices: Iterable[int]) -> dict[int, str]:
    """For the calls at `indices` of a run (blocked when it stopped), why their instance never finds what they wait
    for, by call index: what `instance_problems` says of them, with the context as the run left it."""
    context = execution.context
    ids, kinds = instances_of(context)
    if not ids:
        return {}
    reads: list[_Read] = []
    for index in indices:
        plan = execution.plans[index]  # the run's calls: each copy names its instance
        if plan.instance is not None:
            found = _reads(occurrences(plan.call), kinds)
            reads.extend((None, index, where, ref, plan.instance, expression) for where, ref, expression in found)
    told: dict[int, list[Unseen]] = {}
    # Every plan's output paths may write for the instance: read only when the data leave a read unwritten.
    for unseen in _unseen(context, lambda: read_plans(context, execution.solution), reads, ids):
        told.setdefault(unseen.call, []).append(unseen)
    return {index: "; ".join(dict.fromkeys(_said([unseen]) for unseen in group)) for index, group in told.items()}


def _reads(found: Sequence[Occurrence], kinds: set[str]) -> Iterator[tuple[Where, Reference, Expression]]:
    """What a call reads (its parameters' and `_output`'s expressions, as `CallPlan.reads`) of a kind some instance
    has: where, the reference and the expression it is in."""
    for where, _, parsed in found:
        if where == OUTPUT_PATH or isinstance(parsed, ExpressionError) or not (where[0] == "_output" or
                                                                             in_parameters(where)):
            continue  # a destination is written, not read; a malformed expression is validate's own problem
        for ref in parsed.references:
            if ref.kind in kinds and not approval_gate(ref):  # a person writes an approval (SPEC 6.8)
                yield where, ref, parsed


def _unseen(context: Messages, plans: Callable[[], PlanReadings], reads: list[_Read],
            ids: list[str]) -> list[Unseen]:
    """The reads no global write and no write of their own instance make, that another instance's data make;
    `plans`: the plans whose output paths write too, `ids`: the instances the data messages have."""
    if not reads:
        return []
    heads = heads_of(read[3] for read in reads)
    shared, own = _data_layers(context, heads)
    seen: _Judged = {}
    left = [read for read in reads if _never(seen, read[3], read[4], shared, own)]
    if not left:  # most reads are of what the data write
        return []
    # The output paths below are merged into `shared`; the data's layers stay as `_data_layers` keeps them: a kind's
    # tree is copied when a path is first merged into it, the others are shared.
    shared = dict(shared)
    written: set[str] = set()
    for reading in plans().values():  # any call's output path may write it for the instance
        for kind, path in read_destinations(reading) if reading is not None else ():
            if kind in heads:
                if kind not in written:
                    written.add(kind)
                    shared[kind] = copy.deepcopy(shared[kind]) if kind in shared else {}
                shared[kind] = merge_path(shared[kind], path)
    unseen: list[tuple[Unseen, Expression]] = []
    for plan, call, where, ref, instance, expression in left:
        if unwritten_at(shared, ref) is None:
            continue
        holders = tuple(other for other, layer in own.items() if unwritten_at(layer, ref) is None)
        if holders:  # nothing writes it at all: `plan_problems` says so already
            unseen.append((Unseen(plan, call, where, ref, instance, holders, instance not in ids), expression))
    return _waiting(unseen)


# What the data write of the kinds read: (shared: global data and every schema, own: per instance its data).
_Layers = tuple[dict[str, Node | None], dict[str, dict[str, Node | None]]]
# The last context's layers, for the first segments read, as of its revision and length (one entry: the turn
# dialog checks one turn of one document per keystroke, and the document does not change meanwhile).
_last: tuple[weakref.ref[Context], int, int, frozenset[tuple[str, frozenset[str]]], _Layers] | None = None


def _data_layers(context: Messages, heads: Heads) -> _Layers:
    """What the data messages write below the first segments `heads` names, global and per instance: one pass over
    the context, kept for a `Context` until it is edited (its `revision`) or grows."""
    global _last
    key = frozenset((kind, frozenset(segments)) for kind, segments in heads.items())
    last = _last
    # Taken before the pass: an edit made meanwhile (a window's, while a check runs aside) is a new pass next time.
    revision, size = (context.revision, len(context)) if isinstance(context, Context) else (None, len(context))
    if revision is not None and last is not None and last[0]() is context and last[1:4] == (revision, size, key):
        return last[4]
    shared: dict[str, Node | None] = {}  # what every instance sees: global data, schemas (output paths: later)
    own: dict[str, dict[str, Node | None]] = {}  # per instance, what its own data write
    infos, message_at = by_position(context)
    for index, info in enumerate(infos):
        if info.kind is None or (wanted := heads.get(info.kind)) is None or info.identity is None:
            continue
        message = message_at(index)
        if "type" not in message:
            message = body_of(message)
        instance = info.identity[1]
        layer = shared if instance is None else own.setdefault(instance, {})
        layer[info.kind] = merge_read(layer.get(info.kind, {}), payload_of(message), wanted)
        if "schema" in message:  # a schema declares the kind's paths for every instance
            shared[info.kind] = merge_read(shared.get(info.kind, {}), of_schema(message["schema"]), wanted)
    if revision is not None and isinstance(context, Context):
        _last = (weakref.ref(context), revision, size, key, (shared, own))
    return shared, own


def _waiting(unseen: list[tuple[Unseen, Expression]]) -> list[Unseen]:
    """The unseen references whose expression waits for ever: every alternative of its `a || b` holds one. An
    alternative without one may still be found (SPEC 3: the first found), and the call runs on it."""
    blocked: dict[tuple[int | None, int, Where, str], set[Reference]] = {}
    for found, _ in unseen:
        blocked.setdefault((found.plan, found.call, found.where, found.instance), set()).add(found.reference)
    return [found for found, expression in unseen
            if all(any(ref in blocked[found.plan, found.call, found.where, found.instance] for ref in alternative)
                   for alternative in expression.alternatives)]


def _never(seen: _Judged, ref: Reference, instance: str, shared: dict[str, Node | None],
           own: dict[str, dict[str, Node | None]]) -> bool:
    """Whether neither the global data nor the instance's own write `ref` (each reference judged once an instance:
    a plan of 100,000 calls reads a few paths)."""
    key = (ref.kind, ref.path, instance)
    found = seen.get(key)
    if found is None:
        found = seen[key] = (unwritten_at(shared, ref) is not None
                             and unwritten_at(own.get(instance, {}), ref) is not None)
    return found


def _said(group: list[Unseen]) -> str:
    """One reference never found for the instances of `group` (copies of one call, or the call itself)."""
    first = group[0]
    instances = list(dict.fromkeys(unseen.instance for unseen in group))
    holders = list(dict.fromkeys(holder for unseen in group for holder in unseen.holders))
    strangers = " (no data message has it)" if all(unseen.stranger for unseen in group) else ""
    have = "has" if len(holders) == 1 else "have"
    return (f"{first.reference} (at position {first.reference.start}) is never found for "
            f"{_instances(instances)}{strangers}: only {_instances(holders)} {have} it, and no global data or "
            "output path writes it, so the call would wait forever (013)")


def _instances(names: list[str]) -> str:
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"instance{'s' if len(names) > 1 else ''} {shown}"
