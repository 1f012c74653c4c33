"""Renumbering message indices after an edit, without folding anything again.

An insert, a remove or a move changes the indices of a contiguous range of messages by one; results
that name only messages outside the range stay as they are, and the ones inside are shifted with
slices of sorted tuples (the work is in C, not per index in Python).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, replace

from ._fold import PathValue
from ._resolution import Diagnostic, Indices, Resolution


@dataclass(frozen=True)
class Shift:
    """Indices in `low <= i < high` become `i + delta`; `low` is also the first index that may change.

    The moved or removed message itself never appears in a result that is shifted: a result that names
    it is folded again instead.
    """

    low: int
    high: int
    delta: int

    @classmethod
    def insert(cls, index: int) -> Shift:
        return cls(index, 1 << 62, 1)

    @classmethod
    def remove(cls, index: int) -> Shift:
        return cls(index + 1, 1 << 62, -1)

    @classmethod
    def move(cls, src: int, dst: int) -> Shift:
        return cls(src + 1, dst + 1, -1) if src < dst else cls(dst, src, 1)

    def indices(self, indices: tuple[int, ...]) -> Indices:
        """Sorted indices, renumbered (still sorted: the shifted range cannot cross the others)."""
        start = bisect_left(indices, self.low)
        if start == len(indices):
            return indices if isinstance(indices, Indices) else Indices(indices)
        end = bisect_left(indices, self.high, start)
        return Indices([*indices[:start], *map(self.delta.__add__, indices[start:end]), *indices[end:]])

    def index(self, index: int) -> int:
        return index + self.delta if self.low <= index < self.high else index

    def diagnostics(self, diagnostics: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
        return tuple(
            d if d.message_index is None else replace(d, message_index=self.index(d.message_index))
            for d in diagnostics
        )


def shift_value(value: PathValue, shift: Shift) -> PathValue:
    diagnostics = shift.diagnostics(value.diagnostics) if value.diagnostics else ()
    return PathValue(value.value, shift.indices(value.sources), diagnostics)


def shift_resolution(resolution: Resolution, shift: Shift) -> Resolution:
    diagnostics = shift.diagnostics(resolution.diagnostics) if resolution.diagnostics else ()
    sources = shift.indices(resolution.sources)
    found, value = resolution.found, resolution.value
    return Resolution(resolution.expression, found, value, sources, diagnostics, resolution.missing)


def highest(value: PathValue | Resolution) -> int:
    """The highest message index a result names (-1 for none)."""
    top = value.sources[-1] if value.sources else -1
    for diagnostic in value.diagnostics:
        if diagnostic.message_index is not None and diagnostic.message_index > top:
            top = diagnostic.message_index
    return top

