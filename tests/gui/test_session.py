"""The document session: opening each shape, malformed files, saving, recent files, load progress and cancel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QSettings

from contextdeck import _runtime
from contextdeck.engine import Insert, Shape
from contextdeck.gui import _loader
from contextdeck.gui._commands import EditCommand
from contextdeck.gui._session import DocumentSession

TEXT = {"type": "text", "role": "user", "text": "hello"}


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """A settings file under tmp_path: never the user's own."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def session(qtbot, settings: QSettings, tmp_path: Path):
    """A session with its recovery folder under tmp_path and a short autosave delay."""
    made = DocumentSession(settings, tmp_path / "recovery", autosave_delay_ms=50)
    yield made
    made.close()


def open_and_wait(qtbot, session: DocumentSession, path: Path) -> None:
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.open(path)


def edit_command(session: DocumentSession, edit: Any) -> EditCommand:
    """An engine edit as the window's own undo command."""
    return EditCommand(session.document.context, edit, "edit")


def edit(session: DocumentSession, message: dict[str, object] | None = None) -> None:
    session.undo_stack.push(edit_command(session, Insert(len(session.document.context), message or TEXT)))
    session.mark_changed()


# -- opening ---------------------------------------------------------------------------------------


def test_starts_with_an_empty_untitled_document(session: DocumentSession) -> None:
    """A new session holds an empty bare-array document with no file, not dirty."""
    assert len(session.document.context) == 0
    assert session.document.shape is Shape.ARRAY
    assert session.path is None
    assert not session.is_dirty()


@pytest.mark.parametrize(
    ("name", "content", "shape"),
    [
        ("bare.json", json.dumps([TEXT, TEXT]), Shape.ARRAY),
        ("request.json", json.dumps({"context": [TEXT, TEXT], "schema": {"type": "object"}}), Shape.REQUEST),
        ("lines.jsonl", json.dumps(TEXT) + "\n" + json.dumps(TEXT) + "\n", Shape.JSONL),
    ],
)
def test_opens_each_shape(qtbot, session: DocumentSession, tmp_path: Path, name: str, content: str,
                          shape: Shape) -> None:
    """A bare array, a saved request and JSON Lines each open with their messages, shape and path."""
    path = tmp_path / name
    path.write_text(content)
    with qtbot.waitSignals([session.loadStarted, session.loadFinished, session.pathChanged], timeout=10_000):
        open_and_wait(qtbot, session, path)
    assert len(session.document.context) == 2
    assert session.document.shape is shape
    assert session.path == path
    assert not session.is_dirty()


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("broken.json", '[\n  {"type": "text",\n   "text": }\n]', "broken.json:3:"),
        ("broken.jsonl", json.dumps(TEXT) + "\n{oops\n", "broken.jsonl:2:"),
        ("notmessage.json", json.dumps([TEXT, 5]), "message 1"),
    ],
)
def test_a_malformed_file_leaves_the_document_untouched(qtbot, session: DocumentSession, tmp_path: Path,
                                                       name: str, content: str, where: str) -> None:
    """A malformed file reports file and line/column or message index; the open document stays as it was."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps([TEXT]))
    open_and_wait(qtbot, session, good)
    edit(session)
    before = session.document
    bad = tmp_path / name
    bad.write_text(content)
    with qtbot.waitSignal(session.loadFailed, timeout=10_000) as failed:
        session.open(bad)
    assert where in failed.args[0]
    assert session.document is before
    assert len(before.context) == 2
    assert session.path == good
    assert session.is_dirty()


def test_a_missing_file_fails_with_its_name(qtbot, session: DocumentSession, tmp_path: Path) -> None:
    """Opening a file that does not exist reports its name and keeps the open document."""
    before = session.document
    with qtbot.waitSignal(session.loadFailed, timeout=10_000) as failed:
        session.open(tmp_path / "nowhere.json")
    assert "nowhere.json" in failed.args[0]
    assert session.document is before


# -- saving ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["refund_workflow.json", "moderation_batch.json", "seed_output.json"])
def test_save_then_reopen_gives_identical_json(qtbot, session: DocumentSession, examples: Path, tmp_path: Path,
                                               example: str) -> None:
    """Saving an opened example and opening it again gives the same JSON value, keys in the same order."""
    original = json.loads((examples / example).read_text())
    copy = tmp_path / example
    copy.write_text((examples / example).read_text())
    open_and_wait(qtbot, session, copy)
    edit(session)
    assert session.is_dirty()
    with qtbot.waitSignal(session.dirtyChanged) as dirty:
        assert session.save()
    assert dirty.args == [False]
    saved = json.loads(copy.read_text())
    if isinstance(original, list):
        expected = [*original, TEXT]
    else:
        expected = {**original, "context": [*original["context"], TEXT]}
    assert json.dumps(saved) == json.dumps(expected)
    open_and_wait(qtbot, session, copy)
    assert json.dumps(session.document.to_json()) == json.dumps(expected)


def test_save_as_jsonl_writes_lines_and_a_request_cannot(qtbot, session: DocumentSession, tmp_path: Path) -> None:
    """Save As to .jsonl writes one message per line; a saved request refuses to lose its schema that way."""
    edit(session)
    target = tmp_path / "out.jsonl"
    assert session.save_as(target)
    assert session.path == target
    assert [json.loads(line) for line in target.read_text().splitlines()] == [TEXT]
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"context": [TEXT], "schema": {"type": "object"}}))
    open_and_wait(qtbot, session, request)
    with qtbot.waitSignal(session.saveFailed) as failed:
        assert not session.save_as(tmp_path / "request.jsonl")
    assert "JSON Lines" in failed.args[0]
    assert not (tmp_path / "request.jsonl").exists()


def test_save_without_a_path_asks_for_save_as(qtbot, session: DocumentSession) -> None:
    """An untitled document cannot be saved in place: save() fails with a message."""
    with qtbot.waitSignal(session.saveFailed) as failed:
        assert not session.save()
    assert "Save As" in failed.args[0]


def test_a_failed_save_reports_and_keeps_the_document_dirty(qtbot, session: DocumentSession, tmp_path: Path) -> None:
    """Saving into a folder that does not exist fails with saveFailed; nothing changes."""
    edit(session)
    with qtbot.waitSignal(session.saveFailed) as failed:
        assert not session.save_as(tmp_path / "no" / "such" / "folder.json")
    assert "folder.json" in failed.args[0]
    assert session.is_dirty()
    assert session.path is None


def test_undo_back_to_the_saved_state_is_clean(qtbot, session: DocumentSession, tmp_path: Path) -> None:
    """The undo stack's clean state is the saved state: undoing to it clears dirty, redoing sets it."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps([TEXT]))
    open_and_wait(qtbot, session, path)
    with qtbot.waitSignal(session.dirtyChanged) as dirty:
        edit(session)
    assert dirty.args == [True]
    with qtbot.waitSignal(session.dirtyChanged) as dirty:
        session.undo_stack.undo()
    assert dirty.args == [False]
    assert not session.is_dirty()


# -- recent files ----------------------------------------------------------------------------------


def test_recent_files_most_recent_first_at_most_ten_missing_pruned(qtbot, session: DocumentSession,
                                                                   settings: QSettings, tmp_path: Path) -> None:
    """Opened and saved files go first in the recent list, at most ten, and deleted ones disappear."""
    paths = []
    for number in range(12):
        path = tmp_path / f"doc{number}.json"
        path.write_text(json.dumps([TEXT]))
        paths.append(path)
        open_and_wait(qtbot, session, path)
    assert session.recent_files() == [str(path) for path in reversed(paths[2:])]
    open_and_wait(qtbot, session, paths[5])
    assert session.recent_files()[:2] == [str(paths[5]), str(paths[11])]
    paths[11].unlink()
    assert str(paths[11]) not in session.recent_files()
    assert len(session.recent_files()) == 9
    reread = QSettings(settings.fileName(), QSettings.Format.IniFormat)
    assert str(paths[5]) in reread.value("files/recent")


# -- large documents: progress and cancel -----------------------------------------------------------

LARGE = 100_000


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated document of 100,000 messages (several MiB)."""
    path = tmp_path_factory.mktemp("large") / "large.json"
    messages = [{"type": "text", "role": "user", "text": f"message {number}"} for number in range(LARGE)]
    path.write_text(json.dumps(messages, indent=1))
    return path


def test_a_large_file_loads_with_progress(qtbot, session: DocumentSession, large: Path) -> None:
    """Loading reports growing progress (thousandths) up to the whole, then the whole document arrives."""
    progress: list[tuple[int, int]] = []
    session.loadProgress.connect(lambda done, total: progress.append((done, total)))
    with qtbot.waitSignals([session.loadFinished, session.documentReplaced], timeout=60_000):
        session.open(large)
    assert len(progress) > 3
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    assert progress[-1] == (1000, 1000)
    assert len(session.document.context) == LARGE


def test_a_loads_result_is_handed_over_in_a_later_slice(qtbot, session: DocumentSession, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn a load's result arrives in replaces nothing: the views take the document in a slice of the window's
    turns of its own, and a cancel before that slice keeps the open document."""
    path = tmp_path / "two.json"
    path.write_text(json.dumps([TEXT, TEXT]))
    monkeypatch.setattr(_loader.LoadTask, "run", lambda task: None)  # its result is delivered here, by hand
    before = session.document
    for cancel in (True, False):
        session.open(path)
        task = session._load
        assert task is not None
        task.signals.loaded.emit(task._load())  # (from this thread: `_loaded` runs in this call)
        assert session.document is before
        assert session.is_loading()
        if cancel:
            session.cancel_load()
            qtbot.wait(50)
            assert session.document is before
            assert not session.is_loading()
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        pass
    assert len(session.document.context) == 2
    assert not session.is_loading()


def test_cancelling_a_load_keeps_the_open_document(qtbot, session: DocumentSession, large: Path) -> None:
    """cancel_load() during a load emits loadCancelled, and the parsed result never replaces the document."""
    before = session.document
    session.loadProgress.connect(lambda *_: session.cancel_load())
    with qtbot.assertNotEmitted(session.documentReplaced), qtbot.assertNotEmitted(session.loadFinished):
        with qtbot.waitSignal(session.loadCancelled, timeout=60_000):
            session.open(large)
        assert session.wait_idle(60_000)
        QCoreApplication.processEvents()  # deliver whatever the worker sent before it noticed (then dropped)
    assert session.document is before
    assert not session.is_loading()


def test_opening_while_loading_cancels_the_first(qtbot, session: DocumentSession, large: Path,
                                                 tmp_path: Path) -> None:
    """A second open() during a load cancels the first: the second file is what ends up open."""
    small = tmp_path / "small.json"
    small.write_text(json.dumps([TEXT]))
    with qtbot.waitSignal(session.loadCancelled, timeout=10_000):
        session.open(large)
        session.open(small)
    qtbot.waitUntil(lambda: session.path == small, timeout=60_000)
    assert session.wait_idle(60_000)
    QCoreApplication.processEvents()
    assert session.path == small
    assert len(session.document.context) == 1


def test_new_replaces_the_document_with_an_empty_untitled_one(qtbot, session: DocumentSession,
                                                               tmp_path: Path) -> None:
    """new() gives an empty bare array without a path, not dirty, with an empty undo history."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps([TEXT]))
    open_and_wait(qtbot, session, path)
    edit(session)
    with qtbot.waitSignals([session.documentReplaced, session.pathChanged, session.dirtyChanged]):
        session.new()
    assert len(session.document.context) == 0
    assert session.path is None
    assert not session.is_dirty()
    assert session.undo_stack.count() == 0


def test_json_lines_saved_as_json_become_an_array(qtbot, session: DocumentSession, tmp_path: Path) -> None:
    """Save As with a .json name turns JSON Lines into a bare array (and it is in the recent files)."""
    lines = tmp_path / "lines.jsonl"
    lines.write_text(json.dumps(TEXT) + "\n")
    open_and_wait(qtbot, session, lines)
    target = tmp_path / "array.json"
    assert session.save_as(target)
    assert json.loads(target.read_text()) == [TEXT]
    assert session.document.shape is Shape.ARRAY
    assert session.recent_files()[0] == str(target)


def test_relative_paths_are_made_absolute(qtbot, session: DocumentSession, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A file opened or saved by a relative name keeps its absolute path (recovery outlives the directory)."""
    monkeypatch.chdir(tmp_path)
    Path("rel.json").write_text(json.dumps([TEXT]))
    open_and_wait(qtbot, session, Path("rel.json"))
    assert session.path is not None
    assert session.path.is_absolute()
    assert session.path.resolve() == (tmp_path / "rel.json").resolve()
    assert session.save_as("other.json")
    assert session.path.is_absolute()
    assert session.path.resolve() == (tmp_path / "other.json").resolve()


def test_load_progress_is_reported_at_most_once_a_frame(monkeypatch, tmp_path: Path) -> None:
    """Within one PROGRESS_INTERVAL only the first report goes out (the whole load always does)."""
    now = [100.0]
    monkeypatch.setattr(_loader.time, "monotonic", lambda: now[0])
    task = _loader.LoadTask(tmp_path / "doc.json", None)
    sent: list[int] = []
    task.signals.progress.connect(lambda done, _total: sent.append(done))
    task._progress(0.1)
    task._progress(0.2)  # same instant: held back
    now[0] += _loader.PROGRESS_INTERVAL
    task._progress(0.3)
    task._progress(1.0)  # the end is always reported
    assert sent == [100, 300, 1000]


@pytest.mark.parametrize("ending", ["malformed", "cancelled", "loaded"])
def test_only_a_load_that_opens_its_document_counts_it_as_the_open_one(monkeypatch, tmp_path: Path,
                                                                        ending: str) -> None:
    """What a load froze counts as the document open now (alive, not garbage a collection of everything would look
    for) only when the load gives a document that opens: a failed or cancelled one leaves the open document's
    count as it was."""
    monkeypatch.setattr(_runtime, "_document", 12_345)
    monkeypatch.setattr(_runtime, "_alive", 23_456)
    source = tmp_path / "doc.json"
    source.write_text("[{\"type\": " if ending == "malformed" else json.dumps([TEXT] * 50))
    task = _loader.LoadTask(source, source)
    if ending == "cancelled":
        task.signals.progress.connect(lambda *_: task.cancel())
    task.run()
    counted = (_runtime._document, _runtime._alive)
    assert (counted == (12_345, 23_456)) == (ending != "loaded")
