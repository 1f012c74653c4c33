"""Watches: live resolutions kept current after every edit, sharing their work through tracks.

A `Track` is the incremental fold of every watched path of one view (kind, instance) and one lane (first
segment): all the watches that read `†state.user.…` for instance ① share one fold, and each watched
path is a probe in it. After an edit, only the tracks whose lane the edited write can change are folded
again (an append is one step; an edit in the instance layer refolds only that layer); every other track
only renumbers its message indices when the edit shifted them. A watch is called back only when its
found, value or sources changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._expressions import Expression, Reference
from ._fold import PathValue
from ._index import Gap, Probe, State, fold_lane, in_gap, lanes_of, path_value
from ._messages import Path, Write
from ._resolution import Diagnostic, Indices, Resolution

if TYPE_CHECKING:
    from ._context import Context

# How much of a track an edit forces to fold again, from least to most.
APPEND, GLOBAL_APPEND, INSTANCE, ALL = 1, 2, 3, 4


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
            sources = sorted({i for v in values for i in v.sources})
            return Resolution(expression.source, True, values[-1].value, Indices(sources), tuple(diagnostics))
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

    def evaluate(self, results: Callable[[Track], dict[Path, PathValue]]) -> Resolution:
        return combine(self.parsed, lambda ref: results(self.tracks[ref])[ref.path])


@dataclass
class Fold:
    """One track's fold: after the global layer, after the instance layer, and the gaps it scanned."""

    global_state: State
    state: State
    gaps: list[Gap]


class Track:
    """The shared fold of the watched paths of one (kind, instance, lane)."""

    def __init__(self, kind: str, instance: str | None, lane: str | None) -> None:
        self.kind, self.instance, self.lane = kind, instance, lane
        self.paths: dict[Path, int] = {}  # path -> how many watches read it
        self.watches: set[Watch] = set()
        self.fold: Fold | None = None
        self.results: dict[Path, PathValue] = {}
        self.high = -1  # the highest message index any result names


@dataclass(frozen=True)
class Shift:
    """How an edit renumbered the messages: `low` is the first index that may change, `new` maps old to new."""

    low: int
    new: Callable[[int], int]


# track -> (level, id of the message when appending, whether it is a global write)
Plan = dict[Track, tuple[int, int | None, bool]]


@dataclass
class Outcome:
    """What an edit does to the watches, computed before it is made current (or only previewed)."""

    folds: dict[Track, Fold]
    results: dict[Track, tuple[dict[Path, PathValue], int]]
    fresh: list[tuple[Watch, Resolution]]


class Watchers:
    """Every watch of one context, its tracks, and the work after an edit."""

    def __init__(self, context: Context) -> None:
        self._context = context
        self._tracks: dict[tuple[str, str | None, str | None], Track] = {}
        self._by_kind: dict[str, list[Track]] = {}
        self._serial = itertools.count()

    @property
    def watches(self) -> set[Watch]:
        return {watch for track in self._tracks.values() for watch in track.watches}

    # -- adding and removing -------------------------------------------------------------------

    def add(self, expression: Expression, callback: Callable[[Resolution], Any], instance: str | None) -> Watch:
        handle = Watch(self, expression, callback, instance, next(self._serial))
        fresh: set[Track] = set()
        for ref in expression.references:
            lane = ref.path[0] if ref.path else None
            track = self._tracks.get((ref.kind, instance, lane))
            if track is None:
                track = self._tracks[ref.kind, instance, lane] = Track(ref.kind, instance, lane)
                self._by_kind.setdefault(ref.kind, []).append(track)
            if ref.path not in track.paths:
                fresh.add(track)
            track.paths[ref.path] = track.paths.get(ref.path, 0) + 1
            track.watches.add(handle)
            handle.tracks[ref] = track
        for track in fresh:
            self._install(track, self._refold(track, ALL, None, False))
        handle.current = handle.evaluate(lambda track: track.results)
        return handle

    def remove(self, handle: Watch) -> None:
        for ref, track in handle.tracks.items():
            track.paths[ref.path] -= 1
            if not track.paths[ref.path]:
                del track.paths[ref.path]
                track.results.pop(ref.path, None)
            track.watches.discard(handle)
            if not track.paths:
                del self._tracks[track.kind, track.instance, track.lane]
                self._by_kind[track.kind].remove(track)

    # -- after an edit -------------------------------------------------------------------------

    def touch(self, plan: Plan, identity: tuple[str, str | None], write: Write, message_id: int, level: int) -> None:
        """Note in `plan` the tracks a write (added or about to be removed) can change, and how much."""
        kind, instance = identity
        tracks = self._by_kind.get(kind)
        if not tracks:
            return
        context = self._context
        layer = context._layer(identity)
        key = context._order.key.__getitem__
        order_key = key(message_id)
        lanes = lanes_of(write)
        for track in tracks:
            if instance is not None and track.instance != instance:
                continue
            gaps = track.fold.gaps if track.fold is not None else ()
            if not (
                track.lane is None
                or lanes is None
                or track.lane in lanes
                or any(in_gap(gap, layer, order_key, key) for gap in gaps)
            ):
                continue
            wanted = level
            if instance is None:
                # A global write in the middle changes the global layer, so the whole fold.
                wanted = ALL if level == INSTANCE else level
                if wanted == APPEND and track.instance is not None and context._layer((kind, track.instance)).all:
                    # ...and appended, it still comes before the whole instance layer.
                    wanted = GLOBAL_APPEND
            previous = plan.get(track)
            if previous is None:
                plan[track] = (wanted, message_id, instance is None)
            else:
                # Two changes to one track in one edit: fold again from where the larger one needs.
                level_ = ALL if min(previous[0], wanted) <= GLOBAL_APPEND else max(previous[0], wanted)
                plan[track] = (level_, None, False)

    def outcome(self, plan: Plan, shift: Shift | None) -> Outcome:
        """The new folds of the planned tracks and the new resolution of every watch that may change."""
        folds = {track: self._refold(track, *how) for track, how in plan.items()}
        results = {track: self._results(track, fold) for track, fold in folds.items()}
        if shift is not None:
            for track in self._tracks.values():
                if track not in results and track.high >= shift.low:
                    results[track] = _shifted(track.results, shift)
        touched = {watch for track in results for watch in track.watches}
        fresh = [
            (watch, watch.evaluate(lambda track: results[track][0] if track in results else track.results))
            for watch in sorted(touched, key=lambda watch: watch.serial)
        ]
        return Outcome(folds, results, fresh)

    def commit(self, outcome: Outcome) -> None:
        """Make an outcome current and call back the watches whose found, value or sources changed."""
        for track, fold in outcome.folds.items():
            track.fold = fold
        for track, (values, high) in outcome.results.items():
            track.results, track.high = values, high
        changed = []
        for watch, resolution in outcome.fresh:
            if not resolution.same_result(watch.current):
                changed.append(watch)
            watch.current = resolution
        for watch in changed:
            if watch._owner is not None:
                watch._callback(watch.current)

    # -- folding -------------------------------------------------------------------------------

    def _install(self, track: Track, fold: Fold) -> None:
        track.fold = fold
        track.results, track.high = self._results(track, fold)

    def _refold(self, track: Track, level: int, appended: int | None, global_write: bool) -> Fold:
        context = self._context
        writes, key = context._writes, context._order.key.__getitem__
        old = track.fold
        global_layer = context._layer((track.kind, None))
        if level == ALL or old is None:
            global_state = State([Probe(path) for path in track.paths])
            gaps: list[Gap] = []
            fold_lane(global_state, global_layer, track.lane, writes, key, gaps=gaps)
        elif global_write and level <= GLOBAL_APPEND:
            assert appended is not None
            global_state = _stepped(old.global_state, appended, writes[appended])
            gaps = [gap for gap in old.gaps if gap[0] is global_layer]
            if not isinstance(global_state.root, dict):
                gaps.append((global_layer, appended, None))
        else:
            global_state = old.global_state
            gaps = [gap for gap in old.gaps if gap[0] is global_layer]
        if track.instance is None:
            return Fold(global_state, global_state, gaps)
        instance_layer = context._layer((track.kind, track.instance))
        if old is not None and level == APPEND:
            # The appended write is the last one of this view's fold.
            assert appended is not None
            state = _stepped(old.state, appended, writes[appended])
            gaps.extend(gap for gap in old.gaps if gap[0] is instance_layer)
            if not isinstance(state.root, dict):
                gaps.append((global_layer if global_write else instance_layer, appended, None))
            return Fold(global_state, state, gaps)
        state = global_state.copy()
        fold_lane(state, instance_layer, track.lane, writes, key, gaps=gaps)
        return Fold(global_state, state, gaps)

    def _results(self, track: Track, fold: Fold) -> tuple[dict[Path, PathValue], int]:
        index_of = self._context._order.index_of
        values: dict[Path, PathValue] = {}
        high = -1
        for probe in fold.state.probes:
            if probe.path not in track.paths:
                continue
            label = "†" + ".".join((track.kind, *probe.path))
            value = values[probe.path] = path_value(fold.state, probe, label, index_of)
            high = max(high, _highest(value))
        return values, high


def _highest(value: PathValue) -> int:
    """The highest message index a result names (-1 for none)."""
    indices = [*value.sources, *(d.message_index for d in value.diagnostics if d.message_index is not None)]
    return max(indices, default=-1)


def _stepped(state: State, message_id: int, write: Write) -> State:
    twin = state.copy()
    twin.step(message_id, write)
    return twin


def _shifted(results: dict[Path, PathValue], shift: Shift) -> tuple[dict[Path, PathValue], int]:
    new = shift.new
    values: dict[Path, PathValue] = {}
    high = -1
    for path, value in results.items():
        sources = tuple(new(i) for i in value.sources)
        diagnostics = tuple(
            d if d.message_index is None else Diagnostic(new(d.message_index), d.path, d.reason, d.severity)
            for d in value.diagnostics
        )
        values[path] = PathValue(value.value, sources, diagnostics)
        high = max(high, _highest(values[path]))
    return values, high

