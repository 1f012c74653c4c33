"""Helpers shared by the execution tests: activities from plain functions, and a run to the end."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from contextdeck.engine import Activities, Context, Execution, fixed_clock

CLOCK = fixed_clock("2026-01-01T00:00:00Z")


def registry(**functions: Callable[..., Any]) -> Activities:
    """Activities registered under the keyword names."""
    activities = Activities()
    for name, fn in functions.items():
        activities.add(fn, name)
    return activities


def execute(messages: list[dict[str, Any]], calls: list[Any], activities: Activities | None = None,
            clock: Callable[[], str] = CLOCK, **options: Any) -> tuple[Context, Execution, Any]:
    """Run `calls` as a solution over `messages` until nothing is ready; (context, execution, report)."""
    context = Context(messages)
    execution = Execution(context, {"calls": calls}, activities=activities, clock=clock, **options)
    report = asyncio.run(execution.run())
    return context, execution, report
