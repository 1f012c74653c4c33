"""Message indices that are worked out only when read.

Watches keep their sources as order keys (`_order`), which an insert, a remove or a move elsewhere does
not change; only the indices do. A `Ranked` holds the sorted keys and a snapshot of the order (`Ranks`)
and works out the indices on first read, so renumbering the sources of every watch after an edit in the
middle costs one small object per watch, whatever the number of sources. It is a snapshot: later edits
never change what it reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex, overload

from ._order import Ranks
from ._resolution import Indices


class Ranked(Indices):
    """The indices of sorted order keys in one snapshot of the order; equal to that tuple in every way.

    Its own tuple items are its state — (keys, snapshot, [indices once worked out]) — and every read
    goes through `_plain`: one object per renumbered watch, with no attribute dict to make and fill.
    """

    __slots__ = ()

    def __new__(cls, keys: tuple[int, ...], ranks: Ranks) -> Ranked:
        return tuple.__new__(cls, (keys, ranks, [None]))

    @property
    def _keys(self) -> tuple[int, ...]:
        return _state(self)[0]

    @property
    def _ranks(self) -> Ranks:
        return _state(self)[1]

    def __eq__(self, other: object) -> bool:
        keys, ranks, _ = _state(self)
        if isinstance(other, Ranked) and other._ranks is ranks:  # one snapshot: same keys, same indices
            return other._keys == keys
        if isinstance(other, tuple | list) and len(other) != len(keys):
            return False
        return Indices.__eq__(self, other)

    __hash__ = Indices.__hash__

    def _plain(self) -> tuple[int, ...]:
        keys, ranks, cache = _state(self)
        if cache[0] is None:
            cache[0] = ranks.ranks(keys)
        items: tuple[int, ...] = cache[0]
        return items

    def _last(self) -> int:
        keys, ranks, _ = _state(self)
        return ranks.rank(keys[-1]) if keys else -1

    def __len__(self) -> int:
        return len(_state(self)[0])

    def __iter__(self) -> Iterator[int]:
        return iter(self._plain())

    def __reversed__(self) -> Iterator[int]:
        return reversed(self._plain())

    def __contains__(self, item: object) -> bool:
        return item in self._plain()

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...

    @overload
    def __getitem__(self, key: slice) -> tuple[int, ...]: ...

    def __getitem__(self, key: SupportsIndex | slice) -> int | tuple[int, ...]:
        return self._plain()[key]

    def __lt__(self, other: tuple[int, ...]) -> bool:
        return self._plain() < _plain(other)

    def __le__(self, other: tuple[int, ...]) -> bool:
        return self._plain() <= _plain(other)

    def __gt__(self, other: tuple[int, ...]) -> bool:
        return self._plain() > _plain(other)

    def __ge__(self, other: tuple[int, ...]) -> bool:
        return self._plain() >= _plain(other)

    def __add__(self, other: tuple[Any, ...]) -> tuple[Any, ...]:
        return self._plain() + _plain(other)

    def __radd__(self, other: tuple[Any, ...]) -> tuple[Any, ...]:
        return _plain(other) + self._plain()

    def __mul__(self, count: SupportsIndex) -> tuple[int, ...]:
        return self._plain() * count

    __rmul__ = __mul__

    def count(self, value: Any) -> int:
        return self._plain().count(value)

    def index(self, value: Any, start: SupportsIndex = 0, stop: SupportsIndex = 1 << 62) -> int:
        return self._plain().index(value, start, stop)

    def __repr__(self) -> str:
        return repr(self._plain())

    def __reduce__(self) -> tuple[type[Indices], tuple[tuple[int, ...]]]:
        return Indices, (self._plain(),)


def _state(ranked: Ranked) -> tuple[tuple[int, ...], Ranks, list[Any]]:
    """A Ranked's own items: its keys, its snapshot of the order, and the cache of its indices."""
    raw: Any = ranked  # typed as a tuple of indices, which its items are not
    return tuple.__getitem__(raw, 0), tuple.__getitem__(raw, 1), tuple.__getitem__(raw, 2)


def _plain(value: tuple[Any, ...]) -> tuple[Any, ...]:
    return value._plain() if isinstance(value, Indices) else value
