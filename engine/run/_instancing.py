"""One plan across all instances (013): a plan is a global template, run once per instance it touches.

A request has instances when some of its data messages carry `_instance`. A pending call without
`_instance` that reads, writes or scopes a kind some instance has is run once per instance, each copy
targeted with `_instance`; a call that names its instance, or touches only global kinds, runs once.
"""

from __future__ import annotations

from typing import Any

from ..document._context import Context
from ..document._view import Messages
from ..protocol._errors import ExpressionError
from ..protocol._expressions import find_expressions, parse_expression
from ..protocol._groups import group_of
from ..protocol._messages import Form


def instances_of(context: Messages) -> tuple[list[str], set[str]]:
    """The instance ids in order of first appearance, and the kinds that have instanced messages."""
    ids: dict[str, None] = {}
    kinds: set[str] = set()
    for kind, instance in _identities(context):
        if instance is not None:
            ids[instance] = None
            kinds.add(kind)
    return list(ids), kinds


def _identities(context: Messages) -> list[tuple[str, str | None]]:
    # A Context keeps its writes per identity: asking it costs O(identities), not a scan of every message
    # (the calls panel asks after every edit pause).
    if isinstance(context, Context):
        return context.identities()
    infos = (context.info(index) for index in range(len(context)))
    return list(dict.fromkeys(info.identity for info in infos if info.form is Form.DATA and info.identity))


def _kinds_touched(call: dict[str, Any]) -> set[str]:
    texts = [text for _, text in find_expressions({k: v for k, v in call.items() if not k.startswith("_")})]
    texts += [call[key] for key in ("_output", "_outputPath") if isinstance(call.get(key), str)]
    if isinstance(call.get("_output"), dict | list):
        texts += [text for _, text in find_expressions(call["_output"])]
    kinds: set[str] = set()
    for text in texts:
        try:
            kinds.update(ref.kind for ref in parse_expression(text).references)
        except ExpressionError:
            continue  # the call's analysis reports it
    scopes = call.get("_scopes")
    if isinstance(scopes, list):
        kinds.update(scope for scope in scopes if isinstance(scope, str))
    return kinds


def _per_instance(call: Any, kinds: set[str]) -> bool:
    return isinstance(call, dict) and call.get("_instance") is None and bool(_kinds_touched(call) & kinds)


def expand_instances(entries: list[Any], context: Messages) -> list[Any]:
    """The plan's entries with each instance-bound call (or pattern group) repeated once per instance."""
    ids, kinds = instances_of(context)
    if not ids:
        return entries
    expanded: list[Any] = []
    for entry in entries:
        group = group_of(entry)
        members = group[1] if group is not None and isinstance(group[1], list) else [entry]
        if not any(_per_instance(member, kinds) for member in members):
            expanded.append(entry)
            continue
        for instance in ids:
            copies = [{**m, "_instance": instance} if _per_instance(m, kinds) else m for m in members]
            expanded.append(copies[0] if group is None else {group[0]: copies})
    return expanded
