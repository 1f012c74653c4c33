"""A read-only view of a context's messages at one moment: what rendering and validation read.

`Context` is not thread-safe and building another one indexes every message again; a view is two sequences
copied from it (O(n): `Context.view_steps` copies a step at a time, for a caller with a budget), safe to hand to
a worker thread while the context goes on changing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Protocol, TypeVar, overload

from ..protocol._messages import MessageInfo

Message = dict[str, Any]
T = TypeVar("T")


class Messages(Protocol):
    """What `render`, `validate` and the tool lookups read: a `Context` or a `ContextView`."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Message: ...

    def info(self, index: int) -> MessageInfo: ...


@dataclass(frozen=True)
class ContextView:
    """The messages and their parsed views, frozen as they were when `Context.view()` was called."""

    messages: Sequence[Message]  # never changed once the view is made
    infos: Sequence[MessageInfo]

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    def info(self, index: int) -> MessageInfo:
        return self.infos[index]

    def joined(self) -> ContextView:
        """The same view over plain lists, for a reader of every message on its own thread (`Pieces.joined`)."""
        if isinstance(self.messages, Pieces) or isinstance(self.infos, Pieces):
            return ContextView(_whole(self.messages), _whole(self.infos))
        return self


class Pieces(Sequence[T]):
    """A long list copied a piece at a time (`Context.view_steps`), kept as those pieces: each piece is a list of
    its own, every one `step` long but the last. Copied into one list grown as it goes, a step would reallocate
    the whole list now and then: a new block of megabytes at a million messages, every page of it mapped by the
    kernel inside that step (longer when other threads are mapping memory too). A reader of every
    item joins the pieces on its own thread (`joined`)."""

    __slots__ = ("pieces", "step")

    def __init__(self, step: int) -> None:
        self.pieces: list[list[T]] = []
        self.step = step

    def __len__(self) -> int:
        return (len(self.pieces) - 1) * self.step + len(self.pieces[-1]) if self.pieces else 0

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return self.joined()[index]
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError(index)
        piece, at = divmod(index, self.step)
        try:
            return self.pieces[piece][at]
        except IndexError:
            raise IndexError(index) from None

    def __iter__(self) -> Iterator[T]:
        return chain.from_iterable(self.pieces)

    def joined(self) -> list[T]:
        """One list of every item, joined a piece at a time (the interpreter lock free between two pieces)."""
        whole: list[T] = []
        for piece in self.pieces:
            whole += piece
        return whole


def _whole(items: Sequence[T]) -> Sequence[T]:
    return items.joined() if isinstance(items, Pieces) else items


def by_position(context: Messages) -> tuple[Iterable[MessageInfo], Callable[[int], Message]]:
    """Each message's info, in order, and the message at an index, for a pass over all of them: a `Context` viewed
    once (`view`: the copy is made at C speed), a `ContextView` read as it is, where two method calls a message
    would cost as much as the rest of a light pass (`validate` makes several over 100,000). Any other `Messages` (a
    worker's view that stops at its next read) is read through its methods, a message at a time."""
    if type(context) is ContextView:
        joined = context.joined()
        return joined.infos, joined.messages.__getitem__
    view = getattr(context, "view", None)  # a `Context`, which this module is below
    if view is not None:
        viewed: ContextView = view()
        return viewed.infos, viewed.messages.__getitem__
    return map(context.info, range(len(context))), context.__getitem__
