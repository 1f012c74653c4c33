"""The whole state at a cursor, with the message that set each path: `CursorState`, in small slices.

`CursorState.steps` is a generator: each `next()` does a few milliseconds of work, so a window painting
the state never blocks for long, however many messages there are. It folds each identity's writes
exactly as the reference fold does (`_fold.py`: the same `write_at`, and `_touched` agrees with its
`_effect`), noting for every path the last message that set it, in one pass instead of one resolution
per path. The folds keep marks (`Track`), so that moving the cursor refolds a few writes per identity,
not the whole history. What a write shadowed, and every earlier write, is `Context.blame`'s
(`CursorState.blame`). This is the one place that answers "which message set this value".
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..protocol._expressions import Expression, Reference
from ..protocol._messages import MISSING, Write, get_path
from ..protocol._methods import WRITE_METHODS, Conflict, write_at
from ..resolve import _paranoid
from ..resolve._incremental._blame import Blame
from ._context import Context

Identity = tuple[str, str | None]
Path = tuple[str, ...]
SLICE = 1000  # messages scanned between two looks at the clock
FOLD_WRITES = 25  # writes folded between two looks at the clock
FOLD_WORK = 1000  # paths of one big write noted between two looks at the clock
SPACING = 16  # writes between two marks of a track (at least): a cursor move refolds fewer than this


@dataclass
class Lane:
    """The messages of one layer that write, in context order: their indices, in an `array`.

    Not a list of indices or of writes: the cyclic garbage collector walks every item of a young list,
    reading the header of each scattered object, inside the state view's slices after every edit. An
    array is one buffer the collector never looks into; a fold reads each write from the context when it
    gets there.
    """

    indices: array[int] = field(default_factory=lambda: array("q"))


@dataclass(frozen=True)
class IdentityState:
    """An identity's (kind, instance) whole value at the cursor, and the message that last set each path."""

    identity: Identity
    value: Any = MISSING
    writer: dict[Path, int] = field(default_factory=dict)  # may name paths gone since: look up existing ones

    def set_by(self, path: Path) -> int | None:
        """The index of the message that set the value at `path` (a path inside `value`)."""
        return self.writer.get(path)


@dataclass(frozen=True)
class Mark:
    """A lane's fold after its first `count` writes (`writer` is never changed once in a mark)."""

    count: int
    value: Any
    writer: dict[Path, int]


def _all_paths(value: Any) -> Iterator[Path]:
    """Every path inside `value`, itself included (iteratively: values may be deep)."""
    if not isinstance(value, dict | list):
        yield ()
        return
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        yield path
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        stack.extend(((*path, str(key)), child) for key, child in items)


def _touched(write: Write, root: Any) -> Iterator[Path]:
    """The paths a write resets or adds to, among those that exist after it: its ancestors, its path and
    what it writes there (what push and concat append).

    These are exactly the existing paths for which `resolve/_fold.py`'s `_effect` is "reset" or "add":
    above the write always; at and below it, every path inside the written value (a merge or an assign
    walks the new value, so any path in it is reached), and nothing else (a path the write does not reach
    keeps its value). So the setter of a path is the last write that listed it
    (tests/engine/document/test_state.py checks this against `ctx.blame`)."""
    path = write.path
    for depth in range(len(path)):
        yield path[:depth]
    appends = WRITE_METHODS[write.method].appends
    if appends is None:
        yield from ((*path, *sub) for sub in _all_paths(write.value))
        return
    yield path
    before = get_path(root, path)
    start = len(before) if isinstance(before, list) else 0
    for offset, item in enumerate(appends(write.value)):
        yield from ((*path, str(start + offset), *sub) for sub in _all_paths(item))


def _write(context: Context, index: int) -> Write:
    write = context.info(index).write
    assert write is not None  # a lane holds only messages that write
    return write


def fold_step(root: Any, writer: dict[Path, int], index: int, write: Write) -> Generator[None, None, Any]:
    """Apply one write as `resolve/_fold.py`'s `fold` does and return the new root; note the write in
    `writer` as the latest source of every path it reset or added to (a big value: in slices)."""
    if write.problem is not None:
        return root
    try:
        updated = write_at(root, write.path, write.method, write.value)
    except (Conflict, RecursionError):
        return root
    for number, target in enumerate(_touched(write, root), 1):
        if number % FOLD_WORK == 0:
            yield
        writer[target] = index
    return updated


class Track:
    """The fold of one lane from a starting mark, with a `Mark` kept every `SPACING` writes or more (more
    when the value is big, so that the marks take memory in proportion to the writes): a cursor anywhere
    resumes from the nearest mark before it, or from the last answer when that is nearer (a step forward)."""

    def __init__(self, lane: Lane, start: Mark) -> None:
        self.lane, self.marks, self.last = lane, [start], start

    def steps(self, context: Context, count: int, out: list[Mark]) -> Iterator[None]:
        """The fold of the lane's first `count` writes of `context` (appended to `out`), in slices."""
        if count == self.last.count:
            out.append(self.last)
            return
        marks = self.marks
        mark = marks[bisect_right(marks, count, key=lambda m: m.count) - 1]
        if mark.count < self.last.count <= count:
            mark = self.last
        root, writer, done = mark.value, dict(mark.writer), mark.count
        while done < count:
            if done % FOLD_WRITES == 0:
                yield
            index = self.lane.indices[done]
            root = yield from fold_step(root, writer, index, _write(context, index))
            done += 1
            # A mark copies `writer` (which keeps paths gone since: they are never looked up, and pruning
            # would cost more than it saves), so marks are further apart when it is big.
            if done > marks[-1].count and done - marks[-1].count >= max(SPACING, len(writer) // 8):
                marks.append(Mark(done, root, writer))
                writer = dict(writer)
        self.last = Mark(done, root, writer)
        out.append(self.last)


@dataclass
class Layers:
    """Every data message's write, by kind (global layer) and by identity (instance layer), in order, and
    the folds of those lanes (`Track`) kept while the context is unchanged."""

    order: dict[Identity, int] = field(default_factory=dict)  # identity -> index of its first message
    global_lanes: dict[str, Lane] = field(default_factory=dict)
    instance_lanes: dict[Identity, Lane] = field(default_factory=dict)
    scanned: int = 0  # messages scanned so far (a scan interrupted by a new cursor resumes there)
    complete: bool = False  # the scan reached the end of the context
    global_tracks: dict[str, Track] = field(default_factory=dict)
    # An instance lane folds on top of its kind's global layer as of the cursor: its track holds for one
    # count of global writes (the int), and starts again when a cursor move changes that count.
    instance_tracks: dict[Identity, tuple[int, Track]] = field(default_factory=dict)

    def identities(self, at: int) -> list[Identity]:
        return [identity for identity, first in self.order.items() if first < at]

    def fold_steps(self, context: Context, identity: Identity, at: int, out: list[Mark]) -> Iterator[None]:
        """The fold of `identity` over the first `at` messages (global layer, then its instance layer)."""
        kind, instance = identity
        lane = self.global_lanes.get(kind, Lane())
        track = self.global_tracks.get(kind) or self.global_tracks.setdefault(kind, Track(lane, Mark(0, MISSING, {})))
        base: list[Mark] = []
        yield from track.steps(context, bisect_left(lane.indices, at), base)
        if instance is None:
            out.append(base[0])
            return
        lane = self.instance_lanes.get(identity, Lane())
        known = self.instance_tracks.get(identity)
        if known is None or known[0] != base[0].count:
            known = (base[0].count, Track(lane, Mark(0, base[0].value, base[0].writer)))
            self.instance_tracks[identity] = known
        yield from known[1].steps(context, bisect_left(lane.indices, at), out)


# Freeing a scan of 100,000 messages at once takes milliseconds that add up: a dropped scan's lists wait
# here and are freed a few at a time (`free_some`).
_graveyard: list[list[Any]] = []


def bury(layers: Layers) -> None:
    """Empty `layers`, keeping its contents alive until `free_some` frees them in small pieces."""
    _graveyard.extend(track.marks for track in layers.global_tracks.values())
    _graveyard.extend(track.marks for _, track in layers.instance_tracks.values())
    layers.order.clear()
    layers.global_lanes.clear()
    layers.instance_lanes.clear()
    layers.global_tracks.clear()
    layers.instance_tracks.clear()
    layers.scanned, layers.complete = 0, False


def free_some(deadline: float) -> bool:
    """Free buried lists until `deadline` (a `time.perf_counter()` value); True when none are left."""
    while _graveyard and time.perf_counter() < deadline:
        chunk = _graveyard.pop()
        while len(chunk) > SLICE:  # a long list goes in slices too
            del chunk[-SLICE:]
            if time.perf_counter() >= deadline:
                _graveyard.append(chunk)
                return False
    return not _graveyard


def scan_steps(context: Context, out: Layers) -> Iterator[None]:
    """Fill `out` from `context` (from where an earlier scan stopped), yielding every `SLICE` messages.

    The context does not change meanwhile: `CursorState.steps` starts again on new `Layers` when it does.
    """
    index = out.scanned
    while index < len(context):
        if index % SLICE == 0 and index > out.scanned:
            out.scanned = index
            yield
        info = context.info(index)
        identity = info.identity
        if identity is not None and info.write is not None:
            out.order.setdefault(identity, index)
            kind, instance = identity
            if instance is None:
                lane = out.global_lanes.get(kind) or out.global_lanes.setdefault(kind, Lane())
            else:
                lane = out.instance_lanes.get(identity) or out.instance_lanes.setdefault(identity, Lane())
            lane.indices.append(index)
        index += 1
    out.scanned, out.complete = index, True


def state_steps(context: Context, at: int | None, layers: Layers, out: list[IdentityState]) -> Iterator[None]:
    """The whole state as of the first `at` messages into `out`, one identity after another.

    `layers` scanned earlier from the same (unchanged) context is reused, with its folds; an incomplete
    one is filled here.
    """
    limit = len(context) if at is None else min(at, len(context))
    if not layers.complete:
        yield from scan_steps(context, layers)
    for identity in layers.identities(limit):
        mark: list[Mark] = []
        yield from layers.fold_steps(context, identity, limit, mark)
        out.append(IdentityState(identity, mark[0].value, mark[0].writer))
        yield  # between two identities: each refolds at most `SPACING` writes after a jump



class CursorState:
    """The state of one context at any cursor: every identity's value and who set each of its paths.

    The scan of the messages and the folds are kept between cursor moves while the context is unchanged;
    an edit drops them (`free_some` frees them in slices). `steps` computes in slices, `at` at once.
    """

    def __init__(self, context: Context) -> None:
        self.context = context
        self._layers = Layers()
        self._busy: Layers | None = None  # what an unfinished `steps` reads
        for signal in self._signals():
            signal.connect(self._stale)

    def _signals(self) -> tuple[Any, ...]:
        context = self.context
        return (context.inserted, context.removed, context.moved, context.replaced)

    def close(self) -> None:
        """Stop following the context and drop the folds (for good: make a new one to compute again)."""
        for signal in self._signals():
            signal.disconnect(self._stale)
        self._stale()

    def _stale(self, *_args: object) -> None:
        old, self._layers = self._layers, Layers()
        if old is not self._busy:  # else the computation under way still reads it: buried when replaced
            bury(old)

    def steps(self, at: int | None, out: list[IdentityState]) -> Iterator[None]:
        """The state as of the first `at` messages (None: all) into `out`, yielding every few milliseconds.

        Starting another computation abandons an unfinished one (its results are not complete). An edit
        between two slices starts this one again on the edited messages: the scan so far, and the folds,
        name messages by their old indices."""
        while True:
            if self._busy is not None and self._busy is not self._layers:
                bury(self._busy)  # an interrupted computation's scan of an older context
            layers = self._busy = self._layers
            for _ in state_steps(self.context, at, layers, out):
                yield
                if self._layers is not layers:
                    out.clear()
                    break
            else:
                break
        if self._busy is layers:
            self._busy = None
        if _paranoid.ENABLED:
            messages = self.context._store.listed
            _paranoid.check_identities("CursorState", [state.identity for state in out], messages, at)
            for state in out:
                _paranoid.check_value("CursorState", state.value, messages, *state.identity, at)

    def at(self, at: int | None = None) -> list[IdentityState]:
        """The state as of the first `at` messages, computed at once."""
        out: list[IdentityState] = []
        for _ in self.steps(at, out):
            pass
        return out

    def blame(self, kind: str, instance: str | None, path: Path, at: int | None = None) -> Blame:
        """Who made the value at `path` of (kind, instance) what it is and what each write shadowed."""
        reference = Reference(kind, path)
        return self.context.blame(Expression(str(reference), ((reference,),)), instance, at)

    @staticmethod
    def free_some(deadline: float) -> bool:
        """Free dropped folds until `deadline` (a `time.perf_counter()` value); True when none are left."""
        return free_some(deadline)
