"""What the LLM sees (SPEC 5): text passes through; each data identity becomes one text block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _json
from ._fold import fold
from ._messages import AUDIT_KEYS, MISSING, Form, Write
from ._view import Messages

INPUT_NOTICE = "Input data MUST be treated as a structured prompt"


@dataclass(frozen=True)
class LLMMessage:
    """One message as the model receives it; `sources` are the context messages it was made from."""

    role: str
    text: str
    sources: tuple[int, ...]


def render(context: Messages, at: int | None = None) -> list[LLMMessage]:
    """The messages the LLM sees as of the first `at` messages. No audit metadata ever appears."""
    limit = len(context) if at is None else max(0, min(at, len(context)))
    groups: dict[tuple[str, str | None], list[int]] = {}
    order: list[tuple[str, Any]] = []  # ("text", index) or ("data", identity), in first appearance
    for index in range(limit):
        info = context.info(index)
        if info.form is Form.TEXT:
            order.append(("text", index))
        elif info.form is Form.DATA and info.identity is not None:
            if info.identity not in groups:
                groups[info.identity] = []
                order.append(("data", info.identity))
            groups[info.identity].append(index)
    rendered: list[LLMMessage] = []
    for what, key in order:
        if what == "text":
            message = context[key]
            text = message.get("text", "")
            role = message.get("role", "user")
            rendered.append(LLMMessage(str(role), text if isinstance(text, str) else _json.dumps(text), (key,)))
        else:
            block = _data_block(context, key, groups[key])
            if block is not None:
                rendered.append(LLMMessage("user", block, tuple(groups[key])))
    return rendered


def render_text(context: Messages, at: int | None = None) -> str:
    """`render` as one string, the blocks separated by a blank line (what `contextdeck render` prints)."""
    return "\n\n".join(message.text for message in render(context, at))


def heading(kind: str, instance: str | None) -> str:
    suffix = f" (instance {instance})" if instance is not None else ""
    return f"## Data: ¶{kind}{suffix}"


def _data_block(context: Messages, identity: tuple[str, str | None], indices: list[int]) -> str | None:
    kind, instance = identity
    writes: list[tuple[int, Write]] = []
    for index in indices:
        write = context.info(index).write
        if write is not None:
            writes.append((index, write))
    value = fold(writes, (), "†" + kind)[0]
    description = _latest(context, indices, "description")
    schema = _latest(context, indices, "schema")
    lines = [heading(kind, instance)]
    if kind == "input":
        lines.append(INPUT_NOTICE)
    lines.append(_shown(None if value is MISSING else value))
    if isinstance(description, str) and description:
        lines.append(description)
    if schema is not None:
        lines.append(f"Schema for ¶{kind}:")
        lines.append(_shown(schema))
    return "\n".join(lines)


def without_audit(value: Any) -> Any:
    """`value` without the audit keys at any depth (an error's `call` carries `_outputPath`, for one)."""
    if isinstance(value, dict):
        return {key: without_audit(item) for key, item in value.items() if key not in AUDIT_KEYS}
    if isinstance(value, list):
        return [without_audit(item) for item in value]
    return value


def _shown(value: Any) -> str:
    try:
        return _json.dumps(without_audit(value))
    except (ValueError, RecursionError):
        return "(nested too deeply to show)"


def _latest(context: Messages, indices: list[int], key: str) -> Any:
    for index in reversed(indices):
        if key in context[index]:
            return context[index][key]
    return None
