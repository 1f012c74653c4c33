"""`validate`: everything wrong with a document, as diagnostics (data vs schema, references, conflicts)."""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from ._context import Context
from ._errors import ExpressionError
from ._expressions import find_expressions, parse_expression
from ._fold import fold
from ._messages import MISSING, Write
from ._resolution import Diagnostic
from ._tools import pending_calls


def json_path(path: Any) -> str:
    """`$.a[0].b` for a jsonschema error path."""
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def validate(context: Context, solution: Any = None) -> list[Diagnostic]:
    """All problems: schema violations per identity, malformed expressions in calls, write conflicts."""
    return [*_schema_problems(context), *_call_problems(context, solution), *_write_problems(context)]


def _identity_writes(context: Context) -> dict[tuple[str, str | None], list[tuple[int, Write]]]:
    groups: dict[tuple[str, str | None], list[tuple[int, Write]]] = {}
    for index in range(len(context)):
        info = context.info(index)
        if info.identity is not None and info.write is not None:
            groups.setdefault(info.identity, []).append((index, info.write))
    return groups


def _label(identity: tuple[str, str | None]) -> str:
    kind, instance = identity
    return f"¶{kind}" + (f"[{instance}]" if instance is not None else "")


def _schema_problems(context: Context) -> list[Diagnostic]:
    """Each identity's merged value against the latest schema given for it."""
    problems: list[Diagnostic] = []
    for identity, writes in _identity_writes(context).items():
        schema_at = next((i for i, _ in reversed(writes) if "schema" in context[i]), None)
        if schema_at is None:
            continue
        schema = context[schema_at]["schema"]
        value = fold(writes, (), _label(identity))[0]
        if value is MISSING:
            continue
        try:
            validator_class = jsonschema.validators.validator_for(schema)
            validator_class.check_schema(schema)
        except SchemaError as error:
            problems.append(Diagnostic(schema_at, _label(identity), f"invalid schema: {error.message}"))
            continue
        for violation in validator_class(schema).iter_errors(value):
            path = _label(identity) + json_path(violation.absolute_path)[1:]
            problems.append(Diagnostic(schema_at, path, violation.message))
    return problems


def _call_problems(context: Context, solution: Any) -> list[Diagnostic]:
    """Malformed expressions anywhere in the pending calls' parameters and output paths."""
    calls, plan_index = pending_calls(context, solution)
    where = "solution" if plan_index is None else f"plan at message {plan_index}"
    problems: list[Diagnostic] = []
    for number, call in enumerate(calls):
        if not isinstance(call, dict):
            problems.append(Diagnostic(plan_index, f"{where}, call {number}", "a call must be an object"))
            continue
        found = list(find_expressions(call))
        destination = call.get("_outputPath")
        if isinstance(destination, str) and not any(path == ("_outputPath",) for path, _ in found):
            found.append((("_outputPath",), destination))  # a destination must be an expression
        for path, text in found:
            try:
                parse_expression(text)
            except ExpressionError as error:
                field = json_path(path)
                reason = f"{error.reason} at position {error.position}"
                problems.append(Diagnostic(plan_index, f"{where}, call {number} {field}", reason))
    return problems


def _write_problems(context: Context) -> list[Diagnostic]:
    """Conflicts and unusable output paths, over every identity's full fold."""
    problems: list[Diagnostic] = []
    for identity, writes in _identity_writes(context).items():
        # A fold targeting the root collects every conflict (every write is relevant to the root).
        problems.extend(fold(writes, (), _label(identity))[1].diagnostics)
    return problems
