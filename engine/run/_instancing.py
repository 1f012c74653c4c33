"""One plan across all instances (013): a plan is a global template, run once per instance it touches.

A request has instances when some of its data messages carry `_instance`. A pending call without
`_instance` that reads, writes or scopes a kind some instance has is run once per instance, each copy
targeted with `_instance`; a call that names its instance, or touches only global kinds, runs once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..calls._calls import Problem, in_parameters
from ..document._context import Context
from ..document._view import Messages
from ..protocol._errors import ExpressionError
from ..protocol._expressions import Occurrence
from ..protocol._groups import PlanReading, Unit, read_plan
from ..protocol._messages import Form


def instances_of(context: Messages) -> tuple[list[str], set[str]]:
    """The instance ids in order of first appearance, and the kinds that have instanced messages."""
    ids: dict[str, None] = {}
    kinds: set[str] = set()
    for kind, instance in _identities(context):
        if instance is not None:
            ids[instance] = None
            kinds.add(kind)
    return list(ids), kinds


def _identities(context: Messages) -> list[tuple[str, str | None]]:
    # A Context keeps its writes per identity: asking it costs O(identities), not a scan of every message
    # (the calls panel asks after every edit pause).
    if isinstance(context, Context):
        return context.identities()
    infos = (context.info(index) for index in range(len(context)))
    return list(dict.fromkeys(info.identity for info in infos if info.form is Form.DATA and info.identity))


def _per_instance(call: Any, found: list[Occurrence], kinds: set[str]) -> bool:
    """Whether a call without `_instance` reads, writes or scopes one of `kinds` (those some instance has):
    through its parameters' expressions, its `_output`'s, its `_outputPath` or its `_scopes`; `found` is its
    expressions (`occurrences` of it). A malformed expression touches nothing (its analysis says so)."""
    if not isinstance(call, dict) or call.get("_instance") is not None:
        return False
    for where, _, parsed in found:
        if (where[0] in _OUTPUT or in_parameters(where)) and not isinstance(parsed, ExpressionError):
            for ref in parsed.references:
                if ref.kind in kinds:
                    return True
    scopes = call.get("_scopes")
    return isinstance(scopes, list) and any(isinstance(scope, str) and scope in kinds for scope in scopes)


_OUTPUT = frozenset(("_output", "_outputPath"))


def expand_instances(entries: list[Any], context: Messages) -> list[Any]:
    """The plan's entries with each instance-bound call (or pattern group) repeated once per instance."""
    reading = read_plan(entries)
    expanded = instanced(reading, context)
    if expanded is reading:
        return entries
    return [expanded.calls[unit.members[0]] if unit.pattern == "one"
            else {unit.pattern: [expanded.calls[i] for i in unit.members]} for unit in expanded.units]


def _bound(reading: PlanReading, context: Messages) -> tuple[list[str], list[bool]]:
    """The instance ids, and for each call whether it runs once per instance (empty: no call does)."""
    ids, kinds = instances_of(context)
    if not ids:
        return ids, []
    bound = [_per_instance(call, found, kinds) for call, found in zip(reading.calls, reading.expressions, strict=True)]
    return ids, bound if any(bound) else []


def copied_from(reading: PlanReading, context: Messages) -> list[tuple[int, str | None]]:
    """For each call of `instanced(reading, context)`, the index in `reading` of the call it copies, and the
    instance the copy runs for (None: the call runs once)."""
    origins = copies(reading, context)[1]
    return [(index, None) for index in range(len(reading.calls))] if origins is None else origins


def as_written(problems: dict[int, list[Problem]],
               origins: Sequence[tuple[int, str | None]]) -> dict[int, list[Problem]]:
    """The problems of a plan's calls repeated per instance (numbered as `instanced` numbers them) as the problems
    of its calls as written (`origins`: `copied_from`'s): a problem copies share is said once, with the instances
    it is for (the first few)."""
    found: dict[tuple[int, str, str, str], list[str]] = {}
    for index in sorted(problems):
        origin, instance = origins[index]
        for problem in problems[index]:
            instances = found.setdefault((origin, problem.type, problem.message, problem.where), [])
            if instance is not None:
                instances.append(instance)
    written: dict[int, list[Problem]] = {}
    for (origin, kind, message, where), instances in found.items():
        shown = ", ".join(instances[:3]) + (f" and {len(instances) - 3} more" if len(instances) > 3 else "")
        said = f" (for instance{'s' if len(instances) > 1 else ''} {shown})" if instances else ""
        written.setdefault(origin, []).append(Problem(kind, message + said, where))
    return dict(sorted(written.items()))


def instanced(reading: PlanReading, context: Messages) -> PlanReading:
    """A plan's reading with each instance-bound call (or pattern group) repeated once per instance, each copy
    targeted with `_instance` (the same reading when the context has no instances, or no call is bound)."""
    return copies(reading, context)[0]


def copies(reading: PlanReading, context: Messages) -> tuple[PlanReading, list[tuple[int, str | None]] | None]:
    """`instanced(reading, context)` and, when it copied any call, its `copied_from` (made in the same pass: a run's
    set-up asks both of 100,000 calls), else None."""
    ids, bound = _bound(reading, context)
    if not bound:
        return reading, None
    given, read, reading_reads = reading.calls, reading.expressions, reading.reads
    calls: list[Any] = []
    units: list[Unit] = []
    expressions: list[list[Occurrence]] = []
    reads: list[tuple[Occurrence, ...]] = []
    origins: list[tuple[int, str | None]] = []
    add_call, add_unit, add_expressions, add_origin = calls.append, units.append, expressions.append, origins.append
    add_reads = reads.append
    for unit in reading.units:
        members = unit.members
        if len(members) == 1 and not bound[first := members[0]]:
            index, position = len(calls), len(units)  # a call that runs once (the most common unit)
            add_call(given[first])
            add_expressions(read[first])
            add_reads(reading_reads[first])
            add_origin((first, None))
            add_unit(unit if first == index and unit.entry == position
                     else Unit.of(unit.pattern, (index,), index if index == position else position))
            continue
        if len(members) == 1 and unit.pattern == "one":  # a call alone, bound: a copy of it per instance
            call, found, its_reads = given[first], read[first], reading_reads[first]
            for name in ids:
                index, position = len(calls), len(units)
                add_call({**call, "_instance": name})
                add_expressions(found)
                add_reads(its_reads)
                add_origin((first, name))
                add_unit(Unit.of("one", (index,), index if index == position else position))
            continue
        for instance in ids if any(bound[i] for i in members) else (None,):
            start = len(calls)
            for i in members:
                calls.append({**given[i], "_instance": instance} if bound[i] else given[i])
                expressions.append(read[i])  # `_instance` is no expression's place: a copy's are the call's
                reads.append(reading_reads[i])
                origins.append((i, instance if bound[i] else None))
            indices, position = tuple(range(start, len(calls))), len(units)
            # As `flatten` numbers them: one int object for a call's index and its unit's position when equal.
            units.append(Unit.of(unit.pattern, indices, indices[0] if indices == (position,) else position))
    # Each copy of a call made of a group's members that are no list is made of that group too.
    unlisted = reading.unlisted and {index: reading.unlisted[origin] for index, (origin, _) in enumerate(origins)
                                     if origin in reading.unlisted}
    return PlanReading(calls, units, expressions, reads, unlisted), origins
