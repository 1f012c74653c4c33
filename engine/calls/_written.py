"""What a document writes, statically: per kind a tree of the paths its data messages, schemas and plans' output
paths write, and whether a reference reads inside it (`validate`'s "reads what nothing writes", and what a call's
instance never finds, 013).

"Written" is static: a kind is known when a data message has it or a call's `_outputPath` names it; a path is
known when a message's payload holds it, the kind's schema declares it (`properties`), or an output path
writes it. Below a place whose shape is open — a value that is not an object (`null` may become anything), an
object schema without `properties`, an output path's destination — every path is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..document._view import Messages
from ..protocol._errors import ExpressionError
from ..protocol._expressions import OUTPUT_PATH, Reference, parse_expression
from ..protocol._groups import PlanReading, PlanReadings, read_plan
from ..protocol._messages import Form, body_of
from ._tools import form_indices

# A node of the tree of written paths: segment → node; None is open (every path below is accepted).
Node = dict[str, "Node | None"]


# Per kind some references read, the first segments they read (a whole kind's read adds none).
Heads = dict[str, set[str]]


def merge_tree(node: Node | None, other: Node | None) -> Node | None:
    """`other` merged into `node`, in place: both are trees one reading made (`WrittenPaths`), never shared,
    so a document of n writes of n different keys costs O(n), not a copy of the tree at each."""
    if node is None or other is None:
        return None
    for key, child in other.items():
        node[key] = merge_tree(node[key], child) if key in node else child
    return node


def of_value(value: Any) -> Node | None:
    if not isinstance(value, dict):
        return None
    # A leaf is open without a call for it: a run document writes 100,000 of them.
    return {key: of_value(item) if isinstance(item, dict) else None for key, item in value.items()}


def merge_value(node: Node | None, value: Any) -> Node | None:
    """`merge_tree(node, of_value(value))` without making the value's tree first (a data message's paths)."""
    if node is None or not isinstance(value, dict):
        return None
    for key, item in value.items():
        if key not in node:
            node[key] = of_value(item) if isinstance(item, dict) else None
        elif (child := node[key]) is not None:  # below an open place everything is written already
            node[key] = merge_value(child, item)
    return node


def of_schema(schema: Any) -> Node | None:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return None
    return {key: of_schema(item) for key, item in properties.items()}


def of_path(path: tuple[str, ...]) -> Node | None:
    node: Node | None = None
    for segment in reversed(path):
        node = {segment: node}
    return node


def merge_path(node: Node | None, path: tuple[str, ...]) -> Node | None:
    """`merge_tree(node, of_path(path))` without making the path's tree first (an output path)."""
    if node is None or not path:
        return None
    if len(path) == 1:  # below a path's end everything is written (most output paths have one segment)
        node[path[0]] = None
        return node
    head, rest = path[0], path[1:]
    node[head] = merge_path(node[head], rest) if head in node else of_path(rest)
    return node


def read_plans(context: Messages, solution: Any = None) -> PlanReadings:
    """The solution's calls (its `calls`, or the solution itself when it is an array of calls, format.md §8) and
    every plan message's, each read once (`read_plan`) for every check `validate` makes of them."""
    readings: PlanReadings = {}
    calls = solution.get("calls") if isinstance(solution, dict) else solution
    if isinstance(calls, list):
        readings[None] = read_plan(calls)
    for index in form_indices(context, Form.PLAN, len(context)):
        plan = body_of(context[index]).get("plan")
        readings[index] = read_plan(plan) if isinstance(plan, list) else None
    return readings


def destinations(calls: list[Any]) -> Iterator[tuple[str, tuple[str, ...]]]:
    for call in calls:
        destination = call.get("_outputPath") if isinstance(call, dict) else None
        if isinstance(destination, str):
            try:
                references = parse_expression(destination).references
            except ExpressionError:
                continue
            yield from ((reference.kind, reference.path) for reference in references)


def read_destinations(read: PlanReading) -> Iterator[tuple[str, tuple[str, ...]]]:
    """`destinations` of a plan's calls from its reading: an `_outputPath` that is an expression was parsed there
    (any other, as `destinations` reads it)."""
    for call, found in zip(read.calls, read.expressions, strict=True):
        for where, _, parsed in found:
            if where == OUTPUT_PATH:
                if not isinstance(parsed, ExpressionError):
                    for reference in parsed.references:  # a loop, not a generator for each of 100,000 calls
                        yield reference.kind, reference.path
                break
        else:
            yield from destinations([call])


def heads_of(references: Iterable[Reference]) -> Heads:
    heads: Heads = {}
    for reference in references:
        found = heads.get(reference.kind)
        if found is None:
            found = heads[reference.kind] = set()
        if reference.path:
            found.add(reference.path[0])
    return heads


def merge_read(node: Node | None, value: Any, heads: set[str]) -> Node | None:
    """`merge_value(node, value)` below the first segments in `heads` alone; `value` may be a tree of paths
    (a `Node`: its open places are None, as a value's leaves are)."""
    if node is None or not isinstance(value, dict):
        return None
    for key, item in value.items():
        if key in heads:
            node[key] = merge_value(node[key], item) if key in node else of_value(item)
    return node


def unwritten_at(written: Mapping[str, Node | None], reference: Reference) -> str | None:
    if approval_gate(reference):
        return None  # a person writes it when they approve (SPEC 6.8): waiting for it is no typo
    if reference.kind not in written:
        return f"unknown kind ¶{reference.kind}: no message or output path writes it"
    node = written[reference.kind]
    for depth, segment in enumerate(reference.path):
        if node is None:
            break
        if segment not in node:
            where = "†" + ".".join((reference.kind, *reference.path[: depth + 1]))
            return f"nothing writes {where}"
        node = node[segment]
    return None


def approval_gate(reference: Reference) -> bool:
    """Whether one reference reads under `†state.approvals`: what a person writes to open a gate (SPEC 6.8)."""
    return reference.kind == "state" and reference.path[:1] == ("approvals",)
