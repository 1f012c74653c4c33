"""What goes wrong reading a trace, said as data: the file, where in it (line, message, span), and why."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple

from attrs import field, frozen

from ..protocol._errors import file_place

# Called as an import reads each unit of its input (a line of a JSON Lines file, a span, an exchange): an exception it
# raises ends the import there (the window's Cancel stops a worker's read so, gui/_traces_ui.py).
Step = Callable[[], None]


def go_on() -> None:
    """The step of an import nobody stops."""


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

    def within(self, path: str, outer: str | None = None, line: int | None = None) -> TraceError:
        parts = [part for part in (outer, self.where) if part]
        return TraceError(path, self.reason, ": ".join(parts) or None, line)


def inside(where: str, part: str) -> str:
    """A place within a place: `line 3` and `message 2` give `line 3: message 2`."""
    return f"{where}: {part}" if where else part


# A span as a place names it: by its id in hex, or as its id was written (JSON text) when that is no valid id
_SPAN = re.compile(r'\bspan ([0-9a-f]{16}\b|"(?:[^"\\]|\\.)*")')


# A trace's spans by id: the file and the line (of a JSON Lines file) each was read from
SpanPlaces = Mapping[str, tuple[str, int | None]]
_SPAN_FIRST = re.compile(r"span ([0-9a-f]{16})(?=: |$)")


def _span_place(where: str, places: SpanPlaces) -> tuple[str, int | None] | None:
    found = _SPAN_FIRST.match(where)
    return places.get(found[1]) if found else None


def fault_at_span(problem: Located, path: str, places: SpanPlaces) -> TraceError:
    """A fault found in an exchange of a span (`span 1f2e…: message 2`), said at that span's own file and line;
    else in `path`."""
    file, line = _span_place(problem.where or "", places) or (path, None)
    return problem.within(file, line=line)


def warning_at_span(warning: str, path: str, places: SpanPlaces) -> Placed | str:
    """An exchange's warning, its place first (`span 1f2e…: message 2: ...`), said at that span's own file and line;
    else in `path`."""
    found = _span_place(warning, places)
    if found is None:
        return said(path, warning)
    where, _, reason = warning.partition(": ")
    return Warned(found[0], reason, where, found[1])


class Said(NamedTuple):
    """A warning in words (`text`), with what it says of no span in particular (`alike`: its words but for the span it
    names and the place in the file before it; the text itself when it names none) and that span's id."""

    text: str
    alike: Hashable
    span: str | None = None


def said_of(warning: Placed | str) -> Said:
    text = str(warning)
    where = (warning.where or "") if isinstance(warning, Placed) else text
    found = _SPAN.search(where)
    if found is None:
        return Said(text, text)
    if isinstance(warning, Placed):  # (its line, its column and its request in the file are the span's own)
        return Said(text, (warning.path, where[found.end():], warning.reason), found[1])
    return Said(text, (where[:found.start()], where[found.end():]), found[1])


def grouped(warnings: Iterable[Said]) -> list[str]:
    """The warnings, each said once, and those alike but for the span they name said once with how many more and the
    first few of their spans: a file of thousands of bad spans says each problem once, not once per span."""
    groups: dict[Hashable, tuple[str, list[str]]] = {}
    seen: set[str] = set()
    for text, alike, span in warnings:
        if text not in seen:
            seen.add(text)
            groups.setdefault(alike, (text, []))[1].append(span or "")
    return [text + (f" (and {len(spans) - 1} more span(s) alike: {few(spans[1:])})" if len(spans) > 1 else "")
            for text, spans in groups.values()]


def few(ids: Sequence[str], shown: int = 3) -> str:
    """The first few ids, and an ellipsis when there are more."""
    return ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")
