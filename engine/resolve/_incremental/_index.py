"""Indexes of writes, and the fold of SPEC 4 run over only the writes that can matter to a path.

Per identity (kind, instance) a `Layer` keeps the ids of its writing messages in context order, and per
*lane* (the first segment of a path) the ids of the writes that can change a path in that lane:

- a write at `s.…` belongs to lane `s`;
- a deep merge or assign of an object at the root belongs to the lanes of its keys;
- every other root write (a `set`, a merge of a non-object, push, concat, a write with a problem) is
  *universal*: it belongs to every lane.

While the folded root is an object, a write outside a path's lane cannot change the value, the sources
or the diagnostics at that path (it only touches other keys). While the root is not an object (at the
start, after a root `set` of a scalar or an array), any write may turn it into one, so the fold then
scans every write of the layer until the root is an object again. That keeps `fold_lane` equal to
`_fold.fold` over all the writes, while touching only the lane in the common case.

Writes are folded as operations, never pre-merged (deep merge is not associative), and the states
hold persistent values: `write_at` copies only the containers along a path, so a state is cheap to keep.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from ...protocol._messages import MISSING, Path, Write, get_path
from ...protocol._methods import WRITE_METHODS, Conflict, Owned, write_at
from .. import _keys
from .._chain import EMPTY, Chain
from .._fold import TOO_DEEP, _effect
from .._keys import Ids

MOST_DEEP = 8  # the nodes below a lane whose keys a layer files (`Layer.below`)
Lane = str | None  # the first segment of the paths followed; None follows the whole value of a kind
Key = Callable[[int], int]
Held = TypeVar("Held")


def lanes_of(write: Write) -> tuple[str, ...] | None:
    """The lanes a write can change; None when it can change every lane (a universal write)."""
    if write.problem is not None:
        return None
    if write.path:
        return (write.path[0],)
    if WRITE_METHODS[write.method].root_lanes and isinstance(write.value, dict):
        return tuple(write.value)
    return None


_ANY_KEY: Any = object()  # a segment no value names: `covers` of it tells a write that reaches every key


def keys_touched(write: Write, node: Path) -> tuple[str, ...] | None:
    """The keys of the object at `node` (a path of one segment or more) below which `write` can change a path while
    `node` and each node above it are objects (`_branches.touches` of `node.key`); None when it can change every key:
    it has a problem, or replaces `node` or a node above it. One at or below `node.key` touches that key; one above
    `node` that reaches into it (a merge or an assign of an object) touches the keys its value names there."""
    if write.problem is not None:
        return None
    path, size = write.path, len(node)
    if len(path) > size:
        return (path[size],) if path[:size] == node else ()
    if path != node[: len(path)]:
        return ()
    rest = node[len(path) :]
    if WRITE_METHODS[write.method].covers(write.value, (*rest, _ANY_KEY)) is not None:
        return None
    value = write.value
    for segment in rest:
        value = value.get(segment) if type(value) is dict else None
    return tuple(value) if type(value) is dict else ()


def replaces_root(write: Write) -> bool:
    """Whether a write replaces the root itself (a universal write that is not just a problem)."""
    return write.problem is None and lanes_of(write) is None


class Layer:
    """The writes of one identity in context order (ids sorted by order key), indexed by lane.

    Per lane it also keeps where the lane's writes start to only append to the lane's array (`push` or `concat` at the
    lane itself): tracks splice past such a tail (`_tracks`). And it counts the writes that replace the root itself
    (universal writes without a problem): while there are none, every lane folds apart from the others, which whole-kind
    tracks rely on (`_whole`)."""

    __slots__ = ("all", "answers", "branches", "deep", "lanes", "rooted", "tails", "universal", "wide")

    def __init__(self) -> None:
        self.all: list[int] = []
        self.universal: list[int] = []
        self.lanes: dict[str, list[int]] = {}
        # Lane -> position of its appending tail, kept from its first write that appends (None: not known since a
        # remove; none: nothing in it appends, the tail is empty).
        self.tails: dict[str, int | None] = {}
        # What `_patches` found reading these lists (`cover`, `keeps_start`), while they stay as they are: emptied
        # by any change.
        self.answers: dict[tuple[Any, ...], Any] = {}
        self.rooted = 0  # how many writes replace the root itself
        # Below a node (`keys_touched`): the ids that touch every key of it (`wide`), and per key the other ids that
        # touch `node.key` (a path's fold and `cover` read only those, `below`). Kept for each lane once a write names
        # a key of it, and for the `MOST_DEEP` deeper nodes last asked for (`deep`; built when asked).
        self.wide: dict[Path, list[int]] = {}
        self.branches: dict[Path, dict[str, list[int]]] = {}
        self.deep: list[Path] = []

    def subset(self, lane: Lane) -> list[int]:
        """The ids that can matter to `lane`, in order."""
        return self.all if lane is None else self.lanes.get(lane, self.universal)

    def below(self, node: Path, name: str | None, writes: Sequence[Write], key: Key) -> list[int]:
        """The ids that can matter at and below `node.name` while `node` and each node above it are objects (None:
        those that touch every key of `node`), in order (by order `key`): those that touch every key merged with the
        name's own (kept apart: an array's pushes touch every index, and a list per index holding them is quadratic)."""
        below = self.branches.get(node)
        if below is None and len(node) == 1:  # no write names a key of the lane: each of its writes touches every key
            return self.lanes.get(node[0], self.universal)
        if below is None:  # filed anew from the writes of the lane's key it lies below
            if len(self.deep) >= MOST_DEEP:  # the one asked for longest ago is let go of
                oldest = self.deep.pop(0)
                del self.wide[oldest], self.branches[oldest]
            self.deep.append(node)
            below = self.branches[node] = {}
            wide = self.wide[node] = []
            for message_id in self.below(node[:1], node[1], writes, key):
                for target in _node_lists(below, wide, keys_touched(writes[message_id], node)):
                    target.append(message_id)
        elif len(node) > 1 and self.deep[-1] != node:  # kept as the node asked for last
            self.deep.remove(node)
            self.deep.append(node)
        wide, own = self.wide[node], below.get(name) if name is not None else None
        return wide if not own else own if not wide else sorted([*wide, *own], key=key)

    def appends_from(self, lane: str, writes: Sequence[Write]) -> int:
        """The position in `subset(lane)` from which every write only appends to the lane's array."""
        subset = self.subset(lane)
        position = self.tails.get(lane, len(subset))
        if position is None:
            position = len(subset)
            while position and _appends(writes[subset[position - 1]], lane):
                position -= 1
            if lane in self.lanes:
                self.tails[lane] = position
        return position

    def append(self, message_id: int, write: Write) -> None:
        """Add a write known to come after every write already here (building a context: a million times, so
        the common case, a write in lanes that exist, is spelled out)."""
        self.all.append(message_id)
        if self.answers:
            self.answers.clear()
        segments = lanes_of(write)
        if segments is None:
            self.rooted += write.problem is None
            for lane, target in self._lists(write):
                target.append(message_id)
                self._added(lane, len(target) - 1, write, len(target))
        else:
            lanes, tails = self.lanes, self.tails
            for segment in segments:
                found = lanes.get(segment)
                if found is None:  # made to size (a run writes a lane a call)
                    lanes[segment] = [*self.universal, message_id] if self.universal else [message_id]
                    if _appends(write, segment):  # (a run's output, one lane a call, keeps none)
                        tails[segment] = len(self.universal)
                    continue
                found.append(message_id)
                appends, tail = _appends(write, segment), tails.get(segment, -1)  # (-1: none appends yet)
                if tail is not None and (tail >= 0) is not appends:
                    tails[segment] = len(found) - appends
        for target in self._branch_lists(write, message_id):
            target.append(message_id)

    def add(self, message_id: int, write: Write, key: Key) -> None:
        self.answers.clear()
        insort(self.all, message_id, key=key)
        self.rooted += replaces_root(write)
        for lane, target in self._lists(write):
            position = bisect_left(target, key(message_id), key=key)
            target.insert(position, message_id)
            self._added(lane, position, write, len(target))
        for target in self._branch_lists(write, message_id):
            insort(target, message_id, key=key)

    def discard(self, message_id: int, write: Write, key: Key) -> None:
        self.answers.clear()
        _delete(self.all, message_id, key)
        self.rooted -= replaces_root(write)
        for lane, target in self._lists(write):  # (each was made when the write was added)
            position = _delete(target, message_id, key)
            tail = self.tails.get(lane) if lane is not None else None
            if lane is not None and tail is not None and position < tail:
                # The tail may now reach further back when the write just before it is gone.
                self.tails[lane] = None if position == tail - 1 else tail - 1
        for target in self._branch_lists(write, message_id):
            _delete(target, message_id, key)

    def _added(self, lane: str | None, position: int, write: Write, size: int) -> None:
        appends = lane is not None and _appends(write, lane)
        tail = self.tails.get(lane, size - 1 if appends else None) if lane is not None else None  # (`size`: with it)
        if lane is not None and tail is not None:
            self.tails[lane] = tail + 1 if position < tail else tail if appends else position + 1

    def _lists(self, write: Write) -> list[tuple[str | None, list[int]]]:
        """The lists that hold `write` (a lane's made when missing)."""
        segments = lanes_of(write)
        if segments is None:
            return [(None, self.universal), *self.lanes.items()]
        found: list[tuple[str | None, list[int]]] = []
        for segment in segments:
            target = self.lanes.get(segment)
            if target is None:  # (its tail: `_added`)
                target = self.lanes[segment] = list(self.universal)
            found.append((segment, target))
        return found

    def _branch_lists(self, write: Write, message_id: int) -> list[list[int]]:
        """The lists of `wide` and `branches` that hold `write` (made when missing). A lane's are made when a write
        first names a key of it (most lanes of a large kind have none): until then its `wide` would be its subset
        (`below` reads that)."""
        segments = lanes_of(write)
        if segments is None:  # it can change every key of every node
            return list(self.wide.values())
        found: list[list[int]] = []
        for lane in segments:
            node = (lane,)
            keys = keys_touched(write, node)
            if node not in self.branches:
                if keys is None:
                    continue
                self.branches[node], self.wide[node] = {}, [i for i in self.lanes[lane] if i != message_id]
            found += _node_lists(self.branches[node], self.wide[node], keys)
        for deep in self.deep:
            found += _node_lists(self.branches[deep], self.wide[deep], keys_touched(write, deep))
        return found


def _node_lists(below: dict[str, list[int]], wide: list[int], keys: tuple[str, ...] | None) -> list[list[int]]:
    """The lists of a node (`below` its keys' own, `wide`) that hold a write touching `keys` of it (None: every key,
    `wide` alone), a key's made when missing."""
    if keys is None:
        return [wide]
    found = []
    for name in keys:
        target = below.get(name)
        found.append(target if target is not None else below.setdefault(name, []))
    return found


def _appends(write: Write, lane: str | None) -> bool:
    """Whether a write only appends to the array at `lane`."""
    return write.problem is None and WRITE_METHODS[write.method].appends is not None and write.path == (lane,)


def _delete(ids: list[int], message_id: int, key: Key) -> int:
    """Take `message_id` out of `ids` (it is there, at its key): where it was."""
    position = bisect_left(ids, key(message_id), key=key)
    del ids[position]
    return position


@dataclass(frozen=True, slots=True)
class Change:
    """A write that changed a followed path: its message, the write, the value there before and after."""

    message_id: int
    write: Write
    before: Any
    after: Any


Sources = tuple[int, ...] | Ids  # a kept probe's sources


def kept(sources: list[int] | Sources) -> Sources:
    """Sources as a kept fold holds them: a list made a tuple, `Ids` and tuples as they are."""
    return tuple(sources) if type(sources) is list else sources  # type: ignore[return-value]


def _appended(sources: Sources, message_id: int) -> Sources:
    """Kept sources and one more, for a step no other follows before its state is kept (an append's): a few
    grow into a new tuple (`+`: unpacking is slower), a whole kind's thousands into `Ids`, in place."""
    if type(sources) is Ids:
        return sources.plus((message_id,))
    if len(sources) < _keys.CHUNK:
        return sources + (message_id,)  # type: ignore[operator]  # noqa: RUF005
    return Ids.owning([*sources, message_id])


class SourceEdit(NamedTuple):
    """How a probe's sources differ from other sources (the very tuple another probe holds), as order
    keys: its result's keys are then the other's, changed in place, with no sorting."""

    sources: Sources
    lost: list[int]
    gained: list[int]

    def net(self, later: SourceEdit) -> SourceEdit:
        """This change followed by `later` (a change of the sources this one leads to), counting each key's
        losses and gains: so it holds also when the sources in between hold a message twice (a replace that
        moves a write between the global layer and an instance layer: halfway it is a source of both), as
        long as the first and last sources do not."""
        counts: dict[int, int] = {}
        for edit in (self, later):
            for key in edit.lost:
                counts[key] = counts.get(key, 0) - 1
            for key in edit.gained:
                counts[key] = counts.get(key, 0) + 1
        lost = [key for key, count in counts.items() if count < 0]
        gained = [key for key, count in counts.items() if count > 0]
        return SourceEdit(self.sources, lost, gained)


class Probe:
    """One path followed by a fold: the ids of its sources so far and its diagnostics, a `Chain` of
    (order key, reason): kept once per failed write, shared by every copy, checkpoint and splice."""

    __slots__ = ("diagnostics", "edits", "path", "resets", "sources", "trail")

    def __init__(self, path: Path, sources: Sources | None = None, diagnostics: Chain = EMPTY, resets: int = 0, *,
                 trail: bool = False) -> None:
        self.path = path
        # A tuple once a fold that holds it is kept (`freeze`): copies share it, and a step that adds
        # a source makes its own list. Tuples of ints are not tracked by the cycle collector.
        # A whole kind's thousands are `Ids` (`_whole`, an appended step): edited by the chunk, never copied.
        self.sources: list[int] | Sources = [] if sources is None else sources
        self.diagnostics = diagnostics
        self.resets = resets  # how many writes reset the sources so far
        # For blame: every write that changed the path.
        self.trail: list[Change] | None = [] if trail else None
        # Set by `_whole`: these sources are those of the probe they were repaired from, less some order
        # keys, plus others; and, when that one was repaired too, the same from the one before it (a
        # move's two halves), so that results follow from the kept results either way.
        self.edits: tuple[SourceEdit, ...] = ()

    def copy(self) -> Probe:
        """A probe that continues independently (a trail is never copied: blame folds its one probe in place)."""
        return Probe(self.path, kept(self.sources), self.diagnostics, self.resets)


def attempt(root: Any, write: Write, owned: Owned | None = None) -> tuple[Any, str | None, Path | None]:
    """One write applied to a root (its `owned` containers in place): the new root, or the root unchanged with the
    reason the write could not be applied and the path of the probes that problem concerns (None: every probe)."""
    if write.problem is not None:
        return root, write.problem, None
    try:
        return write_at(root, write.path, write.method, write.value, owned), None, None
    except Conflict as conflict:
        return root, conflict.reported(write.method, write.path), write.path
    except RecursionError:
        return root, TOO_DEEP, None


class State:
    """A fold in progress: the root so far (a persistent value) and the probes following it."""

    __slots__ = ("probes", "root")

    def __init__(self, probes: list[Probe], root: Any = MISSING) -> None:
        self.root = root
        self.probes = probes

    def freeze(self) -> None:
        """Make the probes' sources tuples: the state is kept, and copies of it share them."""
        for probe in self.probes:
            if type(probe.sources) is list:
                probe.sources = tuple(probe.sources)

    def copy(self) -> State:
        """A state that continues independently."""
        return State([probe.copy() for probe in self.probes], self.root)

    def step(self, message_id: int, write: Write, order_key: int, last: bool = False, owned: Owned | None = None
             ) -> None:
        """One step of `_fold.fold`, for every probe at once (`order_key`: the message's, for diagnostics).

        `last`: an append's one step over a kept fold's probes: a probe it changes is copied first (the others stay
        shared), and kept sources grow by one copy into a new tuple, not a list `freeze` copies again. `owned`: the
        root's containers written in place (`write_at`), so what a probe reads of the root before the write (its
        effect, its trail's value before) is read first."""
        path = write.path
        size = len(path)
        old_root = self.root
        # (a trail's value before is read only where the write changes its path)
        ahead = [(effect := _effect(write, old_root, p.path),
                  get_path(old_root, p.path) if effect is not None and p.trail is not None else None)
                 if p.path[:size] == path[: len(p.path)] else (None, None) for p in self.probes]
        root, reason, concerns = attempt(old_root, write, owned)
        if reason is not None:
            self._failed(order_key, reason, concerns, last)
            return
        self.root = root
        for index, probe in enumerate(self.probes):
            effect, before = ahead[index]  # (None: neither path is a prefix of the other)
            probe = self.probes[index] = probe.copy() if last and effect else probe
            if effect == "reset":
                probe.sources = [message_id]
                probe.resets += 1
            elif effect == "add":
                sources = probe.sources
                if isinstance(sources, list):
                    sources.append(message_id)
                elif last or type(sources) is Ids:  # (`Ids`: a checkpoint shares its chunks, `checkpoint`)
                    probe.sources = _appended(sources, message_id)
                else:
                    probe.sources = [*sources, message_id]
            else:
                continue
            if probe.trail is not None:
                # The trail follows the sources: a reset starts it again.
                change = Change(message_id, write, before, get_path(root, probe.path))
                if effect == "reset":
                    probe.trail = [change]
                else:
                    probe.trail.append(change)

    def _failed(self, order_key: int, reason: str, path: Path | None, last: bool) -> None:
        """A write that could not be applied: one problem, kept once, for the probes it concerns (those on
        its path, above or below it; every probe when `path` is None)."""
        problem = (order_key, reason)
        size = 0 if path is None else len(path)
        for index, probe in enumerate(self.probes):
            if path is None or probe.path[:size] == path[: len(probe.path)]:  # one is a prefix of the other
                probe = self.probes[index] = probe.copy() if last else probe
                probe.diagnostics = probe.diagnostics.plus(problem)


@dataclass(frozen=True, slots=True)
class Gap:
    """Writes of a fold's own layer it scanned because the root was not an object: those strictly between the
    ids `before` and `after` (None: from the start, to the end), and `after` itself when `through`.

    A gap ends at the lane's next write (`after`), or `through` the write that made the root an object
    again: a bound whose removal folds the track again (a write of its lane, or one in its gap), so that
    a gap never names a message no longer there."""

    before: int | None
    after: int | None
    through: bool = False


class Checkpoint(NamedTuple, Generic[Held]):
    """A fold's state just after one of its writes: the one saved fold state of the engine, from which a fold
    resumes, or a splice or a replay starts.

    `after`: that write's message id (0: before the layer's first write; ids start at 1), so that it names the
    same point across edits elsewhere; `root`: the folded value there; `held`: what else the fold needs to go
    on from there, which only some folds keep: a track's probes (`ProbeState`), the state view's writer of
    each path (`document/_state`). A whole-kind track's lane marks (`root`: one lane's value) and a path log's
    roots hold nothing more (None).
    """

    after: int
    root: Any
    held: Held


class ProbeState(NamedTuple):
    """What a track's checkpoint holds beside the root: per probe (in the state's order) its sources, its
    diagnostics and how many resets it had so far; and how many of the fold's gaps came before."""

    sources: tuple[Sources, ...]
    diagnostics: tuple[Chain, ...]
    resets: tuple[int, ...]
    gaps: int


def checkpoint(state: State, message_id: int, gaps: int) -> Checkpoint[ProbeState]:
    probes = state.probes
    for probe in probes:
        if type(probe.sources) is list and len(probe.sources) >= SHARED_SOURCES:
            # More than a few sources (a whole kind's: one per write) go on as `Ids`, which the fold appends to in
            # place and every later checkpoint shares (its tail, then by the chunk): a tuple per checkpoint would
            # copy all the sources so far at each one, quadratic in the writes of the lane, to make and to free.
            probe.sources = Ids.owning(probe.sources)
    return Checkpoint(message_id, state.root, held(probes, gaps))


def held(probes: list[Probe], gaps: int) -> ProbeState:
    """What a checkpoint holds of kept probes (lists, not generators: a few probes each, made often)."""
    return ProbeState(tuple([kept(p.sources) for p in probes]), tuple([p.diagnostics for p in probes]),
                      tuple([p.resets for p in probes]), gaps)


# Sources from which a checkpoint shares them with the fold's later checkpoints (`Ids`) instead of keeping a
# tuple of its own: tuples up to a chunk of `Ids` (512) made a lane's checkpoints grow with the square of its writes.
SHARED_SOURCES = 32

# Steps (folded or replayed) of one slice of a first fold by default (a path log's `fold_some`, a track's `full`): a
# small part of a window's slice budget.
FOLD_STEPS = 64
FOLD_WORK = 1000  # elements a write copies (or paths it sets: `_state.fold_step`) that count as one step more


def slice_end(subset: list[int], first: int, steps: int, writes: Sequence[Write], root: Any) -> int | None:
    """The last write of a first fold's slice of `steps` from `first` (None: the lane's end), a write appending to an
    array of `root` (the slice's start) counting one more per `FOLD_WORK` elements it copies (values are persistent)."""
    for position in range(first, len(subset) - 1):
        write = writes[subset[position]]
        before = get_path(root, write.path) if WRITE_METHODS[write.method].appends else None
        steps -= 1 + len(before) // FOLD_WORK if isinstance(before, list) else 1
        if steps <= 0:
            return subset[position]
    return None

# Writes between two checkpoints of a track (module globals so that tests can make them small): every fold keeps
# one just after the writes `checkpoint_at` names in the lane's writes (`Layer.subset`), so that a fold from
# scratch, an append and a repair keep them alike, with no count of their own.
CHECKPOINT_EVERY = 16
# A whole-kind track's: each of its checkpoints keeps the sources of every write of the kind so far
# (thousands), and it is repaired lane by lane from lane marks (`_whole`), which drops its checkpoints
# past the edit. Dense ones cost their making, their freeing and the collector's walks.
WHOLE_CHECKPOINT_EVERY = 256
SPREAD = 6  # past 2^SPREAD writes of a lane, checkpoints spread out as it grows (`checkpoint_at`)


def checkpoint_at(count: int, whole: bool = False, value: Any = MISSING) -> bool:
    """Whether a fold keeps a track's checkpoint (`whole`: a whole kind's) or a lane mark (its `value`) after the
    `count`th write of a lane: at each multiple of `CHECKPOINT_EVERY` (`WHOLE_CHECKPOINT_EVERY`), or of count/2^SPREAD
    (a power of two) if more, four times that for a lane mark of 4,096 entries or more (a whole-kind repair patches
    each one past its edit at once). A mark holds a value the next write copies and a repair patches: over a lane that
    grows an object, at a fixed step both cost k²/step keys."""
    every = WHOLE_CHECKPOINT_EVERY if whole else CHECKPOINT_EVERY
    spread = SPREAD - 2 if count % every == 0 and _entries(value) >> 12 else SPREAD
    return count % every == 0 and count % max(every, 1 << (count >> spread).bit_length()) == 0


def _entries(value: Any) -> int:
    """The entries of an object or array, or of the one its only entry holds, and so on down: `{r1: {steps: {…}}}` is
    as big as its steps, which a patch rebuilds as it rebuilds a big value's own entries."""
    while type(value) in (dict, list) and len(value) == 1:
        value = next(iter(value.values())) if type(value) is dict else value[0]
    return len(value) if type(value) in (dict, list) else 0


def owned_in(subset: list[int]) -> Owned | None:
    """A repair's fold from a mark to its edit writes in place in a lane whose marks are spread out (else copies)."""
    return Owned() if len(subset) >> (SPREAD + 4) else None


def fold_lane(state: State, layer: Layer, lane: Lane, writes: Sequence[Write], key: Key, limit: int | None = None,
        gaps: list[Gap] | None = None, *, after: int | None = None,
        checkpoints: list[Checkpoint[ProbeState]] | None = None,
        converge: Callable[[int, State], Checkpoint[ProbeState] | None] | None = None,
        owned: Owned | None = None) -> Checkpoint[ProbeState] | None:
    """Fold into `state` the writes of `layer` that can matter to `lane`, up to order key `limit`.

    Gaps scanned while the root was not an object are recorded in `gaps`: an edit inside one may change the result even
    though it is outside the lane. Tracks also pass: `after`, the write to resume after; `checkpoints`, to collect one
    every few writes; and `converge(id, state)`, which returns an old checkpoint when the fold has become equivalent to
    it: the fold then stops there and returns it, so the caller can splice the old rest on; `owned`, the root's
    containers the fold may write in place (`write_at`), which it clears at each checkpoint (`converge` too, where it
    keeps a value)."""
    subset = layer.subset(lane)
    stop = len(subset) if limit is None else bisect_right(subset, limit, key=key)
    first = 0 if after is None else bisect_right(subset, key(after), key=key)
    previous = after
    for position in range(first, stop + 1):
        following = subset[position] if position < stop else None
        if lane is not None and not isinstance(state.root, dict):
            made = _scan_gap(state, layer, writes, key, previous, following, limit, owned)
            if gaps is not None:
                gaps.append(Gap(previous, following) if made is None else Gap(previous, made, True))
        if following is None:
            return None
        state.step(following, writes[following], key(following), owned=owned)
        root = state.root
        if lane is not None and type(root) is dict and len(root) > 1:
            # While the root is an object only the lane's key matters here: keeping that one key alone
            # spares every later write the copy of the whole root (writes copy the objects on their path).
            state.root = {lane: root[lane]} if lane in root else {}
        previous = following
        if converge is not None:
            matched = converge(following, state)
            if matched is not None:
                return matched
        if checkpoints is not None and checkpoint_at(position + 1, lane is None):
            checkpoints.append(checkpoint(state, following, len(gaps or ())))
            if owned is not None:
                owned.clear()
    return None


def _scan_gap(state: State, layer: Layer, writes: Sequence[Write], key: Key, previous: int | None,
        following: int | None, limit: int | None, owned: Owned | None = None) -> int | None:
    """Fold every write of the layer after `previous` and before `following` until the root is an object
    again; the write that made it one (None: none did). The gap ends there: the writes after it cannot
    matter to the lane while the root stays an object, and only a write of the lane can make it something
    else. A global fold's root is missing until the kind's first write, so a gap up to `following` for a
    lane first written thousands of messages later held every write up to there."""
    every = layer.all
    start = 0 if previous is None else bisect_right(every, key(previous), key=key)
    if following is not None:
        end = bisect_left(every, key(following), key=key)
    else:
        end = len(every) if limit is None else bisect_right(every, limit, key=key)
    for position in range(start, end):
        message_id = every[position]
        state.step(message_id, writes[message_id], key(message_id), owned=owned)
        if isinstance(state.root, dict):
            return message_id
    return None


def in_gap(gap: Gap, order_key: int, key: Key) -> bool:
    """Whether a write of the gap's layer at `order_key` falls inside it."""
    before, after = gap.before, gap.after
    if before is not None and key(before) >= order_key:
        return False
    return after is None or order_key < key(after) or (gap.through and order_key == key(after))

