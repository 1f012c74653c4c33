"""The views connect to the engine's signals without psygnal reading each slot's signature, and every
connection still delivers what its signal sends."""

from __future__ import annotations

import inspect
import subprocess
import sys
import warnings
from typing import Any

from contextdeck.engine import Context
from contextdeck.gui._engine_signals import connect_all


class Unreadable:
    """A slot whose signature cannot be read: psygnal warns when it tries."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    @property
    def __signature__(self) -> inspect.Signature:
        raise ValueError("no signature")

    def __call__(self, *args: Any) -> None:
        self.calls.append(args)


def test_connecting_reads_no_signature_and_each_slot_gets_every_argument() -> None:
    """A slot is connected without a look at its signature, and called with all its signal's arguments."""
    context = Context([{"type": "text", "role": "user", "text": "a"}, {"type": "text", "role": "user", "text": "b"}])
    inserted, moved = Unreadable(), Unreadable()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # psygnal warns when a signature it reads cannot be read
        connect_all([(context.inserted, inserted), (context.moved, moved)])
    context.insert(1, {"type": "text", "role": "user", "text": "c"})
    context.move(0, 2)
    assert inserted.calls == [(1,)]
    assert moved.calls == [(0, 2)]


def test_the_window_module_makes_qwindows_type_when_imported() -> None:
    """PySide makes a class's Python type when it first meets it: the window's modules meet `QWindow` when they
    are imported, not in the first document's hand-over (where the window's `QWindow` is first asked for)."""
    script = ("import PySide6.QtGui as gui; assert 'QWindow' not in vars(gui); "
              "import contextdeck.gui._window; assert 'QWindow' in vars(gui)")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
