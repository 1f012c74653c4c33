"""Stable message ids in order: where an id is now, in O(log n), without renumbering on every edit.

Each id carries an integer order key that grows along the context. Inserting between two messages
takes the midpoint of their keys, so an edit in the middle touches one key, not every later index;
only when two neighbours have no room left are all keys spread out again (an O(n) relabel that needs
about sixty inserts at one spot in a row). Indexes elsewhere (per identity, per path) keep ids sorted
by these keys, so they stay valid across relabels: the order never changes, only the numbers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

_GAP = 1 << 64


class Order:
    """The ids of a context's messages in order, each with an order key (`key[id]`)."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.key: dict[int, int] = {}
        # Indices already looked up; valid until an edit renumbers (an append renumbers nothing).
        self._known: dict[int, int] = {}
        self.generation = 0  # how many relabels so far: keys taken before one are not comparable after

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, ids: Iterable[int]) -> None:
        """Append ids at the end (the fast path of building a context)."""
        key, order = self.key, self.ids
        last = key[order[-1]] if order else 0
        for offset, message_id in enumerate(ids, start=1):
            key[message_id] = last + offset * _GAP
            order.append(message_id)

    def index_of(self, message_id: int) -> int:
        """The current index of `message_id`; KeyError when it is not in the context."""
        index = self._known.get(message_id)
        if index is None:
            index = self._known[message_id] = bisect_left(self.ids, self.key[message_id], key=self.key.__getitem__)
        return index

    def insert(self, index: int, message_id: int) -> None:
        """Put `message_id` at `index` (0 <= index <= len) with a key between its neighbours."""
        low, high = self._room(index)
        if high - low < 2:
            self._relabel()
            low, high = self._room(index)
        self.key[message_id] = (low + high) // 2
        if index < len(self.ids):
            self._known.clear()
        self.ids.insert(index, message_id)

    def pop(self, index: int) -> int:
        """Take the id at `index` out of the order (its key is forgotten)."""
        if index not in (-1, len(self.ids) - 1):
            self._known.clear()
        message_id = self.ids.pop(index)
        del self.key[message_id]
        self._known.pop(message_id, None)
        return message_id

    def _room(self, index: int) -> tuple[int, int]:
        low = self.key[self.ids[index - 1]] if index > 0 else 0
        high = self.key[self.ids[index]] if index < len(self.ids) else low + 2 * _GAP
        return low, high

    def _relabel(self) -> None:
        self.generation += 1
        for position, message_id in enumerate(self.ids, start=1):
            self.key[message_id] = position * _GAP
