"""What a chat completions body sends of a request's messages: `Request.to_json`'s, each text as the model reads it,
but a message of content parts (a text and an image) as those parts, when the API takes each for its role."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..document._view import Messages
from ..protocol._messages import text_of
from ._render import LLMMessage
from ._request import Request

# The content parts a chat completions request takes, by type (the `openai` SDK's ChatCompletionContentPart*Param),
# and those each role's message may hold: a user's texts, images, audio and files, an assistant's texts and
# refusals, texts alone for any other.
_PARTS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "text": lambda part: isinstance(part.get("text"), str),
    "refusal": lambda part: isinstance(part.get("refusal"), str),
    "image_url": lambda part: isinstance(_dict(part.get("image_url")).get("url"), str)
    and _dict(part.get("image_url")).get("detail", "auto") in ("auto", "low", "high"),
    "input_audio": lambda part: isinstance(_dict(part.get("input_audio")).get("data"), str)
    and _dict(part.get("input_audio")).get("format") in ("wav", "mp3"),
    "file": lambda part: any(isinstance(_dict(part.get("file")).get(key), str) for key in ("file_data", "file_id")),
}
_ROLE_PARTS = {"user": ("text", "image_url", "input_audio", "file"), "assistant": ("text", "refusal")}


def sent_messages(context: Messages, request: Request) -> list[dict[str, Any]]:
    """`request`'s messages (composed from `context`) as `{role, content}`, as a chat completions body sends them:
    the model is sent an image as an image, not as the JSON text the LLM view and `render` show of it."""
    return [{"role": message.role, "content": _content_parts(context, message) or message.text}
            for message in request.messages]


def _content_parts(context: Messages, rendered: LLMMessage) -> list[Any] | None:
    """A text message whose content is a list of parts as the API takes them, for its role: that list; None for any
    other message, or for a list with a part the API would refuse there (or none), which goes as its JSON text."""
    if rendered.form != "text" or not rendered.text.startswith("["):
        return None  # (a list of parts is shown as its JSON; any other text is sent as it is, not read again)
    return api_parts(rendered.role, text_of(context[rendered.sources[0]])[1])


def api_parts(role: str | None, content: Any) -> list[Any] | None:
    """`content` (a copy) when it is a list of parts the API takes for `role` (None: for any role, as a model's
    output may hold them); else None."""
    allowed = _ROLE_PARTS.get(role, ("text",)) if role is not None else tuple(_PARTS)
    if not isinstance(content, list) or not content or not all(
            isinstance(part, dict) and part.get("type") in allowed and _PARTS[part["type"]](part) for part in content):
        return None
    return copy.deepcopy(content)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
