"""Sliced work takes turns: each turn of the event loop runs one job's slice, so two never add up in a turn."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from contextdeck.gui._slices import slices


class Job(QObject):
    """Work of `parts` slices, noting each slice it runs in `ran`."""

    def __init__(self, name: str, parts: int, ran: list[str]) -> None:
        super().__init__()
        self.name, self.left, self.ran = name, parts, ran

    def work(self) -> None:
        self.ran.append(self.name)
        self.left -= 1
        if self.left:
            slices().start(self.work)


def test_jobs_take_turns_one_slice_per_turn(qtbot: Any) -> None:
    """Two jobs asked for together run their slices in turn (one timer runs one slice when it fires); a job
    asked again before its turn runs once."""
    ran: list[str] = []
    state, watches = Job("state", 3, ran), Job("watches", 2, ran)
    slices().start(state.work)
    slices().start(state.work)
    slices().start(watches.work)
    qtbot.waitUntil(lambda: not state.left and not watches.left)
    assert ran == ["state", "watches", "state", "watches", "state"]


def test_a_deleted_jobs_slices_are_dropped(qtbot: Any) -> None:
    """A job whose object is gone before its turn is not run; the others still are."""
    ran: list[str] = []
    gone, kept = Job("gone", 2, ran), Job("kept", 1, ran)
    slices().start(gone.work)
    slices().start(kept.work)
    gone.deleteLater()
    del gone
    qtbot.waitUntil(lambda: ran == ["kept"])
    assert ran == ["kept"]
