"""Static analysis of pending calls over a Context: what each call reads, resolves to, writes, and waits for.

Qt-free on purpose (it belongs in the engine; it lives here until the engine grows it): the calls panel,
the inspector and the plan graph all read these frozen values, and the tests check them without widgets.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from contextdeck.engine import (
    METHODS,
    MISSING,
    OPEN,
    Context,
    ExpressionError,
    Form,
    Reference,
    Resolution,
    Status,
    ToolDefinition,
    find_expressions,
    flatten,
    is_approval,
    is_expression,
    parse_expression,
    pending_calls,
    tool_definitions,
    unescape,
)

# A pattern from a document runs through `re`, which has no time limit: only short subjects are matched.
_PATTERN_SUBJECT_LIMIT = 256

JsonPath = tuple[str | int, ...]


class Mode(StrEnum):
    ACTIVITY = "activity"
    LATENT = "latent"


@dataclass(frozen=True)
class Lookup:
    """One expression inside a parameter: where it sits, its text, and how it resolved (or why it cannot)."""

    path: JsonPath
    expression: str
    resolution: Resolution | None
    error: str | None = None

    @property
    def found(self) -> bool:
        return self.resolution is not None and self.resolution.found


@dataclass(frozen=True)
class Param:
    """A top-level parameter: as written, its resolved value (MISSING while a lookup is missing)."""

    name: str
    written: Any
    resolved: Any
    lookups: tuple[Lookup, ...] = ()

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(sorted({i for lk in self.lookups if lk.resolution for i in lk.resolution.sources}))

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(m for lk in self.lookups if lk.resolution and not lk.found for m in lk.resolution.missing)

    @property
    def error(self) -> str | None:
        return next((lk.error for lk in self.lookups if lk.error), None)


@dataclass(frozen=True)
class Problem:
    """A structural problem of a call, found before running: where (a JSON path in the call) and why."""

    where: str
    message: str
    # "structure" problems make the call invalid whatever the data; "params" problems judge the values
    # resolved now, which an earlier call of the plan may still change.
    severity: str = "structure"


@dataclass(frozen=True)
class CallAnalysis:
    """Everything the inspector shows about one call, computed from the context as it is now."""

    index: int
    call: Any
    tool: str | None
    definition: ToolDefinition | None
    mode: Mode
    params: tuple[Param, ...]
    output_path: str | None
    prescribed: bool
    branches: tuple[tuple[Reference, ...], ...]
    method: str
    instance: str | None
    scopes: tuple[str, ...]
    problems: tuple[Problem, ...]
    status: Status
    missing: tuple[str, ...] = ()
    done_at: tuple[int, ...] = ()
    reads: tuple[Reference, ...] = field(default=())

    @property
    def writes(self) -> tuple[Reference, ...]:
        return tuple(ref for gate in self.branches for ref in gate)

    @property
    def fire_and_forget(self) -> bool:
        return self.mode is Mode.ACTIVITY and not self.output_path

    @property
    def ephemeral(self) -> bool:
        return self.mode is Mode.LATENT and not self.output_path

    @property
    def needs_output(self) -> bool:
        """A latent call with a destination and no `_output` waits for a result given from outside."""
        return (self.mode is Mode.LATENT and bool(self.output_path) and isinstance(self.call, dict)
                and "_output" not in self.call)

    @property
    def resolved_call(self) -> dict[str, Any]:
        """The call with its parameters resolved (missing ones left as written)."""
        call = dict(self.call) if isinstance(self.call, dict) else {}
        for param in self.params:
            if param.resolved is not MISSING:
                call[param.name] = param.resolved
        return call

    @property
    def label(self) -> str:
        return f"#{self.index} {self.tool or '(no _tool)'}"


def analyse_calls(
    context: Context, solution: Any = None, activities: Collection[str] = ()
) -> tuple[list[CallAnalysis], int | None]:
    """Analyse the pending calls (the solution's, else the last plan's); returns them and the plan's index.

    Calls are numbered as the engine numbers them: pattern groups (`{"all": [...]}`) are flattened.
    """
    entries, plan_index = pending_calls(context, solution)
    tools = tool_definitions(context)
    records = run_records(context)
    calls = [analyse_call(context, index, call, tools, activities, records)
             for index, call in enumerate(flatten(entries)[0])]
    return calls, plan_index


def run_records(context: Context) -> list[tuple[int, Any]]:
    """(index, call) of every message that records a run: outputs (`_call`) and error messages (one pass)."""
    found = []
    for index, message in enumerate(context.messages):
        if "_call" in message:
            found.append((index, message["_call"]))
        elif message.get("type") == "error" and isinstance(data := message.get("data"), dict) and "call" in data:
            found.append((index, data["call"]))
    return found


def analyse_call(
    context: Context,
    index: int,
    call: Any,
    tools: dict[str, ToolDefinition] | None = None,
    activities: Collection[str] = (),
    records: list[tuple[int, Any]] | None = None,
) -> CallAnalysis:
    """The analysis of one call, resolved for its `_instance` against the whole context."""
    tools = tool_definitions(context) if tools is None else tools
    if not isinstance(call, dict):
        problem = Problem("$", f"a call must be an object, got {type(call).__name__}")
        return CallAnalysis(index, call, None, None, Mode.LATENT, (), None, False, (), "set", None, (),
                            (problem,), Status.INVALID)
    problems: list[Problem] = []
    tool = call.get("_tool")
    if not isinstance(tool, str):
        problems.append(Problem("$._tool", "a call needs a string _tool"))
        tool = None
    definition = tools.get(tool) if tool else None
    mode = _mode(tool, definition, activities, problems)
    instance = None if call.get("_instance") is None else str(call["_instance"])
    params = tuple(_param(context, name, value, instance) for name, value in call.items() if _reads(name))
    for param in params:
        problems.extend(Problem(_json_path((param.name, *lk.path)), lk.error) for lk in param.lookups if lk.error)
    output_path, prescribed = _output_path(call, definition, problems)
    branches = _branches(output_path, problems)
    method = call.get("_outputMethod", "set")
    if method not in METHODS:
        choices = ", ".join(METHODS)
        problems.append(Problem("$._outputMethod", f"unknown _outputMethod {method!r}; use one of {choices}"))
        method = str(method)
    scopes = call.get("_scopes")
    scope_kinds = tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else ()
    if definition is not None:
        problems.extend(_schema_problems(definition, params))
    missing = tuple(dict.fromkeys(m for p in params for m in p.missing))
    records = run_records(context) if records is None else records
    done_at = tuple(index for index, recorded in records if recorded == call)
    status = _status(problems, missing, done_at, context)
    reads = tuple(ref for p in params for lk in p.lookups if lk.resolution is not None
                  for ref in parse_expression(lk.expression).references)
    analysis = CallAnalysis(index, call, tool, definition, mode, params, output_path, prescribed, branches, method,
                            instance, scope_kinds, tuple(problems), status, missing, done_at, reads)
    if status is Status.READY and analysis.needs_output:
        analysis = replace(analysis, status=Status.WAITING_FOR_OUTPUT)
    return analysis


def _reads(name: str) -> bool:
    """Parameters (no leading `_`) and a latent call's `_output` are read; other meta keys are not."""
    return not name.startswith("_") or name == "_output"


def _mode(
    tool: str | None, definition: ToolDefinition | None, activities: Collection[str], problems: list[Problem]
) -> Mode:
    """SPEC 6.3: the tool's `_activity`, else an activity of the tool's name, else latent."""
    explicit = definition.schema.get("_activity") if definition is not None else None
    if explicit is not None:
        if isinstance(explicit, str) and explicit in activities:
            return Mode.ACTIVITY
        problems.append(Problem("$._tool", f"the tool names activity {explicit!r}, which is not loaded"))
        return Mode.LATENT
    return Mode.ACTIVITY if tool is not None and tool in activities else Mode.LATENT


def _param(context: Context, name: str, value: Any, instance: str | None) -> Param:
    lookups: list[Lookup] = []
    for path, text in find_expressions(value):
        try:
            lookups.append(Lookup(path, text, context.resolve(text, instance=instance)))
        except ExpressionError as error:
            lookups.append(Lookup(path, text, None, f"{error.reason} at position {error.position}"))
    found = {lk.path: lk.resolution.value for lk in lookups if lk.resolution is not None and lk.found}
    complete = len(found) == len(lookups)
    return Param(name, value, _substitute(value, (), found) if complete else MISSING, tuple(lookups))


def _substitute(value: Any, path: JsonPath, found: dict[JsonPath, Any]) -> Any:
    """`value` with each expression replaced by its value and each `††` escape undone."""
    if path in found:
        return found[path]
    if isinstance(value, str):
        return unescape(value)
    if isinstance(value, dict):
        return {k: _substitute(v, (*path, k), found) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, (*path, i), found) for i, v in enumerate(value)]
    return value


def _output_path(
    call: dict[str, Any], definition: ToolDefinition | None, problems: list[Problem]
) -> tuple[str | None, bool]:
    """The call's output path, or the tool's prescribed one; checks `const` and `pattern` (SPEC 6.2)."""
    written = call.get("_outputPath")
    if written is not None and not isinstance(written, str):
        problems.append(Problem("$._outputPath", "_outputPath must be a string"))
        written = None
    rule = _property(definition, "_outputPath")
    const = rule.get("const")
    if isinstance(const, str):
        if written is None:
            return const, True
        if written != const:
            reason = f"the tool prescribes _outputPath {const!r}, the call has {written!r}"
            problems.append(Problem("$._outputPath", reason))
    pattern = rule.get("pattern")
    if isinstance(pattern, str) and written is not None:
        problems.extend(_pattern_problem(pattern, written))
    return written, False


def _pattern_problem(pattern: str, subject: str) -> list[Problem]:
    if len(subject) > _PATTERN_SUBJECT_LIMIT:
        return [Problem("$._outputPath", f"too long to check against the tool's pattern {pattern!r}")]
    try:
        matched = re.search(pattern, subject) is not None
    except re.error as error:
        return [Problem("$._outputPath", f"the tool's pattern {pattern!r} is not a valid regular expression: {error}")]
    return [] if matched else [Problem("$._outputPath", f"{subject!r} does not match the tool's pattern {pattern!r}")]


def _branches(output_path: str | None, problems: list[Problem]) -> tuple[tuple[Reference, ...], ...]:
    if output_path is None:
        return ()
    if not is_expression(output_path):
        problems.append(Problem("$._outputPath", f"{output_path!r} is not a † expression"))
        return ()
    try:
        return parse_expression(output_path).alternatives
    except ExpressionError as error:
        problems.append(Problem("$._outputPath", f"{error.reason} at position {error.position}"))
        return ()


def _property(definition: ToolDefinition | None, name: str) -> dict[str, Any]:
    properties = definition.schema.get("properties") if definition is not None else None
    rule = properties.get(name) if isinstance(properties, dict) else None
    return rule if isinstance(rule, dict) else {}


def params_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool schema without its meta properties: what the parameters (keys without `_`) must satisfy."""
    result = dict(schema)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        result["properties"] = {k: v for k, v in properties.items() if not str(k).startswith("_")}
    required = schema.get("required")
    if isinstance(required, list):
        result["required"] = [r for r in required if not str(r).startswith("_")]
    result.pop("_activity", None)
    return result


def _schema_problems(definition: ToolDefinition, params: Iterable[Param]) -> list[Problem]:
    """jsonschema over the resolved parameters; parameters still missing are not judged yet."""
    schema = params_schema(definition.schema)
    values = {p.name: p.resolved for p in params if p.name != "_output"}
    unresolved = {name for name, value in values.items() if value is MISSING}
    instance = {name: value for name, value in values.items() if name not in unresolved}
    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
    except SchemaError as error:
        return [Problem("$", f"the tool {definition.name!r} has an invalid schema: {error.message}")]
    problems = []
    for error in validator_class(schema).iter_errors(instance):
        if error.validator == "required" and any(error.message.startswith(repr(n)) for n in unresolved):
            continue
        problems.append(Problem(_json_path(tuple(error.absolute_path)), error.message, "params"))
    return problems


def _status(problems: list[Problem], missing: tuple[str, ...], done_at: tuple[int, ...], context: Context) -> Status:
    if done_at:
        failed = any(context[i].get("type") == "error" for i in done_at)
        return Status.FAILED if failed else Status.DONE
    if any(p.severity == "structure" for p in problems):
        return Status.INVALID
    if any(is_approval(m) for m in missing):
        return Status.AWAITING_APPROVAL
    return Status.BLOCKED if missing else Status.READY


def _json_path(path: JsonPath) -> str:
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def scoped_messages(context: Context, scopes: Iterable[str], instance: str | None) -> list[int]:
    """The messages a call's `_scopes` let it see: data of those kinds, global or of its instance (SPEC 6.4)."""
    kinds = set(scopes)
    return [
        index
        for index in range(len(context))
        if (info := context.info(index)).form is Form.DATA
        and info.kind in kinds
        and (info.instance is None or info.instance == instance)
    ]


def describe(value: Any) -> str:
    """A value as one line of JSON-ish text for tables; MISSING says so."""
    import json

    if value is MISSING:
        return "—"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def wait_for_feeders(calls: list[CallAnalysis], feeders: dict[int, dict[int, tuple[str, ...]]],
                     settled: Collection[int]) -> list[CallAnalysis]:
    """An open call also waits for every call that may write what it reads until that one has settled.

    This is the engine's rule (a writer that failed leaves its readers blocked): `feeders[i]` maps each
    writer of call i to the paths of i it may write; `settled` are the calls that are done.
    """
    result = []
    for call in calls:
        waiting = [p for writer, paths in feeders.get(call.index, {}).items() if writer not in settled for p in paths]
        if call.status in OPEN and waiting:
            missing = tuple(dict.fromkeys((*waiting, *call.missing)))
            status = Status.AWAITING_APPROVAL if any(map(is_approval, missing)) else Status.BLOCKED
            call = replace(call, status=status, missing=missing)
        result.append(call)
    return result
