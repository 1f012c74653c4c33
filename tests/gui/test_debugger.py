"""The stepping debugger over the bundled refund workflow and the seeds' examples."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QLabel, QMenu, QPlainTextEdit

from conftest import LOADED_MS
from contextdeck.engine import (
    Activities,
    Context,
    Decision,
    Document,
    Execution,
    Replace,
    Status,
    fixed_clock,
    load_document,
)
from contextdeck.gui._editor._validation import shared_worker
from contextdeck.gui._inspector import _calls as calls_module
from contextdeck.gui._inspector._async import release, spawn
from contextdeck.gui._inspector._calls import BREAKPOINT_ROLE, CallsModel, CallsView
from contextdeck.gui._inspector._debugger import CANCEL, Debugger
from contextdeck.gui._inspector._dialogs import CHECKING, ApprovalDialog, OutputDialog
from contextdeck.gui._slices import Pace

NOW = "2026-01-02T03:04:05Z"


@pytest.fixture(autouse=True)
def _loop(qapp: Any) -> Iterator[None]:
    yield
    release()


def run(qtbot: Any, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Drive a debugger coroutine on the Qt event loop until it ends, and return its result."""
    task = spawn(coroutine)
    qtbot.waitUntil(task.done, timeout=LOADED_MS)
    return task.result()


def debugger_for(path: Path) -> tuple[Document, CallsModel, Debugger]:
    document = load_document(path)
    model = CallsModel(document.context, document.solution)
    return document, model, Debugger(model, clock=fixed_clock(NOW))


def awaiting_approval(qtbot: Any, path: Path) -> tuple[Document, CallsModel, Debugger, Any, ApprovalDialog]:
    """A debugger stepping with approval on, its approval dialog open (no approver injected)."""
    document, model, debugger = debugger_for(path)
    debugger.approval_enabled = True
    task = spawn(debugger.step())
    qtbot.waitUntil(lambda: isinstance(debugger.open_dialog, ApprovalDialog))
    dialog = debugger.open_dialog
    assert isinstance(dialog, ApprovalDialog)
    return document, model, debugger, task, dialog


def test_step_appends_an_audited_output(qtbot: Any, examples: Path) -> None:
    """Step runs lookupOrder: its output lands at †state.order with _call, _date and _outputPath."""
    document, model, debugger = debugger_for(examples / "refund_workflow.json")
    before = len(document.context)
    assert run(qtbot, debugger.step()) is True
    output = document.context[before]
    assert output["_call"] == model.getItem(0).call
    assert output["_date"] == NOW
    assert output["_outputPath"] == "†state.order"
    assert document.context.resolve("†state.order.total").value == 89.5
    assert model.status(0) is Status.DONE
    qtbot.waitUntil(lambda: model.status(2) is Status.READY)  # its reader no longer waits


def test_a_step_with_no_call_ready_writes_the_failure_found_before_running(qtbot: Any, tmp_path: Path) -> None:
    """A call that fails before it can run (parameters its tool refuses) is written as its error message by Step, as
    by Continue and `contextdeck run --steps 1`: once, and the note says why nothing ran."""
    messages = [
        {"type": "tool", "tool": {"translate": {"type": "object", "_activity": "translate",
                                                "properties": {"text": {"type": "string"}}}}},
        {"type": "plan", "plan": [{"_tool": "translate", "text": 5, "_outputPath": "†state.english"}]},
    ]
    path = tmp_path / "refused_call.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    document, model, debugger = debugger_for(path)
    assert run(qtbot, debugger.step()) is False
    assert len(document.context) == 3
    error = document.context[2]
    assert error["type"] == "error"
    assert error["data"]["error"] == {
        "type": "parameters", "message": "invalid parameters for 'translate': $.text: 5 is not of type 'string'"}
    assert debugger.last_stop == "finished: nothing is left to run; failed: #0 (the calls panel says why)"
    assert model.status(0) is Status.FAILED
    by_the_engine = load_document(path)
    execution = Execution(by_the_engine.context, by_the_engine.solution, clock=fixed_clock(NOW))
    run(qtbot, execution.step())
    assert by_the_engine.context[2] == error
    assert run(qtbot, debugger.step()) is False
    assert len(document.context) == 3  # the record says it failed: not written again


@pytest.mark.parametrize("command", ["step", "continue_"])
def test_step_and_continue_write_a_cycles_errors_once(qtbot: Any, tmp_path: Path, command: str) -> None:
    """A plan with a cycle runs nothing; Step and Continue both write each call's cycle error, as `contextdeck run`
    (with --steps 1 or without) does, once."""
    path = tmp_path / "cycle.json"
    path.write_text(json.dumps([{"type": "plan", "plan": [
        {"_tool": "u", "y": "†state.z", "_outputPath": "†state.q"},
        {"_tool": "u", "y": "†state.q", "_outputPath": "†state.z"}]}]), encoding="utf-8")
    document, _model, debugger = debugger_for(path)
    for _ in range(2):
        run(qtbot, getattr(debugger, command)())
        assert [(m["type"], m["data"]["error"]["type"]) for m in document.context.messages[1:]] == [
            ("error", "cycle"), ("error", "cycle")]
    assert debugger.last_stop.startswith("nothing runs: the plan has a cycle (#0 → #1")


def test_breakpoint_stops_continue(qtbot: Any, examples: Path) -> None:
    """Continue stops before a call with a breakpoint; continuing again runs it."""
    document, model, debugger = debugger_for(examples / "refund_workflow.json")
    model.set_breakpoint(2, True)
    with qtbot.waitSignal(debugger.stopped) as stop:
        run(qtbot, debugger.continue_())
    assert stop.args == ["breakpoint at #2"]
    assert model.status(1) is Status.DONE
    qtbot.waitUntil(lambda: model.status(2) is Status.READY)  # the panel re-analyses after the outputs land
    run(qtbot, debugger.continue_())
    assert model.status(2) is Status.DONE
    assert document.context.resolve("†state.eligibility.eligible").value is True


def test_a_breakpoint_on_a_tool_stops_at_its_call(qtbot: Any, examples: Path) -> None:
    """Break on every checkEligibility call (from the row's context menu): Continue stops before call 2."""
    _document, model, debugger = debugger_for(examples / "refund_workflow.json")
    view = CallsView(model)
    qtbot.addWidget(view)
    menu = view.tool_menu(model.index(2, 0))
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts == ["Run This &Call", "Run to &Here", "&Breakpoint", "Breakpoint C&ondition…",
                     "Break on &every checkEligibility call"]
    action = menu.actions()[-1]
    action.trigger()
    assert model.tool_breakpoints == {"checkEligibility"}
    assert model.index(2, 0).data(BREAKPOINT_ROLE) is True
    assert model.index(1, 0).data(BREAKPOINT_ROLE) is False
    with qtbot.waitSignal(debugger.stopped) as stop:
        run(qtbot, debugger.continue_())
    assert stop.args == ["breakpoint at #2"]
    assert model.status(1) is Status.DONE
    assert model.status(2) is not Status.DONE


def test_blocked_call_is_named_when_nothing_is_ready(qtbot: Any, examples: Path) -> None:
    """At the end of the refund plan, issueRefund waits for its approval path, and the stop says so."""
    _document, model, debugger = debugger_for(examples / "refund_workflow.json")
    run(qtbot, debugger.continue_())
    assert debugger.last_stop == "nothing is ready: #3 awaiting approval on †state.approvals.refund"
    assert model.status(3) is Status.AWAITING_APPROVAL
    assert model.status(4) is Status.DONE


def test_a_branch_not_taken_ends_the_plan_and_is_said(qtbot: Any, tmp_path: Path) -> None:
    """012's branching plan: Continue runs it to its end; the call on the branch the weather did not take is said as
    not taken, not as what the plan waits for."""
    path = tmp_path / "weather.json"
    path.write_text(json.dumps([{"type": "plan", "plan": [
        {"_tool": "getWeather", "_output": "sun", "_outputPath": "†state.sunny || †state.rainy"},
        {"_tool": "findPark", "w": "†state.sunny", "_output": "park", "_outputPath": "†state.suggestion"},
        {"_tool": "findMovie", "w": "†state.rainy", "_output": "movie", "_outputPath": "†state.suggestion"},
        {"_tool": "present", "s": "†state.suggestion", "_output": 1, "_outputPath": "†state.shown"}]}]),
        encoding="utf-8")
    _document, model, debugger = debugger_for(path)
    run(qtbot, debugger.continue_())
    assert debugger.last_stop == "finished: every call has run; not taken: #2 (a branch not taken)"
    assert [model.status(i) for i in range(4)] == [Status.DONE, Status.DONE, Status.BLOCKED, Status.DONE]


def test_run_this_call_says_what_a_call_not_ready_waits_for(qtbot: Any, examples: Path) -> None:
    """Run This Call on a call that cannot run yet says what it waits for, as a stop with nothing ready does."""
    _document, _model, debugger = debugger_for(examples / "refund_workflow.json")
    run(qtbot, debugger.continue_())
    assert run(qtbot, debugger.run_call(3)) == ()
    assert debugger.last_stop == "Run #3: ran nothing; not ready: #3 awaiting approval on †state.approvals.refund"


def test_approval_edit_changes_what_runs(qtbot: Any, examples: Path) -> None:
    """An approver that edits greetUser's _output makes the edited value land, with the edited call as _call."""
    document, _model, debugger = debugger_for(examples / "seed_variables.json")
    debugger.approval_enabled = True
    edited = {"_tool": "greetUser", "userName": "†input.userName", "_outputPath": "†state.greeting",
              "_output": "Hi, Ada."}
    debugger.approver = lambda call: Decision.edit(edited)
    run(qtbot, debugger.step())
    assert document.context.resolve("†state.greeting").value == "Hi, Ada."
    assert document.context[len(document.context) - 1]["_call"] == edited


def test_rejected_call_becomes_an_error_message(qtbot: Any, examples: Path) -> None:
    """A rejection appends an error message naming the call and the reason, and the call is failed."""
    document, model, debugger = debugger_for(examples / "seed_variables.json")
    debugger.approval_enabled = True
    debugger.approver = lambda call: Decision.reject("not today")
    run(qtbot, debugger.step())
    error = document.context[len(document.context) - 1]
    assert error["type"] == "error"
    assert error["data"]["call"] == model.getItem(0).call
    assert error["data"]["error"]["message"] == "not today"
    assert model.status(0) is Status.FAILED


def test_approval_dialog_reject_with_a_reason(qtbot: Any, examples: Path) -> None:
    """Without an injected approver a non-modal dialog asks; its Reject button rejects with the typed reason."""
    document, model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.reason.setText("wrong greeting")
    qtbot.mouseClick(dialog.reject_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(task.done)
    assert document.context[len(document.context) - 1]["data"]["error"]["message"] == "wrong greeting"
    assert model.status(0) is Status.FAILED


MAIN_MENU_LETTERS = {"F", "E", "V", "R", "H"}  # File, Edit, View, Run, Help


@pytest.mark.parametrize(("key", "edit", "status", "greeting"),
                         [(Qt.Key.Key_A, False, Status.DONE, "Hello, Ada!"),
                          (Qt.Key.Key_D, True, Status.DONE, "Welcome back, Ada."),
                          (Qt.Key.Key_J, False, Status.FAILED, None)])
def test_the_approval_dialog_answers_to_alt_and_a_buttons_letter(qtbot: Any, examples: Path, key: Qt.Key, edit: bool,
                                                                  status: Status, greeting: str | None) -> None:
    """Driven by keys, the dialog opens on the resolved call, where Enter answers nothing; Alt and a button's letter
    answer (A approves, D runs the edited call, J rejects), and Alt with a main menu's letter answers nothing: an
    Alt+E or Alt+R meant for the window's Edit or Run menu must not decide the call."""
    document, model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    letters = {button.text()[button.text().index("&") + 1].upper() for button in dialog.buttons.buttons()}
    assert letters == {"A", "D", "J"}
    assert not letters & MAIN_MENU_LETTERS
    if edit:
        dialog.editor.setPlainText(dialog.editor.toPlainText().replace("Hello, Ada!", "Welcome back, Ada."))
    qtbot.waitUntil(dialog.isVisible)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    dialog.resolved.setFocus()
    assert QApplication.focusWidget() is dialog.resolved
    qtbot.keyClick(dialog.resolved, Qt.Key.Key_Return)
    for menu_key in (Qt.Key.Key_E, Qt.Key.Key_R, Qt.Key.Key_F, Qt.Key.Key_V, Qt.Key.Key_H):
        qtbot.keyClick(dialog.resolved, menu_key, Qt.KeyboardModifier.AltModifier)
    assert dialog.isVisible()  # (an answer closes it at once)
    assert not task.done()
    qtbot.keyClick(dialog.resolved, key, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(task.done, timeout=LOADED_MS)
    assert model.status(0) is status
    if greeting is not None:
        assert document.context.resolve("†state.greeting").value == greeting


def _step_to_output_dialog(qtbot: Any, debugger: Debugger) -> tuple[asyncio.Future[Any], OutputDialog]:
    """Start a step whose call needs its output typed, and wait for the dialog that asks for it."""
    task = spawn(debugger.step())
    qtbot.waitUntil(lambda: isinstance(debugger.open_dialog, OutputDialog))
    dialog = debugger.open_dialog
    assert isinstance(dialog, OutputDialog)
    return task, dialog


def test_latent_output_typed_in_the_form_is_written(qtbot: Any, examples: Path) -> None:
    """verifyUser has no _output: the output form asks, and the typed value lands on the first branch."""
    document, model, debugger = debugger_for(examples / "seed_variables.json")
    run(qtbot, debugger.step())  # greetUser
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    dialog.set_text("{not json")
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    assert dialog.error.text().startswith("line 1, column 2")
    dialog.set_text('{"level": "strong"}')
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(task.done)
    assert document.context.resolve("†state.user.verified.level").value == "strong"
    assert document.context[len(document.context) - 1]["_outputPath"] == "†state.user.verified"
    assert model.status(1) is Status.DONE


def test_the_output_dialog_opens_with_the_keys_in_the_value(qtbot: Any, tmp_path: Path) -> None:
    """Driven by keys, the dialog asking the adder's latent `add` for its output (a number, by its `_output` schema)
    opened with the focus on its Form / JSON tab bar: the number typed went nowhere. It opens in the value's field,
    and Ctrl+Enter at once after typing writes it (Write waits for the edit's validation: the key was lost)."""
    import json

    from adder_agent import ADD, FIRST

    doc = tmp_path / "adder.json"
    doc.write_text(json.dumps([{"type": "tool", "tool": {"add": ADD}}, {"type": "input", "input": {"a": 1, "b": 2}},
                               {"type": "plan", "plan": FIRST["calls"]}]))
    document, _model, debugger = debugger_for(doc)
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    qtbot.waitUntil(dialog.isVisible)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    assert dialog.form is not None
    typed_in = QApplication.focusWidget()
    assert typed_in is not None
    assert dialog.form.form.isAncestorOf(typed_in), typed_in
    qtbot.keyClick(typed_in, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(typed_in, "3")
    qtbot.keyClick(typed_in, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(task.done, timeout=60000)  # (the validation's worker process starts on demand)
    assert document.context.resolve("†state.sum").value == 3


def test_fan_out_output_writes_every_destination(qtbot: Any, examples: Path) -> None:
    """generateSummary's `&&` path writes the typed summary to both destinations, one message each."""
    document, _model, debugger = debugger_for(examples / "seed_variables.json")
    debugger.ask_output = lambda call: "A short summary" if call.tool_name == "generateSummary" else CANCEL
    model = debugger.model
    model.set_breakpoint(1, False)
    run(qtbot, debugger.step())  # greetUser
    run(qtbot, debugger.step())  # verifyUser: cancelled, stays waiting
    assert debugger.last_stop == "#1 waits for an output"
    debugger.ask_output = lambda call: "A short summary"
    run(qtbot, debugger.continue_())
    paths = [m.get("_outputPath") for m in document.context.messages[-2:]]
    assert paths == ["†state.user.summary", "†state.audit.summary"]
    assert document.context.resolve("†state.audit.summary").value == "A short summary"


def test_restart_returns_the_identical_document(qtbot: Any, examples: Path) -> None:
    """After running and failing calls, Restart gives back the document byte for byte, and can run again."""
    document, model, debugger = debugger_for(examples / "refund_workflow.json")
    original = document.dumps()
    debugger.approval_enabled = True
    debugger.approver = lambda call: Decision.reject("no") if call.tool_name == "logStep" else Decision.edit(call.call)
    run(qtbot, debugger.continue_())
    assert document.dumps() != original
    debugger.restart()
    assert document.dumps() == original
    assert model.status(0) is Status.READY
    assert run(qtbot, debugger.step()) is True


def test_pause_stops_continue_after_the_running_call(qtbot: Any, examples: Path) -> None:
    """Pause during Continue lets the current call finish and then stops."""
    _document, model, debugger = debugger_for(examples / "refund_workflow.json")

    def approve_and_pause(call: Any) -> Any:
        debugger.pause()
        return Decision.edit(call.call)

    debugger.approval_enabled = True
    debugger.approver = approve_and_pause
    run(qtbot, debugger.continue_())
    assert debugger.last_stop == "paused"
    assert model.status(0) is Status.DONE
    qtbot.waitUntil(lambda: model.status(1) is Status.READY)


def test_output_form_follows_the_tools_output_schema(qtbot: Any) -> None:
    """With an `_output` schema the form refuses a value that breaks it and writes one that fits."""
    tool = {"type": "tool", "tool": {"rate": {"type": "object", "properties": {
        "_output": {"type": "object", "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}},
                    "required": ["score"]}}}}}
    document = Document(Context([{"type": "state", "data": {}}, tool,
                                 {"type": "plan", "plan": [{"_tool": "rate", "_outputPath": "†state.rating"}]}]))
    model = CallsModel(document.context)
    debugger = Debugger(model, clock=fixed_clock(NOW))
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    assert dialog.form is not None
    dialog.set_text('{"score": 9}')
    qtbot.waitUntil(dialog.write_button.isEnabled, timeout=LOADED_MS)
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    assert "$.score" in dialog.error.text()
    assert not task.done()
    dialog.set_text('{"score": 4}')
    qtbot.waitUntil(lambda: dialog.write_button.isEnabled() and not dialog.error.text(), timeout=LOADED_MS)
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(task.done)
    assert document.context.resolve("†state.rating.score").value == 4


def test_the_output_dialog_answers_from_the_worker_started_ahead(qtbot: Any) -> None:
    """With the application's validation worker started ahead, an output dialog's Write is usable once its form
    is validated, by that worker: the dialog starts no process; Ctrl+Enter before then says the value is being
    checked, and writes it once checked."""
    tool = {"type": "tool", "tool": {"rate": {"type": "object", "properties": {
        "_output": {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}}}}}
    document = Document(Context([{"type": "state", "data": {}}, tool,
                                 {"type": "plan", "plan": [{"_tool": "rate", "_outputPath": "†state.rating"}]}]))
    worker = shared_worker()
    worker.start()
    qtbot.waitUntil(lambda: worker._ready, timeout=LOADED_MS)
    started = worker.started
    debugger = Debugger(CallsModel(document.context), clock=fixed_clock(NOW))
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    assert dialog.form is not None
    qtbot.waitUntil(dialog.write_button.isEnabled, timeout=LOADED_MS)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    typed_in = QApplication.focusWidget()
    assert typed_in is not None
    qtbot.keyClick(typed_in, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(typed_in, "7")  # Write waits for this edit's validation
    qtbot.keyClick(typed_in, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.error.text() == CHECKING
    qtbot.waitUntil(task.done, timeout=LOADED_MS)
    assert document.context.resolve("†state.rating.score").value == 7
    assert worker.started == started


def test_the_output_dialog_checks_its_first_value_at_once(qtbot: Any, monkeypatch: Any) -> None:
    """The value an output dialog opens with is checked at once, not after the typing's debounce: Write, which waits
    for that check, becomes usable with a debounce that never ends."""
    from functools import partial

    from contextdeck.gui._editor import _editor
    from contextdeck.gui._editor._validation import Validator

    monkeypatch.setattr(_editor, "Validator", partial(Validator, debounce_ms=600_000))
    tool = {"type": "tool", "tool": {"rate": {"type": "object", "properties": {
        "_output": {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}}}}}
    document = Document(Context([{"type": "state", "data": {}}, tool,
                                 {"type": "plan", "plan": [{"_tool": "rate", "_outputPath": "†state.rating"}]}]))
    debugger = Debugger(CallsModel(document.context), clock=fixed_clock(NOW))
    _task, dialog = _step_to_output_dialog(qtbot, debugger)
    assert dialog.form is not None
    assert dialog.form.validator._debounce_ms == 600_000
    qtbot.waitUntil(dialog.write_button.isEnabled, timeout=LOADED_MS)
    dialog.close()


def test_closing_the_approval_dialog_rejects(qtbot: Any, examples: Path) -> None:
    """Closing the approval window never approves silently: the call fails with a rejection."""
    document, model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.close()
    qtbot.waitUntil(task.done)
    assert document.context[len(document.context) - 1]["data"]["error"]["type"] == "rejected"
    assert model.status(0) is Status.FAILED


def test_approval_dialog_edit_runs_the_edited_call(qtbot: Any, examples: Path) -> None:
    """Editing the call's JSON in the dialog and choosing 'Run edited call' runs the edit."""
    document, _model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.editor.setPlainText(dialog.editor.toPlainText().replace("Hello, Ada!", "Welcome back, Ada."))
    qtbot.mouseClick(dialog.edit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(task.done)
    assert document.context.resolve("†state.greeting").value == "Welcome back, Ada."


def test_a_failing_step_is_reported_not_lost(qtbot: Any, examples: Path) -> None:
    """An exception inside a step started from a button stops the debugger with a message saying what failed."""
    _document, _model, debugger = debugger_for(examples / "refund_workflow.json")

    def broken(call: Any) -> Any:
        raise OSError("disk on fire")

    debugger.approval_enabled = True
    debugger.approver = broken
    task = debugger.start_step()
    qtbot.waitUntil(task.done, timeout=LOADED_MS)
    assert debugger.last_stop == "stepped over #0"  # the engine turns a raising hook into a failed call
    debugger.model.set_source(None)
    # The failure is reported by the task's done callback, which asyncio runs a turn after the task is done.
    with qtbot.waitSignal(debugger.stopped, timeout=LOADED_MS) as stop:
        task = debugger.start_step()
    assert stop.args == ["the debugger stopped on an error: RuntimeError: no document is open"]
    assert task.done()
    assert not debugger.running


def test_breakpoints_survive_an_execution_reset_in_place(qtbot: Any, examples: Path) -> None:
    """A loop's next turn resets its execution in place (the same object, other plans): the rows the
    breakpoints were placed on are the model's own, so following another execution afterwards never reads
    a breakpoint's row in the shrunken plan (it raised IndexError inside a model reset)."""
    document, model, _debugger = debugger_for(examples / "refund_workflow.json")
    context = document.context
    plan_index = len(context) - 1
    execution = model.new_execution()
    model.follow(execution)
    model.set_breakpoint(4, True)
    one = {"type": "plan", "plan": [{"_tool": "logStep", "entry": "a", "_outputPath": "†state.log"}]}
    context.apply(Replace(plan_index, one))
    execution.reset()  # the same execution, one call now
    assert len(execution.plans) == 1
    two = {"type": "plan", "plan": [{"_tool": "logStep", "entry": "b", "_outputPath": "†state.log"},
                                    {"_tool": "logStep", "entry": "c", "_outputPath": "†state.log"}]}
    context.apply(Replace(plan_index, two))
    model.follow(model.new_execution())  # no IndexError, and the model is not left inside a reset
    assert model.rowCount() == 2
    assert model.breakpoints == frozenset()  # the breakpoint's call is in neither plan


def test_cancel_ends_continue_and_opens_no_output_dialog(qtbot: Any) -> None:
    """Cancel while Continue runs a slow activity: Continue stops, saying so; the latent call beside it,
    which waits for an output, does not open its dialog afterwards."""
    started = asyncio.Event()

    async def slow(call: Any, tool: Any, context: Any) -> Any:
        started.set()
        await asyncio.sleep(30)
        return 1

    document = Document(Context([{"type": "state", "data": {}}, {"type": "plan", "plan": [
        {"_tool": "slow", "_outputPath": "†state.a"}, {"_tool": "think", "_outputPath": "†state.b"}]}]))
    model = CallsModel(document.context)
    activities = Activities()
    activities.add(slow, "slow")
    debugger = Debugger(model, activities=activities, clock=fixed_clock(NOW))
    task = spawn(debugger.continue_())
    qtbot.waitUntil(started.is_set)
    debugger.cancel()
    qtbot.waitUntil(task.done, timeout=5000)
    assert debugger.open_dialog is None
    assert debugger.last_stop == "cancelled"
    assert model.status(0) is Status.CANCELLED
    assert model.status(1) is Status.WAITING_FOR_OUTPUT


def test_run_activities_in_process_reaches_the_execution(qtbot: Any, examples: Path) -> None:
    """The Run menu's switch: the debugger's next execution runs activities in-process (off by default)."""
    _, _, debugger = debugger_for(examples / "refund_workflow.json")
    assert debugger.prepared().in_process is False
    debugger.in_process = True
    assert debugger.prepared().in_process is True


def plan_of(count: int) -> Document:
    """A plan of `count` latent calls with their outputs given: each runs at once, none waits for another."""
    calls = [{"_tool": "t", "n": n, "_outputPath": f"†state.s{n}", "_output": n} for n in range(count)]
    return Document(Context([{"type": "state", "data": {}}, {"type": "plan", "plan": calls}]))


def test_continue_lets_the_event_loop_turn_between_calls(qtbot: Any) -> None:
    """A tick of many calls is not one block of the GUI thread: once a turn has used its budget (here at once),
    Continue lets the event loop turn (repaints, input) between two calls started or settled."""
    document = plan_of(20)
    model = CallsModel(document.context, document.solution)
    debugger = Debugger(model, clock=fixed_clock(NOW))
    debugger.pace = Pace(used=lambda: 1.0)
    turns: list[int] = []
    heart = QTimer(interval=0)
    heart.timeout.connect(lambda: turns.append(len(document.context)))
    heart.start()
    run(qtbot, debugger.continue_())
    heart.stop()
    assert len(document.context) == 22
    assert debugger.pace.turns >= 20  # every other piece of the tick's work gives the loop a turn
    landed = sorted(set(turns))
    assert len(landed) >= 10  # the outputs were seen landing over many turns, not all at once


def test_a_tick_under_a_loop_that_never_says_its_turns_begin_still_ends(qtbot: Any) -> None:
    """Paced under a loop whose turns are never seen to begin (bare `processEvents`), every piece past the budget
    would wait for a turn that never comes: after a moment's waiting the pieces go on, and the run ends."""
    document = plan_of(20)
    debugger = Debugger(CallsModel(document.context, document.solution), clock=fixed_clock(NOW))
    debugger.pace = Pace(used=lambda: 1.0, turn=lambda: 0)
    run(qtbot, debugger.continue_())
    assert len(document.context) == 22
    assert debugger.pace.turns > 0  # it did wait, then went on


def test_a_tick_within_its_budget_gives_no_turn(qtbot: Any) -> None:
    """Under the budget the tick goes straight on: no turn given, nothing slower."""
    document = plan_of(20)
    debugger = Debugger(CallsModel(document.context, document.solution), clock=fixed_clock(NOW))
    debugger.pace = Pace(used=lambda: 0.0)
    run(qtbot, debugger.continue_())
    assert len(document.context) == 22
    assert debugger.pace.turns == 0


def test_a_run_judges_the_calls_again_once_when_it_stops(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """While Continue runs, the outputs it appends do not each re-judge every call (the run moves the statuses
    on itself): one refresh comes once it stops, and it does not lay the plan graph out again for the same calls."""
    laid_out: list[int] = []
    real = calls_module.plan_graph
    monkeypatch.setattr(calls_module, "plan_graph", lambda plans, graph=None: laid_out.append(len(plans)) or real(
        plans, graph))
    document = plan_of(20)
    model = CallsModel(document.context, document.solution)
    debugger = Debugger(model, clock=fixed_clock(NOW))
    paced: list[int] = []

    async def pace() -> None:  # halfway, a pause longer than the panel waits before it refreshes after an edit
        paced.append(1)
        await asyncio.sleep(0.1 if len(paced) == 30 else 0)

    debugger.pace = pace  # type: ignore[assignment]
    refreshed: list[bool] = []
    model.refreshed.connect(lambda: refreshed.append(debugger.running) if paced else None)  # once calls started
    run(qtbot, debugger.continue_())
    drawn = len(laid_out)
    qtbot.waitUntil(lambda: bool(refreshed))
    assert refreshed == [False]  # none while it ran, one after
    assert len(laid_out) == drawn  # the same calls: their graph is kept
    assert model.status(19) is Status.DONE
    assert model.detail(19).startswith("wrote #")


def test_a_done_call_s_row_names_where_its_output_is_now_at_once_after_an_edit(qtbot: Any) -> None:
    """The row a view paints (its answers kept between paints) says where a finished call's output is as soon as an
    edit moves it, as the call's detail does, not only once the calls are judged again after the edit pause."""
    document = plan_of(3)
    model = CallsModel(document.context, document.solution)
    debugger = Debugger(model, clock=fixed_clock(NOW))
    run(qtbot, debugger.continue_())
    qtbot.waitUntil(lambda: model.status(2) is Status.DONE and not model._timer.isActive())
    shown = model.index(2, calls_module.DETAIL).data()
    assert shown == model.detail(2)
    assert shown.startswith("wrote #")
    document.context.insert(0, {"type": "text", "role": "user", "text": "before everything"})
    moved = model.index(2, calls_module.DETAIL).data()
    assert moved == model.detail(2) != shown


def test_continue_runs_the_execution_the_panel_shows_when_nothing_changed(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first Continue does not read every call and the run record again: the panel's fresh execution, made
    after the last edit, is the one that runs. After an edit the run starts from a new one."""
    made: list[Execution] = []
    real = calls_module.Execution

    def making(*args: Any, **options: Any) -> Execution:
        made.append(real(*args, **options))
        return made[-1]

    monkeypatch.setattr(calls_module, "Execution", making)
    document = plan_of(4)
    activities = Activities()
    model = CallsModel(document.context, document.solution, activities=lambda: activities)
    shown = model.execution
    debugger = Debugger(model, activities, clock=fixed_clock(NOW))
    run(qtbot, debugger.continue_())
    assert debugger.execution is shown
    assert made == [shown]
    assert document.context[2]["_date"] == NOW  # the run's own clock
    debugger.restart()
    qtbot.waitUntil(lambda: len(made) == 2, timeout=LOADED_MS)  # the panel's fresh execution after the restart
    before_edit = made[1]
    document.context.append({"type": "state", "data": {"note": "edited"}})
    # The panel's refresh after the edit waits a pause, which a loaded machine may give before the run's first
    # turn: either way the run's execution is one made after the edit, not the one shown before it.
    run(qtbot, debugger.continue_())
    assert debugger.execution is not before_edit
    assert any(execution is debugger.execution for execution in made[2:])
    assert [model.status(i) for i in range(4)] == [Status.DONE] * 4


def test_escape_on_the_output_dialog_cancels_and_the_run_stops(qtbot: Any, examples: Path) -> None:
    """Escape (the dialog's reject, which sends no close event) cancels the question: the step ends and the
    call keeps waiting, instead of the run waiting for ever on a hidden dialog."""
    _document, model, debugger = debugger_for(examples / "seed_variables.json")
    run(qtbot, debugger.step())  # greetUser
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(task.done)
    assert not debugger.running
    assert model.status(1) is Status.WAITING_FOR_OUTPUT


def _json_output_dialog(qtbot: Any, tmp_path: Path) -> tuple[Document, asyncio.Future[Any], OutputDialog]:
    """A step at a latent call whose tool has no `_output` schema: its output dialog's JSON box, active, its text
    selected."""
    path = tmp_path / "latent.json"
    path.write_text(json.dumps([
        {"type": "tool", "tool": {"lookup": {"type": "object", "properties": {}}}},
        {"type": "plan", "plan": [{"_tool": "lookup", "_outputPath": "†state.order"}]}]))
    document, _model, debugger = debugger_for(path)
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    dialog.editor.setFocus()
    dialog.editor.selectAll()
    return document, task, dialog


def test_the_output_dialogs_text_is_left_with_tab_and_written_with_ctrl_enter(qtbot: Any, tmp_path: Path) -> None:
    """A latent call without an `_output` schema asks for JSON in a text box: Tab goes on to the buttons (it typed a
    tab, and Enter a new line: Write output was out of the keys' reach), Ctrl+Tab types a tab, and Ctrl+Enter
    writes, from the text too."""
    document, task, dialog = _json_output_dialog(qtbot, tmp_path)
    assert dialog.form is None
    qtbot.keyClicks(dialog.editor, '{"id": 1}')
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab)
    assert dialog.editor.toPlainText() == '{"id": 1}'
    assert not dialog.editor.hasFocus()
    dialog.editor.setFocus()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert dialog.editor.toPlainText() == '{"id": 1}\t'
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(task.done)
    assert document.context[len(document.context) - 1]["data"] == {"order": {"id": 1}}


def test_alt_w_in_the_output_dialogs_text_writes_the_output(qtbot: Any, tmp_path: Path) -> None:
    """Write output has its underlined letter: Alt+W from the JSON box writes, and types no "w" into it (a text box
    takes Alt and a letter as the letter when no button of the dialog has it)."""
    document, task, dialog = _json_output_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.editor, '{"id": 2}')
    assert dialog.write_button.text() == "&Write output"
    qtbot.keyClick(dialog.editor, Qt.Key.Key_W, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(task.done)
    assert document.context[len(document.context) - 1]["data"] == {"order": {"id": 2}}


def test_the_output_dialog_names_its_tool_and_place_as_written(qtbot: Any, tmp_path: Path) -> None:
    """A tool and a destination whose names look like markup are said as written, not read as rich text."""
    path = tmp_path / "markup.json"
    path.write_text(json.dumps([
        {"type": "tool", "tool": {"<i>look</i>": {"type": "object", "properties": {}}}},
        {"type": "plan", "plan": [{"_tool": "<i>look</i>", "_outputPath": "†state.a<b"}]}]))
    _document, _model, debugger = debugger_for(path)
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    intro = next(label for label in dialog.findChildren(QLabel) if "is latent" in label.text())
    said = QTextDocumentFragment.fromHtml(intro.text()).toPlainText()
    assert said.startswith("<i>look</i> is latent")
    assert "†state.a<b" in said
    dialog.close()
    qtbot.waitUntil(task.done)


def test_tab_leaves_the_approval_dialogs_call(qtbot: Any, examples: Path) -> None:
    """In the approval dialog's call text, Tab goes on to the reason (it typed a tab); Ctrl+Tab types one."""
    _document, _model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    dialog.editor.setFocus()
    text = dialog.editor.toPlainText()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab)
    assert dialog.editor.toPlainText() == text
    assert dialog.reason.hasFocus()
    dialog.close()
    qtbot.waitUntil(task.done)


def test_escape_on_the_approval_dialog_rejects(qtbot: Any, examples: Path) -> None:
    """Escape on the approval dialog is a rejection too, never a run left waiting."""
    document, _model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(task.done)
    assert document.context[len(document.context) - 1]["data"]["error"]["type"] == "rejected"


@pytest.mark.parametrize("can_ask", [False, True])
def test_ask_model_is_shown_only_when_a_model_is_set_up(qtbot: Any, examples: Path, can_ask: bool) -> None:
    """The output dialog shows "Ask model" only with a model to ask (the button box used to show it anyway)."""
    _document, _model, debugger = debugger_for(examples / "seed_variables.json")
    if can_ask:
        async def answer(_execution: Any, _index: int) -> str | None:
            return None
        debugger.model_answer = answer
    run(qtbot, debugger.step())  # greetUser
    task, dialog = _step_to_output_dialog(qtbot, debugger)
    qtbot.waitExposed(dialog)
    assert dialog.ask_model_button.isVisible() is can_ask
    dialog.close()
    qtbot.waitUntil(task.done)


def test_tab_goes_through_the_approval_buttons_as_they_are_laid_out(qtbot: Any, examples: Path) -> None:
    """From the reason, Tab went to Run edited call, then Approve, then Reject, while the buttons read Approve, Reject,
    Run edited call on screen: Tab goes left to right."""
    _document, _model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    dialog.reason.setFocus()
    reached = []
    for _ in range(3):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        reached.append(QApplication.focusWidget())
    buttons = [dialog.approve_button, dialog.reject_button, dialog.edit_button]
    assert reached == sorted(buttons, key=lambda button: button.x())
    assert [button.x() for button in reached] == sorted(button.x() for button in reached)
    dialog.close()
    qtbot.waitUntil(task.done)


def test_the_approval_dialog_tabs_as_laid_out_from_the_resolved_call(qtbot: Any, examples: Path) -> None:
    """The approval dialog opens with the keys in the resolved call (what there is to read first, never a button:
    see below); Tab goes down the texts as laid out (the call as written, the reason), through the buttons left to
    right, and round to the top."""
    _document, _model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    buttons = sorted(dialog.buttons.buttons(), key=lambda button: button.x())
    texts = sorted(dialog.findChildren(QPlainTextEdit), key=lambda text: text.y())
    assert texts == [dialog.resolved, dialog.editor]
    reached = [QApplication.focusWidget()]
    for _ in range(len(buttons) + len(texts) + 1):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        reached.append(QApplication.focusWidget())
    assert reached == [*texts, dialog.reason, *buttons, dialog.resolved]
    dialog.close()
    qtbot.waitUntil(task.done)


def test_the_menu_key_opens_the_selected_calls_menu_and_sets_its_breakpoint(qtbot: Any, examples: Path) -> None:
    """From the keys (the Menu key) the row menu was the one of the row in the middle of the view, not the selected
    call's (Run This Call ran another call), and a breakpoint was set only by a click in the gutter. The menu is the
    current row's, shown below it, and its Breakpoint entry sets and clears that call's breakpoint."""
    _document, model, _debugger = debugger_for(examples / "refund_workflow.json")
    view = CallsView(model)
    qtbot.addWidget(view)
    view.resize(420, 400)
    view.show()
    qtbot.waitExposed(view)
    view.select_call(0)
    shown: list[Any] = []
    view.tool_menu = lambda index: shown.append(index.row()) or QMenu(view)  # type: ignore[method-assign]
    middle = view.viewport().rect().center()
    assert view.indexAt(middle).row() != 0
    keys = QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, middle, view.viewport().mapToGlobal(middle))
    QApplication.sendEvent(view.viewport(), keys)
    assert shown == [0]
    del view.tool_menu
    menu = view.tool_menu(model.index(0, 0))
    (toggle,) = [action for action in menu.actions() if action.text() == "&Breakpoint"]
    assert not toggle.isChecked()
    toggle.trigger()
    assert model.breakpoints == {0}
    assert view.tool_menu(model.index(0, 0)).actions()[3].isChecked()


def test_no_key_typed_as_the_approval_dialog_opens_answers_it(qtbot: Any, examples: Path) -> None:
    """An approval decides a side effect, and its dialog can open while the person is typing elsewhere (a run asks as
    it reaches the call): Space, Enter or a letter pressed as it opens answers nothing. The keys start in the resolved
    call, what there is to read first; a button is pressed only once the focus is taken to it."""
    _document, _model, _debugger, task, dialog = awaiting_approval(qtbot, examples / "seed_variables.json")
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    for key in (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_A):
        focused = QApplication.focusWidget()
        assert isinstance(focused, QPlainTextEdit)
        assert focused.isReadOnly()
        qtbot.keyClick(focused, key)
        qtbot.wait(20)
        assert not task.done(), Qt.Key(key).name
        assert dialog.isVisible()
    dialog.reason.setFocus()  # Enter in the reason presses nothing either
    qtbot.keyClicks(dialog.reason, "later")
    qtbot.keyClick(dialog.reason, Qt.Key.Key_Return)
    qtbot.wait(20)
    assert not task.done()
    dialog.approve_button.setFocus()
    qtbot.keyClick(dialog.approve_button, Qt.Key.Key_Return)
    qtbot.waitUntil(task.done)
    ran = _document.context[-1]
    assert "_call" in ran
    assert "rejected" not in json.dumps(ran)  # approved
