"""JSON in and out: orjson for speed, the standard library where orjson refuses valid JSON.

orjson keeps key order both ways and is several times faster than `json` on large documents, but it
rejects integers beyond 64 bits; those documents are still valid JSON, so the standard library takes over.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson


class JSONSyntaxError(ValueError):
    """Malformed JSON, with a 1-based line and column."""

    def __init__(self, reason: str, line: int, column: int) -> None:
        super().__init__(f"{reason} (line {line}, column {column})")
        self.reason = reason
        self.line = line
        self.column = column


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


# orjson reads integers beyond 64 bits as floats, silently changing the value: such documents
# (any run of 19 or more digits, even inside a string) go through the standard library.
_LONG_DIGITS = re.compile(rb"[0-9]{19,}")


class _NotJSON(Exception):
    pass


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; accepting them would make the document change on save.
    raise _NotJSON(f"{name} is not valid JSON")


def parse(text: str | bytes) -> Any:
    """Parse one JSON value or raise `JSONSyntaxError` with line and column; never `RecursionError`."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as fast_error:
        decoded = raw.decode("utf-8", errors="replace")
        line, column = _position(decoded, fast_error.pos)
        if "recursion" in str(fast_error).lower():
            raise JSONSyntaxError("nesting too deep", line, column) from None
        if "utf-8" in str(fast_error).lower():
            raise JSONSyntaxError("not valid UTF-8", line, column) from None
        # orjson refuses some valid JSON; the standard library decides, and words its error.
        try:
            return json.loads(decoded, parse_constant=_reject_constant)
        except json.JSONDecodeError as error:
            raise JSONSyntaxError(error.msg, error.lineno, error.colno) from None
        except _NotJSON as error:
            raise JSONSyntaxError(str(error), line, column) from None
        except RecursionError:
            raise JSONSyntaxError("nesting too deep", line, column) from None
    if _LONG_DIGITS.search(raw) is None:
        return value
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        raise JSONSyntaxError("nesting too deep", 1, 1) from None


def dumps(value: Any, *, indent: bool = True) -> str:
    """Serialise with keys in their order; non-ASCII kept as is."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        return orjson.dumps(value, option=option).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        # Integers beyond 64 bits, NaN and the like: the standard library writes what it read.
        try:
            return json.dumps(value, indent=2 if indent else None, ensure_ascii=False,
                              separators=None if indent else (",", ":"), allow_nan=False)
        except RecursionError:
            raise ValueError("nesting too deep to write") from None
