"""Watches: live resolutions kept current after every edit, sharing their work through tracks.

A `Track` is the incremental fold of every watched path of one view (kind, instance) and one lane (first
segment): all the watches that read `†state.user.…` for instance ① share one fold, and each watched
path is a probe in it. The global track of a lane (instance None) follows the paths of every view, and
the instance tracks continue from its state, so the global layer is folded once for all instances.

After an edit, only the tracks whose lane the edited write can change are folded again (an append is
one step; an edit in an instance layer refolds only that layer). Tracks and watches keep sources as
order keys, which edits elsewhere do not change: after an insert, a remove or a move, the watches whose
tracks were not refolded are not looked at. A watch is called back only when its found, value or source
messages (their keys) changed; an edit that only renumbered them is no change, and `Watch.current` ranks
them in the new order when read (`_resolution.Kept`), so an edit costs O(refolded watches), not
O(watches).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ...protocol._expressions import Expression, Reference
from ...protocol._messages import MISSING, Path, Write, get_path
from .. import _paranoid
from .._chain import Chain, unlinked
from .._graveyard import let_go
from .._keys import EMPTY_KEYS, Keys, sealed_chunks, sort_in_pieces
from .._order import NOT_IN_ORDER, Ranks
from .._resolution import Kept, Resolution, changed, ranked
from . import _whole
from ._index import FOLD_STEPS, Gap, Probe, State, in_gap, lanes_of
from ._tracks import Fold, Marks, TrackEdit, full, repair, step

if TYPE_CHECKING:
    from ._store import Store


class Found(NamedTuple):
    """A watched path's result in a track: its sources as sorted order keys, its problems as the fold
    keeps them (a `Chain` of (order key, reason))."""

    value: Any  # MISSING when not found
    keys: Keys
    problems: Chain


def combine_keys(expression: Expression, found_of: Callable[[Reference], Found], ranks: Ranks,
                 union: Callable[[tuple[Keys, ...]], Keys] | None = None) -> Resolution:
    """SPEC 3 over key-space results: the first alternative whose references are all found wins; the
    resolution, its sources (`_keys`) and diagnostics ranked in `ranks` when read.

    The diagnostics are those of every reference looked at. A reference looked at twice has the very
    same problems, and two references never share one (each names its own path), so they are
    de-duplicated by reference, in O(1) each. `union` unites the keys of several values (`Union`)."""
    parts: list[tuple[str, Chain]] = []
    seen: set[str] = set()
    missing: list[str] = []
    for gate in expression.alternatives:
        values = [found_of(ref) for ref in gate]
        absent = None
        for ref, value in zip(gate, values, strict=True):
            if value.problems:  # (labels only where needed: a watch is evaluated after every edit of its fold)
                label = str(ref)
                if label not in seen:
                    seen.add(label)
                    parts.append((label, value.problems))
            if absent is None and value.value is MISSING:
                absent = str(ref)
        if absent is None:
            keys = values[0].keys if len(values) == 1 else (union or _union)(tuple(v.keys for v in values))
            return ranked(expression.source, True, values[-1].value, keys, tuple(parts), ranks)
        missing.append(absent)
    return ranked(expression.source, False, None, EMPTY_KEYS, tuple(parts), ranks, tuple(missing))


def _union(parts: tuple[Keys, ...]) -> Keys:
    """The sorted union of sorted keys (sorting concatenated runs merges them)."""
    return Keys.owning(list(dict.fromkeys(sorted(itertools.chain.from_iterable(parts)))))


class Union:
    """`_union`, remembering the last parts and their union: after an edit most parts are the very same keys, or the
    same keys with more after them (an append), so the union is the old one with what they gained: sorting and
    de-duplicating every key again reads each of hundreds of integers scattered in memory."""

    __slots__ = ("keys", "parts")

    def __init__(self) -> None:
        self.parts: tuple[Keys, ...] = ()
        self.keys: Keys = EMPTY_KEYS

    def __call__(self, parts: tuple[Keys, ...]) -> Keys:
        pairs = list(zip(parts, self.parts, strict=True)) if len(parts) == len(self.parts) else None
        if pairs is not None and all(new is old or new.grows(old) for new, old in pairs):
            gained = sorted({key for new, old in pairs if new is not old for key in new.tail(len(old))})
            keys = self.keys.edited((), gained) or self.keys  # (never None: none taken out)
        else:
            keys = _union(parts)
        self.parts, self.keys = parts, keys
        return keys


class Watch(Kept):
    """A live resolution: `current` is always up to date; `callback(resolution)` runs when its found, value
    or source messages change. An edit that only renumbers them (an insert, remove or move elsewhere) is no
    change: `current` is ranked in the new order when read."""

    # Slots: a middle edit reads a few hundred of them, and a slot is one load, not a lookup.
    __slots__ = ("_callback", "_owner", "_told", "_union", "expression", "instance", "serial", "tracks")

    def __init__(self, owner: Watchers, expression: Expression, callback: Callable[[Resolution], Any],
            instance: str | None, serial: int) -> None:
        self.expression = expression  # (its text: `expression.source`)
        self.instance = instance
        self.serial = serial
        self._owner: Watchers | None = owner
        self._callback = callback
        self._told: Resolution | None = None  # the resolution its callback was last given
        self.tracks: dict[Reference, Track] = {}
        self._keep(Resolution(expression.source, False), owner._store.order.tail)  # the last result
        self._union = Union()  # the last union of its references' keys

    @property
    def current(self) -> Resolution:
        """The resolution now, equal to a fresh `Context.resolve`: the last result, ranked again when read
        if an edit since shifted the messages it names (once per edit, O(edits since); a resolution handed out
        earlier stays what it was). Read in the middle of an edit, before the watches are brought up to
        date, it is the result before the edit."""
        owner = self._owner
        if owner is not None and owner.current:
            self._now(owner._store.order)
            if _paranoid.ENABLED and self not in owner._pending:
                _paranoid.check("Watch.current", self._resolution, owner._store.listed, self.expression, self.instance)
        return self._resolution

    def evaluate(self, result: Callable[[Track, Path], Found], ranks: Ranks) -> Resolution:
        return combine_keys(self.expression, lambda ref: result(self.tracks[ref], ref.path), ranks, self._union)

    def close(self) -> None:
        """Stop watching; the callback is not called again."""
        if self._owner is not None:
            self._owner.remove(self)
            self._owner = None


class Track:
    """The shared fold of the watched paths of one (kind, instance, lane)."""

    def __init__(self, kind: str, instance: str | None, lane: str | None) -> None:
        self.kind, self.instance, self.lane = kind, instance, lane
        self.paths: dict[Path, int] = {}  # path -> how many references follow it (a global track: in any view)
        self.read: dict[Path, list[Watch]] = {}  # path -> the watches of this very view that read it, once a reference
        self.fold: Fold | None = None
        self.results: dict[Path, Found] = {}  # of every path this view reads


Plan = dict[Track, TrackEdit]
Identity = tuple[str, str | None]


Renewal = tuple[Watch, Resolution, bool]  # a watch's new resolution after an edit; whether its watcher sees a change
# What an edit does to the watches: the new folds, the refolded tracks' results, each renewed watch.
Outcome = tuple[dict[Track, Fold], dict[Track, dict[Path, Found]], list[Renewal]]


class Watchers:
    """Every watch of one context, its tracks, and the work after an edit."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._tracks: dict[tuple[str, str | None, str | None], Track] = {}
        self._by_lane: dict[str, dict[str | None, list[Track]]] = {}  # per kind, per lane
        # Per view (kind, instance), each gap of a kept fold (writes it scanned while the root was not an
        # object) and the tracks whose fold has it: a global kind's lane tracks mostly share one, the start
        # of the layer up to the kind's first write, so an edit tests each gap once, not each track.
        self._gaps: dict[Identity, dict[Gap, set[Track]]] = {}
        self._watches: dict[Watch, None] = {}  # in creation order, which is callback order
        self._serial = itertools.count()
        self._generation = store.order.generation  # of the keys in every track and watch
        self._staged: dict[Track, Fold] = {}  # folds made for an edit still being planned (`staging`)
        # Tracks folded from scratch a slice at a time (None: not started) for the watches still `_pending`.
        self._builds: dict[Track, Iterator[Fold | None] | None] = {}
        self._pending: dict[Watch, Iterator[None] | None] = {}  # (a watch's results ranked: `_rank`)
        self.current = True  # whether every track's results are those of the store as it is

    # -- adding and removing -------------------------------------------------------------------

    def add(self, expression: Expression, callback: Callable[[Resolution], Any], instance: str | None,
            slices: int | None = None) -> Watch:
        """A watch, its new tracks folded now; with `slices`, that many slices of them (`fold_some` folds the rest:
        until then it is `_pending`, no answer yet, and then it is called back with its first resolution)."""
        handle = Watch(self, expression, callback, instance, next(self._serial))
        fresh: set[Track] = set()
        for ref in expression.references:
            lane = ref.path[0] if ref.path else None
            views = [None] if instance is None else [None, instance]
            for view in views:
                track = self._track(ref.kind, view, lane)
                if ref.path not in track.paths:
                    fresh.add(track)
                track.paths[ref.path] = track.paths.get(ref.path, 0) + 1
            track.read.setdefault(ref.path, []).append(handle)
            handle.tracks[ref] = track
        self._builds.update(dict.fromkeys(fresh))  # (a build of one with fewer paths starts again)
        self._pending[handle] = None
        for _ in itertools.count() if slices is None else range(slices):
            if self.fold_some(handle, None if slices is None else FOLD_STEPS):
                break
        return handle

    def fold_some(self, quiet: Watch | None = None, steps: int | None = FOLD_STEPS) -> bool:
        """Fold `steps` writes of a track of the `_pending` watches (a global track before its instances'); each
        watch whose tracks are all folded then is evaluated and called back (but `quiet`). Whether none is left."""
        builds, tracks = self._builds, self._tracks
        track = next((t for t in builds if t.instance is None or tracks[t.kind, None, t.lane] not in builds), None)
        if track is not None:
            folding = builds[track] = builds[track] or full(
                self._store, track.kind, track.instance, track.lane, list(track.paths), self._base(track, {}), steps)
            if (fold := next(folding)) is not None:
                del builds[track]
                self._install(track, fold)
        failed: Exception | None = None  # each watch folded in this slice is called back, whatever one raises
        for watch in [watch for watch in self._pending if not any(t in builds for t in watch.tracks.values())]:
            ranking = self._pending[watch] = self._pending[watch] or self._rank(watch)
            if next(ranking, True) is None:
                break  # (a piece of its results' sources ranked: the rest in the next calls)
            del self._pending[watch]
            watch._keep(watch.evaluate(lambda t, path: t.results[path], self._store.order.snapshot()), watch._seen)
            self._watches[watch] = None
            try:
                if watch is not quiet:
                    watch._callback(watch._resolution)
            except Exception as error:
                failed = failed or error
        if not self._pending:
            self._builds.clear()  # (those of watches closed since: what they would add, no watch reads)
        if failed is not None:
            raise failed
        return not self._pending

    def _rank(self, watch: Watch) -> Iterator[None]:
        """The results `watch` reads that its tracks have not got, made a piece at a time (`probe_result`), again
        on a fold installed meanwhile by a build; one an edit refolded has them all (`_results`)."""
        for ref, track in watch.tracks.items():
            while ref.path not in track.results and (fold := track.fold) is not None:
                probe = next(p for p in fold.state.probes if p.path == ref.path)
                ranking = probe_result(fold.state, probe, self._store.order.key)
                while (found := next(ranking)) is None:
                    yield
                if track.fold is fold:
                    track.results[ref.path] = found

    def result_of(self, ref: Reference, instance: str | None) -> Found | None:
        """The current result of `ref` in the view of `instance` when a watch of that view reads it (the
        fold is already made and kept current); None otherwise, or in the middle of an edit."""
        if not self.current:
            return None
        track = self._tracks.get((ref.kind, instance, ref.path[0] if ref.path else None))
        return None if track is None else track.results.get(ref.path)

    def remove(self, handle: Watch) -> None:
        self._watches.pop(handle, None)
        self._pending.pop(handle, None)
        for ref, track in handle.tracks.items():  # (one per reference: two of one path differ by their place)
            for view in [None] if track.instance is None else [None, track.instance]:
                reader = handle if view == track.instance else None
                self._release(self._tracks[track.kind, view, track.lane], ref.path, reader)

    def _track(self, kind: str, instance: str | None, lane: str | None) -> Track:
        track = self._tracks.get((kind, instance, lane))
        if track is None:
            track = self._tracks[kind, instance, lane] = Track(kind, instance, lane)
            self._by_lane.setdefault(kind, {}).setdefault(lane, []).append(track)
        return track

    def _release(self, track: Track, path: Path, reader: Watch | None) -> None:
        track.paths[path] -= 1
        if not track.paths[path]:
            del track.paths[path]
        if not track.paths:
            del self._tracks[track.kind, track.instance, track.lane]
            self._builds.pop(track, None)
            self._by_lane[track.kind][track.lane].remove(track)
            self._index_gaps(track, track.fold, None)
            if (fold := track.fold) is not None:  # its marks; what they all share under them, freed after
                sources = [p.sources for p in fold.state.probes] + [f.keys for f in track.results.values()]
                let_go(sealed_chunks(sources), *(unlinked(chain) for mark in fold.checkpoints.items[:1]
                                                 for chain in mark.held.diagnostics),
                       fold.checkpoints.items, *map(list, fold.lanes.values()))
        if reader is not None:  # (after: a track let go of buries its results' chunks)
            track.read[path].remove(reader)
            if not track.read[path]:
                del track.read[path]
                track.results.pop(path, None)

    # -- after an edit -------------------------------------------------------------------------

    def touch(
        self, plan: Plan, identity: Identity, write: Write, message_id: int, appended: bool, dropped: bool = False
    ) -> None:
        """Note in `plan` the tracks a write (added, or about to be removed) can change, and how.

        `appended`: the write was just added as the last message of the context; `dropped`: it is about to be
        removed."""
        self.current = False  # until the edit is committed
        kind, instance = identity
        for track in self._builds:  # what one folded may change, unless the write comes after it: it starts again
            own = instance == track.instance
            if track.kind == kind and (own or instance is None) and not (appended and own):
                self._builds[track] = None
        by_lane = self._by_lane.get(kind)
        if not by_lane:
            return
        store = self._store
        key = store.order.key.__getitem__
        order_key = key(message_id)
        lanes = lanes_of(write)
        holding: dict[Track, None] = {}  # the tracks of this view whose fold has a gap the write falls in
        if lanes is None:
            tracks = [track for lane_tracks in by_lane.values() for track in lane_tracks]
        else:
            # Only the lanes it writes, whole-kind tracks, and the tracks of a lane whose fold has a gap
            # the write falls in (gaps still open at the end, for an append; a move plans its insert
            # against its remove's folds) can hold it. The gaps of a global write are the global
            # track's, which its instance tracks continue from; an instance write's, its own track's.
            tracks = [t for lane in (*lanes, None) for t in by_lane.get(lane, ())]
            holding = self._holding(identity, order_key, key, appended)
            if holding:
                listed = set(tracks)
                for gapped_track in holding:
                    for t in by_lane.get(gapped_track.lane, ()) if instance is None else (gapped_track,):
                        if t not in listed:
                            listed.add(t)
                            tracks.append(t)
        for track in tracks:
            if track.fold is None or (instance is not None and track.instance != instance):  # (None: a build's)
                continue
            work = plan.setdefault(track, TrackEdit())  # (a replace plans its remove, then its insert)
            if track.instance == instance:
                work.edited = message_id
                if dropped:
                    work.dropped = write
                if appended:  # (the only write of its edit: an insert at the end)
                    work.appended = message_id
                else:
                    work.low = order_key
            else:
                work.base = True

    def _holding(self, view: Identity, order_key: int, key: Callable[[int], int], appended: bool) -> dict[Track, None]:
        """The tracks of `view` whose fold (staged, for a move's insert, or kept) has a gap that holds a write
        of its layer at `order_key` (an appended write: only a gap open to the end can)."""
        staged = self._staged
        holding: dict[Track, None] = {}
        for gap, owners in self._gaps.get(view, {}).items():
            if (appended and gap.after is not None) or not in_gap(gap, order_key, key):
                continue
            holding.update(dict.fromkeys(owner for owner in owners if owner not in staged))
        for track, fold in staged.items():
            if (track.kind, track.instance) == view and any(in_gap(gap, order_key, key) for gap in fold.gaps):
                holding[track] = None
        return holding

    @contextmanager
    def staging(self, folds: dict[Track, Fold]) -> Iterator[None]:
        """Plan against `folds` (a move's remove, made but not committed) instead of the committed ones."""
        self._staged = folds
        try:
            yield
        finally:
            self._staged = {}

    def refolds(self, plan: Plan, prior: dict[Track, Fold] | None = None) -> dict[Track, Fold]:
        """The new folds of the planned tracks (continuing from `prior` folds where given), and nothing
        else: alone, the first half of a move; `follow` works out what they change. Never after a relabel
        (the keys the folds keep name nothing then): `follow` folds every track again instead."""
        folds = dict(prior or {})
        # Global tracks first: instance tracks continue from them.
        for track in sorted(plan, key=lambda track: track.instance is not None):
            folds[track] = self._refold(track, plan[track], folds)
        return folds

    def follow(self, plan: Plan, rekeyed: tuple[int, int] | None, prior: dict[Track, Fold] | None = None) -> None:
        """Bring the watches up to date after an edit: the new folds of the planned tracks, the new resolution of every
        watch that reads a result they changed (no other watch can change: a renumbering is none), made current; then
        call back those whose found, value or source messages changed.

        `rekeyed`: a move's message's old and new order key, the one kept key an edit changes: the refolded results'
        kept keys get that one replaced. `prior`: folds already made for the first half of a move (its remove), which
        the plan (its insert) continues from."""
        if self._generation != self._store.order.generation:  # a relabel: no kept key names its message
            folds, results, fresh = self._relabelled()
        elif not plan and not prior:
            folds, results, fresh = {}, {}, []  # no track to refold: no watch can change
        else:
            folds, results, fresh = self._outcome(plan, rekeyed, prior)
        for track, fold in folds.items():
            self._install(track, fold)
        for track, values in results.items():
            track.results = values
        self._generation = self._store.order.generation
        self.current = True
        changed = []
        for watch, resolution, seen in fresh:  # hundreds after a middle edit: plain unpacking
            if seen:
                changed.append(watch)
            watch._keep(resolution, watch._seen)
        failed: Exception | None = None
        for watch in changed:  # each hears of the edit, whatever an earlier callback raises (then raised after)
            if watch._owner is not None and watch._resolution is not watch._told:  # (an edit a callback made told it)
                watch._told = watch._resolution
                try:
                    watch._callback(watch._resolution)
                except Exception as error:
                    failed = failed or error
        if _paranoid.ENABLED:
            for watch in list(self._watches):
                _ = watch.current  # checked there against the reference fold
        if failed is not None:
            raise failed

    def _outcome(self, plan: Plan, rekeyed: tuple[int, int] | None, prior: dict[Track, Fold] | None) -> Outcome:
        """`follow`'s work after an edit that did not relabel: the new folds, results and renewals."""
        folds = self.refolds(plan, prior)
        results = {track: self._results(track, fold, rekeyed, True) for track, fold in folds.items()}
        order = self._store.order
        ranks = order.snapshot()

        def now(track: Track, path: Path) -> Found:
            computed = results.get(track)
            return computed[path] if computed is not None else track.results[path]

        # The watches that read a path a refolded track has a new result at (not yet answered: `fold_some`'s).
        refolded = {
            watch for t, got in results.items() for p, found in got.items() if found is not t.results.get(p)
            for watch in t.read[p] if watch not in self._pending
        }
        # Only the refolded watches can change: the others name the same messages (their keys), and a
        # renumbering alone is no change (`Watch.current` ranks them again when read). Watches of the same
        # expression in the same view read the same results: one evaluation serves them all (a resolution
        # is frozen, so they can share it).
        fresh: list[Renewal] = []
        made: dict[tuple[str, str | None], tuple[Resolution, Union]] = {}
        for watch in sorted(refolded, key=lambda watch: watch.serial):  # in creation order
            same = (watch.expression.source, watch.instance)
            if same in made:  # (its union too: else the next edit's would be worked out anew)
                resolution, union = made[same]
                watch._union.parts, watch._union.keys = union.parts, union.keys
            else:
                made[same] = (resolution := watch.evaluate(now, ranks)), watch._union
            old = watch._resolution
            fresh.append((watch, resolution, changed(old, resolution, old._keys)))
        return folds, results, fresh

    def _relabelled(self) -> Outcome:
        """After the order was relabelled every key changed, those the folds keep with their problems too: every track
        is folded again from the start (global tracks first), and a watch is compared by the keys its messages have now
        (`Order.renamed`). Rare: it takes about sixty inserts at one spot in a row (`_order`)."""
        order = self._store.order
        ranks = order.snapshot()
        renamed = order.renamed
        assert renamed is not None  # (set by the relabel: the watches follow each before the next)
        folds: dict[Track, Fold] = {}
        for track in sorted(self._tracks.values(), key=lambda track: track.instance is not None):
            base = self._base(track, folds)
            fold = next(full(self._store, track.kind, track.instance, track.lane, list(track.paths), base))
            assert fold is not None  # (folded at once)
            folds[track] = fold
        self._builds.clear()  # (every track folded with every path: the next `fold_some` evaluates each pending watch)
        results = {track: self._results(track, fold) for track, fold in folds.items()}
        fresh: list[Renewal] = []
        for watch in self._watches:
            resolution = watch.evaluate(lambda track, path: results[track][path], ranks)
            was = Keys.owning([renamed.get(key, -1) for key in watch._resolution._keys])  # -1: removed since
            fresh.append((watch, resolution, changed(watch._resolution, resolution, was)))
        self._store.order.renamed = None  # followed: the old keys are not needed any more
        return folds, results, fresh

    # -- folding -------------------------------------------------------------------------------

    def _install(self, track: Track, fold: Fold) -> None:
        old, track.fold = track.fold, fold
        for probe in fold.state.probes:
            # How its sources changed was read by `_results`; once kept it names sources no later fold is
            # compared with, and it held them: a whole kind's previous ~11,000 ids, which the collector then
            # walked (it walks every tuple that lives to a collection once).
            if probe.edits:
                probe.edits = ()
        if old is None or (old.gaps is not fold.gaps and old.gaps != fold.gaps):
            self._index_gaps(track, old, fold)

    def _index_gaps(self, track: Track, old: Fold | None, new: Fold | None) -> None:
        """Keep `_gaps` as `track`'s fold goes from `old` to `new` (None: none): the gaps between what the two share at
        their start and at their end (the very objects: a repair keeps the old ones on either side of its edit, and a
        fold's gaps never overlap, so none is there twice), where a fold whose writes all fail has one per write."""
        view = self._gaps.setdefault((track.kind, track.instance), {})
        before, after = [] if old is None else old.gaps, [] if new is None else new.gaps
        start, end, size = 0, 0, min(len(before), len(after))
        while start < size and before[start] is after[start]:
            start += 1
        while end < size - start and before[-1 - end] is after[-1 - end]:
            end += 1
        for gap in before[start : len(before) - end]:
            owners = view.get(gap)
            if owners is not None:
                owners.discard(track)
                if not owners:
                    del view[gap]
        for gap in after[start : len(after) - end]:
            view.setdefault(gap, set()).add(track)

    def _refold(self, track: Track, work: TrackEdit, folds: dict[Track, Fold]) -> Fold:
        store = self._store
        base = self._base(track, folds)
        old = folds.get(track) or track.fold
        assert old is not None  # (a track is folded when it is made: `add`)
        if work.appended is not None:
            return step(store, old, work.appended, base, track.lane, store.layer((track.kind, track.instance)))
        return _repaired(store, work, old, track, base)

    def _base(self, track: Track, folds: dict[Track, Fold]) -> Fold | None:
        """The fold of the global track an instance track continues from (new when this edit made one)."""
        if track.instance is None:
            return None
        base_track = self._tracks[track.kind, None, track.lane]
        fold = folds.get(base_track) or base_track.fold
        assert fold is not None
        return fold

    def _results(self, track: Track, fold: Fold, rekeyed: tuple[int, int] | None = None,
            edited: bool = False) -> dict[Path, Found]:
        """Each watched path's result, its sources as order keys.

        `edited` (after an edit; not for a new track or after a relabel): a probe keeps the sorted keys it had and looks
        up only the messages its sources gained or lost since the committed fold; `rekeyed`: a moved message's old and
        new key, the one kept key that changed."""
        key = self._store.order.key
        before = track.fold.state.probes if track.fold else []
        if _paranoid.ENABLED and edited:  # repaired or stepped: the same probes, in the same order
            _paranoid.check_probes("Watchers._results", before, fold.state.probes)
        values: dict[Path, Found] = {}
        for index, probe in enumerate(fold.state.probes):
            if probe.path not in track.read:  # followed for instance views only
                continue
            known, value = track.results.get(probe.path), None
            if edited and before and known is not None and known.value is not MISSING:
                value = _grown(fold.state, probe, before[index], known, key, rekeyed)
            values[probe.path] = value or next(f for f in probe_result(fold.state, probe, key) if f is not None)
        return values


def _repaired(store: Store, work: TrackEdit, old: Fold, track: Track, base: Fold | None) -> Fold:
    """A track's fold after an edit in the middle: a whole kind lane by lane where its lanes fold apart
    (`_whole.repair`), else the usual way (`_tracks.repair`). A replace that moves a write between the
    global layer and an instance layer changes both: repaired in two halves, its own half over the old global
    fold, then the global change.

    Halfway the write may be a source of both layers (the old global fold's and its own): a whole kind's two
    halves' changes are told as one by counting each key's losses and gains (`SourceEdit.net`), so that the
    result's keys are the old ones edited, not found by comparing thousands of sources."""
    kind, instance, lane = track.kind, track.instance, track.lane
    if work.base and work.low is not None and base is not None:
        own_half = replace(work, base=False)  # the edit of the track's own layer alone
        halfway = _repaired(store, own_half, old, track, Fold(old.base, old.base, [], Marks()))
        fold = _repaired(store, TrackEdit(base=True), halfway, track, base)
        for probe, was in zip(fold.state.probes, halfway.state.probes, strict=True):
            told = lane is None and was.edits and probe.edits and probe.edits[0].sources is was.sources
            probe.edits = (was.edits[0].net(probe.edits[0]),) if told else ()
        return fold
    if lane is None:
        whole = _whole.repair(store, work, old, kind, instance, base)
        if whole is not None:
            return whole
    return repair(store, work, old, kind, instance, lane, base)


def probe_result(state: State, probe: Probe, key: Sequence[int]) -> Iterator[Found | None]:
    """A probe's result: the value at its path, its sources as sorted order keys, its problems; None before it
    while its sources are ranked, a piece at a time (`sort_in_pieces`)."""
    value = get_path(state.root, probe.path)
    for keys in sort_in_pieces(probe.sources, key) if value is not MISSING else (EMPTY_KEYS,):
        yield None if keys is None else Found(value, keys, probe.diagnostics)


def _grown(state: State, probe: Probe, old: Probe, known: Found, key: Sequence[int], rekeyed: tuple[int, int] | None
           ) -> Found | None:
    """`probe_result` of a probe from the old result: only the sources gained or lost are looked up.

    None when that does not hold (most sources changed, or not found). `rekeyed`: a moved message's old and new key; the
    kept keys hold the old one, which is put at the new one's place first."""
    value = get_path(state.root, probe.path)
    if value is MISSING:
        return None
    keys = known.keys
    edit = next((edit for edit in probe.edits if edit.sources is old.sources), None) if probe.edits else None
    if edit is None and rekeyed is not None:
        was, moved_to = rekeyed
        position = keys.locate(was)
        if position < len(keys) and keys[position] == was:
            keys = keys.edited((was,), [moved_to]) or keys  # (never None: `was` is there)
    if edit is not None:  # a whole-kind fold says what changed (`_whole`), even across a move
        edited = keys.edited(edit.lost, sorted(edit.gained))
        if edited is None:
            return None
        keys = edited
    elif probe.sources is not old.sources and (now := tuple(probe.sources)) != (before := tuple(old.sources)):
        # (a splice often hands on the very same sources; `Ids` would be copied by `tuple`)
        if now[: len(before)] == before:  # only gained some (an append): the common case
            keys = keys.edited((), sorted(key[m] for m in now[len(before) :])) or keys  # (never None: none taken out)
        else:
            came = set(now).difference(before)
            went = set(before).difference(now) if len(now) - len(came) != len(before) else ()
            if 2 * len(went) > len(now) or any(key[message_id] == NOT_IN_ORDER for message_id in went):
                return None
            went_keys = [key[m] for m in went]  # (all in `keys`: the old sources' keys, a moved one rekeyed above)
            keys = keys.edited(went_keys, sorted(key[m] for m in came)) or keys  # (never None: see above)
    if keys is known.keys and value is known.value and probe.diagnostics is known.problems:
        return known  # the very same result: watches that read only such results are not evaluated again
    return Found(value, keys, probe.diagnostics)
