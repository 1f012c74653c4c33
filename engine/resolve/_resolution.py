"""What a resolution returns (SPEC 4.8): found or not, the value, where it came from, what went wrong."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import FrozenInstanceError, dataclass
from operator import is_not
from typing import TYPE_CHECKING, Any

from ._keys import EMPTY_KEYS, Keys

if TYPE_CHECKING:
    from ._chain import Chain
    from ._order import Order, Ranks, Shift


# Message indices in ascending order: a plain tuple, so that it serialises as what it is (json, orjson).
Indices = tuple[int, ...]
# Labels and the problems of each reference a resolution looked at (`_chain.Chain` of (key, reason)).
Problems = tuple[tuple[str, "Chain"], ...]


@dataclass(frozen=True)
class Diagnostic:
    """A problem found while folding: which message, which path, and why."""

    message_index: int | None
    path: str
    reason: str
    severity: str = "error"

    def __str__(self) -> str:
        where = f"message {self.message_index}: " if self.message_index is not None else ""
        return f"{where}{self.path}: {self.reason}"


class _Fields:
    """A resolution's slots without the guard: `ranked` fills them in as plain attribute stores (every watch a
    middle edit reaches is renewed, and `object.__setattr__` per slot is a call each), then gives the object
    the class `Resolution`, whose layout is the same."""

    __slots__ = ("_diagnostics", "_keys", "_parts", "_ranks", "_sources", "expression", "found", "missing", "value")

    expression: str
    found: bool
    value: Any
    missing: tuple[str, ...]
    _sources: Indices | None  # None until first read (then worked out from `_keys` in `_ranks`)
    _diagnostics: tuple[Diagnostic, ...] | None  # the same, from `_parts`
    _keys: Keys
    _parts: Problems
    _ranks: Ranks | None


class Resolution(_Fields):
    """The result of resolving an expression: `value` is None when not `found`.

    `sources` are the message indices the value came from, `diagnostics` the problems met on the way
    (de-duplicated, in the order of the references looked at), and `missing` names, for each
    alternative that was not found, its first reference that was not found.

    Frozen. A watch's resolution is made from order keys and the problems its folds keep once per write
    (`_chain`), over a snapshot of the order (`_order.Ranks`): its sources and diagnostics are worked out
    when first read, so renewing a thousand watches after an edit costs one small object each, however
    many sources and conflicts they have. They are what they were when it was made, whatever is edited
    afterwards.
    """

    __slots__ = ()

    def __init__(self, expression: str, found: bool, value: Any = None, sources: Iterable[int] = (),
            diagnostics: Iterable[Diagnostic] = (), missing: tuple[str, ...] = ()) -> None:
        _set(self, "expression", expression)
        _set(self, "found", found)
        _set(self, "value", value)
        _set(self, "missing", missing)
        _set(self, "_sources", tuple(sources))
        _set(self, "_diagnostics", tuple(diagnostics))
        _set(self, "_keys", EMPTY_KEYS)
        _set(self, "_parts", ())
        _set(self, "_ranks", None)

    def _renumbered(self, ranks: Ranks, changes: Sequence[Shift] = ()) -> Resolution:
        """This resolution in a later snapshot of the order (the same messages, perhaps other indices).

        `changes`: the keys added or taken out since its own snapshot (all of them, or all but some above
        every key it names): with few, sources already worked out are shifted, not ranked again."""
        made = ranked(self.expression, self.found, self.value, self._keys, self._parts, ranks, self.missing)
        if self._sources is not None and 0 < len(changes) <= _FEW_CHANGES:
            _set(made, "_sources", _shifted(self._keys, self._sources, changes))
        return made

    @property
    def sources(self) -> Indices:
        sources: Indices | None = self._sources
        if sources is None:
            assert self._ranks is not None
            sources = self._ranks.ranks(self._keys)
            _set(self, "_sources", sources)
        return sources

    def last_sources(self, count: int) -> Indices:
        """`sources[-count:]`, ranking only those: a whole kind has as many sources as writes (a hundred
        thousand at a million messages), and a view that shows the last few should not rank them all."""
        if self._sources is not None or self._ranks is None or count <= 0:
            return self.sources[-count:] if count > 0 else ()
        keys = self._keys
        return self._ranks.ranks([keys[at] for at in range(max(0, len(keys) - count), len(keys))])

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        diagnostics: tuple[Diagnostic, ...] | None = self._diagnostics
        if diagnostics is None:
            assert self._ranks is not None
            rank = self._ranks.rank
            diagnostics = tuple(
                Diagnostic(rank(key), label, reason) for label, chain in self._parts for key, reason in chain.items()
            )
            _set(self, "_diagnostics", diagnostics)
        return diagnostics

    def _reach(self) -> int:
        """The largest order key whose index it shows: an edit above it renumbers nothing it names."""
        assert self._ranks is not None
        if any(chain for _, chain in self._parts):  # diagnostics: their keys are not sorted, any key the order had
            return self._ranks._top
        return self._keys[-1] if self._keys else -1

    def _fields(self) -> tuple[Any, ...]:
        return (self.expression, self.found, self.value, self.sources, self.diagnostics, self.missing)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resolution):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        names = ("expression", "found", "value", "sources", "diagnostics", "missing")
        return "Resolution(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields(), strict=True)) + ")"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[Resolution], tuple[Any, ...]]:
        return Resolution, self._fields()


_FEW_CHANGES = 8  # beyond: the sources are ranked again when read


def _shifted(keys: Keys, sources: Indices, changes: Sequence[Shift]) -> Indices:
    """The indices of sorted `keys` (`sources` before `changes`) after them: a key added (taken out) below
    a key moves it up (down) by one. One binary search per change, then slices shifted in bulk."""
    if len(changes) == 1:  # one insert or remove: the usual case
        cut = keys.locate(changes[0].key + 1)  # the keys at or below it
        return sources[:cut] + tuple(map(changes[0].change.__add__, sources[cut:]))
    parts: list[Iterable[int]] = []
    start, delta = 0, 0
    for key, change in sorted((shift.key, shift.change) for shift in changes):
        cut = keys.locate(key + 1, low=start)
        if cut > start:
            parts.append(sources[start:cut] if not delta else map(delta.__add__, sources[start:cut]))
        start, delta = cut, delta + change
    parts.append(sources[start:] if not delta else map(delta.__add__, sources[start:]))
    return tuple(itertools.chain.from_iterable(parts))


class Kept:
    """A resolution kept across edits (a watch's last result, `_resolution`), with the order's last change when
    it was last ranked (`_seen`): a watch and a cursor's watch."""

    __slots__ = ("_resolution", "_seen")

    _resolution: Resolution
    _seen: Shift

    def _keep(self, resolution: Resolution, seen: Shift) -> None:
        """Keep `resolution`, ranked as of its snapshot (`seen` for one with no snapshot)."""
        self._resolution = resolution
        self._seen = resolution._ranks.start if resolution._ranks is not None else seen

    def _now(self, order: Order) -> Resolution:
        """The kept resolution with the indices its messages have in `order` now: the same object unless an edit
        since shifted a message it names (an append never does), else the same messages ranked in the latest
        snapshot, worked out when read. O(edits since). As kept when the order was relabelled since its
        snapshot: its keys name nothing now (the holder resolves again)."""
        resolution, tail = self._resolution, order.tail
        if self._seen is tail or resolution._ranks is None or resolution._ranks.generation != order.generation:
            return resolution
        changes = order.shifted(self._seen, resolution._reach())
        if changes is not None:
            resolution = self._resolution = resolution._renumbered(order.snapshot(), changes)
        self._seen = tail
        return resolution


_new = object.__new__
_set = object.__setattr__


def ranked(
    expression: str, found: bool, value: Any, keys: Keys, parts: Problems, ranks: Ranks, missing: tuple[str, ...] = (),
) -> Resolution:
    """A resolution whose sources are the order keys `keys` and whose diagnostics are the problems of
    `parts` ((label, chain of (order key, reason)) per reference), both ranked in `ranks` when read."""
    made = _new(_Fields)
    made.expression, made.found, made.value, made.missing = expression, found, value, missing
    made._sources = made._diagnostics = None
    made._keys, made._parts, made._ranks = keys, parts, ranks
    _set(made, "__class__", Resolution)
    return made  # type: ignore[return-value]  # now a Resolution


def changed(old: Resolution, new: Resolution, before: Keys | None = None) -> bool:
    """Whether a watcher sees a change: found, value or source messages. Those are compared by order key (a
    message moved is at another place in the fold, so a moved source is a change too): `before`, the old ones'
    keys as they are now, else `old`'s own when both were ranked in the same generation of the order;
    otherwise by index (an index alone may now name another message). Indices that only shifted are not."""
    if old.found != new.found:
        return True
    if before is None and (old._ranks is None or new._ranks is None or old._ranks.generation != new._ranks.generation):
        if old.sources != new.sources:
            return True
    else:
        keys, before = new._keys, old._keys if before is None else before  # (item by item: a whole kind has thousands)
        if keys is not before and (len(keys) != len(before) or keys != before):
            return True
    return old.value is not new.value and not same_json(old.value, new.value)


def same_json(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0 but True != 1, and key order does not matter.
    if a is b:  # persistent values share what did not change
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a if a[k] is not b[k])
    if isinstance(a, list) and isinstance(b, list):  # (the elements both share skipped in C: a log of thousands)
        return len(a) == len(b) and all(
            same_json(x, y) for x, y in itertools.compress(zip(a, b, strict=True), map(is_not, a, b)))
    return type(a) is type(b) and a == b if not isinstance(a, int | float) else a == b
