"""The five output methods (SPEC 4.5), one record each, and writing at a path (SPEC 4.6).

Values are never mutated: a write copies the containers along its path and shares the rest. The one exception
is a fold's own containers (`Owned`): those it made since it last let anyone see its root are written in place,
so n writes of n keys into one object cost O(n), not O(n²).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from attrs import frozen

from ._values import MISSING, Path, is_index, segment_index, with_article


@frozen
class Conflict(Exception):
    """A write that cannot be applied; the fold skips it and reports `reason`."""

    reason: str

    def __str__(self) -> str:
        return self.reason

    def reported(self, method: str, path: Path) -> str:
        """The problem a fold reports for the write that met this conflict."""
        return f"{method} at {'.'.join(path) or 'the root'}: {self.reason}"


def deep_merge(existing: Any, new: Any) -> Any:
    """Objects merge key by key, recursively; anything else replaces."""
    if not (isinstance(existing, dict) and isinstance(new, dict)):
        return new
    merged = dict(existing)
    for key, value in new.items():
        merged[key] = deep_merge(merged[key], value) if key in merged else value
    return merged


def _set(existing: Any, new: Any) -> Any:
    return new


def _merge(existing: Any, new: Any) -> Any:
    return deep_merge(existing, new)


def _assign(existing: Any, new: Any) -> Any:
    if isinstance(existing, dict) and isinstance(new, dict):
        return {**existing, **new}
    return new


def _push(existing: Any, new: Any) -> Any:
    if existing is MISSING:
        return [new]
    if isinstance(existing, list):
        return [*existing, new]
    raise Conflict(f"push onto {with_article(existing)}, not an array")


def _concat(existing: Any, new: Any) -> Any:
    if not isinstance(new, list):
        raise Conflict(f"concat of {with_article(new)}, not an array")
    if existing is MISSING:
        return new
    if isinstance(existing, list):
        return [*existing, *new]
    raise Conflict(f"concat onto {with_article(existing)}, not an array")


# Effects on a path at or below the write's path (`rest`: the part below), given the value at the write's
# path before it: "reset" (replaced the value there), "add" (changed part of it) or None (left it alone).
# They decide sources (see docs/format.md, "Sources"); `_fold._effect` handles paths above the write.


def _set_effect(before: Any, new: Any, rest: Path) -> Effect:
    return "reset"


def _merge_effect(before: Any, new: Any, rest: Path) -> Effect:
    node = new
    for segment in rest:
        if not (isinstance(before, dict) and isinstance(node, dict)):
            return "reset"
        if segment not in node:
            return None
        node, before = node[segment], before.get(segment, MISSING)
    return "add" if isinstance(before, dict) and isinstance(node, dict) else "reset"


def _assign_effect(before: Any, new: Any, rest: Path) -> Effect:
    if not (isinstance(before, dict) and isinstance(new, dict)):
        return "reset"
    if not rest:
        return "add"
    return "reset" if rest[0] in new else None


def _appending_effect(appends: Callable[[Any], list[Any]]) -> Callable[[Any, Any, Path], Effect]:
    def effect(before: Any, new: Any, rest: Path) -> Effect:
        # The path is the array itself, or one of the elements appended.
        if not rest:
            return "add" if isinstance(before, list) else "reset"
        start = len(before) if isinstance(before, list) else 0
        return "reset" if rest[0] in {str(i) for i in range(start, start + len(appends(new)))} else None

    return effect


# How a write acts on the value at a path at or below its own (`rest`: the part below), when the parents
# there are objects (`_patches.covers`): None leaves it alone (so acts the same whatever it is), True
# replaces it or a parent whatever it was, False acts on it by what it is.


def _set_covers(new: Any, rest: Path) -> bool | None:
    return True


def _merge_covers(new: Any, rest: Path) -> bool | None:
    node = new  # walks down the new value: a non-object replaces, a missing key stops
    for segment in rest:
        if not isinstance(node, dict):
            return True
        if segment not in node:
            return None
        node = node[segment]
    return not isinstance(node, dict)


def _assign_covers(new: Any, rest: Path) -> bool | None:
    if not isinstance(new, dict):  # it replaces what is there
        return True
    if not rest:  # the object itself: keys are added to it
        return False
    return True if rest[0] in new else None


def _appending_covers(new: Any, rest: Path) -> bool | None:
    return False


Effect = str | None


@dataclass(frozen=True)
class Method:
    """Everything the engine knows about one write method (SPEC 4.5), in one place: a sixth method is one
    more record here (plus its tests and docs).

    `apply(existing, new)`: the value after the write (raises `Conflict`); `effect(before, new, rest)`:
    what it does to the sources of a path at or below its own; `covers(new, rest)`: how it acts on a value
    there that two folds disagree on; `root_lanes`: at the root with an object, it only writes the keys of
    that object (each key's lane, see `_index`), else a root write can change every lane; `appends(new)`:
    the elements it appends to an array (None: it does not append); `keeps_order`: where it acts on an object
    by what it is (at its path, or below where it merges an object), it keeps the object's keys in their
    order and adds new ones at the end, so two objects with the same keys in two orders stay so (`_patches`);
    `into(owned, existing, new)`: `apply` for a fold that owns some containers (`Owned`), writing those in place
    and owning what it makes (None: `apply`, which copies)."""

    name: str
    apply: Callable[[Any, Any], Any]
    effect: Callable[[Any, Any, Path], Effect]
    covers: Callable[[Any, Path], bool | None]
    root_lanes: bool = False
    appends: Callable[[Any], list[Any]] | None = None
    keeps_order: bool = False
    into: Callable[[Owned, Any, Any], Any] | None = None


def _pushed(new: Any) -> list[Any]:
    return [new]


def _concatenated(new: Any) -> list[Any]:
    return new if isinstance(new, list) else []


# The in-place writes (`Method.into`): only what `owned` holds is changed, and only once the write cannot fail.


def _merge_into(owned: Owned, existing: Any, new: Any) -> Any:
    if not (type(existing) is dict and type(new) is dict):
        return _merge(existing, new)
    later: list[tuple[dict[str, Any], str, Any]] = []
    merged = _merged(existing, new, owned, later)
    for target, key, value in later:
        target[key] = value  # only now: a merge too deep for the stack raised before any change
    return merged


def _assign_into(owned: Owned, existing: Any, new: Any) -> Any:
    if not (type(existing) is dict and type(new) is dict):
        return _assign(existing, new)
    if not owned.has(existing):
        return owned.made({**existing, **new})
    existing.update(new)
    return existing


def _appending_into(apply: Callable[[Any, Any], Any]) -> Callable[[Owned, Any, Any], Any]:
    def into(owned: Owned, existing: Any, new: Any) -> Any:
        if type(existing) is list and owned.has(existing):
            existing.extend(apply([], new))  # what it appends to any array (or its `Conflict`)
            return existing
        value = apply(existing, new)
        if value is not new and value is not existing:  # the array it made (not the message's own, nor what was
            owned.made(value)  # there: a method may leave it)
        return value

    return into


WRITE_METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method("set", _set, _set_effect, _set_covers),
        Method("merge", _merge, _merge_effect, _merge_covers, root_lanes=True, keeps_order=True, into=_merge_into),
        Method("assign", _assign, _assign_effect, _assign_covers, root_lanes=True, keeps_order=True,
               into=_assign_into),
        Method("push", _push, _appending_effect(_pushed), _appending_covers, appends=_pushed,
               into=_appending_into(_push)),
        Method("concat", _concat, _appending_effect(_concatenated), _appending_covers, appends=_concatenated,
               into=_appending_into(_concat)),
    )
}


class Owned(dict[int, Any]):
    """The containers (by id; held, so an id is never reused) a fold made since it last let anyone see its root:
    nobody else holds them, so a write may change them in place. A fold clears it when it shows its root (a
    checkpoint kept, a value given out): from then on, those are shared and copied before a write."""

    def has(self, node: Any) -> bool:
        return self.get(id(node)) is node

    def made(self, node: Any) -> Any:
        """`node`, a container the fold just made (never a message's value), noted as its own."""
        self[id(node)] = node
        return node


def write_at(root: Any, path: Path, method: str, new: Any, owned: Owned | None = None) -> Any:
    """`root` with `method` applied at `path`; raises `Conflict` and leaves `root` untouched. With `owned`, the
    containers in it are written in place (only once the write cannot fail) and those the write makes join it."""
    record = WRITE_METHODS[method]
    apply = record.apply if owned is None or record.into is None else partial(record.into, owned)
    if not path:
        return apply(root, new)
    return _write(root, path, 0, apply, new, owned)


def write_below(value: Any, path: Path, method: str, new: Any, owned: Owned | None = None) -> Any:
    """What `write_at` leaves at `path[0]` of a root whose value there is `value` (MISSING: none): `value`
    with `method` applied at the rest of `path`, with no root made around it (a fold of one lane, `_whole`).
    Raises `Conflict` with the very reason `write_at` gives (it names the whole path). `owned` as `write_at`'s."""
    record = WRITE_METHODS[method]
    apply = record.apply if owned is None or record.into is None else partial(record.into, owned)
    if len(path) == 1:
        return apply(value, new)
    return _write(value, path, 1, apply, new, owned)


def _merged(existing: dict[str, Any], new: dict[str, Any], owned: Owned, later: list[tuple[dict[str, Any], str, Any]]
            ) -> dict[str, Any]:
    """`deep_merge(existing, new)` of two objects, the objects it makes owned and the owned ones it merges into noted
    in `later` (target, key, value) to be written in place after."""
    target: dict[str, Any] = existing if owned.get(id(existing)) is existing else owned.made(dict(existing))  # (`has`)
    for key, value in new.items():
        old = target.get(key, MISSING)
        merged = _merged(old, value, owned, later) if isinstance(old, dict) and isinstance(value, dict) else value
        if target is not existing:
            target[key] = merged  # (a copy nobody has seen yet)
        elif merged is not old:
            later.append((existing, key, merged))
    return target


def _write(node: Any, path: Path, depth: int, apply: Callable[[Any, Any], Any], new: Any, owned: Owned | None) -> Any:
    segment = path[depth]
    last = depth == len(path) - 1
    if isinstance(node, list):
        if not is_index(segment):
            # It names no length: the failure does not depend on the array's elements, so two folds whose
            # arrays differ report it alike (tracks splice over such writes, `_patches.keeps_start`).
            raise Conflict(f"{'.'.join(path[: depth + 1])}: {segment!r} is not an index of an array")
        index = segment_index(segment)
        if index > len(node):
            where = ".".join(path[: depth + 1])
            raise Conflict(f"{where}: index {segment!r} outside an array of {len(node)}")
        child = node[index] if index < len(node) else MISSING
        value = apply(child, new) if last else _write(child, path, depth + 1, apply, new, owned)
        copy = node if owned is not None and owned.has(node) else list(node)
        if index == len(node):
            copy.append(value)
        else:
            copy[index] = value
        return copy if owned is None else owned.made(copy)
    # Missing parents become objects; a scalar parent is replaced by an object (SPEC 4.6).
    base = node if isinstance(node, dict) else {}
    child = base.get(segment, MISSING)
    value = apply(child, new) if last else _write(child, path, depth + 1, apply, new, owned)
    if owned is None:
        return {**base, segment: value}
    if owned.get(id(base)) is base:  # (`has`, in a hot loop)
        base[segment] = value
        return base
    return owned.made({**base, segment: value})
