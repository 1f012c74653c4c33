"""The messages of the request as the model receives them (001, 005, 006, 010, 012, 016, 017).

Text passes through with its role; the data messages of one identity become one block where the identity
first appears; each error message is its own block with its whole call; each plan message is a block at
its place; each advisor (by id) is a block. Tools and presets shape the schema and the model call instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..document import _json
from ..document._view import Messages
from ..protocol._messages import MISSING, Form, MessageInfo, Write, body_of, payload_of, text_of
from ..resolve._fold import fold

INPUT_NOTICE = "Input data MUST be treated as a structured prompt"
META_NOTICE = "The identity of this request: give it back in the solution's `meta`, with its version bumped."
LAZY_NOTICE = "Mode: lazy. Plan only: give no `_output` for latent calls and keep branching output paths as written."
JOINED = 1_000  # messages joined by one call (`messages_text`)


@dataclass(frozen=True)
class LLMMessage:
    """One message as the model receives it.

    `role` is system, user or assistant; `text` is its content; `sources` are the context messages it was
    made from; `form` says what made it: text, data, error, plan or advisor.
    """

    role: str
    text: str
    sources: tuple[int, ...]
    form: str = "text"


def limit_of(context: Messages, at: int | None) -> int:
    """How many messages count: the first `at` (all when None), clamped to the context."""
    return len(context) if at is None else max(0, min(at, len(context)))


def render(context: Messages, at: int | None = None) -> list[LLMMessage]:
    """The messages the model receives as of the first `at` messages, in order."""
    groups: dict[tuple[str, Any], list[int]] = {}  # a data identity or an advisor id -> its messages
    blocks: list[tuple[str, list[int]]] = []
    for index in range(limit_of(context, at)):
        info = context.info(index)
        what = _what(info)
        if what is None:
            continue
        if what in _MERGED:
            key = (what, info.identity if what == "data" else advisor_id(body_of(context[index])))
            if key not in groups:
                groups[key] = []
                blocks.append((what, groups[key]))
            groups[key].append(index)
        else:
            blocks.append((what, [index]))
    # Each block is freed once rendered, not all as the function returns: freeing them all at once is one long call
    # into C at a million messages, which holds the interpreter lock to its end (see `messages_text`).
    blocks.reverse()
    rendered: list[LLMMessage] = []
    while blocks:
        what, indices = blocks.pop()
        rendered.append(_RENDERERS[what](context, indices))
    return rendered


# The blocks of the forms that are not data. Read once: a member of an enum (and its `value`) costs a few tenths of a
# microsecond a lookup, and a document has 100,000 messages.
_BLOCKS = {form: form.value for form in (Form.TEXT, Form.PLAN, Form.ADVISOR)}
_DATA = Form.DATA


def _what(info: MessageInfo) -> str | None:
    """Which block a message makes; None for tools and presets (they shape the schema and the call)."""
    if info.form is _DATA:
        return "error" if info.kind == "error" else "data"
    return _BLOCKS.get(info.form)


def render_text(context: Messages, at: int | None = None) -> str:
    """`render` as text: each message under a `--- role ---` line, separated by a blank line."""
    return messages_text(render(context, at))


def messages_text(messages: list[LLMMessage] | tuple[LLMMessage, ...]) -> str:
    # Joined `JOINED` at a time, then the parts: one call into C holds the interpreter lock to its end, and the join
    # of a million messages in one was a quarter of a second in which a worker's (the window's composer) held it.
    texts = [f"--- {message.role} ---\n{message.text}" for message in messages]
    return "\n\n".join(["\n\n".join(texts[start:start + JOINED]) for start in range(0, len(texts), JOINED)])


def heading(kind: str, instance: str | None) -> str:
    suffix = f" (instance {instance})" if instance is not None else ""
    return f"## Data: ¶{kind}{suffix}"


def advisor_id(message: dict[str, Any]) -> str:
    """An advisor's id (017): one identity per id; an advisor without a string id is named by its text."""
    name = message.get("id")
    return name if isinstance(name, str) else _json.dumps(name, indent=False) if name is not None else ""


def shown(value: Any) -> str:
    """A value as indented JSON, as the model reads it."""
    try:
        return _json.dumps(value)
    except (ValueError, RecursionError):
        return "(nested too deeply to show)"


def _text(context: Messages, indices: list[int]) -> LLMMessage:
    role, text = text_of(context[indices[0]])
    # An assistant turn that only called tools has a null content: it says nothing, never the word "null".
    said = text if isinstance(text, str) else "" if text is None else shown(text)
    return LLMMessage(role, said, tuple(indices), "text")


def _data(context: Messages, indices: list[int]) -> LLMMessage:
    info = context.info(indices[0])
    assert info.kind is not None
    writes: list[tuple[int, Write]] = [(i, w) for i in indices if (w := context.info(i).write) is not None]
    value = fold(writes, (), "†" + info.kind, with_sources=False)[0]
    text = _block(context, indices, info.kind, info.instance, None if value is MISSING else value)
    return LLMMessage(role_of(context[indices[0]]), text, tuple(indices), "data")


def _error(context: Messages, indices: list[int]) -> LLMMessage:
    # Each error is its own block (010): the whole call that failed and why, never merged with another.
    info = context.info(indices[0])
    value = payload_of(context[indices[0]])
    return LLMMessage(role_of(context[indices[0]]), _block(context, indices, "error", info.instance, value),
                      tuple(indices), "error")


def _block(context: Messages, indices: list[int], kind: str, instance: str | None, value: Any) -> str:
    description, schema = _latest(context, indices)
    lines = [heading(kind, instance)]
    lines.extend(_NOTICES.get(kind, ()))
    lines.append(shown(value))
    if isinstance(description, str) and description:
        lines.append(description)
    if schema is not None:
        lines.append(f"Schema for ¶{kind}:")
        lines.append(shown(schema))
    return "\n".join(lines)


def _plan(context: Messages, indices: list[int]) -> LLMMessage:
    message = body_of(context[indices[0]])
    lines = ["## Plan"]
    if message.get("mode") == "lazy":
        lines.append(LAZY_NOTICE)
    lines.append(shown(message.get("plan")))
    return LLMMessage(role_of(context[indices[0]]), "\n".join(lines), tuple(indices), "plan")


def _advisor(context: Messages, indices: list[int]) -> LLMMessage:
    # The latest definition of an id wins, as for tools.
    message = body_of(context[indices[-1]])
    lines = [f"## Advisor: {advisor_id(message)}"]
    role = message.get("role")
    if isinstance(role, str) and role:
        lines.append(role)
    when = message.get("on")  # validate says a bad one (a list, say): on demand, as `consulted_now` reads it
    times = ADVISOR_TIMES.get(when, ADVISOR_TIMES[None]) if isinstance(when, str) else ADVISOR_TIMES[None]
    lines.append(f"Consulted: {times}")
    scopes = message.get("scopes")
    if isinstance(scopes, list) and scopes:
        lines.append("Focus on: " + ", ".join(str(scope) for scope in scopes))
    if "schema" in message:
        lines.append("Schema for its advice:")
        lines.append(shown(message["schema"]))
    return LLMMessage("user", "\n".join(lines), tuple(indices), "advisor")


ADVISOR_TIMES: dict[Any, str] = {
    "start": "at the start, to set the direction",
    "finish": "when deciding whether the task is finished",
    "request": "on every request",
    None: "on demand, through the ConsultAdvisor tool",
}
_NOTICES = {"input": (INPUT_NOTICE,), "meta": (META_NOTICE,)}
_MERGED = frozenset(("data", "advisor"))  # one block per identity or id; the others: one per message
_RENDERERS: dict[str, Callable[[Messages, list[int]], LLMMessage]] = {
    "text": _text, "data": _data, "error": _error, "plan": _plan, "advisor": _advisor,
}


def _latest(context: Messages, indices: list[int]) -> tuple[Any, Any]:
    """The latest `description` and the latest `schema` among the messages (their bodies), in one pass."""
    description = schema = _NONE
    for index in reversed(indices):
        message = context[index]
        if "type" not in message:
            message = body_of(message)
        if description is _NONE and "description" in message:
            description = message["description"]
        if schema is _NONE and "schema" in message:
            schema = message["schema"]
        if description is not _NONE and schema is not _NONE:
            break
    return (None if description is _NONE else description), (None if schema is _NONE else schema)


_NONE: Any = object()


def role_of(message: dict[str, Any]) -> str:
    """The role of a block a message places: a custom content type's `{role, content}` keeps its role (001); any
    other message's block is the user's."""
    role = message.get("role") if "type" not in message else None
    return role if isinstance(role, str) and role else "user"
