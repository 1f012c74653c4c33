"""Renumbering message indices after an edit, without folding anything again.

An insert, a remove or a move changes the indices of a contiguous range of messages by one; results
that name only messages outside the range stay as they are, and the others are renumbered lazily: a
`Shifted` keeps the sorted indices it started from and a `Chain` of the shifts since, and works out its
indices only when they are read (then in one pass of slices). Every result an edit renumbers gets the
same next link of the chain, so what depends only on the shifts (their bounds pulled back to the base
indices, the offsets they add) is worked out once per chain, not per result: renumbering a result
costs a few steps whatever its size, and its highest index is kept as it goes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, SupportsIndex, overload

from ._fold import PathValue
from ._resolution import Diagnostic, Indices, Resolution

UNBOUNDED = 1 << 62  # above every index


@dataclass(frozen=True)
class Shift:
    """Indices in `low <= i < high` become `i + delta`; `low` is also the first index that may change.

    The moved or removed message itself never appears in a result that is shifted: a result that names
    it is folded again instead.
    """

    low: int
    high: int
    delta: int

    @classmethod
    def insert(cls, index: int) -> Shift:
        return cls(index, UNBOUNDED, 1)

    @classmethod
    def remove(cls, index: int) -> Shift:
        return cls(index + 1, UNBOUNDED, -1)

    @classmethod
    def move(cls, src: int, dst: int) -> Shift:
        return cls(src + 1, dst + 1, -1) if src < dst else cls(dst, src, 1)

    def indices(self, indices: tuple[int, ...]) -> Indices:
        """Sorted indices, renumbered (lazily: see `Shifted`)."""
        if not isinstance(indices, Indices):
            indices = Indices(indices)
        if indices._last() < self.low:
            return indices
        return Shifted.of(indices, self)

    def pull(self, bound: int) -> int:
        """The smallest index that this shift takes to `bound` or beyond.

        The shift is non-decreasing over all integers, so for the indices of a result (which never
        include the moved or removed message) `index(i) >= bound` exactly when `i >= pull(bound)`.
        """
        low, high, delta = self.low, self.high, self.delta
        if bound < low:
            return bound
        start = max(low, bound - delta)
        return start if start < high else max(high, bound)

    def index(self, index: int) -> int:
        return index + self.delta if self.low <= index < self.high else index

    def diagnostics(self, diagnostics: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
        return tuple(
            d if d.message_index is None else replace(d, message_index=self.index(d.message_index))
            for d in diagnostics
        )


class Chain:
    """A sequence of shifts, shared by every result renumbered by the same edits since its base.

    Every result shifted by an edit gets the same next link (`then` remembers the links it made), so
    pulling the edit's bounds back through the earlier shifts is done once per chain, not per result.
    """

    __slots__ = ("_offsets", "children", "depth", "parent", "pulls", "shift")

    def __init__(self, parent: Chain | None = None, shift: Shift | None = None) -> None:
        self.parent, self.shift = parent, shift
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.children: dict[tuple[int, int, int], Chain] = {}
        self.pulls: dict[int, int] = {}
        self._offsets: tuple[tuple[int, int], ...] | None = None

    def then(self, shift: Shift) -> Chain:
        key = (shift.low, shift.high, shift.delta)  # hashing the dataclass would cost more
        child = self.children.get(key)
        if child is None:
            if len(self.children) > 64:  # only the latest edits' shifts are asked for again
                self.children.clear()
            child = self.children[key] = Chain(self, shift)
        return child

    def pull(self, bound: int) -> int:
        """The smallest base index that the whole chain takes to `bound` or beyond."""
        pulled = self.pulls.get(bound)
        if pulled is None:
            if self.parent is None or self.shift is None:
                return bound
            pulled = self.parent.pull(self.shift.pull(bound))
            if len(self.pulls) > 256:  # only the latest edits' bounds are asked for again
                self.pulls.clear()
            self.pulls[bound] = pulled
        return pulled

    def offsets(self) -> tuple[tuple[int, int], ...]:
        """The whole chain as (from base index, offset) pairs, ascending: from each index on (up to the
        next pair) the chain adds that offset. A shift adds its delta to the base indices that reach its
        range, which are a range too: its bounds pulled back through the shifts before it."""
        if self._offsets is None:
            parent, shift = self.parent, self.shift
            if parent is None or shift is None:
                self._offsets = ()
            else:  # the parent's offsets, plus this shift's delta over its range pulled back to the base
                pairs = parent.offsets()
                low, high = parent.pull(shift.low), parent.pull(shift.high)
                starts = [index for index, _ in pairs]
                offsets = []
                for index in sorted({*starts, low, high}):
                    at = bisect_right(starts, index) - 1
                    offset = pairs[at][1] if at >= 0 else 0
                    offsets.append((index, offset + shift.delta if low <= index < high else offset))
                self._offsets = tuple(offsets)
        return self._offsets


START = Chain()


class Shifted(Indices):
    """Sorted indices renumbered by shifts, worked out on first read; equal to that tuple in every way.

    It holds the sorted tuple it started from and the chain of shifts since (shared with every result
    renumbered by the same edits): a snapshot, which later edits cannot change. Reading it builds the
    tuple once, in one pass of slices.
    """

    LONGEST = 8  # shifts in a chain before a result is worked out and starts a new one

    _base: tuple[int, ...]
    _chain: Chain
    _top: int  # the highest index
    _items: tuple[int, ...] | None  # once worked out (base and chain stay: they answer `_moved`)

    def __new__(cls, base: tuple[int, ...], chain: Chain, top: int) -> Shifted:
        self = tuple.__new__(cls)  # holds nothing itself: every read goes through `_plain`
        self._base, self._chain, self._top, self._items = base, chain, top, None
        return self

    @classmethod
    def of(cls, indices: Indices, shift: Shift) -> Shifted:
        """`indices` renumbered by `shift`."""
        if isinstance(indices, Shifted):
            base, chain = indices._base, indices._chain
            # Spread over a few edits: results renumbered together would all be worked out at once.
            if indices._items is not None or chain.depth >= cls.LONGEST + len(base) % 8:
                base, chain = indices._plain(), START
        else:
            base, chain = indices, START
        return cls(base, chain.then(shift), shift.index(indices._last()))

    def __eq__(self, other: object) -> bool:
        # The same base renumbered by the same chain (shared by the results an edit renumbered alike).
        if isinstance(other, Shifted) and other._base is self._base and other._chain is self._chain:
            return True
        if isinstance(other, tuple | list) and len(other) != len(self._base):
            return False
        return Indices.__eq__(self, other)

    __hash__ = Indices.__hash__

    def _moved(self) -> bool:
        """Whether the last shift changed any index."""
        chain, base = self._chain, self._base
        parent, shift = chain.parent, chain.shift
        if parent is None or shift is None:
            return False
        if shift.high == UNBOUNDED:  # an insert or a remove: it moves every index from `low` on
            return self._top >= shift.low + min(shift.delta, 0)
        return bisect_left(base, parent.pull(shift.low)) < bisect_left(base, parent.pull(shift.high))

    def _plain(self) -> tuple[int, ...]:
        if self._items is None:
            base = self._base
            items: list[int] = []
            position, offset = 0, 0
            for index, following in self._chain.offsets():
                cut = bisect_left(base, index, position)
                if cut > position:
                    piece = base[position:cut]
                    items.extend(map(offset.__add__, piece) if offset else piece)
                position, offset = cut, following
            piece = base[position:]
            items.extend(map(offset.__add__, piece) if offset else piece)
            self._items = tuple(items)  # worked out once
        return self._items

    def _last(self) -> int:
        return self._top

    def __len__(self) -> int:
        return len(self._base)

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


def _plain(value: tuple[Any, ...]) -> tuple[Any, ...]:
    return value._plain() if isinstance(value, Indices) else value


def shift_value(value: PathValue, shift: Shift) -> PathValue:
    diagnostics = shift.diagnostics(value.diagnostics) if value.diagnostics else ()
    return PathValue(value.value, shift.indices(value.sources), diagnostics)


def shift_resolution(resolution: Resolution, shift: Shift, known: tuple[int, ...] | None = None) -> Resolution:
    """`resolution` renumbered (`known`: its sources renumbered already, when known)."""
    diagnostics = shift.diagnostics(resolution.diagnostics) if resolution.diagnostics else ()
    if known is None:
        sources = shift.indices(resolution.sources)
    else:
        sources = known if isinstance(known, Indices) else Indices(known)
    found, value = resolution.found, resolution.value
    return Resolution(resolution.expression, found, value, sources, diagnostics, resolution.missing)


def highest(value: PathValue | Resolution) -> int:
    """The highest message index a result names (-1 for none)."""
    sources = value.sources
    top = sources._last() if isinstance(sources, Indices) else sources[-1] if sources else -1
    for diagnostic in value.diagnostics:
        if diagnostic.message_index is not None and diagnostic.message_index > top:
            top = diagnostic.message_index
    return top

