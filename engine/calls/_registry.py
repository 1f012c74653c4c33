"""A tool registry (003's Tool Registry): schemas a context names by `{"type": "tool", "tool": "Tool.name"}` (012).

The user points at one: a folder of tool JSON files, or a Python file, loaded the way activities are. A
registry is a plain `{name: schema}` dict: `Execution(tools=...)`, `merged_tools` and `compose_request`
take it as the tools registered in code.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import frozen

from ..document import _json
from ..document._document import parsed_file
from ..document._validate import json_path
from ..protocol._errors import file_place
from ._activities import Activity, ActivityLoadError, activities_of, unregistered
from ._user_code import import_user_file

REFERENCE_PREFIX = "Tool."

Registry = dict[str, dict[str, Any]]


@frozen
class ToolLoadError(Exception):
    """A registry that cannot be loaded: which file and why, and where in it when that is known
    (said as every command says a place: `tools/t.json:3:5`)."""

    path: str
    reason: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return f"{file_place(self.path, self.line, self.column)}: {self.reason}"


def reference_name(reference: str) -> str:
    """The registry name a tool reference means: `Tool.detectLanguage` and `detectLanguage` both name it."""
    return reference.removeprefix(REFERENCE_PREFIX)


def load_tools(path: str | Path) -> Registry:
    """Load a registry: a folder of `*.json` files (each a tool message's `tool` value, see `named_schemas`),
    one such JSON file, or a Python file with a module-level `TOOLS` (a dict of name -> schema, or a list of
    schemas naming themselves) or, without `TOOLS`, typed activities (their annotations are their schemas).
    Raises `ToolLoadError` naming the file and the reason.
    """
    place = Path(path)
    if place.is_dir():
        found: Registry = {}
        for file in sorted(place.glob("*.json")):
            found.update(_json_tools(file))
        if not found:
            raise ToolLoadError(str(place), "the folder holds no tool JSON files")
        return found
    if not place.is_file():
        raise ToolLoadError(str(place), "no such file or folder")
    if place.suffix == ".py":
        return _python_tools(place)
    return _json_tools(place)


def named_schemas(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """The (name, schema) pairs a tool body defines: one schema whose `properties._tool.const` names it,
    a list of such schemas, or a `{name: schema}` object."""
    if isinstance(body, dict):
        name = const_name(body)
        if name is not None:
            return [(name, body)]
        if isinstance(body.get("type"), str):  # a schema without a name, not {name: schema}: it names no tool
            return []                          # (never one called `properties`)
        return [(key, schema) for key, schema in body.items() if isinstance(schema, dict)]
    if isinstance(body, list):
        return [(name, schema) for schema in body if isinstance(schema, dict) and (name := const_name(schema))]
    return []


def const_name(schema: dict[str, Any]) -> str | None:
    """The name a schema gives itself in `properties._tool.const`."""
    properties = schema.get("properties")
    tool = properties.get("_tool") if isinstance(properties, dict) else None
    name = tool.get("const") if isinstance(tool, dict) else None
    return name if isinstance(name, str) else None


def _json_tools(file: Path) -> Registry:
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise ToolLoadError(str(file), error.strerror or str(error)) from None
    value = parsed_file(raw, str(file), ToolLoadError)
    if isinstance(value, dict) and value.get("type") == "tool" and "tool" in value:
        value = value["tool"]  # a saved tool message
    found = dict(named_schemas(value))
    if not found and isinstance(value, dict) and value:
        found = {file.stem: value}  # a bare schema is named after its file
    if not found:
        raise ToolLoadError(str(file), "expected a tool schema, a list of schemas or a {name: schema} object")
    return found


def _python_tools(file: Path) -> Registry:
    """A Python file's `TOOLS`; without them, the tool schemas of its typed activities (`_typed`)."""
    module = import_user_file(file, "_contextdeck_tools_", ToolLoadError)
    table = getattr(module, "TOOLS", None)
    found = dict(named_schemas(table))
    activities = None
    if table is None:
        try:
            activities = activities_of(module, file)
            found = typed_tools(activities)
        except ActivityLoadError as error:
            raise ToolLoadError(error.path, error.reason, error.line, error.column) from None
    if not found and table is not None:
        raise ToolLoadError(str(file), "its TOOLS holds no tool schema (a dict of name -> schema, or a list of "
                                       "schemas each naming itself in properties._tool.const)")
    if not found:
        raise ToolLoadError(str(file), "defines no TOOLS (a dict of name -> schema, or a list of schemas) and no "
                                       "typed activities (annotated parameters or return type)"
                            + ("" if activities else unregistered(module)))
    unwritable = _json.unwritable(found)
    if unwritable is not None:  # a schema only Python can hold: printed or sent, it would change or fail
        path, reason = unwritable
        if not path:  # a name that is not a string
            raise ToolLoadError(str(file), f"TOOLS: {reason}")
        raise ToolLoadError(str(file), f"tool {path[0]!r}: {json_path(path[1:])}: {reason}")
    return found


def typed_tools(activities: Iterable[Activity]) -> Registry:
    """The tool schemas of the typed activities among `activities`, by name."""
    return {item.name: item.schema for item in activities if item.schema is not None}
