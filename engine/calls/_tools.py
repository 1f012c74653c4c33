"""Tool definitions from tool messages (SPEC 2, 6.1) and registry references (012): the latest of a name wins."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..document._context import Context
from ..document._json import MESSAGE_OUTER, unwritable
from ..document._validate import json_path
from ..document._view import Messages
from ..protocol._messages import Form, body_of
from ..resolve._resolution import Diagnostic
from ._activities import Activities, Activity
from ._registry import const_name, named_schemas, reference_name


@dataclass(frozen=True)
class ToolDefinition(Mapping[str, Any]):
    """A tool's name, its JSON Schema, and the message that defined it (None when from code).

    It reads as its schema too (`tool["properties"]`, `tool.get("description")`): an activity's `tool` argument is
    "the schema definition of the Tool being executed" (003), so one written as the chapter says works."""

    name: str
    schema: dict[str, Any]
    message_index: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self.schema[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.schema)

    def __len__(self) -> int:
        return len(self.schema)

    def __bool__(self) -> bool:  # a definition is there, even of an empty schema
        return True

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The schema of its parameters: meta-properties (`_...`) are not parameters. Made once per definition
        (every call to the tool is checked against it); definitions are read again from the messages."""
        schema = self.schema
        result = {key: value for key, value in schema.items() if not key.startswith("_")}
        properties = schema.get("properties")
        if isinstance(properties, dict):
            result["properties"] = {k: v for k, v in properties.items() if not k.startswith("_")}
        required = schema.get("required")
        if isinstance(required, list):
            result["required"] = [name for name in required if not (isinstance(name, str) and name.startswith("_"))]
        return result


def tools_in(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The (name, schema) pairs one tool message defines (a reference by name defines none itself)."""
    body = message.get("tool")
    if body is None:  # the message is the schema: its `type` is the message's form, its calls are objects (002)
        name = const_name(message)
        return [(name, {**message, "type": "object"})] if name is not None else []
    return named_schemas(body)


def references_in(message: dict[str, Any]) -> list[str]:
    """The registry names a tool message refers to (012): `"tool": "Tool.x"` or a list of such strings."""
    body = message.get("tool")
    names = [body] if isinstance(body, str) else body if isinstance(body, list) else []
    return [reference_name(name) for name in names if isinstance(name, str)]


def tool_definitions(
    context: Messages, at: int | None = None, registry: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, ToolDefinition]:
    """Every tool the context defines or names from `registry`, as of the first `at` messages; later wins."""
    limit = len(context) if at is None else max(0, min(at, len(context)))
    found: dict[str, ToolDefinition] = {}
    for index in form_indices(context, Form.TOOL, limit):
        message = body_of(context[index])
        for name in references_in(message):
            if registry is not None and name in registry:
                found[name] = ToolDefinition(name, registry[name], index)
        for name, schema in tools_in(message):
            found[name] = ToolDefinition(name, schema, index)
    return found


def form_indices(context: Messages, form: Form, limit: int) -> list[int]:
    """The messages of `form` among the first `limit`: a context keeps an index of them, a view is scanned."""
    if isinstance(context, Context):
        return context.indices_of(form, limit)
    return [index for index in range(limit) if context.info(index).form is form]


def unknown_references(
    context: Messages, registry: Mapping[str, dict[str, Any]] | None, at: int | None = None
) -> list[Diagnostic]:
    """A tool message naming what the registry does not hold, or defining nothing it seems to define (a
    schema without a name, a definition that is no schema), is a problem, never silently dropped."""
    limit = len(context) if at is None else max(0, min(at, len(context)))
    problems: list[Diagnostic] = []
    for index in form_indices(context, Form.TOOL, limit):
        message = body_of(context[index])
        problems.extend(Diagnostic(index, "tool", reason) for reason in _definition_problems(message))
        problems.extend(Diagnostic(index, "tool", reason, "warning") for reason in _unread_rules(message))
        for name in references_in(message):
            if registry is None or name not in registry:
                where = "no tool registry is loaded" if not registry else "the tool registry has no such tool"
                problems.append(Diagnostic(index, "tool", f"unknown tool {name!r}: {where}"))
    return problems


_EXPECTED = "expected a schema, {name: schema}, a list, or a registry name such as \"Tool.name\""

# The meta-properties a tool rules in its `properties` (SPEC 6.2, 015, 002), unlike `_activity` and `_delegate`,
# which it gives at its top level.
_PROPERTY_RULES = ("_outputPath", "_scopes", "_output")


def _unread_rules(message: dict[str, Any]) -> list[str]:
    """A rule written at a tool's top level that belongs in its `properties`: read nowhere, it would leave the
    tool's calls unruled in silence (a prescribed `_outputPath` lost, its calls' results with it). And a schema
    under `{name: schema}` whose `_tool.const` names another: the key names the tool (002: its unique name)."""
    unread = []
    for name, schema in tools_in(message):
        properties = schema.get("properties") if isinstance(schema, dict) else None
        ruled = properties if isinstance(properties, dict) else {}
        unread += [f"tool {name!r}: a top-level {key} is not read; rule a call's {key} in properties.{key}"
                   for key in _PROPERTY_RULES if key in schema and key not in ruled]
        own = const_name(schema) if isinstance(schema, dict) else None
        if own is not None and own != name:
            unread.append(f"tool {name!r}: its properties._tool.const names {own!r}; the tool is called {name!r}")
    return unread


def _definition_problems(message: dict[str, Any]) -> list[str]:
    """What in a tool message defines no tool although it is written as a definition (002: a tool is a schema
    with a name)."""
    body = message.get("tool")
    if body is None:
        return [] if const_name(message) is not None else [f"no 'tool': {_EXPECTED}"]
    if isinstance(body, list):
        return [f"tool[{number}]: expected a schema naming itself in properties._tool.const, or a registry name"
                for number, item in enumerate(body) if not isinstance(item, str) and not (
                    isinstance(item, dict) and const_name(item) is not None)]
    if not isinstance(body, dict):
        return [] if isinstance(body, str) else [_EXPECTED]
    if const_name(body) is not None:
        return []
    if isinstance(body.get("type"), str):  # a schema, not {name: schema}
        return ["a schema without a name: give it properties._tool.const, or write {name: schema}"]
    return [f"tool {name!r}: " + ("a tool needs a name" if not name else "its schema must be an object")
            for name, schema in body.items() if not name or not isinstance(schema, dict)]


class SolutionRefused(ValueError):
    """A solution `Execution` is given that is no solution (`solution_problem`): refused before anything runs or
    is appended. `problem`: what and where."""

    def __init__(self, problem: Diagnostic) -> None:
        super().__init__(str(problem))
        self.problem = problem


def solution_problem(solution: Any) -> Diagnostic | None:
    """What makes a document's own `solution` unusable (SPEC 1: `{"calls": [...], "output": ...}`, or 202's
    array of calls, each one the document could hold; none at all is fine), at `solution` or `solution.calls`:
    `validate` says it, and `run`, `Execution` (and a delegate's call, 014) refuse it, rather than run a plan in
    its place or stop midway."""
    if solution is None:
        return None
    if isinstance(solution, list):
        return _unheld(solution, "solution")
    if not isinstance(solution, dict):
        return Diagnostic(None, "solution", "must be an object with 'calls' and 'output', or an array of calls")
    if "calls" in solution and not isinstance(solution["calls"], list):
        return Diagnostic(None, "solution.calls", "must be an array of calls")
    return _unheld(solution["calls"], "solution.calls") if "calls" in solution else None


def _unheld(calls: list[Any], where: str) -> Diagnostic | None:
    """Calls the document could not hold as a plan message (nested too deep, a value that is not JSON): where a
    turn's calls go, and no deeper than a run quotes a call (an error's `data.call`). A solution given from code
    may hold any value; one in a file sits a level above a plan message."""
    unfit = unwritable(calls, MESSAGE_OUTER + 1)
    if unfit is None:
        return None
    at, reason = unfit
    shown = where + json_path(at[:3])[1:] + ("…" if len(at) > 3 else "")  # not hundreds of levels
    return Diagnostic(None, shown, f"the document could not hold the call as a plan message: {reason}")


def pending_calls(context: Messages, solution: Any = None) -> tuple[list[Any], int | None]:
    """The calls to run: the solution's `calls`, else the last plan message's (with its index).

    A solution that is an array is its calls (202: a Vessel's solution is the calls it chose).
    """
    if isinstance(solution, list):
        return list(solution), None
    if isinstance(solution, dict) and isinstance(solution.get("calls"), list):
        return list(solution["calls"]), None
    plans = form_indices(context, Form.PLAN, len(context))
    if not plans:
        return [], None
    plan = body_of(context[plans[-1]]).get("plan")
    return (list(plan) if isinstance(plan, list) else []), plans[-1]


def plan_mode(context: Messages) -> str:
    """The mode of the last plan message (012): "eager" (the default) or "lazy" (plan only, wait to run)."""
    end = len(context)
    # The last plan is usually among the last messages; where it is not (no plan, or an early one), a context's
    # index of plans finds it without reading every message (a turn is checked per keystroke).
    start = end - _NEARBY if isinstance(context, Context) and end > _NEARBY else 0
    for index in range(end - 1, start - 1, -1):
        if context.info(index).form is Form.PLAN:
            return _mode_of(context, index)
    if start and isinstance(context, Context):
        plans = context.indices_of(Form.PLAN, start)
        return _mode_of(context, plans[-1]) if plans else "eager"
    return "eager"


_NEARBY = 256


def _mode_of(context: Messages, index: int) -> str:
    return "lazy" if body_of(context[index]).get("mode") == "lazy" else "eager"


def assumed_activities(tools: Mapping[str, ToolDefinition]) -> Activities:
    """Without knowing what will be loaded, every activity a tool (`request`'s `merged_tools`) names is taken as
    loaded (never run by whoever asks), so that the checks after it (the parameters, a latent call's `_output`)
    judge the calls as a run would. Each name is made an activity once, however many tools name it."""
    names = dict.fromkeys(name for definition in tools.values()
                          if isinstance(name := definition.schema.get("_activity"), str) and name)
    return Activities(Activity(name, _never_run) for name in names)


def _never_run(call: Any, tool: Any, context: Any) -> None:
    raise AssertionError("an assumed activity is never run")
