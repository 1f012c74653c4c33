"""Edits as data: each is a small frozen command; applying one to a context returns its inverse.

The GUI wraps these in QUndoCommands; tests use them without Qt.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..protocol._expressions import Expression, as_expression

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
