"""Delegate sessions in the real window: Step Into / Over / Out, the call stack, breadcrumbs, bad delegates."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QListWidget

from conftest import LOADED_MS
from contextdeck.engine import Document, Loop, LoopStatus, Status, fixed_clock, load_document
from contextdeck.gui._inspector import Inspector
from contextdeck.gui._inspector._async import release
from contextdeck.gui._inspector._calls import GUTTER
from contextdeck.gui._inspector._dialogs import ApprovalDialog, OutputDialog
from contextdeck.gui._inspector._sessions import Frame, Sessions
from contextdeck.gui._turns import TurnDialog
from contextdeck.gui._window import MainWindow

NOW = "2026-01-02T03:04:05Z"
CHAPTERS = Path(__file__).resolve().parents[1] / "engine" / "chapters" / "delegates"
SUMMARY = "Tide mills and the Sihwa Lake station turn tides into power."


@pytest.fixture(autouse=True)
def _loop(qapp: Any) -> Iterator[None]:
    yield
    release()  # the Qt event loop's asyncio loop is detached: later tests may start their own


@pytest.fixture
def report(tmp_path: Path, examples: Path) -> Path:
    """The bundled delegate example (report.json → Researcher.json → anonymous), copied: nothing touches it."""
    folder = tmp_path / "delegates"
    shutil.copytree(examples / "delegates", folder)
    return folder / "report.json"


def inspector_of(window: MainWindow) -> Inspector:
    found = window.inspector  # type: ignore[attr-defined]
    assert isinstance(found, Inspector)
    return found


def sessions_of(window: MainWindow) -> Sessions:
    sessions = inspector_of(window).sessions
    assert sessions is not None
    return sessions


def run_action(window: MainWindow, text: str) -> QAction:
    """Trigger the Run menu's entry `text`, as a click on it does."""
    action = next(a for a in window.menu("Run").actions() if a.text() == text)
    assert action.isEnabled(), f"Run → {text} is disabled"
    action.trigger()
    return action


def opened(open_window: Any, path: Path) -> MainWindow:
    window: MainWindow = open_window(path)
    inspector_of(window).debugger.clock = fixed_clock(NOW)
    return window


ANSWERED: list[Any] = []  # dialogs written already: a new question is another dialog


def answer(qtbot: Any, window: MainWindow, text: str) -> OutputDialog:
    """Type `text` into the output dialog of a latent call open now and press Write output."""
    def dialog() -> OutputDialog | None:
        return next((f.debugger.open_dialog for f in sessions_of(window).frames
                     if isinstance(f.debugger.open_dialog, OutputDialog)
                     and f.debugger.open_dialog not in ANSWERED and f.debugger.open_dialog.isVisible()), None)

    qtbot.waitUntil(lambda: dialog() is not None, timeout=LOADED_MS)
    found = dialog()
    assert found is not None
    found.set_text(text)
    if found.form is not None:
        # The form's validation of this text has answered: its worker process starts slowly on a loaded machine.
        qtbot.waitUntil(found.write_button.isEnabled, timeout=LOADED_MS)
    qtbot.mouseClick(found.write_button, Qt.MouseButton.LeftButton)
    if not found.isVisible():
        ANSWERED.append(found)
    return found


def take_turn(qtbot: Any, window: MainWindow, turn: Any, valid: bool = True) -> TurnDialog:
    """Type the delegate's next turn into the Next Turn dialog its session opens, and press Take Turn."""
    sessions = sessions_of(window)
    qtbot.waitUntil(lambda: isinstance(sessions.open_dialog, TurnDialog) and sessions.open_dialog not in ANSWERED
                    and sessions.open_dialog.isVisible(), timeout=LOADED_MS)
    dialog = sessions.open_dialog
    assert isinstance(dialog, TurnDialog)
    # Window-modal, as the document's own Next Turn dialog: the document cannot change under the turn typed.
    assert dialog.windowModality() == Qt.WindowModality.WindowModal
    dialog.editor.setPlainText(json.dumps(turn))
    if valid:
        qtbot.waitUntil(dialog.take_button.isEnabled)  # checked once typing pauses
    else:
        qtbot.waitUntil(lambda: dialog.problems.count() > 0)
    qtbot.mouseClick(dialog.take_button, Qt.MouseButton.LeftButton)
    if not dialog.isVisible():
        ANSWERED.append(dialog)
    return dialog


def idle(qtbot: Any, window: MainWindow) -> None:
    sessions = sessions_of(window)
    qtbot.waitUntil(lambda: not sessions.busy and not any(f.debugger.running for f in sessions.frames),
                    timeout=LOADED_MS)


def stepped_into(qtbot: Any, window: MainWindow, depth: int = 1) -> Frame:
    """Run → Step Into, until the session `depth` levels down is current and idle; that session."""
    sessions = sessions_of(window)
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: sessions.current == depth, timeout=LOADED_MS)
    idle(qtbot, window)
    return sessions.frame


def chapter_window(open_window: Any, tmp_path: Path, name: str) -> MainWindow:
    """A window on chapter example `name`, copied with its delegate files into tmp_path."""
    folder = tmp_path / "delegates"
    shutil.copytree(CHAPTERS, folder)
    return opened(open_window, folder / name)


def test_step_into_opens_the_delegate_session_stopped_before_its_first_call(qtbot: Any, open_window: Any,
                                                                         report: Path) -> None:
    """Step Into on research (delegated to Researcher.json) shows the delegate's clean-room context, its
    calls with the first one selected and nothing run, breadcrumbs back to the document and the call stack."""
    window = opened(open_window, report)
    inspector, sessions = inspector_of(window), sessions_of(window)
    assert inspector.model.status(0) is Status.READY  # the delegate file is found next to the document
    before = window.context().messages
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: sessions.current == 1)
    idle(qtbot, window)
    frame = sessions.frame
    assert frame.title == "#0 research → Researcher.json"
    assert frame.loop is not None
    messages = frame.loop.document.context.messages
    assert [m["type"] for m in messages] == ["system", "tool", "input", "plan", "state"]
    assert messages[2]["input"] == {"topic": "tidal energy"}  # the call's parameters, resolved up front
    assert messages[-1] == {"type": "state", "style": "Plain words, under 80 words."}  # its scope: state
    page = inspector.session_view.page(frame) if inspector.session_view else None
    assert page is not None
    assert inspector.session_view.currentWidget() is page
    assert page.context_model.rowCount() == 5
    assert page.calls.currentIndex().row() == 0
    assert page.status.text() == "Stepped into #0: stopped before #0 (search)"
    assert frame.model.status(0) is Status.READY  # stopped before it: nothing ran
    assert page.crumbs.text() == '<a href="0">report.json</a> › <b>#0 research → Researcher.json</b>'
    stack = window.findChild(type(inspector.docks["Call stack"].widget()))
    assert [stack.item(i).text() for i in range(stack.count())] == ["report.json", "└ #0 research → Researcher.json"]
    assert stack.currentRow() == 1
    assert window.context().messages == before  # the caller's context is untouched
    assert inspector.model.status(0) is Status.WAITING_FOR_OUTPUT


def test_step_over_into_and_out_write_the_delegates_output_in_the_caller(qtbot: Any, open_window: Any,
                                                                        report: Path) -> None:
    """Inside the session Step runs search there; Step Into the anonymous summarise nests a third session;
    Step Out twice writes each output one level down, ending in the document with the CLI's run record."""
    window = opened(open_window, report)
    inspector, sessions = inspector_of(window), sessions_of(window)
    stack = inspector.docks["Call stack"].widget()
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: sessions.current == 1)
    idle(qtbot, window)
    researcher = sessions.frame
    assert researcher.loop is not None
    run_action(window, "Step")  # F10 steps the current session: search runs inside the delegate
    qtbot.waitUntil(lambda: researcher.model.status(0) is Status.DONE)
    idle(qtbot, window)
    assert researcher.loop.document.context.resolve("†state.sources").value == [
        "tide mills in Brittany", "the Sihwa Lake station"]
    assert not window.context().resolve("†state.sources").found  # a clean room: nothing leaks up

    run_action(window, "Step Into")  # summarise delegates to an anonymous session: a third level
    qtbot.waitUntil(lambda: sessions.current == 2)
    idle(qtbot, window)
    anonymous = sessions.frame
    assert anonymous.title == "#1 summarise → anonymous"
    assert anonymous.loop is not None
    assert anonymous.loop.document.context.messages == [
        {"type": "input", "input": {"sources": ["tide mills in Brittany", "the Sihwa Lake station"]}}]
    assert stack.count() == 3
    page = inspector.session_view.page(anonymous) if inspector.session_view else None
    assert page is not None
    assert page.crumbs.text() == ('<a href="0">report.json</a> › <a href="1">#0 research → Researcher.json</a>'
                                  ' › <b>#1 summarise → anonymous</b>')
    assert "no calls to run" in page.status.text()

    stack.setCurrentRow(0)  # the call stack switches session: the document's calls come to the front
    assert sessions.current == 0
    qtbot.waitUntil(lambda: not inspector.docks["Calls"].visibleRegion().isEmpty())
    page.crumbs.linkActivated.emit("1")  # a breadcrumb goes back to the Researcher
    assert sessions.current == 1
    stack.setCurrentRow(2)
    assert sessions.current == 2

    run_action(window, "Step Out")  # the anonymous delegate has no output: its turn is asked, then written
    take_turn(qtbot, window, {"calls": [], "output": SUMMARY})
    qtbot.waitUntil(lambda: sessions.current == 1)
    idle(qtbot, window)
    assert researcher.loop.document.context.resolve("†state.summary").value == SUMMARY
    assert researcher.model.status(1) is Status.DONE
    assert stack.count() == 2

    before = len(window.context())
    run_action(window, "Step Out")  # the Researcher's output, checked against its request schema
    dialog = take_turn(qtbot, window, {"calls": [], "output": {}}, valid=False)
    problems = [dialog.problems.item(i).text() for i in range(dialog.problems.count())]
    assert any("'summary' is a required property" in problem for problem in problems)
    assert dialog.isVisible()  # refused: Take Turn stays disabled, nothing is taken
    assert not dialog.take_button.isEnabled()
    take_turn(qtbot, window, {"calls": [], "output": {"summary": SUMMARY}})
    qtbot.waitUntil(lambda: sessions.current == 0)
    idle(qtbot, window)
    assert stack.count() == 1
    assert len(window.context()) == before + 1
    written = window.context()[before]
    assert written["_outputPath"] == "†state.findings"
    assert window.context().resolve("†state.findings.summary").value == SUMMARY
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.DONE)
    qtbot.waitUntil(lambda: inspector.model.status(1) is Status.READY)  # headline reads the findings now
    assert written == cli_output(report, before)  # the same message and _run as `contextdeck run`
    assert "Stepped out of #0" in inspector.panel.message.text()
    window.session.undo_stack.undo()  # the write is one undo step in the document
    assert len(window.context()) == before


def cli_output(path: Path, at: int) -> Any:
    """What the engine's loop (as `contextdeck run` with turns) writes at message `at` for the same outputs."""
    def turns(document: Document) -> Any:
        if document.schema == {"type": "string"}:
            return {"calls": [], "output": SUMMARY}
        if document.context.messages[0].get("message", "").startswith("You research"):
            return {"calls": [], "output": {"summary": SUMMARY}}
        return None

    loop = Loop(load_document(path), turns=turns, clock=fixed_clock(NOW))
    with ThreadPoolExecutor(1) as pool:  # its own event loop, away from the window's
        assert pool.submit(asyncio.run, loop.run()).result() is LoopStatus.WAITING_FOR_TURN
    return loop.document.context[at]


def test_step_over_runs_a_delegated_call_to_its_end_as_one_step(qtbot: Any, open_window: Any, report: Path) -> None:
    """Step on the document's delegated call runs the whole session (its latent call asked, then its output)
    without leaving the document's session, and writes the output."""
    window = opened(open_window, report)
    inspector, sessions = inspector_of(window), sessions_of(window)
    run_action(window, "Step")
    answer(qtbot, window, f'"{SUMMARY}"')  # summarise, inside the Researcher's session
    take_turn(qtbot, window, {"calls": [], "output": {"summary": SUMMARY}})  # the Researcher's turn
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.DONE)
    idle(qtbot, window)
    assert sessions.current == 0
    assert len(sessions.frames) == 1
    assert window.context().resolve("†state.findings").value == {"summary": SUMMARY}


def test_an_undo_in_the_caller_replaces_the_delegate_sessions_note_as_the_calls_panels(
        qtbot: Any, open_window: Any, report: Path) -> None:
    """The caller runs prep (a step on the undo stack), Step Into research, Step there ("stepped over #0"), then
    Edit → Undo: the session stays open, and its page says what was undone, naming the document whose call it was,
    as the calls panel says it; Redo alike. It kept "stepped over #0" over a caller the undo had changed."""
    document = json.loads(report.read_text(encoding="utf-8"))
    context = document["context"]
    context[1]["tool"]["prep"] = {"type": "object", "properties": {"_output": {"type": "string"}}}
    context[4]["plan"][1:] = []
    context[4]["plan"].insert(0, {"_tool": "prep", "_output": "ready", "_outputPath": "†state.prep"})
    report.write_text(json.dumps(document), encoding="utf-8")
    window = opened(open_window, report)
    inspector, sessions = inspector_of(window), sessions_of(window)
    run_action(window, "Step")
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.DONE)
    idle(qtbot, window)
    frame = stepped_into(qtbot, window)
    run_action(window, "Step")  # search, inside the session
    qtbot.waitUntil(lambda: frame.model.status(0) is Status.DONE)
    idle(qtbot, window)
    page = inspector.session_view.page(frame) if inspector.session_view else None
    assert page is not None
    assert page.status.text() == "stepped over #0"
    for name, done in (("undo", "Undone"), ("redo", "Redone")):
        next(a for a in window.findChildren(QAction) if a.objectName() == name).trigger()
        assert inspector.panel.message.text() == f"{done}: Run call #0 (prep)"
        assert page.status.text() == f"{done}: Run call #0 (prep) in report.json"
        assert sessions.frames[1:] == [frame]  # the session is still open: its call waits for it


def test_the_documents_session_made_current_says_a_delegate_session_is_open(
        qtbot: Any, open_window: Any, report: Path) -> None:
    """Step Into research, then the call stack's first row (the document's session): the Delegate session pane says
    the document's session is current and one delegate session is open, to be chosen in the call stack (it said
    "No delegate session is open" of the one the call stack listed); once that session is gone, it says none is."""
    window = opened(open_window, report)
    inspector, sessions = inspector_of(window), sessions_of(window)
    view = inspector.session_view
    assert view is not None
    assert "No delegate session is open" in view.hint.text()
    stepped_into(qtbot, window)
    stack = inspector.docks["Call stack"].widget()
    stack.setCurrentRow(0)
    assert sessions.current == 0
    assert view.currentWidget() is view.hint
    assert "No delegate session is open" not in view.hint.text()
    assert "A delegate session is open: choose one in the Call stack" in view.hint.text()
    sessions.reset()  # (as another document opened)
    assert "No delegate session is open" in view.hint.text()


def test_step_out_of_the_document_is_disabled_and_step_into_a_plain_call_steps(qtbot: Any, open_window: Any,
                                                                               examples: Path) -> None:
    """Without a delegate session Step Out is disabled; Step Into on a call that does not delegate runs it."""
    window = opened(open_window, examples / "refund_workflow.json")
    inspector = inspector_of(window)
    step_out = next(a for a in window.menu("Run").actions() if a.text() == "Step Out")
    assert not step_out.isEnabled()
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.DONE)
    assert sessions_of(window).current == 0


def test_missing_malformed_recursive_delegates_are_errors_on_their_calls(qtbot: Any, open_window: Any,
                                                                        tmp_path: Path) -> None:
    """014_bad_delegates: each call fails with its delegate's file and reason in the calls panel and the
    inspector; stepping opens no session and writes each failure as its error message, as Continue and
    `contextdeck run --steps 1` do (the file is left as it was until it is saved)."""
    folder = tmp_path / "delegates"
    shutil.copytree(CHAPTERS, folder)
    path = folder / "014_bad_delegates.json"
    window = opened(open_window, path)
    inspector = inspector_of(window)
    model = inspector.model
    qtbot.waitUntil(lambda: model.rowCount() == 4)
    details = [model.detail(row) for row in range(4)]
    assert all(model.status(row) is Status.FAILED for row in range(4))
    assert details[0] == "delegate: delegate 'LoopA' is recursive: LoopA.json → LoopB.json → LoopA.json"
    assert details[1].startswith(f"delegate: delegate 'Missing' not found: no Missing or Missing.json in {folder}")
    assert details[2].startswith("delegate: delegate 'Broken' cannot be loaded: ")
    assert "Broken.json" in details[2]
    assert "outside the document's folder" in details[3]
    inspector.panel.view.select_call(1)
    qtbot.waitUntil(lambda: "delegate 'Missing' not found" in inspector.inspector.problems.text())
    before = window.context().messages
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: inspector.panel.message.text()
                    == "finished: nothing is left to run; failed: #0, #1, #2, #3 (the calls panel says why)")
    idle(qtbot, window)
    assert len(sessions_of(window).frames) == 1
    written = window.context().messages[len(before):]
    assert window.context().messages[:len(before)] == before
    assert [(m["type"], m["_run"]["call"], m["data"]["error"]["message"]) for m in written] == [
        ("error", row, detail.removeprefix("delegate: ")) for row, detail in enumerate(details)]
    assert path.read_bytes() == (CHAPTERS / "014_bad_delegates.json").read_bytes()


def test_step_out_stops_at_a_breakpoint_inside_the_session(qtbot: Any, open_window: Any, report: Path) -> None:
    """A breakpoint set in the session's calls (its gutter) stops Step Out there; Step Out again finishes."""
    window = opened(open_window, report)
    inspector, sessions = inspector_of(window), sessions_of(window)
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: sessions.current == 1)
    idle(qtbot, window)
    researcher = sessions.frame
    page = inspector.session_view.page(researcher) if inspector.session_view else None
    assert page is not None
    qtbot.waitUntil(page.calls.isVisible)
    gutter = page.calls.visualRect(researcher.model.index(1, GUTTER)).center()
    qtbot.mouseClick(page.calls.viewport(), Qt.MouseButton.LeftButton, pos=gutter)
    assert researcher.model.breakpoints == frozenset({1})
    run_action(window, "Step Out")
    qtbot.waitUntil(lambda: page.status.text() == "breakpoint at #1")
    idle(qtbot, window)
    assert sessions.current == 1
    assert researcher.model.status(0) is Status.DONE
    assert researcher.model.status(1) is Status.READY
    assert not window.context().resolve("†state.findings").found
    run_action(window, "Step Out")
    answer(qtbot, window, f'"{SUMMARY}"')  # summarise's result, asked as for any waiting call
    take_turn(qtbot, window, {"calls": [], "output": {"summary": SUMMARY}})
    qtbot.waitUntil(lambda: sessions.current == 0)
    assert window.context().resolve("†state.findings.summary").value == SUMMARY


def test_each_instance_steps_into_a_session_with_its_own_scoped_state(qtbot: Any, open_window: Any,
                                                                     tmp_path: Path) -> None:
    """015's instanced delegates: the session of call ① sees only ①'s state, without `_instance`; its output
    is written for ①; then call ②'s session sees only ②'s."""
    window = chapter_window(open_window, tmp_path, "015_instanced_delegates.json")
    sessions = sessions_of(window)
    first = stepped_into(qtbot, window)
    assert first.loop is not None
    assert first.loop.document.context.messages == [{"type": "system", "message": "You are a translator."},
                                                    {"type": "state", "text": "Hello"}]
    run_action(window, "Step Out")
    take_turn(qtbot, window, {"calls": [], "output": "Hello!"})
    qtbot.waitUntil(lambda: sessions.current == 0)
    idle(qtbot, window)
    assert window.context().resolve("†state.translation", instance="①").value == "Hello!"
    assert not window.context().resolve("†state.translation", instance="②").found
    run_action(window, "Step Into")
    qtbot.waitUntil(lambda: sessions.current == 1)
    second = sessions.frame
    assert second.title == "#1 translate → translatorDelegate.json"
    assert second.loop is not None
    assert second.loop.document.context.messages[-1] == {"type": "state", "text": "Bonjour"}


def test_save_as_next_to_the_delegate_finds_it(qtbot: Any, open_window: Any, tmp_path: Path, report: Path) -> None:
    """A document whose delegate file is not in its folder fails that call, naming the folder; saved where
    the file is, the call is ready."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(report, alone / "report.json")
    window = opened(open_window, alone / "report.json")
    model = inspector_of(window).model
    qtbot.waitUntil(lambda: model.rowCount() == 2)
    assert model.status(0) is Status.FAILED
    assert model.detail(0) == f"delegate: delegate 'Researcher' not found: no Researcher or Researcher.json in {alone}"
    assert window.session.save_as(report.parent / "report copy.json")
    qtbot.waitUntil(lambda: model.status(0) is Status.READY)


def test_a_delegates_turn_with_calls_runs_them_in_its_session(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """014's music makers: the Composer's session has no calls; its turn typed in Next Turn plans synthesize
    there (delegated in turn to the Sound-Designer), Step Out runs it, and the next turn's output is the song."""
    window = chapter_window(open_window, tmp_path, "014_music_makers.json")
    sessions = sessions_of(window)
    composer = stepped_into(qtbot, window)
    assert composer.loop is not None
    assert composer.title == "#0 makeSong → Composer.json"
    run_action(window, "Step Out")
    dialog = take_turn(qtbot, window, {"calls": [
        {"_tool": "synthesize", "melody": "A minor, slow", "_outputPath": "†state.sound"}], "output": None})
    assert "Composer.json" in dialog.intro.text()
    answer(qtbot, window, '"audio of A minor, slow"')  # synthesize's Sound-Designer session waits: its result
    take_turn(qtbot, window, {"calls": [], "output": {"song": "ballad with audio of A minor, slow"}})
    qtbot.waitUntil(lambda: sessions.current == 0)
    idle(qtbot, window)
    assert composer.loop.document.context.resolve("†state.sound").value == "audio of A minor, slow"
    assert window.context().resolve("†state.song").value == {"song": "ballad with audio of A minor, slow"}
    assert not window.context().resolve("†state.sound").found  # the Composer's room stays its own


def test_continue_runs_the_current_sessions_calls_not_the_documents(qtbot: Any, open_window: Any,
                                                                    report: Path) -> None:
    """F5 inside the Researcher's session runs its calls (search, then the anonymous summarise, asked for
    its output), stops when nothing is ready there, and leaves the document's calls and context alone."""
    window = opened(open_window, report)
    inspector = inspector_of(window)
    researcher = stepped_into(qtbot, window)
    assert researcher.loop is not None
    before = window.context().messages
    run_action(window, "Continue")
    answer(qtbot, window, f'"{SUMMARY}"')  # summarise, delegated again: an anonymous latent session
    qtbot.waitUntil(lambda: researcher.model.status(1) is Status.DONE, timeout=LOADED_MS)
    idle(qtbot, window)
    assert researcher.model.status(0) is Status.DONE
    assert researcher.loop.document.context.resolve("†state.summary").value == SUMMARY
    assert sessions_of(window).current == 1  # still in the delegate's session
    assert window.context().messages == before  # nothing of the document ran
    assert inspector.model.status(0) is Status.WAITING_FOR_OUTPUT
    assert inspector.model.status(1) is not Status.DONE


def test_a_lazy_plan_in_a_delegate_session_is_approved_there(qtbot: Any, open_window: Any, report: Path) -> None:
    """The Researcher's plan is lazy (012): stepped into, nothing of it runs and Run → Approve Plan is
    offered for the session; approving it lets Step run its calls there, and the document's plan is not
    touched."""
    researcher_file = report.parent / "Researcher.json"
    content = json.loads(researcher_file.read_text())
    plan = next(m for m in content["context"] if m["type"] == "plan")
    plan["mode"] = "lazy"
    researcher_file.write_text(json.dumps(content))
    window = opened(open_window, report)
    approve = next(a for a in window.menu("Run").actions() if a.text().replace("&", "") == "Approve Plan")
    assert not approve.isEnabled()  # the document's own plan is not lazy
    researcher = stepped_into(qtbot, window)
    assert researcher.loop is not None
    qtbot.waitUntil(approve.isEnabled)
    assert "lazy" in window.turns.label.text()  # type: ignore[attr-defined]
    page = inspector_of(window).session_view.page(researcher)  # type: ignore[union-attr]
    assert page is not None
    assert page.status.text() == "Stepped into #0: the delegate's plan is lazy (012): Run → Approve Plan lets it run"
    run_action(window, "Step")
    idle(qtbot, window)
    assert researcher.model.status(0) is Status.READY  # a lazy plan runs nothing before it is approved
    approve.trigger()
    assert not approve.isEnabled()
    run_action(window, "Step")
    qtbot.waitUntil(lambda: researcher.model.status(0) is Status.DONE)
    idle(qtbot, window)
    assert researcher.loop.document.context.resolve("†state.sources").found
    assert not inspector_of(window).debugger.plan_approved  # the document's plan: not approved by this


def test_the_call_stack_names_the_document_opened_after_the_window(qtbot: Any, open_window: Any,
                                                                    report: Path) -> None:
    """The call stack's first row is the open document's name, in a window started on no document too."""
    window: MainWindow = open_window(None)
    stack = inspector_of(window).docks["Call stack"].widget()
    assert isinstance(stack, QListWidget)
    assert stack.item(0).text() == "Untitled"
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(report)
    assert stack.item(0).text() == "report.json"


def test_save_as_while_a_call_runs_renames_the_call_stacks_first_row(qtbot: Any, open_window: Any, examples: Path,
                                                                      tmp_path: Path) -> None:
    """Saved under another name while the debugger runs (a call waiting for its approval), the call stack's first
    row says the new name."""
    shutil.copy(examples / "seed_variables.json", tmp_path / "seed.json")
    window = opened(open_window, tmp_path / "seed.json")
    parts = inspector_of(window)
    stack = parts.docks["Call stack"].widget()
    assert isinstance(stack, QListWidget)
    assert stack.item(0).text() == "seed.json"
    parts.debugger.approval_enabled = True
    task = parts.debugger.start_step()
    qtbot.waitUntil(lambda: isinstance(parts.debugger.open_dialog, ApprovalDialog), timeout=LOADED_MS)
    assert parts.debugger.running
    assert window.session.save_as(tmp_path / "renamed.json")
    assert stack.item(0).text() == "renamed.json"
    parts.debugger.open_dialog.close()
    qtbot.waitUntil(task.done, timeout=LOADED_MS)
