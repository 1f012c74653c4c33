"""The fold of SPEC 4: the value of one identity's path, computed from its writes in order.

This is the definition every faster strategy must agree with; `Context` calls it over the writes of
one kind (global layer, then the instance layer).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..protocol._messages import MISSING, Path, Write, get_path
from ..protocol._methods import WRITE_METHODS, Conflict, Owned, write_at, write_below
from ._resolution import Diagnostic

TOO_DEEP = "the data is nested too deeply to merge"


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


def _effect(write: Write, root: Any, target: Path) -> str | None:
    """How a write changes the value at `target`: "reset" (replaced it), "add" (changed part of it) or None.

    A message is a source of the target's value when it wrote that value or any part of it since the
    value was last replaced as a whole (see docs/format.md, "Sources"). `root` is the value before.
    """
    path = write.path
    size = len(path)
    if target[:size] != path:  # (compared in place: every fold asks this of every write it steps)
        if path[: len(target)] != target:
            return None
        # A write below the target changes part of it, unless the target was not a container and is
        # replaced by the objects the write creates on its way down.
        return "add" if isinstance(get_path(root, target), dict | list) else "reset"
    return WRITE_METHODS[write.method].effect(get_path(root, path) if size else root, write.value, target[size:])


def fold(
    writes: Iterable[tuple[int, Write]], target: Path, label: str, *, with_sources: bool = True
) -> tuple[Any, PathValue]:
    """Apply `writes` (index, write) in order; return the whole value and the value at `target`.

    `label` names the target in diagnostics (for instance `†state.user`). Without `with_sources`, the value at
    `target` has no sources (a check of the values and the problems only: it spares each write's effect, and
    writes into every container it made, `Owned`, where a fold with sources copies all but the root's top: an array
    pushed onto n times then costs O(n), not O(n²)).
    """
    root: Any = MISSING
    made = False  # `root` is an object this fold made (never a message's own value): written in place at its top
    owned = None if with_sources else Owned()  # (each write's effect reads the root as it was before the write)
    sources: list[int] = []
    diagnostics: list[Diagnostic] = []
    for index, write in writes:
        relevant = not target or _is_prefix(write.path, target) or _is_prefix(target, write.path)
        if write.problem is not None:
            diagnostics.append(Diagnostic(index, label, write.problem))
            continue
        if owned is not None and made and len(write.path) == 1 and write.method == "set":
            # What `write_at` does to the object the fold made (it owns it), without its calls: a run's outputs
            # each set one key of their kind, and nothing can conflict with it.
            root[write.path[0]] = write.value
            continue
        # What `write_at` gives, without copying every key of an object the fold made itself: n writes of n
        # keys cost O(n), not O(n²).
        in_place = made and bool(write.path) and owned is None
        try:
            if in_place:
                below = write_below(root.get(write.path[0], MISSING), write.path, write.method, write.value)
            else:
                updated = write_at(root, write.path, write.method, write.value, owned)
        except Conflict as conflict:
            if relevant:
                where = ".".join(write.path) or "the root"
                diagnostics.append(Diagnostic(index, label, f"{write.method} at {where}: {conflict.reason}"))
            continue
        except RecursionError:
            diagnostics.append(Diagnostic(index, label, TOO_DEEP))
            continue
        effect = _effect(write, root, target) if relevant and with_sources else None
        if in_place:
            root[write.path[0]] = below
        else:
            root, made = updated, bool(write.path) and isinstance(updated, dict)
        if effect == "reset":
            sources = [index]
        elif effect == "add":
            sources.append(index)
    value = get_path(root, target)
    found_sources = tuple(sorted(set(sources))) if value is not MISSING else ()
    return root, PathValue(value, found_sources, tuple(diagnostics))
