"""Where two folds of a lane differ, and whether the rest of the lane keeps them apart.

A track repairs its fold after an edit by splicing the old rest on once the new fold is *equivalent* to the old one
(`_tracks`). Often the two never become equal: a replaced `set` of a field nobody sets later, or a global write under an
instance layer, leaves one field different for good. But when the two roots differ only at a few paths (`differences`),
and every later write of the lane either leaves those paths alone or replaces what is there whatever it was (`cover`),
the later writes act the same on both: the old rest is the new fold with the differing values put back (`Patch`), up to
the write that replaced each. Arrays only appended to get the same treatment with their part past the start both have
put back (a lane's own in `patch_to`; one below a lane, `Difference.at`), and objects whose keys two folds created in
different orders (the same keys) with their order put back.

Decided from the writes' paths, methods and values alone; `tests/engine/resolve/test_patch.py` checks the lemma.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, islice
from operator import is_not
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ...protocol._messages import MISSING, Path, Write, get_path, is_index, segment_index
from ...protocol._methods import WRITE_METHODS, Owned

if TYPE_CHECKING:
    from ._index import Layer


class Patch(NamedTuple):
    """Where the roots of a new fold differ from an old one's, in a way later writes keep: at `path`
    the value is `new` instead of `old`; with `prefix`, the array there holds `new` instead of `old` from
    index `at` on, before the elements the writes in between appended to both (its first `at` elements
    are the same on both sides, and may have been written into alike); with `order`, the object there
    has its first keys in the order `new` (a tuple of keys) instead of `old`, before the keys the writes
    in between added to both (its values are as they are, or patched by patches of their own)."""

    path: Path
    new: Any
    old: Any
    prefix: bool = False
    at: int = 0
    order: bool = False


class Difference(NamedTuple):
    """A place where two roots differ (`differences`): the value at `path` (`gone`: a key only the old side
    has), or with `order` only the order of the keys of the object there (their values may differ further down).
    Below a lane, two arrays are told apart from their first `at` elements on, which both have (-1: values)."""

    path: Path
    order: bool = False
    gone: bool = False
    at: int = -1


_T = TypeVar("_T")
Patches = list[tuple[Patch, int | None]]  # each with the order key of the write where it stops applying


@dataclass(slots=True)
class Seen:
    """What `patch_to` found at the checkpoints one repair asked it at, for the next: the order key of a write that acts
    by what it is on a difference the rest of the lane does not cover before it (`until`: the difference stays as it
    is until then, and so does the answer, None), a path where the two roots differed (`differs_at`, checked
    first: an element replaced stays apart write after write), and per array how many elements the two start with
    alike (`starts`: the same writes step both sides, so those stay alike, and a later walk starts there)."""

    until: int | None = None
    differs_at: Path | None = None
    starts: dict[Path, int] = field(default_factory=dict)


def patch_to(now: Any, then: Any, lane: str | None, paths: list[Path], layer: Layer, after: int | None,
        writes: Sequence[Write], key: Callable[[int], int], appends: bool, seen: Seen) -> Patches | None:
    """How an old fold's rest — the writes of `layer` after order key `after` (None: all of them) —
    becomes the new fold's, given their roots there: the patches (none when the two are equivalent),
    each with the order key of the write from which the two agree there again (None: none); None when
    the old rest cannot be reused. `appends`: every write of the rest appends to the lane's array.
    `seen`: what the repair's checkpoints before found.

    A whole-kind track (`lane` None) is patched the same way: each difference lies in some lane, and
    only that lane's writes (`Layer.subset`) can act on it."""
    lanes = lane is not None and isinstance(now, dict) and isinstance(then, dict)  # (else the roots are compared)
    new, old = (now.get(lane, MISSING), then.get(lane, MISSING)) if lanes else (now, then)
    seen.differs_at = apart_at(new, old, seen.differs_at)
    if seen.differs_at is None:
        return []
    if lane is not None and lanes and type(new) is list and type(old) is list and bool(new) == bool(old):
        subset = layer.subset(lane)  # (one empty and one not: appends act apart)
        position = 0 if after is None else bisect_right(subset, after, key=key)
        stop, replaces, largest = (None, False, -1) if appends else keeps_start(layer, subset, position, writes, lane)
        if _apart_within(new, old, largest, seen.differs_at) or (stop is not None and not replaces):
            return None  # a write acts on the part the two do not share, or on the array by what it is
        # Pushes and concats act the same on both for a probe of the whole array, and leave a probe of an element of
        # the start both have alone; a probe of a key under the array (not an index) is missing on both.
        common = Difference((lane,), at=_start_alike(new, old, seen.starts, (lane,)))
        if not any(_past_start(common, path) for path in paths):
            patch = Patch(common.path, new[common.at :], old[common.at :], prefix=True, at=common.at)
            return [(patch, None if stop is None else key(subset[stop]))]
    if seen.until is not None and (after is None or after < seen.until):
        return None  # (before the walk of the roots for their differences: a to-do list's thousands of items)
    targets = differences(now, then, lane, seen.starts)
    if targets is None or any(_past_start(t, path) for t in targets if t.at >= 0 for path in paths):
        return None
    until: dict[Difference, int | None] = {}
    for first in dict.fromkeys(target.path[0] for target in targets):
        group = tuple(target for target in targets if target.path[0] == first)
        subset = layer.subset(first)
        position = 0 if after is None else bisect_right(subset, after, key=key)
        covered, stop = once(layer, (id(subset), position, group), cover, subset, position, writes, group, layer, key)
        if stop is not None:
            seen.until = stop
            return None
        until.update(zip(group, covered, strict=True))
    return [(patch_at(t, now, then), until[t]) for t in targets]


def patch_at(target: Difference, now: Any, then: Any) -> Patch:
    """The patch that makes root `then` what root `now` is at one of their differences."""
    new, old = get_path(now, target.path), get_path(then, target.path)
    if target.at >= 0:
        return Patch(target.path, new[target.at :], old[target.at :], prefix=True, at=target.at)
    return Patch(target.path, tuple(new), tuple(old), order=True) if target.order else Patch(target.path, new, old)


def patched(root: Any, patch: Patch | None, owned: Owned | None = None) -> Any:
    """An old root as the new fold has it (the objects along the patch's path are copied). With `owned`, an array a
    patch before made is written in place: a long array patched by several splices is copied once."""
    return root if patch is None else _rebuilt(root, patch, 0, owned)


def _rebuilt(node: Any, patch: Patch, depth: int, owned: Owned | None) -> Any:
    # A module function, not a closure calling itself: that would be a reference cycle per call.
    path, new, old, prefix, at, order = patch
    if depth == len(path):
        if order:  # `new`'s keys first, in its order, then the keys added since (every key of `new` is there)
            return {**dict.fromkeys(new), **node}
        if not prefix:
            return new
        made = node if owned is not None and owned.has(node) else node.copy()  # (one copy: no slices copied twice)
        made[at : at + len(old)] = new
        return made if owned is None else owned.made(made)
    child = _rebuilt(node.get(path[depth], MISSING), patch, depth + 1, owned)  # (MISSING: a key the new side lacks)
    return {**node, path[depth]: child} if child is not MISSING else {k: v for k, v in node.items() if k != path[depth]}


# The most places at which `differences` names where two roots differ (past it they are not patched: the fold goes on).
MOST_DIFFERENCES = 4


def differences(now: Any, then: Any, lane: str | None, starts: dict[Path, int]) -> tuple[Difference, ...] | None:
    """Where in the lane (in the whole value when `lane` is None) two roots differ, each as deep as objects
    with the same keys lead: the values where those differ, and the objects whose keys are in another
    order (their values are compared further down); None when the roots are not objects, the lane is
    missing from one, they differ at the root itself, or in more than `MOST_DIFFERENCES` places."""
    if not (isinstance(now, dict) and isinstance(then, dict)):
        return None
    found: list[Difference] = []
    if lane is None:
        apart = _walk_apart(now, then, (), found, starts)
        return tuple(found) if apart and found and all(target.path for target in found) else None
    new, old = now.get(lane, MISSING), then.get(lane, MISSING)
    if new is MISSING or old is MISSING:
        return None
    return tuple(found) if _walk_apart(new, old, (lane,), found, starts) and found else None


def _walk_apart(a: Any, b: Any, path: Path, found: list[Difference], starts: dict[Path, int]) -> bool:
    """Add to `found` where `a` and `b` (at `path`) differ; False once there are more than `MOST_DIFFERENCES`. Objects
    with other keys differ at each key one lacks (an entry added to thousands), then in their order (once added)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        at = _start_alike(a, b, starts, path) if len(path) > 1 else -1  # (a lane's: `patch_to`)
        if (at == len(a) == len(b)) if at >= 0 else identical(a, b):  # (arrays walked once, not twice)
            return True
        found.append(Difference(path, at=at))
        return len(found) <= MOST_DIFFERENCES
    order = list(a) != list(b)
    if order and a.keys() != b.keys():
        found += [Difference((*path, k), gone=k in b) for k in sorted(a.keys() ^ b.keys())]
    apart = (k for k in a if k in b and a[k] is not b[k])
    walked = len(found) <= MOST_DIFFERENCES and all(_walk_apart(a[k], b[k], (*path, k), found, starts) for k in apart)
    found += [Difference(path, order=True)] if order else []
    return walked and len(found) <= MOST_DIFFERENCES


def once(layer: Layer, question: tuple[Any, ...], work: Callable[..., _T], *args: Any) -> _T:
    """`work(*args)` reading `layer`'s lists, worked out once while they stay as they are (`Layer.answers`):
    after an edit a lane's track and its kind's whole-kind track ask the same (`cover`, `keeps_start`)."""
    answers = layer.answers
    if question not in answers:
        if len(answers) >= 64:  # (global edits over an instance layer that does not change)
            answers.clear()
        answers[question] = work(*args)
    found: _T = answers[question]
    return found


def cover(subset: list[int], position: int, writes: Sequence[Write], targets: tuple[Difference, ...], layer: Layer,
        key: Callable[[int], int]) -> tuple[tuple[int | None, ...], int | None]:
    """How the writes of a lane from `position` on act on two roots that differ only at `targets`
    (`differences`): for each target, the order key of the first write that replaces it (or a parent)
    whatever it was, from where the two agree there (None: no write does, and none acts on it), and the
    order key of a write that acts on one by what it is, from where they may fold apart (None: none).

    When `subset` is a lane of `layer` (by the order `key`), targets below one node read only the writes that touch
    the keys of it they lie below (`Layer.below`): a write that touches none of them leaves every target alone, so
    skipping it changes nothing (a deep field of a lane written hundreds of times). A node below a lane's key is
    filed only when that key has `DEEP_FROM` writes or more: reading fewer costs less than filing them."""
    ids, start = subset, position
    below = _node_of(targets)
    if below is not None and layer.subset(below[0][0]) is subset:
        node, names = below
        lane_key = layer.below(node[:1], node[1], writes, key) if len(node) > 1 else None  # (below it, all of them)
        read = ([lane_key] if lane_key is not None and len(lane_key) < DEEP_FROM
                else [layer.below(node, name, writes, key) for name in names])
        ids = read[0] if len(read) == 1 else sorted(set().union(*read), key=key)
        start = 0 if not position else bisect_right(ids, key(subset[position - 1]), key=key)
    covered: list[int | None] = [None] * len(targets)
    left = len(targets)
    for index in range(start, len(ids)):
        write = writes[ids[index]]
        for number, target in enumerate(targets):
            if covered[number] is not None:
                continue
            acts = acts_on(write, target)
            if acts is False:
                return tuple(covered), key(ids[index])
            if acts:
                covered[number] = key(ids[index])
                left -= 1
        if not left:
            break
    return tuple(covered), None


DEEP_FROM = 1024


def _node_of(targets: tuple[Difference, ...]) -> tuple[Path, list[str | None]] | None:
    """The deepest node (of one segment or more) every target lies below, or is the key order of, and the key of it
    each lies below (None: its key order); None when they are in more than one lane."""
    first = targets[0].path
    depth = min(len(target.path) - (not target.order) for target in targets)
    for target in targets:
        depth = next((at for at, (a, b) in enumerate(zip(first[:depth], target.path, strict=False)) if a != b), depth)
    if depth < 1:
        return None
    return first[:depth], list(dict.fromkeys(target.path[depth] if len(target.path) > depth else None
                                             for target in targets))


def covers(write: Write, target: Path) -> bool | None:
    """How one write acts on the value at `target` (whose parents are objects): None when it leaves it
    alone (and then acts the same whatever that value is), True when it replaces it or a parent whatever
    it was, False when what it does depends on that value."""
    if write.problem is not None:
        return None
    path = write.path
    if path != target[: len(path)]:
        return False if target == path[: len(target)] else None  # inside the target, or elsewhere
    return WRITE_METHODS[write.method].covers(write.value, target[len(path) :])


def acts_on(write: Write, target: Difference) -> bool | None:
    """How one write acts on a difference (`covers`). The order of an object's keys is left alone by every
    write that does not replace the object: a write inside it adds its key at the end if it is new, and a
    method that `keeps_order` acts on the object by what it is but keeps its keys' order. Two arrays apart past the
    start both have (`at`) are acted on alike by an append, a write into that start, or one under a key of them."""
    if target.at >= 0 and write.problem is None:
        size = len(target.path)
        if write.path[:size] == target.path and (len(write.path) > size or WRITE_METHODS[write.method].appends):
            return False if _past_start(target, write.path) else None  # appended to alike, or into the start both have
    acts = covers(write, target.path)
    if target.gone and acts:  # a key only the old side had, made again: at the end on the new side alone
        return False
    if acts is not False or not target.order:
        return acts
    if len(write.path) > len(target.path) or WRITE_METHODS[write.method].keeps_order:
        return None
    return False


def _start_alike(new: Any, old: Any, starts: dict[Path, int], path: Path) -> int:
    """How many elements two arrays at `path` start with alike (the same objects, or identical), walked from where
    they parted before (`Seen.starts`); -1 when they are not both arrays, or one is empty and the other is not
    (appending would not act the same on both)."""
    if not (isinstance(new, list) and isinstance(old, list)) or bool(new) != bool(old):
        return -1
    size, start = min(len(new), len(old)), starts.get(path, 0)
    apart = compress(range(start, size), map(is_not, islice(new, start, None), islice(old, start, None)))  # (in C)
    at = starts[path] = next((at for at in apart if not identical(new[at], old[at])), size)
    return at


def _apart_within(new: list[Any], old: list[Any], last: int, differs_at: Path | None) -> bool:
    """Whether two arrays differ at an index up to `last` (one lacking it counts): at once where they were found apart
    (`differs_at`, below an element: one replaced), else walked from `last` down. An element inserted or removed
    shifts every one past it, so where a write past the start both have acts on the part they do not share (an item
    inserted into a list, items marked by index), the walk ends at once."""
    if last < 0:
        return False
    if differs_at and is_index(differs_at[0]) and segment_index(differs_at[0]) <= last:
        return True
    return last >= min(len(new), len(old)) or not all(
        new[i] is old[i] or identical(new[i], old[i]) for i in range(last, -1, -1))


def _past_start(target: Difference, path: Path) -> bool:
    """Whether `path` is an element (or below one) of the arrays of `target` past the start both have."""
    size = len(target.path)
    return target.at >= 0 and len(path) > size and path[:size] == target.path and is_index(path[size]) and (
        segment_index(path[size]) >= target.at)


def keeps_start(layer: Layer, subset: list[int], position: int, writes: Sequence[Write],
        lane: str) -> tuple[int | None, bool, int]:
    """How the writes of a lane (`subset`, of `layer`) from `position` on act on two arrays there that differ only
    past the start both have (`patch_to`): the position of the first write that replaces the array or acts on it
    whatever its start is (None: none), whether it replaces it, and the largest index written into before it (-1:
    none). The two stay apart up to that write only where that index is below their common start.

    Kept: a push or a concat at the lane (it appends to both), a write under a key of the array that is not an index (it
    fails on both alike: its problem names no length), a write into an element of the common start, and a write with a
    problem of its own. What the writes do is read once for every position up to the first such write while the
    layer's lists stay as they are (`once`): a repair asks at each old checkpoint past its edit, and a global push onto
    an array asks it of each instance layer under it."""
    question = (id(subset), lane)
    read = layer.answers.get(question)
    if read is not None and not (read[0] <= position and (read[1] is None or position <= read[1])):
        del layer.answers[question]  # (read from later on, or up to a write before `position`)
    _, stop, replaces, positions, largest = once(layer, question, _first_writes, subset, position, writes, lane)
    first = bisect_left(positions, position)
    return stop, replaces, largest[first] if first < len(largest) else -1


def _first_writes(subset: list[int], start: int, writes: Sequence[Write],
        lane: str) -> tuple[int, int | None, bool, list[int], list[int]]:
    """What `keeps_start` reads of a lane's writes from position `start` on: `start`, the position of the first that
    replaces the array or acts on it whatever its start is (None: none), whether it replaces it (`covers`), and the
    positions of the writes into an element before it, each with the largest index written into from there on."""
    positions: list[int] = []
    indices: list[int] = []
    for position in range(start, len(subset)):
        write = writes[subset[position]]
        path = write.path
        if write.problem is not None or (path == (lane,) and WRITE_METHODS[write.method].appends is not None):
            continue
        if len(path) > 1 and path[0] == lane:
            if is_index(path[1]):
                positions.append(position)
                indices.append(segment_index(path[1]))
        elif (acts := covers(write, (lane,))) is not None:
            return start, position, acts, positions, [*accumulate(reversed(indices), max)][::-1]
    return start, None, False, positions, [*accumulate(reversed(indices), max)][::-1]


def identical(a: Any, b: Any) -> bool:
    """JSON values equal in type, value and key order (1, 1.0 and True are three different values)."""
    return a is b or _first_apart(a, b, ()) is None


def apart_at(a: Any, b: Any, last: Path | None) -> Path | None:
    """A path at which two JSON values are not `identical` (as deep as objects with the same keys and arrays of one
    length lead); None when they are identical. `last`, where they were apart before the same write stepped both, is
    checked first: they stay apart there until a write acts on it."""
    if last is not None and not identical(get_path(a, last), get_path(b, last)):
        return last
    return _first_apart(a, b, ())


def _first_apart(a: Any, b: Any, path: Path) -> Path | None:
    """`apart_at` walking from the start. The pairs that are the very same object (most of two folds' roots:
    persistent values share what did not change) are skipped in C, not visited."""
    kind = type(a)
    if kind is not type(b):
        return path
    if kind is dict:
        keys, x, y = a.keys(), a.values(), b.values()
        if list(a) != list(b):
            return path
        if not any(map(is_not, x, y)):  # (a small object each side made alike: a to-do list's items)
            return None
    elif kind is list:
        keys, x, y = range(len(a)), a, b
        if len(a) != len(b):
            return path
    else:
        return None if a == b else path
    for key, one, other in compress(zip(keys, x, y, strict=True), map(is_not, x, y)):
        if (found := _first_apart(one, other, (*path, str(key)))) is not None:
            return found
    return None
