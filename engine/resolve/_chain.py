"""A persistent sequence that only grows at its end: the diagnostics a fold collects, kept once.

A fold appends a problem per failed write; folds are copied at every step, kept at checkpoints and
spliced onto the old rest of a fold after an edit. With a `Chain` each of those is O(1) — appending
links one node onto the shared past, a checkpoint keeps the node it is at, a splice is one node saying
"these, then the old one's items from here on" — so what an edit costs does not grow with the number
of conflicts a document has. The items are worked out only when read (`items`), which is what a
resolution's `diagnostics` does the first time it is read.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterator
from heapq import merge
from operator import itemgetter
from typing import Any

# A splice of a splice of ... is read recursively: past this depth the items are worked out once.
_DEEPEST = 24
# Changes an edited chain holds before its items are worked out once.
_PENDING = 64


class Chain:
    """The empty chain; every other chain is a `_Link`, an `_Edited` or a `_Flat` of one."""

    __slots__ = ("depth", "size")

    def __init__(self, size: int = 0, depth: int = 0) -> None:
        self.size, self.depth = size, depth

    def __len__(self) -> int:
        return self.size

    def plus(self, item: Any) -> Chain:
        """This chain with `item` at the end (this one is shared, not copied)."""
        return _Link(self, item)

    def joined(self, rest: Chain, cut: Chain) -> Chain:
        """This chain, then the items of `rest` after its first `len(cut)` ones (`cut` is a chain that
        `rest` grew from). `rest` itself when this chain is `cut`."""
        if self is cut:
            return rest
        if rest is cut:
            return self
        joined = _Edited(self, rest, cut.size, _NONE, ())
        return _Flat(joined.items()) if joined.depth > _DEEPEST else joined

    def edited(self, head: Chain, cut: int, lost: frozenset[Any], gained: tuple[Any, ...]) -> Chain:
        """`head`, then this chain's items after its first `cut` ones, less those in `lost` and with `gained` merged in:
        items are (order key, ...) and those after `cut` are in key order (the problems of one layer).

        An edit of an edit with the same cut is one edit (its changes united), so repeated edits of one fold do not
        nest; its items are worked out once the changes pile up."""
        below, links = self, []
        while isinstance(below, _Link):  # problems appended since the last edit: changes too
            links.append(below.item)
            below = below.before
        if isinstance(below, _Edited) and below.head.size == cut:
            dropped = set(below.lost)
            kept = dict.fromkeys((*below.gained, *reversed(links)))
            for item in lost:
                if item in kept:
                    del kept[item]
                else:
                    dropped.add(item)
            for item in gained:
                if item in dropped:
                    dropped.discard(item)
                else:
                    kept[item] = None
            edited = _Edited(head, below.rest, below.cut, frozenset(dropped), tuple(sorted(kept, key=itemgetter(0))))
            return _Flat(edited.items()) if len(dropped) + len(kept) > _PENDING else edited
        edited = _Edited(head, self, cut, lost, gained)
        return _Flat(edited.items()) if edited.depth > _DEEPEST else edited

    def items(self) -> tuple[Any, ...]:
        """The items, first to last."""
        found: list[Any] = []
        _emit(self, 0, found)
        return tuple(found)

    def first(self, count: int) -> Chain:
        """The chain of this one's first `count` items. Of a flat chain (`flattened`) it shares the items:
        the checkpoints of one fold hold prefixes of one sequence of problems, read once."""
        flat = self if isinstance(self, _Flat) else _Flat(self.items())
        return flat if count == flat.size else _Flat(flat.flat, count)

    def flattened(self) -> Chain:
        """A chain of the same items that holds them in one tuple (read once here, never again)."""
        return self if isinstance(self, _Flat) or not self.size else _Flat(self.items())


EMPTY = Chain()
_NONE: frozenset[Any] = frozenset()


class _Link(Chain):
    __slots__ = ("before", "item")

    def __init__(self, before: Chain, item: Any) -> None:
        super().__init__(before.size + 1, before.depth)
        self.before, self.item = before, item


class _Edited(Chain):
    """`head`, then the items of `rest` after its first `cut`, less `lost` and with `gained` merged in by key
    (neither: a join)."""

    __slots__ = ("cut", "gained", "head", "lost", "rest")

    def __init__(self, head: Chain, rest: Chain, cut: int, lost: frozenset[Any], gained: tuple[Any, ...]) -> None:
        super().__init__(head.size + rest.size - cut - len(lost) + len(gained), max(head.depth, rest.depth) + 1)
        self.head, self.rest, self.cut, self.lost, self.gained = head, rest, cut, lost, gained


class _Flat(Chain):
    """The first `size` items of a tuple (all of it, or a prefix shared with a longer chain: `first`)."""

    __slots__ = ("flat",)

    def __init__(self, items: tuple[Any, ...], size: int | None = None) -> None:
        super().__init__(len(items) if size is None else size, 0)
        self.flat = items


def unlinked(chain: Chain) -> Iterator[None]:
    """Let go of `chain` a link at a time from its end, a step each (`let_go`): a long chain freed in steps."""
    while isinstance(chain, _Link):
        chain = chain.before
        yield


def _emit(chain: Chain, start: int, out: list[Any]) -> None:
    """Append the items of `chain` from index `start` on to `out`.

    A splice is "a new prefix, then an old chain from some index on", and the old chain is often itself a splice of the
    same past: reading from an index skips straight past what is cut, so every item is visited once (reading each part
    whole and then cutting it would visit shared parts 2**depth times)."""
    links: list[Any] = []
    wanted = chain.size - start  # links are walked back only as far as the items read
    while isinstance(chain, _Link) and len(links) < wanted:  # in a loop: chains are long
        links.append(chain.item)
        chain = chain.before
    if isinstance(chain, _Link):  # every item read is one of the links walked
        links.reverse()
        out.extend(links)
        return
    below = chain.size
    if start < below:
        if isinstance(chain, _Edited):
            skip = max(0, start - chain.head.size)
            if not skip:
                _emit(chain.head, start, out)
            if not chain.lost and not chain.gained:  # a join: the rest read from where it is wanted
                _emit(chain.rest, chain.cut + skip, out)
            else:
                rest: list[Any] = []
                _emit(chain.rest, chain.cut, rest)
                if chain.lost:
                    rest = [item for item in rest if item not in chain.lost]
                if len(chain.gained) > 8:
                    rest = list(merge(rest, chain.gained, key=itemgetter(0)))
                else:
                    for item in chain.gained:
                        insort(rest, item, key=itemgetter(0))
                out.extend(rest[skip:] if skip else rest)
        elif isinstance(chain, _Flat):
            flat = chain.flat
            out.extend(flat[start:below] if start or below < len(flat) else flat)
    if links:
        links.reverse()
        out.extend(links[start - below :] if start > below else links)
