"""Big lists and dicts let go of at once and freed a slice at a time later: the graveyard.

Freeing a container frees everything only it held. At a million messages what one edit or cursor move lets go of
holds millions of objects: the path logs an edit drops (per step a message id, per change a step and an order
key, per problem a link of a chain, the roots at their marks) and the state folds a cursor move or an edit drops
(each mark with the message that set every path of a whole kind). Freed in the call that drops them, they cost
more than a frame of it. A program that must not wait that long in one go (the window, between two frames)
turns the graveyard on for its thread (`free_later`) and empties it a slice at a time (`free_some`); otherwise
(the command line, a script, the window's worker threads) `let_go` does nothing and they are freed at once, as
Python frees anything.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

SLICE = 64  # what a step between two looks at the clock frees, at most: entries and what only they hold (`_step`)
STEP_S = 0.001  # what a step between two looks may take: fewer entries after a longer one

_buried: list[list[Any] | dict[Any, Any] | Iterator[None]] = []
# Buried lists and dicts something else still held when `free_some` looked, by id: kept, looked at again each call.
_held: dict[int, list[Any] | dict[Any, Any]] = {}
# References to a buried list or dict while `free_some` looks at it when nothing else holds it: the graveyard's,
# the local name's and `sys.getrefcount`'s argument (CPython 3.11; tests/engine/resolve/test_graveyard.py checks it).
_ALONE = 3
# The thread whose let-go is buried, and what it calls after each burial; none: everything is freed at once.
_due: list[tuple[int, Callable[[], None]]] = []


def free_later(due: Callable[[], None] | None) -> None:
    """From now on bury what this thread lets go of, and call `due` after each burial (it asks for `free_some`
    to run soon, on this thread); None: free at once again (what is buried already stays until `free_some`)."""
    _due[:] = [] if due is None else [(threading.get_ident(), due)]


def let_go(*things: list[Any] | dict[Any, Any] | Iterator[None]) -> None:
    """Let go of big lists or dicts: on the thread that turned the graveyard on, buried (`free_some` empties each
    a slice at a time once nothing else holds it; one still held elsewhere is kept until it is alone, never emptied
    before); elsewhere, nothing (freed at once when their holder goes)."""
    if _due and _due[0][0] == threading.get_ident():
        _buried.extend(things)
        _due[0][1]()


def free_some(deadline: float) -> bool:
    """Free buried lists and dicts until `deadline` (a `time.perf_counter()` value); True when none are left, held
    elsewhere or not (`only_held`: only those are left, looked at again each call). A step between two looks at the
    clock frees entries worth one at first (`_step`), twice as much after a quick step, half after a slow one."""
    if _held:
        _buried[:0] = _held.values()
        _held.clear()
    size, now = 1, time.perf_counter()
    while _buried and now < deadline:
        thing = _buried[-1]
        if isinstance(thing, Iterator):  # each step lets go of one more thing (`unlinked`: a chain's next link)
            thing = [] if next(thing, thing) is thing else [thing]  # (spent: empty, popped below, as a list is)
        elif sys.getrefcount(thing) > _ALONE:  # still held elsewhere (or buried twice): kept once, for later
            _held[id(thing)] = thing
            _buried.pop()
            continue
        else:
            _step(thing, size)
        then, now = now, time.perf_counter()
        if not thing:
            _buried.pop()
            size = 1  # (the next with one entry)
        elif now - then < STEP_S / 2 or now - then > STEP_S:
            size = min(SLICE, 2 * size) if now - then < STEP_S / 2 else max(1, size // 2)
    return not _buried and not _held


def _step(thing: list[Any] | dict[Any, Any], size: int) -> None:
    """Free the last entries of `thing` worth `size`, one at least: an entry is worth one and the items of each list or
    dict only it holds, itself or in a tuple; one worth more than is left is buried under `thing`, worth none here."""
    if isinstance(thing, list) and not any(isinstance(entry, list | dict | tuple) for entry in thing[-size:]):
        del thing[-size:]  # (nothing there to weigh: one slice, at C's pace)
        return
    while thing and size > 0:  # (`size` is one at least)
        entry, size = thing.popitem()[1] if isinstance(thing, dict) else thing.pop(), size - 1
        for part in (entry if isinstance(entry, tuple) else [entry]) if sys.getrefcount(entry) == 2 else ():
            if not isinstance(part, list | dict) or (part is not entry and sys.getrefcount(part) > _ALONE):
                continue
            if len(part) > size:
                _buried.insert(len(_buried) - 1, part)
            else:
                size -= len(part)


def only_held() -> bool:
    """Whether what `free_some` has left is only lists and dicts still held elsewhere (it need not be asked soon)."""
    return not _buried and bool(_held)

