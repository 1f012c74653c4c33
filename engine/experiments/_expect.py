"""Whether a case's run met what the dataset expects of it (docs/experiments.md).

`expect` is the output itself (compared as JSON: `1 == 1.0`, `true != 1`, key order ignored), or a JSON Schema
the output must meet, marked as one by its `$schema` keyword. `trajectory` expects the tools called, in order,
and the number of turns.
"""

from __future__ import annotations

from typing import Any

from ..document._validate import schema_violations
from ..protocol._messages import MISSING
from ..resolve._resolution import same_json
from ._dataset import Case, is_schema
from ._steps import Steps


def failures(case: Case, finished: bool, output: Any, steps: Steps) -> list[str] | None:
    """Why the run missed its expectations (an empty list when it met them), or None when it had none."""
    expect = case.expect
    has_output = expect is not MISSING and expect is not None
    if not has_output and case.trajectory is None:
        return None
    missed: list[str] = []
    if has_output:
        if not finished or output is MISSING:
            missed.append("no final output to compare")
        elif is_schema(expect):
            missed.extend(f"output{d.path[1:]}: {d.reason}" for d in schema_violations(expect, output, None, "$"))
        elif not same_json(output, expect):
            missed.append("the output is not the expected value")
    trajectory = case.trajectory
    if trajectory is not None:
        tools = steps.tools()
        if trajectory.tools is not None and tools != trajectory.tools:
            missed.append(f"tools called {list(tools)}, expected {list(trajectory.tools)}")
        if trajectory.turns is not None and steps.turns != trajectory.turns:
            missed.append(f"{steps.turns} turn(s), expected {trajectory.turns}")
    return missed
