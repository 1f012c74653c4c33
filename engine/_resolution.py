"""What a resolution returns (SPEC 4.8): found or not, the value, where it came from, what went wrong."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Indices(tuple[int, ...]):
    """Message indices in ascending order; compares equal to a list of the same indices too.

    A renumbered result may be a lazy subclass (`_shift.Shifted`) that works out its indices only when
    they are read; `_plain` and `_last` let the engine ask about them without that.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return list(self._plain()) == other
        if isinstance(other, Indices):
            other = other._plain()
        return tuple.__eq__(self._plain(), other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return tuple.__hash__(self._plain())

    def _plain(self) -> tuple[int, ...]:
        """The indices as a tuple (this one: it holds them itself)."""
        return self

    def _last(self) -> int:
        """The highest index (-1 for none)."""
        return self[-1] if self else -1


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


@dataclass(frozen=True, slots=True)
class Resolution:
    """The result of resolving an expression: `value` is None when not `found`.

    `missing` names, for each alternative that was not found, its first reference that was not found.
    """

    expression: str
    found: bool
    value: Any = None
    sources: Indices = field(default_factory=Indices)
    diagnostics: tuple[Diagnostic, ...] = ()
    missing: tuple[str, ...] = ()

    def with_sources(self, sources: Indices) -> Resolution:
        """This resolution with other sources: the same messages, renumbered by an edit elsewhere.

        Made by setting the slots directly: the dataclass's frozen `__init__` costs twice as much, and a
        middle edit renumbers the sources of about every watch.
        """
        twin = _new(Resolution)
        _set_expression(twin, self.expression)
        _set_found(twin, self.found)
        _set_value(twin, self.value)
        _set_sources(twin, sources)
        _set_diagnostics(twin, self.diagnostics)
        _set_missing(twin, self.missing)
        return twin

    def same_result(self, other: Resolution | None) -> bool:
        """Whether a watcher would see a change: found, value or sources differ."""
        return (
            other is not None
            and self.found == other.found
            and self.sources == other.sources
            and same_json(self.value, other.value)
        )


_new = object.__new__
_set_expression, _set_found, _set_value, _set_sources, _set_diagnostics, _set_missing = (
    Resolution.__dict__[name].__set__ for name in ("expression", "found", "value", "sources", "diagnostics", "missing")
)


def same_json(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0 but True != 1, and key order does not matter.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b if not isinstance(a, int | float) else a == b
