"""JSON values as the fold sees them: MISSING (a path that is not there), paths, and reading at a path."""

from __future__ import annotations

import sys
from typing import Any

Path = tuple[str, ...]


class _Missing:
    """The value of a path that is not there (distinct from JSON null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


def is_index(segment: str) -> bool:
    """Whether a segment addresses an array element: `0` or ASCII digits without a leading zero."""
    return segment.isascii() and segment.isdigit() and (segment == "0" or segment[0] != "0")


# More digits than this and a segment is past the end of any array there can be.
_INDEX_DIGITS = len(str(sys.maxsize)) - 1


def segment_index(segment: str) -> int:
    """The position an index segment (`is_index`) names, for comparing with an array's length. A longer one than
    any array could reach is `sys.maxsize`, past the end of every array: it is never converted (Python refuses a
    string of more than 4,300 digits, and the answer would be the same)."""
    return int(segment) if len(segment) <= _INDEX_DIGITS else sys.maxsize


def get_path(value: Any, path: Path) -> Any:
    """The value at `path`, or MISSING. Numeric segments index arrays; a null value is found."""
    for segment in path:
        if isinstance(value, dict):
            value = value.get(segment, MISSING)
            if value is MISSING:
                return MISSING
        elif isinstance(value, list) and is_index(segment) and (index := segment_index(segment)) < len(value):
            value = value[index]
        else:
            return MISSING
    return value


def with_article(value: Any) -> str:
    """The JSON type of a value as a message's sentence names it: "an object", "a string", "null"."""
    name = type_name(value)
    return name if name == "null" else ("an " if name[0] in "aeiou" else "a ") + name


def type_name(value: Any) -> str:
    """The JSON type of a value, as messages name it ("object", "array", "null", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "number"
