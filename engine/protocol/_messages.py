"""What a message is (SPEC 2): its form, its identity, and the write it makes to its kind."""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from typing import Any

from ._errors import ExpressionError
from ._expressions import lone_reference, parse_expression
from ._methods import WRITE_METHODS
from ._records import record
from ._values import MISSING, Path, get_path, is_index, segment_index

__all__ = ["AUDIT_KEYS", "METHODS", "MISSING", "Form", "MessageInfo", "Path", "Write", "body_of", "classify",
           "content_text", "get_path", "is_index", "kind_of", "payload_key", "payload_of", "segment_index", "write_of"]

AUDIT_KEYS = ("_call", "_date", "_outputMethod", "_outputPath", "_run")
RECORD_TYPE = "_run"  # a run record: a call ran and wrote nothing (audit only, docs/format.md §9)
METHODS = tuple(WRITE_METHODS)  # the names `_outputMethod` may take
_NOT_PAYLOAD = frozenset(("type", "schema", "description"))



class Form(StrEnum):
    TEXT = "text"  # text with a role: `{"type": "text"}`, `{"type": "system"}` or a bare `{role, content}` (001)
    DATA = "data"  # any other type: its kind (input, state, error, meta, ...)
    TOOL = "tool"
    PLAN = "plan"
    ADVISOR = "advisor"  # a persona whose advice the solution gives first (017); not data
    PRESET = "preset"  # settings of the model call (001's "LLM config"); never shown to the model
    RECORD = "record"  # a run record (`{"type": "_run"}`): audit only, never data nor shown to the model


# The message types that are not data; every other `type` names a kind of data (SPEC 2).
FORMS = {"text": Form.TEXT, "system": Form.TEXT, "tool": Form.TOOL, "plan": Form.PLAN,
         "advisor": Form.ADVISOR, "preset": Form.PRESET, RECORD_TYPE: Form.RECORD}


@record
class Write:
    """How one data message changes the value of its identity: `method` at `path` with `value`.

    `problem` is set when the message's output path cannot be used; the write is then skipped.
    """

    path: Path
    method: str
    value: Any
    problem: str | None = None


@record
class MessageInfo:
    """The parsed view of one raw message; the raw dict stays the document's own."""

    form: Form
    kind: str | None = None
    instance: str | None = None
    write: Write | None = None

    @property
    def identity(self) -> tuple[str, str | None] | None:
        return None if self.kind is None else (self.kind, self.instance)


def body_of(message: dict[str, Any]) -> dict[str, Any]:
    """The message `message` stands for: a `{role, content}` message whose `content` is an object with a
    non-empty string `type` is that object (001's custom content types, docs/format.md §2); any other
    message is itself. Everything but the role is read from the body."""
    if "type" in message:
        return message
    content = message.get("content")
    if content.__class__ is dict:
        name = content.get("type")
        if name.__class__ is str and name:
            return content
    return message


def payload_of(message: dict[str, Any]) -> Any:
    """The data a data message carries (SPEC 2's shorthand rules), read from its body (`body_of`)."""
    return _payload(message if "type" in message else body_of(message))


def _payload(message: dict[str, Any]) -> Any:
    kind = message.get("type")
    if kind == "data":
        if "data" in message:
            return message["data"]
        return {k: v for k, v in message.items() if k not in _NOT_PAYLOAD and k != "kind" and k[:1] != "_"}
    if isinstance(kind, str) and kind in message:
        return message[kind]
    if "data" in message:
        return message["data"]
    return {k: v for k, v in message.items() if k not in _NOT_PAYLOAD and k[:1] != "_"}


def payload_key(message: dict[str, Any]) -> str | None:
    """The key of the body (`body_of`) that holds the payload, or None when the payload is the loose keys."""
    if "type" not in message:
        message = body_of(message)
    kind = message.get("type")
    if kind != "data" and isinstance(kind, str) and kind in message:
        return kind
    return "data" if "data" in message else None


def kind_of(message: dict[str, Any]) -> str | None:
    """The kind of a data message, None for the other forms (text, system, tool, plan, advisor, preset)."""
    if "type" not in message:
        message = body_of(message)
    kind = message.get("type")
    if kind in FORMS or "type" not in message:
        return None
    if kind == "data":
        declared = message.get("kind", "data")
        return declared if isinstance(declared, str) else "data"
    return kind if isinstance(kind, str) else None


TEXT_KEYS = ("text", "content", "message")  # where a text-form message holds its text, first found wins
# The roles a chat message may have (OpenAI chat completions): what a request may send, and a trace holds.
CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def text_of(message: dict[str, Any]) -> tuple[str, Any]:
    """The role and text of a text-form message (001): `role` and `content`, `text` or `message`.

    A `system` message's role is always system; any other role defaults to user. A `{role, content}` message
    whose content is `{"type": "text", ...}` keeps its own role and reads the text of its content; a list of
    text parts is their texts joined (`content_text`).
    """
    # `body_of` asked only of a content that is an object: a chat's every message is a `{role, content}` text
    body = body_of(message) if "type" not in message and message.get("content").__class__ is dict else message
    role = "system" if body.get("type") == "system" else message.get("role", "user")
    text = next((body[key] for key in TEXT_KEYS if key in body), "")
    return (role if isinstance(role, str) else "user"), (content_text(text) if text.__class__ is list else text)


TEXT_PARTS = ("text", "input_text", "output_text")  # the part types of a text (chat completions, responses)


def content_text(content: Any) -> Any:
    """A content that is a list of text parts (`[{"type": "text", "text": "..."}, ...]`, OpenAI's form) as
    their texts joined by a newline; any other content (images, files, a part without a string text) as it is."""
    if not isinstance(content, list):
        return content
    texts: list[str] = []
    for part in content:
        text = part_text(part)
        if text is None:
            return content
        texts.append(text)
    return "\n".join(texts)


def part_text(part: Any) -> str | None:
    """The text of a content part that is text (`{"type": "text", "text": ...}`, or the responses API's
    `input_text` and `output_text`); None for any other part."""
    text = part.get("text") if isinstance(part, dict) and part.get("type") in TEXT_PARTS else None
    return text if isinstance(text, str) else None


def _destination_path(message: dict[str, Any], kind: str, payload: Any) -> tuple[Path | None, str | None]:
    """The one concrete path an output message wrote (SPEC 4.4), or a reason it has none."""
    explicit = message.get("_outputPath")
    if explicit is not None:
        if not isinstance(explicit, str):
            return None, "_outputPath is not a string"
        return _explicit_path(explicit, kind)
    call = message.get("_call")
    declared = call.get("_outputPath") if isinstance(call, dict) else None
    if declared is None:  # an activity's returned message: a merge at the root
        return None, None
    if not isinstance(declared, str):
        return None, "_call._outputPath is not a string"
    references = _declared_references(declared)
    if isinstance(references, str):
        return None, references
    for ref_kind, path in references:
        if ref_kind == kind and get_path(payload, path) is not MISSING:
            return path, None
    return None, f"no destination of {declared!r} is present in the data"


# A document's output paths are a few hundred strings written over and over: each is read once (a million
# messages repeat them), the oldest forgotten past `_MOST_PATHS`. A run tells the path each output is written at
# (`written_at`): its write then holds the plan's own path, not a second copy of it (a run writes a path a call).
_PATHS: dict[tuple[str, str], tuple[Path | None, str | None]] = {}
_MOST_PATHS = 4096


def _explicit_path(explicit: str, kind: str) -> tuple[Path | None, str | None]:
    """The path an `_outputPath` names for a message of `kind`, or why it names none."""
    found = _PATHS.get((explicit, kind))
    return found if found is not None else _remember((explicit, kind), _read_explicit_path(explicit, kind))


def written_at(explicit: str, kind: str, path: Path) -> None:
    """An output message of `kind` is written with `_outputPath` `explicit`, which reads as `path` (a call's plan
    read it): classifying the message gives this very path."""
    _remember((explicit, kind), (path, None))


def _remember(key: tuple[str, str], found: tuple[Path | None, str | None]) -> tuple[Path | None, str | None]:
    if len(_PATHS) >= _MOST_PATHS:
        _PATHS.pop(next(iter(_PATHS), key), None)  # (another thread may have taken it first)
    _PATHS[key] = found
    return found


def _read_explicit_path(explicit: str, kind: str) -> tuple[Path | None, str | None]:
    lone = lone_reference(explicit)  # a run's outputs name a path each: read without making an expression
    if lone is not None:
        named, path = lone
    else:
        try:
            expression = parse_expression(explicit)
        except ExpressionError as error:
            return None, f"_outputPath: {error.reason} at position {error.position}"
        refs = expression.references
        if len(refs) != 1:
            return None, "_outputPath of an output message must name one destination"
        named, path = refs[0].kind, refs[0].path
    if named != kind:
        return None, f"_outputPath names kind {named!r} but the message is of kind {kind!r}"
    return path, None


@lru_cache(maxsize=4096)
def _declared_references(declared: str) -> tuple[tuple[str, Path], ...] | str:
    """The (kind, path) of each destination a call's `_outputPath` declares, or why it cannot be read."""
    try:
        expression = parse_expression(declared)
    except ExpressionError as error:
        return f"_call._outputPath: {error.reason} at position {error.position}"
    return tuple((ref.kind, ref.path) for ref in expression.references)


def write_of(message: dict[str, Any], kind: str) -> Write:
    """The write a data message (its body, `body_of`) makes. Without an output path it is a deep merge at the
    root."""
    return _write(message if "type" in message else body_of(message), kind)


def _write(message: dict[str, Any], kind: str) -> Write:
    payload = _payload(message)
    method = message.get("_outputMethod")
    if method is not None and (not isinstance(method, str) or method not in WRITE_METHODS):
        return Write((), "merge", payload, f"unknown _outputMethod {method!r}")
    is_output = "_outputPath" in message or "_call" in message
    path, problem = _destination_path(message, kind, payload) if is_output else (None, None)
    if problem is not None:
        return Write((), method or "set", payload, problem)
    if path is None:
        return Write((), method or "merge", payload)
    value = get_path(payload, path)
    if value is MISSING:
        return Write(path, method or "set", payload, f"the data holds no value at {'.'.join(path)}")
    return Write(path, method or "set", value)


def message_problem(message: dict[str, Any]) -> str | None:
    """Why an object is not a message: it needs a non-empty string `type`, or a string `role` (001)."""
    if "type" not in message and isinstance(message.get("role"), str):
        return None
    kind = message.get("type")
    if not isinstance(kind, str) or not kind:
        if "type" not in message and "_tool" in message:  # 015 draws a call beside its context's messages
            return ("a message needs a non-empty string 'type' (or a 'role' and 'content'); this is a call: "
                    "calls go in a plan message's 'plan' or the solution's 'calls'")
        return "a message needs a non-empty string 'type' (or a 'role' and 'content')"
    return None


def classify(message: dict[str, Any]) -> MessageInfo:
    """Parse one raw message. Never raises: problems travel inside the write.

    A `{role, content}` message (001) is text, or the message its content stands for (`body_of`): the check
    is made only for a message without a string `type`."""
    name = message.get("type")
    if name.__class__ is not str:  # `body_of`, inline: a chat's every message is a `{role, content}`
        content = message.get("content")
        if content.__class__ is not dict or "type" in message:
            return MessageInfo(Form.TEXT)
        name = content.get("type")
        if name.__class__ is not str or not name:
            return MessageInfo(Form.TEXT)
        message = content
    form = FORMS.get(name)
    if form is not None:
        return MessageInfo(form)
    if name == "data":
        declared = message.get("kind", "data")
        kind = declared if isinstance(declared, str) else "data"
    else:
        kind = name
    instance = message.get("_instance")
    return MessageInfo(Form.DATA, kind, None if instance is None else str(instance), _write(message, kind))
