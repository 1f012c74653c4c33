"""Errors are data: small frozen exceptions (attrs `@frozen`) that say what went wrong and where."""

from __future__ import annotations

from attrs import frozen

# attrs, not frozen dataclasses: an attrs exception class stays frozen in its fields but lets Python set
# `__traceback__`, `__context__`, `__cause__` and `__notes__` (contextlib, `raise ... from`, `add_note`
# do), keeps its fields in `args` (so it pickles), and compares by identity like every exception.


@frozen
class ExpressionError(ValueError):
    """A malformed `†` expression; `position` is the 0-based offset of the problem in `expression`."""

    expression: str
    position: int
    reason: str

    def __str__(self) -> str:
        caret = " " * self.position + "^"
        return f"{self.reason} at position {self.position}\n  {self.expression}\n  {caret}"


@frozen
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
