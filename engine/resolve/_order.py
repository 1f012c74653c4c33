"""Stable message ids in order: where an id is now, in O(log n), without renumbering on every edit.

Each id carries an integer order key that grows along the context. Inserting between two messages
takes the midpoint of their keys, so an edit in the middle touches one key, not every later index;
only when two neighbours have no room left are all keys spread out again (an O(n) relabel that needs
about sixty inserts at one spot in a row). Indexes elsewhere (per identity, per path) keep ids sorted
by these keys, so they stay valid across relabels: the order never changes, only the numbers.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator

_GAP = 1 << 64
NOT_IN_ORDER = -1  # `Order.key` under an id the order does not hold (keys are positive)


class Order:
    """The ids of a context's messages in order, each with an order key (`key[id]`; `NOT_IN_ORDER` under an id the order
    does not hold).

    `keys` is the sorted list of the keys, parallel to `ids`: the index of a key is its rank there. `snapshot()` hands
    out a `Ranks` over that very list and notes every key added or taken out after it (`Shift`), so that the snapshot
    can still rank its keys as they were; nothing is copied per edit."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.keys: list[int] = []
        # A list by id (ids count up and are never reused): 8 bytes a message where a dict's table is 52.
        self.key: list[int] = []
        self.generation = 0  # how many relabels so far: keys taken before one are not comparable after
        self._snapshot: Ranks | None = None  # the latest one handed out, while nothing changed since
        self.tail = Shift(0, 0)  # the last change to `keys` noted: snapshots hold the one that was last then
        self._noting = False  # whether a snapshot was taken over `keys` (then changes are noted)
        # Each key before the first relabel the watches have not followed -> its key now (removed messages left
        # out): what they need to tell whether a relabelled result names the same messages (`Watchers._relabelled`
        # reads it, and forgets it once they follow: it is one entry per message).
        self.renamed: dict[int, int] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, ids: Iterable[int]) -> None:
        """Append ids at the end: building a context, before any snapshot (so nothing is noted for one)."""
        order, keys = self.ids, self.keys
        last = keys[-1] if keys else 0
        for offset, message_id in enumerate(ids, start=1):
            self._keyed(message_id, last + offset * _GAP)
            order.append(message_id)
            keys.append(last + offset * _GAP)

    def index_of(self, message_id: int) -> int:
        """The current index of `message_id` (O(log n)); KeyError when it is not in the context."""
        key = self.key[message_id] if 0 <= message_id < len(self.key) else NOT_IN_ORDER
        if key == NOT_IN_ORDER:
            raise KeyError(message_id)
        return bisect_left(self.keys, key)

    def snapshot(self) -> Ranks:
        """The indices of keys as they are now, for as long as it is kept (see `Ranks`)."""
        ranks = self._snapshot
        if ranks is None:
            ranks = self._snapshot = Ranks(self.keys, self.tail, self.generation)
            self._noting = True
        return ranks

    def shifted(self, since: Shift, reach: int) -> list[Shift] | None:
        """The keys added or taken out after `since` (a snapshot's `start`, or the last change a holder
        of keys saw) when one of them may have changed the rank of a key at or below `reach` (appends never
        do); None when none did. O(changes since)."""
        shift = since.later
        while shift is not None and shift.key > reach:
            shift = shift.later
        if shift is None:
            return None
        changes, shift = [], since.later
        while shift is not None:
            changes.append(shift)
            shift = shift.later
        return changes

    def insert(self, index: int, message_id: int) -> None:
        """Put `message_id` at `index` (0 <= index <= len) with a key between its neighbours."""
        low, high = self._room(index)
        if high - low < 2:
            self._relabel()
            low, high = self._room(index)
        key = (low + high) // 2
        self._keyed(message_id, key)
        self.ids[index:index] = (message_id,)  # (one memmove: `list.insert` moves the rest item by item)
        self.keys[index:index] = (key,)
        self._shifted(key, 1)

    def pop(self, index: int) -> int:
        """Take the id at `index` out of the order (its key is forgotten)."""
        message_id = self.ids.pop(index)
        self._shifted(self.key[message_id], -1)
        self.key[message_id] = NOT_IN_ORDER
        self.keys.pop(index)
        return message_id

    def _keyed(self, message_id: int, key: int) -> None:
        if message_id >= len(self.key):
            self.key.extend([NOT_IN_ORDER] * (message_id + 1 - len(self.key)))
        self.key[message_id] = key

    def _shifted(self, key: int, change: int) -> None:
        if not self._noting:  # building, or just relabelled: no snapshot shares this list
            return
        self.tail.later = self.tail = Shift(key, change)
        self._snapshot = None

    def _room(self, index: int) -> tuple[int, int]:
        keys = self.keys
        low = keys[index - 1] if index > 0 else 0
        high = keys[index] if index < len(keys) else low + 2 * _GAP
        return low, high

    def _relabel(self) -> None:
        # A new list: snapshots keep the old one, which no longer changes, and the notes made up to now.
        renamed: dict[int, int] = {}
        self.keys, self._snapshot, self.tail, self._noting = [], None, Shift(0, 0), False
        for position, message_id in enumerate(self.ids, start=1):
            renamed[self.key[message_id]] = position * _GAP
            self.key[message_id] = position * _GAP
            self.keys.append(position * _GAP)
        self.renamed = renamed
        self.generation += 1


class Shift:
    """A key added to (`change` 1) or taken out of (-1) an order's list; `later`: the next such change.
    A snapshot holds the one that was last when it was taken, so the changes after it are its `later`
    chain; changes no snapshot can reach any more are freed with it."""

    __slots__ = ("change", "key", "later")

    def __init__(self, key: int, change: int) -> None:
        self.key, self.change = key, change
        self.later: Shift | None = None


class Ranks:
    """A snapshot of the order's keys: `rank(key)` is the index the message with `key` had then.

    Shares the order's list and the note of what changed in it since (`Shift`). Changes past its largest key (appends)
    change none of its ranks; each other one shifts by one the ranks of the keys after it, which a read corrects for."""

    __slots__ = ("_checked", "_fixes", "_table", "_top", "generation", "start")

    def __init__(self, keys: list[int], last: Shift, generation: int = 0) -> None:
        self.start = last  # the order's last change when taken: `Order.shifted(start, …)` says what moved since
        self.generation = generation  # of the order's keys (a relabel changes every key)
        self._table = keys
        self._checked = last  # the last change read
        self._fixes: list[tuple[int, int]] = []  # the changes at or below `_top` since, sorted by key
        self._top = keys[-1] if keys else -1

    def rank(self, key: int) -> int:
        return next(self.each_rank((key,)))

    def ranks(self, keys: Iterable[int]) -> tuple[int, ...]:
        """The indices of sorted keys, in one pass (each search starts where the last one ended)."""
        return tuple(self.each_rank(keys))

    def each_rank(self, keys: Iterable[int]) -> Iterator[int]:
        """`ranks`, one at a time (a comparison can stop at the first that differs)."""
        table, fixes = self._read()
        low = 0
        if not fixes:
            for key in keys:
                low = bisect_left(table, key, low)
                yield low
            return
        # Ranks in the shared list, less the keys added before each (plus those taken out).
        shift, position, count = 0, 0, len(fixes)
        for key in keys:
            low = bisect_left(table, key, low)
            while position < count and fixes[position][0] < key:
                shift += fixes[position][1]
                position += 1
            yield low - shift

    def _read(self) -> tuple[list[int], list[tuple[int, int]]]:
        """The list to search and the changes to correct for (see the class)."""
        checked, fixes, top = self._checked, self._fixes, self._top
        shift = checked.later
        while shift is not None:
            if shift.key <= top:
                insort(fixes, (shift.key, shift.change))
            checked, shift = shift, shift.later
        self._checked = checked
        return self._table, fixes
