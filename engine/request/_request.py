"""The exact request the model receives (001, 002, 012, 016, 017): its messages, its schema, its call settings.

`compose_request` is the one place that decides it: the LLM view, `contextdeck render` and the model
provider all read the same `Request`.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ..calls._activities import Activities
from ..calls._registry import Registry
from ..calls._tools import ToolDefinition, form_indices, tool_definitions, unknown_references
from ..document import _json
from ..document._view import Messages
from ..protocol._errors import ExpressionError
from ..protocol._expressions import parsed_or_error
from ..protocol._messages import Form, body_of, payload_of
from ..protocol._schemas import SchemaFault, identifying, inside_schema, ref_targets, schema_check
from ..resolve._resolution import Diagnostic
from ._render import LLMMessage, limit_of, messages_text, render, shown

META_DESCRIPTION = ("Metadata about the idea, including version and identity. "
                    "The LLM is expected to update this, for example by bumping the version.")
ADVICE_CALLS = {"type": "string", "description": "Inline JSON: a vote from 0 to 100 for each tool name, "
                                                  "for example {\"deploy\": 10, \"delay\": 95}"}
CONSULT_ADVISOR = "ConsultAdvisor"
_ENGINE_KEYS = ("meta", "output", "calls", "advisors")


@dataclass(frozen=True)
class Request:
    """The request as the model receives it. Frozen; `to_json()` gives a fresh copy to send or print.

    - `messages`: the context as the model reads it, in order (`LLMMessage`: role, text, sources, form).
    - `schema`: the composed solution schema: `advisors` (when any), `meta`, `output` (nullable: null
      means "not finished"), `calls` (one item per tool; `_output` kept for latent tools only).
    - `tools`: the tools in `calls`, in order, with whether each is latent.
    - `config`: settings for the model call from preset messages (model, temperature, ...).
    - `problems`: what keeps the request from being what the document says (an unknown tool reference).
    - `meta`: the identity the request gives the model (016: the latest global `meta` value), or None; a turn's
      `meta` is checked against it without another pass over the context.
    """

    messages: tuple[LLMMessage, ...]
    schema: Mapping[str, Any]
    tools: tuple[ComposedTool, ...]
    config: Mapping[str, Any]
    problems: tuple[Diagnostic, ...]
    meta: Any = None

    def to_json(self) -> dict[str, Any]:
        """`{"messages": [{"role", "content"}], "schema": ..., "config": ...}` (a deep copy)."""
        return {
            "messages": [{"role": message.role, "content": message.text} for message in self.messages],
            "schema": copy.deepcopy(dict(self.schema)),
            "config": copy.deepcopy(dict(self.config)),
        }

    def messages_text(self) -> str:
        """The messages as text: each under a `--- role ---` line (what `render_text` gives)."""
        return messages_text(self.messages)

    def schema_text(self) -> str:
        """The composed schema as indented JSON."""
        return shown(self.schema)

    def config_text(self) -> str:
        """The model settings as one line of JSON."""
        return _json.dumps(dict(self.config), indent=False)

    def text(self) -> str:
        """The text form `contextdeck render` prints: the messages, then the schema."""
        parts = [self.messages_text()] if self.messages else []
        parts.append("--- schema ---\n" + self.schema_text())
        return "\n\n".join(parts)


@dataclass(frozen=True)
class ComposedTool:
    """A tool as offered in `calls`: its name, whether the model produces its `_output`, its item schema."""

    name: str
    latent: bool
    item: Mapping[str, Any]
    message_index: int | None


def compose_request(
    context: Messages,
    schema: Any = None,
    *,
    at: int | None = None,
    activities: Activities | None = None,
    tools: Registry | None = None,
) -> Request:
    """The request as of the first `at` messages: `schema` is the document's, `tools` the registry that
    `"tool": "Tool.name"` references look up, `activities` decide which tools are explicit."""
    limit = limit_of(context, at)
    seen = survey(context, limit)
    plans = form_indices(context, Form.PLAN, limit)
    lazy = bool(plans) and body_of(context[plans[-1]]).get("mode") == "lazy"
    composed = [_composed(definition, activities, lazy)
                for definition in tool_definitions(context, limit, tools).values()]
    consult = consult_tool(seen.advisors, seen.instances)
    if consult is not None:
        composed.append(ComposedTool(CONSULT_ADVISOR, True, consult.schema, None))
    consulted = [message for message in seen.advisors if consulted_now(message, seen.later_request)]
    return Request(
        messages=tuple(render(context, limit)),
        schema=_solution_schema(schema, composed, consulted, seen.meta, seen.instances),
        tools=tuple(composed),
        config=seen.config,
        problems=tuple(unknown_references(context, tools, limit) + seen.advisor_problems),
        meta=seen.meta,
    )


@dataclass(frozen=True)
class Survey:
    """What the messages other than tools say about the request, gathered in one pass over the context."""

    advisors: list[dict[str, Any]]  # the latest definition of each id, by first appearance
    advisor_problems: list[Diagnostic]
    config: dict[str, Any]  # presets: a later key wins (001's "LLM config")
    meta: Any  # the latest global `meta` value (016), or None
    instances: list[str]
    later_request: bool  # a plan, an error or an output: an earlier request has been made


def survey(context: Messages, limit: int) -> Survey:
    advisors: dict[str, dict[str, Any]] = {}
    problems: list[Diagnostic] = []
    config: dict[str, Any] = {}
    meta: Any = None
    instances: dict[str, None] = {}
    for index in range(limit):
        info = context.info(index)
        message = context[index]
        if info.instance is not None:
            instances[info.instance] = None
        if info.form is Form.ADVISOR:
            _advisor(body_of(message), index, advisors, problems)
        elif info.form is Form.PRESET:
            message = body_of(message)
            body = message.get("preset")
            if not isinstance(body, dict):
                body = {key: value for key, value in message.items() if key != "type" and not key.startswith("_")}
            config.update(copy.deepcopy(body))
        elif info.kind == "meta" and info.instance is None:
            meta = payload_of(message)
    return Survey(list(advisors.values()), problems, config, meta, list(instances), later_request(context, limit))


def advisors_of(context: Messages) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """`survey`'s advisors and their problems, for a caller that needs nothing else of it (`validate`)."""
    advisors: dict[str, dict[str, Any]] = {}
    problems: list[Diagnostic] = []
    for index in form_indices(context, Form.ADVISOR, len(context)):
        _advisor(body_of(context[index]), index, advisors, problems)
    return list(advisors.values()), problems


def later_request(context: Messages, limit: int) -> bool:
    """Whether a plan, an error or an output comes among the first `limit`: an earlier request has been made
    (017: an advisor `on` start is consulted only before, `on` request at each). Usually answered by the first
    plan, output or error, not by a look at every message."""
    if form_indices(context, Form.PLAN, limit):
        return True
    for index in range(limit):
        message = body_of(context[index])
        if "_call" in message or "_outputPath" in message or context.info(index).kind == "error":
            return True
    return False


# -- tools ---------------------------------------------------------------------------------------------


def is_latent(definition: ToolDefinition, activities: Activities | None) -> bool:
    """003: `_activity` names the activity (`""`: latent); else one under the tool's name; else latent.

    A tool that delegates (`_delegate`, 014) is not latent either: the delegate produces its output.
    """
    schema = definition.schema
    if "_delegate" in schema or "_delegate" in _properties(schema):
        return False
    named = schema.get("_activity")
    if isinstance(named, str) and named:  # not knowing what is loaded, it is taken as loaded (as `validate` does)
        return activities is not None and activities.get(named) is None
    if named is not None:
        return bool(named == "")
    return activities is None or activities.get(definition.name) is None


def tool_item(name: str, schema: Mapping[str, Any], latent: bool) -> dict[str, Any]:
    """The `calls` item for a tool (002): `_tool` as a const first, `_output` only when the model writes it.

    Top-level keys starting with `_` (`_activity`, `_delegate`, ...) direct the engine and are left out.
    """
    item = {key: copy.deepcopy(value) for key, value in schema.items() if not key.startswith("_")}
    properties: dict[str, Any] = {"_tool": {"const": name}}
    for key, value in _properties(schema).items():
        if key != "_tool":
            properties[key] = copy.deepcopy(value) if key.startswith("_") else or_reference(value)
    item.setdefault("type", "object")
    item["properties"] = properties
    if not latent and "_output" in properties:
        item = output_moved(item)
        del item["properties"]["_output"]
    required = schema.get("required")
    kept = ([key for key in required if isinstance(key, str) and key != "_tool" and key in properties]
            if isinstance(required, list) else [])
    item["required"] = ["_tool", *kept]
    return item


def output_moved(item: dict[str, Any]) -> dict[str, Any]:
    """An explicit tool's item whose `$ref`s into its `_output` (a parameter shaped as the result) point at a copy
    of it in the item's `$defs` (`_output`, or `_output-2`, ... when taken), so that `_output` may be left out
    (002) without a `$ref` pointing to nothing. A `$ref` is read as a validator would (`rerooted`), and only one
    whose target lies under the item's own `properties/_output` moves. The item itself when no `$ref` leads into
    `_output`."""
    defs = item.get("$defs")
    kept = dict(defs) if isinstance(defs, dict) else {}
    name = _reserved("_output", kept)
    into: list[bool] = []

    def place(steps: list[str]) -> str:
        if steps[:2] != ["properties", "_output"]:
            return json_pointer(steps)
        into.append(True)
        return json_pointer(["$defs", name, *steps[2:]])

    moved = rerooted(item, place, kept, "_")
    if not into:
        return item
    kept[name] = copy.deepcopy(moved["properties"]["_output"])
    return {**moved, "$defs": kept}


def rerooted(schema: dict[str, Any], place: Callable[[list[str]], str], defs: dict[str, Any], prefix: str) -> Any:
    """`schema` with each `$ref` that leads into it rewritten as `place(the steps from its root to the target)`: the
    `$ref` of a pointer from a new root, whatever moved. A `$ref` is read as a validator of `schema` would: against
    the `$id`s above it or naming an `$anchor` (`ref_targets`) when it has any, and those keywords go (moved, they
    would make `#` mean something else); else as the pointer it is. One to a boolean schema (which has no place of
    its own to point at once `$id`s go) points at a copy of it put in `defs` once, as `<prefix>false` or
    `<prefix>true` (a name not taken). One it cannot locate is read as the pointer it is, or stays as written when it
    is none (remote, an unknown anchor): such a schema is refused elsewhere."""
    scoping = identifying(schema)
    located = ref_targets(schema) if _scoped(schema, scoping) else None
    booleans: dict[bool, str] = {}

    def target(node: dict[str, Any], ref: str) -> str:
        found = located.get(id(node)) if located else None
        if isinstance(found, bool):
            if found not in booleans:
                booleans[found] = _reserved(f"{prefix}{str(found).lower()}", defs)
                defs[booleans[found]] = found
            return json_pointer(["$defs", booleans[found]])
        steps = pointer_steps(ref) if found is None else list(found)
        return ref if steps is None else place(steps)

    return with_refs(schema, target, () if located is None else scoping)


def or_reference(schema: Any) -> Any:
    """A parameter's schema that also takes a `†` reference (007: a parameter may hold one instead of its value).

    A schema that takes any string already takes a reference and stays as it is (002's `userName`).
    """
    if schema is True or schema == {}:
        return copy.deepcopy(schema)
    if isinstance(schema, dict):
        kind = schema.get("type")
        strings = kind == "string" or (isinstance(kind, list) and "string" in kind)
        if strings and not any(key in schema for key in _STRING_LIMITS):
            return copy.deepcopy(schema)
    return {"anyOf": [copy.deepcopy(schema), REFERENCE]}


REFERENCE = {"type": "string", "pattern": "^†", "description": "a reference to a value in the context, as †state.path"}
_STRING_LIMITS = ("enum", "const", "pattern", "format", "minLength", "maxLength", "not", "anyOf", "oneOf", "allOf")


def _composed(definition: ToolDefinition, activities: Activities | None, lazy: bool) -> ComposedTool:
    latent = is_latent(definition, activities)
    # 012: a lazy plan's model plans only and performs no latent execution, so it is given no `_output` to fill,
    # as an explicit tool's model is not (002).
    return ComposedTool(definition.name, latent, tool_item(definition.name, definition.schema, latent and not lazy),
                        definition.message_index)


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


# -- advisors (017) --------------------------------------------------------------------------------------


def _advisor(message: dict[str, Any], index: int, found: dict[str, dict[str, Any]],
             problems: list[Diagnostic]) -> None:
    """Keep an advisor under its id (a later definition replaces the earlier), or say what is wrong with it."""
    name = message.get("id")
    named = isinstance(name, str) and bool(name)
    where = f"advisor {name}" if named else "advisor"
    if not named:
        problems.append(Diagnostic(index, "advisor", "an advisor needs a non-empty string 'id'"))
    # Its other faults too: the author fixes them all at once, not the id first and then the rest.
    unusable = _advisor_schema_fault(message)
    faults = [*([] if unusable is None else [unusable]), *_advisor_faults(message)]
    problems.extend(Diagnostic(index, where, reason) for reason in faults)
    if unusable is None:  # a usable schema the request may read apart
        problems.extend(Diagnostic(index, where, f"its schema {reason}", "warning")
                        for reason in read_apart(message.get("schema")))
    if named:
        found[str(name)] = message


def _advisor_schema_fault(message: dict[str, Any]) -> str | None:
    """What is wrong with an advisor's schema (017), which would make the composed request schema one no model
    provider accepts, or None."""
    schema = message.get("schema")
    if "schema" in message and not isinstance(schema, dict):
        return "'schema' must be an object"
    if isinstance(schema, dict):
        try:
            schema_check(schema)
        except SchemaFault as fault:
            return f"'schema' cannot be used: {fault}"
    return None


def _advisor_faults(message: dict[str, Any]) -> list[str]:
    """What is wrong with an advisor's other fields (017): each would otherwise be dropped from the request."""
    faults: list[str] = []
    if message.get("on") not in ADVISOR_ON:
        faults.append(f"'on' must be start, finish, request or null, not {message.get('on')!r}")
    if "role" in message and not isinstance(message["role"], str):
        faults.append("'role' must be a string")
    if "isInstanced" in message and not isinstance(message["isInstanced"], bool):
        faults.append("'isInstanced' must be true or false")
    scopes = message.get("scopes")
    if scopes is not None and not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)):
        faults.append("'scopes' must be an array of strings (kinds or † references)")
    elif isinstance(scopes, list):
        for number, scope in enumerate(scopes):
            parsed = parsed_or_error(scope) if scope.startswith("†") else None
            if isinstance(parsed, ExpressionError):
                faults.append(f"scopes[{number}]: {parsed.reason} at position {parsed.position}")
    return faults


ADVISOR_ON = ("start", "finish", "request", None)


def consulted_now(advisor: dict[str, Any], later_request: bool) -> bool:
    """Whether an advisor gives advice in this request: `request` and `finish` always (the solution may end
    the loop in any request), `start` in the first request only, on-demand ones through ConsultAdvisor."""
    when = advisor.get("on")
    if when == "start":
        return not later_request
    return when in ("request", "finish")


def advice_item(advisor: Mapping[str, Any], instances: list[str], defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """One advisor's advice in the solution: its id, its own schema's fields, and its inline-JSON votes.

    `defs`: the composed schema's `$defs`, where the advisor schema's own go (`hoisted`); without it they are
    left out, with the `$ref`s into them."""
    schema = advisor.get("schema")
    own: dict[str, Any] = schema if isinstance(schema, dict) else {}
    if defs is not None:
        own = hoisted(own, f"advisors.{advisor['id']}", defs)
    properties: dict[str, Any] = {"id": {"const": advisor["id"]}}
    required = ["id"]
    if advisor.get("isInstanced") is True:
        properties["_instance"] = {"enum": instances}
        required.append("_instance")
    properties.update(copy.deepcopy(_properties(own)))
    properties.setdefault("calls", ADVICE_CALLS)
    own_required = own.get("required")
    required += [key for key in own_required if key not in required] if isinstance(own_required, list) else []
    return {"type": "object", "properties": properties, "required": required}


def consult_tool(advisors: list[dict[str, Any]], instances: list[str]) -> ToolDefinition | None:
    """The latent ConsultAdvisor tool the request offers when some of `advisors` (`survey`'s) is consulted on demand
    (017: `on` null or absent), or None: its `advisor` is one of their ids, its `_output` one's advice. The request
    offers it and `merged_tools` gives it to a run and `validate`, so all check its calls against one schema."""
    on_demand = [advisor for advisor in advisors if advisor.get("on") is None]
    return ToolDefinition(CONSULT_ADVISOR, _consult_item(on_demand, instances)) if on_demand else None


def _consult_item(advisors: list[dict[str, Any]], instances: list[str]) -> dict[str, Any]:
    ids = [advisor["id"] for advisor in advisors]
    defs: dict[str, Any] = {}
    advice = [advice_item(advisor, instances, defs) for advisor in advisors]
    return {
        **({"$defs": defs} if defs else {}),  # the item stands on its own (the turn check); the schema hoists it
        "type": "object",
        "description": "Ask an on-demand advisor for its advice when the situation is ambiguous (017).",
        "properties": {
            "_tool": {"const": CONSULT_ADVISOR},
            "advisor": {"enum": ids},
            "question": {"type": "string"},
            "_output": _one_of(advice),
        },
        "required": ["_tool", "advisor"],
    }


# -- the solution schema ------------------------------------------------------------------------------


def _solution_schema(
    schema: Any,
    tools: list[ComposedTool],
    advisors: list[dict[str, Any]],
    meta: Any,
    instances: list[str],
) -> dict[str, Any]:
    """002's composition: `meta`, the nullable `output`, `calls` of the tools; `advisors` first when any.

    A request schema whose properties name `output` beside `calls` or `meta` (012, 016) is the solution's own: its
    `output` is the output schema and its other properties stay, before `meta`. Each embedded schema's `$defs` move
    to the composed root's (`hoisted`): there `#` is the composed schema's top.
    """
    defs: dict[str, Any] = {}
    output, extra = hoisted(schema, "output", defs), {}
    if is_solution_schema(schema):
        own = _properties(output)
        output = own.get("output")
        extra = {key: copy.deepcopy(value) for key, value in own.items() if key not in _ENGINE_KEYS}
    properties: dict[str, Any] = {}
    required: list[str] = []
    if advisors:
        advice = [advice_item(a, instances, defs) for a in advisors]
        properties["advisors"] = {"type": "array", "items": _one_of(advice)}
        required.append("advisors")
    properties.update(extra)
    properties["meta"] = meta_schema(meta)
    properties["output"] = nullable(output)
    items = [hoisted(tool.item, f"calls.{tool.name}", defs) for tool in tools]
    properties["calls"] = {"type": "array", "items": _one_of(items)} if items else {"type": "array", "maxItems": 0}
    required += ["meta", "calls", "output"]
    composed = {"type": "object", "properties": properties, "required": required}
    if defs:
        composed["$defs"] = defs
    return composed


def hoisted(schema: Any, prefix: str, defs: dict[str, Any]) -> Any:
    """`schema`, to be embedded in a composed schema, whose `$defs` and `definitions` go into `defs` (the
    composed root's `$defs`) as `<prefix>.<name>`, and whose `$ref`s into its own root follow them: `#/$defs/x`
    becomes `#/$defs/<prefix>.x`; any other pointer into it (`#`, `#/properties/a`) points into a copy of the
    schema put in `defs` as `<prefix>` (only when one does). A name taken already gets `-2`, `-3`, ... A schema
    with `$id`s (its root's or a nested one's) or `$anchor`s has its `$ref`s read against them (`ref_targets`) and
    rewritten to pointers from the composed root, and loses those keywords: embedded, they would make `#` mean
    something else. Other `$ref`s (remote, unresolvable) stay as they are: they are refused elsewhere. `defs` is
    written in place; the result shares what it does not rewrite with `schema` (copy it before changing it).
    """
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    moved: dict[tuple[str, str], str] = {}
    for section in _DEFS:
        own = schema.get(section)
        for name in own if isinstance(own, dict) else ():
            moved[section, name] = _reserved(f"{prefix}.{name}", defs)
    root: list[str] = []

    def pointer(steps: list[str]) -> str:
        if len(steps) >= 2 and (steps[0], steps[1]) in moved:
            steps = [moved[steps[0], steps[1]], *steps[2:]]
        else:
            if not root:
                root.append(_reserved(prefix, defs))
            steps = [root[0], *steps]
        return json_pointer(["$defs", *steps])

    # The body first, then the sections: what `pointer` and the boolean copies add to `defs` comes in that order.
    whole = {key: value for key, value in schema.items() if key not in _DEFS}
    whole = rerooted({**whole, **{section: schema[section] for section, _ in moved}}, pointer, defs, f"{prefix}.")
    body = {key: value for key, value in whole.items() if key not in _DEFS}
    for (section, name), key in moved.items():
        defs[key] = whole[section][name]
    if root:
        defs[root[0]] = copy.deepcopy(body)
    return body


def pointer_steps(ref: str) -> list[str] | None:
    """The steps of a `$ref` that is a JSON pointer into its own document (`#/properties/a` is properties, a), or
    None for any other reference."""
    pointer = unquote(ref[1:]) if ref.startswith("#") else None
    if pointer is None or (pointer and not pointer.startswith("/")):
        return None
    return [step.replace("~1", "/").replace("~0", "~") for step in pointer.split("/")[1:]]


def json_pointer(steps: list[str]) -> str:
    """The `$ref` of a JSON pointer from the schema's root through `steps` (`pointer_steps`' inverse: a `%` is
    percent-quoted, as a `$ref` is a URI fragment and `pointer_steps` unquotes it)."""
    return "#" + "".join("/" + step.replace("~", "~0").replace("/", "~1").replace("%", "%25") for step in steps)


def with_refs(node: Any, target: Callable[[dict[str, Any], str], str], dropped: tuple[str, ...] = (),
              names: bool = False) -> Any:
    """`node` with each `$ref` rewritten to `target(the schema holding it, the ref)`, and the keywords `dropped`
    left out of every schema: itself when nothing changes (a schema without them is not copied)."""
    if isinstance(node, list):
        items = [with_refs(value, target, dropped) for _, value, _ in inside_schema(node)]
        return node if all(new is old for new, old in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    walked = {key: named for key, _, named in inside_schema(node, names)}  # the rest are values: kept as they are
    result = {key: target(node, value) if not names and key == "$ref" and isinstance(value, str)
              else with_refs(value, target, dropped, walked[key]) if key in walked else value
              for key, value in node.items() if names or key not in dropped}
    return node if len(result) == len(node) and all(result[key] is value for key, value in node.items()) else result


def _reserved(name: str, defs: dict[str, Any]) -> str:
    key, number = name, 1
    while key in defs:
        number += 1
        key = f"{name}-{number}"
    defs[key] = {}  # held until its schema is written
    return key


_DEFS = ("$defs", "definitions")
# What makes a `$ref` mean something else than a pointer from the schema's root: `$id`s and `$anchor`s it is read
# against (draft-04's `id`, a string: a property named so is an object), or a `$ref` that is not a pointer (a URI or
# an anchor): only then is each `$ref` looked up.
_SCOPED = {("$id", "$anchor"): re.compile(r'"\$(?:id|anchor)"|"\$ref":"(?!#/|#")'),
           ("id",): re.compile(r'"id":"|"\$ref":"(?!#/|#")')}


def _scoped(schema: dict[str, Any], scoping: tuple[str, ...]) -> bool:
    try:
        return _SCOPED[scoping].search(_json.dumps(schema, indent=False)) is not None
    except ValueError:
        return True  # looked up, to be sure


def is_solution_schema(schema: Any) -> bool:
    """Whether a request's schema is the whole solution's (012, 016: `output` beside `calls` or `meta`)
    rather than the output's (002)."""
    own = _properties(schema) if isinstance(schema, dict) else {}
    return "output" in own and ("calls" in own or "meta" in own)


def output_schema(schema: Any) -> Any:
    """The schema the final output must meet: `properties.output` of a solution schema, else the schema.

    A solution schema (002's composed schema, 012's examples) has `output` beside `calls` or `meta`.
    """
    return schema["properties"]["output"] if is_solution_schema(schema) else schema


def output_schema_fault(schema: Any) -> str | None:
    """Why a request's output schema cannot be used to check an output (002 composes it into the schema the
    model receives), or None: no schema, or a usable one."""
    target = output_schema(schema)
    if target is None:
        return None
    try:
        schema_check(target)
    except SchemaFault as fault:
        return f"the request's output schema cannot be used: {fault}"
    return None


def foreign_dialect(schema: Any) -> str | None:
    """Why a schema embedded in the composed request (a tool's, the request's own) is read otherwise there, or None:
    it declares a `$schema` other than 2020-12, the composed schema's, whose keywords its own may not mean (draft-07's
    `items` array or `dependencies`). Embedded, `$schema` names no dialect; on its own (the turn check's item) it
    does."""
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(declared, str) or declared.rstrip("#") == COMPOSED_DIALECT:
        return None
    return (f"declares $schema {declared!r}, but the request the model receives is JSON Schema 2020-12, where its "
            "keywords may mean otherwise (draft-07's 'items' array, 'dependencies'): the model and the turn check "
            "could read it apart; write it in 2020-12")


COMPOSED_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def read_apart(schema: Any) -> list[str]:
    """Why a schema embedded in the composed request (a tool's, an advisor's, the request's own) may be read there
    otherwise than on its own, as the turn check and the advice check read it, each to be said as a warning: another
    dialect (`foreign_dialect`), or a `$dynamicRef`, whose target a validator finds through the dynamic scope, which
    is made of the `$id` resources the composition merges into one (`rerooted`) and may meet a `$dynamicAnchor`
    copied with the schema (`hoisted`, `output_moved`): it is composed as it is written, and may find another
    target there, or none."""
    foreign = foreign_dialect(schema)
    dynamic = _dynamic_refs(schema, [])
    more = f" (and {len(dynamic) - 1} more)" if len(dynamic) > 1 else ""
    return [*([] if foreign is None else [foreign]),
            *([f"has a $dynamicRef at {json_pointer(dynamic[0])}{more}, which the request the model receives (one "
               "schema, its $ids merged) may resolve otherwise or not at all: write it as a $ref"] if dynamic else [])]


def _dynamic_refs(node: Any, steps: list[str], names: bool = False) -> list[list[str]]:
    """The steps to each schema of `node` holding a `$dynamicRef`."""
    own = [steps] if isinstance(node, dict) and not names and "$dynamicRef" in node else []
    return own + [found for key, value, named in inside_schema(node, names)
                  for found in _dynamic_refs(value, [*steps, key], named)]


def meta_schema(meta: Any) -> dict[str, Any]:
    """002's `meta`: `path` and `version`, plus every other field the context's meta message gives (016)."""
    properties: dict[str, Any] = {"path": {"type": "string"}, "version": {"type": "string"}}
    if isinstance(meta, dict):
        for key, value in meta.items():
            if key not in properties:
                properties[key] = {"type": _json_type(value)}
                if isinstance(value, list):
                    properties[key]["items"] = {"type": "string"}
    return {"type": "object", "description": META_DESCRIPTION, "properties": properties}


def version_warnings(current: Any, meta: Any, where: str) -> list[Diagnostic]:
    """A warning at `where` when the `meta` a solution gives back (016) does not bump the version of the context's
    meta `current` as `version_problem` says."""
    version = current.get("version") if isinstance(current, dict) else None
    given = meta.get("version") if isinstance(meta, dict) else None
    if not isinstance(version, str) or not isinstance(given, str):
        return []  # no version to bump, or one the meta schema refuses already
    branches = meta.get("branches")
    reason = version_problem(version, given, branches if isinstance(branches, list) else None)
    return [] if reason is None else [Diagnostic(None, where, reason, "warning")]


def version_problem(version: str, given: str, branches: list[Any] | None = None) -> str | None:
    """Why `given` is not the context's `version` incremented as 016 asks of a solution, or None. 016 calls a new
    solution against the same schema a compatible change that "increments the minor version", and its example
    bumps 1.2.3 to 1.2.4 (twice; and "latest compatible with 1.2" finds 1.2.x, which 1.3.0 would leave): the last
    number is incremented (a branch's too: 1.2.3.branch-A.1 to .2), or a new branch starts at its first version
    (1.2.3.branch-A.1, the branch among the solution's `branches` when it gives them)."""
    if given == version:
        return f"{version!r} is the context's version: 016 asks for it bumped"
    parts = version.split(".")
    bumped = ".".join((*parts[:-1], _plus_one(parts[-1]))) if parts[-1].isdecimal() else None
    if given == bumped:
        return None
    rest = given.removeprefix(version + ".")
    branch = rest.removesuffix(".1")
    if given.startswith(version + ".") and rest.endswith(".1") and branch and "." not in branch \
            and (branches is None or branch in branches):
        return None  # 016: a new line of development, `<version>.<branch>.1`
    expected = f"{bumped!r}, " if bumped is not None else ""
    return (f"{given!r} is not the context's {version!r} incremented: 016 asks for its last number incremented "
            f"({expected}a compatible change), or a branch named in 'branches' started at {version}.<branch>.1")


def _plus_one(digits: str) -> str:
    """A decimal number's digits (of any script) plus one, in ASCII digits without leading zeros, worked out on the
    digits: a version's number may be longer than Python converts to an int (4,300 digits)."""
    number = "".join(str(unicodedata.digit(digit)) for digit in digits).lstrip("0")
    kept = number.rstrip("9")
    nines = len(number) - len(kept)
    return (kept[:-1] + str(int(kept[-1]) + 1) if kept else "1") + "0" * nines


def nullable(schema: Any) -> dict[str, Any]:
    """The output schema with null allowed: null means "not finished yet" (002, 010).

    No schema: any value. OpenAPI's `nullable: true` (012) becomes a JSON Schema type. An object without
    `additionalProperties` gets `false`, as 002's composed example shows.
    """
    if not isinstance(schema, dict):
        return {} if schema is None or schema is True else {"anyOf": [schema, {"type": "null"}]}
    result = copy.deepcopy(schema)
    result.pop("nullable", None)
    kind = result.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        result.setdefault("additionalProperties", False)
    if isinstance(kind, str) and "const" not in result:
        result["type"] = [kind, "null"]
    elif isinstance(kind, list) and "const" not in result:
        result["type"] = kind if "null" in kind else [*kind, "null"]
    else:
        return {"anyOf": [result, {"type": "null"}]}
    if isinstance(result.get("enum"), list) and None not in result["enum"]:
        result["enum"] = [*result["enum"], None]
    return result


def _one_of(items: list[dict[str, Any]]) -> dict[str, Any]:
    return items[0] if len(items) == 1 else {"anyOf": items}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {dict: "object", list: "array", type(None): "null"}.get(type(value), "string")
