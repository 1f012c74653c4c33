"""The whole state at a cursor, with the message that set each path: `CursorState`, in small slices.

`CursorState.steps` is a generator: each `next()` does a few milliseconds of work, so a window painting the state never
blocks for long, however many messages there are. It folds each identity's writes, read from the context's index of them
(`Layer.all`: no message is scanned), exactly as the reference fold does (each write applied by `_index.attempt`, and
`_touched` agrees with `_fold.py`'s `_effect`), noting for every path the last message that set it, in one pass instead
of one resolution per path. The folds keep marks (`Track`), so that moving the cursor refolds a few writes per identity,
not the whole history. What a write shadowed, and every earlier write, is `Context.blame`'s (`CursorState.blame`). This
is the one place that answers "which message set this value".
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..protocol._expressions import Expression, Reference
from ..protocol._messages import MISSING, Path, Write, get_path
from ..protocol._methods import WRITE_METHODS, Owned
from ..resolve import _paranoid
from ..resolve._graveyard import let_go
from ..resolve._incremental._blame import Blame
from ..resolve._incremental._index import FOLD_WORK, Checkpoint, attempt
from ..resolve._incremental._store import Identity, Store
from ._context import Context

FOLD_WRITES = 25  # writes folded between two looks at the clock
SPACING = 16  # writes between two marks of a track (at least): a cursor move refolds fewer than this
LONG_COPY = 4096  # paths whose setters a mark's copy touches in one long step (their objects scattered over the heap)


@dataclass(frozen=True)
class IdentityState:
    """An identity's (kind, instance) whole value at the cursor, and the message that last set each path."""

    identity: Identity
    value: Any = MISSING
    writer: dict[Path, int] = field(default_factory=dict)  # may name paths gone since: look up existing ones


# A layer's fold just after one of its writes, and the index of the message that set each path: never
# changed once in a mark.
Mark = Checkpoint[dict[Path, int]]


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


def _touched(write: Write, start: int, appends: Callable[[Any], list[Any]] | None) -> Iterator[Path]:
    """The paths a write resets or adds to, among those that exist after it: its ancestors, its path and
    what it writes there (what push and concat append: `appends`, from `start`, the length of the array before).

    These are exactly the existing paths for which `resolve/_fold.py`'s `_effect` is "reset" or "add": above the write
    always; at and below it, every path inside the written value (a merge or an assign walks the new value, so any path
    in it is reached), and nothing else (a path the write does not reach keeps its value). So the setter of a path is
    the last write that listed it (tests/engine/document/test_state.py checks this against `ctx.blame`)."""
    path = write.path
    for depth in range(len(path)):
        yield path[:depth]
    if appends is None:
        yield from ((*path, *sub) for sub in _all_paths(write.value))
        return
    yield path
    for offset, item in enumerate(appends(write.value)):
        yield from ((*path, str(start + offset), *sub) for sub in _all_paths(item))


def fold_step(root: Any, writer: dict[Path, int], index: int, write: Write, owned: Owned | None = None
              ) -> Generator[None, None, Any]:
    """Apply one write as `resolve/_fold.py`'s `fold` does (`owned`: in place, `write_at`) and return the new root;
    note the write in `writer` as the latest source of every path it reset or added to (a big value: in slices)."""
    appends = WRITE_METHODS[write.method].appends
    before = MISSING if appends is None else get_path(root, write.path)
    length = len(before) if isinstance(before, list) else 0  # (before the write: it may append in place)
    updated, problem, _ = attempt(root, write, owned)
    if problem is not None:
        return root
    if length >= FOLD_WORK:
        yield  # it may have copied a long array (values are persistent): the clock is looked at after it
    for number, target in enumerate(_touched(write, length, appends), 1):
        if number % FOLD_WORK == 0:
            yield
        writer[target] = index
    return updated


class Track:
    """The fold of one layer's writes (its `Layer.all`: ids in order) from a starting mark, with a mark
    kept every `SPACING` writes or more (more when the value is big, so that the marks take memory in
    proportion to the writes): a cursor anywhere resumes from the nearest mark before it, or from the last
    answer when that is nearer (a step forward). Counts and indices hold while the context is unchanged."""

    def __init__(self, ids: list[int], start: Mark) -> None:
        self.ids, self.marks, self.last = ids, [start], start
        self.counts = [0]  # per mark, how many writes it comes after
        self.done = 0  # how many writes `last` comes after

    def steps(self, store: Store, count: int) -> Generator[bool | None, None, Mark]:
        """The fold of the layer's first `count` writes, in slices."""
        if count == self.done:
            return self.last
        marks, counts = self.marks, self.counts
        at = bisect_right(counts, count) - 1
        mark, done = marks[at], counts[at]
        if done < self.done <= count:
            mark, done = self.last, self.done
        if len(mark.held) >= LONG_COPY:
            yield True  # (resuming copies who set each path: the copy begins a slice)
        root, writer, message_id = mark.root, dict(mark.held), mark.after
        owned = Owned()  # the containers made since the last mark (nobody sees `root` before the next)
        while done < count:
            if done % FOLD_WRITES == 0 or done == counts[-1]:  # (a mark just made: its copy a piece alone)
                yield False
            message_id = self.ids[done]
            root = yield from fold_step(root, writer, store.order.index_of(message_id), store.writes[message_id], owned)
            done += 1
            # A mark copies `writer` (which keeps paths gone since: they are never looked up, and pruning
            # would cost more than it saves), so marks are further apart when it is big.
            if done > counts[-1] and done - counts[-1] >= max(SPACING, len(writer) // 8):
                if len(writer) >= LONG_COPY:
                    yield True  # (the copy begins a slice)
                marks.append(Checkpoint(message_id, root, writer))
                owned.clear()
                counts.append(done)
                writer = dict(writer)
        self.last, self.done = Checkpoint(message_id, root, writer), done
        return self.last


@dataclass
class Folds:
    """The folds (`Track`) of every layer the state was asked about, kept while the context's `revision` is
    the one they were made at (appends since leave them true: a fold continues past its last mark)."""

    revision: int
    global_tracks: dict[str, Track] = field(default_factory=dict)
    # An instance layer folds on top of its kind's global layer as of the cursor: its track holds for one
    # count of global writes (the int), and starts again when a cursor move changes that count.
    instance_tracks: dict[Identity, tuple[int, Track]] = field(default_factory=dict)

    def fold_steps(self, store: Store, identity: Identity, limit: int | None) -> Generator[bool | None, None, Mark]:
        """The fold of `identity` up to order key `limit` (global layer, then its instance layer). A track reads
        its layer's own list (made when missing): writes appended to it later are the track's to fold."""
        kind, instance = identity
        ids = store.layer((kind, None)).all
        track = self.global_tracks.get(kind)
        if track is None:
            track = self.global_tracks[kind] = Track(ids, Checkpoint(0, MISSING, {}))
        count = _count(store, ids, limit)
        base = yield from track.steps(store, count)
        if instance is None:
            return base
        ids = store.layer(identity).all
        known = self.instance_tracks.get(identity)
        if known is None or known[0] != count:
            if known is not None:  # folded on another global count: its marks are freed in slices
                _bury_track(known[1])
            known = (count, Track(ids, Checkpoint(0, base.root, base.held)))
            self.instance_tracks[identity] = known
        return (yield from known[1].steps(store, _count(store, ids, limit)))


def _count(store: Store, ids: list[int], limit: int | None) -> int:
    """How many of a layer's writes are at or before order key `limit` (None: all)."""
    return len(ids) if limit is None else bisect_right(ids, limit, key=store.order.key.__getitem__)


def bury(folds: Folds) -> Iterator[None]:
    """Empty `folds` a track a step, letting go of its marks and their writers: let go of itself (`let_go(bury(f))`),
    so the graveyard takes the steps in its slices (a million messages' folds hold some 47,000 marks)."""
    while folds.global_tracks or folds.instance_tracks:
        _bury_track(folds.global_tracks.popitem()[1] if folds.global_tracks else folds.instance_tracks.popitem()[1][1])
        yield


def _bury_track(track: Track) -> None:
    # The writers under the marks: the marks go first (each then frees little), their writers a slice at a time (one
    # buried twice is emptied once: `free_some` passes over it while the other still holds it).
    let_go(*map(itemgetter(2), track.marks), track.last.held, track.marks)


def state_steps(context: Context, at: int | None, folds: Folds, out: list[IdentityState]) -> Iterator[bool | None]:
    """The whole state as of the first `at` messages into `out`, one identity after another, reusing the
    folds in `folds` (made earlier from the same, unchanged, context)."""
    store, limit = context._store, context._limit_key(at)
    for identity in context.identities(at):
        mark = yield from folds.fold_steps(store, identity, limit)
        out.append(IdentityState(identity, mark.root, mark.held))
        yield False  # between two identities: each refolds at most `SPACING` writes after a jump


class CursorState:
    """The state of one context at any cursor: every identity's value and who set each of its paths, in slices
    (`steps`) or at once (`at`). The `Folds` are kept between cursor moves; after an edit other than an append
    they are dropped at the next computation (freed in slices once `free_later` is on)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self._folds = Folds(context.revision)
        self._busy: Folds | None = None  # what an unfinished `steps` reads

    def close(self) -> None:
        """Drop the folds for good (they are freed in slices)."""
        self._current()
        let_go(bury(self._folds))

    def _current(self) -> Folds:
        """The folds, new when the context had an edit but an append since they were made (the old ones
        buried, unless the computation under way still reads them: buried when it starts again)."""
        revision = self.context.revision
        if self._folds.revision != revision:
            old, self._folds = self._folds, Folds(revision)
            if old is not self._busy:
                let_go(bury(old))
        return self._folds

    def steps(self, at: int | None, out: list[IdentityState]) -> Iterator[bool | None]:
        """The state as of the first `at` messages (None: all) into `out`, yielding every few milliseconds (True: the
        next piece is one long step, with which a caller working in slices begins its next one).

        Starting another computation abandons an unfinished one (its results are not complete). An edit
        between two slices starts this one again on the edited messages (after an append, with the folds
        so far; after another edit, anew: they name messages by their old indices and counts)."""
        while True:
            folds, size = self._current(), len(self.context)
            if self._busy is not None and self._busy is not folds:
                let_go(bury(self._busy))  # an interrupted computation's folds of an older context
            self._busy = folds
            for long_next in state_steps(self.context, at, folds, out):
                yield long_next
                if self._current() is not folds or len(self.context) != size:
                    out.clear()
                    break
            else:
                break
        if self._busy is folds:
            self._busy = None
        if _paranoid.ENABLED:
            _paranoid.check_states("CursorState", out, self.context._store.listed, at)

    def at(self, at: int | None = None) -> list[IdentityState]:
        """The state as of the first `at` messages, computed at once."""
        out: list[IdentityState] = []
        for _ in self.steps(at, out):
            pass
        return out

    def blame(self, kind: str, instance: str | None, path: Path, at: int | None = None) -> Blame:
        """Who made the value at `path` of (kind, instance) what it is and what each write shadowed."""
        reference = Reference(kind, path)
        return self.context.blame(Expression(str(reference), ((reference,),), (reference,)), instance, at)
