"""Plan entries (SPEC 6.10): a call, or a pattern group `{"all" | "any" | "race": [call, ...]}`.

The seeds name the patterns but give no syntax; this is ContextDeck's. Calls are numbered in plan order,
group members included, so "call 3" means the same thing in the plan, the debugger, `validate` and the
error messages. Validation and execution both number calls here, so the two always agree.

A plan of 100,000 calls is checked several ways before it runs (its expressions, the paths it writes, the
references it reads, its set-up): `read_plan` reads it once for all of them.
"""

from __future__ import annotations

import json
from typing import Any

from ._expressions import Occurrence, calls_occurrences, calls_reads
from ._records import record

PATTERNS = ("all", "any", "race")


class Unit:
    """What the scheduler starts at once: one call (`pattern` "one") or a pattern group of calls (its `members`,
    their indices), the `entry` at its position among the plan's entries. Made by `Unit.of`; equal by those three.

    A plan keeps one a call, so a call alone whose entry is its own index (every call of a plan without groups,
    the most common unit) is kept as that index alone (`_Lone`: 40 bytes; a unit and a one-call tuple: 104)."""

    __slots__ = ()

    @staticmethod
    def of(pattern: str, members: tuple[int, ...], entry: int) -> Unit:
        """The unit of `members` run as `pattern` ("one": a call alone), at `entry` among the plan's entries."""
        if pattern == "one" and len(members) == 1 and members[0] == entry:
            return _Lone(entry)
        return _Group(pattern, members, entry)

    @property
    def pattern(self) -> str:
        raise NotImplementedError

    @property
    def members(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def entry(self) -> int:
        raise NotImplementedError

    def _fields(self) -> tuple[str, tuple[int, ...], int]:
        return self.pattern, self.members, self.entry

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unit) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Unit(pattern={self.pattern!r}, members={self.members!r}, entry={self.entry!r})"


class _Group(Unit):
    __slots__ = ("_entry", "_members", "_pattern")

    def __init__(self, pattern: str, members: tuple[int, ...], entry: int) -> None:
        self._pattern, self._members, self._entry = pattern, members, entry

    @property
    def pattern(self) -> str:
        return self._pattern

    @property
    def members(self) -> tuple[int, ...]:
        return self._members

    @property
    def entry(self) -> int:
        return self._entry


class _Lone(Unit):
    __slots__ = ("_index",)

    def __init__(self, index: int) -> None:
        self._index = index

    @property
    def pattern(self) -> str:
        return "one"

    @property
    def members(self) -> tuple[int, ...]:
        return (self._index,)

    @property
    def entry(self) -> int:
        return self._index


def group_of(entry: Any) -> tuple[str, Any] | None:
    """(pattern, members) when a plan entry is a pattern group, else None."""
    if isinstance(entry, dict) and len(entry) == 1:
        (key, members), = entry.items()
        if key in PATTERNS:
            return key, members
    return None


def flatten(entries: list[Any]) -> tuple[list[Any], list[Unit]]:
    """The calls of a plan in order, and the units that group them."""
    calls, units, _ = _flattened(entries)
    return calls, units


def _flattened(entries: list[Any]) -> tuple[list[Any], list[Unit], dict[int, tuple[str, Any]] | None]:
    """`flatten`'s, and the calls made of a group's members that are no list (`{"all": "x"}`: its one call, by
    number: the group's pattern and members as written; None: none)."""
    calls: list[Any] = []
    units: list[Unit] = []
    unlisted: dict[int, tuple[str, Any]] | None = None
    for position, entry in enumerate(entries):
        group = group_of(entry) if type(entry) is not dict or len(entry) == 1 else None  # most are calls of 2+ keys
        if group is None:
            index = len(calls)  # one int object for both when they are equal (a large plan holds many)
            units.append(_Lone(index) if index == position else _Group("one", (index,), position))
            calls.append(entry)
            continue
        pattern, members = group
        if not isinstance(members, list):  # read as a group of that one member (format.md §6)
            unlisted = {} if unlisted is None else unlisted
            unlisted[len(calls)] = group
            members = [members]
        start = len(calls)
        calls.extend(members)
        units.append(_Group(pattern, tuple(range(start, len(calls))), position))
    return calls, units, unlisted


@record
class PlanReading:
    """A plan's entries read once, for every check of it and for its set-up: its calls flattened out of their
    groups (numbered as the executor numbers them), the units that group them, each call's expressions, parsed,
    with where they sit (`occurrences` of the call; none for a call that is no object), those of them it reads
    (`calls_reads`: what the checks of what a call reads go through, most calls of a run none), and the calls made of a
    group's members that are no list (`flatten`'s `unlisted`)."""

    calls: list[Any]
    units: list[Unit]
    expressions: list[list[Occurrence]]
    reads: list[tuple[Occurrence, ...]]
    unlisted: dict[int, tuple[str, Any]] | None = None


def read_plan(entries: list[Any]) -> PlanReading:
    """`entries` read once (see `PlanReading`)."""
    calls, units, unlisted = _flattened(entries)
    expressions = calls_occurrences(calls)
    return PlanReading(calls, units, expressions, calls_reads(expressions), unlisted)


def not_a_call(call: Any, group: tuple[str, Any] | None = None) -> str | None:
    """Why a plan's call is no call (`why_no_call`), None when it is one."""
    if isinstance(call, dict) and isinstance(name := call.get("_tool"), str) and name:
        return None
    return why_no_call(call, group)


def why_no_call(call: Any, group: tuple[str, Any] | None = None) -> str:
    """Why a plan's call, known to be no call (no object with a non-empty string `_tool`), is none, said the one way
    `validate`, `run` and the turn check say it. `group`: the group whose members are no list that `flatten` made it
    of (`PlanReading.unlisted`): when that member is no call either, the group is what is wrong. A group written
    where a call goes is said as one (SPEC 6.10's patterns)."""
    if group is not None:
        members = json.dumps(group[1], ensure_ascii=False, default=repr)
        return f"a pattern group's {group[0]!r} must be an array of calls, not {members}"
    if not isinstance(call, dict):
        return "a call must be an object"
    keys = list(call) if "_tool" not in call else []
    patterns = [key for key in keys if key in PATTERNS]
    if patterns and len(keys) == 1:  # `flatten` reads a group of one key: this one is a member of another
        return f"pattern groups do not nest: a group's members are calls, not another group ({patterns[0]!r})"
    if patterns:
        others = ", ".join(repr(key) for key in keys if key not in PATTERNS)
        return f"a pattern group is an object of one key, 'all', 'any' or 'race'; this one also has {others}"
    return "a call must be an object with a non-empty string _tool"


# The readings of a document's plans, by plan message index (None: the solution's calls); None for a plan
# message whose `plan` is not an array.
PlanReadings = dict[int | None, PlanReading | None]
