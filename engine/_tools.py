"""Tool definitions from tool messages (SPEC 2, 6.1): the latest definition of a name wins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._catalogue import catalogue_of
from ._context import Context
from ._messages import Form
from ._view import Messages


@dataclass(frozen=True)
class ToolDefinition:
    """A tool's name, its JSON Schema, and the message that defined it (None when from code)."""

    name: str
    schema: dict[str, Any]
    message_index: int | None = None


def tools_in(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The (name, schema) pairs one tool message defines."""
    body = message.get("tool")
    if isinstance(body, dict):
        name = _const_name(body)
        if name is not None:
            return [(name, body)]
        return [(key, schema) for key, schema in body.items() if isinstance(schema, dict)]
    if isinstance(body, list):
        return [(name, schema) for schema in body if isinstance(schema, dict) and (name := _const_name(schema))]
    name = _const_name(message)
    return [(name, message)] if name is not None else []


def _const_name(schema: dict[str, Any]) -> str | None:
    properties = schema.get("properties")
    tool = properties.get("_tool") if isinstance(properties, dict) else None
    name = tool.get("const") if isinstance(tool, dict) else None
    return name if isinstance(name, str) else None


def tool_definitions(context: Messages, at: int | None = None) -> dict[str, ToolDefinition]:
    """Every tool the context defines, as of the first `at` messages; later definitions win."""
    limit = len(context) if at is None else max(0, min(at, len(context)))
    found: dict[str, ToolDefinition] = {}
    for index in _indices(context, Form.TOOL, limit):
        for name, schema in tools_in(context[index]):
            found[name] = ToolDefinition(name, schema, index)
    return found


def _indices(context: Messages, form: Form, limit: int) -> list[int]:
    """The messages of `form` among the first `limit`: a context keeps a catalogue, a view is scanned."""
    if isinstance(context, Context):
        return list(catalogue_of(context).indices(form, limit))
    return [index for index in range(limit) if context.info(index).form is form]


def pending_calls(context: Messages, solution: Any = None) -> tuple[list[Any], int | None]:
    """The calls to run: the solution's `calls`, else the last plan message's (with its index).

    A solution that is an array is its calls (202: a Vessel's solution is the calls it chose).
    """
    if isinstance(solution, list):
        return list(solution), None
    if isinstance(solution, dict) and isinstance(solution.get("calls"), list):
        return list(solution["calls"]), None
    plans = _indices(context, Form.PLAN, len(context))
    if not plans:
        return [], None
    plan = context[plans[-1]].get("plan")
    return (list(plan) if isinstance(plan, list) else []), plans[-1]


def merged_tools(
    context: Messages, code_tools: dict[str, dict[str, Any]] | None = None, at: int | None = None
) -> dict[str, ToolDefinition]:
    """Tools registered in code, then the context's tool messages over them (the context is later: it wins)."""
    found = {name: ToolDefinition(name, schema, None) for name, schema in (code_tools or {}).items()}
    found.update(tool_definitions(context, at))
    return found
