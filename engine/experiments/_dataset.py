"""A dataset of inputs for an experiment: JSON Lines, one case a line (docs/experiments.md).

A line is `{"input": {...}, "id": ..., "expect": ..., "trajectory": {...}}` (`input` required, the rest
optional), or a bare object, which is the input itself. An object counts as a case object only when it has
`input` and no key outside those four, so an input that happens to have an `input` field stays an input;
one with `input`, another of the four and a key outside them is refused (a misspelt `expected`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..document._document import jsonl_lines
from ..protocol._errors import DocumentError
from ..protocol._messages import MISSING
from ..protocol._schemas import SchemaFault, schema_check

CASE_KEYS = frozenset({"id", "input", "expect", "trajectory"})


@dataclass(frozen=True)
class Trajectory:
    """What the agent is expected to do on the way: the tools it calls, in order, and how many turns it takes."""

    tools: tuple[str, ...] | None = None
    turns: int | None = None


@dataclass(frozen=True)
class Case:
    """One input of a dataset: its line (from 1), id (None when the line gives none), input and expectations."""

    line: int
    id: Any
    input: Any
    expect: Any = MISSING  # MISSING or None: no expectation of the output
    trajectory: Trajectory | None = None

    @property
    def name(self) -> str:
        """A name for the case's files: its id when it has one, else its line."""
        return f"line-{self.line}" if self.id is None else str(self.id)


def _trajectory(value: Any, where: str, line: int) -> Trajectory | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"tools", "turns"}:
        raise DocumentError(where, "'trajectory' must be an object with 'tools' and/or 'turns'", line=line)
    tools = value.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(tool, str) for tool in tools)):
        raise DocumentError(where, "'trajectory.tools' must be a list of tool names", line=line)
    turns = value.get("turns")
    if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool) or turns < 0):
        raise DocumentError(where, "'trajectory.turns' must be a whole number of turns", line=line)
    return Trajectory(tuple(tools) if tools is not None else None, turns)


def is_schema(expect: Any) -> bool:
    return isinstance(expect, dict) and "$schema" in expect


def parse_cases(raw: bytes, name: str = "<dataset>") -> list[Case]:
    """The cases of a JSON Lines dataset; a `DocumentError` with the line (and column) of the first bad one."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for number, value in zip(*jsonl_lines(raw, name), strict=True):
        if not isinstance(value, dict):
            raise DocumentError(name, f"expected an object (a case or an input), got {type(value).__name__}",
                                line=number)
        others = set(value) - CASE_KEYS
        if "input" in value and others and set(value) & (CASE_KEYS - {"input"}):
            # Half a case: `expected` for `expect` would otherwise make the whole line the input, unchecked.
            raise DocumentError(name, f"a case has only id, input, expect and trajectory, not "
                                f"{', '.join(repr(key) for key in sorted(others))}; to give this whole object as "
                                "the input, write it as {\"input\": ...}", line=number)
        if "input" in value and not others:
            case_id = value.get("id")
            if (case_id is not None and not isinstance(case_id, str | int)) or isinstance(case_id, bool):
                raise DocumentError(name, "'id' must be a string or a whole number", line=number)
            # 1 and "1" are one id: a run document, a comparison and the window name a case by its text.
            if case_id is not None:
                text = str(case_id)
                if text in seen:
                    raise DocumentError(name, f"id {case_id!r} is also on line {seen[text]}", line=number)
                seen[text] = number
            expect = value.get("expect", MISSING)
            if is_schema(expect):  # said before anything runs, not as each output's fault
                try:
                    schema_check(expect)
                except SchemaFault as fault:
                    raise DocumentError(name, f"'expect' is a JSON Schema (it has $schema) that cannot be used: "
                                        f"{fault}", line=number) from None
            case = Case(number, case_id, value["input"], expect, _trajectory(value.get("trajectory"), name, number))
        else:
            case = Case(number, None, value)
        cases.append(case)
    if not cases:
        raise DocumentError(name, "the dataset has no cases (one JSON object a line)")
    return cases


def load_cases(path: str | os.PathLike[str]) -> list[Case]:
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise DocumentError(str(file), error.strerror or str(error)) from None
    return parse_cases(raw, str(file))
