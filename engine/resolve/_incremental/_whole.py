"""Whole-kind tracks (a watch of `†state`) repaired lane by lane.

A whole-kind track folds every write of its kind: its value is the whole root, its sources every write
that applied, its diagnostics every write that failed. Refolding the rest of the layer after an edit in
the middle costs O(writes of the kind), and the two folds rarely agree again soon (a push onto the array
the edit changed acts on it), so `_tracks.repair` is slow for it.

But while no write of the layer replaces the root itself (`Layer.rooted`) and the layer starts from an object or from
nothing, each key of the root — each lane — is folded by the writes of its lane alone (`_index`): a write outside a lane
leaves it alone, and whether a write applies depends on its lane only (a merge or assign of an object at the root always
applies). So after an edit only the lanes the edited write touches are folded again (under an instance layer after a
global edit: the lanes where the global fold changed). Each is folded from a *lane mark* before the edit (its value just
after some write of the lane), the old write and the new one side by side, until the two sides agree again: equal, or
different at a few places the rest of the lane keeps apart (`_patches`). Then:

- the root is the old one with those lanes replaced (or patched). Its keys are in the order the lanes were
  created in (the global fold's first, under an instance layer): when an edit moves where a lane is
  first written, that order is worked out again from each lane's first write (`_ordered`);
- the sources are the old ones less the writes that applied only on the old side, plus those that
  applied only on the new side (by order key, in place);
- the diagnostics likewise, as a lazy `Chain` edit, so no problem is copied.

None is returned where this does not hold, and the track is repaired the usual way.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ...protocol._messages import MISSING, Write
from ...protocol._methods import Conflict, Owned, write_below
from .._chain import EMPTY
from .._fold import TOO_DEEP
from .._keys import Ids
from .._order import NOT_IN_ORDER
from . import _index
from ._index import Checkpoint, Layer, Probe, SourceEdit, Sources, State, attempt, kept, lanes_of
from ._patches import Patch, Patches, Seen, apart_at, cover, differences, identical, once, patch_at, patch_to, patched
from ._store import NO_WRITE
from ._tracks import Fold, LaneMark, TrackEdit, first_mark, lane_mark, lane_value

if TYPE_CHECKING:
    from ._store import Store


class _Fallback(Exception):
    """The lanes do not fold apart here: repair the track the usual way."""


@dataclass(frozen=True)
class _Edit:
    """What one repair compares: the layer, the edited write at order key `low` (None: a change of the
    global fold under an instance layer, from the start of the layer), its old and new write."""

    layer: Layer
    writes: Sequence[Write]
    key: Callable[[int], int]  # a message id's order key
    low: int | None
    edited: int | None
    old: Write | None
    new: Write | None

    def key_of(self, message_id: int) -> int:
        key = self.key(message_id)  # (none for the removed write: it counts as being at the edit)
        return key if key != NOT_IN_ORDER or self.low is None else self.low

    def mark_key(self, mark: LaneMark) -> int:
        return self.key_of(mark.after)


class _Lane(NamedTuple):
    """One lane folded again: its new marks, how its final value changes (`value`, or MISSING kept
    as it was; `patches` applied to the old root) and the writes whose outcome differs."""

    marks: tuple[LaneMark, ...]
    value: Any
    patches: list[Patch]
    lost: list[tuple[int, str | None]]  # (message id, reason; None: it applied) on the old side only
    gained: list[tuple[int, str | None]]  # on the new side only
    edited: list[str | None]  # the edited write's outcome in this lane, old side and new (`_APPLIED`, `_ABSENT`)
    created: bool  # where the lane is created (its place in the root's keys) may have changed


_APPLIED = ""  # an outcome: the write applied
_ABSENT = None  # an outcome: the write was not folded in this lane
_KEEP = object()  # a lane's final value: as it was


def repair(store: Store, work: TrackEdit, old: Fold, kind: str, instance: str | None,
        base_fold: Fold | None) -> Fold | None:
    """The whole-kind fold after an edit, lane by lane (`base_fold`: the global fold an instance fold
    continues from); None when the lanes do not fold apart. It keeps the old fold's checkpoints before the
    edit, and its lane marks as repaired. An edit of the track's own layer is one write at one place; a
    change of the global fold (`work.base`) comes with no edit of its own."""
    layer = store.layer((kind, instance))
    base = None if base_fold is None else base_fold.state
    if layer.rooted:
        return None
    start = MISSING if base is None else base.root
    before = old.base.root if base is not None and work.base else start
    if not all(root is MISSING or type(root) is dict for root in (start, before)):
        return None  # the global fold left something else than an object: every write may change it
    if work.base:
        found = _under_a_global_change(store, layer, before, start)
    else:
        found = _under_an_own_edit(store, work, layer, kind, instance)
    if found is None:
        return None
    edit, lanes, reorder = found
    try:
        redone = {
            lane: _LaneRefold(edit, lane, old.lanes.get(lane), lane_value(before, lane), lane_value(start, lane)).run()
            for lane in lanes
        }
        order = _ordered(edit, start) if reorder or any(change.created for change in redone.values()) else None
    except _Fallback:
        return None
    # A whole-kind fold follows one path, the whole kind (the global one too): its one probe.
    head_before = None if base is None else old.base.probes[0]
    head_now = None if base is None else base.probes[0]
    probe = _probe(edit, old.state.probes[0], redone, head_before, head_now)
    probe.resets = (0 if head_now is None else head_now.resets) + (
        start is MISSING and len(probe.sources) > (0 if head_now is None else len(head_now.sources))
    )
    root = _root(old.state.root, redone, order)
    if root is None:
        return None
    lane_marks = {**old.lanes, **{lane: change.marks for lane, change in redone.items()}}
    state = State([probe], root)
    kept = 0 if edit.low is None else first_mark(old.checkpoints, edit.low, store.order.key, removed=edit.low)
    return Fold(state if base is None else base, state, [], old.checkpoints.head(kept), lane_marks)


def _under_a_global_change(store: Store, layer: Layer, before: Any, start: Any) -> tuple[_Edit, list[str], bool] | None:
    """What a change of the global fold under an instance track asks: the lanes whose global value changed, and whether
    the root's keys may now be in another order; None when that cannot be repaired lane by lane (the global fold appears
    or disappears). A change that comes with an edit of this layer is repaired in two halves (`_watches._repaired`)."""
    if (before is MISSING) != (start is MISSING):
        return None
    edit = _Edit(layer, store.writes, store.order.key.__getitem__, None, None, None, None)
    if start is MISSING:
        return edit, [], False
    reorder = list(before) != list(start)  # the global fold created a key, or another one first
    # A lane left alone is the very same object.
    lanes = [lane for lane, was in before.items() if not identical(start.get(lane, MISSING), was)]
    lanes += [lane for lane in start if lane not in before]
    return edit, lanes, reorder


def _under_an_own_edit(
    store: Store, work: TrackEdit, layer: Layer, kind: str, instance: str | None,
) -> tuple[_Edit, list[str], bool] | None:
    """What one write edited in this layer asks: the lanes its old and new write touch, and whether the root's keys may
    now be in another order; None when that cannot be repaired lane by lane (a write that replaces the root)."""
    edited, old_write = work.edited, work.dropped
    assert edited is not None
    new_write: Write | None = store.writes[edited]
    info = store.info_of(edited)
    if new_write is NO_WRITE or info is None or info.identity != (kind, instance):
        new_write = None  # it writes nothing now (a move's remove), or it now writes another layer
    edit = _Edit(layer, store.writes, store.order.key.__getitem__, work.low, edited, old_write, new_write)
    touched: dict[str, None] = {}
    for write in (old_write, new_write):
        if write is None or write.problem is not None:
            continue
        written = lanes_of(write)
        if not written:  # the root replaced, or an empty object merged into it (it may create the root)
            return None
        touched.update(dict.fromkeys(written))
    reorder = False
    if old_write is not None and new_write is not None and not old_write.path and not new_write.path:
        # One write at the root names its lanes in another order: where it creates two of them, their
        # keys follow that order on one side and not on the other (neither side's creator moved).
        reorder = lanes_of(old_write) != lanes_of(new_write)
    return edit, list(touched), reorder


def _probe(edit: _Edit, final: Probe, redone: dict[str, _Lane], head_before: Probe | None,
           head_now: Probe | None) -> Probe:
    """The whole-kind probe after the edit: the old one's sources and problems, less what applied or failed on the old
    side only, plus what did on the new side only (after the global layer's, which `head_now` brings)."""
    lost = [item for lane in redone.values() for item in lane.lost]
    gained = [item for lane in redone.values() for item in lane.gained]
    if edit.edited is not None:
        was, is_now = _edited_outcome(edit.old, redone, 0), _edited_outcome(edit.new, redone, 1)
        if was != is_now:
            if was is not _ABSENT:
                lost.append((edit.edited, was or None))
            if is_now is not _ABSENT:
                gained.append((edit.edited, is_now or None))
    key_of = edit.key_of
    probe = Probe(())
    lost_ids = {m for m, reason in lost if reason is None}
    gained_ids = [m for m, reason in gained if reason is None]
    prefix = _changes(head_before, head_now)
    if prefix is not None:
        lost_keys = [*prefix.lost, *map(key_of, lost_ids)]
        gained_keys = [*prefix.gained, *map(edit.key, gained_ids)]
        change = SourceEdit(kept(final.sources), lost_keys, gained_keys)
        probe.edits = (change,) if not final.edits else (change, final.edits[0].net(change))
    # A global write that failed (a push onto a string) changes the global fold's problems, not its sources:
    # then the instance fold's thousands of sources are not copied.
    same_head = head_now is head_before or (
        head_now is not None and head_before is not None and head_now.sources is head_before.sources
    )
    if lost_ids or gained_ids or not same_head:
        cut = 0 if head_before is None else len(head_before.sources)
        ahead = None if same_head else () if head_now is None else head_now.sources
        probe.sources = _edited_sources(kept(final.sources), cut, ahead, lost_ids, gained_ids, key_of)
    else:
        probe.sources = final.sources
    lost_problems = frozenset((key_of(m), reason) for m, reason in lost if reason is not None)
    gained_problems = tuple(sorted((key_of(m), reason) for m, reason in gained if reason is not None))
    probe.diagnostics = final.diagnostics
    if lost_problems or gained_problems or head_now is not head_before:
        head = EMPTY if head_now is None else head_now.diagnostics
        cut = 0 if head_before is None else len(head_before.diagnostics)
        probe.diagnostics = final.diagnostics.edited(head, cut, lost_problems, gained_problems)
    return probe


def _edited_sources(sources: Sources, cut: int, head: Sequence[int] | None, lost: set[int],
                    gained: list[int], key_of: Callable[[int], int]) -> Sources:
    """`head` (None: `sources[:cut]` as it is) followed by `sources` from `cut` on (one layer's writes, in
    order) less `lost` and with `gained` in place, as `Ids` (a whole kind's thousands: `_keys`): an edit copies
    the chunks it falls in, and an instance fold's global part is the global fold's chunks."""
    if not lost and not gained and (head is None or (not head and not cut)):
        return sources
    ids = sources if type(sources) is Ids else Ids(sources)  # (once per fold: kept as `Ids` from then on)
    removed = {ids.locate(key_of(message_id), key_of, cut) for message_id in lost}  # (by key: they ascend there)
    added: dict[int, list[int]] = {}
    for _, at, message_id in sorted((key_of(m), ids.locate(key_of(m), key_of, cut), m) for m in gained):
        added.setdefault(at, []).append(message_id)
    return ids.edited_at(cut, head, removed, added)


def _changes(before: Probe | None, now: Probe | None) -> SourceEdit | None:
    """How the global fold's sources changed under an instance fold, as order keys: not at all, or as the
    global fold's repair or step told (None: not told; `_watches._grown` then compares the sources)."""
    if before is now or before is None or now is None:
        return SourceEdit((), [], [])
    if now.edits and now.edits[0].sources is before.sources:
        return now.edits[0]
    if now.sources is before.sources:  # (a write that failed: no source added, no edit told)
        return SourceEdit((), [], [])
    return None


def _root(root: Any, redone: dict[str, _Lane], order: list[str] | None) -> Any:
    """The old root with the refolded lanes replaced or patched, and, given `order`, its keys in that order
    (None: that would not be the fold's)."""
    changed = {lane: change for lane, change in redone.items() if change.value is not _KEEP or change.patches}
    if not changed and order is None:
        return root
    if type(root) is not dict:
        return None
    root = dict(root)
    for lane, change in changed.items():
        if change.value is MISSING:
            if lane in root and order is None:
                return None
            root.pop(lane, None)
        elif change.value is not _KEEP:
            if lane not in root and order is None:
                return None
            root[lane] = change.value
        for patch in change.patches:
            root = patched(root, patch)
    if order is not None:
        if not order or len(order) != len(root) or not root.keys() >= set(order):
            return None  # (an empty root may be none at all)
        root = {lane: root[lane] for lane in order}
    return root


def _ordered(edit: _Edit, start: Any) -> list[str]:
    """The root's keys in order: those of `start` (the global fold's root under an instance layer), then
    each other lane of the layer by where it is first written (the first write that applies in it, and the
    lane's place among the keys that write names)."""
    layer, first = edit.layer, {}
    for lane in layer.lanes:
        if start is not MISSING and lane in start:
            continue
        for message_id in layer.subset(lane):
            write = edit.writes[message_id]
            if write.problem is not None:
                continue
            value, outcome = _step(MISSING, write, lane)
            if outcome == _APPLIED and value is not MISSING:
                first[lane] = (edit.key(message_id), 0 if write.path else list(write.value).index(lane))
                break
    return [*(() if start is MISSING else start), *sorted(first, key=first.__getitem__)]


def _edited_outcome(write: Write | None, redone: dict[str, _Lane], side: int) -> str | None:
    """How the edited write fared on one side (0: old, 1: new): a problem of its own, applied (a root object
    always applies), or what its one lane's fold found."""
    if write is None:
        return _ABSENT
    if write.problem is not None:
        return write.problem
    if not write.path:
        return _APPLIED
    return redone[write.path[0]].edited[side]


def _step(value: Any, write: Write, lane: str, owned: Owned | None = None) -> tuple[Any, str]:
    """A write folded into one lane's value: the new value and `_APPLIED`, or the value and why not (`owned`: the
    containers it may write in place, `write_at`'s)."""
    path = write.path
    if path and write.problem is None:  # a write in the lane (path[0] is `lane`): written into its value
        try:
            return write_below(value, path, write.method, write.value, owned), _APPLIED
        except Conflict as conflict:
            return value, conflict.reported(write.method, path)
        except RecursionError:
            return value, TOO_DEEP
    root, reason, _ = attempt({} if value is MISSING else {lane: value}, write, owned)
    if reason is not None:  # a root object that failed (nested too deep) fails in every lane at once
        raise _Fallback
    return root.get(lane, MISSING), _APPLIED


# Writes between two asks of `until_they_agree` at most (a lane folded that much further), a 64th of a long lane.
_MOST_WAIT = 64


class _LaneRefold:
    """One lane of a whole-kind fold folded again on both sides of an edit, the old side (`then`) and the new
    (`now`) from a mark before the edit (from the start of the layer, with the given values, for a change of
    the global fold): the two values, where the fold is in the lane's writes (`position`), the marks kept and
    made, and the writes whose outcome differs."""

    def __init__(self, edit: _Edit, lane: str, old_marks: tuple[LaneMark, ...] | None, then: Any, now: Any) -> None:
        self.edit, self.lane, self.old_marks, self.then, self.now = edit, lane, old_marks, then, now
        self.subset = edit.layer.subset(lane)
        self.kept: list[LaneMark] = []  # the old marks before the edit
        self.fresh: list[LaneMark] = []  # the marks made since
        self.position = 0
        self.edited: list[str | None] = [_ABSENT, _ABSENT]  # the edited write's outcome on each side
        self.creators: list[int | None] = [None, None]  # the write that created the lane on each side, past the edit
        self.present = False  # whether the lane was there just before the edit
        self.lost: list[tuple[int, str | None]] = []
        self.gained: list[tuple[int, str | None]] = []

    def run(self) -> _Lane:
        """Resume from the last lane mark before the edit, fold both sides through the edit, then fold both on,
        write by write, until they agree or differ only where the rest keeps them apart."""
        self.resume()
        if self.edit.low is not None:
            self.through_the_edit()
        return self.until_they_agree()

    def resume(self) -> None:
        """Start from the last old mark before the edit, where both sides agree (none: the start of the layer)."""
        edit, old_marks = self.edit, self.old_marks
        at = 0 if edit.low is None or not old_marks else bisect_left(old_marks, edit.low, key=edit.mark_key)
        if at:
            assert old_marks is not None
            self.kept = list(old_marks[:at])
            self.now = self.then = self.kept[-1].root
            self.position = bisect_right(self.subset, edit.mark_key(self.kept[-1]), key=edit.key)
        self.present = self.then is not MISSING

    def through_the_edit(self) -> None:
        """Fold the writes before the edit once (both sides fold the same ones), then the edited write on
        each side: the old write on the old side, the new one on the new."""
        edit, lane, subset, fresh = self.edit, self.lane, self.subset, self.fresh
        writes = edit.writes
        assert edit.low is not None
        now, position = self.now, self.position
        end, owned = bisect_left(subset, edit.low, key=edit.key), _index.owned_in(subset)  # (until a mark shows `now`)
        for at in range(position, end):  # before the edit both sides fold the same writes
            write = writes[subset[at]]
            if write.problem is None:  # (never a mark at a write with a problem of its own: `lane_mark`)
                now, _ = _step(now, write, lane, owned)
                if (mark := lane_mark(at + 1, subset[at], now)) is not None:
                    fresh.append(mark)
                    owned = _index.owned_in(subset)
        then, position = now, end
        self.present = now is not MISSING
        if edit.old is not None and edit.old.problem is None and lane in (lanes_of(edit.old) or ()):
            then, self.edited[0] = _step(then, edit.old, lane)
        if position < len(subset) and subset[position] == edit.edited:
            new = edit.new
            if new is not None and new.problem is None and lane in (lanes_of(new) or ()):
                now, self.edited[1] = _step(now, new, lane)
                fresh.append(Checkpoint(edit.edited, now, None))
            position += 1
        assert edit.edited is not None
        self.creators = [edit.edited if then is not MISSING else None, edit.edited if now is not MISSING else None]
        self.then, self.now, self.position = then, now, position

    def until_they_agree(self) -> _Lane:
        """Fold both sides on, write by write, asking after each whether they agree (identical, or different
        only where the rest keeps them apart: `_placed_differences`, `_patches.patch_to`); the lane as it
        ends when they never do. Two objects are asked after fewer writes while each ask finds a write that acts
        where they differ at once (a to-do list marked by index: the next item marked lies past the start the sides
        share, and each ask walks that start): every second write, fourth, ..., up to `_MOST_WAIT` or a 64th of
        the lane's writes."""
        edit, lane, subset, old_marks = self.edit, self.lane, self.subset, self.old_marks
        layer, writes = edit.layer, edit.writes
        then, now, position = self.then, self.now, self.position
        fresh, creators, lost, gained = self.fresh, self.creators, self.lost, self.gained
        seen = Seen()
        owned = _index.owned_in(subset)  # (both sides' containers, until a mark shows `now`)
        after = edit.low
        steps = 0
        check = True
        wait, most = 1, max(_MOST_WAIT, len(subset) >> 6)  # two objects are asked after every `wait`th write
        while True:
            if check:  # after each write both sides stepped (and before the first)
                seen.differs_at = apart_at(then, now, seen.differs_at)
                if seen.differs_at is None:
                    return self.finish(_KEEP, [], after)
                if type(then) is dict and type(now) is dict:
                    # Objects: where they differ, and the next write that acts there; the writes before that one are
                    # not folded twice (`_ahead`).
                    apart = _placed_differences(edit, lane, subset, position, then, now, seen)
                    if apart is not None:
                        patches, acting = apart
                        if acting is None:
                            stops = [(patch, None if at is None else edit.key(subset[at])) for patch, at in patches]
                            return self.finish(_KEEP, stops, after)
                        wait = min(2 * wait, most) if acting - position <= wait else 1
                        ahead = _ahead(edit, lane, subset, position, acting, old_marks, then, patches, after)
                        if ahead is not None:
                            then, now, marks = ahead
                            position, after = acting, edit.key(subset[acting - 1])
                            fresh.extend(marks)
                            owned = _index.owned_in(subset)  # (the two sides share containers now)
                elif steps % _index.CHECKPOINT_EVERY == 0:
                    appends = position >= layer.appends_from(lane, writes)
                    way = patch_to(
                        {} if now is MISSING else {lane: now}, {} if then is MISSING else {lane: then},
                        lane, [], layer, after, writes, edit.key, appends, seen,
                    )
                    if way is not None:
                        if way and (then is MISSING or now is MISSING):
                            raise _Fallback
                        return self.finish(_KEEP, way, after)
                check = False
            if position == len(subset):
                return self.finish(now, [], after)
            message_id = subset[position]
            position += 1
            write = writes[message_id]
            after = edit.key(message_id)
            if write.problem is not None:
                continue  # a problem of the write itself: the same on both sides
            then, was = _step(then, write, lane, owned)
            now, is_now = _step(now, write, lane, owned)
            if was != is_now:
                lost.append((message_id, was or None))
                gained.append((message_id, is_now or None))
            for side, value in enumerate((then, now)):
                if creators[side] is None and value is not MISSING:
                    creators[side] = message_id
            if (mark := lane_mark(position, message_id, now)) is not None:
                fresh.append(mark)
                owned = _index.owned_in(subset)
            steps += 1
            check = type(then) is not dict or type(now) is not dict or steps % wait == 0

    def finish(self, value: Any, patches: Patches, after: int | None) -> _Lane:
        """The lane folded again, to its end (`value` its final value), or until the sides agree after order key
        `after` (None: from the start; `value` is `_KEEP`): then the old marks after it follow the new ones, and
        its value is the old one, each patched where the sides differ until the write that replaces it there."""
        edit, old_marks, lane = self.edit, self.old_marks, self.lane
        rest: tuple[LaneMark, ...] = ()
        if value is _KEEP and old_marks:
            rest = old_marks[bisect_right(old_marks, -1 if after is None else after, key=edit.mark_key) :]
        if patches:  # the old marks past the edit as the new side has them (without patches: the same)
            placed = [(patch, None if stop is None else stop - 1) for patch, stop in patches]
            everywhere = all(covered is None for _, covered in placed)  # (then no mark's key is needed)
            rest = tuple(
                mark._replace(root=_patched_lane(mark.root, lane, placed, -1 if everywhere else edit.mark_key(mark)))
                for mark in rest
            )
        kept = [*self.kept, *self.fresh, *rest]
        final_patches = [patch for patch, stop in patches if stop is None]
        created = not self.present and self.creators[0] != self.creators[1]  # the lane's key may take another place
        return _Lane(tuple(kept), value, final_patches, self.lost, self.gained, self.edited, created)


Placed = list[tuple[Patch, int | None]]  # patches, each with the position of the lane's write that covers it


def _placed_differences(
    edit: _Edit, lane: str, subset: list[int], position: int, then: Any, now: Any, seen: Seen
) -> tuple[Placed, int | None] | None:
    """Where two objects of a lane differ (`_patches.differences`, as patches; `seen`: the repair's asks before) and
    how the lane's writes from `position` on act there (`_patches.cover`): each patch with the position of the write
    that replaces it on both sides (None: none before `acting`), and the position of the first write that acts on a
    difference by what it is (`acting`, None: none, so the old rest is the new one patched); None when they differ
    otherwise."""
    targets = differences({lane: now}, {lane: then}, lane, seen.starts)
    if targets is None:
        return None
    question, layer = (id(subset), position, targets), edit.layer
    covered, acting = once(layer, question, cover, subset, position, edit.writes, targets, layer, edit.key)
    at = [None if k is None else bisect_left(subset, k, key=edit.key) for k in (*covered, acting)]  # (positions)
    new, old = {lane: now}, {lane: then}
    patches = [(patch_at(target, new, old), place) for target, place in zip(targets, at[:-1], strict=True)]
    return patches, at[-1]


def _ahead(
    edit: _Edit, lane: str, subset: list[int], position: int, acting: int, old_marks: tuple[LaneMark, ...] | None,
    then: Any, patches: Placed, after: int | None,
) -> tuple[Any, Any, list[LaneMark]] | None:
    """Both sides just before the lane's write at `acting`, the first from `position` on that acts on where
    they differ (`_placed_differences`), with no write in between folded twice: those leave the differences alone or
    replace them on both sides alike, so the new side there is the old side's value, patched where no write
    in between replaced it. The old side is the old fold's: from its last lane mark before `acting` (or from
    `then`), a few writes folded. Also the new side's marks in between: the old ones, patched. None when
    that folds no fewer writes than stepping both sides there."""
    first = last = 0
    start = position
    if old_marks:
        first = bisect_right(old_marks, -1 if after is None else after, key=edit.mark_key)
        last = bisect_left(old_marks, edit.key(subset[acting]), key=edit.mark_key)
        if last > first:
            start = bisect_right(subset, edit.mark_key(old_marks[last - 1]), position, acting, key=edit.key)
    if acting - start >= 2 * (acting - position):
        return None
    marks: list[LaneMark] = []
    for mark in old_marks[first:last] if old_marks else ():
        at = bisect_right(subset, edit.mark_key(mark), position, acting, key=edit.key)
        marks.append(Checkpoint(mark.after, _patched_lane(mark.root, lane, patches, at), None))
    if marks:
        then = old_marks[last - 1].root if old_marks else then
    for message_id in subset[start:acting]:
        write = edit.writes[message_id]
        if write.problem is None:
            then, _ = _step(then, write, lane)
    return then, _patched_lane(then, lane, patches, acting), marks


def _patched_lane(value: Any, lane: str, patches: Placed, at: int) -> Any:
    """A lane's old value just before its write at position `at` (or just after the write of order key `at`,
    each patch then with the key before the write that replaces it), as the new side has it: patched where
    no write before `at` replaced the difference."""
    for patch, covered in patches:
        if covered is None or at <= covered:
            value = patched({lane: value}, patch)[lane]
    return value
