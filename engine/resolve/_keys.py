"""`Keys` and `Ids`: sources kept in chunks, edited without copying them all.

`Keys` are a result's source messages as sorted order keys; `Ids` a whole-kind fold's sources as message ids,
in fold order (`_whole`).

A watch of a whole kind (`†state`) has as many sources as its kind has writes, and every write of the kind
adds one; an insert or a remove in the middle adds or takes out one more. Kept as one tuple, each of those
would copy every key into a new tuple and free the old one (the keys are integers scattered in memory, so
each is a cache miss), and the cycle collector would walk each new tuple once more.

So `Keys` are kept in chunks: sealed tuples of about `CHUNK` keys, shared by every `Keys` edited from
one another, and a tail list that is only ever appended to, with a length per holder. An append by the
holder that grew the tail last extends it in place, O(1); an edit in the middle copies the one chunk it
falls in. The keys below a holder's length never change, so every holder (a resolution handed to another
thread included) reads the keys it was made with.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress, islice
from operator import itemgetter, lt, ne
from typing import Self, overload

# Keys per sealed chunk (a tail is sealed into chunks once it holds twice as many; an edited chunk is
# split once it holds three times as many).
CHUNK = 512

Chunk = tuple[int, ...]


class _Chunked(Sequence[int]):
    """Integers in chunks and a growing tail (see the module); frozen for their holder."""

    __slots__ = ("_chunks", "_offsets", "_sealed", "_size", "_tail")

    _chunks: tuple[Chunk, ...]  # sealed, each non-empty, in order
    _offsets: tuple[int, ...]  # where each chunk starts
    _sealed: int  # how many keys the chunks hold
    _tail: list[int]  # the keys after them: a list only ever appended to, shared; this holder's part is
    _size: int  # the first `_size - _sealed` of it

    def __init__(self, items: Iterable[int] = ()) -> None:
        _fill(self, (), list(items))

    @classmethod
    def owning(cls, items: list[int]) -> Self:
        """A sequence over `items`, which it may take as its own."""
        made = cls.__new__(cls)
        _fill(made, (), items)
        return made

    @classmethod
    def run(cls, items: list[int], start: int, stop: int, sealed: list[Chunk]) -> Self:
        """`items[start:stop]`, laid out as `owning` lays out a copy (chunks of `CHUNK` from the first item),
        its chunks those of `sealed`: the chunks of `items` from `start` on, sealed here as far as needed
        (`items` is only ever appended to). Every run from the same `start` shares them, and two of the same
        size compare chunk by chunk (`_same_items`)."""
        size = stop - start
        if size < 2 * CHUNK:
            return cls.owning(items[start:stop])
        whole = size // CHUNK
        seal(items, start, sealed, start + whole * CHUNK)
        made = cls.__new__(cls)
        _fill(made, tuple(sealed[:whole]), items[start + whole * CHUNK : stop])
        return made

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[int]:
        tail, visible = self._tail, self._size - self._sealed
        rest: Iterable[int] = tail if len(tail) == visible else islice(tail, visible)
        return chain(*self._chunks, rest) if self._chunks else iter(rest)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...

    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        if isinstance(index, slice):  # (a copy; from the middle on, read from the chunk it starts in: `tail`)
            start, stop, step = index.indices(self._size)
            rest = self.tail(start) if start else self
            return tuple(islice(rest, max(0, stop - start))) if step == 1 else tuple(self)[index]
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError("keys index out of range")
        if index >= self._sealed:
            return self._tail[index - self._sealed]
        number = bisect_right(self._offsets, index) - 1
        return self._chunks[number][index - self._offsets[number]]

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, _Chunked) and type(other) is type(self):
            return self._size == other._size and _same_items(self, other)
        if isinstance(other, tuple):
            return self._size == len(other) and tuple(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (equal to tuples, but never a dict key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def grows(self, old: Self) -> bool:
        """Whether these items are `old` with some more after them (at once when they grew from it)."""
        if self._size < old._size:
            return False
        if self._tail is old._tail and self._chunks is old._chunks:
            return True
        return list(islice(self, old._size)) == list(old)

    def tail(self, start: int) -> list[int]:
        """The items from position `start` on (read from the chunk it falls in: not counted through from the first)."""
        sealed, end = self._sealed, self._size - self._sealed
        if start >= sealed:
            return self._tail[start - sealed : end]
        number = bisect_right(self._offsets, start) - 1
        return list(islice(chain(*self._chunks[number:], self._tail[:end]), start - self._offsets[number], None))

    def locate(self, key: int, key_of: Callable[[int], int] | None = None, low: int = 0) -> int:
        """Where an item of key `key` is, or would go, among the items from position `low` on, whose keys (`key_of`
        each; None: the items themselves) ascend: `bisect_left(self, key, low, key=key_of)`, reading only the chunk
        it falls in."""
        chunks = self._chunks
        if low < self._sealed:
            last = itemgetter(-1) if key_of is None else lambda chunk: key_of(chunk[-1])
            number = bisect_left(chunks, key, bisect_right(self._offsets, low) - 1, key=last)
            if number < len(chunks):
                start = self._offsets[number]
                return start + bisect_left(chunks[number], key, max(0, low - start), key=key_of)
        sealed = self._sealed
        return sealed + bisect_left(self._tail, key, max(0, low - sealed), self._size - sealed, key=key_of)

    def plus(self, added: Iterable[int]) -> Self:
        """These items and then `added`: the shared tail extended in place when nothing grew it past this
        holder's length, else a tail of their own."""
        tail, visible = self._tail, self._size - self._sealed
        if len(tail) != visible or not self._size:  # another holder grew it (never grow the empty keys')
            tail = tail[:visible]
        tail.extend(added)
        made = type(self).__new__(type(self))
        if len(tail) < 2 * CHUNK:
            made._chunks, made._offsets, made._sealed = self._chunks, self._offsets, self._sealed
            made._tail, made._size = tail, self._sealed + len(tail)
        else:
            _fill(made, self._chunks, tail)  # sealed: copied into chunks and a new tail
        return made

    def edited_at(self, cut: int, head: Sequence[int] | None, removed: set[int], added: dict[int, list[int]]) -> Self:
        """`head` (None: the first `cut` items as they are) followed by the items from `cut` on, less those at
        the positions `removed` and with `added[position]` before the item at each position (both from
        `cut` on). Only the chunks edited are copied (and the one `cut` falls in, once: then a chunk starts
        there); a head of `Ids` lends its chunks, and the tail stays the tail (sealed, each edit after an
        append made a small chunk of it)."""
        visible = self._size - self._sealed
        tail = self._tail if len(self._tail) == visible else self._tail[:visible]
        parts: list[Sequence[int]] = [*self._chunks, tail]  # the last: the tail, a list
        number = start = 0
        while number < len(parts) - 1 and start + len(parts[number]) <= cut:  # the chunks wholly before `cut`
            start += len(parts[number])
            number += 1
        front, parts = (parts[:number] if head is None else _chunks_of(head)), parts[number:]
        if start < cut:  # `cut` falls inside the first of the rest: split there
            if head is None:
                front.append(tuple(parts[0][: cut - start]))
            parts[0] = parts[0][cut - start :]
        starts = list(accumulate(map(len, parts), initial=0)) if removed or added else []
        edited: dict[int, list[int]] = {}
        for position in sorted({*removed, *added}, reverse=True):  # from the end: positions before stay valid
            offset = position - cut
            number = bisect_right(starts, offset, 0, len(parts)) - 1
            items = edited.get(number)
            if items is None:
                items = edited[number] = list(parts[number])
            offset -= starts[number]
            if position in removed:
                del items[offset]
            if position in added:
                items[offset:offset] = added[position]
        last = edited.pop(len(parts) - 1, parts[-1])  # the tail
        middle = parts[:-1]
        for number in sorted(edited, reverse=True):  # (from the end: a split or a dropped chunk moves those after)
            copied = edited[number]
            size = CHUNK if len(copied) > 3 * CHUNK else len(copied) or 1
            middle[number : number + 1] = [tuple(copied[at : at + size]) for at in range(0, len(copied), size)]
        made = type(self).__new__(type(self))
        _fill(made, (*front, *middle), last)  # type: ignore[arg-type]  # (tuples, then the tail: a list)
        return made


def seal(items: list[int], start: int, sealed: list[Chunk], stop: int | None = None) -> None:
    """Add to `sealed`, the chunks of `items` from `start` on, those complete up to `stop` (all when None)."""
    stop = len(items) if stop is None else stop
    while start + (len(sealed) + 1) * CHUNK <= stop:
        at = start + len(sealed) * CHUNK
        sealed.append(tuple(items[at : at + CHUNK]))


class Keys(_Chunked):
    """Sorted, unique order keys; frozen for their holder (see the module)."""

    __slots__ = ()

    def edited(self, lost: Iterable[int], added: list[int]) -> Keys | None:
        """These keys less `lost` (each must be among them: None otherwise) and with `added` (sorted; some
        may be there already): keys only added after all of them (an append) grow in place (`plus`); others
        copy only the chunks they fall in (`edited_at`: a whole kind has thousands)."""
        if not lost and added and (not self or added[0] > self[-1]):
            return self.plus(dict.fromkeys(added))
        size, removed, inserted = self._size, set[int](), dict[int, list[int]]()
        for gone in lost:
            at = self.locate(gone)
            if at == size or self[at] != gone:
                return None
            removed.add(at)
        for key in added:
            at = self.locate(key)
            if at < size and self[at] == key and at not in removed:
                continue  # there already
            before = inserted.setdefault(at, [])
            if not before or before[-1] != key:
                before.append(key)
        return self.edited_at(0, None, removed, inserted) if removed or inserted else self


class Ids(_Chunked):
    """Message ids in fold order, frozen for their holder: a whole-kind fold's sources (`_whole`), one per
    write of the kind. Their order keys ascend from `cut` on, where an instance fold's own sources follow its
    global part (`locate`); that global part is the global fold's chunks, shared (`edited_at`)."""

    __slots__ = ()


class Merging:
    """The sorted union of disjoint sorted keys, `keys` and `items[start:stop]`, made a piece at a time (`step`):
    the sources of an instance's whole kind are its own writes' keys among its kind's global ones, and merging a
    hundred thousand keys is more than a slice (each comparison reads two integers scattered in memory). The
    result is laid out as `owning` lays out a copy, so that it compares chunk by chunk (`_same_items`)."""

    __slots__ = ("done", "items", "made", "number", "parts", "pending", "result", "stop")

    def __init__(self, keys: Keys, items: list[int], start: int, stop: int) -> None:
        visible = keys._size - keys._sealed
        self.parts: list[Sequence[int]] = [*keys._chunks, *([keys._tail[:visible]] if visible else [])]
        self.items, self.done, self.stop = items, start, stop  # the items merged so far: up to `done`
        self.number = 0  # the parts merged so far
        self.made: list[Chunk] = []
        self.pending: list[int] = []  # merged, not sealed into a chunk yet
        self.result: Keys | None = None

    def step(self) -> Keys | None:
        """Merge one part of `keys` and the items that go before its end (or, once the parts are all merged,
        `CHUNK` of the items after them); the union once there is nothing left."""
        if self.result is not None:
            return self.result
        items, done, pending = self.items, self.done, self.pending
        if self.number < len(self.parts):
            part = self.parts[self.number]
            self.number += 1
            upto = bisect_right(items, part[-1], done, self.stop)
            if upto > done:
                piece = [*part, *items[done:upto]]
                piece.sort()  # (two runs: merged)
                pending += piece
            else:
                pending += part
        else:
            upto = min(self.stop, done + CHUNK)
            pending += items[done:upto]
        self.done = upto
        while len(pending) >= 2 * CHUNK:
            self.made.append(tuple(pending[:CHUNK]))
            del pending[:CHUNK]
        if self.number < len(self.parts) or self.done < self.stop:
            return None
        made = Keys.__new__(Keys)
        if self.made and len(pending) >= CHUNK:
            self.made.append(tuple(pending[:CHUNK]))
            del pending[:CHUNK]
        _fill(made, tuple(self.made), pending)
        self.result = made
        return made

    def union(self) -> Keys:
        """The union, at once."""
        while (made := self.step()) is None:
            pass
        return made


def sort_in_pieces(ids: Sequence[int], key: Sequence[int]) -> Iterator[Keys | None]:
    """The order keys of message ids sorted, as `Keys` laid out as `owning` lays them out: None after each
    `8 * CHUNK` ids looked up and sealed, and after each step of a merge. A fold's sources ascend but where an
    instance's own follow the global ones: two runs, merged a part at a time (`Merging`); more are sorted at once.
    A whole kind's hundred thousand keys are each a cache miss: looked up, sorted and sealed at once they are
    more than a frame."""
    items: list[int] = []
    sealed: list[Chunk] = []
    descents: list[int] = []
    size, each = len(ids), iter(ids)
    while len(items) < size:
        low = max(1, len(items))
        items += [key[m] for m in islice(each, 8 * CHUNK)]
        descents += compress(range(low, len(items)), map(lt, items[low:], items[low - 1 : -1]))
        seal(items, 0, sealed, descents[0] if descents else len(items))
        if len(items) < size:
            yield None
    if len(descents) > 1:
        yield Keys.owning(sorted(items))
        return
    first = Keys.run(items, 0, descents[0] if descents else size, sealed)
    merging = Merging(first, items, descents[0], size) if descents else None
    while merging is not None and merging.step() is None:
        yield None
    yield first if merging is None else merging.union()


def sealed_chunks(sources: Iterable[Sequence[int]]) -> list[Chunk]:
    """The sealed chunks of those of `sources` kept in chunks (a list to let go of a chunk at a time)."""
    return [chunk for items in sources if isinstance(items, _Chunked) for chunk in items._chunks]


def _chunks_of(items: Sequence[int]) -> list[Chunk]:
    """Chunks holding `items`: those of `Ids` (their tail copied), else copies."""
    if isinstance(items, Ids):
        visible = items._size - items._sealed
        return [*items._chunks, *([tuple(items._tail[:visible])] if visible else [])]
    return [tuple(items[at : at + CHUNK]) for at in range(0, len(items), CHUNK)]


def _same_items(a: _Chunked, b: _Chunked) -> bool:
    """Whether two keys of the same size hold the same items, touching only the chunks they do not share:
    keys edited from one another share every chunk but those an edit copied (comparing the keys one by one
    reads each of thousands of integers scattered in memory).

    Keys laid out alike (`owning`, `run`: chunks of `CHUNK` from the first) compare chunk by chunk as tuples,
    which tells the same integer object at once by its address: two folds of the same messages hold the order
    keys the order made, so a hundred thousand keys compare without reading one."""
    visible = a._size - a._sealed
    if a._sealed == b._sealed and a._offsets == b._offsets:
        tail = b._tail
        return (a._tail is tail or a._tail[:visible] == tail[:visible]) and all(
            mine is chunk or mine == chunk for mine, chunk in zip(a._chunks, b._chunks, strict=True))
    if visible != b._size - b._sealed or not (a._tail is b._tail or a._tail[:visible] == b._tail[:visible]):
        return not any(map(ne, a, b))  # (stops at the first that differs)
    ours, theirs = a._chunks, b._chunks
    low, high, top = 0, len(ours), len(theirs)
    while low < min(high, top) and ours[low] is theirs[low]:
        low += 1
    while high > low and top > low and ours[high - 1] is theirs[top - 1]:
        high, top = high - 1, top - 1
    return not any(map(ne, chain(*ours[low:high]), chain(*theirs[low:top])))


def _fill(keys: _Chunked, chunks: tuple[Chunk, ...], tail: list[int]) -> None:
    """Set `keys` to `chunks` and then `tail` (taken as it is), the tail sealed into chunks when long."""
    if not chunks and len(tail) < 2 * CHUNK:  # (most results)
        keys._chunks = keys._offsets = ()
        keys._sealed, keys._tail, keys._size = 0, tail, len(tail)
        return
    if len(tail) >= 2 * CHUNK:
        whole = len(tail) - len(tail) % CHUNK
        chunks = (*chunks, *(tuple(tail[at : at + CHUNK]) for at in range(0, whole, CHUNK)))
        tail = tail[whole:]
    offsets = tuple(accumulate(map(len, chunks), initial=0))  # (loops in C: a whole kind has about 25 chunks)
    keys._chunks, keys._offsets = chunks, offsets[:-1]
    keys._sealed, keys._tail, keys._size = offsets[-1], tail, offsets[-1] + len(tail)


EMPTY_KEYS = Keys()
