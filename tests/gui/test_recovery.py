"""Autosave and recovery: unsaved edits are written aside within seconds and offered back after a crash."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from contextdeck.engine import Context, Insert, Move, Remove, Replace, Shape, parse_document
from contextdeck.gui._autosave import serialise, snapshot
from contextdeck.gui._commands import EditCommand
from contextdeck.gui._recovery import RecoveryStore, process_start
from contextdeck.gui._session import DocumentSession

TEXT = {"type": "text", "role": "user", "text": "hello"}
EDIT = {"type": "state", "step": "unsaved edit"}


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """A settings file under tmp_path: never the user's own."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def recovery(tmp_path: Path) -> Path:
    return tmp_path / "recovery"


@pytest.fixture
def session(qtbot, settings: QSettings, recovery: Path):
    """A session autosaving 50 ms after a change."""
    made = DocumentSession(settings, recovery, autosave_delay_ms=50)
    yield made
    made.close()


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps([TEXT]))
    return path


def open_and_wait(qtbot, session: DocumentSession, path: Path) -> None:
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.open(path)


def change(session: DocumentSession) -> None:
    """An edit outside the undo stack, announced as the window does."""
    session.document.context.apply(Insert(len(session.document.context), EDIT))
    session.undo_stack.resetClean()  # the stack no longer matches the file
    session.mark_changed()


def edit_command(session: DocumentSession, edit: Any) -> EditCommand:
    """An engine edit as the window's own undo command."""
    return EditCommand(session.document.context, edit, "edit")


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def crash_after_autosave(qtbot: Any, session: DocumentSession, recovery: Path) -> None:
    """An edit autosaved, then its recovery files left behind as by a process that died."""
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    abandon(recovery)


def abandon(recovery: Path) -> None:
    """Make every recovery file look left behind by a process that died (its pid, its own file names)."""
    pid = dead_pid()
    for sidecar in recovery.glob("*.json"):
        meta = json.loads(sidecar.read_text())
        (recovery / f"dead-{sidecar.name}").write_text(json.dumps({**meta, "pid": pid}))
        sidecar.unlink()
        data = sidecar.with_suffix(".data")
        data.rename(recovery / f"dead-{data.name}")


# -- autosave --------------------------------------------------------------------------------------


def test_a_change_is_autosaved_with_a_sidecar(qtbot, session: DocumentSession, doc: Path, recovery: Path) -> None:
    """After mark_changed a recovery file with the edited document appears, with its original path and shape."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000) as saved:
        change(session)
    data = Path(saved.args[0])
    assert json.loads(data.read_text()) == [TEXT, EDIT]
    meta = json.loads(data.with_suffix(".json").read_text())
    assert meta["original"] == str(doc)
    assert meta["shape"] == "array"
    assert meta["pid"] == os.getpid()
    assert json.loads(doc.read_text()) == [TEXT], "autosave never touches the document's own file"


def test_a_clean_save_removes_the_recovery_file(qtbot, session: DocumentSession, doc: Path, recovery: Path) -> None:
    """Saving the document removes its recovery files."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    assert list(recovery.iterdir())
    assert session.save()
    qtbot.waitUntil(lambda: not list(recovery.iterdir()), timeout=5_000)


def test_opening_another_document_removes_the_recovery_files_on_a_worker(
        qtbot, session: DocumentSession, doc: Path, recovery: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edited document's recovery files go when another document opens, removed on a worker thread: unlinking a
    big file is the kernel freeing its blocks, most of a frame of the turn that hands the new document over."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    removers: list[str] = []
    remove = RecoveryStore.remove

    def noted(store: RecoveryStore, key: str) -> None:
        removers.append(threading.current_thread().name)
        remove(store, key)

    monkeypatch.setattr(RecoveryStore, "remove", noted)
    open_and_wait(qtbot, session, doc)
    qtbot.waitUntil(lambda: not list(recovery.iterdir()), timeout=5_000)
    assert removers
    assert threading.main_thread().name not in removers


def test_undoing_back_to_the_saved_state_removes_the_recovery_file(qtbot, session: DocumentSession, doc: Path,
                                                                   recovery: Path) -> None:
    """When undo brings the document back to what is saved, there is nothing to recover."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        session.undo_stack.push(edit_command(session, Insert(1, EDIT)))
    session.undo_stack.undo()
    qtbot.waitUntil(lambda: not list(recovery.iterdir()), timeout=5_000)


def test_closing_removes_the_recovery_file(qtbot, settings: QSettings, recovery: Path, doc: Path) -> None:
    """close() (after the window asked about unsaved changes) leaves no recovery file."""
    session = DocumentSession(settings, recovery, autosave_delay_ms=50)
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    session.close()
    assert not list(recovery.iterdir())


def test_changes_in_quick_succession_are_written_once_they_pause(qtbot, session: DocumentSession, doc: Path) -> None:
    """Autosave is debounced: several quick changes lead to one recovery file holding all of them."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000) as saved:
        for _ in range(5):
            change(session)
    assert json.loads(Path(saved.args[0]).read_text()) == [TEXT, *[EDIT] * 5]


def test_a_live_sessions_recovery_is_not_offered(qtbot, session: DocumentSession, settings: QSettings,
                                                 recovery: Path, doc: Path) -> None:
    """Recovery files of a running process (another window, this one) are never offered."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    other = DocumentSession(settings, recovery)
    assert other.recovery_candidates() == []


def test_recovery_of_another_live_process_is_not_offered(qtbot, session: DocumentSession, recovery: Path,
                                                         doc: Path) -> None:
    """A sidecar written by another process that is still running (another ContextDeck) is not offered."""
    open_and_wait(qtbot, session, doc)
    crash_after_autosave(qtbot, session, recovery)
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        for sidecar in recovery.glob("dead-*.json"):
            meta = json.loads(sidecar.read_text())
            sidecar.write_text(json.dumps({**meta, "pid": other.pid, "started": process_start(other.pid)}))
        assert session.recovery_candidates() == []
    finally:
        other.communicate(b"")
    assert len(session.recovery_candidates()) == 1, "once it has exited, its work is offered"


def test_a_reused_pid_does_not_hide_a_dead_sessions_recovery(qtbot, session: DocumentSession, recovery: Path,
                                                             doc: Path) -> None:
    """A sidecar whose pid now names a different (live) process is offered: its start time differs."""
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    if not Path(f"/proc/{os.getppid()}/stat").exists():
        pytest.skip("needs /proc to tell processes apart")
    for sidecar in recovery.glob("*.json"):
        meta = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({**meta, "pid": os.getppid(), "started": "1"}))
    assert [candidate.original_path for candidate in session.recovery_candidates()] == [doc]


def test_unreadable_sidecars_are_skipped(session: DocumentSession, recovery: Path) -> None:
    """A damaged sidecar or one without its data file is not offered (and does not break the list)."""
    recovery.mkdir()
    (recovery / "broken.json").write_text("{not json")
    (recovery / "orphan.json").write_text(json.dumps({"pid": dead_pid(), "time": "2026-01-01T00:00:00+00:00",
                                                      "shape": "array", "original": None}))
    assert session.recovery_candidates() == []


# -- recovering --------------------------------------------------------------------------------------


def test_recover_opens_the_unsaved_edits_dirty_at_the_original_path(qtbot, session: DocumentSession,
                                                                    settings: QSettings, recovery: Path,
                                                                    doc: Path) -> None:
    """A left-behind recovery file is listed with its path and time, and recovers as a dirty document."""
    open_and_wait(qtbot, session, doc)
    crash_after_autosave(qtbot, session, recovery)
    fresh = DocumentSession(settings, recovery, autosave_delay_ms=50)
    (candidate,) = fresh.recovery_candidates()
    assert candidate.original_path == doc
    assert candidate.shape is Shape.ARRAY
    with qtbot.waitSignals([fresh.documentReplaced, fresh.dirtyChanged], timeout=10_000):
        fresh.recover(candidate)
    assert fresh.document.context.messages == [TEXT, EDIT]
    assert fresh.path == doc
    assert fresh.is_dirty()
    assert fresh.recovery_candidates() == [], "a recovered file belongs to the session that took it"
    assert fresh.save()
    assert json.loads(doc.read_text()) == [TEXT, EDIT]
    qtbot.waitUntil(lambda: not list(recovery.iterdir()), timeout=5_000)
    fresh.close()


def test_an_untitled_document_recovers_untitled(qtbot, session: DocumentSession, settings: QSettings,
                                                recovery: Path) -> None:
    """Unsaved work in a never-saved document comes back with no path (Save As will ask for one)."""
    crash_after_autosave(qtbot, session, recovery)
    (candidate,) = session.recovery_candidates()
    assert candidate.original_path is None
    assert candidate.title == "Untitled"
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.recover(candidate)
    assert session.path is None
    assert session.document.context.messages == [EDIT]
    assert session.is_dirty()


def test_jsonl_recovers_as_jsonl(qtbot, session: DocumentSession, recovery: Path, tmp_path: Path) -> None:
    """A JSON Lines document's recovery file keeps its shape."""
    path = tmp_path / "lines.jsonl"
    path.write_text(json.dumps(TEXT) + "\n")
    open_and_wait(qtbot, session, path)
    crash_after_autosave(qtbot, session, recovery)
    (candidate,) = session.recovery_candidates()
    session.new()
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.recover(candidate)
    assert session.document.shape is Shape.JSONL
    assert session.document.context.messages == [TEXT, EDIT]


def test_discard_recovery_deletes_it(qtbot, session: DocumentSession, recovery: Path) -> None:
    """A discarded candidate's files are gone and it is not offered again."""
    crash_after_autosave(qtbot, session, recovery)
    (candidate,) = session.recovery_candidates()
    session.discard_recovery(candidate)
    assert session.recovery_candidates() == []
    assert not candidate.recovery_file.exists()


def test_a_file_changed_since_the_crash_is_reported_after_recovery(qtbot, session: DocumentSession,
                                                                   recovery: Path, doc: Path) -> None:
    """If the original changed after the crash, recovering says so and save() will not overwrite it."""
    open_and_wait(qtbot, session, doc)
    crash_after_autosave(qtbot, session, recovery)
    (candidate,) = session.recovery_candidates()
    session.new()
    doc.write_text("[]")
    with qtbot.waitSignals([session.documentReplaced, session.externallyModified], timeout=10_000):
        session.recover(candidate)
    with qtbot.waitSignal(session.saveFailed):
        assert not session.save()
    assert doc.read_text() == "[]"


CRASHER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from PySide6.QtCore import QEventLoop, QSettings
    from PySide6.QtGui import QGuiApplication
    from contextdeck.engine import Insert
    from contextdeck.gui._commands import EditCommand
    from contextdeck.gui._session import DocumentSession


    app = QGuiApplication([])
    path, folder = Path(sys.argv[1]), Path(sys.argv[2])
    session = DocumentSession(QSettings(str(folder / "child.ini"), QSettings.Format.IniFormat), folder / "recovery",
                              autosave_delay_ms=50)
    loop = QEventLoop()
    session.documentReplaced.connect(loop.quit)
    session.open(path)
    loop.exec()
    session.autosaved.connect(lambda path: print("autosaved", flush=True))
    context = session.document.context
    for number in range(3):
        session.undo_stack.push(EditCommand(context, Insert(len(context), {"type": "state", "step": number}), "edit"))
        session.mark_changed()
    app.exec()
    """
)


def test_recovery_after_a_crash_restores_the_unsaved_edits(qtbot, session: DocumentSession, doc: Path,
                                                           tmp_path: Path) -> None:
    """A process that edits, autosaves and is SIGKILLed leaves its edits for the next session to recover."""
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    child = subprocess.Popen([sys.executable, str(script), str(doc), str(tmp_path)], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "autosaved"
    child.send_signal(signal.SIGKILL)
    child.wait()
    (candidate,) = session.recovery_candidates()
    assert candidate.pid == child.pid
    assert candidate.original_path == doc
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.recover(candidate)
    assert session.document.context.messages == [TEXT, *({"type": "state", "step": number} for number in range(3))]
    assert session.is_dirty()
    assert session.path == doc
    assert json.loads(doc.read_text()) == [TEXT], "the crash left the saved file as it was"


def test_the_store_writes_and_removes_both_files(tmp_path: Path) -> None:
    """A recovery entry is a data file and its sidecar; removing it removes both."""
    store = RecoveryStore(tmp_path / "new" / "folder")
    store.write("k", [b"[", b"]\n"], None, Shape.ARRAY, None)
    data, sidecar = store.paths("k")
    assert data.read_bytes() == b"[]\n"
    assert json.loads(sidecar.read_text())["shape"] == "array"
    store.remove("k")
    assert not data.exists()
    assert not sidecar.exists()


@pytest.mark.parametrize(
    ("raw", "jsonl"),
    [
        (b'[{"type":"state","n":123456789012345678901234567890,"s":"caf\xc3\xa9"},{"type":"text","text":"x"}]', False),
        (b"[]", False),
        (b'{"z":1,"context":[{"type":"text","text":"x"}],"schema":{"type":"object"},"solution":{"calls":[]}}', False),
        (b'{"context":[]}', False),
        (b'{"type":"text","text":"a"}\n{"type":"state","x":[1,2]}\n', True),
    ],
)
def test_recovery_data_reads_back_as_the_same_document(raw: bytes, jsonl: bool) -> None:
    """The recovery file (written a message at a time) parses to the same document, shape and key order."""
    document = parse_document(raw, "doc", jsonl=jsonl)
    again = parse_document(b"".join(serialise(document)), "recovery", jsonl=jsonl)
    assert again.shape is document.shape
    assert again.dumps() == document.dumps()


def test_the_recovery_file_is_the_document_as_it_was_when_the_autosave_started() -> None:
    """The worker writes the snapshot taken on the GUI thread: edits made while it writes (an insert, a
    replace, a move, a remove) are in the next recovery file, never half in this one."""
    raw = json.dumps([{"type": "state", "data": {"n": n}} for n in range(6)]).encode()
    document = parse_document(raw, "doc")
    before = document.dumps()
    taken = snapshot(document)
    context = document.context
    context.apply(Insert(2, TEXT))
    context.apply(Replace(0, EDIT))
    context.apply(Move(5, 1))
    context.apply(Remove(3))
    assert document.dumps() != before
    assert parse_document(b"".join(serialise(taken)), "recovery").dumps() == before


def test_the_autosave_snapshot_is_out_of_the_collectors_way() -> None:
    """The snapshot's list of every message lives while the worker writes (a second or more at 100,000 messages):
    it is frozen at once, so no young collection meanwhile walks its items (8-10 ms each at that size)."""
    raw = json.dumps([{"type": "state", "data": {"n": n}} for n in range(6)]).encode()
    document = parse_document(raw, "doc")
    try:
        messages = snapshot(document).context.messages
        assert gc.is_tracked(messages)
        assert not any(thing is messages for generation in range(3) for thing in gc.get_objects(generation))
    finally:
        gc.unfreeze()


def test_a_failed_autosave_is_reported_without_touching_the_document(qtbot, settings: QSettings, tmp_path: Path,
                                                                      doc: Path) -> None:
    """When the recovery folder cannot be written, autosaveFailed says where; the document stays dirty."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the recovery folder should be")
    session = DocumentSession(settings, blocker / "recovery", autosave_delay_ms=50)
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaveFailed, timeout=5_000) as failed:
        change(session)
    assert "not-a-folder" in failed.args[0]
    assert session.is_dirty()
    assert json.loads(doc.read_text()) == [TEXT]
    session.close()


def test_the_autosave_serialises_a_step_at_a_time_with_the_lock_free_between(monkeypatch) -> None:
    """Serialising flat out beside a turn of the GUI thread made it wait for the interpreter lock at each call
    into Qt (an undo at 100,000 messages: 25-60 ms instead of 6): the worker pauses between steps."""
    from contextdeck.gui import _autosave

    events: list[str] = []
    monkeypatch.setattr(_autosave.time, "sleep", lambda seconds: events.append(f"pause {seconds}"))
    pieces = (events.append("piece") or b"x" for _ in range(2 * _autosave.PIECES_PER_STEP + 1))
    assert b"".join(_autosave.paced(pieces)) == b"x" * (2 * _autosave.PIECES_PER_STEP + 1)
    pause = f"pause {_autosave.STEP_PAUSE_S}"
    step = ["piece"] * _autosave.PIECES_PER_STEP
    assert events == [*step, pause, *step, pause, "piece", pause]


def test_the_autosaved_copy_of_the_messages_is_let_go_of_to_be_freed_in_slices(
        qtbot, session: DocumentSession, doc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The list of the messages an autosave wrote is handed to the graveyard (freed a slice per turn in the
    window), not freed at once in the turn that hears the write has ended."""
    from contextdeck.gui import _session

    let_go: list[object] = []
    monkeypatch.setattr(_session, "let_go", lambda *things: let_go.extend(things))
    open_and_wait(qtbot, session, doc)
    with qtbot.waitSignal(session.autosaved, timeout=5_000):
        change(session)
    assert let_go == [[TEXT, EDIT]]


def test_the_autosave_copies_the_messages_a_step_a_turn_then_writes_them(
        qtbot, session: DocumentSession, doc: Path, recovery: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a million messages the copy of the list an autosave writes is 12-30 ms of the GUI thread, more than a
    turn: it is taken a step at a time in the window's slices (`Context.view_steps`, the messages alone), and
    written once whole. An edit made between two steps is in what is written; a document opened meanwhile stops
    the copy. Before, the turn of the autosave's timer copied the whole list."""
    view_steps = Context.view_steps
    steps: list[bool] = []
    held: list[bool] = []

    def one_at_a_time(context: Context, step: int | None = None, *, infos: bool = True) -> Any:
        taking = view_steps(context, 1, infos=infos)
        while True:
            try:
                next(taking)
            except StopIteration as done:
                return done.value
            steps.append(infos)
            yield
            while held:  # part-way, a turn at a time, until the test has edited
                yield

    monkeypatch.setattr(Context, "view_steps", one_at_a_time)
    open_and_wait(qtbot, session, doc)
    session.autosave_delay_ms = 60_000  # the test starts the autosave itself
    change(session)
    held.append(True)
    session._autosave()
    assert steps == []  # nothing copied or written in the timer's turn
    assert session._autosave_task is None
    qtbot.waitUntil(lambda: bool(steps), timeout=5_000)
    qtbot.wait(50)
    assert steps == [False]  # the messages alone: a recovery file needs no parsed form
    assert session._autosave_task is None  # nothing written part-way
    late = {"type": "text", "role": "user", "text": "edited while the copy was taken"}
    session.document.context.apply(Insert(1, late))
    with qtbot.waitSignal(session.autosaved, timeout=5_000) as written:
        held.clear()
    assert len(steps) == 3  # the copy started again after the edit
    assert json.loads(written.args[0].read_text()) == [TEXT, late, EDIT]
    change(session)
    held.append(True)
    session._autosave()
    qtbot.waitUntil(lambda: len(steps) == 4, timeout=5_000)
    open_and_wait(qtbot, session, doc)
    held.clear()
    qtbot.wait(100)
    assert len(steps) == 4  # stopped: nothing of it is written
    assert session._autosave_task is None
