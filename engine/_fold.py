"""The fold of SPEC 4: the value of one identity's path, computed from its writes in order.

This is the definition every faster strategy must agree with; `Context` calls it over the writes of
one kind (global layer, then the instance layer).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._messages import MISSING, Path, Write, get_path
from ._methods import Conflict, write_at
from ._resolution import Diagnostic


@dataclass(frozen=True)
class PathValue:
    """A path's value after a fold, the messages it came from, and the problems on the way."""

    value: Any
    sources: tuple[int, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def found(self) -> bool:
        return self.value is not MISSING


def _is_prefix(short: Path, long: Path) -> bool:
    return len(short) <= len(long) and long[: len(short)] == short


def _effect(write: Write, before: Any, target: Path) -> str | None:
    """How a write at a parent, the target or a child changes the target: "reset", "add" or None."""
    path, method, new = write.path, write.method, write.value
    if not _is_prefix(path, target):
        return "add" if _is_prefix(target, path) else None
    rest = target[len(path) :]
    if method == "set":
        return "reset"
    if method == "merge":
        node = new
        for segment in rest:
            if not (isinstance(before, dict) and isinstance(node, dict)):
                return "reset"
            if segment not in node:
                return None
            node, before = node[segment], before.get(segment, MISSING)
        return "add" if isinstance(before, dict) and isinstance(node, dict) else "reset"
    if method == "assign":
        if not (isinstance(before, dict) and isinstance(new, dict)):
            return "reset"
        if not rest:
            return "add"
        return "reset" if rest[0] in new else None
    # push and concat: the target is the array itself, or one of the elements they append.
    if before is MISSING:
        before = []
    if not rest:
        return "add" if before else "reset"
    appended = 1 if method == "push" else len(new) if isinstance(new, list) else 0
    added = {str(i) for i in range(len(before), len(before) + appended)}
    return "reset" if rest[0] in added else None


def fold(writes: Iterable[tuple[int, Write]], target: Path, label: str) -> tuple[Any, PathValue]:
    """Apply `writes` (index, write) in order; return the whole value and the value at `target`.

    `label` names the target in diagnostics (for instance `†state.user`).
    """
    root: Any = MISSING
    sources: list[int] = []
    diagnostics: list[Diagnostic] = []
    for index, write in writes:
        relevant = _is_prefix(write.path, target) or _is_prefix(target, write.path)
        if write.problem is not None:
            diagnostics.append(Diagnostic(index, label, write.problem))
            continue
        before = get_path(root, write.path)
        try:
            root = write_at(root, write.path, write.method, write.value)
        except Conflict as conflict:
            if relevant:
                where = ".".join(write.path) or "the root"
                diagnostics.append(Diagnostic(index, label, f"{write.method} at {where}: {conflict.reason}"))
            continue
        effect = _effect(write, before, target) if relevant else None
        if effect == "reset":
            sources = [index]
        elif effect == "add":
            sources.append(index)
    value = get_path(root, target)
    found_sources = tuple(sorted(set(sources))) if value is not MISSING else ()
    return root, PathValue(value, found_sources, tuple(diagnostics))
