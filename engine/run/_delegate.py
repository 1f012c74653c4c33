"""Delegates (014, 015): a call run as a clean-room request, from a saved request file or anonymous.

The delegate's context is its own messages, the parent messages the call's scopes allow (resolved for
the call's instance, up front), and the call's parameters as its input. Its final output is the call's
result, written at the call's output path. Files are found relative to the document that names them
and never outside its folder; URLs are not fetched.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..calls._calls import CallPlan, Mode, Problem, parameters_of
from ..calls._scopes import scoped_indices
from ..calls._tools import ToolDefinition, pending_calls
from ..document._context import Context
from ..document._document import Document, Shape, load_document
from ..protocol._errors import DocumentError, ExpressionError
from ..protocol._messages import FORMS, body_of, kind_of
from ..request._advice import solution_refusals
from ..request._request import output_schema_fault
from ..request._tools import merged_tools

ANONYMOUS = "anonymous"
_DEPTH = 16  # how deep the up-front check for recursion follows delegates of delegates


@dataclass(frozen=True)
class Delegate:
    """Where a call delegates: a saved request (`path`, `template`) or anonymous (both None)."""

    name: str
    path: Path | None = None
    template: Document | None = None


def delegate_name(call: Any, tool: ToolDefinition | None) -> tuple[str | None, str | None]:
    """The delegate a call names (its own `_delegate`, or its tool's), and why that is refused."""
    own = call.get("_delegate") if isinstance(call, dict) else None
    prescribed = prescribed_delegate(tool)
    for value in (own, prescribed):
        if value is not None and not (isinstance(value, str) and value):
            return None, "_delegate must be a non-empty string: a request file or 'anonymous'"
    if own is not None and prescribed is not None and own != prescribed:
        return None, f"the tool delegates to {prescribed!r}, not {own!r}"
    return own if own is not None else prescribed, None


def prescribed_delegate(tool: ToolDefinition | None) -> Any:
    """The tool's delegate: its top-level `_delegate`, else a `const` in `properties._delegate`."""
    if tool is None:
        return None
    if "_delegate" in tool.schema:
        return tool.schema["_delegate"]
    properties = tool.schema.get("properties")
    rule = properties.get("_delegate") if isinstance(properties, dict) else None
    return rule.get("const") if isinstance(rule, dict) else None


def _locate(name: str, base: Path | None) -> tuple[Path | None, str | None]:
    if "://" in name:
        return None, (f"delegate {name!r} is a URL; ContextDeck does not fetch URLs: "
                      "save the request next to the document")
    if base is None:
        return None, f"delegate {name!r} is found next to the document, and this document is not saved"
    folder = base.resolve()
    for candidate in (folder / name, folder / f"{name}.json"):
        resolved = candidate.resolve()
        if not resolved.is_relative_to(folder):
            return None, f"delegate {name!r} is outside the document's folder {folder}"
        if resolved.is_file():
            return resolved, None
    return None, f"delegate {name!r} not found: no {name} or {name}.json in {folder}"


def find_delegate(name: str, base: Path | None, chain: tuple[Path, ...],
                  code_tools: dict[str, dict[str, Any]] | None = None,
                  depth: int = 0) -> tuple[Delegate | None, str | None]:
    """Load the delegate `name` (relative to `base`), refusing a missing, malformed or recursive one."""
    found, refusal = _find(name, base, chain, code_tools, depth)
    return found, None if refusal is None else refusal.reason


class _Refusal(NamedTuple):
    """Why a delegate cannot be followed; `cycle`: the files of the cycle when it is recursive."""

    reason: str
    cycle: tuple[Path, ...] = ()


def _find(name: str, base: Path | None, chain: tuple[Path, ...], code_tools: dict[str, dict[str, Any]] | None,
          depth: int) -> tuple[Delegate | None, _Refusal | None]:
    if name == ANONYMOUS:
        return Delegate(name), None
    path, problem = _locate(name, base)
    if path is None:
        return None, _Refusal(problem or f"delegate {name!r} not found")
    if path in chain:
        cycle = (*chain[chain.index(path):], path)
        return None, _Refusal(f"delegate {name!r} is recursive: {' → '.join(p.name for p in cycle)}", cycle)
    try:
        template = load_document(path)
    except DocumentError as error:
        return None, _Refusal(f"delegate {name!r} cannot be loaded: {error}")
    fault = output_schema_fault(template.schema)
    if fault is not None:  # its loop could never accept an output: the call would wait for ever
        return None, _Refusal(f"delegate {name!r}: {fault}")
    unusable = solution_refusals(template.context, template.solution)
    if unusable:  # its loop would refuse it as its first turn
        return None, _Refusal(f"delegate {name!r}: {unusable[0]}")
    if depth < _DEPTH:
        refusal = _nested_refusal(template, path, (*chain, path), code_tools, depth + 1)
        if refusal is not None:
            # A delegate inside the cycle is named by the cycle already; one that leads into it says so.
            if path in refusal.cycle:
                return None, refusal
            return None, _Refusal(f"delegate {name!r}: {refusal.reason}", refusal.cycle)
    return Delegate(name, path, template), None


def _nested_refusal(template: Document, path: Path, chain: tuple[Path, ...],
                    code_tools: dict[str, dict[str, Any]] | None, depth: int) -> _Refusal | None:
    """The first delegate of the delegate's own calls that cannot be followed (a cycle, say)."""
    tools = merged_tools(template.context, code_tools)
    calls, _ = pending_calls(template.context, template.solution)
    for call in calls:
        if not isinstance(call, dict):
            continue
        tool_name = call.get("_tool")
        name, _ = delegate_name(call, tools.get(tool_name) if isinstance(tool_name, str) else None)
        if name is None or name == ANONYMOUS:
            continue
        _, refusal = _find(name, path.parent, chain, code_tools, depth)
        if refusal is not None:
            return refusal
    return None


def delegate_for(plan: CallPlan, base: Path | None, chain: tuple[Path, ...],
                 code_tools: dict[str, dict[str, Any]] | None,
                 found: dict[str, tuple[Delegate | None, str | None]] | None = None,
                 ) -> tuple[Delegate | None, Problem | None]:
    """The delegate a planned call runs in, or the `delegate` problem that refuses it before running.

    An anonymous delegate of an explicit call is its activity, which already sees only its scopes. `found`
    keeps what each name gave, so that the calls of one plan naming the same file load it once (a session
    copies its template: sharing one is safe).
    """
    name, refusal = delegate_name(plan.call, plan.tool)
    # The call's own `_delegate` is where the refusal is, else the call as a whole (its tool names the delegate).
    where = "$._delegate" if isinstance(plan.call, dict) and plan.call.get("_delegate") is not None else "$"
    if refusal is not None:
        return None, Problem("delegate", refusal, where)
    if name is None or (name == ANONYMOUS and plan.mode is Mode.EXPLICIT):
        return None, None
    known = found.get(name) if found is not None else None
    if known is None:
        known = find_delegate(name, base, chain, code_tools)
        if found is not None:
            found[name] = known
    delegate, problem = known
    return delegate, None if problem is None else Problem("delegate", problem, where)


def _scoped(context: Context, plan: CallPlan) -> list[dict[str, Any]]:
    """One message per scoped kind: its value resolved for the call's instance, without `_instance`."""
    messages = []
    for kind in plan.scopes:
        try:
            value = context.resolve(f"†{kind}", instance=plan.instance)
        except ExpressionError:
            continue
        if not value.found:
            continue
        indices = scoped_indices(context, (kind,), plan.instance)
        schemas = [body["schema"] for i in indices if "schema" in (body := body_of(context[i]))]
        messages.append(_data_message(kind, copy.deepcopy(value.value), schemas[-1] if schemas else None))
    return messages


def _data_message(kind: str, value: Any, schema: Any) -> dict[str, Any]:
    """A data message of `kind` holding `value`: the shorthand `{"type": kind, ...}` (015's example) when
    `kind` names no other form of message, else `{"type": "data", "kind": kind, "data": value}`, so that a
    kind named like a plan, a tool, a text or a preset stays data in the clean room."""
    message: dict[str, Any]
    if kind == "data":
        message = {"type": "data", "data": value}
    elif kind in FORMS:
        message = {"type": "data", "kind": kind, "data": value}
    else:
        reserved = {"type", "schema", "description", "data", kind}
        loose = isinstance(value, dict) and value and not any(k in reserved or k.startswith("_") for k in value)
        message = {"type": kind, **value} if loose else {"type": kind, kind: value}
    if schema is not None:
        message["schema"] = copy.deepcopy(schema)
    return message


def delegate_document(spec: Delegate, plan: CallPlan, resolved: dict[str, Any], parent: Context) -> Document:
    """The clean room: the delegate's messages, the scoped parent messages, the call's parameters as input."""
    template = spec.template
    own = copy.deepcopy(template.context.messages) if template is not None else []
    scoped = _scoped(parent, plan)
    parameters = copy.deepcopy(parameters_of(resolved))
    own, placed = _with_input(own, parameters) if parameters else (own, True)
    schema = copy.deepcopy(template.schema) if template is not None else _latent_output_schema(plan)
    solution = copy.deepcopy(template.solution) if template is not None else None
    messages = [*own, *scoped]
    if not placed:
        messages.append(_input_message(parameters, None))
    return Document(Context(messages), Shape.REQUEST, schema=schema, solution=solution)


def _with_input(messages: list[dict[str, Any]], parameters: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """The delegate's own global input messages, in whatever form they are written, become one holding the
    call's parameters (014's example): in the place of the first, with the latest schema they declared; and
    whether the delegate had one (else the parameters go last)."""
    bodies = [body_of(m) for m in messages]
    positions = [i for i, m in enumerate(bodies) if kind_of(m) == "input" and m.get("_instance") is None]
    if not positions:
        return messages, False
    schemas = [bodies[i]["schema"] for i in positions if "schema" in bodies[i]]
    kept = [m for i, m in enumerate(messages) if i not in positions[1:]]
    kept[positions[0]] = _input_message(parameters, schemas[-1] if schemas else None)
    return kept, True


def _input_message(parameters: dict[str, Any], schema: Any) -> dict[str, Any]:
    """The call's parameters as the input message, as 014's example writes it."""
    message: dict[str, Any] = {"type": "input", "input": parameters}
    if schema is not None:
        message["schema"] = schema
    return message


def _latent_output_schema(plan: CallPlan) -> Any:
    properties = plan.tool.schema.get("properties") if plan.tool is not None else None
    return copy.deepcopy(properties.get("_output")) if isinstance(properties, dict) else None

