"""The solution schema ContextDeck composes (002: `meta`, the nullable `output`, the tools as `calls` items), as the
chat completions body of `export --format openai` asks for it, read back as the document's own schema and tools."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from ..document._context import Context
from ..request._request import CONSULT_ADVISOR, REFERENCE, compose_request, is_solution_schema
from ._problems import inside

_NO_CALLS = {"type": "array", "maxItems": 0}
Tools = tuple[tuple[str, dict[str, Any]], ...]


def read_composed(schema: Any, where: str) -> tuple[Any, Tools, tuple[tuple[str, str, str], ...]]:
    """A body's response schema as the document's schema, the tools it offers and what it leaves out
    (`Exchange.left_out`): ContextDeck's own composition as the schema and tools it was composed from; any other
    solution schema kept as the document's, said when its `calls` offer tools, which a document offers by its tool
    messages alone (`compose_request` composes `calls` anew)."""
    found = composed_parts(schema)
    if found is not None:
        return found[0], tuple(found[1].items()), ()
    calls = schema["properties"].get("calls") if is_solution_schema(schema) else None
    if calls is None or calls == _NO_CALLS:
        return schema, (), ()
    said = ("a solution schema whose calls are not the tools ContextDeck composes (from a schema and tools alone): "
            "kept as the document's schema, whose calls offer no tool (a document offers its tools by tool messages)")
    return schema, (), ((inside(where, "response_format"), said, json.dumps(calls, sort_keys=True, default=str)),)


def composed_parts(schema: Any) -> tuple[Any, dict[str, dict[str, Any]]] | None:
    """The document's schema and tools whose composition is `schema`, or None when it is not one: each `calls` item
    read back as its tool (its `_tool` const the name, each parameter without the `†` reference `compose_request`
    lets it take), `output` without the null it allows; taken only when they compose `schema` again, so a schema
    ContextDeck did not compose, or composed from more than a schema and tools (advisors, a `meta` of the
    context's, `$defs` it moved), is never read as some other document."""
    if not is_solution_schema(schema):
        return None
    try:
        # A log asks for the same response_format on every line: the work is done once per schema text (in its
        # key order, which the schema read back keeps), and each caller gets a copy of its own to change
        text = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError):
        return _composed_parts(schema)
    return copy.deepcopy(_composed_parts_of_text(text))


@functools.lru_cache(maxsize=64)
def _composed_parts_of_text(text: str) -> tuple[Any, dict[str, dict[str, Any]]] | None:
    return _composed_parts(json.loads(text))


def _composed_parts(schema: Any) -> tuple[Any, dict[str, dict[str, Any]]] | None:
    properties = schema["properties"]
    calls = properties.get("calls")
    items = calls.get("items") if isinstance(calls, dict) else None
    if calls == _NO_CALLS:
        items = []
    elif isinstance(items, dict):
        items = items["anyOf"] if list(items) == ["anyOf"] and isinstance(items["anyOf"], list) else [items]
    if not isinstance(items, list):
        return None
    tools: dict[str, dict[str, Any]] = {}
    for item in items:
        found = _tool_of(item)
        if found is None or found[0] in tools or found[0] == CONSULT_ADVISOR:
            return None
        tools[found[0]] = found[1]
    context = Context([{"type": "tool", "tool": copy.deepcopy(tools)}] if tools else [])
    for own in _output_schemas(properties.get("output")):
        if compose_request(context, own).schema == schema:
            return own, tools
    return None


def _tool_of(item: Any) -> tuple[str, dict[str, Any]] | None:
    """A `calls` item (`tool_item`) as the tool's name and schema."""
    properties = item.get("properties") if isinstance(item, dict) else None
    if not isinstance(properties, dict):
        return None
    named = properties.get("_tool")
    name = named.get("const") if isinstance(named, dict) else None
    if not isinstance(name, str) or not name:
        return None
    tool = {key: copy.deepcopy(value) for key, value in item.items() if key not in ("properties", "required")}
    tool["properties"] = {key: _without_reference(value) if not key.startswith("_") else copy.deepcopy(value)
                          for key, value in properties.items() if key != "_tool"}
    required = item.get("required")
    kept = [key for key in required if key != "_tool"] if isinstance(required, list) else []
    if kept:
        tool["required"] = kept
    return name, tool


def _without_reference(schema: Any) -> Any:
    """A parameter's schema without the `†` reference `or_reference` adds."""
    branches = schema.get("anyOf") if isinstance(schema, dict) and len(schema) == 1 else None
    if isinstance(branches, list) and len(branches) == 2 and branches[1] == REFERENCE:
        return copy.deepcopy(branches[0])
    return copy.deepcopy(schema)


def _output_schemas(output: Any) -> list[Any]:
    """The output schemas `nullable` may have made `output` from, the likeliest first: none (any value), the first
    branch of an `anyOf` with null, the schema without the null its `type` (and `enum`) was given, and without the
    `additionalProperties: false` it gives an object (which composes the same request)."""
    if output == {}:
        return [None]
    if not isinstance(output, dict):
        return []
    found: list[Any] = []
    if output.get("additionalProperties") is False:
        found += _output_schemas({key: value for key, value in output.items() if key != "additionalProperties"})
    branches = output.get("anyOf")
    if list(output) == ["anyOf"] and isinstance(branches, list) and len(branches) == 2 \
            and branches[1] == {"type": "null"}:
        found.append(copy.deepcopy(branches[0]))
    kind = output.get("type")
    if isinstance(kind, list) and "null" in kind:
        own = copy.deepcopy(output)
        kinds = [name for name in kind if name != "null"]
        own["type"] = kinds[0] if len(kinds) == 1 else kinds
        if isinstance(own.get("enum"), list) and None in own["enum"]:
            own["enum"] = [value for value in own["enum"] if value is not None]
        found.append(own)
    return found
