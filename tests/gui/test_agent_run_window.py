"""Run → Run with Model, through the real window against the loopback fake model: turns until the final output,
a breakpoint before each model turn where the answer is edited, a refused answer, Cancel."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextdeck.gui import _agent_run as agent_run
from contextdeck.gui._inspector._async import release
from contextdeck.gui._models import ModelConfig
from contextdeck.gui._summary import message_summary
from contextdeck.gui._window import MainWindow
from fake_llm import Reply

NOTE = {"type": "object", "description": "Write a note.",
        "properties": {"text": {"type": "string"}, "_output": {"type": "string"}}, "required": ["text"]}
SCHEMA = {"type": "object", "properties": {"status": {"type": "string", "enum": ["Success", "Failed"]}},
          "required": ["status"]}
NOTE_CALL = {"_tool": "note", "text": "†input.text", "_outputPath": "†state.second"}


def document() -> dict[str, Any]:
    """A saved request whose first plan writes †state.first; the model gives the turns after it."""
    return {"schema": SCHEMA, "context": [
        {"type": "tool", "tool": {"note": NOTE}},
        {"type": "input", "input": {"text": "hello"}},
        {"type": "plan", "plan": [{"_tool": "note", "text": "†input.text", "_output": "first",
                                   "_outputPath": "†state.first"}]},
    ]}


@pytest.fixture
def window(open_window: Any, tmp_path: Path, fake_llm: Any) -> Iterator[MainWindow]:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(document()))
    made: MainWindow = open_window(path)
    made.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    yield made
    release()


def state(window: MainWindow, path: str) -> Any:
    found = window.context().resolve(path)
    return found.value if found.found else None


def finished(qtbot: Any, window: MainWindow) -> Callable[[], bool]:
    run = window.agent_run  # type: ignore[attr-defined]
    return lambda: run.task is not None and run.task.done()


@pytest.mark.parametrize("off_thread", [False, True])
def test_run_with_model_goes_through_the_turns_to_the_final_output(qtbot: Any, window: MainWindow, fake_llm: Any,
                                                                  monkeypatch: Any, off_thread: bool) -> None:
    """The first plan runs, the model's first turn plans a latent call it then answers, its second turn gives
    the output: the loop finishes, and each turn's plan message carries the model's exchange. `off_thread`: the
    request is composed on a frozen copy off the GUI thread, as for a big document, with the same result."""
    if off_thread:
        monkeypatch.setattr(agent_run, "BACKGROUND_FROM", 0)
    fake_llm.push(Reply.json({"meta": {}, "calls": [NOTE_CALL], "output": None}),
                  Reply.json({"result": "second"}),
                  Reply.json({"meta": {}, "calls": [], "output": {"status": "Success"}}))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert run.task.result() == "finished: the final output is valid"
    assert (state(window, "†state.first"), state(window, "†state.second")) == ("first", "second")
    assert window.session.document.solution["output"] == {"status": "Success"}
    plans = [m for m in window.context() if m.get("type") == "plan"]
    assert plans[-1]["plan"] == [NOTE_CALL]
    assert plans[-1]["_model"]["usage"]["total_tokens"] == 18
    assert window.session.document.solution["_model"]["model"] == "fake-small"
    assert "Loop: finished" in window.turns.label.text()  # type: ignore[attr-defined]
    assert len(fake_llm.completions) == 3
    # Turns as groups: the calls panel names the turn and its record, the timeline's plan row who gave it.
    assert run.turn_label.text().startswith("Turn 3 · fake-small · 18 tokens · ")
    context = window.context()
    row = max(i for i in range(len(context)) if context[i].get("type") == "plan")
    assert message_summary(context[row], context.info(row)).startswith("turn by fake-small · 18 tokens · ")


def test_a_bare_contexts_answer_is_said_to_give_the_output_not_to_lack_calls(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """In a context without a saved request the model's last turn is a plan message with no calls and the output:
    the calls panel said "the last plan message has none yet; add them (+ call)", the timeline's note under it the
    same, and its row "0 calls: ". All three say it gives the final output."""
    from contextdeck.gui._inspector._panel import ANSWER_PLAN
    from contextdeck.gui._timeline import ANSWER_PLAN as ROW_NOTE

    path = tmp_path / "bare.json"
    path.write_text(json.dumps([{"type": "text", "role": "system", "text": "Say done."}]))
    window: MainWindow = open_window(path)
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "done"}}))
    window.agent_run.run_action.trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    context = window.context()
    assert context[1]["output"] == {"status": "done"}
    panel = window.inspector.panel
    qtbot.waitUntil(lambda: panel.message.text() == ANSWER_PLAN.format(1))
    window.select_message(1)
    qtbot.waitUntil(lambda: window.timeline.calls_note.text() == ROW_NOTE)
    assert message_summary(context[1], context.info(1)).endswith(': output {status: "done"}')
    release()


def test_a_fork_and_a_save_as_replay_the_answers_recorded_before(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """The model's answers are recorded beside the document (`DOC.models.jsonl`): a fork, or the document saved
    under another name, started with no recording, so Run with Model asked the same question again (paid for,
    and perhaps answered otherwise). The recording goes with it; one the new name has of its own is kept."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps([{"type": "text", "role": "system", "text": "Say done."}]))
    window: MainWindow = open_window(path)
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "done"}}))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert len(fake_llm.completions) == 1
    window.select_message(0)
    qtbot.waitUntil(lambda: window.document.selected_message() == 0)
    window.inspector.wiring.ask_fork_path = lambda: str(tmp_path / "fork.json")  # type: ignore[attr-defined]
    assert window.inspector.wiring.fork_here() == tmp_path / "fork.json"
    qtbot.waitUntil(lambda: window.session.path == tmp_path / "fork.json" and window.document.is_shown())
    run.run_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert window.context()[1]["_model"]["replayed"] is True
    assert len(fake_llm.completions) == 1, "replayed from the recording the fork took along"
    own = tmp_path / "copy.json.models.jsonl"
    own.write_text("")
    for name in ("again.json", "copy.json"):
        window.files.ask_save_path = lambda name=name: str(tmp_path / name)  # type: ignore[method-assign]
        assert window.files.save_as_dialog()
    assert (tmp_path / "again.json.models.jsonl").read_bytes() == (tmp_path / "fork.json.models.jsonl").read_bytes()
    assert own.read_text() == "", "a recording of its own is kept"
    release()


def test_an_unsaved_documents_answers_are_written_beside_it_when_it_is_saved(open_window: Any, tmp_path: Path) -> None:
    """An unsaved document's exchanges are kept in memory; saved, they are its recording."""
    window: MainWindow = open_window(None)
    models = window.models.models  # type: ignore[attr-defined]
    models.memory.put({"digest": "sha256:asked", "response": {"content": "{}"}})
    window.files.ask_save_path = lambda: str(tmp_path / "new.json")  # type: ignore[method-assign]
    assert window.files.save_as_dialog()
    recorded = [json.loads(line) for line in (tmp_path / "new.json.models.jsonl").read_text().splitlines()]
    assert [exchange["digest"] for exchange in recorded] == ["sha256:asked"]


def test_a_breakpoint_before_the_model_turn_lets_the_answer_be_edited(qtbot: Any, window: MainWindow,
                                                                     fake_llm: Any) -> None:
    """Break Before Each Model Turn: the dialog shows the request as sent and the model's answer; the answer
    is edited before Take Turn, and the run goes on to finish with the edited output."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Success"}}))
    run = window.agent_run  # type: ignore[attr-defined]
    run.break_before.setChecked(True)
    run.run_action.trigger()
    qtbot.waitUntil(lambda: window.turns.dialog is not None  # type: ignore[attr-defined]
                    and "review it" in window.turns.dialog.status.text(), timeout=15000)  # type: ignore[attr-defined]
    dialog = window.turns.dialog  # type: ignore[attr-defined]
    sent = fake_llm.completions[0]["messages"]
    assert sent == [{"role": m.role, "content": m.text} for m in dialog.request.messages]
    assert json.loads(dialog.editor.toPlainText())["output"] == {"status": "Success"}
    assert not finished(qtbot, window)()  # stopped at the breakpoint
    dialog.editor.setPlainText(json.dumps({"calls": [], "output": {"status": "Failed"}}))
    qtbot.waitUntil(dialog.take_button.isEnabled, timeout=5000)
    dialog.take_button.click()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert run.task.result() == "finished: the final output is valid"
    assert window.session.document.solution["output"] == {"status": "Failed"}
    assert "_model" not in window.session.document.solution  # edited: no longer the model's answer
    assert run.turn_label.text() == "Turn 2 · typed or given (no model exchange)"


def test_a_refused_answer_stops_with_the_reply_to_correct(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """A turn outside the request schema opens the dialog with the reply and its problems; nothing is taken.
    Closing the dialog stops the run there."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Maybe"}}))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(lambda: window.turns.dialog is not None, timeout=15000)  # type: ignore[attr-defined]
    dialog = window.turns.dialog  # type: ignore[attr-defined]
    assert "refused" in dialog.status.text()
    assert json.loads(dialog.editor.toPlainText())["output"] == {"status": "Maybe"}
    assert not dialog.take_button.isEnabled()
    before = window.context().messages
    dialog.reject()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert run.task.result() == "stopped at the model's turn: the turn was not taken"
    assert window.context().messages == before


def test_cancel_stops_the_run_while_the_model_is_asked(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """Stop while a turn is being asked: the request is dropped, nothing is taken, the run says cancelled."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Success"}}, delay=3.0))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(lambda: run.asking is not None, timeout=15000)
    before = window.context().messages
    run.stop_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert run.task.result().startswith("cancelled")
    assert window.context().messages == before
    assert window.session.document.solution is None


def test_cancel_stops_the_run_inside_a_tick(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """Stop while the tick waits for the model's answer to a latent call: the answer is dropped, the call keeps
    waiting, nothing more is asked and the run says cancelled."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [NOTE_CALL], "output": None}),
                  Reply.json({"result": "second"}, delay=3.0))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(lambda: len(fake_llm.requests) == 2 and window.inspector.debugger.running, timeout=15000)
    run.stop_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert run.task.result().startswith("cancelled")
    assert state(window, "†state.second") is None
    assert not window.inspector.debugger.running
    qtbot.wait(3500)  # the dropped answer arrives at the server's end: still nothing is written or asked
    assert state(window, "†state.second") is None
    assert len(fake_llm.completions) == 2


def test_the_breakpoint_kinds_are_kept_for_the_next_start(qtbot: Any, open_window: Any, tmp_path: Path,
                                                        window: MainWindow) -> None:
    """Break Before Each Model Turn on, Break on a Refused Answer off: a second window (the next start) has
    them so."""
    run = window.agent_run  # type: ignore[attr-defined]
    run.break_before.setChecked(True)
    run.break_refused.setChecked(False)
    again = open_window(None).agent_run  # type: ignore[attr-defined]
    assert (again.break_before.isChecked(), again.break_refused.isChecked()) == (True, False)


def test_an_answer_after_the_last_plan_names_whose_calls_are_listed(tmp_path: Path) -> None:
    """An imported run ends in a solution that is only the answer: the calls panel lists the last plan's calls
    (turn 1) while the turn the document is at is the answer's (turn 2). The heading said "Turn 2 · ..." over
    turn 1's calls; it names both now. Without the answer, the plan's turn alone."""
    from test_traces_window import EXCHANGE

    from contextdeck.engine import import_trace

    source = tmp_path / "exchange.json"
    source.write_text(json.dumps(EXCHANGE))
    document = import_trace(source)[0].document
    assert document.solution is not None
    assert "calls" not in document.solution
    assert agent_run.turn_of(document) == "Turn 1's calls · then turn 2, the answer: gpt-4o-mini · tokens unknown"
    document.solution = None
    assert agent_run.turn_of(document).startswith("Turn 1 · ")


def test_undoing_the_models_answer_says_so_in_place_of_the_turns_message(qtbot: Any, window: MainWindow,
                                                                         fake_llm: Any) -> None:
    """Ctrl+Z after Run with Model undid the final turn, but the status bar still said "Turn taken: its output ends
    the loop." while the loop waited for that turn again: Undo and Redo say what they undid and redid."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Success"}}))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert "ends the loop" in window.statusBar().currentMessage()
    window.actions_by_name["undo"].trigger()
    assert window.session.document.solution is None
    assert window.statusBar().currentMessage() == "Undone: Take the next turn"
    window.actions_by_name["redo"].trigger()
    assert window.session.document.solution["output"] == {"status": "Success"}
    assert window.statusBar().currentMessage() == "Redone: Take the next turn"


def test_what_a_run_said_in_the_calls_panel_goes_with_its_document(qtbot: Any, window: MainWindow, fake_llm: Any,
                                                                    tmp_path: Path) -> None:
    """After Run with Model the Calls panel said "Finished: the final output is …" (or "Run with Model: no final output
    after 25 turns"), and still said it over the calls of the next document opened: it is of the document it ran
    in, and goes when another is opened."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Success"}}))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    panel = window.inspector.panel  # type: ignore[attr-defined]
    said = panel.message.text()
    assert said
    other = tmp_path / "other.json"
    other.write_text(json.dumps(document()))
    window.files.open_path(other)
    qtbot.waitUntil(lambda: window.session.path == other)
    qtbot.waitUntil(lambda: window.inspector.model.rowCount() > 0)  # type: ignore[attr-defined]
    assert panel.message.text() != said
    assert "final output" not in panel.message.text()


@pytest.mark.parametrize("solution", [{"calls": [], "output": None, "advisors": [{"id": "nobody"}]}, 5])
def test_run_with_model_refuses_a_solution_run_refuses_and_asks_nothing(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, solution: Any) -> None:
    """A document whose own solution `contextdeck run` refuses (advice naming no advisor; no solution at all):
    Run with Model stops at once in run's words, as Step and Continue do; the model is not asked (a solution
    without calls had its tick over at once, and the model was asked for the next turn)."""
    path = tmp_path / "refused.json"
    path.write_text(json.dumps({**document(), "solution": solution}))
    window = open_window(path)
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    before = list(window.context().messages)
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    assert run.task.result().startswith("nothing runs: contextdeck run refuses this solution: solution")
    assert fake_llm.completions == []
    assert run.turn_label.text() == ""  # no turn's calls are listed above the note saying none run
    assert window.context().messages == before
    release()


@pytest.mark.parametrize("edit", ["undo", "insert"])
def test_an_answer_to_a_document_changed_while_the_model_was_asked_is_not_taken(
        qtbot: Any, window: MainWindow, fake_llm: Any, edit: str) -> None:
    """Ctrl+Z (or any edit) while the model was asked for the next turn: the answer, to a question composed from
    the document before the edit, was taken anyway (its output ended the loop). It is not taken now: the run stops
    and says why, and while the model is asked the window says so and Step and Continue wait for it."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"status": "Success"}}, delay=2.0))
    run = window.agent_run  # type: ignore[attr-defined]
    run.run_action.trigger()
    qtbot.waitUntil(lambda: run.asking is not None, timeout=15000)
    assert window.statusBar().currentMessage() == "Run with Model: asking fake-small for the next turn…"
    panel = window.inspector.panel  # type: ignore[attr-defined]
    assert not panel.actions_by_name["step"].isEnabled()
    assert not panel.actions_by_name["continue"].isEnabled()
    assert window.turns.label.text() == "Loop: Run with Model asks the model for the next turn"  # type: ignore[attr-defined]
    assert not window.turns.next_turn.isEnabled()  # type: ignore[attr-defined]
    if edit == "undo":
        window.actions_by_name["undo"].trigger()  # the first plan's output
    else:
        window.select_message(1)
        window.actions_by_name["duplicate"].trigger()
    changed = window.context().messages
    qtbot.waitUntil(finished(qtbot, window), timeout=15000)
    said = "the document changed while the model was asked: its answer was not taken"
    assert run.task.result() == said
    assert window.statusBar().currentMessage() == f"Run with Model: {said}"
    assert window.context().messages == changed
    assert window.session.document.solution is None
    assert "Loop: finished" not in window.turns.label.text()  # type: ignore[attr-defined]
    assert panel.actions_by_name["step"].isEnabled()
