"""Errors are data: small frozen exceptions that say what went wrong and where."""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Any, TypeVar

E = TypeVar("E", bound=BaseException)


def _error_data(cls: type[E]) -> type[E]:
    """Let Python itself still set `__traceback__`, `__cause__` and `__notes__` on a frozen error.

    A frozen dataclass refuses every attribute, and contextlib, `raise ... from` inside generators and
    `add_note` assign those; the fields stay frozen. Also pickles by its fields (for other processes).
    """
    frozen = cls.__setattr__

    def __setattr__(self: E, name: str, value: Any) -> None:
        if name.startswith("__") and name.endswith("__"):
            object.__setattr__(self, name, value)
        else:
            frozen(self, name, value)

    def __reduce__(self: Any) -> tuple[type[E], tuple[Any, ...]]:
        return cls, astuple(self)

    cls.__setattr__ = __setattr__  # type: ignore[assignment,method-assign]
    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls


@_error_data
@dataclass(frozen=True)
class ExpressionError(ValueError):
    """A malformed `†` expression; `position` is the 0-based offset of the problem in `expression`."""

    expression: str
    position: int
    reason: str

    def __str__(self) -> str:
        caret = " " * self.position + "^"
        return f"{self.reason} at position {self.position}\n  {self.expression}\n  {caret}"


@_error_data
@dataclass(frozen=True)
class DocumentError(ValueError):
    """A document that cannot be loaded; names the file and, where known, line, column or message index."""

    path: str
    reason: str
    line: int | None = None
    column: int | None = None
    message_index: int | None = None

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.message_index is not None:
            where += f": message {self.message_index}"
        return f"{where}: {self.reason}"
