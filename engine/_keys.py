"""`Keys`: a result's source messages as sorted order keys, grown at the end without a copy.

A watch of a whole kind (`†state`) has about 11,000 sources, and every write of the kind adds one. As a
tuple each of those appends copied every key into a new tuple and freed the old one (about 35 µs each
at 100,000 messages: the keys are integers scattered in memory), and the cycle collector walked each new
tuple once more (about 120 µs). `Keys` are a length over a list that is only ever appended to: the
keys that grew from others share their list, and an append by the holder that grew it last extends it
in place, O(1). The items below a holder's length never change, so every holder (a resolution handed to
another thread included) reads the keys it was made with. Anything other than growth at the end makes a
list of its own.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any


class Keys:
    """Sorted, unique order keys; frozen for their holder (see the module)."""

    __slots__ = ("_items", "_size")

    def __init__(self, items: Iterable[int] = ()) -> None:
        self._items = list(items)
        self._size = len(self._items)

    @classmethod
    def owning(cls, items: list[int]) -> Keys:
        """Keys over `items` (sorted, unique), which they take as their own: no copy."""
        made = cls.__new__(cls)
        made._items, made._size = items, len(items)
        return made

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __iter__(self) -> Iterator[int]:
        items = self._items
        return iter(items) if len(items) == self._size else islice(items, self._size)

    def __getitem__(self, index: int) -> int:
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError("keys index out of range")
        return self._items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Keys):
            if self._size != other._size:
                return False
            return self._items is other._items or self._exact() == other._exact()
        if isinstance(other, tuple):
            return self._size == len(other) and tuple(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (equal to tuples, but never a dict key)

    def __repr__(self) -> str:
        return f"Keys({self.listed()!r})"

    def listed(self) -> list[int]:
        """The keys as a new list (one copy)."""
        return self._items[: self._size]

    def _exact(self) -> list[int]:
        """The keys as a list, only to read: the shared one itself when nothing grew it past them."""
        items = self._items
        return items if len(items) == self._size else items[: self._size]

    def position(self, key: int) -> int:
        """Where `key` is, or would go (`bisect_left`)."""
        return bisect_left(self._items, key, 0, self._size)

    def after(self, key: int, low: int = 0) -> int:
        """How many keys are at or below `key`, searching from `low` (`bisect_right`)."""
        return bisect_right(self._items, key, low, self._size)

    def grows(self, old: Keys) -> bool:
        """Whether these keys are `old` with some more after them (at once when they grew from it)."""
        size = old._size
        if self._size < size:
            return False
        return self._items is old._items or self._items[:size] == old._exact()

    def tail(self, start: int) -> list[int]:
        """The keys from position `start` on."""
        return self._items[start : self._size]

    def plus(self, added: Iterable[int]) -> Keys:
        """These keys and then `added` (sorted, each past the last of these): the shared list extended in
        place when nothing grew it past this holder's length, else a list of their own."""
        items, size = self._items, self._size
        if len(items) != size or not size:  # another holder grew it: copy what is ours (never grow the empty)
            items = items[:size]
        items.extend(added)
        return Keys.owning(items)


EMPTY_KEYS = Keys()


def keys_of(items: Any) -> Keys:
    """`items` (sorted, unique) as `Keys`; the very object when it is one."""
    return items if isinstance(items, Keys) else Keys(items)


__all__ = ["EMPTY_KEYS", "Keys", "keys_of"]
