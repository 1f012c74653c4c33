"""Watches that follow a time cursor: `Cursor(context, at).watch(expr, callback)`.

Following the latest message (`at` None) a cursor's watches are the context's own incremental watches
(`Context.watch`): their `current` is the context watch's. At an earlier cursor, a watch is resolved again
only when a cursor move or an edit can change it: when a message it may read from (same kind, the global
layer or its instance, a lane it reads) entered or left the first `at` messages. A long stretch of
messages is not scanned: every watch is resolved again instead. As with context watches, an edit that
only renumbers the messages a watch's value came from is no change: no callback, and `current` names
their new indices when read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..protocol._expressions import Expression
from ..protocol._messages import MessageInfo
from ..resolve import _graveyard, _paranoid
from ..resolve._resolution import Kept, Resolution, changed
from ._context import Context, Edited, Watch
from ._edits import watch_arguments

SCAN_LIMIT = 2000  # messages looked at to find what a move or an edit touched; beyond: resolve every watch

Head = tuple[str, str | None, str | None]  # (kind, instance, lane): what a write can change
Lanes = dict[tuple[str, str | None], set[str | None]]  # heads by (kind, instance): their lanes (None: every lane)


def _heads(infos: Iterable[MessageInfo]) -> set[Head]:
    """What the writes among `infos` can change."""
    return {(*info.identity, info.write.path[0] if info.write.path else None)
            for info in infos if info.write is not None and info.identity is not None}


class CursorWatch(Kept):
    """One expression followed at its cursor: `current` is its resolution; `callback(resolution)` when its
    found, value or source messages change, and when its first resolution comes in after it was made (`resolved`
    False until then: a sliced cursor's first fold of a long path)."""

    def __init__(self, cursor: Cursor, expression: Expression, callback: Callable[[Resolution], Any],
                 instance: str | None) -> None:
        self.cursor, self.expression, self.callback, self.instance = cursor, expression, callback, instance
        self.live: Watch | None = None
        self.resolved = False
        self._keep(Resolution(expression.source, False), cursor.order.tail)  # at the cursor
        self._reads = {(ref.kind, ref.path[0] if ref.path else None) for ref in expression.references}

    @property
    def current(self) -> Resolution:
        """Its resolution now (following the latest: the context watch's), with the indices its messages
        have now (ranked again when read after an edit shifted them)."""
        # (after a relabel: as it was, until the cursor resolves every watch again)
        return self.live.current if self.live is not None else self._now(self.cursor.order)

    def reads(self, heads: Lanes) -> bool:
        """Whether a write at one of `heads` can change this watch's value (a dict lookup per path it reads)."""
        return any(lanes is not None and (in_lane is None or None in lanes or in_lane in lanes) for read, in_lane
                   in self._reads for lanes in (heads.get((read, None)), heads.get((read, self.instance))))

    def _called(self, resolution: Resolution) -> None:
        self.resolved = True  # (a context watch folded in slices is called back with its first resolution)
        self.callback(resolution)

    def close(self) -> None:
        """Stop following (the callback is not called again)."""
        if self.live is not None:
            self.live.close()
            self.live = None
        self.cursor._forget(self)


class Cursor:
    """A time cursor over a context (the first `at` messages, None for all) and the watches following it.

    `move(at)` brings every watch up to date at once. With `sliced` set, a move or an edit only notes the
    watches it can change (`pending`), and the owner resolves them in slices with `steps()` (a window
    paints progressively instead of blocking for hundreds of watches after a far jump); so does a new watch
    whose first fold at the cursor is longer than one slice's (`Context.fold_ahead`), and a move to the latest,
    whose `steps` make each watch's context watch there.
    """

    def __init__(self, context: Context, at: int | None = None, *, sliced: bool = False) -> None:
        self.context = context
        self.order = context._store.order  # to rank the watches' messages after an edit (`current`)
        self.sliced = sliced
        self._at = at
        self._watches: list[CursorWatch] = []
        self._pending: dict[CursorWatch, None] = {}  # to resolve again at `at` (at the latest: to join it), in order
        self._left: list[Callable[[], None]] = []  # `close` of each context watch a move left, called in `steps`
        context.followers.append(self._edited)

    @property
    def at(self) -> int | None:
        return self._at

    def watch(self, expr: str | Expression, callback: Callable[[Resolution], Any], instance: str | None = None, *,
              fold_now: bool = True) -> CursorWatch:
        """Follow `expr` (a string or an `Expression`) at this cursor. Raises `ExpressionError` for a malformed
        expression, TypeError for anything else or a callback that is not callable. With `sliced`, one
        slice of its first fold at the cursor is folded at once (`Context.fold_ahead`); a watch whose path is not
        folded that far then is `pending`, not yet `resolved`: `steps` resolves it and calls it back. Without
        `fold_now` it is pending at once, whatever its fold (not even its path's log is set up)."""
        expression = watch_arguments(expr, callback)  # what `Context.watch` takes, checked the same way
        watch = CursorWatch(self, expression, callback, None if instance is None else str(instance))
        self._watches.append(watch)
        if self._at is None:
            self._go_live(watch, fold_now=fold_now)
        elif self.sliced and not (fold_now and self.context.fold_ahead(watch.expression, watch.instance, self._at)):
            self._pending[watch] = None  # a path's first fold over a million messages is more than a frame
        else:
            watch._keep(self.context.resolve(watch.expression, watch.instance, self._at), self.order.tail)
            watch.resolved = True
        return watch

    @property
    def pending(self) -> int:
        """How many watches wait to be resolved (only with `sliced`; following the latest, for their first fold)."""
        return len(self._pending) + sum(not watch.resolved for watch in self._watches if watch.live is not None)

    def move(self, at: int | None) -> None:
        """Put the cursor at `at` (None: follow the latest); watches whose result changes are called back
        (with `sliced`, at an earlier cursor they are noted as pending instead: see `steps`)."""
        old, self._at = self._at, at
        if at == old:
            return
        if at is None:  # each watch's context watch is made in `steps` (sliced: hundreds at once are more than a frame)
            self._pending = dict.fromkeys(self._watches)
            if self.sliced:
                for watch in self._watches:
                    watch.resolved = False  # (until its first fold there, as a watch made following the latest)
            else:
                self._update({})  # (the steps at once, every watch called back whatever one raises)
            return
        if old is None:  # what each watch kept before it followed is freed in slices, and each value after it
            kept = [watch._resolution for watch in self._watches if watch.live is not None]  # (a value: a whole kind's)
            _graveyard.let_go(*(k.value for k in kept if isinstance(k.value, list | dict)), kept)
            for watch in self._watches:
                if watch.live is not None:
                    if not watch.resolved:  # (its first fold following the latest not done: at the cursor then)
                        self._pending[watch] = None
                    watch._keep(watch.live.current, self.order.tail)
                    self._left.append(watch.live.close)  # (hundreds of tracks let go of at once: more than a frame)
                    watch.live._callback, watch.live = lambda _resolution: None, None
            old = len(self.context)
        size = len(self.context)
        low, high = sorted((min(old, size), min(at, size)))
        self._update(self._touched(range(low, high)))

    def steps(self) -> Iterator[None]:
        """Close the context watches a move left, then resolve the pending watches at the cursor, yielding after
        each (one may take milliseconds) and within a path's first fold every few hundred writes (`Context.fold_ahead`;
        following the latest, its tracks' first folds: `Watchers.fold_some`); callbacks as each one changes."""
        while self._left:
            self._left.pop()()
            yield
        while self._pending:
            watch = next(iter(self._pending))
            if self._at is None:  # following the latest: its context watch made (its first fold in the steps after)
                del self._pending[watch]
                self._go_live(watch, announce=True, fold_now=False)
            elif self.context.fold_ahead(watch.expression, watch.instance, self._at):  # else a slice of its first fold
                del self._pending[watch]
                self._set(watch, self.context.resolve(watch.expression, watch.instance, self._at))
            yield
        while self._at is None and not self.context._watchers.fold_some():
            yield

    def close(self) -> None:
        """Close every watch and stop following the context."""
        for close in [*(watch.close for watch in self._watches), *self._left]:
            close()
        self.context.followers.remove(self._edited)

    # -- inside ----------------------------------------------------------------------------------

    def _forget(self, watch: CursorWatch) -> None:
        if watch in self._watches:
            self._watches.remove(watch)
        self._pending.pop(watch, None)

    def _go_live(self, watch: CursorWatch, announce: bool = False, fold_now: bool = True) -> None:
        # Sliced, its tracks' first folds go on in `steps`: with `fold_now`, a slice of each (a global and an
        # instance track per reference) at once.
        slices = (2 * len(watch.expression.references) if fold_now else 0) if self.sliced else None
        watch.live = self.context._watchers.add(watch.expression, watch._called, watch.instance, slices)
        if announce and watch.live not in self.context._watchers._pending:
            self._set(watch, watch.live.current)
        watch.resolved = watch.live not in self.context._watchers._pending

    def _set(self, watch: CursorWatch, resolution: Resolution) -> None:
        old, first = watch._resolution, not watch.resolved
        watch._keep(resolution, self.order.tail)
        watch.resolved = True
        if first or changed(old, resolution):
            watch.callback(resolution)

    def _touched(self, indices: range) -> Lanes | None:
        """The heads written by the messages at `indices` (`_widened`); None when there are too many to look."""
        return None if len(indices) > SCAN_LIMIT else self._widened(_heads(self.context.info(i) for i in indices))

    def _update(self, touched: Lanes | None) -> None:
        """Resolve again the watches a change can matter to (all when `touched` is None). A watch whose
        messages were only renumbered is not one of them (see `current`)."""
        for watch in self._watches:
            if touched is None or watch.reads(touched):
                self._pending[watch] = None
        if not self.sliced:  # each watch is called back, whatever one raises (then raised after), as `Context.watch`'s
            failed: Exception | None = None
            while True:  # (a watch that raised is no longer pending: the next round goes on after it)
                try:
                    for _ in self.steps():
                        pass
                    break
                except Exception as error:
                    failed = failed or error
            if failed is not None:
                raise failed

    def _widened(self, heads: set[Head]) -> Lanes:
        """`heads` by (kind, instance), each at every lane of its kind when a universal write (a root push, a root
        `set`, a write with a problem) may come after it in a view: a write in one lane decides what the root is when
        such a write applies (an object it cannot push onto, or nothing), and so what every lane reads. So too when
        the cursor moves over it: an instance layer's universal write before the range folds after the global writes.
        """
        kinds = {kind for kind, _, lane in heads if lane is not None}
        universal = {kind for (kind, _), layer in self.context._store.layers.items()
                     if kind in kinds and layer.universal} if kinds else set()
        widened: Lanes = {}
        for kind, instance, lane in heads:
            widened.setdefault((kind, instance), set()).add(None if kind in universal else lane)
        return widened

    def _edited(self, edit: Edited) -> None:
        """After an edit: resolve again the watches that what entered or left the first `at` messages can
        change (every watch after a relabel: the keys they keep name nothing). Messages that only shifted
        inside the first `at` are the same messages, renumbered: no change."""
        at = self._at
        if at is None:
            return
        if edit.relabelled:
            self._update(None)
            return
        if edit.low >= at:
            return
        size = len(self.context)
        left = [info for index, info in edit.left if index < at]
        entered = [index for index in edit.entered if index < min(at, size)]
        # More left the first `at` than entered it: the messages after them were pulled in; and the message just
        # past them may have been pushed out.
        pulled = range(at - (len(left) - len(entered)), at)
        infos = [self.context.info(i) for i in (*entered, *pulled, at) if 0 <= i < size]
        self._update(self._widened(_heads([*left, *infos])))
        if _paranoid.ENABLED:  # the watches left alone are still right, at their messages' new indices
            for watch in self._watches:
                if watch not in self._pending and watch.live is None:
                    _paranoid.check("CursorWatch.current", watch.current, self.context._store.listed,
                                    watch.expression, watch.instance, at)
