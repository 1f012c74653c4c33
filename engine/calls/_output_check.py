"""Every result against its tool's `_output` schema (002): an activity's, a latent `_output` typed into a plan,
a person's or a model's answer, a delegate's output. A result that breaks it is the call's error, not data.
"""

from __future__ import annotations

import copy
from typing import Any

from ..document._json import dumps
from ..document._validate import schema_violations
from ..protocol._expressions import parse_expression
from ..protocol._messages import MISSING, get_path, payload_of
from ._calls import CallPlan
from ._tools import ToolDefinition

OUTPUT_SCHEMA_ERROR = "output"  # the error type: the result cannot be written as data
_SHOWN = 300  # characters of the result quoted in the error


def tool_output_schema(tool: ToolDefinition | None) -> dict[str, Any]:
    """The tool's `_output` schema (002), or `{}` (any JSON) when it declares none."""
    properties = tool.schema.get("properties") if tool is not None else None
    schema = properties.get("_output") if isinstance(properties, dict) else None
    if not isinstance(schema, dict):
        return {}
    schema = copy.deepcopy(schema)
    assert tool is not None
    for key in ("$defs", "definitions"):  # its `$ref`s point into the tool's schema (`#/$defs/o`), as validate reads
        shared = tool.schema.get(key)
        if isinstance(shared, dict) and isinstance(schema.get(key, {}), dict):
            schema[key] = {**copy.deepcopy(shared), **schema.get(key, {})}
    return schema


def output_problem(plan: CallPlan, value: Any) -> str | None:
    """Why `value` does not meet the `_output` schema of the call's tool (each place as a JSON path, and the
    value itself), or None when it does or the tool declares none."""
    schema = tool_output_schema(plan.tool)
    if not schema:
        return None
    found = schema_violations(schema, value, None, "$")
    if not found:
        return None
    # jsonschema's reasons quote the value they are about: a large one is cut in its middle, keeping what it says
    places = "; ".join(f"{problem.path}: {_cut_middle(problem.reason)}" for problem in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    shown = _cut(dumps(value, indent=False))
    return f"the result does not meet the _output schema of {plan.tool_name!r}: {places}{more}; the result: {shown}"


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _cut_middle(text: str) -> str:
    half = _SHOWN // 2
    return text if len(text) <= _SHOWN else text[: half - 1] + "…" + text[-half:]


def written_value(plan: CallPlan, message: dict[str, Any]) -> Any:
    """The value a data message an activity returned writes, when it writes the first alternative of the
    call's output path (the usual result); MISSING when it takes another branch of `a || b` (012: an error
    branch carries its own shape, which `_output` does not describe)."""
    chosen = message.get("_outputPath")
    if plan.destinations is None or not isinstance(chosen, str):
        return MISSING
    usual = {str(reference) for reference in plan.destinations.alternatives[0]}
    if chosen not in usual:
        return MISSING
    reference = parse_expression(chosen).alternatives[0][0]
    return get_path(payload_of(message), reference.path)
