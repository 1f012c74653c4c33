"""The inspector installed in the real main window: docks, Run menu, timeline, undo, activities."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextdeck.engine import Status, fixed_clock
from contextdeck.gui._inspector import Inspector
from contextdeck.gui._inspector._async import spawn
from contextdeck.gui._inspector._call_inspector import SOURCE
from contextdeck.gui._window import MainWindow

ACTIVITIES = '''
from contextdeck.engine import activity

SENT = []

@activity("notifyCustomer")
def notify(call, tool, context):
    SENT.append(call["email"])
'''


@pytest.fixture
def window(refund_window: MainWindow) -> MainWindow:
    """The real window (which installs the inspector itself) on the refund workflow."""
    return refund_window


def parts(window: MainWindow) -> Inspector:
    found = window.inspector  # type: ignore[attr-defined]
    assert isinstance(found, Inspector)
    return found


def test_docks_and_run_menu_are_installed(window: MainWindow) -> None:
    """The four docks exist and the Run menu holds Step, Continue, Pause, Restart and the approval toggle."""
    inspector = parts(window)
    assert window.inspector is inspector
    assert set(inspector.docks) == {"Calls", "Call inspector", "Output audit", "Plan graph", "Delegate session",
                                    "Call stack"}
    texts = [a.text() for a in window.menu("Run").actions() if not a.isSeparator()]
    start = texts.index("Step")
    assert texts[start : start + 4] == ["Step", "Continue", "Pause", "Restart"]
    assert "Load Activities…" in [a.text().replace("&", "") for a in window.menu("File").actions()]
    assert inspector.model.rowCount() == 5


def test_step_from_the_menu_shows_the_output_in_the_timeline_and_audit(qtbot: Any, window: MainWindow) -> None:
    """Run → Step appends lookupOrder's output; the timeline grows; selecting it shows its audit; undo removes it."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock("2026-01-02T03:04:05Z")
    before = len(window.context())
    next(a for a in window.menu("Run").actions() if a.text() == "Step").trigger()
    qtbot.waitUntil(lambda: len(window.context()) == before + 1)
    qtbot.waitUntil(lambda: not inspector.debugger.running)
    window.select_message(before)
    inspector.docks["Output audit"].raise_()
    qtbot.waitUntil(lambda: inspector.audit.audit is not None)
    audit = inspector.audit.audit
    assert audit is not None
    assert (audit.call_index, audit.date, audit.path) == (0, "2026-01-02T03:04:05Z", "†state.order")
    window.session.undo_stack.undo()
    assert len(window.context()) == before


def test_the_audit_tabbed_behind_the_state_view_waits_until_its_tab_is_raised(qtbot: Any, window: MainWindow) -> None:
    """Selecting an output while the audit's tab is behind the state view's audits nothing (a blame of its
    path); raising the audit's tab shows that output's audit; selected while in front, it follows at once."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock("2026-01-02T03:04:05Z")
    before = len(window.context())
    next(a for a in window.menu("Run").actions() if a.text() == "Step").trigger()
    qtbot.waitUntil(lambda: len(window.context()) == before + 1 and not inspector.debugger.running)
    window.state_dock.raise_()
    qtbot.waitUntil(lambda: window.state_view.visibleRegion().isEmpty() is False)
    window.select_message(before)
    assert inspector.audit.audit is None
    inspector.docks["Output audit"].raise_()
    qtbot.waitUntil(lambda: inspector.audit.audit is not None)
    assert inspector.audit.audit.message_index == before
    window.select_message(0)
    assert inspector.audit.audit is None  # in front: the text message is audited at once (not an output)


def test_the_call_inspector_tabbed_behind_the_audit_catches_up_when_raised(qtbot: Any, window: MainWindow) -> None:
    """After a step the calls are analysed again; the inspector, tabbed behind the output audit, is not rebuilt
    (a call with _scopes lists every scoped message) until its tab is raised, and then shows the call as it
    is now."""
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock("2026-01-02T03:04:05Z")
    inspector.panel.view.select_call(0)
    shown = inspector.inspector.call
    assert shown is not None
    assert shown.status != Status.DONE
    inspector.docks["Output audit"].raise_()
    qtbot.waitUntil(lambda: inspector.inspector.visibleRegion().isEmpty())
    next(a for a in window.menu("Run").actions() if a.text() == "Step").trigger()
    qtbot.waitUntil(lambda: inspector.model.status(0) == Status.DONE and not inspector.debugger.running)
    qtbot.waitUntil(lambda: inspector.wiring._call_behind is not None)  # the views' refresh reached it
    assert inspector.inspector.call is shown
    inspector.docks["Call inspector"].raise_()
    qtbot.waitUntil(lambda: inspector.inspector.call is not shown)
    current = inspector.inspector.call
    assert current is not None
    assert (current.index, current.status) == (shown.index, Status.DONE)


def test_restart_through_the_undo_stack(qtbot: Any, window: MainWindow) -> None:
    """Continue then Restart gives back the identical document; undoing the Restart brings the outputs back."""
    inspector = parts(window)
    original = window.session.document.dumps()
    task = spawn(inspector.debugger.continue_())
    qtbot.waitUntil(task.done)
    ran = window.session.document.dumps()
    assert ran != original
    inspector.debugger.restart()
    assert window.session.document.dumps() == original
    window.session.undo_stack.undo()
    assert window.session.document.dumps() == ran


def test_source_click_selects_the_message_in_the_timeline(qtbot: Any, window: MainWindow) -> None:
    """Clicking where issueRefund's amount came from selects the input message in the timeline."""
    inspector = parts(window)
    inspector.panel.view.select_call(3)
    item = inspector.inspector.source_item("amount")
    assert item is not None
    with qtbot.waitSignal(window.document.messageSelected) as selected:
        inspector.inspector.params.itemClicked.emit(item, SOURCE)
    assert selected.args == [1]


def test_loading_activities_asks_first_and_changes_the_mode(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """Refusing the warning loads nothing; accepting it makes notifyCustomer a fire-and-forget activity."""
    inspector = parts(window)
    path = tmp_path / "activities.py"
    path.write_text(ACTIVITIES, encoding="utf-8")
    inspector.panel.confirm = lambda parent, file: False
    assert inspector.panel.load_activities(str(path)) is False
    assert "notifyCustomer" not in inspector.debugger.activities
    inspector.panel.confirm = lambda parent, file: True
    assert inspector.panel.load_activities(str(path)) is True
    assert inspector.model.getItem(4).fire_and_forget
    inspector.model.set_breakpoint(4, False)
    task = spawn(inspector.debugger.continue_())
    qtbot.waitUntil(task.done)
    qtbot.waitUntil(lambda: inspector.model.status(4) is Status.FIRE_AND_FORGET)


def test_a_broken_activities_file_says_why(window: MainWindow, tmp_path: Path) -> None:
    """A file with a syntax error is refused with its line, and nothing changes."""
    inspector = parts(window)
    path = tmp_path / "broken.py"
    path.write_text("def (:\n", encoding="utf-8")
    inspector.panel.confirm = lambda parent, file: True
    assert inspector.panel.load_activities(str(path)) is False
    assert "broken.py:1:5: syntax error" in inspector.panel.message.text()


def test_one_activity_loaded_is_said_in_the_singular(window: MainWindow, tmp_path: Path) -> None:
    inspector = parts(window)
    path = tmp_path / "one.py"
    path.write_text("def add(call, tool, context):\n    return 1\n\nACTIVITIES = {'add': add}\n", encoding="utf-8")
    inspector.panel.confirm = lambda parent, file: True
    assert inspector.panel.load_activities(str(path))
    assert inspector.panel.message.text() == "Loaded 1 activity from one.py: add"


def test_no_calls_notice_clears_on_a_document_with_calls(qtbot: Any, window: MainWindow, examples: Path) -> None:
    """After a document without calls, opening one with a plan removes the "No calls" notice."""
    from contextdeck.gui._inspector._panel import NO_CALLS

    panel = parts(window).panel
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "seed_output.json")
    qtbot.waitUntil(lambda: panel.message.text() == NO_CALLS)
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "refund_workflow.json")
    qtbot.waitUntil(lambda: panel.message.text() != NO_CALLS)


def test_a_solution_that_is_only_a_final_output_is_not_called_missing(qtbot: Any, window: MainWindow,
                                                                        tmp_path: Path) -> None:
    """An imported run of one reply and no tool calls: the Calls panel says its solution is a final output,
    never that the document has no solution."""
    from contextdeck.gui._inspector._panel import FINAL_OUTPUT

    path = tmp_path / "imported.json"
    path.write_text(json.dumps({"context": [{"role": "user", "content": "Wetter in Köln?"}],
                                "solution": {"output": "Regen.", "_model": {"model": "m"}}}), encoding="utf-8")
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)
    qtbot.waitUntil(lambda: parts(window).panel.message.text() == FINAL_OUTPUT)


def test_a_first_plan_without_calls_is_named_by_the_panel_and_the_graph(qtbot: Any, window: MainWindow) -> None:
    """A new document, a plan message inserted (no calls yet): the calls panel and the plan graph say that plan has
    none yet (both kept saying the document had no plan message: nothing counted as calls changed)."""
    from PySide6.QtWidgets import QGraphicsSimpleTextItem

    from contextdeck.gui._inspector._panel import EMPTY_PLAN, NO_CALLS

    inspector = parts(window)
    window.session.new()
    qtbot.waitUntil(lambda: inspector.panel.message.text() == NO_CALLS)
    inspector.docks["Plan graph"].show()
    inspector.docks["Plan graph"].raise_()

    def said() -> list[str]:
        return [item.text() for item in inspector.graph.scene().items() if isinstance(item, QGraphicsSimpleTextItem)]

    qtbot.waitUntil(lambda: said() == [NO_CALLS])
    window.insert_message("Plan")
    qtbot.waitUntil(lambda: inspector.panel.message.text() == EMPTY_PLAN.format(0))
    qtbot.waitUntil(lambda: said() == [EMPTY_PLAN.format(0)])
    window.commands.undo()
    qtbot.waitUntil(lambda: inspector.panel.message.text() == NO_CALLS)
    qtbot.waitUntil(lambda: said() == [NO_CALLS])


def test_a_runs_outputs_become_timeline_rows_a_turn_at_a_time(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """While Continue runs, the outputs it appends become rows once per turn of the event loop (one row insert
    for all that landed in it), and once it stops the timeline is the one a fresh model over the document shows."""
    from contextdeck.gui._slices import Pace, slices
    from contextdeck.gui._timeline_model import LookRole, TimelineModel

    calls = [{"_tool": "t", "n": n, "_outputPath": f"†state.s{n}", "_output": n} for n in range(40)]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"context": [{"type": "state", "data": {}}, {"type": "plan", "plan": calls}]}),
                    encoding="utf-8")
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)
    inspector = parts(window)
    inspector.debugger.clock = fixed_clock("2026-01-01T00:00:00Z")
    asked = {"turn": -1, "times": 0}

    def used() -> float:  # over the budget from the fifth piece of work of a turn on
        if asked["turn"] != slices().turns:
            asked.update(turn=slices().turns, times=0)
        asked["times"] += 1
        return asked["times"]

    inspector.debugger.pace = Pace(budget=4, used=used)
    model = window.timeline.model()
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    task = spawn(inspector.debugger.continue_())
    qtbot.waitUntil(task.done)
    context = window.context()
    assert len(context) == 42
    assert 1 < len(inserted) < 40  # seen landing during the run, several outputs a row insert
    assert [first for first, _last in inserted] == [2] + [last + 1 for _first, last in inserted[:-1]]
    qtbot.waitUntil(lambda: window.selected_message() == 41)  # the run's last output is shown, as before
    fresh = TimelineModel(context)
    fresh.detach()
    fresh.set_cursor(window.time_cursor())
    assert model.rowCount() == fresh.rowCount() == 42
    assert [model.index(row, 0).data(LookRole) for row in range(42)] == \
        [fresh.index(row, 0).data(LookRole) for row in range(42)]


def test_a_message_a_run_appended_this_turn_can_be_selected_at_once(qtbot: Any, window: MainWindow) -> None:
    """While a run holds its outputs' rows for the next turn, selecting one of them (a jump from another view, Go to
    Message) makes the rows first and selects it."""
    model = window.timeline.model()
    model.pace_for_a_run(True)
    try:
        window.context().append({"type": "state", "data": {"late": True}})
        last = len(window.context()) - 1
        assert model.rowCount() == last  # not a row yet (no solution row here)
        window.select_message(last)
        assert window.selected_message() == last
        window.go_to(0)
        window.context().append({"type": "state", "data": {"later": True}})
        window.go_to(last + 1)
        assert window.selected_message() == last + 1
    finally:
        model.pace_for_a_run(False)


def test_opening_another_document_judges_only_its_calls(qtbot: Any, window: MainWindow, examples: Path) -> None:
    """Opening a document changes the window's path just before it replaces the document: the calls panel judges
    the new document's calls, never the replaced document's again in the hand-over (at a million messages, its
    turn was more than a frame)."""
    model = parts(window).model
    judged: list[Any] = []  # the context of each judgement from the hand-over on (before it, the old one's may be)
    handed_over: list[bool] = []
    make, adopt = model.new_execution, window.session._adopt

    def new_execution(**options: Any) -> Any:
        if handed_over:
            judged.append(model.context)
        return make(**options)

    def hand_over(*args: Any, **keywords: Any) -> Any:
        handed_over.append(True)
        return adopt(*args, **keywords)

    model.new_execution = new_execution  # type: ignore[method-assign]
    window.session._adopt = hand_over  # type: ignore[method-assign]
    replaced = window.context()
    with qtbot.waitSignal(window.document.documentShown, timeout=10_000):
        window.session.open(examples / "moderation_batch.json")
    qtbot.waitUntil(lambda: bool(judged) and not window._busy())
    assert judged
    assert all(context is window.context() for context in judged)
    assert replaced is not window.context()


def test_with_no_call_selected_the_first_tab_says_will_run(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """A call that had run showed its first tab as "Would run now"; another document opened, with no call selected,
    kept saying so over an empty page (driven by keys). With no call it says "Will run"."""
    inspector = parts(window)
    call = inspector.model.getItem(0)
    path = call.plan.output_path
    assert path is not None
    window.commands.insert(len(window.context()), {"type": "data", "kind": "state", "data": {
        path.split(".")[1]: {"id": 1}}, "_call": call.call, "_outputPath": path, "_run": {"call": 0}})
    qtbot.waitUntil(lambda: inspector.model.recorded(0) is not None)
    inspector.panel.view.select_call(0)
    qtbot.waitUntil(lambda: inspector.inspector.tabs.tabText(0) == "Would run now")
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"type": "text", "role": "system", "text": "hi"}]))
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.files.open_path(other)
    qtbot.waitUntil(lambda: inspector.inspector.call is None)
    assert inspector.inspector.tabs.tabText(0) == "Will run"


CRITIC = {"type": "advisor", "id": "critic", "on": "request",
          "schema": {"type": "object", "properties": {"thought": {"type": "string"}}}}
ECHO = {"_tool": "echo", "_output": "a", "_outputPath": "†state.echo"}


@pytest.mark.parametrize(("solution", "said"), [
    ({"advisors": [{"id": "critic", "thought": 5, "calls": "{}"}, {"id": "nobody"}], "calls": [ECHO], "output": None},
     "solution.advisors[0].thought: 5 is not of type 'string'; solution.advisors[1]: no advisor has the id 'nobody'"),
    ({"calls": [ECHO], "output": None, "advisors": [{"id": "critic", "calls": "[1]"}]},
     "solution.advisors[0].calls: votes must be inline JSON: a string holding an object")])
def test_the_debugger_refuses_a_solution_run_refuses_and_runs_nothing(qtbot: Any, tmp_path: Path, open_window: Any,
                                                                      solution: Any, said: str) -> None:
    """docs/format.md §6: `contextdeck run` refuses a document whose own solution holds advice `validate` calls an
    error (017). Step, Continue, Step Into, Run to here and Re-run stale calls in the window refuse it alike: the
    calls panel says run's words, nothing runs, and the document and its undo history are unchanged."""
    path = tmp_path / "advised.json"
    path.write_text(json.dumps({"context": [CRITIC], "solution": solution}), encoding="utf-8")
    window = open_window(path)
    inspector = parts(window)
    debugger, before, steps = inspector.debugger, list(window.context().messages), window.session.undo_stack.count()
    assert inspector.model.rowCount() == 1  # its calls are shown, as validate reads them
    for start in (lambda: next(a for a in window.menu("Run").actions() if a.text() == "Step").trigger(),
                  lambda: next(a for a in window.menu("Run").actions() if a.text() == "Continue").trigger(),
                  lambda: next(a for a in window.menu("Run").actions() if a.text() == "Step Into").trigger(),
                  lambda: debugger.start_run_to(0), lambda: debugger.start_run_call(0),
                  lambda: debugger.start_rerun_stale()):
        debugger.last_stop = ""
        start()
        qtbot.waitUntil(lambda: debugger.last_stop != "" and not debugger.running)
        assert debugger.last_stop == f"nothing runs: contextdeck run refuses this solution: {said}"
        assert inspector.panel.message.text() == debugger.last_stop
    assert window.context().messages == before
    assert window.session.undo_stack.count() == steps
    assert inspector.model.status(0) != Status.DONE


def test_a_solution_that_is_none_opens_with_no_calls_and_says_why(qtbot: Any, tmp_path: Path, open_window: Any) -> None:
    """A solution that is no solution (SPEC 1), which `contextdeck run` refuses rather than run the last plan in its
    place: the window opens it with no calls to run (not the plan's), the calls panel says run's words, and Step
    refuses it, the document unchanged."""
    path = tmp_path / "none.json"
    plan = {"type": "plan", "plan": [ECHO]}
    path.write_text(json.dumps({"context": [plan], "solution": 5}), encoding="utf-8")
    window = open_window(path)
    inspector = parts(window)
    said = "contextdeck run refuses this solution: solution: must be an object with 'calls' and 'output', or an " \
           "array of calls"
    assert inspector.model.rowCount() == 0
    qtbot.waitUntil(lambda: inspector.panel.message.text() == f"No calls: {said}.")
    task = spawn(inspector.debugger.step())
    qtbot.waitUntil(task.done)
    assert task.result() is False
    assert inspector.debugger.last_stop == f"nothing runs: {said}"
    assert window.context().messages == [plan]
