"""The calls panel and the call inspector over the bundled examples, before anything runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from contextdeck.engine import Context, Execution, Status, fixed_clock, import_trace, load_document
from contextdeck.gui._inspector._call_inspector import RESOLVED, SOURCE, CallInspector
from contextdeck.gui._inspector._calls import DETAIL, GUTTER, STATUS, CallsModel, CallsView


@pytest.fixture
def refund(examples: Path) -> tuple[Context, object]:
    document = load_document(examples / "refund_workflow.json")
    return document.context, document.solution


def test_calls_model_passes_the_model_tester(qtbot, qtmodeltester, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """The calls model is a well-behaved Qt item model."""
    context, solution = refund
    qtmodeltester.check(CallsModel(context, solution))


def test_status_follows_the_context(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """Writing the approval a call waits for unblocks it in the panel, without any explicit refresh."""
    context, solution = refund
    model = CallsModel(context, solution)
    assert model.index(3, STATUS).data() == "awaiting approval"
    assert "†state.approvals.refund" in model.index(3, DETAIL).data()
    context.append({"type": "state", "data": {"approvals": {"refund": "lead"}}})
    qtbot.waitUntil(lambda: model.index(3, STATUS).data() == "waiting for output")


def test_a_refresh_tells_the_view_only_the_rows_that_changed(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """After an edit the calls are judged again, but the view is told only of rows whose status or detail
    changed: none for a message that no call reads, the unblocked call's row for its approval."""
    context, solution = refund
    model = CallsModel(context, solution)
    told: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, *_: told.append((first.row(), last.row())))
    context.append({"type": "text", "text": "an aside no call reads"})
    with qtbot.waitSignal(model.refreshed):
        pass
    assert told == []
    context.append({"type": "state", "data": {"approvals": {"refund": "lead"}}})
    qtbot.waitUntil(lambda: model.index(3, STATUS).data() == "waiting for output")
    assert told
    assert all(first <= 3 <= last for first, last in told)


def test_a_running_debugger_s_rows_repaint_a_few_times_a_second_and_at_once_when_it_stops(  # type: ignore[no-untyped-def]
        qtbot, refund: tuple[Context, object]) -> None:
    """While the debugger runs (`hold`), calls the run moves on are told to the view on a timer of
    `ROWS_WHILE_RUNNING_MS`, not in the next turn (a repaint per turn was much of a Continue's cost); when it stops,
    the rows still pending are told at once. Not running, a moved call is told in the next turn."""
    from types import SimpleNamespace

    context, solution = refund
    model = CallsModel(context, solution)
    told: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, *_: told.append((first.row(), last.row())))
    model.pace_for_a_run(True)
    model.state_changed(SimpleNamespace(index=2))
    model.state_changed(SimpleNamespace(index=4))
    QApplication.processEvents()
    assert told == []
    model.pace_for_a_run(False)
    assert told == [(2, 4)]
    model.state_changed(SimpleNamespace(index=1))
    qtbot.waitUntil(lambda: told[-1] == (1, 1))


def test_gutter_click_toggles_a_breakpoint(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """A click in the gutter column sets a breakpoint; a second click clears it."""
    context, solution = refund
    model = CallsModel(context, solution)
    view = CallsView(model)
    qtbot.addWidget(view)
    view.show()
    rect = view.visualRect(model.index(2, GUTTER))
    with qtbot.waitSignal(model.breakpointsChanged):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert model.breakpoints == {2}
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert model.breakpoints == frozenset()


def test_inspector_shows_missing_path_and_links_sources(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """The inspector highlights the missing approval and a click on a source emits that message's index."""
    context, solution = refund
    model = CallsModel(context, solution)
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    inspector.show_call(context, model.getItem(3))
    approved = inspector.source_item("approvedBy")
    assert approved is not None
    assert approved.text(RESOLVED) == "missing †state.approvals.refund"
    amount = inspector.source_item("amount")
    assert amount is not None
    assert amount.text(RESOLVED) == "89.5"
    with qtbot.waitSignal(inspector.sourceActivated) as blocker:
        inspector.params.itemClicked.emit(amount, SOURCE)
    assert blocker.args == [1]
    assert inspector.destinations.destinations() == [(0, 0, "†state.refund")]


def test_inspector_draws_branches_and_fan_out(qtbot, examples: Path) -> None:  # type: ignore[no-untyped-def]
    """verifyUser's `||` is two branches; generateSummary's `&&` is one branch with two destinations."""
    document = load_document(examples / "seed_variables.json")
    model = CallsModel(document.context, document.solution)
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    inspector.show_call(document.context, model.getItem(1))
    assert inspector.destinations.destinations() == [(0, 0, "†state.user.verified"), (1, 0, "†state.user.failed")]
    inspector.show_call(document.context, model.getItem(2))
    assert inspector.destinations.destinations() == [(0, 0, "†state.user.summary"), (0, 1, "†state.audit.summary")]


def test_a_reader_waits_for_the_call_that_writes_its_path(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """checkEligibility reads †state.order, which lookupOrder writes: it is blocked on it until that call is done."""
    context, solution = refund
    model = CallsModel(context, solution)
    assert model.status(2) is Status.BLOCKED
    assert model.getItem(2).waiting_for == ("†state.order",)
    assert model.index(2, DETAIL).data() == "waits for †state.order"
    assert [(e.source, e.target, e.paths) for e in model.graph.edges] == [(0, 2, ("†state.order",))]


def test_a_branch_not_taken_says_so(qtbot) -> None:  # type: ignore[no-untyped-def]
    """012: after the weather call took the sunny branch, the rainy branch's call is shown waiting, and why it holds
    nobody back; the call both branches feed has run."""
    weather = [
        {"_tool": "getWeather", "_output": "sun", "_outputPath": "†state.sunny || †state.rainy"},
        {"_tool": "findPark", "w": "†state.sunny", "_output": "park", "_outputPath": "†state.suggestion"},
        {"_tool": "findMovie", "w": "†state.rainy", "_output": "movie", "_outputPath": "†state.suggestion"},
        {"_tool": "present", "s": "†state.suggestion", "_output": 1, "_outputPath": "†state.presented"},
    ]
    context = Context([])
    asyncio.run(Execution(context, {"calls": weather}, clock=fixed_clock("2026-01-01T00:00:00Z")).run())
    model = CallsModel(context, {"calls": weather})
    assert model.index(2, DETAIL).data() == ("waits for †state.rainy (a branch not taken: no call left in the plan "
                                              "writes it)")
    assert [model.status(i) for i in range(4)] == [Status.DONE, Status.DONE, Status.BLOCKED, Status.DONE]


@pytest.mark.parametrize("name", ["refund_workflow", "seed_variables", "moderation_batch", "seed_output"])
def test_panel_statuses_agree_with_the_engine(qtbot, examples: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """Before anything runs, the panel's statuses and waited-for paths are the engine's own."""
    document = load_document(examples / f"{name}.json")
    model = CallsModel(document.context, document.solution)
    execution = Execution(document)
    assert [str(model.status(i)) for i in range(model.rowCount())] == [str(s.status) for s in execution.states]
    for state in execution.states:
        if state.waiting_for:
            assert model.getItem(state.index).waiting_for == state.waiting_for


def test_a_parameter_problem_is_marked_on_its_row(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """checkEligibility's order resolves to null, which its schema refuses: the row says so in its tooltip."""
    context, solution = refund
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    inspector.show_call(context, CallsModel(context, solution).getItem(2))
    row = inspector.source_item("order")
    assert row is not None
    assert row.text(RESOLVED).startswith("⚠ ")
    assert "is not of type 'object'" in row.toolTip(RESOLVED)
    assert not inspector.problems.isHidden()


def test_the_panel_fails_an_output_path_the_tool_refuses(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Regression: a tool allowing only `enum ["†state.a"]` and a call writing †state.b shows failed, as in
    `Execution` (the panel's own analysis used to show it ready)."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_outputPath": {"enum": ["†state.a"]}}}}}
    context = Context([tool, {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.b", "_output": 1}]}])
    model = CallsModel(context)
    assert Execution(context).state(0).status is Status.FAILED
    assert model.index(0, STATUS).data() == "failed"
    assert "is not allowed by the tool" in model.index(0, DETAIL).data()


def test_the_panel_shows_a_cycle_as_the_engine_refuses_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Calls that feed each other are failed with the cycle named; the rest of the refused plan is pending."""
    plan = [{"_tool": "a", "x": "†state.p", "_outputPath": "†state.q"},
            {"_tool": "b", "x": "†state.q", "_outputPath": "†state.p"},
            {"_tool": "c", "_output": 1, "_outputPath": "†state.r"}]
    model = CallsModel(Context([{"type": "plan", "plan": plan}]))
    assert [model.index(row, STATUS).data() for row in range(3)] == ["failed", "failed", "pending"]
    assert "form a cycle" in model.index(0, DETAIL).data()


def test_the_call_as_it_ran_shows_what_its_activity_printed(qtbot) -> None:  # type: ignore[no-untyped-def]
    """An output whose `_run` kept the activity's stdout and stderr (its worker's capture): the "Ran"
    tab shows both."""
    call = {"_tool": "shout", "_outputPath": "†state.a"}
    context = Context([{"type": "plan", "plan": [call]},
                       {"type": "data", "kind": "state", "data": {"a": 1}, "_call": call, "_outputPath": "†state.a",
                        "_run": {"call": 0, "seconds": 0.01, "stdout": "LOUD\n", "stderr": "careful\n"}}])
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    model = CallsModel(context)
    inspector.show_call(context, model.getItem(0), model.recorded(0))
    text = inspector.ran.toPlainText()
    assert "printed to stdout:\nLOUD" in text
    assert "printed to stderr:\ncareful" in text


def test_the_output_audit_says_when_the_activity_printed() -> None:
    """The Output audit's `_run` line points at what the activity printed (kept in `_run.stdout`/`stderr`)."""
    from contextdeck.gui._inspector._audit import run_summary

    assert "printed to stdout and stderr" in run_summary({"seconds": 0.1, "stdout": "a", "stderr": "b"})
    assert "printed" not in run_summary({"seconds": 0.1})


def test_the_calls_columns_fit_their_widest_cells_measuring_one_cell_a_column(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The number, tool and status columns are as wide as Qt's own fit makes them (`resizeColumnToContents`), the
    widest tool name coming last; the style is asked for the size of the widest cell of each, not of every cell
    (50 calls of two tools, in two statuses: three measures, not 150)."""
    from PySide6.QtWidgets import QStyledItemDelegate

    from contextdeck.gui._inspector._calls import NUMBER, TOOL

    tools = {"type": "tool", "tool": {"a": {"type": "object"}, "a_much_longer_tool_name": {"type": "object"}}}
    calls = [{"_tool": "a", "_outputPath": f"†state.x{n}", **({"v": "†state.nowhere"} if n % 2 else {})}
             for n in range(49)]
    calls.append({"_tool": "a_much_longer_tool_name", "_outputPath": "†state.last"})
    context = Context([tools, {"type": "plan", "plan": calls}, {"type": "state", "data": {"x0": 1}}])
    asked: list[int] = []

    class Counting(QStyledItemDelegate):
        def sizeHint(self, option, index):  # type: ignore[no-untyped-def]
            asked.append(index.column())
            return super().sizeHint(option, index)

    model = CallsModel(context)
    view = CallsView(model)
    qtbot.addWidget(view)
    view.setItemDelegate(Counting(view))
    view.resize(900, 400)
    view.show()
    model.beginResetModel()  # (as a new plan does: the view fits its columns)
    model.endResetModel()
    fitted = {column: view.columnWidth(column) for column in (NUMBER, TOOL, STATUS)}
    assert sorted(asked) == [NUMBER, TOOL, STATUS]
    assert len({model.index(row, STATUS).data() for row in range(50)}) == 2
    for column in (NUMBER, TOOL):
        view.resizeColumnToContents(column)
    qt_fit = {NUMBER: view.columnWidth(NUMBER), TOOL: view.columnWidth(TOOL),
              STATUS: max(view.sizeHintForColumn(STATUS), 150) + 24}
    assert fitted == qt_fit


def test_the_calls_group_prefixes_are_read_once_for_every_row(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A group's members show its pattern before the tool (`all ▸ `), the other calls nothing; the prefix of every
    row is found in one pass over the plan's units, not one a row (a 500-call plan's tool column, read whole to fit
    it, took 13 ms)."""
    tools = {"type": "tool", "tool": {"a": {"type": "object"}}}
    plan = [{"all": [{"_tool": "a"}, {"_tool": "a"}]}, *({"_tool": "a"} for _ in range(40))]
    model = CallsModel(Context([tools, {"type": "plan", "plan": plan}]))
    passes: list[int] = []

    class Counted(list):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            passes.append(1)
            return super().__iter__()

    execution = model.execution
    assert execution is not None
    execution.units = Counted(execution.units)
    prefixes = [model.group_prefix(row) for row in range(model.rowCount())]
    assert prefixes[:2] == ["all ▸ ", "all ▸ "]
    assert set(prefixes[2:]) == {""}
    assert len(passes) == 1


def test_a_row_s_painted_answers_are_kept_until_the_row_changes(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """What a paint asks of a row (its text, icons, colour) is made once and read again by the next paint; a
    breakpoint set on the row, one on its tool, or a new status shows at once."""
    from PySide6.QtGui import QIcon

    from contextdeck.gui._inspector._calls import TOOL

    context, solution = refund
    model = CallsModel(context, solution)
    statuses: list[int] = []
    real = model.status_text
    model.status_text = lambda row: statuses.append(row) or real(row)  # type: ignore[method-assign]

    def gutter(row: int) -> int:
        icon = model.index(row, GUTTER).data(Qt.ItemDataRole.DecorationRole)
        assert isinstance(icon, QIcon)
        return icon.cacheKey()

    colour = model.index(3, STATUS).data(Qt.ItemDataRole.ForegroundRole)
    for _paint in range(2):
        assert model.index(3, STATUS).data() == "awaiting approval"
        assert "approvals" in model.index(3, DETAIL).data()
    assert statuses == [3]
    empty = gutter(3)
    model.set_breakpoint(3, True)
    assert gutter(3) != empty
    model.set_breakpoint(3, False)
    assert gutter(3) == empty
    model.toggle_tool_breakpoint(model.plan(3).tool_name or "")
    assert gutter(3) != empty
    assert model.index(3, TOOL).data() == model.plan(3).tool_name
    context.append({"type": "state", "data": {"approvals": {"refund": "lead"}}})
    qtbot.waitUntil(lambda: model.index(3, STATUS).data() == "waiting for output")
    assert model.index(3, STATUS).data(Qt.ItemDataRole.ForegroundRole) != colour


def test_a_done_call_waits_for_no_output(qtbot, tmp_path: Path, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """An imported exchange's get_weather call, its tool result recorded, is done: the inspector's line names no
    wait. The refund's issueRefund, approved, is latent and waits for its output: the line says so."""
    weather = {"name": "get_weather", "description": "Weather now",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    asked = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]}
    exchange = {"request": {"model": "gpt-4o-mini", "tools": [{"type": "function", "function": weather}], "messages": [
        {"role": "user", "content": "Weather in Oslo?"}, asked,
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 3}'}]},
        "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": "3 degrees."}}]}}
    source = tmp_path / "exchange.json"
    source.write_text(json.dumps(exchange))
    document = import_trace(source)[0].document
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    model = CallsModel(document.context, document.solution)
    assert model.status(0) is Status.DONE
    inspector.show_call(document.context, model.getItem(0), model.recorded(0))
    assert inspector.summary.text().startswith("<b>latent</b> · tool defined at message #")
    assert "waits for" not in inspector.summary.text()
    context, solution = refund
    model = CallsModel(context, solution)
    context.append({"type": "state", "data": {"approvals": {"refund": "lead"}}})
    qtbot.waitUntil(lambda: model.status(3) is Status.WAITING_FOR_OUTPUT)
    inspector.show_call(context, model.getItem(3))
    assert "waits for an output typed in or given by an LLM" in inspector.summary.text()
