"""`slices()`: the window's work done in slices between turns of the event loop, one slice per turn.

The state view computes the state at the cursor and the watches resolve their pins in slices of a few
milliseconds. With a timer each, both would fire in the same turn of the event loop after an edit or a cursor
move, and their slices add up (with the repaint that follows) to more than a frame. So every sliced job waits
its turn: each turn runs one job's slice, the jobs taking turns in the order they asked.

A slice also does not join a turn that has already done a frame's share of work. In one turn Qt delivers the posted
events (a repaint is one) before the timers, so the repaint that an edit, a scroll or the previous slice asked for
and the next slice would run together, past a frame between them. The runner notes when each turn begins (the
event dispatcher's `aboutToBlock`, said at every turn of a running loop, busy or not) and, when the turn has used
more than `BUSY_TURN_S` of GUI-thread CPU time before the slice's timer fires, lets it end and runs the slice in a
later one (at most `WAITS` turns in a row: a loop driven by `processEvents` may not say when its turns begin).

What a slice made is frozen after it (`freeze_young`). A slice makes big containers with few allocations (a
state fold's mark copies the writers of a kind, tens of thousands of paths; a path log's list of the writes that
touch a branch): left young until the next idle moment, that young collection would walk every item of each,
on the GUI thread, in a turn that had a slice or a repaint too (more than a frame at a million messages). Frozen,
no young collection walks them; cycles among them wait for the collection of everything (`_runtime`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol
from weakref import WeakMethod

import shiboken6
from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, QObject, QTimer

from contextdeck._runtime import freeze_young
from contextdeck.engine import free_later, free_some, only_held

from ._per_application import PerApplication

# A turn that has used this much (a repaint) runs no slice; the next one does. Below an undo's relayout and repaint
# of a big document, so that a slice never follows one in the same turn.
BUSY_TURN_S = 0.002
WAITS = 3  # turns let go by in a row at most (an edit's own turn, then the repaint it asked for, then a scroll's)
# An engine tick running in the window (`Pace`) lets the event loop turn once the turn has used this much.
TICK_TURN_S = 0.025
STUCK_S = 0.1  # pieces of a tick held this long in one turn go on: the loop does not say when its turns begin
FREE_S = 0.003  # one slice of freeing what the engine let go of (`free_in_slices`), or of closing (`close_later`)
# What the engine let go of but something else still holds is looked at again this long (ms) after the event loop next
# wakes for something else, not every turn: it may be held for long, and only an event can make its holder let go.
HELD_MS = 500


class Closable(Protocol):
    def close(self) -> None: ...


class Slices(QObject):
    """Jobs (bound methods of Qt objects) that each run one slice when their turn comes."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # The jobs waiting, in order, with their key (id of the object, function); by key, for the many asks of a turn.
        self._jobs: list[tuple[tuple[int, object], WeakMethod[Callable[[], None]]]] = []
        self._queued: dict[tuple[int, object], WeakMethod[Callable[[], None]]] = {}
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._run)
        # one look again at what is only held (`free`): a single timer, so that every burial meanwhile adds none
        self._held = QTimer(self, singleShot=True)
        self._held.timeout.connect(lambda: self.start(self.free))
        # While only what is held is left, nothing is due until the event loop has waited and been woken by something
        # else (`_woken`): a window left alone sleeps instead of waking every `HELD_MS` (a laptop's battery).
        self._asleep = self._waited_since = False
        self._turn_began = time.thread_time()
        self._waited = 0  # turns let go by in a row
        self._closing: deque[Closable] = deque()  # (`close_later`)
        self.turns = 0  # turns of the event loop begun so far
        self.last = ""  # the job the last slice ran (`Class.method`): what the benchmark's turn reports name
        dispatcher = QAbstractEventDispatcher.instance(self.thread())
        if dispatcher is not None:
            dispatcher.aboutToBlock.connect(self._turn_begins)
            dispatcher.awake.connect(self._woken)

    def _turn_begins(self) -> None:
        self._turn_began = time.thread_time()
        self.turns += 1
        self._waited_since = self._asleep

    def _woken(self) -> None:
        # Woken after a wait that began since the last look: something else happened (input, a timer, a process's
        # output), which may have made a holder let go.
        if self._asleep and self._waited_since:
            self._asleep = False
            self._held.start(HELD_MS)

    def turn_used(self) -> float:
        """The GUI-thread CPU seconds the current turn of the event loop has used so far."""
        return time.thread_time() - self._turn_began

    def start(self, job: Callable[[], None], *, first: bool = False) -> None:
        """Run `job` (one slice of its work) on a coming turn of the event loop; once, however often asked
        before. A job with more to do asks again. `first`: before the jobs waiting (a dialog's opening before the
        work its making set off)."""
        key = (id(job.__self__), job.__func__)  # type: ignore[attr-defined]
        queued = self._queued.get(key)
        if queued is None or queued() is None:  # (a dead one's id may be a new object's)
            ref = self._queued[key] = WeakMethod(job)
            self._jobs.insert(0 if first else len(self._jobs), (key, ref))
        if not self._timer.isActive():
            self._timer.start()

    def free(self) -> None:
        """One slice of freeing what the engine let go of (`free_in_slices`)."""
        if free_some(time.perf_counter() + FREE_S):
            return
        if only_held():
            self._asleep, self._waited_since = not self._held.isActive(), False
        else:
            self.start(self.free)

    def close_later(self, things: Iterable[Closable]) -> None:
        """Close `things` in slices, in order, as many a slice as fit `FREE_S`: the watches of a document being
        replaced, whose closing lets go of their folds (each may be a whole kind's at a million messages: hundreds
        of them were most of the frame of the turn that handed the new document over)."""
        self._closing.extend(things)
        self.start(self._close_some)

    def _close_some(self) -> None:
        deadline = time.thread_time() + FREE_S
        while self._closing and time.thread_time() < deadline:
            self._closing.popleft().close()
        if self._closing:
            self.start(self._close_some)

    @property
    def pending(self) -> bool:
        """Whether a job waits for its turn."""
        return bool(self._jobs)

    def _run(self) -> None:
        if self._waited < WAITS and time.thread_time() - self._turn_began > BUSY_TURN_S:
            self._waited += 1
            self._timer.start()
            return
        self._waited = 0
        try:
            while self._jobs:
                key, ref = self._jobs.pop(0)
                if self._queued.get(key) is ref:
                    del self._queued[key]
                job = ref()
                if job is not None and shiboken6.isValid(job.__self__):  # type: ignore[attr-defined]
                    self.last = job.__qualname__
                    job()
                    freeze_young()
                    break
        finally:  # a job that raised is dropped (its error reported); the others go on
            if self._jobs:
                self._timer.start()


class Budget:
    """A slice's share of its turn of the event loop, for work done in pieces: `more()`, asked before each piece,
    says whether to do it. The first always (a slice that did nothing would only be asked for again); each next one
    while it would end within `share_s` of the turn's GUI-thread CPU, at the cost of the piece before it. What the
    turn used before the slice counts (a repaint, a posted event). A slice that stopped only once past a time of its
    own ended up to a piece past it, and pieces sized on a fast machine took several times that on a slow one."""

    def __init__(self, share_s: float) -> None:
        self._end = slices()._turn_began + share_s
        self._last: float | None = None  # GUI-thread CPU time when the last piece began

    def more(self) -> bool:
        now = time.thread_time()
        last, self._last = self._last, now
        return last is None or 2 * now - last <= self._end


class Pace:
    """What an engine tick awaits between two calls it starts or settles and before each call's work
    (`Execution.pace`): once the turn has used `budget` seconds, the event loop turns (repaints, input, the views'
    slices) before the tick goes on. The first piece of work of each turn always goes on, so a turn that a repaint
    filled still lets the tick progress."""

    def __init__(self, budget: float = TICK_TURN_S, used: Callable[[], float] | None = None,
                 turn: Callable[[], int] | None = None) -> None:
        self.budget = budget
        self.used = used if used is not None else lambda: slices().turn_used()
        self.turn = turn if turn is not None else lambda: slices().turns  # which turn of the event loop it is
        self.turns = 0  # turns given so far
        self._went_on: int | None = None  # the turn in which a piece last went on
        self._held_since: float | None = None  # GUI-thread CPU time when pieces began to wait in this turn
        self._stuck: int | None = None  # a turn that never ended while pieces waited: nothing waits in it any more

    async def __call__(self) -> None:
        while self.used() > self.budget and self._went_on == (turn := self.turn()) and self._stuck != turn:
            # A loop that never says when its turns begin (one driven by bare `processEvents`) would hold the
            # pieces for ever: past `STUCK_S` of waiting in one turn, they go on unpaced until a turn begins.
            now = time.thread_time()
            if self._held_since is None:
                self._held_since = now
            elif now - self._held_since > STUCK_S:
                self._stuck = turn
                break
            self.turns += 1
            await asyncio.sleep(0)
        self._held_since = None
        self._went_on = self.turn()


_slices = PerApplication(Slices)


def slices() -> Slices:
    """The application's one `Slices`."""
    return _slices.get()


def free_in_slices() -> None:
    """Have what the engine lets go of on this (the GUI) thread, the path logs an edit drops and the state's folds
    and writers, freed a slice at a time on the coming turns, never in the turn that let go of it (`free_later`):
    at a million messages one edit's would take most of a frame."""
    free_later(_free_soon)


def _free_soon() -> None:
    # Not once the application is being destroyed or gone: the documents it held are freed as it goes, and the
    # `Slices` made then would be made over a dead event loop (at the interpreter's exit, a crash).
    if QCoreApplication.instance() is not None and not QCoreApplication.closingDown():
        slices().start(slices().free)
