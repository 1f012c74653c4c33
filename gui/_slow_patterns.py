"""Schema pattern searches too slow for the window's thread, searched on a worker thread.

The checks the window makes itself (a fresh execution of the calls, the plan form's problems, a call's analysis) run
inside `SlowPatterns.apart`: a search that is neither kept by the engine nor quick is not waited for (the engine's
`searching_apart`), the check's answer is provisional (its violation says the pattern is still being searched), and
the search goes to a worker thread (`search_apart`, which keeps its outcome: `regex` leaves the interpreter lock free
while it searches). `searched` then tells the views, which check again: the engine answers those searches at once,
and the window shows what `validate` and `run` report.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from contextdeck.engine import Search, search_apart, searching_apart

from ._per_application import PerApplication


class _Done(QObject):
    done = Signal(object)  # the `_Searching` that is done


class _Searching(QRunnable):
    def __init__(self, searches: frozenset[Search]) -> None:
        super().__init__()
        self.signals = _Done()
        self.searches = searches

    def run(self) -> None:
        search_apart(self.searches)
        self.signals.done.emit(self)


class SlowPatterns(QObject):
    """The application's slow searches: `apart` around a check of the window's, `searched` once some are known."""

    searched = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._searching: set[Search] = set()  # sent to the worker, not answered yet
        self._tasks: list[_Searching] = []

    @contextmanager
    def apart(self) -> Iterator[set[Search]]:
        """Inside, slow searches are left to the worker; the set yielded holds them after (empty: the check's
        answer is final; else it is provisional, and `searched` follows)."""
        with searching_apart(frozenset(self._searching)) as left:
            yield left
        if new := left - self._searching:
            self._search(frozenset(new))

    @property
    def searching(self) -> bool:
        """Whether searches are under way (a check made now may be provisional)."""
        return bool(self._searching)

    def _search(self, searches: frozenset[Search]) -> None:
        self._searching |= searches
        task = _Searching(searches)
        task.setAutoDelete(False)
        task.signals.done.connect(self._done)  # (a method of this object: called on its thread)
        self._tasks.append(task)
        self._pool.start(task)

    def _done(self, task: _Searching) -> None:
        self._tasks.remove(task)
        self._searching -= task.searches
        self.searched.emit()


_slow = PerApplication(SlowPatterns)


def slow_patterns() -> SlowPatterns:
    """The application's one `SlowPatterns`."""
    return _slow.get()
