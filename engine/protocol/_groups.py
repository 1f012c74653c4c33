"""Plan entries (SPEC 6.10): a call, or a pattern group `{"all" | "any" | "race": [call, ...]}`.

The seeds name the patterns but give no syntax; this is ContextDeck's. Calls are numbered in plan order,
group members included, so "call 3" means the same thing in the plan, the debugger, `validate` and the
error messages. Validation and execution both number calls here, so the two always agree.

A plan of 100,000 calls is checked several ways before it runs (its expressions, the paths it writes, the
references it reads, its set-up): `read_plan` reads it once for all of them.
"""

from __future__ import annotations

from typing import Any

from ._expressions import Occurrence, calls_occurrences
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
    calls: list[Any] = []
    units: list[Unit] = []
    for position, entry in enumerate(entries):
        group = group_of(entry) if type(entry) is not dict or len(entry) == 1 else None  # most are calls of 2+ keys
        if group is None:
            index = len(calls)  # one int object for both when they are equal (a large plan holds many)
            units.append(_Lone(index) if index == position else _Group("one", (index,), position))
            calls.append(entry)
            continue
        pattern, members = group
        members = members if isinstance(members, list) else [members]
        start = len(calls)
        calls.extend(members)
        units.append(_Group(pattern, tuple(range(start, len(calls))), position))
    return calls, units


@record
class PlanReading:
    """A plan's entries read once, for every check of it and for its set-up: its calls flattened out of their
    groups (numbered as the executor numbers them), the units that group them, and each call's expressions,
    parsed, with where they sit (`occurrences` of the call; none for a call that is no object)."""

    calls: list[Any]
    units: list[Unit]
    expressions: list[list[Occurrence]]
    entries: list[Any] | None = None  # the plan as written (the list itself, not a copy), when read from it


def read_plan(entries: list[Any]) -> PlanReading:
    """`entries` read once (see `PlanReading`)."""
    calls, units = flatten(entries)
    return PlanReading(calls, units, calls_occurrences(calls), entries)


def unlisted_members(reading: PlanReading) -> dict[int, tuple[str, Any]]:
    """The calls `flatten` made of a group's members that are no list (`{"all": "x"}`), by call number: the
    group's pattern and its members as written."""
    found: dict[int, tuple[str, Any]] = {}
    if reading.entries is None:
        return found
    for unit in reading.units:
        group = group_of(reading.entries[unit.entry]) if unit.pattern in PATTERNS else None
        if group is not None and not isinstance(group[1], list):
            found[unit.members[0]] = group
    return found


# The readings of a document's plans, by plan message index (None: the solution's calls); None for a plan
# message whose `plan` is not an array.
PlanReadings = dict[int | None, PlanReading | None]
