"""Scopes (015): which parent messages a call may see, as the call asks and its tool allows.

A tool's `properties._scopes` is a JSON Schema over the call's `_scopes`: a `const` *provisions* the
scopes (a call without `_scopes` gets them; one asking for others is refused), any other schema
*limits* what a call may request (an `enum` of kinds, say). A scope is a kind: `"state"`, `"input"`.
"""

from __future__ import annotations

import copy
from typing import Any

from jsonschema.exceptions import best_match

from ..document._view import Messages
from ..protocol._messages import Form, body_of
from ..protocol._schemas import SchemaCheck, SchemaFault, errors_by_key
from ._tools import ToolDefinition


def scopes_rule(tool: ToolDefinition | None) -> Any:
    """The tool's schema of its calls' `_scopes` (None: it rules nothing)."""
    properties = tool.schema.get("properties") if tool is not None else None
    return properties.get("_scopes") if isinstance(properties, dict) else None


def call_scopes(call: dict[str, Any], rule: Any, check: SchemaCheck | None) -> tuple[tuple[str, ...], str | None]:
    """The kinds a call sees, and the reason it may not ask for them (None when allowed); `rule`: its tool's
    `scopes_rule`, read in its whole schema (`check`, as the turn check reads it: a `$ref` into its `$defs`, a `false`
    rule; None: a schema no validator can use, said once for every call)."""
    asked = call.get("_scopes")
    if asked is None and rule is None:
        return (), None  # most calls: no scopes asked, none ruled
    if asked is None:
        provisioned = rule.get("const") if isinstance(rule, dict) else None
        asked = provisioned if provisioned is not None else []
    if not (isinstance(asked, list) and all(isinstance(kind, str) for kind in asked)):
        return (), "_scopes must be a list of kinds"
    if isinstance(rule, dict) and "const" in rule and asked != rule["const"]:
        return (), f"the tool provisions _scopes {rule['const']!r}; the call asks for {asked!r}"
    if rule is not None and check is not None:
        try:
            found = errors_by_key(check, {"_scopes": asked}).get("_scopes")
        except SchemaFault as fault:  # scopes nested too deeply for it
            return (), f"the tool's _scopes schema cannot be used: {fault}"
        if found:
            return (), f"_scopes {asked!r} is not allowed by the tool: {best_match(found).message}"
    return tuple(dict.fromkeys(asked)), None


def scoped_indices(context: Messages, kinds: tuple[str, ...], instance: str | None) -> list[int]:
    """The data messages of those kinds, global or of `instance` (015: instance-aware), by index."""
    if not kinds:
        return []
    wanted = set(kinds)
    return [index for index in range(len(context))
            if (info := context.info(index)).form is Form.DATA and info.kind in wanted
            and info.instance in (None, instance)]


def scoped_messages(context: Messages, kinds: tuple[str, ...], instance: str | None) -> list[dict[str, Any]]:
    """Copies of the messages `scoped_indices` names: what the call's activity receives (a custom content type as
    the message its content stands for)."""
    return [copy.deepcopy(body_of(context[index])) for index in scoped_indices(context, kinds, instance)]
