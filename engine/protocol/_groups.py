"""Plan entries (SPEC 6.10): a call, or a pattern group `{"all" | "any" | "race": [call, ...]}`.

The seeds name the patterns but give no syntax; this is ContextDeck's. Calls are numbered in plan order,
group members included, so "call 3" means the same thing in the plan, the debugger, `validate` and the
error messages. No dependencies, so that validation and execution can both number calls the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PATTERNS = ("all", "any", "race")


@dataclass(frozen=True, slots=True)
class Unit:
    """What the scheduler starts at once: one call (`pattern` "one") or a pattern group of calls."""

    pattern: str
    members: tuple[int, ...]
    entry: int  # its position among the plan's entries


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
        group = group_of(entry)
        if group is None:
            index = len(calls)  # one int object for both when they are equal (a large plan holds many)
            units.append(Unit("one", (index,), index if index == position else position))
            calls.append(entry)
            continue
        pattern, members = group
        members = members if isinstance(members, list) else [members]
        start = len(calls)
        calls.extend(members)
        units.append(Unit(pattern, tuple(range(start, len(calls))), position))
    return calls, units
