"""Connecting the window's views to the engine's psygnal signals (`Context.inserted`, …).

psygnal reads a slot's signature when it is connected (`check_nargs`: to pass a slot only the arguments it
takes, and to refuse one that needs more), with `inspect`, in Python. A document's hand-over connects a score
of the views' slots to the new context, in the turn that shows the document; each takes every argument its
signal sends, so nothing needs trimming and no signature is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from psygnal import SignalInstance


def connect_all(connections: Iterable[tuple[SignalInstance, Callable[..., Any]]]) -> None:
    """Connect each signal to its slot, which takes every argument the signal sends (no signature is read)."""
    for signal, slot in connections:
        signal.connect(slot, check_nargs=False)
