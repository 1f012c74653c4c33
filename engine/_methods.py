"""The five output methods (SPEC 4.5), one small function each, and writing at a path (SPEC 4.6).

Values are never mutated: a write copies the containers along its path and shares the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen

from ._messages import MISSING, Path, is_index


@frozen
class Conflict(Exception):
    """A write that cannot be applied; the fold skips it and reports `reason`."""

    reason: str

    def __str__(self) -> str:
        return self.reason


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
    raise Conflict(f"push onto a {type_name(existing)}, not an array")


def _concat(existing: Any, new: Any) -> Any:
    if not isinstance(new, list):
        raise Conflict(f"concat of a {type_name(new)}, not an array")
    if existing is MISSING:
        return new
    if isinstance(existing, list):
        return [*existing, *new]
    raise Conflict(f"concat onto a {type_name(existing)}, not an array")


METHODS: dict[str, Callable[[Any, Any], Any]] = {
    "set": _set,
    "merge": _merge,
    "assign": _assign,
    "push": _push,
    "concat": _concat,
}


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "number"


def write_at(root: Any, path: Path, method: str, new: Any) -> Any:
    """`root` with `method` applied at `path`; raises `Conflict` and leaves `root` untouched."""
    apply = METHODS[method]
    if not path:
        return apply(root, new)
    return _write(root, path, 0, apply, new)


def _write(node: Any, path: Path, depth: int, apply: Callable[[Any, Any], Any], new: Any) -> Any:
    segment = path[depth]
    last = depth == len(path) - 1
    if isinstance(node, list):
        if not is_index(segment) or int(segment) > len(node):
            where = ".".join(path[: depth + 1])
            raise Conflict(f"{where}: index {segment!r} outside an array of {len(node)}")
        index = int(segment)
        child = node[index] if index < len(node) else MISSING
        value = apply(child, new) if last else _write(child, path, depth + 1, apply, new)
        copy = list(node)
        if index == len(node):
            copy.append(value)
        else:
            copy[index] = value
        return copy
    # Missing parents become objects; a scalar parent is replaced by an object (SPEC 4.6).
    base = node if isinstance(node, dict) else {}
    child = base.get(segment, MISSING)
    value = apply(child, new) if last else _write(child, path, depth + 1, apply, new)
    return {**base, segment: value}
