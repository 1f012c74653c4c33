"""Per-document settings (watches, expanded state paths, breakpoints) kept across restarts, never in the document."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt

from contextdeck.engine import Context, Cursor
from contextdeck.gui import _document_model
from contextdeck.gui._sidecar import DocumentSidecar, SidecarStore
from contextdeck.gui._state import PathRole
from contextdeck.gui._window import MainWindow

DOC = [
    {"type": "text", "role": "system", "text": "Be brief."},
    {"type": "state", "data": {"user": {"name": "Alex", "tier": "gold"}}},
    {"type": "input", "input": {"amount": 5}},
]


@pytest.fixture
def document(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    path = folder / "doc.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    return path


def state_index(window: MainWindow, key: str, parent: QModelIndex | None = None) -> QModelIndex:
    model = window.state_view.state_model
    parent = parent if parent is not None else QModelIndex()
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        if index.data(PathRole) == key:
            return index
        if model.rowCount(index):
            found = state_index(window, key, index)
            if found.isValid():
                return found
    return QModelIndex()


def test_watches_and_expanded_paths_come_back_after_a_restart(qtbot: Any, open_window: Any, document: Path) -> None:
    """Pin two watches and expand a state path, close the window; a new window on the same document shows them."""
    first = open_window(document)
    first.watches.entry.setText("†state.user.name")
    qtbot.keyClick(first.watches.entry, "\r")
    first.watches.model.add("†input.amount @①")
    qtbot.waitUntil(lambda: state_index(first, "¶state.user").isValid())
    first.state_view.expand(state_index(first, "¶state.user"))
    first.close()
    assert not first.isVisible()

    second = open_window(document)
    assert [pin.label for pin in second.watches.model.pins] == ["†state.user.name", "†input.amount @①"]
    qtbot.waitUntil(lambda: state_index(second, "¶state.user").isValid())
    qtbot.waitUntil(lambda: second.state_view.isExpanded(state_index(second, "¶state.user")))
    assert second.watches.model.pins[0].resolution is not None
    assert second.watches.model.pins[0].resolution.value == "Alex"
    second.close()


def test_each_document_has_its_own_watches(qtbot: Any, open_window: Any, document: Path) -> None:
    """Opening another document shows that document's watches (none), and coming back shows the first's."""
    other = document.with_name("other.json")
    other.write_text(json.dumps(DOC[:1]), encoding="utf-8")
    window = open_window(document)
    window.watches.model.add("†state.user")
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(other)
    assert window.watches.model.pins == []
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(document)
    assert [pin.label for pin in window.watches.model.pins] == ["†state.user"]
    window.close()


def test_each_document_reopens_in_its_own_dock_layout(qtbot: Any, open_window: Any, document: Path) -> None:
    """Move the state dock left in one document, back right and hide the watches in another, close: reopened, each
    has its layout; a document never laid out leaves the window as it is (at start: as it was last closed)."""
    left, right = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea
    other = document.with_name("other.json")
    other.write_text(json.dumps(DOC[:1]), encoding="utf-8")
    fresh = document.with_name("fresh.json")
    fresh.write_text(json.dumps(DOC[:2]), encoding="utf-8")
    first = open_window(document)
    assert first.dockWidgetArea(first.state_dock) == right
    first.addDockWidget(left, first.state_dock)
    with qtbot.waitSignal(first.document.documentShown):
        first.session.open(other)
    assert first.dockWidgetArea(first.state_dock) == left  # never laid out: the window as it is
    first.addDockWidget(right, first.state_dock)
    first.watch_dock.toggleViewAction().trigger()  # View → Watches off
    assert first.watch_dock.isHidden()
    first.close()

    second = open_window(document)
    assert second.dockWidgetArea(second.state_dock) == left, "the document's own layout, not the last closed"
    assert not second.watch_dock.isHidden()
    with qtbot.waitSignal(second.document.documentShown):
        second.session.open(other)
    assert second.dockWidgetArea(second.state_dock) == right
    assert second.watch_dock.isHidden()
    with qtbot.waitSignal(second.document.documentShown):
        second.session.open(fresh)
    assert second.watch_dock.isHidden()  # never laid out: as it is
    assert second.dockWidgetArea(second.state_dock) == right
    second.close()


def test_a_document_opened_again_in_its_own_layout_is_not_laid_out_anew(
        qtbot: Any, open_window: Any, document: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opened again with the docks as it left them, the window keeps its layout without restoring it (which lays
    out every dock again); a layout kept that differs from the window's is restored."""
    left = Qt.DockWidgetArea.LeftDockWidgetArea
    window = open_window(document)
    window.addDockWidget(left, window.state_dock)
    restored: list[object] = []
    restore = window.restoreState
    monkeypatch.setattr(window, "restoreState", lambda state: restored.append(state) or restore(state))
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(document)
    assert restored == []
    assert window.dockWidgetArea(window.state_dock) == left
    window.session.sidecar.set_value("layout", "")  # kept in another layout (none: the default's)
    window.session.sidecar.switching.disconnect()  # (left without keeping the layout it is left in)
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(document)
    assert len(restored) == 1


def test_the_settings_never_touch_the_documents_folder(qtbot: Any, open_window: Any, tmp_path: Path,
                                                       document: Path) -> None:
    """The document and its folder are byte for byte as before; the settings are one JSON file in the data folder."""
    before = document.read_bytes()
    window = open_window(document)
    window.watches.model.add("†state.user")
    window.session.sidecar.flush()
    files = list((tmp_path / "documents").glob("*.json"))
    assert len(files) == 1
    kept = json.loads(files[0].read_text(encoding="utf-8"))
    assert kept["document"] == str(document.resolve())
    assert kept["values"]["watches"] == ["†state.user"]
    assert sorted(p.name for p in document.parent.iterdir()) == ["doc.json"]
    assert document.read_bytes() == before
    window.close()


def test_save_as_takes_the_settings_along(qtbot: Any, open_window: Any, document: Path) -> None:
    """After Save As, the new file has the watches (the old one keeps its own)."""
    window = open_window(document)
    window.watches.model.add("†state.user")
    copy = document.with_name("copy.json")
    assert window.session.save_as(copy)
    window.close()
    reopened = open_window(copy)
    assert [pin.label for pin in reopened.watches.model.pins] == ["†state.user"]
    reopened.close()


def test_an_untitled_document_writes_no_settings(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """Watches pinned on a new, unsaved document stay in memory: nothing is written anywhere."""
    window = open_window(None)
    window.watches.model.add("†state.user")
    window.close()
    assert not (tmp_path / "documents").exists()


def test_a_damaged_settings_file_is_ignored(qtbot: Any, open_window: Any, tmp_path: Path, document: Path) -> None:
    """Garbage, another document's record, or a wrong shape: the document opens with no watches, no error."""
    store = SidecarStore(tmp_path / "documents")
    store.directory.mkdir()
    for garbage in ("{not json", json.dumps({"format": "contextdeck-document-settings/1", "document": "/elsewhere",
                                             "values": {"watches": ["†x"]}}), json.dumps([1, 2])):
        store.file_for(document).write_text(garbage, encoding="utf-8")
        assert store.read(document) == {}
    store.file_for(document).write_text(json.dumps({"format": "contextdeck-document-settings/1",
                                                    "document": str(document.resolve()),
                                                    "values": {"watches": ["†ok", 3, None], "layout": "¿no layout?"}}),
                                         encoding="utf-8")
    window = open_window(document)
    assert [pin.label for pin in window.watches.model.pins] == ["†ok"]  # the non-strings are dropped
    assert window.dockWidgetArea(window.state_dock) == Qt.DockWidgetArea.RightDockWidgetArea  # the default layout
    window.close()


def test_breakpoints_are_kept_for_the_debugger(qtbot: Any, tmp_path: Path) -> None:
    """Any JSON value under a key comes back after switching away and back; values are copies, not shared."""
    store = SidecarStore(tmp_path / "documents")
    doc = tmp_path / "d.json"
    doc.write_text("[]", encoding="utf-8")
    sidecar = DocumentSidecar(store)
    sidecar.switch(doc)
    points = [{"plan": 3, "call": "lookup#0", "condition": "†state.x > 1"}]
    sidecar.set_value("breakpoints", points)
    points.append({"plan": 9})  # the caller's list is not the kept one
    with pytest.raises(ValueError, match="breakpoints"):
        sidecar.set_value("breakpoints", {1, 2})
    sidecar.switch(None)  # writes what is pending
    assert sidecar.value("breakpoints", []) == []
    sidecar.switch(doc)
    assert sidecar.value("breakpoints") == [{"plan": 3, "call": "lookup#0", "condition": "†state.x > 1"}]


def test_a_document_not_open_has_one_setting_changed_after_its_own_writes(qtbot: Any, tmp_path: Path) -> None:
    """`update` of a document left changes that key in its file after the writes asked for it before, keeps its
    other settings, and opening it shows the change; `update` of the open document changes it in memory."""
    store = SidecarStore(tmp_path / "documents")
    left, other = tmp_path / "left.json", tmp_path / "other.json"
    for path in (left, other):
        path.write_text("[]", encoding="utf-8")
    sidecar = DocumentSidecar(store)
    sidecar.switch(left)
    sidecar.set_value("watches", ["†a"])
    sidecar.set_value("experiments", {"results": "one.jsonl"})
    sidecar.switch(other)  # left's write is queued on the worker
    assert not sidecar.holds(left)
    assert sidecar.holds(other)
    sidecar.update(left, "experiments", lambda kept: {**kept, "results": "two.jsonl", "compared": kept["results"]})
    assert sidecar.value("experiments") is None  # the open document's settings are not touched
    sidecar.update(other, "watches", lambda pins: [*(pins or []), "†b"])
    assert sidecar.value("watches") == ["†b"]
    sidecar.switch(left)
    assert sidecar.value("experiments") == {"results": "two.jsonl", "compared": "one.jsonl"}
    assert sidecar.value("watches") == ["†a"]


def test_an_unwritable_settings_folder_is_reported_and_changes_nothing(qtbot: Any, tmp_path: Path) -> None:
    """A file where the folder should be: `writeFailed` says so; the values stay in memory."""
    blocker = tmp_path / "documents"
    blocker.write_text("not a folder", encoding="utf-8")
    doc = tmp_path / "d.json"
    doc.write_text("[]", encoding="utf-8")
    sidecar = DocumentSidecar(SidecarStore(blocker))
    sidecar.switch(doc)
    sidecar.set_value("watches", ["†a"])
    with qtbot.waitSignal(sidecar.writeFailed) as failed:
        sidecar.flush()
    assert "d.json" in failed.args[0]
    assert sidecar.value("watches") == ["†a"]
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_settings_of_deleted_documents_are_pruned(tmp_path: Path) -> None:
    """`prune` removes the settings of a document that is gone and keeps the others."""
    store = SidecarStore(tmp_path / "documents")
    kept, gone = tmp_path / "kept.json", tmp_path / "gone.json"
    for path in (kept, gone):
        path.write_text("[]", encoding="utf-8")
        assert store.write(path, {"watches": ["†a"]}) is None
    gone.unlink()
    assert store.prune() == 1
    assert store.read(kept) == {"watches": ["†a"]}
    assert not store.file_for(gone).exists()


def test_expanded_paths_survive_a_state_that_finished_without_their_rows(qtbot: Any, open_window: Any,
                                                                          document: Path) -> None:
    """Paths handed to the state view outlive a state that has no rows for them (a refresh of the previous,
    empty context finishing late): the next state with those rows shows them expanded."""
    window = open_window(document)
    view = window.state_view
    view.set_expanded_paths(["¶state", "¶state.user"])
    view.refresh(Context(), None, None)
    qtbot.waitUntil(lambda: not view.is_busy())
    view.refresh(window.context(), None, None)
    qtbot.waitUntil(lambda: not view.is_busy())
    assert view.isExpanded(state_index(window, "¶state.user"))


def store_telling_writers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SidecarStore, list[str]]:
    """A store of settings, and the names of the threads that wrote to it, in order."""
    store = SidecarStore(tmp_path / "settings")
    writers: list[str] = []
    real = store.write
    monkeypatch.setattr(store, "write", lambda *args: writers.append(threading.current_thread().name) or real(*args))
    return store, writers


def test_a_change_is_written_a_moment_later_off_the_gui_thread(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write a moment after a change waits for the disk on a worker, never on the window's thread; a flush
    (closing) waits for it, then writes what changed since, so the last value is the one kept."""
    doc = tmp_path / "d.json"
    doc.write_text("[]", encoding="utf-8")
    store, writers = store_telling_writers(tmp_path, monkeypatch)
    sidecar = DocumentSidecar(store)
    sidecar.switch(doc)
    sidecar.set_value("watches", ["†a"])
    qtbot.waitUntil(lambda: store.read(doc).get("watches") == ["†a"])
    assert writers == [writers[0]]
    assert writers[0] != threading.main_thread().name
    sidecar.set_value("watches", ["†b"])
    sidecar.flush()
    assert store.read(doc)["watches"] == ["†b"]
    assert writers[-1] == threading.main_thread().name


def test_leaving_a_document_writes_its_settings_off_the_gui_thread(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another document opening writes the leaving one's pending settings on the worker (the write waits for the
    disk twice, in the turn that hands the new document over); the same document opened again has them as they
    were, and so has one switched back to while its write may be under way."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for path in (first, second):
        path.write_text("[]", encoding="utf-8")
    store, writers = store_telling_writers(tmp_path, monkeypatch)
    sidecar = DocumentSidecar(store)
    sidecar.switch(first)
    sidecar.set_value("watches", ["†a"])
    sidecar.switch(first)  # reopened in place
    assert sidecar.value("watches") == ["†a"]
    sidecar.set_value("watches", ["†b"])
    sidecar.switch(second)
    assert sidecar.value("watches") is None
    sidecar.switch(first)
    assert sidecar.value("watches") == ["†b"]
    sidecar.flush()
    assert store.read(first)["watches"] == ["†b"]
    assert writers
    assert threading.main_thread().name not in writers


def test_pins_a_document_brings_back_are_folded_at_its_end_not_made_live(qtbot: Any, open_window: Any,
                                                                         document: Path) -> None:
    """While a document opens, before its last message is selected, its pins are watches at its end (a cursor's,
    folded in slices, none of it in the turn that hands the document over), not live watches of the context, which
    fold their kinds at once; once shown they hold the values at the last message."""
    other = document.with_name("other.json")
    other.write_text(json.dumps(DOC[:1]), encoding="utf-8")
    window = open_window(document)
    window.watches.model.add("†state.user.name")
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(other)
    live: list[bool] = []
    folded: list[int] = []

    def handed_over() -> None:  # after the document's settings brought its pins back
        live.extend(pin.handle is not None and pin.handle.live is not None for pin in window.watches.model.pins)
        folded.append(window.context()._lanes._steps)

    window.session.documentReplaced.connect(handed_over)
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(document)
    assert live == [False]
    assert folded == [0]
    qtbot.waitUntil(lambda: not window.watches.model.is_busy())
    pin = window.watches.model.pins[0]
    assert pin.handle is not None
    assert pin.handle.live is None
    assert pin.resolution == window.context().resolve("†state.user.name", None, len(window.context()))
    window.close()


def test_pins_follow_the_latest_once_a_document_opens_with_nothing_selected(
        qtbot: Any, open_window: Any, document: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document that opens with a timeline filter hiding its last message has nothing selected once shown: the
    views follow the latest, and so do the pins, live, not the end they were folded at while it opened (what a run
    appends reaches them)."""
    window = open_window(document)
    window.watches.model.add("†state.user.name")
    timeline, model = window.timeline, window.document
    timeline.filter_box.setText("Alex")  # the last message, an input, hidden
    monkeypatch.setattr(_document_model, "OPEN_WAIT_S", 600.0)  # (never opened by the clock meanwhile)
    model.open_after(lambda: False)  # (the selection held back until the hand-over's own views are due)
    with qtbot.waitSignal(model.documentReplaced):
        window.session.open(document)
    qtbot.waitUntil(lambda: not model._later.isActive() and timeline.table.model() is timeline._filter)
    model.finish_opening()  # as the first input would
    assert window.selected_message() is None
    window.context().insert(len(window.context()), {"type": "state", "data": {"user": {"name": "Kim"}}})
    pin = window.watches.model.pins[0]
    qtbot.waitUntil(lambda: pin.resolution is not None and pin.resolution.value == "Kim")
    window.close()


def test_the_documents_own_pins_are_made_on_it_once_and_the_others_never(
        qtbot: Any, open_window: Any, document: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the hand-over the watches panel makes each pin the new document's settings bring back once, and never the
    pins of the document it replaces (made on it, then removed and the new ones made: twice the work)."""
    other = document.with_name("other.json")
    other.write_text(json.dumps(DOC), encoding="utf-8")
    window = open_window(document)
    window.watches.model.add("†state.user.name")
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(other)
    window.watches.model.add("†input.amount")
    made: list[tuple[int, str]] = []
    watch = Cursor.watch

    def noted(cursor: Cursor, expression: str, *args: Any, **kwargs: Any) -> Any:
        made.append((id(cursor.context), expression))
        return watch(cursor, expression, *args, **kwargs)

    monkeypatch.setattr(Cursor, "watch", noted)
    with qtbot.waitSignal(window.document.documentShown):
        window.session.open(document)
    assert made == [(id(window.context()), "†state.user.name")]
    assert [pin.label for pin in window.watches.model.pins] == ["†state.user.name"]
    window.close()
