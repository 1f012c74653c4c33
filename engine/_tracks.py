"""A track's fold, kept and repaired: one step for an append, a partial refold that splices otherwise.

A track folds the writes of one lane (see `_index`). Every few writes it keeps a `Checkpoint`. After an
edit in the middle it resumes from the last checkpoint before the edit and folds on; at each old
checkpoint past the edit it asks whether the new fold has become *equivalent* to the old one: the same
root type and the same lane value, exactly. From there the future is the same sequence of writes on the
same state, so the old rest is spliced on instead of folded again. Sources and diagnostics are the only
things that remember the past, and they compose: diagnostics are appended, and sources are appended to
until a reset — so the new sources are the new prefix plus what the old fold added since, unless the old
fold reset them later (then they are the old ones).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from . import _index
from ._index import Checkpoint, Gap, Key, Layer, Probe, State, checkpoint, fold_lane
from ._messages import MISSING, Path, Write

if TYPE_CHECKING:
    from ._context import Context


Rebase = tuple[int, int, Checkpoint, Checkpoint, "tuple[str, Any, Any] | None"]


class Marks:
    """A track's checkpoints in fold order. A splice rebases the old ones after it lazily: each read
    applies the pending rebases whose range holds it (they are few, and flattened when they pile up)."""

    __slots__ = ("items", "rebases")

    def __init__(self, items: list[Checkpoint] | None = None, rebases: list[Rebase] | None = None) -> None:
        self.items = items if items is not None else []
        self.rebases = rebases if rebases is not None else []  # (start, end, matched, here, array)

    def __len__(self) -> int:
        return len(self.items)

    def id_at(self, index: int) -> int:
        return self.items[index].message_id

    def get(self, index: int) -> Checkpoint:
        mark = self.items[index]
        for start, end, matched, here, array in self.rebases:
            if start <= index < end:
                mark = _rebased(mark, matched, here, array)
        return mark

    def plus(self, mark: Checkpoint) -> Marks:
        return Marks([*self.items, mark], self.rebases)

    def head(self, count: int) -> Marks:
        """The first `count` marks (their rebases end there too: marks added after are new)."""
        kept: list[Rebase] = [
            (start, min(end, count), matched, here, array)
            for start, end, matched, here, array in self.rebases
            if start < count
        ]
        return Marks(self.items[:count], kept)

    def spliced(self, head: Marks, fresh: list[Checkpoint], later: int, rebase: Rebase) -> Marks:
        """`head`, then `fresh`, then this one's marks from `later` on, rebased by `rebase`."""
        offset = len(head) + len(fresh) - later
        items = [*head.items, *fresh, *self.items[later:]]
        rebases = [*head.rebases]
        for start, end, matched, here, array in self.rebases:
            if end > later:
                rebases.append((max(start, later) + offset, end + offset, matched, here, array))
        _, _, matched, here, array = rebase
        rebases.append((later + offset, len(items), matched, here, array))
        marks = Marks(items, rebases)
        if len(rebases) > 6:
            marks = Marks([marks.get(i) for i in range(len(items))])
        return marks


@dataclass
class Fold:
    """One track's fold: the global state it continued from, its own state, gaps and checkpoints."""

    base: State
    state: State
    gaps: list[Gap]
    checkpoints: Marks
    steps: int = 0  # writes folded since the last checkpoint

    def __post_init__(self) -> None:
        self.state.freeze()


@dataclass
class Work:
    """What an edit asks of one track.

    `appended`: the id of a write that is now the last of this view's fold (one step will do);
    `base`: the global layer changed under an instance track (fold its own layer again from the start);
    `low`, `high`: the order keys of the edits in the track's own layer (None: none there).
    """

    appended: int | None = None
    base: bool = False
    low: int | None = None
    high: int | None = None
    generation: int = 0
    ids: set[int] = field(default_factory=set)


def full(
    context: Context, kind: str, instance: str | None, lane: str | None, paths: list[Path], base: Fold | None
) -> Fold:
    """Fold a track from scratch (an instance track from its global track's fold `base`)."""
    writes, key = context._writes, context._order.key.__getitem__
    layer = context._layer((kind, instance))
    state = State([Probe(path) for path in paths]) if base is None else _restart_from_base(base, paths)
    gaps: list[Gap] = []
    checkpoints: list[Checkpoint] = []
    fold_lane(state, layer, lane, writes, key, gaps=gaps, checkpoints=checkpoints)
    return Fold(state if base is None else base.state, state, gaps, Marks(checkpoints))


def step(context: Context, old: Fold, message_id: int, own: bool, base: Fold | None) -> Fold:
    """The fold after an appended write (`own`: it belongs to the track's own layer)."""
    state = old.state.copy()
    write = context._writes[message_id]
    state.step(message_id, write)
    gaps, checkpoints, steps = old.gaps, old.checkpoints, old.steps
    if own:
        layer = context._layer(context._info[message_id].identity or ("", None))
        if not isinstance(state.root, dict):
            gaps = [*gaps, (layer, message_id, None)]
        steps += 1
        if steps >= _index.CHECKPOINT_EVERY:
            checkpoints = checkpoints.plus(checkpoint(state, layer, message_id, len(gaps)))
            steps = 0
    return Fold(state if base is None else base.state, state, gaps, checkpoints, steps)


def repair(
    context: Context, work: Work, old: Fold, kind: str, instance: str | None, lane: str | None, base: Fold | None
) -> Fold:
    """The fold after an edit in the middle: resume before it, splice the old rest on once equivalent."""
    order = context._order
    keys = order.key
    layer = context._layer((kind, instance))
    paths = [probe.path for probe in old.state.probes]
    if work.low is not None and work.generation != order.generation:
        work = Work(base=work.base)  # keys were renumbered during the edit: resume from the start
    writes, key = context._writes, keys.__getitem__
    tails: list[int | None] = []

    def tail() -> int | None:  # looked for only when needed
        if not tails:
            tails.append(_appends_after(layer, lane, writes, key))
        return tails[0]

    if work.base and work.low is None and base is not None:
        spliced = _same_base(old, base, lane, tail)
        if spliced is not None:
            return spliced
    marks = old.checkpoints
    restart: int | None = None
    if not work.base and work.low is not None:
        for position in range(len(marks) - 1, -1, -1):
            message_id = marks.id_at(position)
            at = keys.get(message_id)
            if at is not None and at < work.low and message_id not in work.ids:
                restart = position
                break
    if restart is None:
        state = State([Probe(path) for path in paths]) if base is None else _restart_from_base(base, paths)
        gaps: list[Gap] = []
        head = Marks()
        after = None
    else:
        mark = marks.get(restart)
        state = State([_probe_at(probe, mark, i) for i, probe in enumerate(old.state.probes)], mark.root)
        gaps = old.gaps[: mark.gaps]
        head = marks.head(restart + 1)
        after = mark.message_id
    first = 0 if restart is None else restart + 1
    aligned = [probe.path for probe in state.probes] == paths
    matches = {marks.id_at(i): i for i in range(first, len(marks))} if aligned else {}
    high = work.high
    found: list[tuple[int, tuple[str, Any, Any] | None]] = []  # (index, array) of the matched mark

    def converge(message_id: int, now: State) -> Checkpoint | None:
        index = matches.get(message_id)
        if index is None or message_id in work.ids or (high is not None and keys.get(message_id, -1) <= high):
            return None
        mark = marks.get(index)
        if _equivalent(now.root, mark.root, lane):
            found.append((index, None))
            return mark
        if lane is None or not _appendable(now.root, mark.root, lane, paths):
            return None
        limit = tail()
        if limit is None or key(message_id) < limit:
            return None
        found.append((index, (lane, now.root[lane], mark.root[lane])))
        return mark

    fresh: list[Checkpoint] = []
    matched = fold_lane(state, layer, lane, writes, key, gaps=gaps, after=after, checkpoints=fresh, converge=converge)
    if matched is not None:
        index, array = found[-1]
        return _splice(state, gaps, head, fresh, index + 1, matched, old, base, None, array)
    return Fold(state if base is None else base.state, state, gaps, Marks([*head.items, *fresh], head.rebases))


def _same_base(old: Fold, base: Fold, lane: str | None, tail: Callable[[], int | None]) -> Fold | None:
    """When the global fold ends as before (for this lane), the instance layer folds as before: only the
    sources and diagnostics it carried over from the global layer change. So too when the lane's array
    differs and the instance layer only appends to it (`appends`). None otherwise."""
    paths = [probe.path for probe in old.state.probes]
    array = None
    if not _equivalent(base.state.root, old.base.root, lane):
        if lane is None or not _appendable(base.state.root, old.base.root, lane, paths) or tail() != -1:
            return None
        array = (lane, base.state.root[lane], old.base.root[lane])
    before = {probe.path: probe for probe in old.base.probes}
    after = {probe.path: probe for probe in base.state.probes}
    if not all(path in before and path in after for path in paths):
        return None
    matched = _mark(old.state, [before[path] for path in paths], 0)
    here = _mark(old.state, [after[path] for path in paths], 0)
    start = State([after[path].copy() for path in paths], base.state.root)
    return _splice(start, [], Marks(), [], 0, matched, old, base, here, array)


def _mark(state: State, probes: list[Probe], gaps: int) -> Checkpoint:
    """A checkpoint at the start of a layer, for `_splice`: where the given probes left off."""
    return checkpoint(State(probes, state.root), _NOWHERE, 0, gaps)


_NOWHERE = Layer()


def _restart_from_base(base: Fold, paths: list[Path]) -> State:
    wanted = set(paths)
    by_path = {probe.path: probe for probe in base.state.probes if probe.path in wanted}
    return State([by_path[path].copy() if path in by_path else Probe(path) for path in paths], base.state.root)


def _probe_at(probe: Probe, mark: Checkpoint, index: int) -> Probe:
    twin = Probe(probe.path)
    twin.sources = mark.sources[index]
    twin.diagnostics = probe.diagnostics[: mark.diagnostics[index]]
    twin.resets = mark.resets[index]
    return twin


def _splice(
    state: State,
    gaps: list[Gap],
    head: Marks,
    fresh: list[Checkpoint],
    later: int,
    matched: Checkpoint,
    old: Fold,
    base: Fold | None,
    start: Checkpoint | None = None,
    array: tuple[str, Any, Any] | None = None,
) -> Fold:
    """The new fold, equivalent at `matched` to the old one: the old rest with the new past.

    `head` and `fresh` are the new fold's checkpoints so far; the old ones from index `later` on follow,
    rebased. `start`: the fold is spliced at the start of its own layer (`matched` is then where the old
    global fold left the probes, `start` where the new one does). `array`: (lane, new, old) when the two
    differ in the lane's array, which the rest only appends to: the old rest's arrays start with `new`.
    """
    here = start or checkpoint(state, matched.layer, matched.message_id, len(gaps))
    probes = []
    for index, (now, final) in enumerate(zip(state.probes, old.state.probes, strict=True)):
        probe = Probe(now.path)
        if final.resets == matched.resets[index]:
            probe.sources = (*now.sources, *final.sources[len(matched.sources[index]) :])
            probe.resets = now.resets
        else:
            probe.sources = tuple(final.sources)
            probe.resets = now.resets + final.resets - matched.resets[index]
        probe.diagnostics = now.diagnostics + final.diagnostics[matched.diagnostics[index] :]
        probes.append(probe)
    spliced = State(probes, _with_array(old.state.root, array))
    new_marks = fresh if start is not None else [*fresh, here]
    marks = old.checkpoints.spliced(head, new_marks, later, (0, 0, matched, here, array))
    new_gaps = gaps + old.gaps[matched.gaps :]
    return Fold(spliced if base is None else base.state, spliced, new_gaps, marks, old.steps)


def _rebased(
    mark: Checkpoint, matched: Checkpoint, here: Checkpoint, array: tuple[str, Any, Any] | None = None
) -> Checkpoint:
    """An old checkpoint after the splice point, as the new fold would have made it."""
    same = (here.sources, here.diagnostics, here.resets, here.gaps)
    root = _with_array(mark.root, array)
    if same == (matched.sources, matched.diagnostics, matched.resets, matched.gaps):
        return mark if array is None else replace(mark, root=root)
    sources = tuple(
        here.sources[i] + mark.sources[i][len(matched.sources[i]) :] if mark.resets[i] == matched.resets[i] else s
        for i, s in enumerate(mark.sources)
    )
    diagnostics = tuple(d - matched.diagnostics[i] + here.diagnostics[i] for i, d in enumerate(mark.diagnostics))
    resets = tuple(r - matched.resets[i] + here.resets[i] for i, r in enumerate(mark.resets))
    gaps = mark.gaps - matched.gaps + here.gaps
    return Checkpoint(mark.layer, mark.message_id, root, sources, diagnostics, resets, gaps)


def _with_array(root: Any, array: tuple[str, Any, Any] | None) -> Any:
    """`root` whose lane array starts with the new array where it started with the old one."""
    if array is None:
        return root
    lane, new, old = array
    return {**root, lane: [*new, *root[lane][len(old) :]]}


def _appends_after(layer: Layer, lane: str | None, writes: Mapping[int, Write], key: Key) -> int | None:
    """The order key after which every write of the lane appends to the lane's array (-1: all do)."""
    if lane is None:
        return None
    subset = layer.subset(lane)
    note = layer.notes.get(("appends", lane))
    if note is not None and note[0] == layer.version:
        position = note[1]
        return key(subset[position - 1]) if position else -1
    position = len(subset)
    target = (lane,)
    while position:
        write = writes[subset[position - 1]]
        if write.problem is not None or write.path != target or write.method not in ("push", "concat"):
            break
        position -= 1
    layer.notes["appends", lane] = (layer.version, position)
    return key(subset[position - 1]) if position else -1


def _appendable(now: Any, then: Any, lane: str, paths: list[Path]) -> bool:
    """Whether two roots differ only in their lane's array in a way appending keeps for every probe.

    Pushes and concats at the lane act the same on both when both arrays are empty or both are not
    (for a probe of the whole array), and when they have the same length (for a probe of an element).
    """
    if not (isinstance(now, dict) and isinstance(then, dict)):
        return False
    new, old = now.get(lane, MISSING), then.get(lane, MISSING)
    if not (isinstance(new, list) and isinstance(old, list)):
        return False
    return len(new) == len(old) if any(len(path) > 1 for path in paths) else bool(new) == bool(old)


def _equivalent(a: Any, b: Any, lane: str | None) -> bool:
    """Whether two roots fold the same from here on, for one lane: same root type, same lane value."""
    if lane is None or not isinstance(a, dict) or not isinstance(b, dict):
        return _identical(a, b)
    return _identical(a.get(lane, MISSING), b.get(lane, MISSING))


def _identical(a: Any, b: Any) -> bool:
    """JSON values equal in type, value and key order (1, 1.0 and True are three different values)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


__all__ = ["Fold", "Layer", "Work", "full", "repair", "step"]
