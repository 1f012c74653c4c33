"""Models in the window, through the real widgets, against the fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from contextdeck.engine import Status, base_url_problem, compose_request
from contextdeck.engine.models import _provider
from contextdeck.gui._app import create_window
from contextdeck.gui._inspector._async import release
from contextdeck.gui._inspector._dialogs import OutputDialog
from contextdeck.gui._models import (
    ESTIMATE,
    ModelConfig,
    ModelsDialog,
    PromptDialog,
    RequestDialog,
    estimate_tokens,
    load_config,
)
from contextdeck.gui._window import MainWindow
from fake_llm import Reply, ticket_document

ANSWER = {"result": {"label": "damage"}}


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, fake_llm: Any) -> Iterator[MainWindow]:
    """The real window on the ticket document (saved in tmp_path), a model set up on the fake server."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps(ticket_document()))
    win = create_window(settings, tmp_path / "recovery")
    qtbot.addWidget(win)
    win.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    win.show()
    with qtbot.waitSignal(win.document.documentShown, timeout=10000):
        win.session.open(path)
    win.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))  # type: ignore[attr-defined]
    yield win
    for dialog in list(win.models.dialogs):  # type: ignore[attr-defined]
        dialog.close()
    win.session.close()
    release()


def action(window: MainWindow, text: str) -> Any:
    return next(a for a in window.menu("Run").actions() if a.text().replace("&", "") == text)


def outputs(window: MainWindow) -> list[dict[str, Any]]:
    return [m for m in window.context().messages if m.get("_outputPath") == "†state.label"]


def test_the_settings_page_tests_the_connection_and_lists_the_models(qtbot: Any, window: MainWindow) -> None:
    """Test connection fills the model list from the server; Save keeps the endpoint, never a key."""
    action(window, "Models…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    assert isinstance(dialog, ModelsDialog)
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Connected"), timeout=5000)
    assert dialog.status.text() == "Connected: 2 models offered."
    assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == ["fake-large", "fake-small"]
    dialog.model.setEditText("fake-large")
    dialog.use_for_latent.setChecked(True)
    dialog.key_variable.setText("CONTEXTDECK_TEST_KEY_THAT_IS_NOT_SET")
    assert dialog.key_state.text() == "not set"
    dialog.save()
    stored = load_config(window.settings)
    assert (stored.model, stored.use_for_latent, stored.api_key_env) == (
        "fake-large", True, "CONTEXTDECK_TEST_KEY_THAT_IS_NOT_SET")
    assert action(window, "Use the Model for Latent Calls").isChecked()
    assert "sk-" not in Path(window.settings.fileName()).read_text()


def test_a_connection_test_to_nothing_says_why(qtbot: Any, window: MainWindow) -> None:
    """A base URL where nothing listens: the page says it cannot connect, naming the address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    dialog = window.models.open_settings()  # type: ignore[attr-defined]
    dialog.base_url.setText(url)
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Cannot use it"), timeout=5000)
    assert url in dialog.status.text()
    assert "cannot connect" in dialog.status.text()


@pytest.mark.parametrize("url", ["notaurl", "localhost:11434/v1", "ftp://host/v1", "http://", "http://host:port/v1"])
def test_a_base_url_that_is_no_http_url_is_said_as_typed_and_never_kept(qtbot: Any, window: MainWindow,
                                                                        url: str) -> None:
    """The page says what `--llm` says of such a URL, under the field, before Save or a connection test uses it:
    both stay off until the URL is one, and the endpoint kept is the one before."""
    before = load_config(window.settings).base_url
    dialog = window.models.open_settings()  # type: ignore[attr-defined]
    qtbot.keyClicks(dialog.base_url, "x")  # typed: the page follows the field, not only its first text
    dialog.base_url.clear()
    qtbot.keyClicks(dialog.base_url, url)
    assert dialog.url_problem.isVisibleTo(dialog)
    assert dialog.url_problem.text() == base_url_problem(url)
    assert not dialog.save_button.isEnabled()
    assert not dialog.test_button.isEnabled()
    dialog.save()
    assert load_config(window.settings).base_url == before
    dialog.base_url.setText("https://api.example.com/v1")
    assert not dialog.url_problem.isVisibleTo(dialog)
    assert dialog.save_button.isEnabled()
    assert dialog.test_button.isEnabled()


def test_a_base_url_kept_before_that_is_no_url_is_said_when_the_page_opens(qtbot: Any, window: MainWindow) -> None:
    """A settings file holding a bad URL (kept by an older version, or edited by hand): said at once."""
    window.models.models.set_config(ModelConfig("localhost:11434", "m"))  # type: ignore[attr-defined]
    dialog = window.models.open_settings()  # type: ignore[attr-defined]
    assert dialog.url_problem.text() == base_url_problem("localhost:11434")
    assert dialog.url_problem.isVisibleTo(dialog)
    dialog.base_url.clear()  # no model at all is a choice the page keeps
    assert not dialog.url_problem.isVisibleTo(dialog)
    assert dialog.save_button.isEnabled()
    assert not dialog.test_button.isEnabled()


def test_continue_uses_the_model_then_replays_after_restart(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """With the model on, Continue writes its validated answer with its exchange; Restart then Continue
    replays the recording: the same output, no second request."""
    fake_llm.push(Reply.json(ANSWER))
    action(window, "Use the Model for Latent Calls").setChecked(True)
    inspector = window.inspector  # type: ignore[attr-defined]
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1, timeout=5000)
    qtbot.waitUntil(lambda: not inspector.debugger.running)
    first = outputs(window)[0]
    assert first["data"] == {"label": {"label": "damage"}}
    assert first["_run"]["model"]["usage"]["total_tokens"] == 18
    assert first["_run"]["model"]["replayed"] is False
    assert inspector.model.status(0) is Status.DONE
    window.select_message(window.context().messages.index(first))
    inspector.docks["Output audit"].raise_()
    qtbot.waitUntil(lambda: "answered by fake-small" in inspector.audit.run.text())
    assert "18 tokens: 11 in, 7 out" in inspector.audit.run.text()
    action(window, "Restart").trigger()
    qtbot.waitUntil(lambda: not outputs(window))
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1, timeout=5000)
    assert outputs(window)[0]["_run"]["model"]["replayed"] is True
    assert len(fake_llm.completions) == 1
    assert (Path(window.session.path).parent / "ticket.json.models.jsonl").exists()


def test_undoing_a_model_answer_waits_for_it_again_and_continue_replays_it(qtbot: Any, window: MainWindow,
                                                                          fake_llm: Any) -> None:
    """Continue with the model, then Undo: the call waits for its output again (not ready); F5 asks as the
    mode says: the cassette answers, and the output is marked replayed, with no second request."""
    fake_llm.push(Reply.json(ANSWER))
    action(window, "Use the Model for Latent Calls").setChecked(True)
    inspector = window.inspector  # type: ignore[attr-defined]
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1 and not inspector.debugger.running, timeout=5000)
    window.session.undo_stack.undo()
    assert outputs(window) == []
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.WAITING_FOR_OUTPUT)
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1 and not inspector.debugger.running, timeout=5000)
    assert outputs(window)[0]["_run"]["model"]["replayed"] is True
    assert len(fake_llm.completions) == 1


def test_redo_restores_the_model_answer_as_recorded_and_asks_nothing(qtbot: Any, window: MainWindow,
                                                                    fake_llm: Any) -> None:
    """Undo then Redo of a model's answer: the very message comes back (its `_call`, `_date` and exchange
    as first written), the audit says what it said then, and the model is not asked again."""
    fake_llm.push(Reply.json(ANSWER))
    action(window, "Use the Model for Latent Calls").setChecked(True)
    inspector = window.inspector  # type: ignore[attr-defined]
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1 and not inspector.debugger.running, timeout=5000)
    first = json.loads(json.dumps(outputs(window)[0]))
    window.select_message(window.context().messages.index(outputs(window)[0]))
    inspector.docks["Output audit"].raise_()
    qtbot.waitUntil(lambda: "answered by fake-small" in inspector.audit.run.text())
    said = inspector.audit.run.text()
    window.session.undo_stack.undo()
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.WAITING_FOR_OUTPUT)
    window.session.undo_stack.redo()
    assert outputs(window) == [first]
    window.select_message(window.context().messages.index(outputs(window)[0]))
    qtbot.waitUntil(lambda: inspector.audit.run.text() == said)
    assert not inspector.debugger.running
    assert len(fake_llm.completions) == 1


def test_after_an_undo_live_mode_asks_again_and_a_failing_server_writes_nothing(qtbot: Any, window: MainWindow,
                                                                                 fake_llm: Any) -> None:
    """In `live` mode the Continue after an Undo asks the server; when it fails, nothing is written, the
    call keeps waiting, and Continue says why."""
    fake_llm.push(Reply.json(ANSWER))
    action(window, "Use the Model for Latent Calls").setChecked(True)
    inspector = window.inspector  # type: ignore[attr-defined]
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1 and not inspector.debugger.running, timeout=5000)
    window.session.undo_stack.undo()
    config = window.models.models.config  # type: ignore[attr-defined]
    window.models.models.set_config(ModelConfig(config.base_url, config.model, timeout=5, mode="live",  # type: ignore[attr-defined]
                                                use_for_latent=True))
    fake_llm.push(Reply.error(503, "down"))
    action(window, "Continue").trigger()
    qtbot.waitUntil(lambda: len(fake_llm.completions) >= 2 and not inspector.debugger.running, timeout=15000)
    assert outputs(window) == []
    assert inspector.model.status(0) is Status.WAITING_FOR_OUTPUT
    assert "the server answered HTTP 5" in inspector.debugger.last_stop


def test_the_prompt_view_shows_what_is_sent_and_streams_the_reply(qtbot: Any, window: MainWindow,
                                                                  fake_llm: Any) -> None:
    """The prompt dialog lists the messages with token estimates; Ask streams the reply and writes it."""
    fake_llm.push(Reply.json(ANSWER, pieces=4))
    action(window, "Prompt for This Call…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    assert isinstance(dialog, PromptDialog)
    rows = dialog.table.rowCount()
    assert rows == len(dialog.prompt.messages)
    assert dialog.table.item(0, 0).text() == "system"
    last = dialog.prompt.messages[-1]["content"]
    assert dialog.table.item(rows - 1, 1).text() == str(estimate_tokens(last))
    assert dialog.content.toPlainText() == last
    assert ESTIMATE in dialog.total.text()
    assert json.loads(dialog.body.toPlainText())["messages"] == list(dialog.prompt.messages)
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Written"), timeout=5000)
    assert dialog.reply.toPlainText() == json.dumps(ANSWER)
    assert fake_llm.completions[0]["messages"] == list(dialog.prompt.messages)
    assert outputs(window)[0]["data"] == {"label": {"label": "damage"}}
    window.session.undo_stack.undo()  # the model's answer is one undoable step
    assert outputs(window) == []


def test_the_prompt_view_without_a_model_says_where_to_set_one_up(qtbot: Any, window: MainWindow) -> None:
    """With no model set up the prompt is shown, Ask is off and the line under it says where to set one up, as the
    other dialogs say it (it read "Run → Models…." with a stop after the ellipsis)."""
    window.models.models.set_config(ModelConfig())  # type: ignore[attr-defined]
    action(window, "Prompt for This Call…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    assert isinstance(dialog, PromptDialog)
    assert dialog.table.rowCount() == len(dialog.prompt.messages)
    assert not dialog.ask_button.isEnabled()
    assert dialog.status.text() == "No model is set up: Run → Models…"


def test_the_prompt_view_reads_a_message_of_content_parts_as_its_json_and_sends_the_parts(
        qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """A user message of a text and an image is listed and shown as the JSON text the LLM view shows of it (its
    tokens estimated from that text); the request body, and what the model is sent, hold its content parts."""
    photo = [{"type": "text", "text": "As it came:"},
             {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]
    window.commands.insert(2, {"role": "user", "content": photo}, "Insert the photo")
    fake_llm.push(Reply.json(ANSWER))
    action(window, "Prompt for This Call…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    assert isinstance(dialog, PromptDialog)
    row = next(row for row, message in enumerate(dialog.prompt.messages) if message["content"] == photo)
    shown = json.dumps(photo, indent=2, ensure_ascii=False)
    assert dialog.table.item(row, 2).text() == "["
    assert dialog.table.item(row, 1).text() == str(estimate_tokens(shown))
    dialog.table.setCurrentCell(row, 0)
    assert json.loads(dialog.content.toPlainText()) == photo
    assert json.loads(dialog.body.toPlainText())["messages"][row] == {"role": "user", "content": photo}
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Written"), timeout=5000)
    assert fake_llm.completions[0]["messages"][row] == {"role": "user", "content": photo}


def test_the_prompt_view_says_an_answer_of_several_calls_is_refused_once_the_second_begins(
        qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """Once a second call of a streamed reply begins, the prompt view says the answer will be refused; nothing is
    written."""
    fake_llm.push(Reply(tool=("result", json.dumps(ANSWER)), more_tools=(("result", '{"other": 1}'),)))
    action(window, "Prompt for This Call…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    assert isinstance(dialog, PromptDialog)
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: "2 tool calls" in dialog.status.text(), timeout=15000)
    reply = dialog.reply.toPlainText()
    assert reply.startswith(json.dumps(ANSWER))
    assert reply.endswith("one was asked for, so this answer will be refused.)")
    assert '"other"' not in reply
    assert outputs(window) == []


def test_the_client_is_made_off_the_gui_thread(qtbot: Any, window: MainWindow, fake_llm: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's client (and with it the first `import openai`, over a second) is made on a worker thread,
    for a call's prompt, the connection test and the whole request: the window never freezes meanwhile."""
    made_on: list[threading.Thread] = []
    make = _provider.client_for

    def recorded(*args: Any, **options: Any) -> Any:
        made_on.append(threading.current_thread())
        return make(*args, **options)

    monkeypatch.setattr(_provider, "client_for", recorded)
    fake_llm.push(Reply.json(ANSWER), Reply.json({"meta": {}, "calls": [], "output": {"reply": "done"}}))
    dialog = window.models.open_prompt()  # type: ignore[attr-defined]
    dialog.ask_button.click()
    # The first `import openai` of the process: seconds on a loaded machine.
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Written"), timeout=60000)
    settings = window.models.open_settings()  # type: ignore[attr-defined]
    settings.test_button.click()
    qtbot.waitUntil(lambda: settings.status.text().startswith("Connected"), timeout=5000)
    request = window.models.open_request()  # type: ignore[attr-defined]
    request.ask_button.click()
    qtbot.waitUntil(lambda: request.status.text().startswith("Written"), timeout=5000)
    assert len(made_on) == 3
    assert threading.main_thread() not in made_on


def test_cancel_stops_the_stream_and_writes_nothing(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """Cancel during a slow streamed reply: nothing is written and the call still waits for its output."""
    fake_llm.push(Reply.json(ANSWER, pieces=30, delay=15.0))
    dialog = window.models.open_prompt()  # type: ignore[attr-defined]
    before = len(window.context())
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: dialog.reply.toPlainText() != "", timeout=5000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Cancelled"), timeout=5000)
    assert len(window.context()) == before
    assert window.inspector.debugger.prepared().state(0).status is Status.WAITING_FOR_OUTPUT  # type: ignore[attr-defined]
    assert dialog.ask_button.isEnabled()


def test_ask_model_in_the_output_dialog(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """With the model off, Step opens the output dialog; its Ask model button lets the model answer."""
    fake_llm.push(Reply.json(ANSWER))
    debugger = window.inspector.debugger  # type: ignore[attr-defined]
    action(window, "Step").trigger()
    qtbot.waitUntil(lambda: isinstance(debugger.open_dialog, OutputDialog), timeout=5000)
    dialog = debugger.open_dialog
    assert dialog.ask_model_button.isVisibleTo(dialog)
    dialog.ask_model_button.click()
    qtbot.waitUntil(lambda: len(outputs(window)) == 1, timeout=5000)
    assert outputs(window)[0]["_run"]["model"]["model"] == "fake-small"


def test_an_answer_that_does_not_validate_is_shown(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """A reply outside `_output`'s enum: the prompt dialog says so and the call fails with the reply kept."""
    fake_llm.push(Reply.json({"result": {"label": "fire"}}))
    dialog = window.models.open_prompt()  # type: ignore[attr-defined]
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("The answer did not validate"), timeout=5000)
    error = window.context()[len(window.context()) - 1]["data"]["error"]
    assert (error["type"], error["reply"]) == ("modelOutput", json.dumps({"result": {"label": "fire"}}))


def test_the_whole_request_becomes_the_solution_and_undo_takes_it_back(qtbot: Any, window: MainWindow,
                                                                      fake_llm: Any) -> None:
    """Ask the model for the whole request: the composed request is sent, the streamed calls are counted,
    the answer becomes the solution the Calls panel shows; undo gives the old solution back."""
    calls = [{"_tool": "classify", "ticket": "†input.ticket", "_outputPath": "†state.label"},
             {"_tool": "classify", "ticket": "spare", "_outputPath": "†state.spare"}]
    fake_llm.push(Reply.json({"meta": {}, "calls": calls, "output": None}, pieces=8))
    action(window, "Ask the Model for the Whole Request…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    assert isinstance(dialog, RequestDialog)
    document = window.session.document
    composed = compose_request(document.context, document.schema).to_json()
    assert list(dialog.prompt.messages) == composed["messages"]
    assert dialog.prompt.schema == composed["schema"]
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Written"), timeout=5000)
    assert dialog.status.text() == "Written: 2 calls from fake-small as the request's solution."
    assert document.solution["calls"] == calls
    assert fake_llm.completions[0]["messages"] == composed["messages"]
    model = window.inspector.model  # type: ignore[attr-defined]
    assert model.rowCount() == 2
    window.session.undo_stack.undo()
    assert window.session.document.solution is None
    assert model.rowCount() == 1


def test_a_bare_context_gets_the_models_meta_then_its_plan_in_one_step(qtbot: Any, tmp_path: Path,
                                                                        window: MainWindow, fake_llm: Any) -> None:
    """A bare context has no solution slot: the model's answer is a plan message, after a meta message when the
    identity it gives back (016) changes the context's, as `contextdeck ask` writes it; one undo takes both."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(ticket_document()["context"]))
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)
    fake_llm.push(Reply.json({"meta": {"path": "/tickets", "version": "2"}, "calls": [], "output": None}))
    action(window, "Ask the Model for the Whole Request…").trigger()
    dialog = window.models.dialogs[-1]  # type: ignore[attr-defined]
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Written"), timeout=5000)
    context = window.session.document.context
    before = len(ticket_document()["context"])
    assert [message["type"] for message in context.messages[before:]] == ["meta", "plan"]
    assert context[before]["_model"] == context[before + 1]["_model"]
    assert context.resolve("†meta.version").value == "2"
    window.session.undo_stack.undo()
    assert len(context) == before


def test_the_prompt_dialog_is_made_ahead_a_slice_at_a_time(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """The prompt dialog made ahead is made, polished and laid out each in a slice of the window's turns of its
    own, another slice between them (the three in one turn were most of a frame after a big document opened)."""
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QVBoxLayout

    from contextdeck.gui._slices import slices

    models = window.models  # type: ignore[attr-defined]
    done: list[str] = []

    class Other(QObject):
        def work(self) -> None:
            done.append("another slice" if models._prompt is None else "another slice, the dialog made")
            if len(done) < 6:
                slices().start(self.work)

    polish, activate = PromptDialog.ensurePolished, QVBoxLayout.activate

    def polished(dialog: PromptDialog) -> None:
        done.append("polished")
        polish(dialog)

    def laid_out(layout: QVBoxLayout) -> bool:
        if isinstance(layout.parent(), PromptDialog):
            done.append("laid out")
        return bool(activate(layout))

    other = Other()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PromptDialog, "ensurePolished", polished)
        patch.setattr(QVBoxLayout, "activate", laid_out)
        qtbot.waitUntil(lambda: not slices().pending and not window.document.views_pending(), timeout=10000)
        models._ahead.stop()
        models._make_prompt_ahead()
        slices().start(other.work)
        qtbot.waitUntil(lambda: len(done) >= 6, timeout=10000)
    assert done[:6] == ["another slice, the dialog made", "polished", "another slice, the dialog made", "laid out",
                        "another slice, the dialog made", "another slice, the dialog made"]
    made = window.findChildren(PromptDialog)
    assert len(made) == 1
    assert not made[0].isVisible()


def test_the_prompt_dialog_is_made_ahead_and_shown_again(qtbot: Any, window: MainWindow, fake_llm: Any) -> None:
    """The window makes the prompt dialog while idle: Prompt for This Call… makes no widget, only fills it; closed,
    the same dialog shows the next prompt afresh (no reply, status or refusal kept from the last)."""
    qtbot.waitUntil(lambda: len(window.findChildren(PromptDialog)) == 1, timeout=10000)
    made = window.findChildren(PromptDialog)[0]
    assert not made.isVisible()
    fake_llm.push(Reply.json(ANSWER))
    action(window, "Prompt for This Call…").trigger()
    assert window.models.dialogs == [made]  # type: ignore[attr-defined]
    assert made.isVisible()
    assert made.ask_button.isEnabled()
    made.ask_button.click()
    qtbot.waitUntil(lambda: made.status.text().startswith("Written"), timeout=60000)
    made.close()
    action(window, "Prompt for This Call…").trigger()
    assert window.findChildren(PromptDialog) == [made]
    assert made.reply.toPlainText() == ""
    assert made.status.text() == "call 0 (classify) is done: only a latent call that waits for its output can be asked."
    assert not made.ask_button.isEnabled()
    window.session.undo_stack.undo()
    made.close()
    debugger = window.inspector.debugger  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: debugger.prepared().state(0).status is Status.WAITING_FOR_OUTPUT, timeout=5000)
    action(window, "Prompt for This Call…").trigger()
    assert (made.status.text(), made.ask_button.isEnabled()) == ("", True)
    assert made.windowTitle() == "Prompt for call 0 (classify)"
