"""Parsing a document one message at a time, so that a worker thread never holds the GIL for long.

One `orjson.loads` of a large file is a single C call that keeps the GIL for its whole length
(seconds for a file of a hundred megabytes): the GUI thread, which needs the GIL to run any Python slot,
freezes that long although the parse is "off the GUI thread". Here each message is its own short
call (the standard library's C scanner), with progress and a cancel check between messages.

The engine stays the judge: on any failure the engine's `parse_document` reads the bytes again
and raises its own `DocumentError` (file, line, column, message index), so errors read the same
everywhere. Where the stepwise reader accepts a file, the result equals the engine's (the same
standard library decides, NaN and Infinity are refused as the engine does).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from contextdeck.engine import (
    JSON_DECODER,
    Context,
    Document,
    Shape,
    checked_messages,
    json_nests_within,
    json_parse,
    parse_document,
)

Report = Callable[[float], None]  # the fraction of the parse done, 0..1
STEP = 512  # messages between progress reports and cancel checks
WINDOW = 1 << 16  # characters the window holds ahead of where the reader is, at least
PARSED = 0.7  # the share of the work that is parsing; building the context is the rest

_SPACE = re.compile(r"[ \t\n\r]*")


class Cancelled(Exception):
    """The load was cancelled between two messages."""


class _GiveUp(Exception):
    """Not a shape the stepwise reader takes on: the engine's parser decides."""


_DECODER = JSON_DECODER  # the engine's own rules: NaN, Infinity and float overflow refused


def parse_stepwise(raw: bytes | list[bytes], name: str, *, jsonl: bool, path: Path | None, report: Report,
                   cancelled: Callable[[], bool], parts: list[str] | None = None) -> Document:
    """The document in `raw`, as `parse_document` would give it; raises `DocumentError` or `Cancelled`.

    `raw` may be the list of chunks read (joined only when needed: one large join keeps the GIL);
    `parts` is `raw` already decoded, a chunk at a time, when the caller decoded it piecemeal. The text is
    read through a window over the parts, never joined whole: joining 100 MB of text (widened where a part
    holds a character past Latin-1) is one long call.
    """
    reader = _Reader(raw if isinstance(raw, list) else [raw], name, path, report, cancelled, parts)
    try:
        return reader.document(jsonl)
    except Cancelled:
        raise
    except Exception:  # malformed, or a corner the reader does not take: the engine reads it and words the error
        if cancelled():
            raise Cancelled from None
        return parse_document(reader.raw, name, jsonl=jsonl, path=path)


class _Reader:
    def __init__(self, chunks: list[bytes], name: str, path: Path | None, report: Report,
                 cancelled: Callable[[], bool], parts: list[str] | None) -> None:
        self.chunks = chunks
        self.name = name
        self.path = path
        self.report = report
        self.cancelled = cancelled
        self.parts = deque(parts) if parts is not None else None
        self.text = ""  # the window: the text from `base` on, as far as the parts taken so far
        self.base = 0
        self.total = 1

    @property
    def raw(self) -> bytes:
        if len(self.chunks) != 1:
            self.chunks = [b"".join(self.chunks)]
        return self.chunks[0]

    def document(self, jsonl: bool) -> Document:
        if jsonl:
            lines, values = self.lines()
            return Document(self.context(checked_messages(values, self.name, lines)), Shape.JSONL, path=self.path)
        if self.parts is None:
            self.parts = deque([self.raw.decode("utf-8")])
        self.total = max(sum(map(len, self.parts)), 1)
        start = self.space(0)
        if self.text.startswith("[", start):
            items, end = self.array(start, outer=1)
            self.after(end)
            return Document(self.context(checked_messages(items, self.name)), Shape.ARRAY, path=self.path)
        if not self.text.startswith("{", start):
            raise _GiveUp("not an array or an object")
        value, end = self.object(start)
        self.after(end)
        if not isinstance(value.get("context"), list):
            raise _GiveUp("no context array")
        return Document(self.context(checked_messages(value["context"], self.name)), Shape.REQUEST,
                        schema=value.get("schema"), solution=value.get("solution"), path=self.path, envelope=value)

    def after(self, end: int) -> None:
        if self.space(end) != len(self.text) or self.parts:
            raise _GiveUp("text after the document")

    # -- steps ---------------------------------------------------------------------------------------

    def tick(self, fraction: float) -> None:
        if self.cancelled():
            raise Cancelled
        self.report(fraction)

    def context(self, messages: list[dict[str, Any]]) -> Context:
        return Context(self.counted(messages))

    def counted(self, messages: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        total = max(len(messages), 1)
        for index, message in enumerate(messages):
            if index % STEP == 0:
                self.tick(PARSED + (1 - PARSED) * index / total)
            yield message

    def lines(self) -> tuple[list[int], list[Any]]:
        """JSON Lines: each non-blank line is one value (as the engine reads them)."""
        numbers: list[int] = []
        values: list[Any] = []
        total, done = max(sum(map(len, self.chunks)), 1), 0
        for number, line in enumerate(self.split_lines(), start=1):
            done += len(line) + 1
            if number % STEP == 0:
                self.tick(PARSED * done / total)
            if line.strip():
                values.append(json_parse(line))
                numbers.append(number)
        return numbers, values

    def split_lines(self) -> Iterator[bytes]:
        """`raw.split(b"\\n")`, a chunk at a time: the whole file is never joined or split in one call."""
        rest = b""
        for chunk in self.chunks:
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
        yield rest

    # -- JSON, one value at a time, through the window -----------------------------------------------

    def slide(self, index: int, least: int) -> int:
        """Drop the window's text before `index` and take parts until `least` characters follow it (or no
        part is left); `index`'s place in the new window, 0."""
        kept = [self.text[index:]]
        size = len(kept[0])
        while size < least and self.parts:
            part = self.parts.popleft()
            kept.append(part)
            size += len(part)
        self.base += index
        self.text = "".join(kept)
        return 0

    def space(self, index: int) -> int:
        """The first index at or after `index` past whitespace; a character stands there unless the text ended."""
        while True:
            match = _SPACE.match(self.text, index)
            assert match is not None  # the pattern matches the empty string
            if match.end() < len(self.text) or not self.parts:
                return match.end()
            index = self.slide(match.end(), WINDOW)

    def value(self, index: int) -> tuple[Any, int]:
        """The value at `index`; when the window ends inside it, a window twice as long is tried."""
        if len(self.text) - index < WINDOW and self.parts:
            index = self.slide(index, WINDOW)
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, index)
            except ValueError:
                if not self.parts:
                    raise
            else:
                if end < len(self.text) or not self.parts:  # a number cut at the window's end reads whole
                    return value, end
            index = self.slide(index, 2 * (len(self.text) - index))

    def done(self, index: int) -> float:
        return (self.base + index) / self.total

    def array(self, index: int, outer: int) -> tuple[list[Any], int]:
        """The array at `index` (a `[`), an element per call: the GIL is free between elements.

        `outer` counts the containers around each element, for the engine's limit on nesting.
        """
        items: list[Any] = []
        index = self.space(index + 1)
        if self.text.startswith("]", index):
            return items, index + 1
        while True:
            item, index = self.value(index)
            if not json_nests_within(item, outer):
                raise _GiveUp("nested deeper than the engine reads")
            items.append(item)
            if len(items) % STEP == 0:
                self.tick(PARSED * self.done(index))
            index = self.space(index)
            if self.text.startswith(",", index):
                index = self.space(index + 1)
            elif self.text.startswith("]", index):
                return items, index + 1
            else:
                raise _GiveUp("expected , or ]")

    def object(self, index: int) -> tuple[dict[str, Any], int]:
        """A saved request: its members one by one, the `context` array element by element."""
        result: dict[str, Any] = {}
        index = self.space(index + 1)
        if self.text.startswith("}", index):
            return result, index + 1
        while True:
            if not self.text.startswith('"', index):
                raise _GiveUp("expected a key")
            key, index = self.value(index)
            index = self.space(index)
            if not self.text.startswith(":", index):
                raise _GiveUp("expected :")
            index = self.space(index + 1)
            if key == "context" and self.text.startswith("[", index):
                value: Any
                value, index = self.array(index, outer=2)
            else:
                value, index = self.value(index)
                if not json_nests_within(value, 1):
                    raise _GiveUp("nested deeper than the engine reads")
            result[key] = value
            index = self.space(index)
            if self.text.startswith(",", index):
                index = self.space(index + 1)
            elif self.text.startswith("}", index):
                return result, index + 1
            else:
                raise _GiveUp("expected , or }")

