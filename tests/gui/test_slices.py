"""Sliced work takes turns: each turn of the event loop runs one job's slice, so two never add up in a turn."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, QEvent, QEventLoop, QObject, QTimer

from contextdeck.engine import let_go
from contextdeck.engine.resolve import _graveyard
from contextdeck.gui import _slices
from contextdeck.gui._slices import BUSY_TURN_S, Budget, free_in_slices, slices


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


class Painter(Job):
    """A job whose every slice posts an event that takes a repaint's time to deliver (GUI-thread CPU time)."""

    cost = 2 * BUSY_TURN_S  # seconds of CPU each posted event takes

    def work(self) -> None:
        super().work()
        QCoreApplication.postEvent(self, QEvent(QEvent.Type.User))

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.User:
            self.ran.append("posted")
            busy_until = time.thread_time() + self.cost
            while time.thread_time() < busy_until:
                pass
            return True
        return super().event(event)


@pytest.mark.parametrize("cost", [2 * BUSY_TURN_S, 0.0025])
def test_a_slice_does_not_join_a_turn_that_repainted(qtbot: Any, cost: float) -> None:
    """Qt delivers a turn's posted events (repaints) before its timers: a slice whose timer comes in a turn that has
    already spent a repaint's time waits for the next turn, so the repaint that the asker or the previous slice
    posted is not followed by a slice in the same turn. 2.5 ms: an undo's relayout and repaint at 100,000 messages,
    which a 5 ms slice followed in the same turn until `BUSY_TURN_S` was 2 ms."""
    ran: list[str] = []
    dispatcher = QAbstractEventDispatcher.instance()
    assert dispatcher is not None

    def turn() -> None:
        ran.append("turn")

    dispatcher.aboutToBlock.connect(turn)  # said at every turn of a running loop, busy or not
    try:
        asker, other = Painter("asker", 1, ran), Painter("other", 2, ran)
        asker.cost = other.cost = cost
        slices().start(asker.work)
        slices().start(other.work)
        QCoreApplication.postEvent(asker, QEvent(QEvent.Type.User))  # the asker's own repaint
        qtbot.waitUntil(lambda: not other.left and ran.count("posted") == 4)
    finally:
        dispatcher.aboutToBlock.disconnect(turn)
    slices_run = [n for n, step in enumerate(ran) if step in ("asker", "other")]
    assert [ran[n] for n in slices_run] == ["asker", "other", "other"]
    for n in slices_run:
        posted = max(m for m in range(n) if ran[m] == "posted")
        assert "turn" in ran[posted:n], ran  # the posted event was delivered a turn before the slice


class Failing(QObject):
    def work(self) -> None:
        raise RuntimeError("a slice that fails")


def test_a_job_that_raises_does_not_stop_the_others(qtbot: Any) -> None:
    """A slice that raises is reported and its job dropped; the jobs waiting behind it still take their turns
    (they stalled for good: the window's views stopped following edits until another job was asked for)."""
    ran: list[str] = []
    failing, kept = Failing(), Job("kept", 2, ran)
    with qtbot.captureExceptions() as raised:
        slices().start(failing.work)
        slices().start(kept.work)
        qtbot.waitUntil(lambda: not kept.left, timeout=2000)
    assert ran == ["kept", "kept"]
    assert [str(error[1]) for error in raised] == ["a slice that fails"]
    # The queue drains: other tests' jobs (the graveyard's slow look at held lists) may join it meanwhile.
    qtbot.waitUntil(lambda: not slices().pending, timeout=2000)


def test_the_path_logs_an_edit_drops_are_freed_on_the_turns_after_it(
        open_messages: Callable[[list[Any], str], Any], monkeypatch: pytest.MonkeyPatch, qtbot: Any) -> None:
    """The window frees what the engine lets go of in its slices (`free_in_slices`): the path logs an edit drops
    (at a million messages 15 ms of the edit's turn when freed in it) wait in the graveyard after the edit and are
    all freed on the turns after it."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    monkeypatch.setattr(_graveyard, "_due", [])  # (the window turns it on; off again after the test)
    window = open_messages([{"type": "state", "data": {"a": n, "b": n}} for n in range(50)], "logs.json")
    context = window.context()
    assert context.resolve("†state.a").value == 49
    log = context._lanes._logs[("state", None, ("a",), 0)]
    steps = id(log.ids)
    del log
    assert window.commands.replace(3, {"type": "state", "data": {"a": -1}}, "Edit")
    assert ("state", None, ("a",), 0) not in context._lanes._logs
    assert steps in {id(thing) for thing in _graveyard._buried}
    qtbot.waitUntil(lambda: not _graveyard._buried)
    assert context.resolve("†state.a").value == 49


class _Entries(list[int]):  # (a list that can be followed by a weak reference)
    pass


def test_a_list_still_held_when_looked_at_is_freed_once_its_holder_drops_it(
        monkeypatch: pytest.MonkeyPatch, qtbot: Any) -> None:
    """What the engine lets go of while something else still holds it is looked at again every `HELD_MS`, not
    every turn, and freed once its holder drops it, with nothing more let go of."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    monkeypatch.setattr(_graveyard, "_due", [])  # (off again after the test)
    monkeypatch.setattr(_slices, "HELD_MS", 20)
    free_in_slices()
    entries = _Entries(range(100))
    seen, holder = weakref.ref(entries), [entries]
    let_go(entries)
    del entries
    qtbot.waitUntil(lambda: bool(_graveyard._held) and not slices().pending)
    holder.clear()
    qtbot.waitUntil(lambda: seen() is None)
    assert not _graveyard._held


def test_only_what_is_held_leaves_the_window_asleep_until_something_else_wakes_it(
        monkeypatch: pytest.MonkeyPatch, qtbot: Any) -> None:
    """While all the graveyard has left is held elsewhere, nothing of the slices' own is due: the event loop sleeps
    (a window left alone does not wake every `HELD_MS`). Once it has waited and been woken by something else, the
    held are looked at again `HELD_MS` later, and a list whose holder has let go is freed."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    monkeypatch.setattr(_graveyard, "_due", [])  # (off again after the test)
    monkeypatch.setattr(_slices, "HELD_MS", 20)
    looks = [0]
    free_some = _slices.free_some

    def counted(deadline: float) -> bool:
        looks[0] += 1
        return free_some(deadline)

    monkeypatch.setattr(_slices, "free_some", counted)
    free_in_slices()
    entries = _Entries(range(100))
    seen, holder = weakref.ref(entries), [entries]
    let_go(entries)
    del entries
    runner = slices()
    qtbot.waitUntil(lambda: bool(_graveyard._held) and not runner.pending)
    # The test's own waits wake the loop, each as something else would: the look that puts it to sleep is made
    # here, with no wait after it.
    runner._held.stop()
    runner.free()
    assert runner._asleep
    assert not runner._held.isActive()  # nothing armed: the loop may wait for ever
    assert not runner._timer.isActive()
    asleep = looks[0]
    runner._woken()  # woken without having waited since the look (the same turn): still asleep
    assert runner._asleep
    assert not runner._held.isActive()
    loop = QEventLoop()
    QTimer.singleShot(0, lambda: None)  # an event of something else's, after the loop has waited
    QTimer.singleShot(10 * _slices.HELD_MS, loop.quit)
    loop.exec()
    # looked again after that wake, and not at every `HELD_MS` of the wait (ten of them) while nothing else happened
    assert 1 <= looks[0] - asleep < 5
    assert seen() is not None
    again = looks[0]
    holder.clear()  # let go while the window sleeps: the next event wakes it, and the list is freed after it
    QTimer.singleShot(0, lambda: None)
    qtbot.waitUntil(lambda: seen() is None)
    assert looks[0] > again
    assert not _graveyard._held


class Maker(QObject):
    """A job whose slice makes a big container and keeps it (a state fold's writers, a path log's list)."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[dict[tuple[int], tuple[int, str]]] = []

    def work(self) -> None:
        self.made.append({(n,): (n, "set") for n in range(20_000)})


def test_what_a_slice_made_is_frozen_after_it(qtbot: Any) -> None:
    """What a slice made is frozen after it: no young collection walks the items of a container it kept (the next
    at idle walked a state fold's writers, tens of thousands of paths, in a turn of its own work)."""
    maker = Maker()
    try:
        slices().start(maker.work)
        qtbot.waitUntil(lambda: bool(maker.made))
        made = maker.made[0]
        assert gc.is_tracked(made)
        assert not any(thing is made for thing in gc.get_objects())  # every generation but the frozen
    finally:
        gc.unfreeze()


def test_what_is_let_go_of_once_the_application_is_gone_touches_no_qt(tmp_path: Any) -> None:
    """A document freed after the application was destroyed (at the interpreter's exit: the last collection frees a
    store the tests left) makes no `Slices` over the dead event loop: no warning from Qt, no crash."""
    import subprocess
    import sys

    script = tmp_path / "gone.py"
    script.write_text(
        "import gc, os\n"
        "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "import shiboken6\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from contextdeck.engine.resolve._graveyard import let_go\n"
        "from contextdeck.gui._slices import free_in_slices, slices\n"
        "app = QApplication([])\n"
        "free_in_slices()\n"
        "slices()\n"
        "shiboken6.delete(app)\n"
        "del app\n"
        "gc.collect()\n"
        "let_go([1, 2, 3])\n"
        "print('let go')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "let go\n", "")


def _pieces_within(monkeypatch: pytest.MonkeyPatch, share_s: float, used_s: float) -> int:
    """How many pieces of 1 ms each (a clock of our own) a `Budget` of `share_s` lets a slice do in a turn that has
    used `used_s` before it."""
    clock = [1.0]
    monkeypatch.setattr(_slices.time, "thread_time", lambda: clock[0])
    slices()._turn_began = clock[0] - used_s
    budget, done = Budget(share_s), 0
    while budget.more():
        clock[0] += 0.001
        done += 1
    return done


def test_a_budget_stops_before_the_piece_that_would_pass_the_share_of_its_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each piece goes on while it would end within the share of the turn, at the cost of the piece before: 3 pieces
    of 1 ms in a share of 3.5 ms, 2 when the turn used 1 ms before the slice; one when it has used its share already
    (a slice that did nothing would only be asked for again)."""
    assert _pieces_within(monkeypatch, 0.0035, 0.0) == 3
    assert _pieces_within(monkeypatch, 0.0035, 0.001) == 2
    assert _pieces_within(monkeypatch, 0.0035, 0.004) == 1
