"""The loop in the window (010, 012), through the real widgets: a tick ends, the next turn is typed or asked
for, checked against the composed request schema, taken as one undo step, and a valid output ends the loop."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from conftest import LOADED_MS, Painted
from contextdeck.engine import SECOND_CALL, Status
from contextdeck.gui import _turns as turns
from contextdeck.gui._inspector._async import release
from contextdeck.gui._llm import BACKGROUND_FROM
from contextdeck.gui._models import ModelConfig
from contextdeck.gui._slices import slices
from contextdeck.gui._timeline_model import ItemRole, TypeRole
from contextdeck.gui._turns import TurnDialog
from contextdeck.gui._window import MainWindow
from fake_llm import Reply

NOTE = {"type": "object", "description": "Write a note.",
        "properties": {"text": {"type": "string"}, "_output": {"type": "string"}}, "required": ["text"]}
SCHEMA = {"type": "object", "properties": {"status": {"type": "string", "enum": ["Success", "Failed"]}},
          "required": ["status"]}


def document(mode: str | None = None) -> dict[str, Any]:
    """A saved request: a latent tool with its results given, a first plan that writes †state.first."""
    plan: dict[str, Any] = {"type": "plan", "plan": [
        {"_tool": "note", "text": "†input.text", "_output": "first", "_outputPath": "†state.first"}]}
    if mode is not None:
        plan["mode"] = mode
    return {"schema": SCHEMA, "context": [
        {"type": "tool", "tool": {"note": NOTE}},
        {"type": "input", "input": {"text": "hello"}},
        plan,
    ]}


@pytest.fixture
def open_document(open_window: Any, tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], MainWindow]]:
    """Opens a document (saved in tmp_path) in the real window."""

    def make(content: dict[str, Any]) -> MainWindow:
        path = tmp_path / "loop.json"
        path.write_text(json.dumps(content))
        window: MainWindow = open_window(path)
        return window

    yield make
    release()


@pytest.fixture
def window(open_document: Callable[[dict[str, Any]], MainWindow]) -> MainWindow:
    return open_document(document())


def action(window: MainWindow, text: str) -> Any:
    return next(a for a in window.menu("Run").actions() if a.text().replace("&", "") == text)


def state(window: MainWindow, path: str) -> Any:
    found = window.context().resolve(path)
    return found.value if found.found else None


def run_the_tick(qtbot: Any, window: MainWindow) -> None:
    """Continue, then wait until the tick has ended (Next Turn is offered)."""
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: action(window, "Next Turn…").isEnabled(), timeout=5000)


def open_turn(qtbot: Any, window: MainWindow) -> TurnDialog:
    action(window, "Next Turn…").trigger()
    dialog = window.turns.dialog  # type: ignore[attr-defined]
    assert isinstance(dialog, TurnDialog)
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def type_turn(qtbot: Any, dialog: TurnDialog, turn: Any) -> None:
    """Replace the dialog's text by typing the turn, as a user does; wait for the live check. (QTest types
    ASCII only: a † is typed as JSON's \\u2020.)"""
    dialog.editor.setFocus()
    dialog.editor.selectAll()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Delete)
    qtbot.keyClicks(dialog.editor, turn if isinstance(turn, str) else json.dumps(turn))
    qtbot.waitUntil(lambda: not dialog.timer.isActive())


def problems(dialog: TurnDialog) -> list[str]:
    return [dialog.problems.item(row).text() for row in range(dialog.problems.count())]


SECOND = {"calls": [{"_tool": "note", "text": "†state.first", "_output": "second", "_outputPath": "†state.second"}],
          "output": None}


def test_a_typed_turn_becomes_the_plan_and_its_calls_run_on_continue(qtbot: Any, window: MainWindow) -> None:
    """Tick 1 ends without an output: Next Turn is offered; the typed turn (checked against the composed
    schema, shown beside it) is appended as a plan, its call runs on Continue; undo takes the turn back."""
    assert not action(window, "Next Turn…").isEnabled()  # the first tick has not run
    run_the_tick(qtbot, window)
    assert state(window, "†state.first") == "first"
    assert "waiting for the next turn" in window.turns.label.text()  # type: ignore[attr-defined]
    assert "Run → Next Turn… (F8)" in window.statusBar().currentMessage()
    dialog = open_turn(qtbot, window)
    assert json.loads(dialog.schema.toPlainText())["properties"]["calls"]["items"]["properties"]["_tool"] == {
        "const": "note"}
    type_turn(qtbot, dialog, SECOND)
    assert problems(dialog) == []
    assert dialog.take_button.isEnabled()
    before = len(window.context())
    dialog.take_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.context()[before] == {"type": "plan", "plan": SECOND["calls"]}
    model = window.inspector.model  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: model.rowCount() == 1 and model.plan(0).call == SECOND["calls"][0])
    assert model.status(0) is Status.READY
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: state(window, "†state.second") == "second", timeout=5000)
    qtbot.waitUntil(lambda: action(window, "Next Turn…").isEnabled(), timeout=5000)
    stack = window.session.undo_stack
    stack.undo()  # the second tick's output
    stack.undo()  # the turn
    assert len(window.context()) == before
    assert state(window, "†state.second") is None


def test_an_invalid_turn_is_refused_and_the_document_is_unchanged(qtbot: Any, window: MainWindow) -> None:
    """Errors say what and where (JSON path, or line and column); Take Turn stays off; forcing it changes
    nothing; the typed text is kept."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, '{"calls": [')
    assert problems(dialog)[0].startswith("line 1, column 12: not JSON")
    qtbot.mouseClick(dialog.problems.viewport(), Qt.MouseButton.LeftButton,
                     pos=dialog.problems.visualItemRect(dialog.problems.item(0)).center())
    assert dialog.editor.textCursor().position() == 11
    assert not dialog.take_button.isEnabled()
    bad = {"calls": [{"_tool": "note", "text": 5}], "output": {"status": "Done"}}
    type_turn(qtbot, dialog, bad)
    assert problems(dialog) == ["$.calls[0].text: 5 is not of type 'string'",
                                "$.output.status: 'Done' is not one of ['Success', 'Failed']"]
    assert dialog.problems.item(0).foreground().color() == QColor("#d64545")
    second = dialog.problems.visualItemRect(dialog.problems.item(1)).center()
    qtbot.mouseClick(dialog.problems.viewport(), Qt.MouseButton.LeftButton, pos=second)
    assert dialog.editor.textCursor().selectedText() == '"Done"'  # the place of $.output.status
    assert not dialog.take_button.isEnabled()
    assert "2 problems" in dialog.status.text()
    messages, undo_index = window.context().messages, window.session.undo_stack.index()
    assert dialog.take() is False  # Enter on the dialog, say: refused all the same
    assert window.context().messages == messages
    assert window.session.undo_stack.index() == undo_index
    assert window.session.document.solution is None
    assert json.loads(dialog.editor.toPlainText()) == bad
    assert dialog.isVisible()


def test_a_warning_does_not_refuse_the_turn(qtbot: Any, window: MainWindow) -> None:
    """A call to a tool the request does not offer runs latent (SPEC 6.7): listed as a warning, takeable."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, [{"_tool": "sendFax"}])
    assert problems(dialog)[0].startswith("$.calls[0]._tool: the request offers no tool 'sendFax'")
    assert dialog.take_button.isEnabled()


def test_a_valid_output_ends_the_loop_and_is_shown(qtbot: Any, window: MainWindow) -> None:
    """A turn with a call and a valid output: Continue runs the call, then the loop has finished; the status
    bar and the calls panel show the output, and Next Turn is no longer offered."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, {**SECOND, "output": {"status": "Success"}})
    dialog.take_button.click()
    assert window.session.document.solution["output"] == {"status": "Success"}
    assert not action(window, "Next Turn…").isEnabled()  # its call has not run: the tick is not over
    action(window, "Continue").trigger()
    label = window.turns.label  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: "finished" in label.text(), timeout=5000)
    assert label.text() == 'Loop: finished · output {"status":"Success"}'
    assert state(window, "†state.second") == "second"
    panel = window.inspector.panel  # type: ignore[attr-defined]
    assert panel.message.text() == 'Finished: the final output is {"status":"Success"}'
    assert not action(window, "Next Turn…").isEnabled()
    window.session.undo_stack.undo()  # the call's output: the tick is open again
    qtbot.waitUntil(lambda: "finished" not in label.text())


@pytest.mark.parametrize(("turn", "said"), [
    (SECOND, "Turn taken: Continue (F5) runs its calls."),
    ({"calls": [], "output": {"status": "Success"}}, "Turn taken: its output ends the loop."),
    ({"calls": [], "output": None}, "Turn taken: it has no calls to run; Run → Next Turn… (F8) gives the next."),
])
def test_the_status_bar_says_what_a_turn_taken_leaves_to_do(qtbot: Any, window: MainWindow, turn: Any,
                                                            said: str) -> None:
    """Continue (F5) only when the turn has calls: a turn whose output ends the loop, or one with neither calls
    nor an output, was told to press Continue for calls it does not have."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, turn)
    dialog.take_button.click()
    assert window.statusBar().currentMessage() == said


def test_ctrl_enter_in_the_text_takes_the_turn_when_take_turn_is_enabled(qtbot: Any, window: MainWindow) -> None:
    """From the turn's text, where Enter starts a line, Ctrl+Enter takes the turn as Take Turn does: not while it
    has errors (the text stays, nothing is appended), and at once when it has none."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, {"calls": [{"_tool": "note", "text": 5}], "output": None})
    before = len(window.context())
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.isVisible()
    assert len(window.context()) == before
    type_turn(qtbot, dialog, SECOND)
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.context()[before] == {"type": "plan", "plan": SECOND["calls"]}


def test_alt_t_in_the_text_takes_the_turn(qtbot: Any, window: MainWindow) -> None:
    """Take Turn has its underlined letter: Alt+T from the turn's text takes it (a text box takes Alt and a letter as
    the letter when no button of the dialog has it), and Ask Model and Cancel Asking have theirs."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    assert [b.text() for b in (dialog.ask_button, dialog.cancel_button, dialog.take_button)] == [
        "&Ask Model", "Cancel As&king", "&Take Turn"]
    type_turn(qtbot, dialog, SECOND)
    before = len(window.context())
    qtbot.keyClick(dialog.editor, Qt.Key.Key_T, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: len(window.context()) > before)
    assert window.context()[before] == {"type": "plan", "plan": SECOND["calls"]}


def solution_row(window: MainWindow) -> list[Any] | None:
    """The timeline's solution row (its calls, each as its child row holds it), None when it has none."""
    model = window.timeline.table.model()
    last = model.index(model.rowCount() - 1, 0)
    if last.data(TypeRole) != "solution":
        return None
    return [model.index(row, 0, last).data(ItemRole) for row in range(model.rowCount(last))]


def test_the_timeline_shows_the_solution_a_turn_sets_and_its_undo_takes_back(qtbot: Any, window: MainWindow) -> None:
    """A saved request's turn sets its solution: the timeline's solution row comes with its calls (it came only
    when the document was opened again), follows the next turn's calls, and goes with the undo."""
    run_the_tick(qtbot, window)
    assert solution_row(window) is None
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, SECOND)
    dialog.take_button.click()
    assert solution_row(window) == SECOND["calls"]
    window.session.undo_stack.undo()
    assert solution_row(window) is None
    window.session.undo_stack.redo()
    assert solution_row(window) == SECOND["calls"]
    assert window.timeline.table.model().rowCount() == len(window.context()) + 1


def test_a_turns_meta_is_appended_before_its_plan_and_undone_with_it(qtbot: Any, window: MainWindow) -> None:
    """016: a turn's meta (the identity, its version bumped) becomes a meta message before its plan, as
    `contextdeck run` appends it; one undo takes both back."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, {**SECOND, "meta": {"path": "/notes", "version": "2"}})
    before = len(window.context())
    dialog.take_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert [message["type"] for message in window.context().messages[before:]] == ["meta", "plan"]
    assert state(window, "†meta.version") == "2"
    window.session.undo_stack.undo()
    assert len(window.context()) == before


def test_ask_model_writes_the_turn_to_review_then_take(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """Ask Model sends the composed request to the configured model; its turn fills the text (checked), and
    Take Turn appends it with the model's exchange on the plan message."""
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    fake_llm.push(Reply.json({"meta": {"version": "2"}, **SECOND}))
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    assert dialog.ask_button.isEnabled()
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: "review it" in dialog.status.text(), timeout=5000)
    assert json.loads(dialog.editor.toPlainText())["calls"] == SECOND["calls"]
    assert problems(dialog) == []
    sent = fake_llm.completions[0]["messages"]
    assert sent == [{"role": m.role, "content": m.text} for m in dialog.request.messages]
    dialog.take_button.click()
    plan = window.context()[len(window.context()) - 1]
    assert plan["plan"] == SECOND["calls"]
    assert plan["_model"]["model"] == "fake-small"


def test_a_model_answer_that_breaks_the_schema_is_kept_to_correct(qtbot: Any, window: MainWindow,
                                                                  fake_llm: Any) -> None:
    """The model answers outside the schema: nothing is taken, its reply is in the text with the problems."""
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Maybe"}}))
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    before = window.context().messages
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: "was not taken" in dialog.status.text(), timeout=5000)
    assert json.loads(dialog.editor.toPlainText())["output"] == {"status": "Maybe"}
    assert problems(dialog) == ["$.output.status: 'Maybe' is not one of ['Success', 'Failed']"]
    assert window.context().messages == before


def test_a_lazy_plan_waits_for_approval(qtbot: Any, open_document: Callable[[dict[str, Any]], MainWindow]) -> None:
    """A lazy plan (012) runs nothing on Continue and says so; Run → Approve Plan lets it run."""
    window = open_document(document(mode="lazy"))
    approve = action(window, "Approve Plan")
    assert approve.isEnabled()
    assert "lazy" in window.turns.label.text()  # type: ignore[attr-defined]
    assert not action(window, "Next Turn…").isEnabled()
    action(window, "Continue").trigger()
    panel = window.inspector.panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: "lazy" in panel.message.text(), timeout=5000)
    assert state(window, "†state.first") is None
    approve.trigger()
    assert not approve.isEnabled()
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: state(window, "†state.first") == "first", timeout=5000)
    qtbot.waitUntil(lambda: action(window, "Next Turn…").isEnabled(), timeout=5000)


def test_a_saved_requests_own_solution_becomes_the_plan_when_it_runs(
        qtbot: Any, open_document: Callable[[dict[str, Any]], MainWindow]) -> None:
    """As `contextdeck run` does: the solution's calls are appended as a plan message before they run (one
    undo step of its own), so the next request holds the plan; a second Continue plans nothing again."""
    content = document()
    plan = content["context"].pop()
    content["solution"] = {"calls": plan["plan"], "output": None}
    window = open_document(content)
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: state(window, "†state.first") == "first", timeout=5000)
    qtbot.waitUntil(lambda: action(window, "Next Turn…").isEnabled(), timeout=5000)
    types = [message["type"] for message in window.context().messages]
    assert types == ["tool", "input", "plan", "data"]  # the plan, then the output of its call
    assert window.context()[2] == {"type": "plan", "plan": plan["plan"]}
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: not window.inspector.debugger.running)  # type: ignore[attr-defined]
    assert len(window.context()) == 4


def test_cancel_asking_leaves_the_text_as_it_was(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """A slow streamed answer is cancelled: the text is unchanged, nothing is taken, Ask Model is offered again."""
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=30))  # type: ignore[attr-defined]
    fake_llm.push(Reply.json({"meta": {}, **SECOND}, pieces=30, delay=3.0))
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    text, before = dialog.editor.toPlainText(), window.context().messages
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: "Receiving the model's turn" in dialog.status.text(), timeout=5000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Cancelled"), timeout=5000)
    assert dialog.editor.toPlainText() == text
    assert window.context().messages == before
    assert dialog.ask_button.isEnabled()
    assert dialog.take_button.isEnabled()  # the text it had is a valid turn


def test_the_status_says_an_answer_of_several_calls_will_be_refused_not_counts_it(
        qtbot: Any, window: MainWindow, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a second tool call of the streamed turn begins, the status says the answer will be refused, in the
    engine's words; those words are not counted among the characters received."""
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=30))  # type: ignore[attr-defined]
    first = json.dumps({"meta": {}, **SECOND})
    fake_llm.push(Reply(tool=("turn", first), more_tools=(("turn", '{"other": 1}'),)))
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    said: list[str] = []
    show = dialog.status.setText
    monkeypatch.setattr(dialog.status, "setText", lambda text: (said.append(text), show(text)))
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: "was not taken" in dialog.status.text(), timeout=LOADED_MS)
    receiving = [text for text in said if text.startswith("Receiving")]
    assert receiving[-1] == f"Receiving the model's turn… {len(first)} characters {SECOND_CALL.strip()}"
    assert [text for text in receiving if "second tool call" in text] == receiving[-1:]


def test_a_saved_solutions_refused_output_is_said_once(qtbot: Any,
                                                       open_document: Callable[[dict[str, Any]], MainWindow]) -> None:
    """A saved solution whose output breaks the schema: the tick ends with one output error message (one
    undo step), the calls panel says why, and the next turn is offered; running again adds no second one."""
    content = document()
    plan = content["context"].pop()
    content["solution"] = {"calls": plan["plan"], "output": {"status": "Done"}}
    window = open_document(content)
    run_the_tick(qtbot, window)
    errors = [m for m in window.context().messages if m["type"] == "error"]
    assert [e["data"]["error"]["type"] for e in errors] == ["output"]
    assert errors[0]["data"]["output"] == {"status": "Done"}
    panel = window.inspector.panel  # type: ignore[attr-defined]
    assert panel.message.text().startswith("The output was refused (the output does not meet the request schema")
    assert "waiting for the next turn" in window.turns.label.text()  # type: ignore[attr-defined]
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: not window.inspector.debugger.running)  # type: ignore[attr-defined]
    assert len([m for m in window.context().messages if m["type"] == "error"]) == 1
    window.session.undo_stack.undo()
    assert not [m for m in window.context().messages if m["type"] == "error"]


def test_problems_are_listed_in_the_turns_order_and_a_dotted_key_is_found(
        qtbot: Any, open_document: Callable[[dict[str, Any]], MainWindow]) -> None:
    """`$.output.lines[2]` comes before `$.output.lines[10]` (not sorted as text), and a key with a dot is
    named `["a.b"]` and its place is found when the problem is clicked."""
    content = document()
    content["schema"] = {"type": "object", "properties": {
        "lines": {"type": "array", "items": {"type": "string"}}, "a.b": {"type": "string"}}}
    window = open_document(content)
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    lines: list[Any] = ["x"] * 11
    lines[2], lines[10] = 2, 10
    type_turn(qtbot, dialog, {"calls": [], "output": {"lines": lines, "a.b": 5}})
    assert problems(dialog) == ['$.output["a.b"]: 5 is not of type \'string\'',
                                "$.output.lines[2]: 2 is not of type 'string'",
                                "$.output.lines[10]: 10 is not of type 'string'"]
    first = dialog.problems.visualItemRect(dialog.problems.item(0)).center()
    qtbot.mouseClick(dialog.problems.viewport(), Qt.MouseButton.LeftButton, pos=first)
    assert dialog.editor.textCursor().selectedText() == "5"
    last = dialog.problems.visualItemRect(dialog.problems.item(2)).center()
    qtbot.mouseClick(dialog.problems.viewport(), Qt.MouseButton.LeftButton, pos=last)
    assert dialog.editor.textCursor().selectedText() == "10"


def test_a_big_documents_request_is_composed_off_the_gui_thread(
        qtbot: Any, open_document: Callable[[dict[str, Any]], MainWindow], monkeypatch: pytest.MonkeyPatch) -> None:
    """Next Turn on a big document opens at once: the request (seconds at 100,000 messages) is composed on a
    frozen copy in a worker, the dialog says so meanwhile, then shows it and checks the turn against it."""
    content = document()
    content["context"][2:2] = [{"type": "text", "role": "user", "text": f"turn {n}"} for n in range(BACKGROUND_FROM)]
    window = open_document(content)
    threads: list[threading.Thread] = []
    compose = turns.compose_request

    def recorded(*args: Any, **options: Any) -> Any:
        threads.append(threading.current_thread())
        return compose(*args, **options)

    monkeypatch.setattr(turns, "compose_request", recorded)
    dialog = TurnDialog(window.turns, window)  # type: ignore[attr-defined]
    assert dialog.request is None
    assert dialog.status.text() == "Composing the request…"
    assert not dialog.take_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.request is not None, timeout=30000)
    assert threads
    assert threading.main_thread() not in threads
    assert f"turn {BACKGROUND_FROM - 1}" in dialog.messages.full_text
    # laid out a line at a time as in the LLM view, with its role lines in their colours
    assert dialog.messages.line_count() > BACKGROUND_FROM
    role = dialog.messages.styles("--- user ---")
    assert role is not None
    assert role.foreground().color().name() == "#2563eb"
    type_turn(qtbot, dialog, SECOND)
    assert problems(dialog) == []
    assert dialog.take_button.isEnabled()
    dialog.reject()


def test_closing_next_turn_stops_composing_its_request(
        qtbot: Any, open_document: Callable[[dict[str, Any]], MainWindow], monkeypatch: pytest.MonkeyPatch) -> None:
    """A closed Next Turn dialog's request (seconds of the worker at a million messages) is not composed on to
    its end: its worker stops at its next message, so opening the dialog again does not pile up composers; the
    dialog is deleted once it has stopped, and the next one composes its own."""
    content = document()
    content["context"][2:2] = [{"type": "text", "role": "user", "text": f"turn {n}"} for n in range(BACKGROUND_FROM)]
    window = open_document(content)
    run_the_tick(qtbot, window)
    started, go = threading.Event(), threading.Event()
    ended: list[str] = []
    compose = turns.compose_request

    def held(context: Any, *args: Any, **options: Any) -> Any:
        started.set()
        go.wait(30)
        try:
            request = compose(context, *args, **options)
        except BaseException as error:
            ended.append(type(error).__name__)
            raise
        ended.append("composed")
        return request

    monkeypatch.setattr(turns, "compose_request", held)
    dialog = open_turn(qtbot, window)
    qtbot.waitUntil(started.is_set, timeout=30000)
    gone: list[bool] = []
    dialog.destroyed.connect(lambda: gone.append(True))
    dialog.reject()
    go.set()
    qtbot.waitUntil(lambda: gone == [True], timeout=30000)
    assert ended == ["Stopped"]
    again = open_turn(qtbot, window)
    qtbot.waitUntil(lambda: again.request is not None, timeout=30000)
    assert ended == ["Stopped", "composed"]
    again.reject()


@pytest.mark.parametrize("big", [False, True])
def test_a_closed_next_turn_dialog_is_deleted_once_its_worker_is_done(
        qtbot: Any, open_document: Callable[[dict[str, Any]], MainWindow], big: bool) -> None:
    """Closing Next Turn deletes the dialog and the request text it shows, at once or, while its worker
    still composes the request of a big document, when the worker is done; the next opening is a new one."""
    content = document()
    if big:
        content["context"][2:2] = [{"type": "text", "role": "user", "text": f"turn {n}"}
                                   for n in range(BACKGROUND_FROM)]
    window = open_document(content)
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    if big:
        assert dialog.composer.busy  # composing on its worker
    gone: list[bool] = []
    dialog.destroyed.connect(lambda: gone.append(True))
    dialog.reject()
    qtbot.waitUntil(lambda: gone == [True], timeout=30000)
    assert window.findChildren(TurnDialog) == []
    again = open_turn(qtbot, window)
    assert again is not dialog
    again.reject()


def to_act_on(qtbot: Any, window: MainWindow) -> tuple[Any, list[Any]]:
    """The tick over, message 1 selected in the focused timeline (Delete would delete it, Ctrl+D duplicate it, a
    click on row 0 select that): the timeline and the messages as they are."""
    run_the_tick(qtbot, window)
    qtbot.waitUntil(lambda: not window._busy())  # the run's stop has selected what it wrote last
    table = window.timeline.table
    window.select_message(1)
    table.setFocus()
    qtbot.waitUntil(lambda: table.hasFocus() and window.selected_message() == 1)
    return table, window.context().messages


def test_next_turn_is_made_in_one_turn_and_shown_whole_in_a_later_one(qtbot: Any, window: MainWindow) -> None:
    """Next Turn makes the dialog in the turn of the command and opens it, window-modal, in later ones: when it is
    first painted its text, its buttons and what it says of the request are in place."""
    run_the_tick(qtbot, window)
    action(window, "Next Turn…").trigger()
    dialog = window.turns.dialog  # type: ignore[attr-defined]
    assert isinstance(dialog, TurnDialog)
    assert not dialog.isVisible()
    seen: list[tuple[Any, ...]] = []

    class FirstPaint(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and dialog.isVisible() and not seen:
                seen.append((dialog.editor.toPlainText(), dialog.take_button.text(), dialog.intro.text(),
                             dialog.request is not None, dialog.windowModality()))
            return False

    paints = FirstPaint(dialog)
    dialog.installEventFilter(paints)
    qtbot.waitUntil(lambda: bool(seen))
    assert seen == [(turns.TEMPLATE, "&Take Turn", window.turns.intro(), True,  # type: ignore[attr-defined]
                     Qt.WindowModality.WindowModal)]
    dialog.reject()


def test_opening_next_turn_repaints_no_editor(qtbot: Any, window: MainWindow) -> None:
    """A dialog is a child of the window made after the editor, which was moved back over it once the dialog was open
    (`DockWindow.childEvent`): the whole editor was painted again as Next Turn opened. While a modal dialog is open over
    the window no dock tab changes, and it is deleted when done: the editor stays as it is. (A dialog made ahead and
    kept hidden still has the editor moved back over it: test_dock_tabs.py.)"""
    run_the_tick(qtbot, window)
    qtbot.waitUntil(lambda: not slices().pending)
    qtbot.wait(200)
    painted = Painted(window.editor)  # (the editor's child, not the window's: made after the editor, it would be moved)
    dialog = open_turn(qtbot, window)
    qtbot.waitUntil(lambda: not slices().pending)
    qtbot.wait(200)
    assert painted.count == 0
    dialog.reject()


def test_next_turn_is_painted_unseen_in_a_turn_of_its_own_before_it_opens(qtbot: Any, window: MainWindow) -> None:
    """The dialog's first paint (its widgets' first, the dearest) is made unseen, into an image, in a turn before
    the one that opens it: the open's turn has the showing and a paint of widgets painted before."""
    run_the_tick(qtbot, window)
    action(window, "Next Turn…").trigger()
    dialog = window.turns.dialog  # type: ignore[attr-defined]
    assert isinstance(dialog, TurnDialog)
    events: list[tuple[str, bool, int]] = []

    class Paints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() in (QEvent.Type.Paint, QEvent.Type.Show):  # seen: shown, and on screen
                seen = dialog.isVisible() and not dialog.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
                events.append((event.type().name, seen, slices().turns))
            return False

    paints = Paints(dialog)
    dialog.installEventFilter(paints)
    qtbot.waitUntil(lambda: any(seen and what == "Paint" for what, seen, _turn in events))
    unseen = [turn for what, seen, turn in events if what == "Paint" and not seen]
    opened = next(turn for what, seen, turn in events if what == "Show" and seen)
    assert unseen
    assert max(unseen) < opened
    dialog.reject()


def shows_of(dialog: TurnDialog) -> list[bool]:
    """A list that gets an entry each time `dialog` is shown (unseen or not)."""
    shown: list[bool] = []

    class Shows(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Show:
                shown.append(True)
            return False

    dialog.installEventFilter(Shows(dialog))
    return shown


def test_next_turn_is_laid_out_in_a_turn_before_it_is_shown_unseen(qtbot: Any, window: MainWindow) -> None:
    """The dialog's layout (each widget's size hint, its text measured) is worked out in a turn before the one that
    shows it unseen: the show did both, the dearest turn of the dialog's making. Looked at between the turns, the
    dialog is laid out while not yet shown."""
    run_the_tick(qtbot, window)
    action(window, "Next Turn…").trigger()
    dialog = window.turns.dialog  # type: ignore[attr-defined]
    assert isinstance(dialog, TurnDialog)
    shown = shows_of(dialog)
    seen: list[tuple[bool, bool]] = []  # between turns: (laid out, shown yet)
    layout = dialog.layout()
    assert layout is not None
    assert layout.geometry().isEmpty()  # made, not laid out yet
    look = QTimer(dialog, interval=0)
    look.timeout.connect(lambda: seen.append((not layout.geometry().isEmpty(), bool(shown))))
    look.start()
    qtbot.waitUntil(dialog.isVisible)
    look.stop()
    assert (True, False) in seen
    dialog.reject()


@pytest.mark.parametrize("press", ["key", "shortcut", "click"])
def test_input_before_next_turn_opens_opens_it_and_is_refused(qtbot: Any, window: MainWindow, press: str) -> None:
    """A key, a shortcut or a click that reaches the window between the making of Next Turn and its opening opens
    it at once and is refused, as the window-modal dialog refuses it: nothing acts on the window."""
    table, messages = to_act_on(qtbot, window)
    dialog = window.turns.open_dialog()  # type: ignore[attr-defined]
    assert dialog is not None
    assert not dialog.isVisible()
    if press == "key":
        QTest.keyClick(window.windowHandle(), Qt.Key.Key_Delete)  # as the window system delivers it
    elif press == "shortcut":
        QTest.keyClick(window.windowHandle(), Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    else:
        row = table.viewport().mapTo(window, table.visualRect(table.model().index(0, 0)).center())
        QTest.mouseClick(window.windowHandle(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, row)
    assert dialog.isVisible()
    qtbot.wait(100)
    assert window.context().messages == messages
    assert window.selected_message() == 1
    dialog.reject()


@pytest.mark.parametrize("sent", ["close", "drop"])
def test_a_close_or_drop_before_next_turn_opens_is_refused_to_the_window_system(
        qtbot: Any, window: MainWindow, sent: str) -> None:
    """A close of the window, or a drop on it, between the making of Next Turn and its opening opens it and is
    refused as the window-modal dialog refuses it: not accepted, so that the window system neither closes the
    window nor tells a drag's source its data was taken (a move would delete it there)."""
    from PySide6.QtCore import QMimeData, QPointF
    from PySide6.QtGui import QCloseEvent, QDropEvent

    _table, messages = to_act_on(qtbot, window)
    dialog = window.turns.open_dialog()  # type: ignore[attr-defined]
    assert dialog is not None
    assert not dialog.isVisible()
    data = QMimeData()
    data.setText("dropped")
    event = QCloseEvent() if sent == "close" else QDropEvent(
        QPointF(10, 10), Qt.DropAction.MoveAction, data, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    event.accept()
    QApplication.sendEvent(window.windowHandle(), event)
    assert dialog.isVisible()
    assert not event.isAccepted()
    assert window.isVisible()
    assert window.context().messages == messages
    dialog.reject()


def test_next_turn_closed_before_it_opens_never_opens_and_leaves_input_alone(
        qtbot: Any, window: MainWindow) -> None:
    """Closed between its making and its opening (a run stopped), Next Turn never shows, even while it is kept
    (a delegate's dialog is deleted once its session has heard it closed), and the window takes input again: a key
    acts on it."""
    _table, messages = to_act_on(qtbot, window)
    dialog = TurnDialog(window.turns, window)  # type: ignore[attr-defined]
    shown = shows_of(dialog)
    dialog.open_soon()
    dialog.reject()
    qtbot.wait(100)
    assert shown == []
    assert not dialog.isVisible()
    QTest.keyClick(window.windowHandle(), Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: len(window.context()) == len(messages) - 1)


def test_next_turn_in_an_empty_document_asks_for_the_first_turn(qtbot: Any, open_window: Any) -> None:
    """In a new, empty document the dialog began "The tick has ended without a final output", while the status bar
    said the document was empty: it asks for the model's first turn; after a tick, for the next one."""
    window = open_window(None)
    assert len(window.context()) == 0
    dialog = open_turn(qtbot, window)
    assert dialog.intro.text().startswith("The document is empty. Type the model's first turn, ")
    dialog.close()


def test_next_turn_in_a_document_with_no_plan_yet_asks_for_the_first_turn(qtbot: Any, open_document: Any) -> None:
    """A document with its system text, input and tools but no plan (the adder agent as written) began "The tick has
    ended without a final output" too (driven by keys): it asks for the model's first turn."""
    window = open_document([{"type": "text", "role": "system", "text": "Add."}, {"type": "input", "input": {"a": 1}}])
    dialog = open_turn(qtbot, window)
    assert dialog.intro.text().startswith("No turn has been taken yet. Type the model's first turn, ")
    dialog.close()


@pytest.mark.parametrize(("after", "said", "offered"), [
    ([], 'Loop: finished · output "done"', False),
    ([{"type": "text", "role": "user", "text": "Again."}], "Loop: waiting for the next turn (F8)", True),
])
def test_a_bare_plans_output_ends_the_loop_until_the_user_asks_again(
        qtbot: Any, open_document: Any, after: list[dict[str, Any]], said: str, offered: bool) -> None:
    """A bare array keeps its final output in its plan message: the window says the loop has finished, as
    `contextdeck run` does; a user's text after it is a new request, whose turn Next Turn asks for."""
    window = open_document([{"type": "text", "role": "user", "text": "Say done."},
                            {"type": "plan", "plan": [], "output": "done"}, *after])
    label = window.turns.label  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: label.text() == said, timeout=5000)
    assert action(window, "Next Turn…").isEnabled() is offered


def test_next_turn_after_a_tick_asks_for_the_next_turn(qtbot: Any, window: MainWindow) -> None:
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    assert dialog.intro.text().startswith("The tick has ended without a final output. Type the model's next turn, ")
    dialog.close()


def tab_walk(qtbot: Any, dialog: TurnDialog) -> list[str]:
    """What Tab visits from the turn's text until it is back, named by the widgets' attribute or class."""
    names = {id(widget): name for name, widget in vars(dialog).items() if isinstance(widget, QWidget)}
    dialog.activateWindow()
    dialog.editor.setFocus()
    qtbot.waitUntil(dialog.editor.hasFocus)
    seen: list[str] = []
    for _ in range(12):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        if focused is dialog.editor:
            break
        seen.append(names.get(id(focused), type(focused).__name__ if not isinstance(focused, QPushButton)
                                 else focused.text()))
    return seen


def test_tab_skips_the_empty_problem_list_and_follows_the_screen(qtbot: Any, window: MainWindow) -> None:
    """The problem list under the turn's text was a Tab stop while empty (a stop that shows nothing), and the tabs'
    bar came after the view under it. Tab goes down the left, then the right's tabs and view, then the buttons as
    laid out; a listed problem is a stop."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, SECOND)
    assert problems(dialog) == []
    after = ["QTabBar", "schema", "take_button", "Close"]  # Ask Model and Cancel Asking: disabled, no model set up
    assert tab_walk(qtbot, dialog) == after
    type_turn(qtbot, dialog, {"calls": [{"_tool": "nope"}], "output": None})
    assert problems(dialog)
    assert tab_walk(qtbot, dialog) == ["problems", *after]
    dialog.close()


def test_the_arrows_in_the_problem_list_select_each_place_and_enter_takes_the_turn(
        qtbot: Any, window: MainWindow) -> None:
    """A problem's place in the text was selected by a click only; the arrows in the list moved through the problems
    and selected nothing. Tab into the list selects the first one's place, Down the next one's, the focus staying in
    the list; Enter there is the dialog's: Take Turn (warnings only), nothing while it is off (an error). A turn
    typed as its list of calls has its places found too (`$.calls[1]` is its second item)."""
    run_the_tick(qtbot, window)
    dialog = open_turn(qtbot, window)
    type_turn(qtbot, dialog, {"calls": [{"_tool": "note", "text": 5}], "output": None})
    assert len(problems(dialog)) == 1
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab)
    assert dialog.problems.hasFocus()
    assert dialog.editor.textCursor().selectedText() == "5"
    qtbot.keyClick(dialog.problems, Qt.Key.Key_Return)
    assert dialog.isVisible()  # Take Turn is off: nothing taken, the dialog stays
    assert dialog.problems.hasFocus()

    type_turn(qtbot, dialog, [{"_tool": "sendFax"}, {"_tool": "nope"}])  # the turn as its calls alone
    assert [text.split(":")[0] for text in problems(dialog)] == ["$.calls[0]._tool", "$.calls[1]._tool"]
    assert dialog.take_button.isEnabled()
    assert not dialog.editor.textCursor().hasSelection()  # the list filled again while typing selects nothing
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab)
    assert dialog.editor.textCursor().selectedText() == '"sendFax"'
    assert dialog.problems.selectedItems() == [dialog.problems.item(0)]  # drawn chosen, as after a click
    qtbot.keyClick(dialog.problems, Qt.Key.Key_Down)
    assert dialog.problems.hasFocus()
    assert dialog.editor.textCursor().selectedText() == '"nope"'
    qtbot.keyClick(dialog.problems, Qt.Key.Key_Up)
    assert dialog.editor.textCursor().selectedText() == '"sendFax"'
    before = len(window.context())
    qtbot.keyClick(dialog.problems, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.context()[before]["type"] == "plan"


def test_a_saved_model_solution_planned_on_run_keeps_its_mark(qtbot: Any, open_document: Any) -> None:
    """A model's turn saved by `contextdeck ask` (its `_model` kept in the solution) is planned when Continue runs
    it: the meta and plan appended carry the mark, as the engine's loop appends them, so an experiment's cases
    start their run there."""
    meta = {"type": "meta", "meta": {"path": "/notes", "version": "1.0.0"}}
    window = open_document({"schema": SCHEMA, "context": [
        {"type": "tool", "tool": {"note": NOTE}}, meta, {"type": "input", "input": {"text": "hello"}}],
        "solution": {"meta": {"path": "/notes", "version": "1.0.1"}, "output": None, "_model": {"model": "m"},
                     "calls": [{"_tool": "note", "text": "†input.text", "_output": "first",
                                "_outputPath": "†state.first"}]}})
    run_the_tick(qtbot, window)
    assert state(window, "†state.first") == "first"
    appended = window.context().messages[3:5]
    assert [(message["type"], message.get("_model")) for message in appended] == [("meta", {"model": "m"}),
                                                                                  ("plan", {"model": "m"})]
