"""The state at the cursor and which message set each value, computed in small slices off the event loop.

`state_steps` is a generator: each `next()` does a few milliseconds of work, so the GUI thread is never
blocked for long, however many messages there are. It folds each identity's writes exactly as the
engine's reference fold does (engine/_fold.py: the same `write_at` and `_effect`), tracking the sources
of many paths in one pass instead of one resolution per path. This is the one place that answers
"which message set this value": switch it to the engine's `ctx.blame` when the engine has it.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from contextdeck.engine import MISSING, Context, Write, get_path
from contextdeck.engine._fold import _effect, _is_prefix, fold
from contextdeck.engine._methods import Conflict, write_at

Identity = tuple[str, str | None]
Path = tuple[str, ...]
SLICE = 1000  # messages scanned between two looks at the clock
FOLD_WORK = 1000  # (writes × tracked paths) folded between two looks at the clock
MAX_PATHS = 300  # paths per identity whose source is tracked while folding (others: `Layers.last_writer`)
MAX_CHILDREN = 200


@dataclass
class Lane:
    """The writes of one layer, in context order, as two parallel lists.

    Not a list of (index, write) pairs: 100,000 tuples would be 100,000 objects for the cyclic garbage
    collector to walk on every full pass, pausing the GUI; lists of ints and of existing writes are not.
    """

    indices: list[int] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)

    def before(self, at: int) -> tuple[list[int], list[Write]]:
        end = bisect_left(self.indices, at)
        return self.indices[:end], self.writes[:end]


@dataclass
class Layers:
    """Every data message's write, by kind (global layer) and by identity (instance layer), in order."""

    order: dict[Identity, int] = field(default_factory=dict)  # identity -> index of its first message
    global_lanes: dict[str, Lane] = field(default_factory=dict)
    instance_lanes: dict[Identity, Lane] = field(default_factory=dict)
    complete: bool = False  # the scan reached the end of the context
    # Folds already done, by identity and number of writes: moving the cursor refolds only the identities
    # that have writes between the old and the new position.
    folds: dict[tuple[Identity, int], Folded] = field(default_factory=dict)

    def writes(self, identity: Identity, at: int) -> tuple[list[int], list[Write]]:
        """The writes of `identity` among the first `at` messages: global layer, then its instance layer."""
        kind, instance = identity
        indices, writes = self.global_lanes.get(kind, Lane()).before(at)
        if instance is not None:
            more_indices, more_writes = self.instance_lanes.get(identity, Lane()).before(at)
            indices, writes = indices + more_indices, writes + more_writes
        return indices, writes

    def identities(self, at: int) -> list[Identity]:
        return [identity for identity, first in self.order.items() if first < at]

    def last_writer(self, identity: Identity, path: Path, at: int) -> int | None:
        """The message that last set `path` of `identity` (or a parent of it) among the first `at` messages."""
        sources = fold(zip(*self.writes(identity, at), strict=True), path, "")[1].sources
        return max(sources) if sources else None


# Freeing a scan of 100,000 messages at once takes milliseconds that add up: a dropped scan's lists wait
# here and are freed a few at a time (`free_some`).
_graveyard: list[list[Any]] = []


def bury(layers: Layers) -> None:
    """Empty `layers`, keeping its contents alive until `free_some` frees them in small pieces."""
    for lane in (*layers.global_lanes.values(), *layers.instance_lanes.values()):
        _graveyard.extend((lane.indices, lane.writes))
    _graveyard.append(list(layers.folds.values()))
    layers.order.clear()
    layers.global_lanes.clear()
    layers.instance_lanes.clear()
    layers.folds.clear()
    layers.complete = False


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
    """Fill `out` from `context`, yielding every `SLICE` messages."""
    index = 0
    while index < len(context):  # re-read: the context may change between two slices (then this is discarded)
        if index % SLICE == 0 and index:
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
            lane.writes.append(info.write)
        index += 1


@dataclass
class Folded:
    """An identity's value at the cursor, and the message that last set each tracked path."""

    identity: Identity
    value: Any = MISSING
    writer: dict[Path, int] = field(default_factory=dict)


def fold_steps(indices: list[int], writes: list[Write], targets: list[Path], out: Folded) -> Iterator[None]:
    """Fold the writes (as engine/_fold.py's `fold` does) into `out.value`, with the last source of each target."""
    root: Any = MISSING
    sources: dict[Path, int] = {}
    every = max(1, FOLD_WORK // (len(targets) + 1))
    for number, (index, write) in enumerate(zip(indices, writes, strict=True)):
        if number % every == 0 and number:
            yield
        if write.problem is not None:
            continue
        before = get_path(root, write.path)
        try:
            root = write_at(root, write.path, write.method, write.value)
        except Conflict:
            continue
        for target in targets:
            if (_is_prefix(write.path, target) or _is_prefix(target, write.path)) and _effect(write, before, target):
                sources[target] = index  # "reset" or "add": either way the latest source is this write
    out.value = root
    out.writer = {target: index for target, index in sources.items() if get_path(root, target) is not MISSING}


def paths_of(value: Any, limit: int = MAX_PATHS) -> list[Path]:
    """The paths of a value's nodes, breadth first, at most `limit` (and `MAX_CHILDREN` per container)."""
    paths: list[Path] = [()]
    queue: list[tuple[Path, Any]] = [((), value)]
    while queue and len(paths) < limit:
        path, node = queue.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for count, (key, child) in enumerate(items):
            if count >= MAX_CHILDREN or len(paths) >= limit:
                break
            child_path = (*path, str(key))
            paths.append(child_path)
            queue.append((child_path, child))
    return paths


def state_steps(context: Context, at: int | None, layers: Layers, out: list[Folded]) -> Iterator[None]:
    """The whole state as of the first `at` messages into `out`, one identity after another.

    `layers` scanned earlier from the same (unchanged) context is reused; an incomplete one is filled here.
    """
    limit = len(context) if at is None else min(at, len(context))
    if not layers.complete:
        bury(layers)
        yield from scan_steps(context, layers)
        layers.complete = True
    for number, identity in enumerate(layers.identities(limit)):
        if number % 20 == 19:
            yield
        indices, writes = layers.writes(identity, limit)
        key = (identity, len(writes))
        folded = layers.folds.get(key)
        if folded is None:
            folded = Folded(identity)
            yield from fold_steps(indices, writes, [], folded)
            yield from fold_steps(indices, writes, paths_of(folded.value), folded)
            layers.folds[key] = folded
            yield
        out.append(folded)
