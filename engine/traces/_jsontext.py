"""JSON written as text inside a trace (an attribute's value, a log's body): read, or refused by name when it
looks like JSON and does not parse, rather than read as no value or as plain text."""

from __future__ import annotations

from typing import Any

from ..document._json import parse as json_parse
from ..document._json import unclosed
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
