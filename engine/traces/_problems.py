"""What goes wrong reading a trace, said as data: the file, where in it (line, message, span), and why."""

from __future__ import annotations

from attrs import field, frozen

from ..protocol._errors import file_place


@frozen(slots=False)
class Placed:
    """A fault or a warning of an import: the file, where in it (`where` names the record: `line 4`, `line 4:
    message 2`, `span 1f2e…`; `line`, `column`: a place in the file's text) and why, said in one form (`said`)."""

    path: str
    reason: str
    where: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return said(self.path, self.reason, self.where, self.line, self.column)


@frozen
class TraceError(Placed, ValueError):
    """Input that cannot be imported; a place in the file's text is said as every command says one, `run.jsonl:4:41:
    Expecting value`."""


def said(path: str, reason: str, where: str | None = None, line: int | None = None, column: int | None = None) -> str:
    """A fault or a warning in words, in one form: the file and its line (`trace.jsonl:2`), the record (`span 1f2e…
    of trace 5b8e…`, `line 4: message 2`), then what."""
    place = file_place(path, line, column)
    return f"{place}: {where}: {reason}" if where else f"{place}: {reason}"


@frozen
class Warned(Placed):
    """What an import leaves out or reads other than as written; `trace`: the trace it is of (only that trace's
    contexts carry it), None for the file's (every context carries it)."""

    trace: str | None = field(default=None, kw_only=True)


@frozen
class Located(ValueError):
    """A problem found inside one exchange, before the file it came from is known; `where` as in TraceError."""

    reason: str
    where: str | None = None

    def within(self, path: str, outer: str | None = None) -> TraceError:
        parts = [part for part in (outer, self.where) if part]
        return TraceError(path, self.reason, ": ".join(parts) or None)


def inside(where: str, part: str) -> str:
    """A place within a place: `line 3` and `message 2` give `line 3: message 2`."""
    return f"{where}: {part}" if where else part
