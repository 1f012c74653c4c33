"""Documents (SPEC 1): a bare array, a saved request, or JSON Lines; saved back in the same shape."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..protocol._errors import ContentError, DocumentError
from ..protocol._messages import message_problem
from ..protocol._values import with_article
from . import _json
from ._context import Context
from ._files import write_atomically


class Shape(StrEnum):
    ARRAY = "array"
    REQUEST = "request"
    JSONL = "jsonl"


@dataclass
class Document:
    """A loaded document: its `context`, the request's `schema` and `solution`, and how to save it."""

    context: Context
    shape: Shape = Shape.ARRAY
    schema: Any = None
    solution: Any = None
    path: Path | None = None
    # The saved request's own object, so that keys beyond `context` keep their values and order.
    envelope: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Any:
        """The document as one JSON value, in its shape (JSON Lines: the list of messages)."""
        messages = self.context.messages
        if self.shape is not Shape.REQUEST:
            return messages
        result = dict(self.envelope)
        result["context"] = messages
        for key, value in (("schema", self.schema), ("solution", self.solution)):
            if value is not None or key in result:
                result[key] = value
        return result

    def dumps(self) -> str:
        return "".join(self.pieces())

    def pieces(self, *, indent: bool = True) -> Iterator[str]:
        """The document's text in pieces, a message or a request key at a time, that join into `dumps`.

        One serialisation of a large document is a single call that keeps the interpreter lock for as long
        as it runs; in pieces, a writer on another thread leaves the window's thread room between them.
        Without `indent` (recovery files) each message is one compact line. Raises ValueError if a value
        cannot be written.
        """
        messages = self.context.messages
        if self.shape is Shape.JSONL:
            for message in messages:
                yield _json.dumps(message, indent=False) + "\n"
            return
        if self.shape is Shape.ARRAY:
            yield from _array(messages, "", indent=indent)
            yield "\n"
            return
        yield "{"
        for number, (key, value) in enumerate(self.to_json().items()):
            yield ("," if number else "") + ("\n  " if indent else "\n") + _json.dumps(key, indent=False) + ": "
            if key == "context":
                yield from _array(messages, "  ", indent=indent)
            else:
                yield _nested(value, "  ", indent=indent)
        yield "\n}\n"

    def save(self, path: str | os.PathLike[str] | None = None) -> None:
        """Write atomically: a crash leaves the old file or the new one, never a mix."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("the document has no path; give one")
        write_atomically(target, (piece.encode("utf-8") for piece in self.pieces()))
        self.path = target


def _array(messages: list[Any], margin: str, *, indent: bool) -> Iterator[str]:
    """A list of messages inside a document whose lines start with `margin`, as `_json.dumps` lays it out."""
    if not messages:
        yield "[]"
        return
    inner = margin + "  " if indent else ""
    for number, message in enumerate(messages):
        yield ("[\n" if not number else ",\n") + inner + _nested(message, inner, indent=indent)
    yield "\n" + (margin if indent else "") + "]"


def _nested(value: Any, margin: str, *, indent: bool) -> str:
    """`value` serialised to stand after `margin`: its own lines shifted right by it (JSON strings hold no raw
    line break, so every line break is layout)."""
    if not indent:
        return _json.dumps(value, indent=False)
    return _json.dumps(value).replace("\n", "\n" + margin)


def fork(document: Document, at: int) -> Document:
    """A new document with the messages up to and including `at`, in the same shape, with the same schema,
    solution and request keys, and no path: a branch to try an alternative from that point.

    Nothing is run: the outputs before `at` are its run record, so the calls that ran stay done in it.
    A final output without calls (a model's last turn, an imported run's last reply) answered the whole
    context: a fork that leaves messages out has not reached it, so it has no solution.
    """
    size = len(document.context)
    if not 0 <= at < size:
        raise IndexError(f"cannot fork at message {at}: the document has {size} messages")
    messages = document.context.messages[: at + 1]
    solution, envelope = copy.deepcopy(document.solution), copy.deepcopy(document.envelope)
    if at + 1 < size and isinstance(solution, dict) and "calls" not in solution \
            and solution.get("output") is not None:
        solution = None
        envelope.pop("solution", None)
    return Document(Context(copy.deepcopy(messages)), document.shape, copy.deepcopy(document.schema),
                    solution, None, envelope)


def load_document(path: str | os.PathLike[str]) -> Document:
    """Load a document; raise `DocumentError` naming the file and line, column or message index."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise DocumentError(str(file), error.strerror or str(error)) from None
    return parse_document(raw, str(file), jsonl=file.suffix.lower() == ".jsonl", path=file)


def parse_document(raw: bytes, name: str = "<document>", *, jsonl: bool = False, path: Path | None = None) -> Document:
    """Parse the bytes of a document (see `load_document`), the collector paused (`_json.building`)."""
    with _json.building():
        return _parsed_document(raw, name, jsonl=jsonl, path=path)


def _parsed_document(raw: bytes, name: str, *, jsonl: bool, path: Path | None) -> Document:
    if jsonl:
        lines, values = jsonl_lines(raw, name)
        return Document(_checked_context(values, name, raw, lines), Shape.JSONL, path=path)
    value = parsed_file(raw, name)
    if isinstance(value, list):
        return Document(_checked_context(value, name, raw), Shape.ARRAY, path=path)
    if isinstance(value, dict):
        if "context" not in value:
            raise DocumentError(name, "a saved request needs a 'context' array of messages" + imported_instead(value))
        if not isinstance(value["context"], list):
            raise DocumentError(name, "'context' must be an array of messages")
        return Document(
            Context(checked_messages(value["context"], name)),
            Shape.REQUEST,
            schema=value.get("schema"),
            solution=value.get("solution"),
            path=path,
            envelope=value,
        )
    raise DocumentError(name, "expected an array of messages or an object with 'context'")


def _checked_context(values: list[Any], name: str, raw: bytes, lines: list[int] | None = None) -> Context:
    """The messages of a bare array (`lines` None) or of JSON Lines as a context. Every document can be saved as a
    request, so a message must fit `MAX_DEPTH` levels inside `{"context": [...]}`: a level more than a bare array puts
    around it, two more than a line. One the file's own depth let pass, and the context refuses, is a `DocumentError`
    at the bracket that crosses that limit."""
    try:
        return Context(checked_messages(values, name, lines))
    except ContentError as refused:
        index = refused.message_index
        if lines is None:
            outer, text = 1, raw.decode("utf-8", errors="replace")
        else:
            outer, text = _json.MESSAGE_OUTER, raw.split(b"\n")[lines[index] - 1].decode("utf-8", errors="replace")
        line, column = _json.crossing(text, _json.MAX_DEPTH - outer)
        more = "a level" if outer == 1 else f"{outer} levels"
        reason = (f"{refused.reason} once saved as a request ({{\"context\": [...]}} puts {more} around "
                  f"{'the messages' if lines is None else 'a line'})")
        raise DocumentError(name, reason, line if lines is None else lines[index], column,
                            message_index=index) from None


def parsed_file(raw: bytes, name: str, failure: Callable[[str, str, int, int], Exception] = DocumentError) -> Any:
    """A file's one JSON value (a document, a turn, a tool registry); otherwise `failure` (a `DocumentError`
    unless given) made from the file's name, the reason (`file_reason`), the line and the column."""
    try:
        return _json.parse(raw)
    except _json.JSONSyntaxError as error:
        raise failure(name, _json.file_reason(error, raw), error.line, error.column) from None


def jsonl_lines(raw: bytes, name: str, step: Callable[[], None] | None = None) -> tuple[list[int], list[Any]]:
    """The line number and value of every non-blank line of a JSON Lines file (a document, a dataset, an
    experiment's results); a line that is not JSON is a `DocumentError` with its line and column. `step`: called
    before each line is read (an exception it raises stops the reading)."""
    numbers: list[int] = []
    messages: list[Any] = []
    pieces = raw.split(b"\n")
    for number, line in enumerate(pieces, start=1):
        if not line.strip():
            continue
        if step is not None:
            step()
        try:
            messages.append(_json.parse(line))
        except _json.JSONSyntaxError as error:
            last = not any(rest.strip() for rest in pieces[number:])
            reason = _json.file_reason(error, line, last=last, after=_json.LINES_BEFORE if numbers else "")
            raise DocumentError(name, reason, number, error.column) from None
        numbers.append(number)
    return numbers, messages


def checked_messages(values: list[Any], name: str, lines: list[int] | None = None) -> list[dict[str, Any]]:
    """Refuse anything that is not a message object (a string `type`, or a `role`), naming where it is."""
    for index, message in enumerate(values):
        problem = None
        if not isinstance(message, dict):
            problem = f"expected a message object, got {with_article(message)}"
        else:
            problem = message_problem(message)
        if problem is not None:
            line = lines[index] if lines is not None else None
            raise DocumentError(name, problem + imported_instead(message), line=line, message_index=index)
    return values


def imported_instead(value: Any) -> str:
    """What to do with a value that is no document but an agent's trace (an OTLP trace, an OpenAI exchange, or a log
    or array of exchanges at its first), said after the fault: opened, it was told only that it is no document."""
    if not isinstance(value, dict):
        return ""
    if any(key in value for key in ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")):
        what = "an OTLP trace"
    elif "request" in value or "messages" in value:
        what = "an OpenAI exchange"
    else:
        return ""
    return f"; this is {what}, which is imported, not opened (contextdeck import; in the window, File → Import Trace…)"
