"""`slices()`: the window's work done in slices between turns of the event loop, one slice per turn.

The state view computes the state at the cursor and the watches resolve their pins in slices of a few
milliseconds. When each had its own timer, both fired in the same turn of the event loop after an edit or a cursor
move, and their slices added up (with the repaint that followed) to more than a frame. Here every sliced job waits
its turn: each turn runs one job's slice, the jobs taking turns in the order they asked.
"""

from __future__ import annotations

from collections.abc import Callable
from weakref import WeakMethod

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer


class Slices(QObject):
    """Jobs (bound methods of Qt objects) that each run one slice when their turn comes."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: list[WeakMethod[Callable[[], None]]] = []
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._run)

    def start(self, job: Callable[[], None]) -> None:
        """Run `job` (one slice of its work) on a coming turn of the event loop; once, however often asked
        before. A job with more to do asks again."""
        ref = WeakMethod(job)
        if ref not in self._jobs:
            self._jobs.append(ref)
        if not self._timer.isActive():
            self._timer.start()

    @property
    def pending(self) -> bool:
        """Whether a job waits for its turn."""
        return bool(self._jobs)

    def _run(self) -> None:
        while self._jobs:
            job = self._jobs.pop(0)()
            if job is not None and shiboken6.isValid(job.__self__):  # type: ignore[attr-defined]
                job()
                break
        if self._jobs:
            self._timer.start()


_slices: list[Slices] = []  # the application's, made when first asked for


def slices() -> Slices:
    """The application's one `Slices`."""
    if not _slices or not shiboken6.isValid(_slices[0]):
        _slices[:] = [Slices(QCoreApplication.instance())]
    return _slices[0]
