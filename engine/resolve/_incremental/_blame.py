"""Blame: who made a resolved value what it is, and what each write shadowed.

The entries are exactly the resolution's sources, in the order the fold applied them (the global layer
before the instance layer): the first set the base (a `set` at the path or a parent, or the write that
created it), every later one changed it. Each entry carries the value at the path just before the write
(what it shadowed) and just after.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol._expressions import Expression, Reference
from ...protocol._messages import MISSING, body_of, get_path
from .._resolution import Resolution
from ._index import Change, Layer, Probe, State, fold_lane

if TYPE_CHECKING:
    from ._store import Store


@dataclass(frozen=True)
class BlameEntry:
    """One write that made the value what it is.

    `path` is where the message wrote ("" for the root), `call` and `date` its `_call` and `_date` (None when absent),
    `shadowed` the value at the blamed path just before it (MISSING when there was none) and `value` the value just
    after it."""

    index: int
    message_id: int
    method: str
    path: str
    call: Any
    date: Any
    shadowed: Any
    value: Any


@dataclass(frozen=True)
class Blame:
    """The history of a resolved value: `entries[0]` set the base, the rest changed it, in fold order.

    `reference` is the reference the value came from (the last one of the alternative that was found); None, with no
    entries, when the expression is not found."""

    expression: str
    reference: str | None
    found: bool
    value: Any
    entries: tuple[BlameEntry, ...] = ()

    @property
    def base(self) -> BlameEntry | None:
        """The write that set the base of the value."""
        return self.entries[0] if self.entries else None

    @property
    def changes(self) -> tuple[BlameEntry, ...]:
        """Every later write that changed the value."""
        return self.entries[1:]


def blame_of(
    store: Store, expression: Expression, resolution: Resolution, instance: str | None, limit: int | None
) -> Blame:
    """The blame of `expression` for `instance` as of order key `limit` (None: all), given its resolution."""
    if not resolution.found:
        return Blame(expression.source, None, False, None)
    for gate in expression.alternatives:
        folds = [_folded(store, ref, instance, limit) for ref in gate]
        if all(value is not MISSING for value, _ in folds):
            value, probe = folds[-1]
            entries = tuple(_entry(store, change) for change in probe.trail or ())
            return Blame(expression.source, str(gate[-1]), True, value, entries)
    raise AssertionError("a found resolution has a found alternative")  # pragma: no cover


def _folded(store: Store, ref: Reference, instance: str | None, limit: int | None) -> tuple[Any, Probe]:
    """A reference's value (MISSING: none), its lane folded again (the global layer, then the instance's) with
    a probe that keeps a trail."""
    probe = Probe(ref.path, trail=True)
    state = State([probe])
    for view in (None,) if instance is None else (None, instance):
        layer = store.layers.get((ref.kind, view)) or Layer()
        fold_lane(state, layer, ref.path[0] if ref.path else None, store.writes, store.order.key.__getitem__, limit)
    return get_path(state.root, ref.path), probe


def _entry(store: Store, change: Change) -> BlameEntry:
    message_id, write = change.message_id, change.write
    index = store.order.index_of(message_id)
    message = body_of(store.listed[index])
    return BlameEntry(
        index, message_id, write.method, ".".join(write.path),
        message.get("_call"), message.get("_date"), change.before, change.after,
    )
