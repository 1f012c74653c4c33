"""Building new messages from edits: a payload placed back under its key, and fresh messages to insert."""

from __future__ import annotations

from typing import Any

from contextdeck.engine import Form, MessageInfo, payload_key, payload_of

_KEPT = ("type", "schema", "description")


def editable_value(message: dict[str, Any], info: MessageInfo) -> tuple[Any, dict[str, Any] | None]:
    """What the data editor edits for a message, and with which schema.

    A data message: its payload with its `schema`. Text, tool and plan messages: the whole message
    (no schema; the form is inferred), so every message can be edited, and undone, the same way.
    """
    if info.form is Form.DATA:
        schema = message.get("schema")
        return payload_of(message), schema if isinstance(schema, dict) else None
    return message, None


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


def edited_message(message: dict[str, Any], info: MessageInfo, value: Any) -> dict[str, Any]:
    """The message after the editor produced `value` (see `editable_value`)."""
    return with_payload(message, value) if info.form is Form.DATA else value


# What Insert puts in the timeline, by the menu's names.
NEW_MESSAGES: dict[str, dict[str, Any]] = {
    "Text": {"type": "text", "role": "user", "text": ""},
    "Data": {"type": "data", "kind": "data", "data": {}},
    "State": {"type": "state", "data": {}},
    "Input": {"type": "input", "input": {}},
    "Tool": {"type": "tool", "tool": {}},
    "Plan": {"type": "plan", "plan": []},
}
