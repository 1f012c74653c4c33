"""`Context`: the ordered messages of a document, resolution over them, and change notification.

Messages are kept by stable id (`_order` knows where each id is); their writes are indexed per identity
and lane (`_index`), so resolving a path folds only the writes that can matter to it, and watches are
kept current by incremental tracks (`_watches`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from functools import partial
from typing import Any, NamedTuple

from psygnal import Signal, SignalInstance

from ..protocol._expressions import Expression, Reference, as_expression
from ..protocol._messages import Form, MessageInfo
from ..resolve import _paranoid
from ..resolve._incremental._blame import Blame, blame_of
from ..resolve._incremental._index import FOLD_STEPS
from ..resolve._incremental._lanes import LaneLogs
from ..resolve._incremental._store import NO_WRITE, Store
from ..resolve._incremental._tracks import Fold
from ..resolve._incremental._watches import Found, Plan, Track, Watch, Watchers, combine_keys
from ..resolve._resolution import Resolution
from . import _json
from ._edits import Edit, at_index, checked_message, insert_index, integer_index, watch_arguments
from ._view import ContextView, Pieces

Message = dict[str, Any]
Identity = tuple[str, str | None]
# An edit made (the watches' work planned in the plan it is given): a move's old and new order key, the folds
# of a move's first half.
Made = tuple[tuple[int, int] | None, dict[Track, Fold] | None]


class Edited(NamedTuple):
    """One edit, as the context tells it to its followers (`Context.followers`) once the store, the order, the indexes
    and the path logs hold it: the first index it changed (`low`), each message that left its place (its index before
    the edit and what it was: removed, replaced, moved away), the indices of the messages that took one (inserted,
    replaced, moved there), and whether the order was relabelled (every order key changed: `Order.generation`)."""

    low: int
    left: tuple[tuple[int, MessageInfo], ...]
    entered: tuple[int, ...]
    relabelled: bool


__all__ = ["Context", "Edited", "Watch"]

VIEW_STEP = 20_000  # messages `Context.view_steps` copies at a time by default


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
        self._store = Store()
        self._watchers = Watchers(self._store)
        self._lanes = LaneLogs(self._store)  # what `resolve` folded for references nobody watches
        self._announcing = False  # an edit's `before` signal is being emitted
        # Counts every edit but an append at the end: a reader that keeps what it read (a run record, the state at
        # a cursor) reads only the messages appended since while this stays the same.
        self.revision = 0
        # Told every edit, in the order they follow, once the store, the indexes and the path logs hold it and
        # before `inserted` and the like (a `Cursor`: what entered or left the first `at` messages).
        self.followers: list[Callable[[Edited], object]] = []
        store = self._store
        put, listed, writes = store.put, store.listed, store.writes
        with _json.building():  # a million messages: no collection walks them while they are made
            for index, message in enumerate(messages):
                message_id = index + 1
                message = checked_message(message, index)
                info = put(message_id, message)
                listed.append(message)
                write = info.write
                if write is not None and info.kind is not None:
                    writes[message_id] = write
                    store.layer((info.kind, info.instance)).append(message_id, write)
        self._next_id = len(listed) + 1
        store.order.extend(range(1, self._next_id))

    # -- reading -------------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The messages in their current order (a new list; the dicts are the context's own)."""
        return self._store.listed.copy()

    def __len__(self) -> int:
        return len(self._store.order)

    def __getitem__(self, index: int) -> Message:
        return at_index(self._store.listed, index)

    def info(self, index: int) -> MessageInfo:
        """The parsed view of message `index`: form, kind, instance and write."""
        return self._store.infos[at_index(self._store.order.ids, index)]

    def view(self) -> ContextView:
        """The messages as they are now, read-only and safe to hand to another thread (render, validate)."""
        ids, info = self._store.order.ids, self._store.infos
        return ContextView(tuple(self._store.listed), tuple([info[i] for i in ids]))

    def view_steps(self, step: int | None = None, *, infos: bool = True) -> Generator[None, None, ContextView]:
        """`view()` taken `step` messages at a time, for a caller with a time budget (the window's slices): it yields
        between two steps and returns the view. The copy is O(n), more than a frame at a million messages; the view is
        of the context as it is at the last step: an edit between two steps starts the copy again, except an append,
        which leaves the part copied as it was and is copied in a later step. `step` defaults to `VIEW_STEP`. With
        `infos` False the view holds the messages alone (its `infos` empty), for a reader that parses nothing (the
        window's autosave writes them out): most of the copy is the infos. The view holds the copy as its pieces
        (`Pieces`), a list each step: a reader of every message joins them on its own thread (`ContextView.joined`)."""
        step = step or VIEW_STEP
        messages: Pieces[Message] = Pieces(step)
        parsed: Pieces[MessageInfo] = Pieces(step)
        revision = self.revision
        while True:
            if self.revision != revision:
                messages, parsed, revision = Pieces(step), Pieces(step), self.revision
            start, end = len(messages), min(len(messages) + step, len(self))
            messages.pieces.append(self._store.listed[start:end])
            if infos:
                parsed.pieces.append(list(map(self._store.infos.__getitem__, self._store.order.ids[start:end])))
            if end == len(self):
                return ContextView(messages, parsed)
            yield

    def indices_of(self, form: Form, at: int | None = None) -> list[int]:
        """The indices of the tool, plan or advisor messages (`form`) among the first `at`, in order."""
        found = sorted(map(self._store.order.index_of, self._store.forms[form]))
        return found if at is None else [index for index in found if index < at]

    def id_at(self, index: int) -> int:
        """The stable id of the message at `index`: it survives replace, move and other edits."""
        return self._store.order.ids[index]

    def index_of(self, message_id: int) -> int:
        """Where the message with `message_id` is now (O(log n)); raises KeyError when it was removed."""
        return self._store.order.index_of(message_id)

    # -- editing -------------------------------------------------------------------------------

    def apply(self, edit: Edit) -> Edit:
        """Apply an edit command; returns the edit that undoes it."""
        return edit.apply(self)

    def append(self, message: Message) -> None:
        self.insert(len(self), message)

    def insert(self, index: int, message: Message) -> int:
        """Insert as `list.insert` does; returns the index the message now has."""
        index = insert_index(index, len(self))
        message = checked_message(message, index)
        new, self._next_id = self._next_id, self._next_id + 1
        self._make(self.inserting, self.inserted, (index,), (), (index,), partial(self._insert, index, message, new))
        return index

    def replace(self, index: int, message: Message) -> None:
        index = self._valid(index)
        message = checked_message(message, index)
        self._make(self.replacing, self.replaced, (index,), (index,), (index,), partial(self._replace, index, message))

    def remove(self, index: int) -> Message:
        index = self._valid(index)
        message = self[index]
        self._make(self.removing, self.removed, (index,), (index,), (), partial(self._remove, index))
        return message

    def move(self, src: int, dst: int) -> None:
        """Move message `src` so that it is afterwards at index `dst`."""
        src, dst = self._valid(src), self._valid(dst)
        if src != dst:
            self._make(self.moving, self.moved, (src, dst), (src,), (dst,), partial(self._move, src, dst))

    def _make(
        self, before: SignalInstance, after: SignalInstance, where: tuple[int, ...], left: tuple[int, ...],
        entered: tuple[int, ...], make: Callable[[Plan], Made],
    ) -> None:
        """One edit, in the order ARCHITECTURE.md states: announced `before` (`where`: the signals' arguments),
        made (`make`: the store, the order and the indexes; the watches' work planned, path logs dropped), told
        to every follower (`left` and `entered`: the indices of the messages that left their place and of
        those that took one), announced `after`; then the watches are repaired and called back."""
        if self._announcing:  # it would move what is announced: the announced edit would act elsewhere
            raise RuntimeError("a message edit inside the announcement of another (a handler of inserting, removing,"
                               " moving or replacing): make it once that edit is made (inserted, ...)")
        gone = tuple([(index, self.info(index)) for index in left]) if left else ()
        generation = self._store.order.generation
        if len(before):  # an announcement nobody hears is skipped: a run appends its outputs unheard
            self._announcing = True
            try:
                before.emit(*where)
            finally:
                self._announcing = False
        plan: Plan = {}
        rekeyed, prior = make(plan)
        if left or entered != (len(self) - 1,):  # (an append is not counted)
            self.revision += 1
        relabelled = generation != self._store.order.generation
        if relabelled:
            self._lanes.clear()  # every key changed: the logs' keys name nothing any more
        try:
            if self.followers:  # (nobody to tell: a run appending its outputs from the command line)
                edited = Edited(min(where), gone, entered, relabelled)
                for follower in list(self.followers):
                    follower(edited)
            if len(after):
                after.emit(*where)
        finally:  # the edit is made: a listener that raises must not leave the watches (and resolve) before it
            self._watchers.follow(plan, rekeyed, prior)

    def _valid(self, index: int) -> int:
        index, size = integer_index(index), len(self)
        if not -size <= index < size:
            raise IndexError(f"message index {index} out of range for {size} messages")
        return index % size

    # -- the edits themselves, without signals: they keep the indexes and plan the watches' work ---

    def _write(self, plan: Plan, message_id: int, added: bool, appended: bool = False) -> None:
        """File a message's write (`added`) or take it out: the writes and the layer's index, the watches'
        work planned in `plan`, the path logs it can change dropped (ARCHITECTURE.md, steps 4-6)."""
        store = self._store
        info = store.infos[message_id]
        if info.write is None or info.identity is None:
            return
        key, layer = store.order.key, store.layer(info.identity)
        if added:
            store.writes[message_id] = info.write
            if appended:  # the last message: after every write of its layer, so nothing is searched
                layer.append(message_id, info.write)
            else:
                layer.add(message_id, info.write, key.__getitem__)
        self._watchers.touch(plan, info.identity, info.write, message_id, appended, dropped=not added)
        self._lanes.touch(info.identity, info.write, key[message_id], appended)
        if not added:
            layer.discard(message_id, info.write, key.__getitem__)
            store.writes[message_id] = NO_WRITE

    def _insert(self, index: int, message: Message, message_id: int, plan: Plan) -> Made:
        self._store.put(message_id, message)
        self._store.order.insert(index, message_id)
        self._store.listed[index:index] = (message,)
        appended = index == len(self) - 1  # now the last message: one step will do for its tracks
        self._write(plan, message_id, True, appended)
        return None, None

    def _remove(self, index: int, plan: Plan) -> Made:
        message_id = self._store.order.ids[index]
        self._write(plan, message_id, False)
        self._store.order.pop(index)
        del self._store.listed[index]
        self._store.take(message_id)
        return None, None

    def _replace(self, index: int, message: Message, plan: Plan) -> Made:
        message_id = self._store.order.ids[index]
        self._write(plan, message_id, False)
        self._store.put(message_id, message)
        self._store.listed[index] = message
        self._write(plan, message_id, True)
        return None, None

    def _move(self, src: int, dst: int, plan: Plan) -> Made:
        """Move a message as a remove and then an insert. The tracks are refolded for the remove first (returned as
        prior folds), so that each half repairs one write at one place instead of the whole stretch between the two."""
        message_id = self._store.order.ids[src]
        before = self._store.order.key[message_id]
        self._write(plan, message_id, False)
        self._store.order.pop(src)
        message = self._store.listed.pop(src)
        prior = self._watchers.refolds(plan) if plan else {}
        plan.clear()
        self._store.order.insert(dst, message_id)
        self._store.listed[dst:dst] = (message,)
        with self._watchers.staging(prior):  # the insert is planned against the remove's folds
            self._write(plan, message_id, True)
        return (before, self._store.order.key[message_id]), prior

    # -- resolving -----------------------------------------------------------------------------

    def resolve(self, expr: str | Expression, instance: str | None = None, at: int | None = None) -> Resolution:
        """Resolve `expr` for `instance` as of the first `at` messages (all when None).

        Only the writes that can matter to each path are folded (see `_index`), and a path a watch of
        the same view reads is not folded at all: the watch's fold is current. Any other path reads its
        own log, the writes that can matter to it folded on first use and kept until an edit changes them
        (`_lanes`). `at` cuts the
        indexes at an order key, so time travel copies nothing. Raises `ExpressionError` for a malformed
        expression; never raises for bad data.
        """
        expression = as_expression(expr)
        instance = None if instance is None else str(instance)
        limit = self._limit_key(at)

        def found(ref: Reference) -> Found:
            watched = self._watchers.result_of(ref, instance) if limit is None else None
            if watched is not None:  # a watch keeps this very fold current: read it
                return watched
            return self._lanes.found(ref, instance, limit)

        resolution = combine_keys(expression, found, self._store.order.snapshot())
        if _paranoid.ENABLED:
            _paranoid.check("Context.resolve", resolution, self._store.listed, expression, instance, at)
        return resolution

    def fold_ahead(
        self, expr: str | Expression, instance: str | None = None, at: int | None = None, steps: int = FOLD_STEPS
    ) -> bool:
        """Fold at most about `steps` writes of what `resolve(expr, instance, at)` folds on first use: whether
        nothing is left, so that resolve then folds nothing. A caller with a time budget (the window's slices)
        calls it until it says so, then resolves: a path's first fold of thousands of writes is split."""
        expression = as_expression(expr)
        instance = None if instance is None else str(instance)
        limit = self._limit_key(at)
        left = steps
        with self._lanes.holding():  # its references' logs keep each other, slice after slice
            for ref in expression.references:
                if limit is None and self._watchers.result_of(ref, instance) is not None:
                    continue  # a watch answers it
                remaining = self._lanes.fold_some(ref, instance, limit, left)
                if remaining is None:
                    return False
                left = remaining
        return True

    def identities(self, at: int | None = None) -> list[tuple[str, str | None]]:
        """Every (kind, instance) that has a data message, in order of first appearance."""
        limit, key = self._limit_key(at), self._store.order.key
        firsts = [
            (key[layer.all[0]], identity)
            for identity, layer in self._store.layers.items()
            if layer.all and (limit is None or key[layer.all[0]] <= limit)
        ]
        return [identity for _, identity in sorted(firsts, key=lambda first: first[0])]

    def blame(self, expr: str | Expression, instance: str | None = None, at: int | None = None) -> Blame:
        """Who made the value of `expr` what it is: the write that set its base, every later write that
        changed it (index, id, method, `_call`, `_date`), and the value each write shadowed."""
        expression = as_expression(expr)
        instance = None if instance is None else str(instance)
        resolution = self.resolve(expression, instance, at)
        return blame_of(self._store, expression, resolution, instance, self._limit_key(at))

    def watch(
        self, expr: str | Expression, callback: Callable[[Resolution], Any], instance: str | None = None
    ) -> Watch:
        """Follow `expr`: `callback(resolution)` after every edit that changes found, value or sources.

        Watches of the same kind, instance and first path segment share one incremental fold.
        """
        expression = watch_arguments(expr, callback)
        return self._watchers.add(expression, callback, None if instance is None else str(instance))

    def _limit_key(self, at: int | None) -> int | None:
        """The order key of the last message among the first `at` (None: no limit; 0: nothing)."""
        if at is None or integer_index(at, "`at`") >= len(self):
            return None
        return 0 if at <= 0 else self._store.order.key[self._store.order.ids[at - 1]]
