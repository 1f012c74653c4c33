"""Branches: the writes of one layer that can matter to a path and below it, folded without the others.

`_index` folds a *lane* (the first segment of a path) apart from the rest of its identity: while the root
is an object, a write in another lane only touches other keys. The same holds one level down, and at
every level: while the node at `branch[:k]` is an object, a write under `branch[:k]` that does not reach
`branch[:k + 1]` (a sibling's path, or a merge or assign of an object that does not name `branch[k]`) only
touches other keys of that node. So a fold of the paths at and below `branch` steps only the writes that
*touch* it (`touches`), and, while the node at some `branch[:k]` is not an object (missing, a scalar, an
array), every write that touches `branch[:k]` (a *gap* at level k, as `_index`'s gaps are at level 0).

What such a fold gives equals the fold of every write, for `branch` and every path below it: the value,
which writes changed it (`_lanes` keeps that), and which failed with a problem that concerns such a
path. The nodes above `branch` lack the keys of writes not stepped, but their types are right, and
everything at and below `branch` is. (One difference, shared with lanes: a write elsewhere whose value
is nested too deeply to merge is a problem of every path in the full fold.)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, Protocol

from ...protocol._messages import MISSING, Path, Write
from ...protocol._methods import WRITE_METHODS
from ._index import Key, Layer

Branch = Path  # a path a fold follows with everything below it: () is a whole kind, (lane,) a lane


def touches(write: Write, branch: Branch) -> bool:
    """Whether `write` can change the value at `branch` or below it while every node above `branch` is an
    object: a write with a problem (a problem of every path), a write at or below `branch`, or a write
    above it that reaches down to it (`Method.covers` is not None)."""
    if write.problem is not None:
        return True
    path = write.path
    size = len(path)
    if path[: len(branch)] != branch[:size]:
        return False  # neither is a prefix of the other
    return size >= len(branch) or WRITE_METHODS[write.method].covers(write.value, branch[size:]) is not None


class Stepper(Protocol):
    root: Any

    def step(self, message_id: int, write: Write) -> None: ...


def _open_level(root: Any, branch: Branch) -> int:
    """The shallowest level k whose node (at `branch[:k]`) is not an object; `len(branch)` when none is."""
    node = root
    for level, segment in enumerate(branch):
        if type(node) is not dict:
            return level
        node = node.get(segment, MISSING)
    return len(branch)


def subsets_of(layer: Layer, branch: Branch, writes: Sequence[Write], key: Key) -> list[list[int] | None]:
    """Per level k (0 to `len(branch)`), the ids of the writes that touch `branch[:k]`: every write of the
    layer, the lane's, the second level's (`Layer.below`), ..., and those of `branch` itself; the levels
    between the second and the branch's are filled in when needed."""
    depth = len(branch)
    subsets: list[list[int] | None] = [None] * (depth + 1)
    subsets[0] = layer.all
    if depth:
        subsets[1] = layer.subset(branch[0])
    if depth > 1:  # the layer keeps the second level; touching `branch` implies touching each of its prefixes
        second = subsets[2] = layer.below(branch[:1], branch[1], writes, key)
        if depth > 2:
            subsets[depth] = touching(second, writes, branch)
    return subsets


def touching(ids: list[int], writes: Sequence[Write], branch: Branch) -> list[int]:
    """The ids among `ids` whose writes touch `branch` (`touches`)."""
    return [message_id for message_id in ids if touches(writes[message_id], branch)]


class BranchFold:
    """The writes of a layer that can matter to `branch` and below stepped into `state`, in order (see
    above; `subsets`: `subsets_of` the layer), as far as a resolve needs: `run(limit)` steps those up to
    order key `limit` and stops before the next (or after `most` writes), and a later `run` goes on from
    there: a first fold of thousands of writes can be done a slice at a time.

    `gaps` are the level-0 gaps (order keys strictly between which it stepped writes of other lanes because
    the root was not an object; one still open ends with None): an edit of a write of another lane there
    can change the fold; after the root is an object again, only a write of the lane can (a write that
    replaces the root is in every lane). Any write of the lane drops the fold (`_lanes`), so the lists it
    walks change under it only when it is dropped.
    """

    __slots__ = ("branch", "done", "gaps", "key", "last", "level", "state", "subsets", "writes")

    def __init__(
        self, state: Stepper, subsets: list[list[int] | None], branch: Branch, writes: Sequence[Write], key: Key
    ) -> None:
        self.state, self.subsets, self.branch, self.writes, self.key = state, subsets, branch, writes, key
        self.gaps: list[tuple[int | None, int | None]] = []
        self.level = len(branch)  # the level whose writes it walks
        self.last: int | None = None  # the id of the last write stepped
        self.done = False

    def run(self, limit: int | None = None, most: int | None = None) -> bool:
        """Step the writes up to order key `limit` (all when None), at most `most` of them (all when None):
        whether it stepped every write up to `limit` (False: `most` ran out first; a later `run` goes on)."""
        state, branch, subsets, writes, key = self.state, self.branch, self.subsets, self.writes, self.key
        gaps = self.gaps
        depth = len(branch)
        level, last = self.level, self.last
        budget = -1 if most is None else most
        while True:
            opened = _open_level(state.root, branch)
            after = None if last is None else key(last)
            if opened != level:
                if level == 0:  # a gap at the root ends with the write that made the root an object
                    gaps[-1] = (gaps[-1][0], None if after is None else after + 1)
                level = opened
                if subsets[level] is None:
                    subsets[level] = touching(subsets[2] or [], writes, branch[:level])  # level > 2
                if level == 0:
                    gaps.append((after, None))
            ids = subsets[level]
            assert ids is not None
            start = 0 if after is None else bisect_right(ids, after, key=key)
            for position in range(start, len(ids)):  # not `ids[start:]`: a copy of the rest at every call
                message_id = ids[position]
                over = limit is not None and key(message_id) > limit
                if over or not budget:
                    self.level, self.last = level, last
                    return over
                budget -= 1
                last = message_id
                write = writes[message_id]
                state.step(message_id, write)
                # At the branch's level only a write above it can make a node above it something else.
                if (level < depth or len(write.path) < depth) and _open_level(state.root, branch) != level:
                    break
            else:
                self.level, self.last, self.done = level, last, True
                return True
