"""The call patterns of SPEC 6.10: one call, `all`, `any` and `race`.

A pattern run returns how each member settles: `(index, outcome, keep)`. `outcome` None means the
member was cancelled; `keep` False means its outcome is recorded for the debugger but writes nothing
(a success discarded by a failed `all`, a failure forgiven by a successful `any`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from ._running import Outcome

Settle = tuple[int, Outcome | None, bool]
Runner = Callable[[int], Coroutine[Any, Any, Outcome]]


async def run_pattern(pattern: str, members: list[int], run: Runner) -> list[Settle]:
    """Run `members` (call indices) with `run(index)` as `pattern` says."""
    if pattern == "one":
        return [(members[0], await run(members[0]), True)]
    return await _PATTERNS[pattern](members, run)


async def _all(members: list[int], run: Runner) -> list[Settle]:
    outcomes = await _gather(members, run)
    every = all(outcome.ok for outcome in outcomes)
    # All or nothing: a failure discards the successes; failures are always reported.
    return [(o.index, o, every or not o.ok) for o in outcomes]


async def _gather(members: list[int], run: Runner) -> list[Outcome]:
    tasks = [asyncio.ensure_future(run(index)) for index in members]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()


async def _first(members: list[int], run: Runner, accept: Callable[[Outcome], bool]) -> list[Settle]:
    """Run all; the first outcome `accept` takes wins and the rest are cancelled."""
    tasks = {asyncio.ensure_future(run(index)): index for index in members}
    pending = set(tasks)
    settled: list[Settle] = []
    winner: Outcome | None = None
    try:
        while pending and winner is None:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(done, key=lambda t: tasks[t]):
                outcome = task.result()
                if winner is None and accept(outcome):
                    winner = outcome
                else:
                    settled.append((outcome.index, outcome, False))
    finally:
        for task in pending:
            task.cancel()
    if winner is None:  # nothing was accepted: every failure is reported
        return [(index, outcome, True) for index, outcome, _ in settled]
    cancelled: list[Settle] = [(tasks[task], None, True) for task in pending]
    return [(winner.index, winner, True), *settled, *cancelled]


async def _any(members: list[int], run: Runner) -> list[Settle]:
    return await _first(members, run, lambda outcome: outcome.ok)


async def _race(members: list[int], run: Runner) -> list[Settle]:
    return await _first(members, run, lambda outcome: True)


_PATTERNS = {"all": _all, "any": _any, "race": _race}
