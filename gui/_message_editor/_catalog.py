"""What a document offers to pick from while authoring: its tools, and the `†` references something writes.

`catalog_of` reads the whole document at once. `Catalogs` is the window's: the tools and instances at once (the
context keeps them), the written paths of a big document read a slice per turn of the event loop (a second of
work at 100,000 messages), the last ones read serving meanwhile; `changed` says when new ones are in."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from contextdeck.engine import (
    Context,
    Messages,
    ToolDefinition,
    WrittenPaths,
    instances_of,
    tool_definitions,
    written_paths,
)

from .._engine_signals import connect_all
from .._slices import slices

MAX_DEPTH = 4  # references offered down to †kind.a.b.c.d
MAX_REFERENCES = 5000  # a huge document offers its first references, not a list nobody scrolls


@dataclass(frozen=True)
class Catalog:
    """Tools by name, the tree of written paths (engine `written_paths`), the references it holds, and the
    instances the document's data messages name (`_instance`, in order of first appearance)."""

    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    written: dict[str, Any] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    instances: tuple[str, ...] = ()


def _walk(prefix: str, node: Any, depth: int) -> Iterator[str]:
    yield prefix
    if isinstance(node, dict) and depth < MAX_DEPTH:
        for key, child in node.items():
            yield from _walk(f"{prefix}.{key}", child, depth + 1)


SLICED_FROM = 5_000  # messages: a smaller document's written paths are read at once (a few milliseconds)
SLICE_S = 0.004  # GUI-thread CPU per slice
STEP = 64  # messages read between two looks at the clock


def catalog_of(context: Messages) -> Catalog:
    """The catalog of `context` as it is now."""
    return _catalog(context, written_paths(context))


def _catalog(context: Messages, written: dict[str, Any]) -> Catalog:
    return Catalog(tool_definitions(context), written, _references(written), tuple(instances_of(context)[0]))


def _references(written: dict[str, Any]) -> tuple[str, ...]:
    references: list[str] = []
    for kind, node in written.items():
        for reference in _walk(f"†{kind}", node, 0):
            references.append(reference)
            if len(references) >= MAX_REFERENCES:
                break
    return tuple(references)


class Catalogs(QObject):
    """The open document's catalog, for the editor's plan form and the watch box (see the module's docstring)."""

    changed = Signal()  # the written paths of the document as it is now are in

    def __init__(self, context: Callable[[], Context], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._followed: Context | None = None
        self._written: dict[str, Any] = {}  # the last written paths read (of an older version, while stale)
        self._references: tuple[str, ...] = ()
        self._stale = True
        self._reading: WrittenPaths | None = None

    def current(self) -> Catalog:
        """The tools and instances as they are now; the written paths too, or the last ones read while a big
        document's are being read again."""
        context = self._follow()
        if self._stale and self._reading is None:
            if len(context) < SLICED_FROM:
                self._done(written_paths(context))
            else:
                self._reading = WrittenPaths(context)
                slices().start(self._read)
        return Catalog(tool_definitions(context), self._written, self._references, tuple(instances_of(context)[0]))

    @property
    def reading(self) -> bool:
        """Whether the written paths are being read (a slice at a time)."""
        return self._reading is not None

    def _follow(self) -> Context:
        context = self._context()
        if context is not self._followed:
            if self._followed is not None:
                for signal in _edits(self._followed):
                    signal.disconnect(self._edited)
            connect_all((signal, self._edited) for signal in _edits(context))
            self._followed = context
            self._written, self._references = {}, ()
            self._edited()
        return context

    def _edited(self, *_: object) -> None:
        self._stale = True
        if self._reading is not None and self._followed is not None:  # read again from the start
            self._reading = WrittenPaths(self._followed)

    def _read(self) -> None:
        reading = self._reading
        if reading is None:
            return
        if reading.done:  # in a slice of its own: the references walked; the plan form told in the next
            self._take(reading.kinds)
            slices().start(self._announce)
            return
        deadline = time.thread_time() + SLICE_S
        reading.advance(STEP)
        while not reading.done and time.thread_time() < deadline:
            reading.advance(STEP)
        slices().start(self._read)

    def _announce(self) -> None:
        # A slice of its own: the plan form's completions and problems, after the slice that walked the references.
        # Still `reading` until then, so that once it is not the plan form has the paths read.
        if self._reading is not None and not self._reading.done:  # an edit meanwhile: read again
            slices().start(self._read)
        elif self._reading is not None:
            self._stale, self._reading = False, None
            self.changed.emit()

    def _take(self, written: dict[str, Any]) -> None:
        self._written, self._references = written, _references(written)

    def _done(self, written: dict[str, Any]) -> None:
        self._take(written)
        self._stale, self._reading = False, None


def _edits(context: Context) -> tuple[Any, ...]:
    return context.inserted, context.removed, context.moved, context.replaced
