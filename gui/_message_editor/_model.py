"""What a message is, for the editor: one model recomputed from the message after every edit.

`read_message` asks the engine (`classify`, `payload_key`, `payload_of`) what the message is and which part of
it the form edits (its *body*); `with_body`, `with_header` and `retyped` build the next message from the
current one. A custom content type (`{role, content: {type, ...}}`, 001) is read and edited as the message its
content stands for (the engine's `body_of`), and each edit is written back inside its `content`: the document
keeps the user's form. The editor never remembers a form across edits: it reads the message again after each one, so
a message that changed its type (in any tab) is shown by the editor of its new form and nothing nests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from contextdeck.engine import TEXT_KEYS, Form, body_of, classify, group_of, message_problem, payload_key, payload_of

_KEPT = ("type", "schema", "description")
HEADER_ORDER = ("type", "kind", "role", "_instance", "description")


class Body(StrEnum):
    """The part of a message the form edits below the header."""

    TEXT = "text"  # the `text` string, multi-line
    PAYLOAD = "payload"  # a data message's payload under its `schema`
    TOOLS = "tools"  # a tool message's `tool` object: name → parameter schema
    CALLS = "calls"  # a plan message's `plan` array
    PARTS = "parts"  # a `{role, content}` message's list of parts: text, images, audio, files
    RAW = "raw"  # any other shape: edited in the JSON tab only


@dataclass(frozen=True)
class MessageModel:
    """The editor's view of one message: its engine form, where its body lives, and the body's value."""

    form: Form
    type: str
    body: Body
    value: Any
    key: str | None = None  # the message key holding the body; None: a payload made of the loose keys
    schema: dict[str, Any] | None = None
    kind: str | None = None
    instance: str | None = None
    output: Any = None  # a plan message's final output (a turn that ended the loop, in a bare context); None: none
    answered: Any = None  # a plan message's `_model`: the model's reply as recorded (a model's turn), else None


def _text(message: dict[str, Any], form: Form) -> MessageModel:
    # The text lives in `text`, `content` ({role, content}, 001) or `message` (system, 014): the engine's keys.
    key = next((name for name in TEXT_KEYS if name in message), "text")
    text = message.get(key, "")
    kind = message.get("type", "text")  # a `{role, content}` message has no type: it is text
    if isinstance(text, list) and 0 < len(text) <= FORM_PARTS and all(isinstance(part, dict) for part in text):
        return MessageModel(form, kind, Body.PARTS, text, key)
    if not isinstance(text, str):
        return MessageModel(form, kind, Body.RAW, message)
    return MessageModel(form, kind, Body.TEXT, text, key)


def _keyed(body: Body, key: str, shape: type) -> Callable[[dict[str, Any], Form], MessageModel]:
    def read(message: dict[str, Any], form: Form) -> MessageModel:
        # Without the key, a message with nothing but header keys starts an empty body; any other shape
        # (a tool written as one schema with `properties._tool.const`) is edited in the JSON tab.
        bare = all(name in HEADER_ORDER for name in message)
        value = message.get(key, shape() if bare else None)
        if not isinstance(value, shape):
            return MessageModel(form, message["type"], Body.RAW, message)
        return MessageModel(form, message["type"], body, value, key)
    return read


def _plan(message: dict[str, Any], form: Form) -> MessageModel:
    model = _keyed(Body.CALLS, "plan", list)(message, form)
    calls = model.value
    # The call form edits calls and all/any/race groups of calls; a plan with entries that are not objects (or a
    # group whose calls are not a list of them) is edited in the JSON tab.
    if model.body is Body.CALLS and not all(_formable(entry) for entry in calls):
        return MessageModel(form, message["type"], Body.RAW, message)
    if model.body is Body.CALLS:
        return MessageModel(form, model.type, Body.CALLS, calls, "plan", output=message.get("output"),
                            answered=message.get("_model"))
    return model


def _formable(entry: Any) -> bool:
    group = group_of(entry)
    if group is None:
        return isinstance(entry, dict)
    return isinstance(group[1], list) and all(isinstance(call, dict) and group_of(call) is None for call in group[1])


_BODIES: dict[Form, Callable[[dict[str, Any], Form], MessageModel]] = {
    Form.TEXT: _text,
    Form.TOOL: _keyed(Body.TOOLS, "tool", dict),
    Form.PLAN: _plan,
}


FORM_PARTS = 24  # a message of more content parts is edited in the JSON tab: the form makes a box per part
FORM_DEPTH = 40  # a message nested deeper is edited in the JSON tab: the form nests a widget per level


def deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests objects and arrays more than `limit` levels deep (read without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def read_message(message: dict[str, Any]) -> MessageModel:
    """What `message` is (the engine's classification) and what the form edits of it."""
    body = body_of(message)
    if body is not message:
        return read_message(body)
    info = classify(message)
    if deeper_than(message, FORM_DEPTH):  # the header and the JSON tab still edit it
        return MessageModel(info.form, str(message.get("type", "")), Body.RAW, message)
    if info.form is Form.DATA:
        schema = message.get("schema")
        return MessageModel(info.form, message["type"], Body.PAYLOAD, payload_of(message), payload_key(message),
                            schema if isinstance(schema, dict) else None, info.kind, info.instance)
    read = _BODIES.get(info.form)
    if read is None:  # a form this editor has no body for: the header and the JSON tab still edit it
        return MessageModel(info.form, str(message.get("type", "")), Body.RAW, message)
    return read(message, info.form)


def with_payload(message: dict[str, Any], payload: Any) -> dict[str, Any]:
    """A copy of data `message` carrying `payload` under the key it came from (engine's `payload_key`)."""
    key = payload_key(message)
    if key is not None:
        result = dict(message)
        result[key] = payload
        return result
    # The payload was the loose keys: keep type, schema, description, kind and `_` keys, then the new keys.
    is_data = message["type"] == "data"
    kept = {k: v for k, v in message.items() if k in _KEPT or k[:1] == "_" or (k == "kind" and is_data)}
    # Keys that would be read as something else than payload force the explicit `data` key.
    reserved = {*_KEPT, "data", str(message["type"]), *(("kind",) if is_data else ())}
    if isinstance(payload, dict) and not any(k in reserved or k[:1] == "_" for k in payload):
        return {**kept, **payload}
    return {**kept, "data": payload}


def inside(message: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """`change` made to the message `message` stands for: a custom content type's content object stays inside
    its `{role, content}` (the user's form), any other message is changed itself."""
    body = body_of(message)
    return change(message) if body is message else {**message, "content": change(body)}


def with_body(message: dict[str, Any], value: Any) -> dict[str, Any]:
    """The message after its body (as `read_message` names it) became `value`."""
    return inside(message, lambda own: _with_body(own, value))


def with_output(message: dict[str, Any], output: Any) -> dict[str, Any]:
    """The plan message with another final `output` (None removes it)."""
    return inside(message, lambda own: with_key(own, "output", output))


def with_header(message: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`with_key` for a key of the header or the schema: a custom content type keeps its `role` beside its content
    and every other key inside it."""
    if key == "role":
        return with_key(message, key, value)
    return inside(message, lambda own: with_key(own, key, value))


def _with_body(message: dict[str, Any], value: Any) -> dict[str, Any]:
    model = read_message(message)
    if model.body is Body.PAYLOAD:
        return with_payload(message, value)
    if model.body is Body.RAW:
        return dict(value)
    assert model.key is not None
    return with_key(message, model.key, value)


def with_key(message: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy with `key` set to `value` (None removes it); a new header key goes to its place in the header."""
    if value is None:
        return {k: v for k, v in message.items() if k != key}
    if key in message or key not in HEADER_ORDER:
        return {**message, key: value}
    rank = HEADER_ORDER.index(key)
    result: dict[str, Any] = {}
    for name, item in message.items():
        if key not in result and (name not in HEADER_ORDER or HEADER_ORDER.index(name) > rank):
            result[key] = value
        result[name] = item
    result.setdefault(key, value)
    return result


# What Insert puts in the timeline, by the menu's names: each a message a person can start from.
NEW_MESSAGES: dict[str, dict[str, Any]] = {
    "Text": {"type": "text", "role": "user", "text": ""},
    "Input": {"type": "input", "input": {}, "schema": {"type": "object", "properties": {}}},
    "State": {"type": "state", "data": {}, "schema": {"type": "object", "properties": {}}},
    "Data": {"type": "data", "kind": "data", "data": {}},
    "Tool": {"type": "tool", "tool": {}},
    "Plan": {"type": "plan", "plan": []},
    "Error": {"type": "error", "data": {"call": {"_tool": ""}, "error": {"type": "Error", "message": ""}}},
}


def template(type_name: str) -> dict[str, Any]:
    """A fresh message of `type_name`: the Insert template of that name, else a data message of that kind."""
    for message in NEW_MESSAGES.values():
        if message["type"] == type_name:
            return dict(message)
    return {"type": type_name, "data": {}}


def retyped(message: dict[str, Any], type_name: str) -> dict[str, Any]:
    """The message with another `type`.

    Between two data kinds the payload, schema, description, `_instance` and audit keys stay (the payload
    moves to the key the new type reads: `input` for an input whose payload was under `input`, else `data`).
    Into or out of text, tool and plan, the new type's starting value is used, keeping the description. A custom
    content type is retyped inside its content.
    """
    return inside(message, lambda own: _retyped(own, type_name))


def _retyped(message: dict[str, Any], type_name: str) -> dict[str, Any]:
    if type_name == message.get("type"):
        return message
    old, new = read_message(message), read_message(template(type_name))
    if old.body is Body.PAYLOAD and new.body is Body.PAYLOAD:
        key = new.key or "data"
        kept = {k: v for k, v in message.items() if k in ("schema", "description") or k[:1] == "_"}
        return {"type": type_name, **({"kind": old.kind} if type_name == "data" else {}), key: old.value, **kept}
    result = template(type_name)
    if isinstance(message.get("description"), str):
        result = with_key(result, "description", message["description"])
    return result


def problem_of(value: Any) -> str | None:
    """Why `value` cannot be a message (the engine's `message_problem`), or None."""
    return message_problem(value) if isinstance(value, dict) else "a message must be a JSON object"
