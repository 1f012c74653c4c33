"""Edits as data: each is a small frozen command; applying one to a context returns its inverse.

The GUI wraps these in QUndoCommands; tests use them without Qt.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..protocol._errors import ContentError
from ..protocol._expressions import Expression, as_expression
from ..protocol._messages import message_problem
from . import _json
from ._validate import json_path
from ._view import Message

T = TypeVar("T")


def integer_index(value: object, what: str = "message index") -> int:
    """`value` as an index; anything else is a TypeError naming it, before an edit is announced (inside one it
    would fail halfway)."""
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}") from None


def at_index(items: Sequence[T], index: int) -> T:
    """`items[index]` of a context's messages; out of range, an IndexError that says the index and how many there
    are (Python's own says neither)."""
    try:
        return items[index]
    except IndexError:
        raise IndexError(f"message index {index} out of range: the context has {len(items)} messages") from None
    except TypeError:
        raise TypeError(f"message index must be an integer, got {type(index).__name__} {index!r}") from None


def insert_index(index: object, size: int) -> int:
    """Where `Context.insert` puts a message: the same meaning as list.insert, negative indices included."""
    index = integer_index(index)
    if index < 0:
        index += size
    return max(0, min(index, size))


def _short_path(path: tuple[str | int, ...]) -> str:
    """The JSON path, its middle left out when it is very deep (a refused nesting is hundreds of levels)."""
    if len(path) <= 12:
        return json_path(path)
    return f"{json_path(path[:4])}…{json_path(path[-2:])[1:]} ({len(path)} levels)"


def checked_message(message: Any, index: int) -> Message:
    """A message must be an object with a string `type` or `role` that can be saved (`ContentError` when
    not); anything else is refused at the door."""
    if not isinstance(message, dict):
        raise TypeError(f"message {index}: expected an object, got {type(message).__name__}")
    problem = message_problem(message)
    if problem is not None:
        raise TypeError(f"message {index}: {problem}")
    # What could not be saved is refused here, where it comes in, rather than at the next save.
    refused = content_problem(message, index)
    if refused is not None:
        raise refused
    return message


def content_problem(message: Any, index: int) -> ContentError | None:
    """Why the document could not hold `message` at `index` (it could not be saved and opened again), or None."""
    found = _json.unwritable(message, _json.MESSAGE_OUTER)
    if found is None:
        return None
    path, reason = found
    return ContentError(index, _short_path(path), reason)


def watch_arguments(expr: object, callback: object) -> Expression:
    """What `Context.watch` and `Cursor.watch` both take: `expr` as a string or an `Expression`, and a callable
    callback, refused now rather than at the next edit (whose caller it would fail)."""
    expression = as_expression(expr)
    if not callable(callback):
        raise TypeError(f"watch {expression.source!r}: the callback is not callable: {type(callback).__name__}")
    return expression


class Context(Protocol):
    """What an edit is applied to (`contextdeck.engine.Context`, without importing it)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> dict[str, Any]: ...

    def insert(self, index: int, message: dict[str, Any]) -> int: ...

    def remove(self, index: int) -> dict[str, Any]: ...

    def replace(self, index: int, message: dict[str, Any]) -> None: ...

    def move(self, src: int, dst: int) -> None: ...


@dataclass(frozen=True)
class Insert:
    """Insert `message` so that it is at `index`."""

    index: int
    message: dict[str, Any]

    def apply(self, context: Context) -> Edit:
        return Remove(context.insert(self.index, self.message))


@dataclass(frozen=True)
class Remove:
    """Remove the message at `index`."""

    index: int

    def apply(self, context: Context) -> Edit:
        index = _absolute(self.index, context)
        return Insert(index, context.remove(index))


@dataclass(frozen=True)
class Replace:
    """Replace the message at `index` with `message`."""

    index: int
    message: dict[str, Any]

    def apply(self, context: Context) -> Edit:
        index = _absolute(self.index, context)
        previous = context[index]
        context.replace(index, self.message)
        return Replace(index, previous)


@dataclass(frozen=True)
class Move:
    """Move the message at `src` so that it is afterwards at `dst`."""

    src: int
    dst: int

    def apply(self, context: Context) -> Edit:
        src, dst = _absolute(self.src, context), _absolute(self.dst, context)
        context.move(src, dst)
        return Move(dst, src)


Edit = Insert | Remove | Replace | Move


def _absolute(index: int, context: Context) -> int:
    # Negative indices count from the end, as in a list; the inverse must name the real position.
    return index + len(context) if index < 0 else index
