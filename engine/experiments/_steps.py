"""The steps a run took, read from its document: each turn, each call's tool and inputs, each result.

A run's document is its own record (docs/format.md §9): every output, error and run-record message carries
`_call` (the call as written) and `_run` (its position in the plan, the digest of its resolved inputs). The
steps of two runs of one case are compared to find where the second first did something else (`diverged`),
and a baseline run's steps are the activity results an experiment may replay (`Recorded`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..protocol._messages import MISSING, body_of, kind_of, payload_of


@dataclass(frozen=True)
class Step:
    """One call a run made: its turn (from 1), its position in that turn's plan, the tool, the digest of its
    resolved inputs, and what it gave (`failed` when it gave an error)."""

    turn: int
    call: int
    tool: str
    inputs: str | None
    result: Any  # the activity's result as `_run.result` recorded it (MISSING when not kept), or the error
    failed: bool

    @property
    def key(self) -> tuple[str, str | None]:
        return self.tool, self.inputs


@dataclass(frozen=True)
class Steps:
    turns: int
    steps: tuple[Step, ...]

    def tools(self) -> tuple[str, ...]:
        return tuple(step.tool for step in self.steps)


@dataclass(frozen=True)
class Baseline:
    """One case of a baseline experiment: the steps of its run and its final output (None when none)."""

    steps: Steps
    output: Any


def _tool(call: Any) -> str | None:
    tool = call.get("_tool") if isinstance(call, dict) else None
    return tool if isinstance(tool, str) else None


def read_steps(messages: list[dict[str, Any]], turns_before: int = 0) -> Steps:
    """The steps of a run's messages. A plan message starts a turn; a run's turns given by a solution rather
    than a plan message count as the number `turns_before` says was there before the first plan."""
    turn = turns_before
    steps: list[Step] = []
    seen: set[tuple[int, int]] = set()
    for message in map(body_of, messages):
        if message.get("type") == "plan":
            turn += 1
            continue
        audit = message.get("_run")
        if not isinstance(audit, dict) or not isinstance(audit.get("call"), int):
            continue
        failed = kind_of(message) == "error" and "_call" not in message
        call = payload_of(message).get("call") if failed and isinstance(payload_of(message), dict) else \
            message.get("_call")
        tool = _tool(call)
        position = (max(turn, 1), audit["call"])
        if tool is None or position in seen:  # `a && b` writes two messages for one call
            continue
        seen.add(position)
        result = payload_of(message).get("error") if failed else audit.get("result", MISSING)
        steps.append(Step(position[0], audit["call"], tool, audit.get("digest"), result, failed))
    return Steps(max(turn, 1 if steps else 0), tuple(steps))


def diverged(baseline: Steps, run: Steps, same_output: bool) -> dict[str, Any] | None:
    """Where `run` first did something other than `baseline`: the turn and call (from 1) and what differed;
    None when every step and the output agree."""
    for mine, theirs in zip(run.steps, baseline.steps, strict=False):
        if mine.turn != theirs.turn or mine.tool != theirs.tool:
            return {"turn": mine.turn, "call": mine.call + 1, "reason": f"called {mine.tool}, the baseline "
                    f"{theirs.tool}" + ("" if mine.turn == theirs.turn else f" in turn {theirs.turn}")}
        if mine.inputs != theirs.inputs:
            return {"turn": mine.turn, "call": mine.call + 1, "reason": f"{mine.tool} got other inputs"}
        if mine.failed != theirs.failed or (not mine.failed and mine.result != theirs.result):
            return {"turn": mine.turn, "call": mine.call + 1, "reason": f"{mine.tool} gave another result"}
    if len(run.steps) != len(baseline.steps):
        longer = run.steps if len(run.steps) > len(baseline.steps) else baseline.steps
        extra = longer[min(len(run.steps), len(baseline.steps))]
        who = "the run" if longer is run.steps else "the baseline"
        return {"turn": extra.turn, "call": extra.call + 1, "reason": f"only {who} called {extra.tool} here"}
    if run.turns != baseline.turns or not same_output:
        return {"turn": max(run.turns, 1), "call": None, "reason": "the final output differs"
                if run.turns == baseline.turns else f"{run.turns} turn(s), the baseline {baseline.turns}"}
    return None


class Recorded:
    """A baseline run's activity results, to give again to the same call with the same inputs: each
    (tool, inputs digest) gives its recorded results in the order they were made."""

    def __init__(self, steps: Steps) -> None:
        self._results: dict[tuple[str, str | None], list[Any]] = defaultdict(list)
        for step in steps.steps:
            if not step.failed and step.inputs is not None and step.result is not MISSING:
                self._results[step.key].append(step.result)
        self._taken: dict[tuple[str, str | None], int] = defaultdict(int)
        self.replayed = 0

    def take(self, tool: str, inputs: str) -> tuple[bool, Any]:
        """(True, result) when the baseline made this call with these inputs and a result is left for it."""
        key = (tool, inputs)
        results = self._results.get(key)
        taken = self._taken[key]
        if not results or taken >= len(results):
            return False, None
        self._taken[key] = taken + 1
        self.replayed += 1
        return True, results[taken]
