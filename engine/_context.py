"""`Context`: the ordered messages of a document, resolution over them, and change notification."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

from psygnal import Signal

from ._edits import Edit
from ._expressions import Expression, Reference, parse_expression
from ._fold import PathValue, fold
from ._messages import MessageInfo, Write, classify
from ._resolution import Diagnostic, Indices, Resolution

Message = dict[str, Any]


class Watch:
    """A live resolution: `current` is the latest, `callback(resolution)` runs when it changes."""

    def __init__(
        self, context: Context, expression: str, callback: Callable[[Resolution], Any], instance: str | None
    ) -> None:
        self.expression = expression
        self.instance = instance
        self._context: Context | None = context
        self._callback = callback
        self.current: Resolution = context.resolve(expression, instance=instance)

    def _refresh(self) -> None:
        if self._context is None:
            return
        fresh = self._context.resolve(self.expression, instance=self.instance)
        if not fresh.same_result(self.current):
            self.current = fresh
            self._callback(fresh)

    def close(self) -> None:
        """Stop watching; the callback is not called again."""
        if self._context is not None:
            self._context._watches.remove(self)
            self._context = None


class Context:
    """The ordered messages of a context.

    Messages are the document's own dicts and are treated as immutable: change one with `replace`.
    Every edit is announced before and after (psygnal signals) so views can follow exactly.
    """

    inserting = Signal(int)
    inserted = Signal(int)
    removing = Signal(int)
    removed = Signal(int)
    moving = Signal(int, int)
    moved = Signal(int, int)
    replacing = Signal(int)
    replaced = Signal(int)

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = []
        self._infos: list[MessageInfo] = []
        self._ids: list[int] = []
        self._next_id = itertools.count(1)
        self._watches: list[Watch] = []
        for message in messages:
            self._messages.append(_checked(message, len(self._messages)))
            self._infos.append(classify(message))
            self._ids.append(next(self._next_id))

    # -- reading -------------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The messages in their current order (a new list; the dicts are the context's own)."""
        return list(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]

    def info(self, index: int) -> MessageInfo:
        """The parsed view of message `index`: form, kind, instance and write."""
        return self._infos[index]

    def id_at(self, index: int) -> int:
        """The stable id of the message at `index`: it survives replace, move and other edits."""
        return self._ids[index]

    def index_of(self, message_id: int) -> int:
        """Where the message with `message_id` is now; raises KeyError when it was removed."""
        try:
            return self._ids.index(message_id)
        except ValueError:
            raise KeyError(message_id) from None

    # -- editing -------------------------------------------------------------------------------

    def apply(self, edit: Edit) -> Edit:
        """Apply an edit command; returns the edit that undoes it."""
        return edit.apply(self)

    def append(self, message: Message) -> None:
        self.insert(len(self._messages), message)

    def insert(self, index: int, message: Message) -> int:
        """Insert as `list.insert` does; returns the index the message now has."""
        index = _clamp(index, len(self._messages))
        message = _checked(message, index)
        self.inserting.emit(index)
        self._messages.insert(index, message)
        self._infos.insert(index, classify(message))
        self._ids.insert(index, next(self._next_id))
        self.inserted.emit(index)
        self._changed()
        return index

    def replace(self, index: int, message: Message) -> None:
        index = self._valid(index)
        message = _checked(message, index)
        self.replacing.emit(index)
        self._messages[index] = message
        self._infos[index] = classify(message)
        self.replaced.emit(index)
        self._changed()

    def remove(self, index: int) -> Message:
        index = self._valid(index)
        self.removing.emit(index)
        message = self._messages.pop(index)
        del self._infos[index]
        del self._ids[index]
        self.removed.emit(index)
        self._changed()
        return message

    def move(self, src: int, dst: int) -> None:
        """Move message `src` so that it is afterwards at index `dst`."""
        src, dst = self._valid(src), self._valid(dst)
        if src == dst:
            return
        self.moving.emit(src, dst)
        self._messages.insert(dst, self._messages.pop(src))
        self._infos.insert(dst, self._infos.pop(src))
        self._ids.insert(dst, self._ids.pop(src))
        self.moved.emit(src, dst)
        self._changed()

    def _valid(self, index: int) -> int:
        size = len(self._messages)
        if not -size <= index < size:
            raise IndexError(f"message index {index} out of range for {size} messages")
        return index % size

    # -- resolving -----------------------------------------------------------------------------

    def resolve(self, expr: str | Expression, instance: str | None = None, at: int | None = None) -> Resolution:
        """Resolve `expr` for `instance` as of the first `at` messages (all when None).

        Raises `ExpressionError` for a malformed expression; never raises for bad data.
        """
        expression = parse_expression(expr) if isinstance(expr, str) else expr
        instance = None if instance is None else str(instance)
        limit = len(self._messages) if at is None else max(0, min(at, len(self._messages)))
        diagnostics: list[Diagnostic] = []
        missing: list[str] = []
        for gate in expression.alternatives:
            values = [self.resolve_reference(ref, instance, limit) for ref in gate]
            for path_value in values:
                diagnostics.extend(d for d in path_value.diagnostics if d not in diagnostics)
            absent = next((ref for ref, v in zip(gate, values, strict=True) if not v.found), None)
            if absent is None:
                sources = sorted({i for v in values for i in v.sources})
                return Resolution(
                    expression.source, True, values[-1].value, Indices(sources), tuple(diagnostics)
                )
            missing.append(str(absent))
        return Resolution(expression.source, False, None, Indices(), tuple(diagnostics), tuple(missing))

    def resolve_reference(self, ref: Reference, instance: str | None, limit: int) -> PathValue:
        """The fold of one reference over the first `limit` messages."""
        return fold(self._writes(ref.kind, instance, limit), ref.path, str(ref))[1]

    def value_of(self, kind: str, instance: str | None = None, at: int | None = None) -> Any:
        """The whole folded value of `kind` (MISSING when nothing of that kind exists)."""
        limit = len(self._messages) if at is None else max(0, min(at, len(self._messages)))
        return fold(self._writes(kind, instance, limit), (), "†" + kind)[0]

    def _writes(self, kind: str, instance: str | None, limit: int) -> list[tuple[int, Write]]:
        global_layer: list[tuple[int, Write]] = []
        instance_layer: list[tuple[int, Write]] = []
        for index in range(limit):
            info = self._infos[index]
            if info.kind != kind or info.write is None:
                continue
            if info.instance is None:
                global_layer.append((index, info.write))
            elif info.instance == instance:
                instance_layer.append((index, info.write))
        return global_layer + instance_layer

    def identities(self, at: int | None = None) -> list[tuple[str, str | None]]:
        """Every (kind, instance) that has a data message, in order of first appearance."""
        limit = len(self._messages) if at is None else at
        seen: dict[tuple[str, str | None], None] = {}
        for info in self._infos[:limit]:
            if info.identity is not None:
                seen.setdefault(info.identity, None)
        return list(seen)

    def watch(
        self, expr: str, callback: Callable[[Resolution], Any], instance: str | None = None
    ) -> Watch:
        """Follow `expr`: `callback(resolution)` after every edit that changes found, value or sources."""
        parse_expression(expr)
        handle = Watch(self, expr, callback, None if instance is None else str(instance))
        self._watches.append(handle)
        return handle

    def _changed(self) -> None:
        for handle in list(self._watches):
            handle._refresh()


def _clamp(index: int, size: int) -> int:
    # The same meaning as list.insert, negative indices included.
    if index < 0:
        index += size
    return max(0, min(index, size))


def _checked(message: Any, index: int) -> Message:
    """A message must be an object with a string `type`; anything else is refused at the door."""
    if not isinstance(message, dict):
        raise TypeError(f"message {index}: expected an object, got {type(message).__name__}")
    kind = message.get("type")
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"message {index}: 'type' must be a non-empty string")
    return message

