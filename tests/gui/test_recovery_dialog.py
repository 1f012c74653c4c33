"""Several crashes leave several pieces of unsaved work: one question at start offers them all."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from test_recovery import dead_pid

from conftest import WindowMaker
from contextdeck.engine import Shape
from contextdeck.gui._recovery import RecoveryCandidate, RecoveryStore
from contextdeck.gui._recovery_dialog import RecoveryChoice, RecoveryDialog, describe


def left_behind(folder: Path, names: list[str]) -> list[RecoveryCandidate]:
    """One piece of unsaved work per name, each written by a process that has died, an hour apart (the
    first name oldest); returned as the store offers them, newest first."""
    store = RecoveryStore(folder)
    pid = dead_pid()
    for hour, name in enumerate(names):
        key = f"{pid}-{name}"
        text = json.dumps([{"type": "text", "text": name}]).encode()
        store.write(key, [text], folder.parent / f"{name}.json", Shape.ARRAY, None)
        sidecar = store.paths(key)[1]
        meta = json.loads(sidecar.read_text())
        meta.update(pid=pid, started=None, time=datetime(2026, 11, 29, 9 + hour, tzinfo=UTC).isoformat())
        sidecar.write_text(json.dumps(meta))
    return store.candidates()


def names(candidates: tuple[RecoveryCandidate, ...] | list[RecoveryCandidate]) -> list[str]:
    return [candidate.original_path.stem for candidate in candidates if candidate.original_path is not None]


@pytest.fixture
def dialog(qtbot: Any, tmp_path: Path) -> RecoveryDialog:
    made = RecoveryDialog(left_behind(tmp_path / "recovery", ["old", "middle", "new"]))
    qtbot.addWidget(made)
    made.show()
    qtbot.waitExposed(made)
    return made


def rows(dialog: RecoveryDialog) -> list[str]:
    return [dialog.list.item(row).text().partition(".json — ")[0] for row in range(dialog.list.count())]


def test_several_crashes_ask_one_question_newest_first(open_window: WindowMaker) -> None:
    """Three sessions' unsaved work is offered in one call of the question, newest first; what the user
    leaves for later stays on disk and is offered again."""
    window = open_window(None)
    left_behind(window.session.recovery_dir, ["old", "middle", "new"])
    asked: list[list[str]] = []

    def later(candidates: list[RecoveryCandidate]) -> RecoveryChoice:
        asked.append(names(candidates))
        return RecoveryChoice()

    window.files.ask_recover = later  # type: ignore[method-assign]
    assert not window.files.offer_recovery()
    assert not window.files.offer_recovery()
    assert asked == [["new", "middle", "old"]] * 2


def test_the_discarded_pieces_are_deleted_and_the_chosen_one_opens(qtbot: Any, open_window: WindowMaker) -> None:
    window = open_window(None)
    old, middle, new = reversed(left_behind(window.session.recovery_dir, ["old", "middle", "new"]))
    window.files.ask_recover = lambda candidates: RecoveryChoice(middle, (old, new))  # type: ignore[method-assign]
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        assert window.files.offer_recovery()
    assert window.context().messages[0]["text"] == "middle"
    assert window.isWindowModified()
    # The status bar said "Ready": it says what was recovered and where Save writes it.
    assert window.statusBar().currentMessage() == (
        f"Recovered the unsaved work of middle.json (written aside at {middle.time.astimezone():%H:%M}): Save writes "
        "it to middle.json.")
    for gone in (old, new):
        assert not gone.recovery_file.exists()
        assert not gone.sidecar.exists()
    assert window.session.recovery_candidates() == [], "the recovered piece belongs to this session now"


def test_keys_alone_discard_two_and_recover_the_third(qtbot: Any, dialog: RecoveryDialog) -> None:
    """Delete takes the current row out, Down moves, Enter recovers: the whole question from the keyboard."""
    assert dialog.list.hasFocus()
    assert rows(dialog) == ["new", "middle", "old"]
    qtbot.keyClick(dialog.list, Qt.Key.Key_Delete)
    assert rows(dialog) == ["middle", "old"]
    qtbot.keyClick(dialog.list, Qt.Key.Key_Down)
    qtbot.keyClick(dialog.list, Qt.Key.Key_Delete)
    assert rows(dialog) == ["middle"]
    qtbot.keyClick(dialog.list, Qt.Key.Key_Return)
    assert dialog.result() == dialog.DialogCode.Accepted
    choice = dialog.choice()
    assert choice.recover is not None
    assert names([choice.recover]) == ["middle"]
    assert names(choice.discard) == ["new", "old"]


def test_after_delete_the_row_below_takes_the_place(qtbot: Any, dialog: RecoveryDialog) -> None:
    """Delete in the middle leaves the keys on the row that moved up into its place, as a file list does,
    not on the row above: Delete again takes the next piece down."""
    qtbot.keyClick(dialog.list, Qt.Key.Key_Down)
    qtbot.keyClick(dialog.list, Qt.Key.Key_Delete)
    assert rows(dialog) == ["new", "old"]
    assert dialog.list.currentRow() == 1
    assert [item.text() for item in dialog.list.selectedItems()] == [dialog.list.item(1).text()]


def test_the_intro_counts_what_is_left_in_the_list(qtbot: Any, dialog: RecoveryDialog) -> None:
    """The intro's count follows the list as pieces are discarded, down to the wording for one."""
    assert "in 3 documents." in dialog.intro.text()
    qtbot.keyClick(dialog.list, Qt.Key.Key_Delete)
    assert "in 2 documents." in dialog.intro.text()
    qtbot.keyClick(dialog.list, Qt.Key.Key_Delete)
    assert dialog.intro.text().startswith("ContextDeck closed unexpectedly with unsaved work. Recover it")


def test_escape_recovers_nothing_but_keeps_what_was_discarded(qtbot: Any, dialog: RecoveryDialog) -> None:
    qtbot.keyClick(dialog.list, Qt.Key.Key_Delete)
    qtbot.keyClick(dialog.list, Qt.Key.Key_Escape)
    assert dialog.result() == dialog.DialogCode.Rejected
    choice = dialog.choice()
    assert choice.recover is None
    assert names(choice.discard) == ["new"]


def test_several_rows_selected_can_be_discarded_but_not_recovered(qtbot: Any, dialog: RecoveryDialog) -> None:
    dialog.list.selectAll()
    assert not dialog.recover_button.isEnabled()
    assert dialog.discard_button.isEnabled()
    qtbot.keyClick(dialog.list, Qt.Key.Key_Return)
    assert dialog.isVisible(), "Enter opens one document or none"
    dialog.discard_button.click()
    assert not dialog.isVisible(), "nothing left to ask about"
    assert dialog.choice() == RecoveryChoice(None, dialog.choice().discard)
    assert sorted(names(dialog.choice().discard)) == ["middle", "new", "old"]


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_time_is_shown_in_local_time(tmp_path: Path, tokyo: None) -> None:
    """The sidecar keeps UTC; a person reads the time on their own clock."""
    (candidate,) = left_behind(tmp_path / "recovery", ["doc"])
    assert describe(candidate) == "doc.json — 2026-11-29 18:00"


def test_an_untitled_piece_is_named_so(tmp_path: Path) -> None:
    (candidate,) = left_behind(tmp_path / "recovery", ["doc"])
    untitled = RecoveryCandidate(None, candidate.recovery_file, candidate.sidecar, candidate.time, candidate.shape,
                                 candidate.pid)
    assert describe(untitled).startswith("Untitled — ")


def test_the_list_is_as_tall_as_its_rows_up_to_eight(qtbot: Any, tmp_path: Path) -> None:
    few = RecoveryDialog(left_behind(tmp_path / "few", ["a", "b", "c"]))
    many = RecoveryDialog(left_behind(tmp_path / "many", [f"d{n}" for n in range(12)]))
    for dialog in (few, many):
        qtbot.addWidget(dialog)
    row = few.list.sizeHintForRow(0)
    assert 3 * row <= few.list.height() < 4 * row
    assert 8 * row <= many.list.height() < 9 * row
