"""Path logs: the writes that can matter to one path, folded once for `resolve`, read at any cut after.

A reference nobody watches is answered from a log of its own path: the first resolve of a path folds only the
writes that can matter to it (`_branches`: those that touch the path or a prefix of it, and, while
a node above it is not an object, those that touch that node) into a *path log* that keeps:

- per step its order key and its write (to replay from a mark);
- the steps that changed the path (each a reset or an addition, SPEC 4.8), their order keys, and which
  of them were resets: its sources at any cut are the keys from the last reset before it on (one slice);
- the problems of the failed writes that concern the path, as one chain (`Chain` nodes, shared);
- every `MARK_EVERY` steps (more in a long log: at most `MOST_MARKS` per log) the root before the step,
  and the root at the end (persistent values: they share structure).

A log is folded only as far as a resolve needs: up to its cut (`at`), and on from there when a later resolve cuts
further. `fold_some` does the same a few hundred steps per call (folded, or replayed from a mark towards the root at the
cut, kept as `near`), so that a caller with a time budget (the window's slices, through `Context.fold_ahead`) splits a
first fold of thousands of writes, and the resolve after it folds nothing. A resolve of the path then takes its value
from the root (the last one, or a mark and at most the steps after it replayed), its sources from the changes before the
cut, its problems from the chain cut there. The result is the reference fold's exactly:
`tests/engine/resolve/test_lanes.py` compares it after random edits and at random cuts.

Instance views continue from the log of the same path in the global layer (folded once for every instance), from its
root after as many of its steps as come before the cut: one instance log per such start, so a cut that moves past an
instance write reads the same log again. Logs are dropped, never repaired, by an edit that can change them — a write in
their lane, a universal write, a write inside a gap the fold stepped through (`_branches`), a global write under an
instance view — and all of them when the order is relabelled. An edit when nothing is kept costs one test. A dropped
log's lists go to the graveyard (`_graveyard`: in the window, freed a slice per turn, not in the edit).

The folded steps kept over all logs are bounded by the document: `STEPS_PER_MESSAGE` per message of
the context (at least `MOST_STEPS`). Past it, logs read once go first, the newest first: a pass over more
paths than fit keeps those it read first, so that a second pass finds them, where dropping the oldest
would drop each log just before the pass came back to it. Logs read again go last, the least recently
read first. While one expression is folded ahead (`holding`), the logs of its references are not dropped for
the room another of its references needs: two references whose logs together pass the bound would otherwise drop
each other at every slice, and the fold ahead would never end.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ...protocol._expressions import Reference
from ...protocol._messages import MISSING, Path, Write, get_path
from ...protocol._methods import Owned
from .._chain import EMPTY, Chain
from .._fold import _effect
from .._graveyard import let_go
from .._keys import EMPTY_KEYS, Keys, Merging, seal
from ._branches import BranchFold, subsets_of
from ._index import Checkpoint, Key, Layer, attempt, lanes_of
from ._watches import Found

if TYPE_CHECKING:
    from ._store import Identity, Store

# A root kept every this many steps of a log (`at` replays fewer than this many), or fewer roots in a long
# log (a whole kind): each keeps the containers the writes since the last one copied.
MARK_EVERY = 32
MOST_MARKS = 8
# Folded writes kept over all logs: this many per message of the context, and never fewer than `MOST_STEPS`
# (70-200 bytes a step: docs/performance.md).
STEPS_PER_MESSAGE = 2
MOST_STEPS = 150_000
# Results of one log remembered per cut, for a path resolved again.
_RESULTS = 64
# Steps a piece of an instance's sources merged with the global ones counts for in `fold_some` (a piece merges
# up to a chunk of global keys and the instance keys among them: about as long as this many folded writes).
MERGE_STEPS = 8
_LET_GO = attrgetter("ids", "changes", "change_keys", "failed", "problems_at", "marks", "sealed", "results")  # a log's

LogKey = tuple[str, str | None, Path, int]  # kind, instance, path, global steps it continues from


class _Recorder:
    """A fold of one path that logs every step (`BranchFold` drives it).

    It writes in place the containers it made since its last mark (`owned`): a lane of thousands of pushes, or a
    kind of thousands of keys, costs as many steps, not steps times its length. A mark, and the end of a run
    (`PathLog.upto`: its root can be read then), give them away."""

    __slots__ = ("lane", "log", "owned", "root")

    def __init__(self, log: PathLog, root: Any) -> None:
        self.log, self.root, self.lane = log, root, log.path[0] if log.path else None
        self.owned = Owned()

    def step(self, message_id: int, write: Write) -> None:
        log, root, owned = self.log, self.root, self.owned
        ids = log.ids
        count = len(ids)
        if count % log.every == 0:
            log.marks.append(Checkpoint(ids[-1] if ids else 0, root, None))
            owned.clear()
        ids.append(message_id)
        effect = None if write.problem is not None else _effect(write, root, log.path)  # before `root` is written
        updated, reason, concerns = attempt(root, write, owned)
        if reason is not None:
            target = log.path
            if concerns is None or concerns[: len(target)] == target[: len(concerns)]:
                log.fail(log.key(message_id), reason)
            return
        lane = self.lane
        if lane is not None and type(updated) is dict and len(updated) > 1:
            # Only the lane's key matters: keeping it alone (and writable) spares later writes the copy of the root.
            updated = owned.made({lane: updated[lane]} if lane in updated else {})
        self.root = updated
        if effect is not None:  # the step changed the path (`_fold._effect`)
            if effect == "reset":
                log.resets.append(len(log.changes))
            log.changes.append(count)
            log.change_keys.append(log.key(message_id))


class PathLog:
    """One layer's writes that can matter to one path, folded once: per step its message id, the steps that
    changed the path (their order keys, and which replaced it), the roots every `every` steps and at the end, and the
    problems that concern the path. (Ids, not order keys: a key is looked up only where one is needed,
    and a lookup in the order's table of 100,000 keys is a cache miss.)"""

    __slots__ = ("base", "change_keys", "changes", "dependents", "every", "failed", "fold", "gaps", "ids", "key",
                 "marks", "merging", "near", "path", "problems_at", "reads", "resets", "results", "root", "sealed",
                 "writes")

    def __init__(self, path: Path, base: PathLog | None, expected: int, writes: Sequence[Write], key: Key) -> None:
        self.path, self.base, self.writes, self.key = path, base, writes, key
        self.every = max(MARK_EVERY, -(-expected // MOST_MARKS))  # steps between marks
        self.dependents: list[LogKey] = []  # the instance logs that continue from this one
        self.ids: list[int] = []  # per step, the message it folded
        self.changes: list[int] = []  # the steps that changed the path, in order
        self.change_keys: list[int] = []  # per change, its message's order key (kept: sources are a slice)
        self.resets: list[int] = []  # the changes (positions in `changes`) that replaced the value at the path
        # From each reset (and the first change) on, `change_keys` in chunks, sealed as each run of the fold ends: the
        # sources at every cut after it share them (`Keys.run`, which seals what a cut needs before a later reset).
        self.sealed: dict[int, list[tuple[int, ...]]] = {}
        self.merging: tuple[int, Merging] | None = None  # an instance's sources at a cut, merged in pieces
        self.marks: list[Checkpoint[None]] = []  # the fold before steps 0, every, 2 * every, ...
        self.root: Any = MISSING
        self.near: tuple[int, Any] = (-1, MISSING)  # the last root replayed from a mark: after how many steps, which
        self.gaps: list[tuple[int | None, int | None]] = []  # order keys strictly between which it stepped any write
        self.failed: list[int] = []  # per problem: how many steps had been folded with it
        self.problems_at: list[Chain] = []  # per problem: the chain of the problems up to it
        self.results: dict[int, Found] = {}
        self.reads = 0  # how many times `found` read it (`LaneLogs` drops logs read once first)
        self.fold: BranchFold | None = None  # how it goes on, until it has folded every write

    def upto(self, limit: int | None, most: int | None = None) -> tuple[int, bool]:
        """Fold on, if need be, over the writes up to order key `limit` (all when None), at most `most` of
        them (all when None): how many steps that added, and whether it folded every write up to `limit`."""
        fold = self.fold
        if fold is None:
            return 0, True
        size = len(self.ids)
        complete = fold.run(limit, most)
        self.root = fold.state.root
        start = self.resets[-1] if self.resets else 0  # (once a run, not once a step: `sealed`)
        seal(self.change_keys, start, self.sealed.setdefault(start, []))
        if isinstance(fold.state, _Recorder):
            fold.state.owned.clear()  # its root can be read now: no more writes in place
        if fold.done:
            self.fold = None
        return len(self.ids) - size, complete

    def fail(self, order_key: int, reason: str) -> None:
        self.failed.append(len(self.ids))
        self.problems_at.append((self.problems_at[-1] if self.problems_at else EMPTY).plus((order_key, reason)))

    def count(self, limit: int | None) -> int:
        """How many steps have an order key up to `limit` (all when None)."""
        return len(self.ids) if limit is None else bisect_right(self.ids, limit, key=self.key)

    def root_at(self, count: int) -> Any:
        """The root after the first `count` steps: from the mark before, the rest replayed."""
        if count == len(self.ids):
            return self.root
        self.replay(count, count)
        return self.near[1]

    def replay(self, count: int, most: int) -> int | None:
        """Replay at most `most` steps towards the root after the first `count`, from the mark before (or from
        the last root replayed, `near`, when it lies between): how many of `most` are left once `near` is that
        root, None when they ran out first (a later call goes on)."""
        if count == len(self.ids):
            return most
        start = count - count % self.every
        done, root = self.near
        if not start <= done <= count:
            done, root = start, self.marks[count // self.every].root
        stop = min(count, done + most)
        ids, writes, owned = self.ids, self.writes, Owned()  # what it makes is its own until `near` shows it
        for position in range(done, stop):
            root = attempt(root, writes[ids[position]], owned)[0]  # a write that failed leaves it as it is
        self.near = (stop, root)
        return most - (stop - done) if stop == count else None

    def problems(self, count: int, chain: Chain) -> Chain:
        """`chain` and then the problems of the first `count` steps."""
        at = bisect_right(self.failed, count)
        return chain.joined(self.problems_at[at - 1], EMPTY) if at else chain

    def stretch(self, count: int) -> tuple[int, int, bool]:
        """The changes among the first `count` steps that make the path's sources: from the last that replaced
        it on (from the first when none did) up to `end`; and whether one did."""
        end = bisect_left(self.changes, count)
        last = bisect_left(self.resets, end) - 1  # the last reset among the first `end` changes
        return (self.resets[last] if last >= 0 else 0), end, last >= 0

    def sources(self, count: int) -> Keys:
        """The order keys of the steps before `count` that changed the path, from the last that replaced it on,
        in the chunks every cut after that reset shares."""
        start, end, _ = self.stretch(count)
        return Keys.run(self.change_keys, start, end, self.sealed.setdefault(start, []))


def _merging(glob: PathLog, own: PathLog, glob_count: int, count: int) -> Merging | None:
    """How `own`'s sources at `count` are merged with `glob`'s at `glob_count`, the merge under way when it
    is for this cut; None when they are `own`'s alone (the global log itself, or a reset in the instance's)."""
    if own is glob:
        return None
    start, end, reset = own.stretch(count)
    if reset:
        return None
    if own.merging is None or own.merging[0] != count:
        if get_path(own.root_at(count), own.path) is MISSING:
            return None
        own.merging = (count, Merging(glob.sources(glob_count), own.change_keys, start, end))
    return own.merging[1]


class LaneLogs:
    """The path logs of one context: made on first use, read by `resolve`, dropped by edits (see above)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._logs: dict[LogKey, PathLog] = {}
        # Which to drop first for room: the logs read at most once (the newest first), then those read again
        # (the least recently read first).
        self._once: OrderedDict[LogKey, None] = OrderedDict()
        self._again: OrderedDict[LogKey, None] = OrderedDict()
        self._kinds: dict[Identity, dict[Path, dict[LogKey, None]]] = {}  # per identity and lane (`path[:1]`), its logs
        self._open: dict[Identity, dict[LogKey, None]] = {}  # per identity, the logs whose fold's last gap is open
        self._held: set[LogKey] | None = None  # the logs one fold ahead touched (`holding`)
        self._steps = 0

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Within it, a log `fold_some` touched is not dropped for room: one expression's references, folded
        ahead a slice at a time, keep each other's logs."""
        self._held = set()
        try:
            yield
        finally:
            self._held = None

    def fold_some(self, ref: Reference, instance: str | None, limit: int | None, most: int) -> int | None:
        """Fold at most `most` steps (folded or replayed) of what `found(ref, instance, limit)` reads: how
        many of `most` are left once it is all folded (then `found` folds nothing), None when they ran out
        first. A first fold of thousands of writes is so made in slices: each call goes on from the last."""
        path = ref.path
        glob, left = self._log((ref.kind, None, path, 0), None, limit, most)
        if left is None:
            return None
        count = glob.count(limit)
        if instance is None:
            return glob.replay(count, left)
        key = (ref.kind, instance, path, count)
        if key not in self._logs:  # it starts from the global root after `count` steps
            left = glob.replay(count, left)
            if left is None:
                return None
        own, left = self._log(key, glob, limit, left)
        if left is None:
            return None
        own_count = own.count(limit)
        left = own.replay(own_count, left)
        if left is None or own.results.get(own_count if limit is not None else -1) is not None:
            return left
        merging = _merging(glob, own, count, own_count)
        while merging is not None and left > 0:  # its sources: the instance's keys among the global ones
            left -= MERGE_STEPS
            if merging.step() is not None:
                return max(0, left)
        return None if merging is not None else left

    def found(self, ref: Reference, instance: str | None, limit: int | None) -> Found:
        """`ref`'s result in the view of `instance` up to order key `limit` (None: all), from the logs."""
        path = ref.path
        key_glob = (ref.kind, None, path, 0)
        glob = self._log(key_glob, None, limit)[0]
        parts: tuple[PathLog, ...] = (glob,)
        counts = [glob.count(limit)]
        key_own = (ref.kind, instance, path, counts[0])
        if instance is not None:  # the instance layer, from the global fold at the cut
            own = self._log(key_own, glob, limit)[0]
            parts, counts = (glob, own), [counts[0], own.count(limit)]
        own, count = parts[-1], counts[-1]
        self._read(key_glob)
        if instance is not None:
            self._read(key_own)
        memo = count if limit is not None else -1
        known = own.results.get(memo)
        if known is not None:
            return known
        value = get_path(own.root_at(count), path)
        keys = EMPTY_KEYS
        if value is not MISSING:
            merging = _merging(glob, own, counts[0], count)
            keys = own.sources(count) if merging is None else merging.union()
            own.merging = None
        problems = EMPTY
        for part, done in zip(parts, counts, strict=True):
            problems = part.problems(done, problems)
        found = Found(value, keys, problems)
        if len(own.results) >= _RESULTS:
            own.results.clear()
        own.results[memo] = found
        return found

    def _log(
        self, key: LogKey, base: PathLog | None, limit: int | None, most: int | None = None
    ) -> tuple[PathLog, int | None]:
        """The log of `key`, folded at least up to order key `limit` (all when None) when `most` is None;
        otherwise folded on by at most `most` steps: the log, and how many of `most` are left once it is
        folded up to `limit` (None when they ran out first; 0 when `most` is None)."""
        if self._held is not None:
            self._held.add(key)
        log = self._logs.get(key)
        if log is None:
            store = self._store
            kind, instance, path, start = key
            layer = store.layers.get((kind, instance)) or Layer()
            order_key = store.order.key.__getitem__
            subsets = subsets_of(layer, path, store.writes, order_key)
            log = PathLog(path, base, len(subsets[-1] or ()), store.writes, order_key)
            recorder = _Recorder(log, MISSING if base is None else base.root_at(start))
            log.fold = BranchFold(recorder, subsets, path, store.writes, order_key)
            log.gaps = log.fold.gaps
            self._logs[key] = log
            self._once[key] = None
            self._kinds.setdefault(key[:2], {}).setdefault(path[:1], {})[key] = None
            if base is not None:
                base.dependents.append(key)
        added, complete = log.upto(limit, most)
        if log.gaps and log.gaps[-1][1] is None:
            self._open.setdefault(key[:2], {})[key] = None
        else:
            self._open.get(key[:2], {}).pop(key, None)
        left = (0 if most is None else most - added) if complete else None
        if not added:
            return log, left
        self._steps += added
        most_steps = max(MOST_STEPS, STEPS_PER_MESSAGE * len(self._store.order))
        while self._steps > most_steps:
            victim = self._victim(key, base)
            if victim is None:
                break
            self._drop(victim)
        return log, left

    def _read(self, key: LogKey) -> None:
        """`found` read the log of `key` (just folded, or kept)."""
        log = self._logs[key]
        log.reads += 1
        if log.reads > 1:
            self._once.pop(key, None)
            self._again[key] = None
            self._again.move_to_end(key)

    def _victim(self, key: LogKey, base: PathLog | None) -> LogKey | None:
        """The log to drop first for room, but neither `key` nor its `base` nor a held one: the newest of those
        read at most once, else the least recently read."""
        held = self._held or ()
        for order in (reversed(self._once), iter(self._again)):
            for other in order:
                if other != key and self._logs[other] is not base and other not in held:
                    return other
        return None

    def _drop(self, key: LogKey) -> None:
        log = self._logs.pop(key, None)
        if log is None:
            return
        self._once.pop(key, None)
        self._again.pop(key, None)
        self._open.get(key[:2], {}).pop(key, None)
        lanes = self._kinds[key[:2]]
        del lanes[key[2][:1]][key]
        if not lanes[key[2][:1]]:
            del lanes[key[2][:1]]
        self._steps -= len(log.ids)
        for dependent in log.dependents:  # instance logs continue from it
            self._drop(dependent)
        let_go(*_LET_GO(log))

    def clear(self) -> None:
        """Drop every log (at a relabel of the order)."""
        for key in list(self._logs):
            self._drop(key)

    def __del__(self) -> None:  # a replaced document's logs buried at once (the dict on top), over the store's
        let_go(self._store.writes, self._store.order.key,  # writes and keys they hold: freed after them, in slices
               *(part for log in self._logs.values() for part in _LET_GO(log)), self._logs)

    def touch(self, identity: Identity, write: Write, order_key: int, appended: bool) -> None:
        """A write of `identity` at `order_key` is being added or removed (`appended`: added after every other): drop
        every log it can change. Only the logs of `identity` are looked at: an instance's log goes with the global log
        it continues from, which a global write changes alike. An appended write can change only the logs of its lanes,
        of the whole kind, and those whose fold's last gap is open (a gap that ended, ended with a write before it)."""
        kept = self._kinds.get(identity)
        if not kept:
            return
        lanes = lanes_of(write)
        if appended and lanes is not None:
            keys = [*self._open.get(identity, ()),
                    *(key for lane in ((), *((lane,) for lane in lanes)) for key in kept.get(lane, ()))]
        else:
            keys = [key for logs in kept.values() for key in logs]
        for key in keys:
            log = self._logs.get(key)
            if log is not None and (lanes is None or not key[2] or key[2][0] in lanes or _inside(log, order_key)):
                self._drop(key)


def _inside(log: PathLog, order_key: int) -> bool:
    """Whether `order_key` falls in a gap that the fold of `log` stepped through."""
    return any((low is None or low < order_key) and (high is None or order_key < high) for low, high in log.gaps)
