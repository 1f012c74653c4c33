"""A track's fold, kept and repaired: one step for an append, a partial refold that splices otherwise.

A track folds the writes of one lane (see `_index`). Every few writes it keeps a `Checkpoint`. After an edit in the
middle it resumes from the last checkpoint before the edit and folds on; it asks whether the new fold has become
*equivalent* to the old one — the same root type and the same lane value, exactly — right at the edited write when the
edit is one write at one place, else at each old checkpoint past the edit. From there the future is the same sequence of
writes on the same state, so the old rest is spliced on instead of folded again. Sources and diagnostics are the only
things that remember the past, and they compose: diagnostics are appended, and sources are appended to until a reset —
so the new sources are the new prefix plus what the old fold added since, unless the old fold reset them later (then
they are the old ones).

The two folds need not be equal: when they differ at a few paths that the rest of the lane leaves alone
or replaces whatever they hold (`_patches`), the old rest is spliced on with those values put back
(`Patch`), up to the write that replaced each. An instance track under a changed global fold does the
same at the start of its own layer (`_same_base`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ...protocol._messages import MISSING, Path, Write
from ...protocol._methods import Owned
from .._keys import Ids
from .._order import NOT_IN_ORDER
from . import _index
from ._index import Checkpoint, Gap, Layer, Probe, ProbeState, SourceEdit, Sources, State, checkpoint, fold_lane, kept
from ._patches import Patch, Patches, Seen, patch_to, patched

if TYPE_CHECKING:
    from ._store import Store


TrackCheckpoint = Checkpoint[ProbeState]


class Rebase(NamedTuple):
    """Old marks `start` to `end` (exclusive) as a splice left them: rebased from the checkpoint `matched`
    to `here`, their roots patched by `patch` (None: none). `moved`: what that does to any mark's probes (`moves`),
    empty until the first read of a mark works it out, then its one item; the copies made of it share it."""

    start: int
    end: int
    matched: TrackCheckpoint
    here: TrackCheckpoint
    patch: Patch | None
    moved: list[_Moved | None]

    def moves(self) -> _Moved | None:
        if not self.moved:
            self.moved.append(_moved(self.matched, self.here))
        return self.moved[0]


class Marks:
    """A track's checkpoints in fold order. A splice rebases the old ones after it lazily: each read
    applies the pending rebases whose range holds it (they are few, and flattened when they pile up)."""

    __slots__ = ("items", "rebases")

    def __init__(self, items: list[TrackCheckpoint] | None = None, rebases: list[Rebase] | None = None) -> None:
        self.items = items if items is not None else []
        self.rebases = rebases if rebases is not None else []

    def __len__(self) -> int:
        return len(self.items)

    def get(self, index: int) -> TrackCheckpoint:
        mark, owned = self.items[index], Owned()  # (a long array patched by several rebases is copied once)
        for rebase in self.rebases:
            if rebase.start <= index < rebase.end:
                mark = _rebased(mark, rebase, owned)
        return mark

    def plus(self, mark: TrackCheckpoint) -> Marks:
        return Marks([*self.items, mark], self.rebases)

    def head(self, count: int) -> Marks:
        """The first `count` marks (their rebases end there too: marks added after are new)."""
        kept = [old if old.end <= count else Rebase(old.start, count, old.matched, old.here, old.patch, old.moved)
                for old in self.rebases if old.start < count]
        return Marks(self.items[:count], kept)

    def spliced(self, head: Marks, fresh: list[TrackCheckpoint], later: int, matched: TrackCheckpoint,
            here: TrackCheckpoint, patches: Patches) -> Marks:
        """`head`, then `fresh`, then this one's marks from `later` on, rebased from `matched` to `here`,
        their roots patched by each patch up to the mark it stops at (None: all of them)."""
        offset = len(head) + len(fresh) - later
        items = [*head.items, *fresh, *self.items[later:]]
        rebases = [*head.rebases]
        rebases += [old if offset == 0 and old.start >= later else Rebase(
                    max(old.start, later) + offset, old.end + offset, old.matched, old.here, old.patch, old.moved)
                    for old in self.rebases if old.end > later]
        start = later + offset
        if start < len(items) and matched.held != here.held:
            _add_rebase(rebases, Rebase(start, len(items), matched, here, None, []))
        for patch, until in patches:  # a rebase from `here` to itself only patches the root
            cut = len(items) if until is None else max(later, until) + offset
            if start < cut:
                _add_rebase(rebases, Rebase(start, cut, here, here, patch, [None]))
        marks = Marks(items, rebases)
        if len(rebases) > MOST_REBASES:
            marks = Marks(marks.settled())
        return marks

    def settled(self) -> list[TrackCheckpoint]:
        """Every mark with its pending rebases applied.

        A fold's problems only grow, so each mark's problems are the first ones of the last mark's: those are read once,
        and every other mark's are a prefix of them (`Chain.first`), its length worked out from the rebases. Rebasing
        each mark's chain on its own would read every problem once per mark and flatten each mark of a deep splice:
        O(marks × problems) for a lane with many marks and many problems. What a rebase does to the probes is worked out
        once (`_Moved`), not per mark, since a lane's marks are many and its pending rebases few."""
        if not self.items:
            return []
        last = self.get(len(self.items) - 1)
        problems = [chain.flattened() for chain in last.held.diagnostics]
        stepwise = [(rebase, moved) for rebase in self.rebases if (moved := rebase.moves()) or rebase.patch]
        settled = []
        for index, mark in enumerate(self.items[:-1]):
            root, (sources, diagnostics, resets, gaps) = mark.root, mark.held
            sizes = [len(chain) for chain in diagnostics]
            owned = Owned()  # (a long array patched again and again is copied once)
            for rebase, moved in stepwise:
                if rebase.start <= index < rebase.end:
                    root = patched(root, rebase.patch, owned)
                    if moved is not None:
                        sources, resets, gaps = moved.applied(sources, resets, gaps)
                        sizes = [n + d for n, d in zip(sizes, moved.problem_shift, strict=True)]
            chains = tuple(chain.first(size) for chain, size in zip(problems, sizes, strict=True))
            settled.append(Checkpoint(mark.after, root, ProbeState(sources, chains, resets, gaps)))
        return [*settled, last._replace(held=last.held._replace(diagnostics=tuple(problems)))]


class _Moved(NamedTuple):
    """What a rebase from `matched` to `here` does to any mark's probes, worked out once for all the marks it
    covers (`Rebase.moves`, read by `Marks.settled` and `_rebased`): per probe, the sources at the splice (None:
    the same as at the old one) and how many it had at the old one, its resets there and how they shift, how its
    problems shift; and how the gaps shift. A probe reset since the old splice keeps its sources."""

    prefixes: tuple[Sources | None, ...]
    cuts: tuple[int, ...]
    resets: tuple[int, ...]
    reset_shift: tuple[int, ...]
    problem_shift: tuple[int, ...]
    gap_shift: int

    def applied(self, sources: tuple[Sources, ...], resets: tuple[int, ...],
            gaps: int) -> tuple[tuple[Sources, ...], tuple[int, ...], int]:
        """A mark's sources, resets and gaps, rebased (its problems: `problem_shift` more per probe)."""
        rebased = tuple(
            s if r != m or p is None else _joined(p, s, c)
            for s, r, m, p, c in zip(sources, resets, self.resets, self.prefixes, self.cuts, strict=True)
        )
        shifted = tuple(r + d for r, d in zip(resets, self.reset_shift, strict=True))
        return rebased, shifted, gaps + self.gap_shift


def _moved(matched: TrackCheckpoint, here: TrackCheckpoint) -> _Moved | None:
    """What rebasing from `matched` to `here` does to a mark's probes (None: nothing, only roots change)."""
    if matched is here or matched.held == here.held:
        return None
    old, new = matched.held, here.held
    return _Moved(
        tuple(
            None if _same(now, was) else now
            for now, was in zip(new.sources, old.sources, strict=True)
        ),
        tuple(len(was) for was in old.sources),
        old.resets,
        tuple(now - was for now, was in zip(new.resets, old.resets, strict=True)),
        tuple(len(now) - len(was) for now, was in zip(new.diagnostics, old.diagnostics, strict=True)),
        new.gaps - old.gaps,
    )


# Pending rebases of a track's marks before they are applied once (module global: tests make it small).
MOST_REBASES = 32


def _add_rebase(rebases: list[Rebase], new: Rebase) -> None:
    """Add a rebase after `rebases`, composed with an earlier one where the two make one, so that they do
    not pile up: a global write appended under an instance track rebases all its marks each time.

    A rebase of the probes (no patch) leaves roots alone and a patch leaves the probes alone, so the two kinds commute;
    two rebases of the probes over the same marks, the second from where the first left them, are one from the first's
    start to the second's end; a patch that sets a path outright makes an earlier patch of that very path over no more
    marks needless (unless a patch in between reaches into or above that path)."""
    patch = new.patch
    for position in range(len(rebases) - 1, -1, -1):
        old = rebases[position]
        if old.end <= new.start or new.end <= old.start:
            continue  # over other marks
        if (old.patch is None) != (patch is None):
            continue  # they commute
        if patch is None:
            if (old.start, old.end) == (new.start, new.end) and old.here.held == new.matched.held:
                rebases[position] = Rebase(old.start, old.end, old.matched, new.here, None, [])
                return
            break
        assert old.patch is not None
        if old.patch.path == patch.path:
            if not (patch.prefix or patch.order) and new.start <= old.start and old.end <= new.end:
                del rebases[position]
            break
        if not _unrelated(old.patch.path, patch.path):
            break
    rebases.append(new)


def _unrelated(a: Path, b: Path) -> bool:
    """Whether neither path is a prefix of the other."""
    size = min(len(a), len(b))
    return a[:size] != b[:size]


LaneMark = Checkpoint[None]  # a lane's value (MISSING: none yet) just after one of its writes
LaneMarks = dict[str, tuple[LaneMark, ...]]  # per lane, in order; built lazily, so some may be missing


@dataclass(slots=True)
class Fold:
    """One track's fold: the global state it continued from, its own state, gaps and checkpoints (and,
    for a whole-kind track, its lanes' marks: `_whole`)."""

    base: State
    state: State
    gaps: list[Gap]
    checkpoints: Marks
    lanes: LaneMarks = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state.freeze()


@dataclass(slots=True)
class TrackEdit:
    """What an edit asks of one track.

    An edit is one message at one place (a move is planned as a remove, then an insert: `Context._move`). `appended`:
    its id, when its write is now the last of this view's fold (one step will do); `base`: the global layer changed
    under an instance track (fold its own layer again from the start); `edited`, `low`: its id and order key, when it is
    in the track's own layer (None: not there), and `dropped` the write it had there before the edit (None: none)."""

    appended: int | None = None
    base: bool = False
    edited: int | None = None
    low: int | None = None
    dropped: Write | None = None


def full(store: Store, kind: str, instance: str | None, lane: str | None, paths: list[Path], base: Fold | None,
        steps: int | None = None) -> Iterator[Fold | None]:
    """Fold a track from scratch (an instance track from its global track's fold `base`): None after each `steps`
    writes of its lane (None: all at once), then the fold. An edit between two may change what is folded so far:
    the caller starts again then (`Watchers.touch`)."""
    writes, key = store.writes, store.order.key.__getitem__
    layer = store.layer((kind, instance))
    state = _start(paths, base)
    gaps: list[Gap] = []
    checkpoints: list[TrackCheckpoint] = []
    owned = Owned()  # (nobody sees `state` until the fold is given out)
    maker = MarksMaker(writes, state.root, owned) if lane is None else None
    after = None
    while True:
        subset = layer.subset(lane)
        first = 0 if after is None else bisect_right(subset, key(after), key=key)
        last = None if steps is None else _index.slice_end(subset, first, steps, writes, state.root)
        limit = None if last is None else key(last)
        fold_lane(state, layer, lane, writes, key, limit, gaps, after=after, checkpoints=checkpoints, converge=maker,
                  owned=owned)
        if last is None:
            break
        if gaps and gaps[-1] == Gap(last, None):
            gaps.pop()  # (where the slice ended, not the layer: the next slice scans on from there)
        after = last
        yield None
    lanes = {} if maker is None else maker.made()
    owned.clear()
    yield Fold(state if base is None else base.state, state, gaps, Marks(checkpoints), lanes=lanes)


def step(store: Store, old: Fold, message_id: int, base: Fold | None, lane: str | None, layer: Layer) -> Fold:
    """The fold after a write appended to the track's own layer `layer`, the track of `lane`."""
    state = State(list(old.state.probes), old.state.root)  # (the probes it changes are copied: `State.step`)
    write = store.writes[message_id]
    order_key = store.order.key[message_id]
    state.step(message_id, write, order_key, last=True)
    for before, probe in zip(old.state.probes, state.probes, strict=True):
        if probe.resets == before.resets and len(probe.sources) == len(before.sources) + 1:
            # Its sources grew by this write: said, so that its result's keys are the old ones plus one (`_grown`),
            # and so are an instance fold's over it (`_SharedSources`), with no comparison of the two.
            probe.edits = (SourceEdit(kept(before.sources), [], [order_key]),)
    gaps, checkpoints = old.gaps, old.checkpoints
    # A checkpoint counts the gaps before its write, as `fold_lane`'s do: a splice there takes the old
    # fold's gaps from that count on, the one this write opens included.
    counted = len(gaps)
    if not isinstance(state.root, dict):
        gaps = [*gaps, Gap(message_id, None)]
    elif lane is not None and gaps and gaps[-1].after is None:
        # The gap open to the end closes at this write, as `fold_lane` closes it: at a write of the lane, or through the
        # write that made the root an object. Left open, it would hold every later write of the layer, and the track
        # would keep marks at writes outside its lane, which a move can leave out of order.
        written = _index.lanes_of(write)
        gaps = [*gaps[:-1], Gap(gaps[-1].before, message_id, written is not None and lane not in written)]
    subset = layer.subset(lane)
    if subset and subset[-1] == message_id and _index.checkpoint_at(len(subset), lane is None):
        checkpoints = checkpoints.plus(checkpoint(state, message_id, counted))
    lanes = marks_after_step(old.lanes, layer, message_id, write, state.root)
    return Fold(state if base is None else base.state, state, gaps, checkpoints, lanes)


def lane_mark(count: int, message_id: int, value: Any) -> LaneMark | None:
    """The lane mark a whole-kind fold keeps just after the `count`th write of a lane (`Layer.subset`: its own
    writes and every universal one), with the lane's `value` there; None where it keeps none. The one rule of a
    fold from scratch (`MarksMaker`), an append (`marks_after_step`) and a repair (`_whole`): `checkpoint_at`. The
    callers make none at a write with a problem of its own (removing it refolds no lane, so the mark would outlive
    its message), and none at all once a write replaces the root or when the fold starts from something else than
    an object (or nothing): whole-kind repairs do not hold there (`_whole`)."""
    return Checkpoint(message_id, value, None) if _index.checkpoint_at(count, value=value) else None


class MarksMaker:
    """The lane marks of a whole-kind track folded from scratch, made as it folds (`fold_lane`'s `converge`,
    called after each write with the state so far; the writes with a problem, the universal ones here, count
    in every lane): `lane_mark`'s."""

    __slots__ = ("marks", "own", "owned", "universal", "writes")

    def __init__(self, writes: Sequence[Write], start: Any, owned: Owned) -> None:
        self.writes, self.owned = writes, owned  # (cleared at a mark: the fold's containers are shared from then on)
        self.marks: dict[str, list[LaneMark]] | None = {} if start is MISSING or type(start) is dict else None
        self.own: dict[str, int] = {}  # per lane, its own writes so far
        self.universal = 0  # the writes in every lane's so far

    def __call__(self, message_id: int, state: State) -> None:
        marks, write = self.marks, self.writes[message_id]
        if marks is None or write.problem is not None:
            self.universal += 1
            return
        lanes = _index.lanes_of(write)
        if lanes is None:  # it replaces the root
            self.marks = None
            return
        for lane in lanes:
            count = self.own[lane] = self.own.get(lane, 0) + 1
            kept = marks.setdefault(lane, [])
            if (mark := lane_mark(count + self.universal, message_id, lane_value(state.root, lane))) is not None:
                kept.append(mark)
                self.owned.clear()

    def made(self) -> LaneMarks:
        return {} if self.marks is None else {lane: tuple(marks) for lane, marks in self.marks.items()}


def marks_after_step(fold_lanes: LaneMarks, layer: Layer, message_id: int, write: Write, root: Any) -> LaneMarks:
    """The lane marks of a whole-kind fold after its own layer's last write was appended (`lane_mark`'s; lanes not
    yet built stay so); none at all after a write that replaces the root."""
    if not fold_lanes or write.problem is not None:
        return fold_lanes
    if _index.replaces_root(write):
        return {}
    added = {
        lane: (*marks, mark)
        for lane in _index.lanes_of(write) or ()
        if (marks := fold_lanes.get(lane)) is not None
        and (mark := lane_mark(len(layer.subset(lane)), message_id, lane_value(root, lane))) is not None
    }
    return {**fold_lanes, **added} if added else fold_lanes


def lane_value(root: Any, lane: str) -> Any:
    return root.get(lane, MISSING) if type(root) is dict else MISSING


def repair(store: Store, work: TrackEdit, old: Fold, kind: str, instance: str | None, lane: str | None,
        base: Fold | None) -> Fold:
    """The fold after an edit in the middle of its own layer, or a change of the global fold under it (never
    both: `_watches` repairs such an edit in two halves, and a whole kind lane by lane first, `_whole`):
    resume before the edit, splice the old rest on once equivalent.

    In phases: a change of the global fold alone is spliced at the start of the layer when the two global
    folds end alike (`_same_base`); otherwise the fold resumes from the last checkpoint before the edit
    (`_TrackRepair.resume`), compares the two sides right at a one-write edit (`splice_at_the_edit`), and
    else folds on until it meets an old checkpoint it is equivalent to (`fold_until_equivalent`)."""
    if work.base and work.low is None and base is not None:
        layer, writes = store.layer((kind, instance)), store.writes
        appends = lane is not None and layer.appends_from(lane, writes) == 0
        spliced = _same_base(old, base, lane, layer, writes, store.order.key, appends)
        if spliced is not None:
            return spliced
    job = _TrackRepair(store, work, old, kind, instance, lane, base)
    job.resume()
    if not work.base and work.low is not None:
        spliced = job.splice_at_the_edit()
        if spliced is not None:
            return spliced
    return job.fold_until_equivalent()


class _TrackRepair:
    """One track's fold repaired after an edit of its own layer (or a change of the global fold under it),
    phase by phase: `resume` from the last checkpoint before the edit, then `splice_at_the_edit` or
    `fold_until_equivalent`. Holds the fold under way (`state`, `gaps`, the old marks kept before it in
    `head`, the marks made since in `fresh`, the last write folded in `after`)."""

    def __init__(self, store: Store, work: TrackEdit, old: Fold, kind: str, instance: str | None, lane: str | None,
            base: Fold | None) -> None:
        self.work, self.old, self.lane, self.base = work, old, lane, base
        self.layer = store.layer((kind, instance))
        self.writes = store.writes
        self.keys = store.order.key
        self.key = self.keys.__getitem__
        self.paths = [probe.path for probe in old.state.probes]
        self.subset = self.layer.subset(lane)
        self.state = State([])
        self.gaps: list[Gap] = []
        self.head = Marks()
        self.fresh: list[TrackCheckpoint] = []
        self.after: int | None = None
        self.first = 0  # the first old mark past the restart

    def appends_from(self, position: int) -> bool:
        """Whether every write of the lane from `position` on appends to the lane's array."""
        return self.lane is not None and position >= self.layer.appends_from(self.lane, self.writes)

    def resume(self) -> None:
        """Start from the last old checkpoint before the edit (the start of the layer when there is none, or
        when the global fold changed under an instance track)."""
        work, old, marks = self.work, self.old, self.old.checkpoints
        before = 0 if work.base or work.low is None else first_mark(marks, work.low, self.keys, removed=work.low)
        if not before:
            self.state = _start(self.paths, self.base)
            self.gaps, self.head, self.after = [], Marks(), None
        else:
            mark = marks.get(before - 1)
            sources, problems, resets, _ = mark.held
            self.state = State([Probe(probe.path, sources[i], problems[i], resets[i])
                                for i, probe in enumerate(old.state.probes)], mark.root)
            self.gaps = old.gaps[: mark.held.gaps]
            self.head = marks.head(before)
            self.after = mark.after
        self.first = before

    def splice_at_the_edit(self) -> Fold | None:
        """One write edited: fold up to it, and compare the fold with and without the edit right there; the
        old rest spliced on when the two agree or differ only where the rest keeps them apart. None when they
        do not (the fold under way has then folded the edit: `fold_until_equivalent` goes on from there)."""
        work, lane, layer, writes, key, subset = self.work, self.lane, self.layer, self.writes, self.key, self.subset
        edited = work.edited
        assert edited is not None
        assert work.low is not None
        state = self.state
        fold_lane(state, layer, lane, writes, key, work.low - 1, self.gaps, after=self.after, checkpoints=self.fresh,
                  owned=_index.owned_in(subset))  # (nobody sees `state` before the edit is stepped on copies of it)
        if not isinstance(state.root, dict):  # fold the usual way, from the mark again
            self.resume()
            self.fresh = []
            return None
        position = bisect_left(subset, work.low, key=key)
        previous = subset[position - 1] if position else None
        bases = [(len(probe.sources), probe.resets) for probe in state.probes]  # what both sides share
        then = state.copy()
        dropped = work.dropped  # folded where it could change the lane (only its root is compared)
        if dropped is not None and (lane is None or (lanes := _index.lanes_of(dropped)) is None or lane in lanes):
            then.step(edited, dropped, work.low)
        if position < len(subset) and subset[position] == edited:
            state.step(edited, writes[edited], key(edited))
            position, previous = position + 1, edited
        way = patch_to(
            state.root, then.root, lane, self.paths, layer, work.low, writes, key, self.appends_from(position), Seen()
        )
        if way is not None and isinstance(state.root, dict) and isinstance(then.root, dict):
            marks, keys, low = self.old.checkpoints, self.keys, work.low
            later = first_mark(marks, low + 1, keys, self.first)  # the old marks past the edit
            patches = [(patch, _until(marks, later, cover, keys)) for patch, cover in way]
            was, is_now = (checkpoint(now, edited, len(self.gaps)) for now in (then, state))
            # (a removed message: at the edit)
            told = _SharedSources(bases, keys, low)
            return _splice(state, self.gaps, self.head, self.fresh, later, was, self.old, self.base, is_now, patches,
                           told)
        if previous is not None and (self.after is None or key(previous) > key(self.after)):
            self.after = previous
        return None

    def fold_until_equivalent(self) -> Fold:
        """Fold on, asking at each old checkpoint past the edit whether the new fold is equivalent to it there
        (equal, or different only where the rest keeps them apart: `_patches.patch_to`); splice the old rest
        on at the first that is, else the new fold goes to the end."""
        work, marks, keys, key, subset = self.work, self.old.checkpoints, self.keys, self.key, self.subset
        lane, paths, layer, writes = self.lane, self.paths, self.layer, self.writes
        matches = {marks.items[i].after: i for i in range(self.first, len(marks))}
        low = work.low
        found: list[tuple[int, Patches]] = []  # the matched mark, and how to patch the old rest
        seen = Seen()

        def converge(message_id: int, now: State) -> TrackCheckpoint | None:
            index = matches.get(message_id)
            if index is None or (low is not None and keys[message_id] <= low):  # (the edited one: at `low`, or gone)
                return None
            mark = marks.get(index)
            at = key(message_id)
            appends = self.appends_from(bisect_right(subset, at, key=key))
            way = patch_to(now.root, mark.root, lane, paths, layer, at, writes, key, appends, seen)
            if way is None:
                return None
            found.append((index, [(patch, _until(marks, index + 1, cover, keys)) for patch, cover in way]))
            return mark

        state, gaps, head, fresh, base = self.state, self.gaps, self.head, self.fresh, self.base
        matched = fold_lane(state, layer, lane, writes, key, gaps=gaps, after=self.after, checkpoints=fresh,
                            converge=converge, owned=_index.owned_in(subset))
        if matched is not None:
            index, patches = found[-1]
            return _splice(state, gaps, head, fresh, index + 1, matched, self.old, base, None, patches)
        return Fold(state if base is None else base.state, state, gaps, Marks([*head.items, *fresh], head.rebases))


def _until(marks: Marks, start: int, cover: int | None, keys: Sequence[int]) -> int | None:
    """The first old mark from `start` on that the write at order key `cover` comes before (None: none)."""
    return None if cover is None else first_mark(marks, cover, keys, start)


def _same_base(old: Fold, base: Fold, lane: str | None, layer: Layer, writes: Sequence[Write],
               keys: Sequence[int], appends: bool) -> Fold | None:
    """When the global fold ends as before (for this lane), the instance layer folds as before: only the
    sources and diagnostics it carried over from the global layer change. So too when the two differ at
    one path that the instance layer keeps apart (`_patches.cover`), or in the lane's array when the instance
    layer only appends to it. None otherwise."""
    paths = [probe.path for probe in old.state.probes]
    # (the global track follows the paths of every view, but its fold this one was made over may be older than one)
    before = {probe.path: probe for probe in old.base.probes}
    after = {probe.path: probe for probe in base.state.probes}
    key = keys.__getitem__
    if not all(path in before and path in after for path in paths):
        return None
    way = patch_to(base.state.root, old.base.root, lane, paths, layer, None, writes, key, appends, Seen())
    if way is None:
        return None
    patches = [(patch, _until(old.checkpoints, 0, cover, keys)) for patch, cover in way]
    # At the start of the layer: where the old global fold left the probes, and where the new one does.
    was, now = [before[path] for path in paths], [after[path] for path in paths]
    matched, here = (Checkpoint(0, old.state.root, _index.held(probes, 0)) for probes in (was, now))
    start = State(now, base.state.root)  # (read by `_splice`, never stepped)
    # A global append only grew the global fold's sources: the instance's results are told the one key gained.
    told = _SharedSources([(len(before[path].sources), before[path].resets) for path in paths], keys, -1)
    return _splice(start, [], Marks(), [], 0, matched, old, base, here, patches, told)


def _start(paths: list[Path], base: Fold | None) -> State:
    """A fold of `paths` at the start of its layer: from nothing, or from where the global track's fold
    (`base`) left the root and those of the paths it follows."""
    if base is None:
        return State([Probe(path) for path in paths])
    wanted = set(paths)
    by_path = {probe.path: probe for probe in base.state.probes if probe.path in wanted}
    return State([by_path[path].copy() if path in by_path else Probe(path) for path in paths], base.state.root)


def _splice(state: State, gaps: list[Gap], head: Marks, fresh: list[TrackCheckpoint], later: int,
        matched: TrackCheckpoint, old: Fold, base: Fold | None, start: TrackCheckpoint | None, patches: Patches,
        told: _SharedSources | None = None) -> Fold:
    """The new fold, equivalent at `matched` to the old one: the old rest with the new past.

    `head` and `fresh` are the new fold's checkpoints so far; the old ones from index `later` on follow, rebased.
    `start`: the fold is spliced at the start of its own layer (`matched` is then where the old global fold left the
    probes, `start` where the new one does). `patches`: where the new roots differ from the old rest's, each up to the
    old mark from which a write made them the same (None: the end). `told`: how many sources `state` and `matched`
    share, so that a probe whose sources changed says how, as order keys (`SourceEdit`): its result is its old keys
    edited, not its sources compared with the old ones (`_watches._grown`)."""
    here = start or checkpoint(state, matched.after, len(gaps))
    then = matched.held  # the old fold's probes at the splice
    probes = []
    for index, (now, final) in enumerate(zip(state.probes, old.state.probes, strict=True)):
        if final.resets == then.resets[index]:  # the sources `was` at the splice, `now.sources` there now
            was = then.sources[index]
            # (unchanged before the splice, most probes: the very `final.sources`, no copy for the collector to walk)
            sources = kept(final.sources) if _same(now.sources, was) else _joined(now.sources, final.sources, len(was))
            resets = now.resets
        else:
            sources, resets = kept(final.sources), now.resets + final.resets - then.resets[index]
        diagnostics = now.diagnostics.joined(final.diagnostics, then.diagnostics[index])
        if sources is final.sources and resets == final.resets and diagnostics is final.diagnostics:
            probes.append(final)  # unchanged: folds are never stepped in place, so they can share it
            continue
        probe = Probe(now.path, sources, diagnostics, resets)
        if sources is final.sources:
            probe.edits = final.edits  # (a move's second half: how they differ from the kept ones)
        elif told is not None and final.resets == then.resets[index]:
            change = told.change(index, now, then.sources[index], then.resets[index], kept(final.sources))
            if change is not None:
                probe.edits = (change,) if not final.edits else (change, final.edits[0].net(change))
        probes.append(probe)
    root = old.state.root
    for patch, until in patches:
        if until is None:
            root = patched(root, patch)
    spliced = State(probes, root)
    new_marks = fresh if start is not None else [*fresh, here]
    marks = old.checkpoints.spliced(head, new_marks, later, matched, here, patches)
    new_gaps = old.gaps if not gaps and not then.gaps else gaps + old.gaps[then.gaps :]  # (the same: no reindexing)
    return Fold(spliced if base is None else base.state, spliced, new_gaps, marks)


class _SharedSources(NamedTuple):
    """Per probe, how many sources and resets the two sides of a splice share from the start (`bases`: at a
    one-write repair, those before the edited write; under a changed global fold, the old one's, when the new one
    only grew from them), the order keys, and the key of a message no longer there (`low`; -1: not known, under a
    changed global fold)."""

    bases: list[tuple[int, int]]
    keys: Sequence[int]
    low: int

    def change(self, index: int, now: Probe, was: Sources, resets: int, final: Sources) -> SourceEdit | None:
        """How the sources `now` + the rest of `final` differ from `final` (`was` + the rest), as order keys (a
        fold's sources name each message once); None when a message lost has no key that is known."""
        size, before = self.bases[index]
        same = now.resets == resets == before
        # (Under a changed global fold, the global track's repair told how its new part differs from the old one,
        # `step` or a splice: the instance part after it holds other messages, so that is the change; else compared.)
        told = next((e for e in now.edits if e.sources is was), None) if self.low < 0 else None
        if same and told is not None and NOT_IN_ORDER not in told.lost:
            return SourceEdit(final, told.lost, told.gained)
        if not same or (self.low < 0 and tuple(now.sources[:size]) != tuple(was)):
            size = 0  # a side reset them, or the new global part is not the old one grown: they share none
        then, it = set(was[size:]), set(now.sources[size:])  # (`Ids` slice from the chunk the cut falls in)
        keys, low, lost = self.keys, self.low, then - it
        lost_keys = [keys[m] for m in lost]
        if low < 0 and NOT_IN_ORDER in lost_keys:
            return None
        return SourceEdit(final, [low if k == NOT_IN_ORDER else k for k in lost_keys], [keys[m] for m in it - then])


def _rebased(mark: TrackCheckpoint, rebase: Rebase, owned: Owned) -> TrackCheckpoint:
    """An old checkpoint after the splice point, as the new fold would have made it (`owned`: what the rebases of one
    read made, written in place)."""
    root, moved = patched(mark.root, rebase.patch, owned), rebase.moves()
    if moved is None:
        return mark if rebase.patch is None else mark._replace(root=root)
    old, then, now = mark.held, rebase.matched.held, rebase.here.held
    sources, resets, gaps = moved.applied(old.sources, old.resets, old.gaps)
    diagnostics = tuple(now.diagnostics[i].joined(d, then.diagnostics[i]) for i, d in enumerate(old.diagnostics))
    return Checkpoint(mark.after, root, ProbeState(sources, diagnostics, resets, gaps))


def _same(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether two sources hold the same ids (two `Ids` compared by the chunks they do not share)."""
    return a is b or (len(a) == len(b) and (a == b if type(a) is type(b) else tuple(a) == tuple(b)))


def _joined(head: Sequence[int], later: Sequence[int], cut: int) -> Sources:
    """`head`, then `later` from `cut` on: `Ids` (a long lane's: `checkpoint`) share the chunks of `later` past the one
    `cut` falls in, and those of `head`; else a tuple (`+`, not unpacking: a whole kind has thousands)."""
    if type(later) is Ids:
        return later.edited_at(cut, head, set(), {})
    return tuple(head) + tuple(later[cut:])


def first_mark(marks: Marks, limit: int, keys: Sequence[int], start: int = 0, removed: int = NOT_IN_ORDER) -> int:
    """The index of the first mark from `start` on at or past order key `limit` (len(marks): none): how many come
    before it. A mark of a message no longer in the order counts as at order key `removed` (before every key)."""
    return bisect_left(
        marks.items, limit, start, key=lambda mark: removed if (at := keys[mark.after]) == NOT_IN_ORDER else at)


__all__ = [
    "Fold", "LaneMark", "LaneMarks", "Layer", "MarksMaker", "TrackEdit", "first_mark", "full", "lane_mark",
    "lane_value", "marks_after_step", "repair", "step",
]
