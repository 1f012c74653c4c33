"""The debugger reads the document's run record, driven through the real window: reopen, approve, undo, stale."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import test_inspector_window as shared
from PySide6.QtGui import QAction

from contextdeck.engine import Context, Replace, Status, classify, fixed_clock
from contextdeck.gui._inspector import Inspector
from contextdeck.gui._inspector._calls import CallsModel
from contextdeck.gui._summary import message_summary
from contextdeck.gui._window import MainWindow

NOW = "2026-01-02T03:04:05Z"


@pytest.fixture
def effects(tmp_path: Path) -> tuple[Path, Path]:
    """An activities file whose side effects append a line to a log: (activities file, log)."""
    log = tmp_path / "effects.txt"
    code = tmp_path / "effects.py"
    code.write_text(
        "def pay(call, tool, context):\n"
        f"    open({str(log)!r}, 'a').write('paid\\n')\n"
        "    return {'refundId': 'R-' + call['orderId']}\n"
        "def notify(call, tool, context):\n"
        f"    open({str(log)!r}, 'a').write('mailed\\n')\n"
        "ACTIVITIES = {'issueRefund': pay, 'notifyCustomer': notify}\n",
        encoding="utf-8",
    )
    return code, log


parts = shared.parts


@pytest.fixture
def window(refund_window: MainWindow) -> MainWindow:
    return refund_window


def open_document(qtbot: Any, window: MainWindow, path: Path) -> None:
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)


def load(inspector: Inspector, path: Path) -> None:
    inspector.panel.confirm = lambda parent, file: True
    assert inspector.panel.load_activities(str(path))
    inspector.debugger.clock = fixed_clock(NOW)


def trigger(qtbot: Any, window: MainWindow, name: str) -> None:
    """Press a Run menu command as a user would, and wait until the debugger is idle again."""
    inspector = parts(window)
    action = next(a for a in window.menu("Run").actions() if a.text() == name)
    assert action.isEnabled(), name
    with qtbot.waitSignal(inspector.debugger.stopped, timeout=10000):
        action.trigger()
    qtbot.waitUntil(lambda: not inspector.debugger.running)


def outputs_of(window: MainWindow, call: int) -> list[int]:
    context = window.context()
    return [i for i in range(len(context)) if context[i].get("_run", {}).get("call") == call]


def approve(window: MainWindow) -> None:
    """Add the refund's approval to the state message, as the editor would (one undoable edit)."""
    state = next(i for i in range(len(window.context())) if window.context()[i].get("type") == "state")
    message = json.loads(json.dumps(window.context()[state]))
    message["data"]["approvals"] = {"refund": "lead"}
    window.apply_edit(Replace(state, message))


def test_reopen_then_continue_runs_only_what_has_not_run(qtbot: Any, window: MainWindow, tmp_path: Path,
                                                         effects: tuple[Path, Path]) -> None:
    """Step once, save, reopen: the calls panel says lookupOrder is done; Continue runs the rest, once each."""
    code, log = effects
    inspector = parts(window)
    load(inspector, code)
    approve(window)
    trigger(qtbot, window, "Step")
    assert window.session.save_as(tmp_path / "half.json")
    open_document(qtbot, window, tmp_path / "half.json")
    inspector = parts(window)
    load(inspector, code)
    qtbot.waitUntil(lambda: inspector.model.rowCount() == 5 and inspector.model.status(0) is Status.DONE)
    assert inspector.model.status(1) is Status.READY
    trigger(qtbot, window, "Continue")
    assert [len(outputs_of(window, call)) for call in range(5)] == [1, 1, 1, 1, 1]
    # notifyCustomer is fire-and-forget: Continue does not wait for it, its worker writes a moment later.
    qtbot.waitUntil(lambda: sorted(log.read_text().split()) == ["mailed", "paid"], timeout=10000)
    assert window.session.save_as(tmp_path / "done.json")
    before = window.session.document.dumps()
    open_document(qtbot, window, tmp_path / "done.json")
    inspector = parts(window)
    load(inspector, code)
    trigger(qtbot, window, "Continue")
    assert window.session.document.dumps() == before
    assert sorted(log.read_text().split()) == ["mailed", "paid"]
    assert inspector.debugger.last_stop == "finished: every call has run"


def test_approving_mid_run_lets_step_run_the_approved_call(qtbot: Any, window: MainWindow,
                                                           effects: tuple[Path, Path]) -> None:
    """Continue stops with issueRefund awaiting approval; adding the approval and pressing F10 runs it."""
    code, log = effects
    inspector = parts(window)
    load(inspector, code)
    trigger(qtbot, window, "Continue")
    assert "#3 awaiting approval on †state.approvals.refund" in inspector.debugger.last_stop
    approve(window)
    trigger(qtbot, window, "Step")
    assert inspector.debugger.last_stop == "stepped over #3"
    assert len(outputs_of(window, 3)) == 1
    assert "paid" in log.read_text().split()


def test_undoing_a_step_makes_the_call_pending_and_step_runs_it_again(qtbot: Any, window: MainWindow) -> None:
    """F10, then Edit → Undo: lookupOrder is pending again (not "done"), and F10 runs it again, writing one output."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock(NOW)
    trigger(qtbot, window, "Step")
    assert inspector.model.status(0) is Status.DONE
    window.session.undo_stack.undo()
    assert outputs_of(window, 0) == []
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.READY)
    trigger(qtbot, window, "Step")
    assert inspector.debugger.last_stop == "stepped over #0"
    assert len(outputs_of(window, 0)) == 1
    assert inspector.model.status(0) is Status.DONE


def judged_after(window: MainWindow) -> list[tuple[bool, str]]:
    """Each time the calls are judged again from now on: whether the debugger was running, and its note then."""
    inspector = parts(window)
    seen: list[tuple[bool, str]] = []
    inspector.model.refreshed.connect(lambda: seen.append((inspector.debugger.running, inspector.debugger.last_stop)))
    return seen


def edit_action(window: MainWindow, name: str) -> None:
    """Edit → Undo or Redo, as Ctrl+Z and Ctrl+Shift+Z press them."""
    action = next(a for a in window.findChildren(QAction) if a.objectName() == name)
    assert action.isEnabled(), name
    action.trigger()


@pytest.mark.parametrize(("command", "said", "undone"), [
    ("Step", "stepped over #0", "Run call #0 (lookupOrder)"),
    ("Continue", "#3 awaiting approval", "Continue"),
    ("Restart", "restarted", "Restart the run"),
])
def test_an_undo_or_redo_of_a_run_replaces_the_calls_panels_note_with_what_it_did(
        qtbot: Any, window: MainWindow, command: str, said: str, undone: str) -> None:
    """Step, Continue or Restart, then Ctrl+Z: the calls panel says what was undone, never "stepped over #0" of an
    output that is gone; Ctrl+Shift+Z says what was redone. The calls judged after the run, its output among them,
    leave the run's own note as it is."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock(NOW)
    if command == "Restart":
        trigger(qtbot, window, "Step")
    judged = judged_after(window)
    trigger(qtbot, window, command)
    note = inspector.panel.message
    assert said in note.text()
    if command != "Restart":
        qtbot.waitUntil(lambda: (False, inspector.debugger.last_stop) in judged)
        assert said in note.text()
    edit_action(window, "undo")
    assert note.text() == f"Undone: {undone}"
    assert (len(outputs_of(window, 0)) == 1) is (command == "Restart")
    judged.clear()
    qtbot.waitUntil(lambda: bool(judged))
    assert note.text() == f"Undone: {undone}"
    edit_action(window, "redo")
    assert note.text() == f"Redone: {undone}"
    assert (len(outputs_of(window, 0)) == 1) is (command != "Restart")


def test_deleting_what_a_step_wrote_replaces_its_note_with_what_step_does_now(qtbot: Any, window: MainWindow) -> None:
    """F10, then delete its output in the timeline: once the calls are judged again the note no longer says
    "stepped over #0" but that Step runs lookupOrder again; deleting another message leaves a note as it is."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock(NOW)
    trigger(qtbot, window, "Step")
    judged = judged_after(window)
    window.commands.delete(0)  # the system text, not the step's output
    qtbot.waitUntil(lambda: bool(judged))
    assert inspector.panel.message.text() == "stepped over #0"
    [output] = outputs_of(window, 0)
    window.commands.delete(output)
    qtbot.waitUntil(lambda: inspector.panel.message.text() != "stepped over #0")
    assert inspector.panel.message.text() == "What the last run wrote was removed; Step runs #0 (lookupOrder) next"


def test_an_edited_input_makes_its_readers_stale_and_rerun_stale_runs_exactly_them(
        qtbot: Any, window: MainWindow) -> None:
    """After Continue, edit the input's reason: only checkEligibility is stale; Re-run Stale Calls runs only it."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock(NOW)
    trigger(qtbot, window, "Continue")
    written = {call: outputs_of(window, call) for call in range(5)}
    message = json.loads(json.dumps(window.context()[1]))
    message["input"]["reason"] = "Arrived broken"
    window.apply_edit(Replace(1, message))
    qtbot.waitUntil(lambda: inspector.model.stale_rows() == [2])
    assert inspector.model.index(2, 3).data() == "done · stale"
    assert inspector.model.detail(2) == "stale: reason changed since it ran"
    inspector.panel.view.select_call(2)
    qtbot.waitUntil(lambda: inspector.inspector.call is not None and inspector.inspector.call.index == 2)
    reason = inspector.inspector.source_item("reason")
    assert reason is not None
    assert (reason.text(2), reason.text(4)) == ('"Arrived broken"', '"Arrived damaged"')
    trigger(qtbot, window, "Re-run Stale Calls")
    after = {call: outputs_of(window, call) for call in range(5)}
    assert len(after[2]) == 2
    assert after[2][0] == written[2][0]
    assert {call: after[call] for call in (0, 1, 3, 4)} == {call: written[call] for call in (0, 1, 3, 4)}
    qtbot.waitUntil(lambda: inspector.model.stale_rows() == [])
    assert window.context().resolve("†state.eligibility").sources[-1] == after[2][1]


def test_the_plan_graph_is_not_drawn_while_hidden_and_then_repaints_only_changed_nodes(
        qtbot: Any, window: MainWindow) -> None:
    """Tabbed behind the watches at first, the graph is not drawn until raised; Continue with it hidden draws
    nothing; showing it again catches up on the statuses without a new
    layout (the calls are the same); a Step repaints only the nodes whose status changed."""
    inspector = parts(window)
    graph = inspector.graph
    qtbot.waitUntil(lambda: inspector.wiring.graph_pending)  # type: ignore[attr-defined]
    assert not graph.nodes  # at first it is tabbed behind the watches: not drawn until seen
    inspector.docks["Plan graph"].raise_()
    qtbot.waitUntil(lambda: 0 in graph.nodes)
    inspector.docks["Plan graph"].hide()
    qtbot.waitUntil(lambda: not graph.isVisible())
    drawn = graph.redraws
    repainted = graph.repainted
    trigger(qtbot, window, "Continue")
    qtbot.waitUntil(lambda: inspector.wiring.graph_pending)  # type: ignore[attr-defined]  # the views were refreshed: the graph waits
    assert (graph.redraws, graph.repainted, graph.nodes[0].status) == (drawn, repainted, Status.READY)
    inspector.docks["Plan graph"].show()
    inspector.docks["Plan graph"].raise_()
    qtbot.waitUntil(lambda: graph.nodes[0].status is Status.DONE)
    assert graph.redraws == drawn
    trigger(qtbot, window, "Restart")
    qtbot.waitUntil(lambda: graph.nodes[0].status is Status.READY)
    repainted = graph.repainted
    trigger(qtbot, window, "Step")
    qtbot.waitUntil(lambda: graph.nodes[0].status is Status.DONE)
    assert graph.redraws == drawn
    assert 1 <= graph.repainted - repainted <= 3  # lookupOrder done, checkEligibility no longer blocked


def test_fork_here_opens_the_document_up_to_the_selected_message_and_runs_only_the_rest(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """Continue, select lookupOrder's output, Fork Here…: the fork ends there, and the status bar says what was
    forked where (it said only "Ready"); Continue in it runs the calls whose outputs came later, and lookupOrder is
    not run again. The original file is untouched."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock(NOW)
    source = window.session.path
    assert source is not None
    original = source.read_text(encoding="utf-8")
    trigger(qtbot, window, "Continue")
    [lookup] = outputs_of(window, 0)
    window.select_message(lookup)
    inspector.wiring.ask_fork_path = lambda: str(tmp_path / "fork.json")  # type: ignore[attr-defined]
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        next(a for a in window.menu("Run").actions() if a.text().replace("&", "") == "Fork Here…").trigger()
    assert window.session.path == tmp_path / "fork.json"
    assert len(window.context()) == lookup + 1
    said = f"Forked {source.name} at message #{lookup} into fork.json, which ends there: nothing was run"
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith(said))
    inspector = parts(window)
    qtbot.waitUntil(lambda: inspector.model.rowCount() == 5 and inspector.model.status(0) is Status.DONE)
    trigger(qtbot, window, "Continue")
    assert [len(outputs_of(window, call)) for call in (0, 1, 2, 4)] == [1, 1, 1, 1]
    assert source.read_text(encoding="utf-8") == original


def test_groups_and_instances_are_named_in_the_timeline_and_the_calls_panel(qtbot: Any) -> None:
    """A plan with an `any` group and an instanced call: the timeline says `any(a | b)`, the panel `any ▸ a`."""
    plan = {"type": "plan", "plan": [{"any": [{"_tool": "quoteA", "_output": 1}, {"_tool": "quoteB", "_output": 2}]},
                                     {"_tool": "label", "_instance": "①", "_output": 3}]}
    assert message_summary(plan, classify(plan)) == "2 calls: any(quoteA | quoteB) → label@①"
    model = CallsModel(Context([plan]))
    assert [model.index(row, 2).data() for row in range(3)] == ["any ▸ quoteA", "any ▸ quoteB", "label @①"]


def test_loading_activities_starts_a_worker_ahead_unless_in_process(window: MainWindow, effects: tuple[Path, Path],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Load Activities… starts a worker process at once (ready by the first Step); in-process, none."""
    from contextdeck.gui._inspector import _panel

    started: list[bool] = []
    monkeypatch.setattr(_panel, "prestart_workers", lambda: started.append(True))
    inspector = parts(window)
    load(inspector, effects[0])
    assert started == [True]
    inspector.debugger.in_process = True
    load(inspector, effects[0])
    assert started == [True]


def test_a_busy_async_activity_leaves_the_window_responsive_and_cancel_ends_it(qtbot: Any, window: MainWindow,
                                                                             tmp_path: Path) -> None:
    """An async activity that never yields runs in its worker: the window's event loop goes on meanwhile,
    and Cancel ends the call (its process killed) and Continue with it."""
    from PySide6.QtCore import QTimer

    busy = tmp_path / "busy.py"
    busy.write_text("async def spin(call, tool, context):\n    while True:\n        pass\n"
                    "ACTIVITIES = {'spin': spin}\n")
    document = tmp_path / "busy.json"
    document.write_text(json.dumps([{"type": "state", "data": {}},
                                    {"type": "plan", "plan": [{"_tool": "spin", "_outputPath": "†state.a"}]}]))
    open_document(qtbot, window, document)
    inspector = parts(window)
    load(inspector, busy)
    action = next(a for a in window.menu("Run").actions() if a.text() == "Continue")
    action.trigger()
    qtbot.waitUntil(lambda: inspector.model.status(0) is Status.RUNNING, timeout=10000)
    ticked: list[bool] = []
    QTimer.singleShot(0, lambda: ticked.append(True))
    qtbot.waitUntil(lambda: bool(ticked))  # the event loop is not held by the activity
    inspector.debugger.cancel()
    qtbot.waitUntil(lambda: not inspector.debugger.running, timeout=10000)
    assert inspector.model.status(0) is Status.CANCELLED
    assert inspector.debugger.last_stop == "cancelled"


def test_a_stale_parameter_row_is_readable_in_either_theme(qtbot: Any, window: MainWindow,
                                                           theme: Callable[[str], None]) -> None:
    """The call inspector marks a parameter that changed since the call ran with a warm row: light in the light
    theme, dark in the dark one, under the theme's own text colour (it stayed light yellow under the dark
    theme's light text)."""
    from PySide6.QtGui import QPalette

    inspector = parts(window)
    inspector.debugger.clock = fixed_clock(NOW)
    trigger(qtbot, window, "Continue")
    message = json.loads(json.dumps(window.context()[1]))
    message["input"]["reason"] = "Arrived broken"
    window.apply_edit(Replace(1, message))
    qtbot.waitUntil(lambda: inspector.model.stale_rows() == [2])
    inspector.docks["Call inspector"].raise_()
    inspector.panel.view.select_call(2)
    qtbot.waitUntil(lambda: inspector.inspector.source_item("reason") is not None)
    params = inspector.inspector.params

    def row_and_text() -> tuple[int, int]:  # the row's fill right of the parameter's name, and the text colour
        item = inspector.inspector.source_item("reason")
        assert item is not None
        params.scrollToItem(item)
        rect = params.visualItemRect(item)
        fill = params.viewport().grab().toImage().pixelColor(params.columnWidth(0) - 3, rect.center().y())
        return fill.lightness(), params.palette().color(QPalette.ColorRole.Text).lightness()

    light_fill, light_text = row_and_text()
    assert light_fill > 180 > 100 > light_text
    theme("dark")
    dark_fill, dark_text = row_and_text()
    assert dark_fill < 100 < 180 < dark_text
