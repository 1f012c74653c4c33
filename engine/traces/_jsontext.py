"""JSON written as text inside a trace (an attribute's value, a log's body): read, or refused by name when it
looks like JSON and does not parse, rather than read as no value or as plain text."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from typing import Any

from ..document._json import parse as json_parse
from ..document._json import unclosed
from ._chat import ChatMessage, Exchange
from ._problems import Located

_OPENINGS = ("{", "[")


def cut_short(text: str) -> bool:
    """Whether the text is JSON cut short: it starts as an object or an array and ends inside a value."""
    return text.lstrip()[:1] in _OPENINGS and unclosed(text)


def json_text(raw: Any, name: str | None = None, *, limit: str = "an attribute length limit, such as "
              "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", where: str | None = None) -> Any:
    """The JSON value of a text (None when the text is no JSON); anything else as it is. `name`: a value that must
    be JSON when it looks like it: one that breaks is refused, naming it, said as cut short (by `limit`, the likely
    cause) when it ends inside a value."""
    if not isinstance(raw, str):
        return raw
    try:
        return json_parse(raw)
    except ValueError as error:
        if name is None or raw.lstrip()[:1] not in _OPENINGS:
            return None
        cut = f"its value was cut short ({limit}?)" if cut_short(raw) else "it was written as no JSON"
        raise Located(f"{name} is not JSON ({error}): {cut}", where) from None


def exported_value(text: str, what: str, say: Callable[[str], None]) -> Any:
    """The value a text ContextDeck's export marked as its JSON text; one that no longer parses (cut short on the
    way) is kept as that text, and `say` is given the sentence, `what` (how the text was exported) its start."""
    try:
        return json_parse(text)
    except ValueError:
        say(f"{what}, which does not parse (cut short on the way?): kept as that text")
        return text


def marked_json(exchange: Exchange, inputs: Collection[int], reply: bool, where: str) -> Exchange:
    """The exchange with the texts ContextDeck's export marks as a value's JSON text (`inputs`: input messages by
    index; `reply`: the reply) as that value: a message of parts that would not come back as those parts, a final
    output that is no text. One that no longer parses (cut short on the way) is kept as its text and said, with its
    place (`Exchange.left_out`), never read as some other value."""
    left = list(exchange.left_out)

    def read(message: ChatMessage, place: str) -> ChatMessage:
        if not isinstance(message.content, str):
            return message
        content = exported_value(message.content, "exported as the JSON text of its content",
                                 lambda said: left.append((place, said, message.content)))
        return dataclasses.replace(message, content=content)

    messages = tuple(read(message, f"{where}: input message {n}") if n in inputs else message
                     for n, message in enumerate(exchange.messages))
    answer = exchange.reply
    if reply and answer is not None:
        answer = read(answer, f"{where}: response")
    return dataclasses.replace(exchange, messages=messages, reply=answer, left_out=tuple(left))
