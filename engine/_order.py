"""Stable message ids in order: where an id is now, in O(log n), without renumbering on every edit.

Each id carries an integer order key that grows along the context. Inserting between two messages
takes the midpoint of their keys, so an edit in the middle touches one key, not every later index;
only when two neighbours have no room left are all keys spread out again (an O(n) relabel that needs
about sixty inserts at one spot in a row). Indexes elsewhere (per identity, per path) keep ids sorted
by these keys, so they stay valid across relabels: the order never changes, only the numbers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator

_GAP = 1 << 64


class Order:
    """The ids of a context's messages in order, each with an order key (`key[id]`).

    `keys` is the sorted list of the keys, parallel to `ids`: the index of a key is its rank there.
    `snapshot()` hands out that list as it is now; an edit that would change it under a snapshot
    copies it first (an append does not: a snapshot only ranks keys it already had).
    """

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.keys: list[int] = []
        self.key: dict[int, int] = {}
        self.generation = 0  # how many relabels so far: keys taken before one are not comparable after
        self._snapshot: Ranks | None = None  # the one handed out over `keys`, if any

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, ids: Iterable[int]) -> None:
        """Append ids at the end (the fast path of building a context)."""
        key, order, keys = self.key, self.ids, self.keys
        last = keys[-1] if keys else 0
        for offset, message_id in enumerate(ids, start=1):
            key[message_id] = last + offset * _GAP
            order.append(message_id)
            keys.append(last + offset * _GAP)

    def index_of(self, message_id: int) -> int:
        """The current index of `message_id` (O(log n)); KeyError when it is not in the context."""
        return bisect_left(self.keys, self.key[message_id])

    def rank(self, key: int) -> int:
        """The current index of the message with order `key`."""
        return bisect_left(self.keys, key)

    def snapshot(self) -> Ranks:
        """The indices of keys as they are now, for as long as it is kept (see `Ranks`)."""
        ranks = self._snapshot
        if ranks is None or ranks.size != len(self.keys):
            ranks = self._snapshot = Ranks(self.keys, len(self.keys))
        return ranks

    def insert(self, index: int, message_id: int, key: int | None = None) -> None:
        """Put `message_id` at `index` (0 <= index <= len) with a key between its neighbours.

        `key`: the one it had there before (undoing a preview), so that keys kept elsewhere stay right.
        """
        low, high = self._room(index)
        if key is None or not low < key < (high if index < len(self.keys) else key + 1):  # the end has no bound
            if high - low < 2:
                self._relabel()
                low, high = self._room(index)
            key = (low + high) // 2
        self.key[message_id] = key
        self.ids.insert(index, message_id)
        if index == len(self.keys):
            self.keys.append(key)  # a snapshot never ranks a key beyond its size
        else:
            self._unshare().insert(index, key)

    def pop(self, index: int) -> int:
        """Take the id at `index` out of the order (its key is forgotten)."""
        message_id = self.ids.pop(index)
        del self.key[message_id]
        self._unshare().pop(index)
        return message_id

    def _unshare(self) -> list[int]:
        if self._snapshot is not None:  # it holds this list: edit a copy
            self.keys, self._snapshot = list(self.keys), None
        return self.keys

    def _room(self, index: int) -> tuple[int, int]:
        keys = self.keys
        low = keys[index - 1] if index > 0 else 0
        high = keys[index] if index < len(keys) else low + 2 * _GAP
        return low, high

    def _relabel(self) -> None:
        self.generation += 1
        self.keys, self._snapshot = [], None
        for position, message_id in enumerate(self.ids, start=1):
            self.key[message_id] = position * _GAP
            self.keys.append(position * _GAP)


class Ranks:
    """A snapshot of the order's keys: `rank(key)` is the index the message with `key` had then.

    Shares the order's list; the order copies the list before an edit that would change these ranks.
    """

    __slots__ = ("keys", "size")

    def __init__(self, keys: list[int], size: int) -> None:
        self.keys, self.size = keys, size

    def rank(self, key: int) -> int:
        return bisect_left(self.keys, key, 0, self.size)

    def ranks(self, keys: tuple[int, ...]) -> tuple[int, ...]:
        """The indices of sorted keys, in one pass (each search starts where the last one ended)."""
        return tuple(self.each_rank(keys))

    def each_rank(self, keys: tuple[int, ...]) -> Iterator[int]:
        """`ranks`, one at a time (a comparison can stop at the first that differs)."""
        table, size, low = self.keys, self.size, 0
        for key in keys:
            low = bisect_left(table, key, low, size)
            yield low
