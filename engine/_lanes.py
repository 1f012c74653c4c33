"""Lane logs: a lane folded once for `resolve`, so that a later resolve of any path in it reads the log.

A reference nobody watches used to fold its whole lane (`_index.fold_lane`) on every `resolve`. The
fold itself does not depend on the path followed: only what the probe notes does. So the first resolve
in a lane folds it once with no probe and keeps, per write, what any probe would need afterwards:

- a write that failed: its problem and the path it concerns (None: every path);
- a write that applied: its *shape*, what `_fold._effect` reads of the root before it — whether each
  node strictly above the write's path was a container, and the value at the write's path reduced to
  what a method's `effect` reads of it (`reduced`);
- every `MARK_EVERY` writes (more in a long lane: at most `MOST_MARKS` per log), the root itself (a
  persistent value: it shares structure, but keeps what the writes since the last mark copied).

A resolve of a path in that lane then takes its value from the root (the last one, or a mark and at most
the writes after it replayed, for `at`), its sources by walking the log back to the write that last
replaced the path, and its problems from chains kept per concerned path (`Chain` nodes, shared). The
result is the probe's result exactly: `tests/engine/test_lanes.py` compares it with the reference fold
after random edits and at random cuts.

Instance views continue from the log of their lane's global layer (folded once for every instance), from
its root after as many of its writes as come before the cut: one instance log per such start, so a cut
that moves past an instance write reads the same log again.
Logs are dropped, never repaired, by an edit that can change them — a write in their lane, a universal
write, a write inside a gap the fold scanned (`_index`), a global write under an instance view — and all
of them when the order is relabelled. An edit when nothing is kept costs one test. At most `MOST_STEPS`
folded writes are kept over all logs, the least recently read dropped first.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from ._chain import EMPTY, Chain
from ._expressions import Reference
from ._index import Gap, Lane, Layer, State, attempt, fold_lane, lanes_of
from ._messages import MISSING, Path, Write, get_path
from ._methods import WRITE_METHODS
from ._values import is_index
from ._watches import Found

if TYPE_CHECKING:
    from ._store import Store

# A root kept every this many writes of a log (`at` replays fewer than this many), or fewer roots in a long
# lane (a whole kind): each keeps the containers the writes since the last one copied.
MARK_EVERY = 32
MOST_MARKS = 8
# Folded writes kept over all logs (see docs/performance.md for what that is in memory).
MOST_STEPS = 150_000
# Results of one log remembered per (path, cut), for a path resolved again.
_RESULTS = 64

LogKey = tuple[str, str | None, Lane, int]  # kind, instance, lane, global steps it continues from


class Sized(list[Any]):
    """An array as a shape keeps it: its length, and no elements (what a method's `effect` reads of one)."""

    __slots__ = ("length",)

    def __init__(self, length: int) -> None:
        super().__init__()
        self.length = length

    def __len__(self) -> int:
        return self.length


_ARRAYS: dict[int, Sized] = {}  # one per length (shared: never written to), for the shorter arrays
_SHARED_LENGTHS = 4096
_NO_KEYS: dict[str, Any] = {}  # an object whose keys no effect reads (shared: never written to)


def reduced(before: Any, new: Any) -> Any:
    """The value before a write, reduced to what a method's `effect(before, new, rest)` reads of it, for
    any `rest`: an array's length, an object's keys that `new` names too (recursively, where `new` is
    an object as well), a scalar as it is. `tests/engine/test_lanes.py` checks every method against it."""
    if isinstance(before, list):
        length = len(before)
        shape = _ARRAYS.get(length)
        if shape is None:
            shape = Sized(length)
            if length < _SHARED_LENGTHS:
                _ARRAYS[length] = shape
        return shape
    if isinstance(before, dict):
        if not isinstance(new, dict):
            return _NO_KEYS
        kept = {key: reduced(before[key], value) for key, value in new.items() if key in before}
        return kept or _NO_KEYS
    return before


def toward(write: Write, lane: Lane) -> Any:
    """What of a write's new value the probes of a lane's log walk: its lane's key at the root, nothing
    in a whole kind's log (whose one probe is the root itself), else all of it. `reduced` reads the value
    before the write along this only."""
    if lane is None:
        return None
    new = write.value
    if not write.path and isinstance(new, dict):
        return {lane: new[lane]} if lane in new else _NO_KEYS
    return new


_SHAPES: dict[tuple[bool, ...], tuple[bool, ...]] = {}  # interned: few distinct ones


def along(root: Any, path: Path) -> tuple[tuple[bool, ...], Any]:
    """Whether each node strictly above `path` (the root, then each parent) is a container, and the value
    at `path` (as `get_path` reads it: one walk for both)."""
    flags = []
    node = root
    for segment in path:
        flags.append(isinstance(node, dict | list))
        if isinstance(node, dict):
            node = node.get(segment, MISSING)
        elif isinstance(node, list) and is_index(segment) and int(segment) < len(node):
            node = node[int(segment)]
        else:
            node = MISSING
    shape = tuple(flags)
    return _SHAPES.setdefault(shape, shape), node


def effect(write: Write, containers: tuple[bool, ...], before: Any, target: Path) -> str | None:
    """`_fold._effect(write, root, target)` from the write's shape (`along`, `reduced`) instead of the root."""
    path = write.path
    size = len(path)
    if target[:size] != path:
        if path[: len(target)] != target:
            return None
        return "add" if containers[len(target)] else "reset"
    return WRITE_METHODS[write.method].effect(before, write.value, target[size:])


class _Recorder(State):
    """A fold with no probe that logs every step (`fold_lane` drives it like any state)."""

    __slots__ = ("log",)

    def __init__(self, log: LaneLog, root: Any) -> None:
        super().__init__([], root)
        self.log = log

    def step(self, message_id: int, write: Write, order_key: int) -> None:
        log, root = self.log, self.root
        if len(log.keys) % log.every == 0:
            log.marks.append(root)
        updated, reason, concerns = attempt(root, write)
        log.keys.append(order_key)
        log.writes.append(write)
        if reason is not None:
            log.above.append(None)
            log.before.append(None)
            log.fail(order_key, reason, concerns)
            return
        containers, before = along(root, write.path)
        log.above.append(containers)
        log.before.append(reduced(before, toward(write, log.lane)))
        self.root = updated


class LaneLog:
    """One layer's writes that can matter to one lane, folded once: per step its order key and its shape
    (None when it failed), the root every `MARK_EVERY` steps and at the end, and the problems."""

    __slots__ = ("above", "base", "before", "dependents", "every", "failures", "gaps", "groups", "keys", "lane",
                 "layer", "marks", "results", "root", "writes")

    def __init__(self, layer: Layer, lane: Lane, base: LaneLog | None) -> None:
        self.layer, self.lane, self.base = layer, lane, base
        self.every = max(MARK_EVERY, -(-len(layer.subset(lane)) // MOST_MARKS))  # steps between marks
        self.dependents: list[LogKey] = []  # the instance logs that continue from this one
        # Per step, in parallel lists (no object per step for the collector to walk): its order key, its
        # write, and its shape (`along`, `reduced`; None when it failed).
        self.keys: list[int] = []
        self.writes: list[Write] = []
        self.above: list[tuple[bool, ...] | None] = []
        self.before: list[Any] = []
        self.marks: list[Any] = []  # the root before steps 0, every, 2 * every, ...
        self.root: Any = MISSING
        self.gaps: list[tuple[int | None, int | None]] = []  # order keys strictly between which it scanned
        # Per path a failed write concerns (None: every path), the step counts and chains so far.
        self.groups: dict[Path | None, tuple[list[int], list[Chain]]] = {}
        self.failures: list[tuple[int, Path | None, tuple[int, str]]] = []  # (step count, concerns, problem)
        self.results: dict[tuple[Path, int], Found] = {}

    def fail(self, order_key: int, reason: str, concerns: Path | None) -> None:
        problem = (order_key, reason)
        self.failures.append((len(self.keys), concerns, problem))
        counts, chains = self.groups.setdefault(concerns, ([], []))
        counts.append(len(self.keys))
        chains.append((chains[-1] if chains else EMPTY).plus(problem))

    def size(self) -> int:
        return len(self.keys)

    def count(self, limit: int | None) -> int:
        """How many steps have an order key up to `limit` (all when None)."""
        return len(self.keys) if limit is None else bisect_right(self.keys, limit)

    def root_at(self, count: int) -> Any:
        """The root after the first `count` steps: from the mark before, the rest replayed."""
        if count == len(self.keys):
            return self.root
        mark = count // self.every
        root = self.marks[mark]
        writes = self.writes
        for position in range(mark * self.every, count):
            root = attempt(root, writes[position])[0]  # a write that failed leaves it as it is
        return root

    def problems(self, path: Path, count: int, chain: Chain) -> Chain:
        """`chain` and then the problems of the first `count` steps that concern `path`."""
        related = [concerns for concerns in self.groups if _related(concerns, path)]
        if not related:
            return chain
        if len(related) == 1:  # the usual case: one shared chain, cut at `count`
            counts, chains = self.groups[related[0]]
            at = bisect_right(counts, count)
            return chain.joined(chains[at - 1], EMPTY) if at else chain
        for done, concerns, problem in self.failures:
            if done > count:
                break
            if _related(concerns, path):
                chain = chain.plus(problem)
        return chain


def _related(concerns: Path | None, path: Path) -> bool:
    """Whether a problem concerning `concerns` is one of `path`'s (one is a prefix of the other)."""
    if concerns is None:
        return True
    size = min(len(concerns), len(path))
    return concerns[:size] == path[:size]


class LaneLogs:
    """The lane logs of one context: made on first use, read by `resolve`, dropped by edits (see above)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._logs: OrderedDict[LogKey, LaneLog] = OrderedDict()  # least recently read first
        self._kinds: dict[str, dict[LogKey, None]] = {}
        self._steps = 0
        self._generation = store.order.generation

    def found(self, ref: Reference, instance: str | None, limit: int | None) -> Found:
        """`ref`'s result in the view of `instance` up to order key `limit` (None: all), from the logs."""
        store = self._store
        if self._generation != store.order.generation:  # a relabel changed every key
            self.clear()
            self._generation = store.order.generation
        lane = ref.path[0] if ref.path else None
        glob = self._log((ref.kind, None, lane, 0), None)
        parts: tuple[LaneLog, ...] = (glob,)
        counts = [glob.count(limit)]
        if instance is not None:  # the instance layer, from the global fold at the cut
            own = self._log((ref.kind, instance, lane, counts[0]), glob)
            parts, counts = (glob, own), [counts[0], own.count(limit)]
        own, count = parts[-1], counts[-1]
        path = ref.path
        memo = (path, count if limit is not None else -1)
        known = own.results.get(memo)
        if known is not None:
            return known
        value = get_path(own.root_at(count), path)
        keys: tuple[int, ...] = ()
        if value is not MISSING:
            keys = _sources(parts, counts, path)
        problems = EMPTY
        for part, done in zip(parts, counts, strict=True):
            problems = part.problems(path, done, problems)
        found = Found(value, keys, problems)
        if len(own.results) >= _RESULTS:
            own.results.clear()
        own.results[memo] = found
        return found

    def _log(self, key: LogKey, base: LaneLog | None) -> LaneLog:
        log = self._logs.get(key)
        if log is not None:
            self._logs.move_to_end(key)
            return log
        store = self._store
        kind, instance, lane, start = key
        layer = store.layers.get((kind, instance)) or Layer()
        log = LaneLog(layer, lane, base)
        recorder = _Recorder(log, MISSING if base is None else base.root_at(start))
        gaps: list[Gap] = []
        order_key = store.order.key.__getitem__
        fold_lane(recorder, layer, lane, store.writes, order_key, None, gaps)
        log.root = recorder.root
        log.gaps = [(None if g.before is None else order_key(g.before), None if g.after is None else order_key(g.after))
                    for g in gaps]
        self._logs[key] = log
        self._kinds.setdefault(kind, {})[key] = None
        if base is not None:
            base.dependents.append(key)
        self._steps += log.size()
        while self._steps > MOST_STEPS and len(self._logs) > 2:  # keep this one (and its base)
            oldest = next(iter(self._logs))
            if oldest == key or self._logs[oldest] is base:
                self._logs.move_to_end(oldest)
                continue
            self._drop(oldest)
        return log

    def _drop(self, key: LogKey) -> None:
        log = self._logs.pop(key, None)
        if log is None:
            return
        del self._kinds[key[0]][key]
        self._steps -= log.size()
        for dependent in log.dependents:  # instance logs continue from it
            self._drop(dependent)

    def clear(self) -> None:
        self._logs.clear()
        self._kinds.clear()
        self._steps = 0

    def touch(self, identity: tuple[str, str | None], write: Write, order_key: int) -> None:
        """A write of `identity` at `order_key` is being added or removed: drop every log it can change."""
        kind, instance = identity
        keys = self._kinds.get(kind)
        if not keys:
            return
        lanes = lanes_of(write)
        for key in list(keys):
            log = self._logs.get(key)
            if log is None:
                continue
            _, view, lane, _ = key
            if instance is not None and view != instance:
                continue
            if lanes is None or lane is None or lane in lanes or _inside(log, instance, order_key):
                self._drop(key)


def _inside(log: LaneLog, instance: str | None, order_key: int) -> bool:
    """Whether `order_key` falls in a gap that the fold of the layer of `instance` scanned for `log`."""
    part = log.base if instance is None and log.base is not None else log
    return any((low is None or low < order_key) and (high is None or order_key < high) for low, high in part.gaps)


def _sources(parts: tuple[LaneLog, ...], counts: list[int], path: Path) -> tuple[int, ...]:
    """The order keys of the sources of `path`: walking the steps back to the write that last replaced it."""
    keys: list[int] = []
    for part, count in zip(reversed(parts), reversed(counts), strict=True):
        writes, shapes, befores, order = part.writes, part.above, part.before, part.keys
        for position in range(count - 1, -1, -1):
            shape = shapes[position]
            if shape is None:  # failed
                continue
            found = effect(writes[position], shape, befores[position], path)
            if found is None:
                continue
            keys.append(order[position])
            if found == "reset":
                return tuple(sorted(set(keys)))
    return tuple(sorted(set(keys)))

