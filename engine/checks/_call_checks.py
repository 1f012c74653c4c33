"""Checks of plan calls against what the context defines: a tool nothing defines, a `†` reference to a kind or
path nothing writes (both for `validate`), and for the editor's plan form also what the tool's schema or `run`
refuses (the engine's own `plan_call` and `parameter_problems`, so the form and `run` never disagree).

"Written" is static (`calls/_written`): what the data messages, the schemas and the plans' output paths write.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..calls._activities import Activities
from ..calls._calls import parameter_problems, parameters_of, plan_call
from ..calls._registry import Registry
from ..calls._tools import ToolDefinition
from ..calls._written import (
    Heads,
    Node,
    destinations,
    heads_of,
    merge_path,
    merge_read,
    merge_tree,
    merge_value,
    of_path,
    of_schema,
    of_value,
    read_destinations,
    unwritten_at,
)
from ..document._validate import call_place, json_path
from ..document._view import Messages, by_position
from ..protocol._errors import ExpressionError
from ..protocol._expressions import (
    Expression,
    Reference,
    is_expression,
    parsed_or_error,
)
from ..protocol._groups import PlanReading, PlanReadings, flatten, read_plan
from ..protocol._messages import Form, body_of, payload_of
from ..request._tools import merged_tools
from ..resolve._resolution import Diagnostic
from ..run._instances import odd_instance


@dataclass(frozen=True)
class CallProblem:
    """A problem of call number `call` (as the executor numbers them) at `field` (a JSON path, `$` the call)."""

    call: int
    field: str
    reason: str


def written_paths(context: Messages, plans: PlanReadings | None = None) -> dict[str, Node | None]:
    """Per kind, the tree of paths something writes (see the module's docstring); `plans`: the plan messages
    read already (`read_plans`)."""
    reading = WrittenPaths(context, plans)
    reading.advance(len(context))
    return reading.kinds


class WrittenPaths:
    """`written_paths` a part at a time (a window reads a big document between turns of its event loop):
    `advance(count)` reads the next `count` messages, `done` says when all are read, `kinds` is the result.
    The context must not be edited in between (start again after an edit)."""

    def __init__(self, context: Messages, plans: PlanReadings | None = None) -> None:
        self.context = context
        self.plans = plans
        self.kinds: dict[str, Node | None] = {}
        self._next = 0

    @property
    def done(self) -> bool:
        return self._next >= len(self.context)

    def advance(self, count: int) -> None:
        context, kinds, stop = self.context, self.kinds, min(len(self.context), self._next + count)
        for index in range(self._next, stop):
            info, message = context.info(index), context[index]
            if "type" not in message:
                message = body_of(message)
            if info.kind is not None:
                value = payload_of(message)
                kinds[info.kind] = merge_value(kinds[info.kind], value) if info.kind in kinds else of_value(value)
                if "schema" in message:
                    kinds[info.kind] = merge_tree(kinds[info.kind], of_schema(message["schema"]))
            elif info.form is Form.PLAN and isinstance(message.get("plan"), list):
                read = self.plans.get(index) if self.plans is not None else None
                found = read_destinations(read) if read is not None else destinations(flatten(message["plan"])[0])
                for kind, path in found:
                    kinds[kind] = merge_path(kinds[kind], path) if kind in kinds else of_path(path)
        self._next = max(self._next, stop)


def _written_for(context: Messages, plans: PlanReadings) -> dict[str, Node | None]:
    """`written_paths(context, plans)` as far as the references the plans' calls read can tell (`_unwritten`
    finds the same for each of them): only the kinds they read, and below each only the first segments they
    read. The plans' destinations are merged first; the data messages are read only for the references those
    leave unwritten: a run's calls read mostly what other calls write, and write a path each that nothing reads.
    (The tree only grows as writes are merged, in any order: a reference written once stays written.)"""
    read = _read_references(plans)
    heads = heads_of(read)
    kinds: dict[str, Node | None] = {}
    for reading in plans.values():
        if reading is not None:  # (the solution's calls too: they run first, and write where they say)
            for kind, path in read_destinations(reading):
                if (wanted := heads.get(kind)) is not None:
                    if kind not in kinds:
                        kinds[kind] = {}
                    if not path or path[0] in wanted:
                        kinds[kind] = merge_path(kinds[kind], path)
    left = heads_of(reference for reference in read if unwritten_at(kinds, reference) is not None)
    if left:
        _merge_data(context, kinds, left)
    return kinds


def _read_references(plans: PlanReadings) -> list[Reference]:
    """The references the calls of `plans` read: in their expressions but destinations and malformed ones, and
    the kinds their `_scopes` name."""
    read: list[Reference] = []
    for reading in plans.values():
        for found in reading.reads if reading is not None else ():
            for _, _, parsed in found:
                if not isinstance(parsed, ExpressionError):
                    read.extend(parsed.references)
        for call in reading.calls if reading is not None else ():  # a scope reads its whole kind (015)
            scopes = call.get("_scopes") if isinstance(call, dict) else None
            if isinstance(scopes, list):
                read.extend(Reference(scope, ()) for scope in scopes if isinstance(scope, str))
    return read


def _merge_data(context: Messages, kinds: dict[str, Node | None], heads: Heads) -> None:
    """The paths the data messages write merged into `kinds`, of the kinds in `heads` and below each only the
    first segments in it."""
    infos, message_at = by_position(context)
    for index, info in enumerate(infos):
        kind = info.kind
        if kind is not None and (wanted := heads.get(kind)) is not None:  # a kind nothing reads: left out
            message = message_at(index)
            if "type" not in message:
                message = body_of(message)
            if kind not in kinds:
                kinds[kind] = {}
            node = merge_read(kinds[kind], payload_of(message), wanted)
            kinds[kind] = merge_read(node, of_schema(message["schema"]), wanted) if "schema" in message else node


def reference_problem(written: Mapping[str, Node | None], text: str) -> str | None:
    """Why expression `text` reads something nothing writes (its first such reference), or None."""
    parsed = parsed_or_error(text)
    return None if isinstance(parsed, ExpressionError) else _unwritten(written, parsed)


def _unwritten(written: Mapping[str, Node | None], expression: Expression) -> str | None:
    """Each alternative's first reference nothing writes, when every alternative of `a || b` has one. While one
    alternative is written, the others are fallbacks for what may be absent (011: `†input.optionalData ||
    †state.defaultData`)."""
    reasons: list[str] = []
    for alternative in expression.alternatives:
        reason = next((why for reference in alternative if (why := unwritten_at(written, reference)) is not None),
                      None)
        if reason is None:
            return None
        reasons.append(reason)
    return "; ".join(dict.fromkeys(reasons))


def _refusals(number: int, call: dict[str, Any], tools: Mapping[str, ToolDefinition]) -> Iterator[CallProblem]:
    """What `run` would refuse in this call before starting it: the call's own structural problems (output
    path against the tool's const or pattern, methods, scopes) and parameters the tool's schema refuses. A
    `†` parameter is not judged (its value is known only at run time), not even as a missing required one."""
    plan = plan_call(number, call, dict(tools), Activities())
    unresolved = frozenset(name for name, value in parameters_of(call).items() if is_expression(value))
    for problem in (*plan.problems, *parameter_problems(plan, parameters_of(call), unresolved)):
        if problem.type != "activity":  # which activities are loaded is not known while authoring
            yield CallProblem(number, problem.where, problem.message.removeprefix(f"{problem.where}: "))


def call_problems(calls: list[Any], tools: Mapping[str, ToolDefinition], written: Mapping[str, Node | None],
                  *, refusals: bool = True, reading: PlanReading | None = None,
                  activities: Activities | None = None) -> list[CallProblem]:
    """For each call of a plan: an unknown tool, references nothing writes, an `_instance` that is no instance id
    (`odd_instance`) and (with `refusals`) what the
    tool's schema or `run` refuses. `reading`: the plan's `calls` read already (`read_plan`); `activities`:
    those loaded, when known (a call to a tool nothing defines runs the one of its name, 003)."""
    read = read_plan(calls) if reading is None else reading
    problems: list[CallProblem] = []
    for number, (call, found) in enumerate(zip(read.calls, read.reads, strict=True)):
        if not isinstance(call, dict):
            continue
        instance = call.get("_instance")
        if instance is not None and (odd := odd_instance(instance, call=True)) is not None:
            problems.append(CallProblem(number, "$._instance", odd))
        name = call.get("_tool")
        if not isinstance(name, str) or not name:  # no call (a group nested in a group, say): run refuses it
            if refusals:
                problems.extend(_refusals(number, call, tools))
            continue  # what it would read is read by nothing
        if name not in tools:
            if "_delegate" not in call:  # a call naming its delegate runs that request, tool or not (014)
                runs = (f"it runs the activity {name!r}" if activities is not None and name in activities
                        else "it would run latent")
                unknown = f"unknown tool {name!r}: no tool message defines it ({runs})"
                problems.append(CallProblem(number, "$._tool", unknown))
        elif refusals:
            problems.extend(_refusals(number, call, tools))
        for path, _, parsed in found:  # what it reads: a destination is what writing it makes exist
            if isinstance(parsed, ExpressionError):
                continue  # malformed: validate's own check
            reason = _unwritten(written, parsed)
            if reason is not None:
                problems.append(CallProblem(number, json_path(path), reason))
        scopes = call.get("_scopes")
        if isinstance(scopes, list):
            problems.extend(_unscoped(number, scopes, written))
    return problems


def _unscoped(number: int, scopes: list[Any], written: Mapping[str, Node | None]) -> Iterator[CallProblem]:
    """Scopes that name no kind anything writes (015: a scope is a kind, `["input"]`): the call's context
    would get nothing of them, silently; a `†` reference is the usual slip."""
    for position, scope in enumerate(scopes):
        if isinstance(scope, str) and scope not in written:
            hint = f" (a scope is a kind: {scope[1:].split('.')[0]!r}?)" if scope.startswith("†") else ""
            yield CallProblem(number, f"$._scopes[{position}]",
                              f"scope {scope!r} names no kind any message or output path writes{hint}")


def plan_problems(context: Messages, plans: PlanReadings, tools: Registry | None = None,
                  activities: Activities | None = None) -> list[Diagnostic]:
    """Unknown tools and references nothing writes in the solution and every plan message `plans` read
    (`read_plans`), as warnings (for `validate`, whose run checks judge the parameters of the pending calls).
    Warnings: SPEC 6.7 runs a call to a tool nothing defines as latent, and a path may be written by what the LLM
    or a person types; both are usually typos. A tool of the registry `tools` is defined (SPEC 6.1: registered in
    code)."""
    written = _written_for(context, plans)
    defined = merged_tools(context, tools)
    problems: list[Diagnostic] = []
    for index, reading in plans.items():  # (index None: the solution's calls, which run first)
        if reading is not None:
            found = call_problems(reading.calls, defined, written, refusals=False, reading=reading,
                                  activities=activities)
            problems.extend(Diagnostic(index, call_place(index, f"call {problem.call} {problem.field}"),
                                       problem.reason, "warning") for problem in found)
    return problems
