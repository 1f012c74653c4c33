"""The calls panel and the call inspector over the bundled examples, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from contextdeck.engine import Context, Execution, load_document
from contextdeck.gui._inspector._analysis import Mode, Status, analyse_calls, scoped_messages
from contextdeck.gui._inspector._call_inspector import RESOLVED, SOURCE, CallInspector
from contextdeck.gui._inspector._calls import DETAIL, GUTTER, STATUS, CallsModel, CallsView


@pytest.fixture
def refund(examples: Path) -> tuple[Context, object]:
    document = load_document(examples / "refund_workflow.json")
    return document.context, document.solution


def test_parameters_resolve_with_their_sources(refund: tuple[Context, object]) -> None:
    """issueRefund's orderId and amount resolve from the input message; approvedBy names its missing path."""
    context, solution = refund
    calls, plan_index = analyse_calls(context, solution)
    assert plan_index == 4
    issue = calls[3]
    params = {p.name: p for p in issue.params}
    assert params["orderId"].resolved == "A-1042"
    assert params["amount"].resolved == 89.5
    assert params["orderId"].sources == (1,)
    assert params["approvedBy"].missing == ("†state.approvals.refund",)
    assert issue.status is Status.AWAITING_APPROVAL


def test_escaped_dagger_is_a_literal(refund: tuple[Context, object]) -> None:
    """A `††` string is shown resolved with one dagger removed, and reads nothing."""
    context, solution = refund
    notify = analyse_calls(context, solution)[0][4]
    message = next(p for p in notify.params if p.name == "message")
    assert message.resolved == "†refund issued for order A-1042"
    assert message.lookups == ()
    assert notify.ephemeral


def test_blocked_call_names_the_missing_path() -> None:
    """A call reading a path nothing writes is blocked and names that path; an approval path is 'awaiting'."""
    context = Context([{"type": "plan", "plan": [{"_tool": "t", "x": "†state.nothing.here"},
                                                 {"_tool": "t", "x": "†state.approvals.go"}]}])
    calls, _ = analyse_calls(context)
    assert calls[0].status is Status.BLOCKED
    assert calls[0].missing == ("†state.nothing.here",)
    assert calls[1].status is Status.AWAITING_APPROVAL


def test_structural_problems_make_a_call_invalid() -> None:
    """A malformed expression, a forbidden output path and a bad method are reported where they are."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {
        "_outputPath": {"type": "string", "const": "†state.fixed"}}}}}
    context = Context([tool, {"type": "plan", "plan": [
        {"_tool": "t", "x": "†state..a"},
        {"_tool": "t", "_outputPath": "†state.other"},
        {"_tool": "t", "_outputMethod": "append"},
        {"_tool": "t"},
    ]}])
    calls, _ = analyse_calls(context)
    assert [c.status for c in calls] == [Status.INVALID, Status.INVALID, Status.INVALID, Status.WAITING_FOR_OUTPUT]
    assert calls[0].problems[0].where == "$.x"
    assert "prescribes" in calls[1].problems[0].message
    assert "append" in calls[2].problems[0].message
    assert calls[3].output_path == "†state.fixed"
    assert calls[3].prescribed


def test_schema_problems_judge_resolved_values() -> None:
    """Parameters are validated after resolution: a resolved wrong type is a problem, a missing one is not."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "required": ["n", "m"],
                                           "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}}}}
    context = Context([{"type": "state", "data": {"n": "seven"}}, tool,
                       {"type": "plan", "plan": [{"_tool": "t", "n": "†state.n", "m": "†state.later"}]}])
    (call,), _ = analyse_calls(context)
    assert [(p.where, p.severity) for p in call.problems] == [("$.n", "params")]
    assert call.status is Status.BLOCKED


def test_execution_mode_follows_activities(refund: tuple[Context, object]) -> None:
    """A tool is an activity when an activity is registered under its name; else latent."""
    context, solution = refund
    calls, _ = analyse_calls(context, solution, activities={"notifyCustomer"})
    assert calls[4].mode is Mode.ACTIVITY
    assert calls[4].fire_and_forget
    assert calls[0].mode is Mode.LATENT


def test_scopes_limit_the_context_to_kinds_and_instance() -> None:
    """_scopes picks data messages of those kinds, global or of the call's instance."""
    context = Context([{"type": "input", "input": 1}, {"type": "input", "_instance": "a", "input": 2},
                       {"type": "input", "_instance": "b", "input": 3}, {"type": "state", "data": {}}])
    assert scoped_messages(context, ["input"], "a") == [0, 1]
    assert scoped_messages(context, [], "a") == []


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
    calls, _ = analyse_calls(document.context, document.solution)
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    inspector.show_call(document.context, calls[1])
    assert inspector.destinations.destinations() == [(0, 0, "†state.user.verified"), (1, 0, "†state.user.failed")]
    inspector.show_call(document.context, calls[2])
    assert inspector.destinations.destinations() == [(0, 0, "†state.user.summary"), (0, 1, "†state.audit.summary")]


def test_a_reader_waits_for_the_call_that_writes_its_path(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """checkEligibility reads †state.order, which lookupOrder writes: it is blocked on it until that call is done."""
    context, solution = refund
    model = CallsModel(context, solution)
    assert model.status(2) is Status.BLOCKED
    assert model.getItem(2).missing == ("†state.order",)
    assert [(e.source, e.target, e.paths) for e in model.graph.edges] == [(0, 2, ("†state.order",))]


def test_pattern_groups_are_numbered_like_the_engine() -> None:
    """The members of an `all` group are calls of their own, numbered in plan order."""
    context = Context([{"type": "plan", "plan": [{"_tool": "a"}, {"all": [{"_tool": "b"}, {"_tool": "c"}]}]}])
    calls, _ = analyse_calls(context)
    assert [c.tool for c in calls] == ["a", "b", "c"]


@pytest.mark.parametrize("name", ["refund_workflow", "seed_variables", "moderation_batch", "seed_output"])
def test_panel_statuses_agree_with_the_engine(qtbot, examples: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """Before anything runs, the panel's statuses and waited-for paths are the engine's own."""
    document = load_document(examples / f"{name}.json")
    model = CallsModel(document.context, document.solution)
    execution = Execution(document)
    assert [str(model.status(i)) for i in range(model.rowCount())] == [str(s.status) for s in execution.states]
    for state in execution.states:
        if state.waiting_for:
            assert model.getItem(state.index).missing == state.waiting_for


def test_a_parameter_problem_is_marked_on_its_row(qtbot, refund: tuple[Context, object]) -> None:  # type: ignore[no-untyped-def]
    """checkEligibility's order resolves to null, which its schema refuses: the row says so in its tooltip."""
    context, solution = refund
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    inspector.show_call(context, analyse_calls(context, solution)[0][2])
    row = inspector.source_item("order")
    assert row is not None
    assert row.text(RESOLVED).startswith("⚠ ")
    assert "is not of type 'object'" in row.toolTip(RESOLVED)
    assert not inspector.problems.isHidden()
