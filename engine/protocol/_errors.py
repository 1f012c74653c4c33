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
        return self.with_caret_at(self.position)

    def with_caret_at(self, column: int) -> str:
        """The message with the expression and a caret `column` columns in: where the expression, as it is shown,
        puts its character at `position` (a terminal may show a character as an escape of several columns)."""
        return f"{self.reason} at position {self.position}\n  {self.expression}\n  {' ' * column}^"


@frozen
class DocumentError(ValueError):
    """A document that cannot be loaded; names the file and, where known, line, column or message index."""

    path: str
    reason: str
    line: int | None = None
    column: int | None = None
    message_index: int | None = None

    def __str__(self) -> str:
        where = file_place(self.path, self.line, self.column)
        if self.message_index is not None:
            where += f": message {self.message_index}"
        return f"{where}: {self.reason}"


def file_place(path: str, line: int | None = None, column: int | None = None) -> str:
    """A place in a file's text as every command says it, compilers' way: `doc.json:3:16`, `log.jsonl:7`."""
    if line is None:
        return path
    return f"{path}:{line}" if column is None else f"{path}:{line}:{column}"


@frozen
class ContentError(ValueError):
    """A value a document cannot hold, because it could not be saved and opened again (a cycle, nesting past
    the limit, a huge integer, NaN): refused at the edit, so that a save never fails. `path` is the JSON path
    in the message (`$.data.total`)."""

    message_index: int
    path: str
    reason: str

    def __str__(self) -> str:
        return f"message {self.message_index}: {self.path}: {self.reason}"


def describe_exception(error: BaseException) -> str:
    """`str(error)`, or its class name when it has no message or its message cannot be made (a `__str__`
    that raises): an error is always said in words, never a second traceback."""
    try:
        text = str(error)
    except Exception:
        return f"{type(error).__name__} (its message cannot be printed)"
    return text or type(error).__name__
