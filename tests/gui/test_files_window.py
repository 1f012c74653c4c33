"""The window's files and inputs: saves keep mode and links and say a full disk in words, what killed saves
left is swept, content that could not be saved is refused at the edit, and opening never reaches the network."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from contextdeck.engine import Insert, Replace
from contextdeck.gui._app import settle
from contextdeck.gui._recovery import RecoveryStore
from contextdeck.gui._session import DocumentSession
from loopback import counting_server, remote_document

TEXT = {"type": "text", "role": "user", "text": "hello"}


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def session(qtbot: Any, tmp_path: Path) -> Any:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = DocumentSession(settings, tmp_path / "recovery", autosave_delay_ms=50)
    yield made
    made.close()


def open_in(qtbot: Any, session: DocumentSession, path: Path) -> None:
    with qtbot.waitSignal(session.documentReplaced, timeout=10_000):
        session.open(path)


def edit_and_save(session: DocumentSession, qtbot: Any, target: Path | None = None) -> list[str]:
    failures: list[str] = []
    session.saveFailed.connect(failures.append)
    session.document.context.apply(Replace(0, {**TEXT, "text": "x" * 200_000}))
    session.save_as(target) if target is not None else session.save()
    return failures


def test_a_save_keeps_the_mode_and_the_link(qtbot: Any, session: DocumentSession, tmp_path: Path) -> None:
    """Saving a document opened through a link to a 0640 file: still a link, still 0640."""
    real = tmp_path / "real.json"
    real.write_text(json.dumps([TEXT]))
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    open_in(qtbot, session, link)
    assert edit_and_save(session, qtbot) == []
    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert json.loads(real.read_text())[0]["text"] == "x" * 200_000


def test_a_full_disk_is_said_in_words(qtbot: Any, session: DocumentSession, tmp_path: Path, full_disk: Path) -> None:
    """ENOSPC: the failure says "No space left on device" (Qt said "Unknown error"), the file stays whole."""
    target = full_disk / "doc.json"
    target.write_text(json.dumps([TEXT]))
    open_in(qtbot, session, target)
    (failure,) = edit_and_save(session, qtbot)
    assert failure == f"Could not save {target}: No space left on device"
    assert json.loads(target.read_text()) == [TEXT]


def test_opening_a_file_sweeps_what_killed_saves_left(qtbot: Any, session: DocumentSession, tmp_path: Path) -> None:
    """The temporary files of saves of this file whose process ended are removed when it is opened."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps([TEXT]))
    left = tmp_path / f".doc.json.{dead_pid()}-0123abcd.tmp"
    left.write_bytes(b"half a save")
    open_in(qtbot, session, path)
    assert not left.exists()


def test_the_recovery_folder_is_swept(tmp_path: Path) -> None:
    """At start the recovery folder loses what killed writers left: temporary files and data files that never
    got their sidecar (it looked only at *.json, so they stayed for ever); a live writer's stay."""
    folder = tmp_path / "recovery"
    folder.mkdir()
    dead = dead_pid()
    stale = [folder / f".{dead}-0123456789ab.data.{dead}-0123abcd.tmp", folder / f"{dead}-0123456789ab.data"]
    live = [folder / f"{os.getpid()}-0123456789ab.data", folder / f".x.data.{os.getppid()}-89abcdef.tmp"]
    for path in stale + live:
        path.write_bytes(b"unsaved work, half written")
    assert RecoveryStore(folder).candidates() == []
    assert [path.exists() for path in stale + live] == [False, False, True, True]


def test_content_that_could_not_be_saved_is_refused_at_the_edit(qtbot: Any, open_messages: Any) -> None:
    """An edit holding 10**5000 is refused with its place and reason; the document stays savable (a save used
    to fail with ValueError for ever after such a value came in)."""
    window = open_messages([{"type": "state", "data": {"n": 1}}], "doc.json")
    window.apply_edit(Insert(1, {"type": "state", "data": {"n": 10**5000}}))
    assert len(window.context()) == 1
    assert window.statusBar().currentMessage() == \
        "Edit refused: message 1: $.data.n: an integer of more than 4300 digits"
    window.apply_edit(Insert(1, {"type": "state", "data": {"n": 2}}))
    assert window.session.save()


def test_opening_a_document_never_reaches_the_network(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """Remote `$ref`s in a data schema and a tool schema: the window opens, checks and shows the form without
    one request (12 were made on open before)."""
    with counting_server() as server:
        path = tmp_path / "remote.json"
        path.write_text(json.dumps(remote_document(server.url), ensure_ascii=False))
        window = open_window(path)
        # The validation worker is a process started on demand, slow to start on a busy machine; the wait ends as
        # soon as the answer comes.
        with qtbot.waitSignal(window.editor.payload.validation_changed, timeout=60_000):
            window.select_message(0)
        settle(window)
        assert server.hits == []


@pytest.mark.parametrize(("typed", "chosen", "saved"), [
    ("doc", "Contexts (*.json *.jsonl)", "doc.json"),
    ("doc", "JSON Lines (*.jsonl)", "doc.jsonl"),
    ("doc.jsonl", "JSON (*.json)", "doc.jsonl"),
])
def test_a_name_typed_without_a_suffix_gets_the_chosen_filters(open_window: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, typed: str,
                                                               chosen: str, saved: str) -> None:
    """Save As with a bare name wrote a file without a suffix, and with the JSON Lines filter chosen it was JSON
    (the suffix decides the format): a bare name now takes the filter's suffix; a typed suffix is kept."""
    from contextdeck.gui import _files_ui

    window = open_window(None)
    monkeypatch.setattr(_files_ui.QFileDialog, "getSaveFileName",
                        lambda *args: (str(tmp_path / typed), chosen))
    assert window.files.ask_save_path() == str(tmp_path / saved)


@pytest.mark.parametrize(("answer", "saved"), [("add", "ts.py.json"), ("keep", "ts.py"), ("cancel", None)])
def test_a_name_with_another_suffix_is_asked_about(open_window: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, answer: str,
                                                   saved: str | None) -> None:
    """A typed `ts.py` was written as JSON under that name. Save As asks: Add .json, Keep ts.py, or Cancel, which
    opens the dialog again with the name typed. With All files chosen the name is taken as typed."""
    from contextdeck.gui import _files_ui

    window = open_window(None)
    starts: list[str] = []
    typed = iter([str(tmp_path / "ts.py"), ""])
    monkeypatch.setattr(_files_ui.QFileDialog, "getSaveFileName",
                        lambda parent, title, start, filters: (starts.append(start),
                                                               (next(typed), "Contexts (*.json *.jsonl)"))[1])
    asked: list[tuple[str, str]] = []
    window.files.ask_suffix = lambda path, named, *_: (asked.append((Path(path).name, Path(named).name)), answer)[1]
    assert window.files.ask_save_path() == (None if saved is None else str(tmp_path / saved))
    assert asked == [("ts.py", "ts.py.json")]
    assert starts[1:] == ([str(tmp_path / "ts.py")] if saved is None else [])
    assert window.files.save_name(str(tmp_path / "ts.py"), "All files (*)") == str(tmp_path / "ts.py")
    assert len(asked) == 1
    window.files.ask_suffix = lambda path, named, *_: (asked.append((Path(path).name, Path(named).name)), "add")[1]
    assert window.files.save_name(str(tmp_path / "ts.py"), "JSON Lines (*.jsonl)") == str(tmp_path / "ts.py.jsonl")
    assert asked[1:] == [("ts.py", "ts.py.jsonl")]


def test_a_name_made_longer_is_not_written_over_unasked(open_window: Any, tmp_path: Path) -> None:
    """Qt's dialog asks before replacing the name typed; `doc` became `doc.json` after it and an existing doc.json
    was replaced unasked. Now asked; No goes back to the dialog."""
    window = open_window(None)
    (tmp_path / "doc.json").write_text("[]")
    asked: list[str] = []
    window.files.ask_replace = lambda path, *_: (asked.append(Path(path).name), False)[1]
    assert window.files.save_name(str(tmp_path / "doc"), "JSON (*.json)") is None
    assert window.files.save_name(str(tmp_path / "new"), "JSON (*.json)") == str(tmp_path / "new.json")
    assert asked == ["doc.json"]
    window.files.ask_replace = lambda path, *_: True
    assert window.files.save_name(str(tmp_path / "doc"), "JSON (*.json)") == str(tmp_path / "doc.json")


@pytest.mark.parametrize("keys", [["Return"], ["A", "Alt+K"], ["K", "Escape"]])
def test_the_suffix_question_adds_on_enter_and_keeps_on_alt_k(qtbot: Any, open_window: Any, tmp_path: Path,
                                                             keys: list[str]) -> None:
    """The question by keys: Enter takes Add .json (the default), Alt+K keeps the name, Escape cancels, a letter alone
    does nothing."""
    from PySide6.QtGui import QKeySequence

    window = open_window(None)
    box = window.files.suffix_question(str(tmp_path / "ts.py"), str(tmp_path / "ts.py.json"))
    assert "<b>ts.py</b> does not end in .json or .jsonl. Save it as <b>ts.py.json</b>?" in box.text()
    chosen: list[str] = []
    box.buttonClicked.connect(lambda button: chosen.append(window.files.suffix_answer(box, button)))
    box.open()
    box.activateWindow()
    qtbot.waitUntil(box.isActiveWindow)
    for key in keys:
        combination = QKeySequence(key)[0]
        qtbot.keyClick(box, combination.key(), combination.keyboardModifiers())
    qtbot.waitUntil(lambda: bool(chosen))
    assert chosen == [{"Return": "add", "Alt+K": "keep", "Escape": "cancel"}[keys[-1]]]
    box.close()


def test_every_file_dialog_of_the_file_menu_starts_beside_the_document(
        open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Load Activities…, Load Tool Registry… and Load Tool Folder… started in the folder the program was started
    from, while Open… and Import Trace… started beside the document: each starts beside it now."""
    from PySide6.QtWidgets import QFileDialog

    doc = tmp_path / "agents" / "doc.json"
    doc.parent.mkdir()
    doc.write_text(json.dumps([{"type": "text", "text": "hi"}]))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    asked: dict[str, str] = {}
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda parent, title, folder, filters: (asked.__setitem__(title, folder), ("", ""))[1])
    monkeypatch.setattr(QFileDialog, "getOpenFileNames",  # Import Trace… takes several files
                        lambda parent, title, folder, filters: (asked.__setitem__(title, folder), ([], ""))[1])
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        lambda parent, title, folder: (asked.__setitem__(title, folder), "")[1])
    window = open_window(doc)
    wanted = {"Load Activities…", "Load Tool Registry…", "Load Tool Folder…", "Open…", "Import Trace…"}
    for action in window.menu("File").actions():
        if action.text().replace("&", "") in wanted:
            action.trigger()
    assert len(asked) == len(wanted)
    assert set(asked.values()) == {str(doc.parent)}, asked


def test_save_as_and_fork_here_suggest_a_name_beside_the_document(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Save As… and Fork Here… opened with an empty name box titled "Save context as": Save As suggests the
    document's own name, Fork Here says where it forks and suggests `doc-fork-1.json`, both beside the document."""
    from PySide6.QtWidgets import QFileDialog

    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]))
    asked: list[tuple[str, str]] = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, title, start, filters: (asked.append((title, start)), ("", ""))[1])
    window = open_window(doc)
    assert not window.files.save_as_dialog()
    window.select_message(1)
    qtbot.waitUntil(lambda: window.document.selected_message() == 1)
    assert window.inspector.wiring.fork_here() is None
    assert asked == [("Save context as", str(doc)),
                     ("Fork at message #1: save the fork as", str(tmp_path / "doc-fork-1.json"))]


@pytest.mark.parametrize(("key", "answer"), [("D", "Discard"), ("S", "Save")])
def test_the_unsaved_changes_question_answers_to_alt_and_a_letter(qtbot: Any, open_window: Any, key: str,
                                                                 answer: str) -> None:
    """Qt's own Save and Discard buttons have no mnemonic: from the keys only Enter (Save), Escape and Tab reached
    them. Alt+S saves, Alt+D discards."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    window = open_window(None)
    box = window.files.unsaved_question("closing")
    chosen: list[QMessageBox.StandardButton] = []
    box.buttonClicked.connect(lambda button: chosen.append(box.standardButton(button)))
    box.open()
    box.activateWindow()
    qtbot.waitUntil(box.isActiveWindow)
    qtbot.keyClick(box, getattr(Qt.Key, f"Key_{key}"), Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: bool(chosen))  # a mnemonic clicks as a mouse would, shown pressed for a moment
    assert chosen == [getattr(QMessageBox.StandardButton, answer)]
