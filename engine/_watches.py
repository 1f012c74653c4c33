"""Watches: live resolutions kept current after every edit, sharing their work through tracks.

A `Track` is the incremental fold of every watched path of one view (kind, instance) and one lane (first
segment): all the watches that read `†state.user.…` for instance ① share one fold, and each watched
path is a probe in it. The global track of a lane (instance None) follows the paths of every view, and
the instance tracks continue from its state, so the global layer is folded once for all instances.

After an edit, only the tracks whose lane the edited write can change are folded again (an append is
one step; an edit in an instance layer refolds only that layer); every other watch only renumbers the
message indices it names (lazily, see `_shift`), and only when the edit shifted them: its value and
found cannot change, so nothing is combined again. A watch is called back only when its found, value
or sources changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._expressions import Expression, Reference
from ._fold import PathValue
from ._index import Probe, State, in_gap, lanes_of, path_value
from ._messages import MISSING, Path, Write, get_path
from ._resolution import Diagnostic, Indices, Resolution
from ._shift import Shift, Shifted, highest, shift_resolution, shift_value
from ._tracks import Fold, Work, full, repair, step

if TYPE_CHECKING:
    from ._context import Context



def combine(expression: Expression, value_of: Callable[[Reference], PathValue]) -> Resolution:
    """A resolution from the values of its references (SPEC 3): the first found alternative wins."""
    diagnostics: list[Diagnostic] = []
    missing: list[str] = []
    for gate in expression.alternatives:
        values = [value_of(ref) for ref in gate]
        for path_value_ in values:
            diagnostics.extend(d for d in path_value_.diagnostics if d not in diagnostics)
        absent = next((ref for ref, v in zip(gate, values, strict=True) if not v.found), None)
        if absent is None:
            if len(values) == 1:  # one value's sources are sorted and unique, often already Indices
                only = values[0].sources
                sources = only if isinstance(only, Indices) else Indices(only)
            else:
                sources = Indices(sorted({i for v in values for i in v.sources}))
            return Resolution(expression.source, True, values[-1].value, sources, tuple(diagnostics))
        missing.append(str(absent))
    return Resolution(expression.source, False, None, Indices(), tuple(diagnostics), tuple(missing))


class Watch:
    """A live resolution: `current` is always up to date; `callback(resolution)` runs when it changes."""

    def __init__(
        self,
        owner: Watchers,
        expression: Expression,
        callback: Callable[[Resolution], Any],
        instance: str | None,
        serial: int,
    ) -> None:
        self.expression = expression.source
        self.instance = instance
        self.parsed = expression
        self.serial = serial
        self._owner: Watchers | None = owner
        self._callback = callback
        self.tracks: dict[Reference, Track] = {}
        self.current: Resolution = Resolution(expression.source, False)

    def close(self) -> None:
        """Stop watching; the callback is not called again."""
        if self._owner is not None:
            self._owner.remove(self)
            self._owner = None

    def evaluate(self, result: Callable[[Track, Path], PathValue]) -> Resolution:
        return combine(self.parsed, lambda ref: result(self.tracks[ref], ref.path))


class Track:
    """The shared fold of the watched paths of one (kind, instance, lane)."""

    def __init__(self, kind: str, instance: str | None, lane: str | None) -> None:
        self.kind, self.instance, self.lane = kind, instance, lane
        self.paths: dict[Path, int] = {}  # path -> how many references follow it (a global track: in any view)
        self.read: dict[Path, int] = {}  # path -> how many references of this very view read it
        self.watches: set[Watch] = set()
        self.fold: Fold | None = None
        self.results: dict[Path, PathValue] = {}  # of every path this view reads, with current indices
        self.high = -1  # the highest message index any result names

    def result(self, path: Path) -> PathValue:
        """The current result of a path this view reads."""
        return self.results[path]

    def settle(self, results: dict[Path, PathValue], high: int) -> None:
        self.results, self.high = results, high


Plan = dict[Track, Work]
Identity = tuple[str, str | None]


@dataclass
class Outcome:
    """What an edit does to the watches, computed before it is made current (or only previewed)."""

    folds: dict[Track, Fold]
    results: dict[Track, tuple[dict[Path, PathValue], int]]  # refolded tracks (and renumbered ones read)
    fresh: list[tuple[Watch, Resolution, bool]]  # (watch, its new resolution, whether it changed)
    shift: Shift | None  # how the edit renumbered messages: commit renumbers the other tracks


class Watchers:
    """Every watch of one context, its tracks, and the work after an edit."""

    def __init__(self, context: Context) -> None:
        self._context = context
        self._tracks: dict[tuple[str, str | None, str | None], Track] = {}
        self._by_kind: dict[str, list[Track]] = {}
        self._by_lane: dict[tuple[str, str | None], list[Track]] = {}
        self._open: set[Track] = set()  # tracks whose fold scanned to the end with a root not an object
        self._watches: set[Watch] = set()
        self._serial = itertools.count()

    # -- adding and removing -------------------------------------------------------------------

    def add(self, expression: Expression, callback: Callable[[Resolution], Any], instance: str | None) -> Watch:
        handle = Watch(self, expression, callback, instance, next(self._serial))
        fresh: set[Track] = set()
        reread: set[Track] = set()
        for ref in expression.references:
            lane = ref.path[0] if ref.path else None
            views = [None] if instance is None else [None, instance]
            for view in views:
                track = self._track(ref.kind, view, lane)
                if ref.path not in track.paths:
                    fresh.add(track)
                track.paths[ref.path] = track.paths.get(ref.path, 0) + 1
            if ref.path not in track.read:
                reread.add(track)
            track.read[ref.path] = track.read.get(ref.path, 0) + 1
            track.watches.add(handle)
            handle.tracks[ref] = track
        # Global tracks first: instance tracks continue from their state.
        for track in sorted(fresh, key=lambda track: track.instance is not None):
            base = self._base(track, {})
            self._install(track, full(self._context, track.kind, track.instance, track.lane, list(track.paths), base))
        for track in fresh | reread:
            assert track.fold is not None
            track.settle(*self._results(track, track.fold))
        handle.current = handle.evaluate(Track.result)
        self._watches.add(handle)
        return handle

    def remove(self, handle: Watch) -> None:
        self._watches.discard(handle)
        for ref, track in handle.tracks.items():
            track.watches.discard(handle)
            views = [None] if track.instance is None else [None, track.instance]
            for view in views:
                self._release(self._tracks[track.kind, view, track.lane], ref.path, view == track.instance)

    def _track(self, kind: str, instance: str | None, lane: str | None) -> Track:
        track = self._tracks.get((kind, instance, lane))
        if track is None:
            track = self._tracks[kind, instance, lane] = Track(kind, instance, lane)
            self._by_kind.setdefault(kind, []).append(track)
            self._by_lane.setdefault((kind, lane), []).append(track)
        return track

    def _release(self, track: Track, path: Path, read: bool) -> None:
        if read:
            track.read[path] -= 1
            if not track.read[path]:
                del track.read[path]
                track.results.pop(path, None)
        track.paths[path] -= 1
        if not track.paths[path]:
            del track.paths[path]
        if not track.paths:
            del self._tracks[track.kind, track.instance, track.lane]
            self._by_kind[track.kind].remove(track)
            self._by_lane[track.kind, track.lane].remove(track)
            self._open.discard(track)

    # -- after an edit -------------------------------------------------------------------------

    def touch(self, plan: Plan, identity: Identity, write: Write, message_id: int, appended: bool) -> None:
        """Note in `plan` the tracks a write (added, or about to be removed) can change, and how.

        `appended`: the write was just added as the last message of the context.
        """
        kind, instance = identity
        tracks = self._by_kind.get(kind)
        if not tracks:
            return
        context = self._context
        layer = context._layer(identity)
        key = context._order.key.__getitem__
        order_key = key(message_id)
        lanes = lanes_of(write)
        if appended and lanes is not None:
            # Only the lanes it writes, whole-kind tracks, and gaps still open at the end can hold it.
            tracks = [t for lane in (*lanes, None) for t in self._by_lane.get((kind, lane), ())]
            tracks += [t for t in self._open if t.kind == kind and t not in tracks]
            tracks += [
                t for o in self._open if o.kind == kind and o.instance is None
                for t in self._by_lane.get((kind, o.lane), ()) if t not in tracks
            ]
        for track in tracks:
            if instance is not None and track.instance != instance:
                continue
            # The gaps a global write can fall in are the global track's.
            owner = track if track.instance == instance else self._tracks.get((kind, None, track.lane))
            gaps = owner.fold.gaps if owner is not None and owner.fold is not None else ()
            if not (
                track.lane is None
                or lanes is None
                or track.lane in lanes
                or any(in_gap(gap, layer, order_key, key) for gap in gaps)
            ):
                continue
            work = plan.get(track)
            first = work is None
            if work is None:
                work = plan[track] = Work(generation=context._order.generation)
            if track.instance == instance:
                work.ids.add(message_id)
                if appended and first:
                    work.appended = message_id
                else:
                    work.appended = None
                    work.low = order_key if work.low is None else min(work.low, order_key)
                    work.high = order_key if work.high is None else max(work.high, order_key)
            elif appended and first and not context._layer((kind, track.instance)).all:
                work.appended = message_id  # no instance layer: the global write is still last
            else:
                work.appended = None
                work.base = True

    def outcome(self, plan: Plan, shift: Shift | None) -> Outcome:
        """The new folds of the planned tracks and the new resolution of every watch that may change."""
        folds: dict[Track, Fold] = {}
        for track in sorted(plan, key=lambda track: track.instance is not None):
            folds[track] = self._refold(track, plan[track], folds)
        results = {track: self._results(track, fold, shift is None) for track, fold in folds.items()}

        def now(track: Track, path: Path) -> PathValue:
            computed = results.get(track)
            if computed is not None:
                return computed[0][path]
            if shift is not None and track.high >= shift.low:  # renumbered by this edit
                results[track] = _shifted(track.results, shift)
                return results[track][0][path]
            return track.results[path]

        fresh: list[tuple[Watch, Resolution, bool]] = []
        refolded = {watch for track in folds for watch in track.watches}
        for watch in refolded:
            resolution = watch.evaluate(now)
            fresh.append((watch, resolution, _changed(watch.current, resolution)))
        if shift is not None:
            for watch in self._watches:
                current = watch.current
                if watch not in refolded and highest(current) >= shift.low:
                    # Only indices change: renumber the resolution (lazily), nothing to combine again.
                    # One reference: its track's renumbered sources are the resolution's.
                    sources = None
                    if len(watch.tracks) == 1:
                        ((ref, track),) = watch.tracks.items()
                        sources = now(track, ref.path).sources
                    resolution = shift_resolution(current, shift, sources)
                    sources = resolution.sources
                    changed = sources is not current.sources and isinstance(sources, Shifted) and sources._moved()
                    fresh.append((watch, resolution, changed))
        fresh.sort(key=lambda entry: entry[0].serial)
        return Outcome(folds, results, fresh, shift)

    def commit(self, outcome: Outcome) -> None:
        """Make an outcome current and call back the watches whose found, value or sources changed."""
        for track, fold in outcome.folds.items():
            self._install(track, fold)
        for track, (values, high) in outcome.results.items():
            track.settle(values, high)
        shift = outcome.shift
        if shift is not None:  # renumbered lazily (see `_shift.Shifted`): a few steps per result
            for track in self._tracks.values():
                if track not in outcome.results and track.high >= shift.low:
                    track.settle(*_shifted(track.results, shift))
        changed = []
        for watch, resolution, differs in outcome.fresh:
            if differs:
                changed.append(watch)
            watch.current = resolution
        for watch in changed:
            if watch._owner is not None:
                watch._callback(watch.current)

    # -- folding -------------------------------------------------------------------------------

    def _install(self, track: Track, fold: Fold) -> None:
        track.fold = fold
        if any(gap[2] is None for gap in fold.gaps):
            self._open.add(track)
        else:
            self._open.discard(track)

    def _refold(self, track: Track, work: Work, folds: dict[Track, Fold]) -> Fold:
        context = self._context
        base = self._base(track, folds)
        old = track.fold
        if old is None:
            return full(context, track.kind, track.instance, track.lane, list(track.paths), base)
        if work.appended is not None:
            own = context._info[work.appended].instance == track.instance
            return step(context, old, work.appended, own, base)
        return repair(context, work, old, track.kind, track.instance, track.lane, base)

    def _base(self, track: Track, folds: dict[Track, Fold]) -> Fold | None:
        """The fold of the global track an instance track continues from (new when this edit made one)."""
        if track.instance is None:
            return None
        base_track = self._tracks[track.kind, None, track.lane]
        fold = folds.get(base_track) or base_track.fold
        assert fold is not None
        return fold

    def _results(self, track: Track, fold: Fold, reuse: bool = False) -> tuple[dict[Path, PathValue], int]:
        """Each watched path's result, with message indices.

        With `reuse` (nothing was renumbered), a probe keeps the sorted indices it had and looks up only
        the messages its sources gained or lost since the committed fold.
        """
        index_of = self._context._order.index_of
        before = {probe.path: probe for probe in track.fold.state.probes} if reuse and track.fold else {}
        previous = track.results if before else {}
        values: dict[Path, PathValue] = {}
        high = -1
        for probe in fold.state.probes:
            if probe.path not in track.read:  # followed for instance views only
                continue
            label = "†" + ".".join((track.kind, *probe.path))
            old, known = before.get(probe.path), previous.get(probe.path)
            if old is not None and known is not None and known.found and old is not probe:
                value = _grown(fold.state, probe, old, known, label, index_of)
            else:
                value = None
            if value is None:
                value = path_value(fold.state, probe, label, index_of)
            values[probe.path] = value
            high = max(high, highest(value))
        return values, high


def _grown(
    state: State, probe: Probe, old: Probe, known: PathValue, label: str, index_of: Callable[[int], int]
) -> PathValue | None:
    """`path_value` of a probe from the old result: only the sources gained or lost are looked up.

    None when that does not hold (the old diagnostics are not kept, or the value is not found).
    """
    kept = len(old.diagnostics)
    if probe.diagnostics[:kept] != old.diagnostics:
        return None
    value = get_path(state.root, probe.path)
    if value is MISSING:
        return None
    sources = known.sources
    if probe.sources != old.sources:
        new, before = set(probe.sources), set(old.sources)
        added = sorted(index_of(m) for m in new - before)
        gone = before - new
        if gone:
            sources = Indices(sorted(set(sources).difference(index_of(m) for m in gone).union(added)))
        elif not sources or not added or added[0] > sources[-1]:  # appends: the new indices come last
            sources = Indices((*sources, *added))
        else:
            sources = Indices(sorted({*sources, *added}))
    diagnostics = known.diagnostics
    if len(probe.diagnostics) > kept:
        extra = probe.diagnostics[kept:]
        diagnostics = (*diagnostics, *(Diagnostic(index_of(m), label, reason) for m, reason in extra))
    return PathValue(value, sources, diagnostics)


def _shifted(results: dict[Path, PathValue], shift: Shift) -> tuple[dict[Path, PathValue], int]:
    values = {path: shift_value(value, shift) for path, value in results.items()}
    return values, max((highest(value) for value in values.values()), default=-1)


def _changed(old: Resolution, new: Resolution) -> bool:
    """Whether a watcher sees a change: found, sources or value (compared only when not the same object)."""
    if old.found != new.found or (old.sources is not new.sources and old.sources != new.sources):
        return True
    return old.value is not new.value and not new.same_result(old)
