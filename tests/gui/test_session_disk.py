"""The file on disk: changes by other programs are noticed and never overwritten silently; saves are atomic."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from contextdeck.engine import Insert, Replace, sweep_temporaries
from contextdeck.gui._session import DocumentSession

TEXT = {"type": "text", "role": "user", "text": "hello"}


@pytest.fixture
def session(qtbot, tmp_path: Path):
    """A session with settings and recovery folder under tmp_path."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = DocumentSession(settings, tmp_path / "recovery", autosave_delay_ms=50)
    yield made
    made.close()


@pytest.fixture
def opened(qtbot, session: DocumentSession, tmp_path: Path) -> Path:
    """A document on disk, open in the session."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps([TEXT]))
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.open(path)
    return path


def test_a_change_by_another_program_is_reported(qtbot, session: DocumentSession, opened: Path) -> None:
    """Writing the open file in place (as another program would) emits externallyModified naming it, once per change."""
    with qtbot.waitSignal(session.externallyModified, timeout=5_000) as changed:
        opened.write_text(json.dumps([TEXT, TEXT]))
    assert str(opened) in changed.args[0]
    assert session.externally_modified()
    with qtbot.assertNotEmitted(session.externallyModified):
        session.check_disk()  # the same change again: already said
    with qtbot.waitSignal(session.externallyModified, timeout=5_000):
        opened.write_text("[]")  # a new change: said again


def test_an_editor_that_replaces_the_file_is_noticed_every_time(qtbot, session: DocumentSession,
                                                               opened: Path) -> None:
    """A file replaced by rename (how many editors save) is noticed, and so is the next change after it."""
    temporary = opened.with_name("doc.json.new")
    temporary.write_text(json.dumps([TEXT, TEXT]))
    with qtbot.waitSignal(session.externallyModified, timeout=5_000):
        os.replace(temporary, opened)
    with qtbot.waitSignal(session.externallyModified, timeout=5_000):
        opened.write_text(json.dumps([TEXT, TEXT, TEXT]))


def test_deleting_the_file_is_reported(qtbot, session: DocumentSession, opened: Path) -> None:
    """Deleting the open file emits externallyModified saying so; saving writes it back."""
    with qtbot.waitSignal(session.externallyModified, timeout=5_000) as changed:
        opened.unlink()
    assert "deleted" in changed.args[0]
    assert session.save()
    assert json.loads(opened.read_text()) == [TEXT]


def test_save_refuses_to_overwrite_a_changed_file_unless_forced(qtbot, session: DocumentSession,
                                                                opened: Path) -> None:
    """save() after another program's change returns False with saveFailed and leaves its content; force=True writes."""
    theirs = json.dumps([TEXT, {"type": "text", "text": "theirs"}])
    opened.write_text(theirs)  # no waiting for the watcher: save() looks for itself
    with qtbot.waitSignal(session.saveFailed) as failed:
        assert not session.save()
    assert "changed on disk" in failed.args[0]
    assert opened.read_text() == theirs
    assert session.save(force=True)
    assert json.loads(opened.read_text()) == [TEXT]
    assert not session.externally_modified()


def test_a_same_size_rewrite_is_still_refused(qtbot, session: DocumentSession, opened: Path) -> None:
    """A rewrite of the same size and modification time is caught by the content hash."""
    before = opened.stat()
    opened.write_text(json.dumps([{**TEXT, "text": "HELLO"}]))
    os.utime(opened, ns=(before.st_atime_ns, before.st_mtime_ns))
    with qtbot.waitSignal(session.saveFailed):
        assert not session.save()


def test_touching_without_changing_is_not_a_change(qtbot, session: DocumentSession, opened: Path) -> None:
    """A new modification time with the same content is not reported, and save() goes ahead."""
    os.utime(opened, ns=(1, 1))
    with qtbot.assertNotEmitted(session.externallyModified):
        session.check_disk()
    assert session.save()


def test_our_own_save_is_not_an_external_change(qtbot, session: DocumentSession, opened: Path) -> None:
    """After the session saves, the file is what it knows: no externallyModified, and saving again works."""
    session.document.context.append(TEXT)
    assert session.save()
    with qtbot.assertNotEmitted(session.externallyModified):
        session.check_disk()
    assert session.save()


def test_save_as_elsewhere_is_allowed_after_an_external_change(qtbot, session: DocumentSession, opened: Path,
                                                               tmp_path: Path) -> None:
    """Saving under another name is the way out of a conflict: it works and leaves the changed file alone."""
    opened.write_text("[]")
    other = tmp_path / "mine.json"
    assert session.save_as(other)
    assert opened.read_text() == "[]"
    assert json.loads(other.read_text()) == [TEXT]
    assert session.path == other


# -- atomic saves under SIGKILL ----------------------------------------------------------------------

SAVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings
    from contextdeck.engine import parse_document
    from contextdeck.gui._session import DocumentSession

    app = QCoreApplication([])
    target, folder = Path(sys.argv[1]), Path(sys.argv[2])
    session = DocumentSession(QSettings(str(folder / "child.ini"), QSettings.Format.IniFormat), folder / "rec")
    loop = QEventLoop()
    session.documentReplaced.connect(loop.quit)
    session.open(target)
    loop.exec()
    versions = [parse_document((folder / name).read_bytes()) for name in ("a.json", "b.json")]
    turn = 0
    while True:
        session._document = versions[turn % 2]  # swap the content wholesale: each save writes a whole version
        print("saving", turn, flush=True)
        if not session.save(force=True):
            sys.exit("save failed")
        turn += 1
    """
)


def _big(label: str, count: int = 20_000) -> str:
    messages = [{"type": "text", "role": "user", "text": f"{label} {number} " + "x" * 60} for number in range(count)]
    return json.dumps(messages, indent=2) + "\n"


def test_a_save_killed_at_any_moment_leaves_the_old_file_or_the_new(tmp_path: Path) -> None:
    """SIGKILL during repeated saves of a large document always leaves one whole version on disk, never a mix."""
    versions = {label: _big(label) for label in ("start", "a", "b")}
    for label in ("a", "b"):
        (tmp_path / f"{label}.json").write_text(versions[label])
    expected = {label: json.loads(text) for label, text in versions.items()}
    target = tmp_path / "target.json"
    script = tmp_path / "saver.py"
    script.write_text(SAVER)
    chooser = random.Random(5)
    mid_save = 0
    for _round in range(6):
        target.write_text(versions["start"])
        child = subprocess.Popen(
            [sys.executable, str(script), str(target), str(tmp_path)],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
        assert child.stdout is not None
        for _ in range(chooser.randint(1, 6)):
            announced = child.stdout.readline().split()
            assert announced[:1] == ["saving"], "the saver stopped early"
        child.send_signal(signal.SIGKILL)  # somewhere inside the save that was just announced
        child.wait()
        content = json.loads(target.read_bytes())
        matches = [label for label, value in expected.items() if value == content]
        assert matches, "the file holds neither the old nor the new document"
        turn = int(announced[1])
        previous = "start" if turn == 0 else "ab"[(turn - 1) % 2]
        mid_save += matches == [previous]
    assert mid_save, "no kill landed inside a save: the test proved nothing"
    # What the killed saves left is removed by the next save or open of the file (the savers are all gone).
    sweep_temporaries(tmp_path, "target.json")
    assert list(tmp_path.glob(".target.json.*")) == []


def test_a_save_replaces_the_file_not_its_content(qtbot, session: DocumentSession, opened: Path) -> None:
    """The saved file is a new file renamed over the old (an open reader keeps the old content whole)."""
    with opened.open("rb") as reader:
        session.document.context.apply(Replace(0, {**TEXT, "text": "new"}))
        assert session.save()
        assert json.loads(reader.read()) == [TEXT]
    assert json.loads(opened.read_text()) == [{**TEXT, "text": "new"}]


# -- saving on a worker --------------------------------------------------------------------------------


def test_a_save_writes_on_a_worker_while_the_window_thread_runs_on(qtbot, session: DocumentSession, opened: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is serialised, hashed and written on a worker: the window's thread keeps its timers meanwhile
    (a run goes on) and the file holds what the document held when the user asked. An edit made meanwhile
    leaves the document unsaved, with no undo step marked as saved."""
    from PySide6.QtCore import QTimer

    from contextdeck.gui import _autosave
    from contextdeck.gui._commands import EditCommand

    edited = threading.Event()
    write = _autosave.SaveTask._write

    def slow_write(task: _autosave.SaveTask) -> object:
        assert edited.wait(10), "the window's thread never ran a timer while the file was written"
        return write(task)

    def meanwhile() -> None:  # a timer, as a run's tick is: it runs during the save
        later = {"type": "text", "role": "user", "text": "later"}
        session.undo_stack.push(EditCommand(session.document.context, Insert(1, later), "edit"))
        edited.set()

    monkeypatch.setattr(_autosave.SaveTask, "_write", slow_write)
    QTimer.singleShot(0, meanwhile)
    assert session.save()
    assert json.loads(opened.read_text()) == [TEXT]  # as it was when saved
    assert len(session.document.context) == 2
    assert session.is_dirty()
    session.undo_stack.undo()  # back to the saved content: the stack never called it saved
    assert session.is_dirty()
    with qtbot.assertNotEmitted(session.externallyModified):
        session.check_disk()  # the fingerprint the worker took is the file's


def test_a_second_save_while_one_is_written_is_refused_in_words(qtbot, session: DocumentSession, opened: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtCore import QTimer

    from contextdeck.gui import _autosave

    started = threading.Event()
    write = _autosave.SaveTask._write
    monkeypatch.setattr(_autosave.SaveTask, "_write", lambda task: started.wait(10) and write(task))
    answers: list[bool] = []

    def again() -> None:
        with qtbot.waitSignal(session.saveFailed, timeout=1_000) as failed:
            answers.append(session.save())
        answers.append("already under way" in failed.args[0])
        started.set()

    QTimer.singleShot(0, again)
    assert session.save()
    assert answers == [False, True]
    assert not session.is_dirty()
