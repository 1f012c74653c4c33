"""`analyse_call`: the one analysis of a call (tool, mode, parameters with sources, destinations, problems,
status) that the command line and every panel of the window read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextdeck.engine import (
    Activities,
    CallAnalysis,
    Context,
    Execution,
    Mode,
    Status,
    analyse_call,
    load_document,
    scoped_indices,
)


def analyses(context: Context, solution: Any = None, activities: Activities | None = None) -> list[CallAnalysis]:
    execution = Execution(context, solution, activities=activities)
    return [analyse_call(execution, i) for i in range(len(execution.plans))]


def refund(examples: Path) -> list[CallAnalysis]:
    document = load_document(examples / "refund_workflow.json")
    return analyses(document.context, document.solution)


def test_parameters_resolve_with_their_sources(examples: Path) -> None:
    """issueRefund's orderId and amount resolve from the input message; approvedBy names its missing path."""
    issue = refund(examples)[3]
    params = {p.name: p for p in issue.parameters}
    assert params["orderId"].resolved == "A-1042"
    assert params["amount"].resolved == 89.5
    assert params["orderId"].sources == (1,)
    assert params["approvedBy"].missing == ("†state.approvals.refund",)
    assert issue.status is Status.AWAITING_APPROVAL
    assert issue.waiting_for == ("†state.approvals.refund",)


def test_escaped_dagger_is_a_literal(examples: Path) -> None:
    """A `††` string is shown resolved with one dagger removed, and reads nothing."""
    notify = refund(examples)[4]
    message = next(p for p in notify.parameters if p.name == "message")
    assert message.resolved == "†refund issued for order A-1042"
    assert message.lookups == ()
    assert notify.ephemeral


def test_a_blocked_call_names_the_missing_path() -> None:
    """A call reading a path nothing writes is blocked on it; an approval path is 'awaiting approval'."""
    context = Context([{"type": "plan", "plan": [{"_tool": "t", "x": "†state.nothing.here"},
                                                 {"_tool": "t", "x": "†state.approvals.go"}]}])
    first, second = analyses(context)
    assert first.status is Status.BLOCKED
    assert first.waiting_for == ("†state.nothing.here",)
    assert second.status is Status.AWAITING_APPROVAL


def test_structural_problems_fail_the_call_before_it_runs() -> None:
    """A malformed expression, a forbidden output path and a bad method are failures, each where it is."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {
        "_outputPath": {"type": "string", "const": "†state.fixed"}}}}}
    context = Context([tool, {"type": "plan", "plan": [
        {"_tool": "t", "x": "†state..a"},
        {"_tool": "t", "_outputPath": "†state.other"},
        {"_tool": "t", "_outputMethod": "append"},
        {"_tool": "t"},
    ]}])
    calls = analyses(context)
    assert [c.status for c in calls] == [Status.FAILED, Status.FAILED, Status.FAILED, Status.WAITING_FOR_OUTPUT]
    assert calls[0].problems[0].where == "$.x"
    assert calls[0].parameters[0].error is not None
    assert "prescribes" in calls[1].problems[0].message
    assert calls[2].problems[0].where == "$._outputMethod"
    assert calls[3].plan.output_path == "†state.fixed"
    assert calls[3].plan.prescribed
    assert calls[3].needs_output


def test_an_output_path_the_tool_schema_refuses_fails_in_the_analysis_as_in_execution() -> None:
    """Regression: a tool allowing only `enum ["†state.a"]` and a call writing †state.b is failed, not ready."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {
        "_outputPath": {"enum": ["†state.a"]}}}}}
    context = Context([tool, {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.b", "_output": 1}]}])
    execution = Execution(context)
    (call,) = analyses(context)
    assert call.status is Status.FAILED
    assert execution.state(0).status is Status.FAILED
    assert call.problems[0].where == "$._outputPath"
    assert "not allowed by the tool" in call.problems[0].message


def test_parameter_schema_problems_with_values_now_are_warnings() -> None:
    """Resolved parameters are judged against the schema as warnings; a missing one is not judged yet."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "required": ["n", "m"],
                                           "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}}}}
    context = Context([{"type": "state", "data": {"n": "seven"}}, tool,
                       {"type": "plan", "plan": [{"_tool": "t", "n": "†state.n", "m": "†state.later"}]}])
    (call,) = analyses(context)
    assert [p.where for p in call.warnings] == ["$.n"]
    assert call.problems == ()
    assert call.status is Status.BLOCKED


def test_literal_parameters_that_break_the_schema_fail_before_running() -> None:
    """Parameters without references are checked before anything runs (SPEC 6.7): a problem, not a warning."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    (call,) = analyses(Context([tool, {"type": "plan", "plan": [{"_tool": "t", "n": "x"}]}]))
    assert call.status is Status.FAILED
    assert call.problems[0].type == "parameters"
    assert call.warnings == ()


def test_a_cycle_fails_its_calls_and_leaves_the_others_pending() -> None:
    """Calls that feed each other are refused with the cycle named; the plan runs nothing else."""
    plan = [{"_tool": "a", "x": "†state.p", "_outputPath": "†state.q"},
            {"_tool": "b", "x": "†state.q.deep", "_outputPath": "†state.p"},
            {"_tool": "c", "_outputPath": "†state.r", "_output": 1}]
    calls = analyses(Context([{"type": "plan", "plan": plan}]))
    assert [c.status for c in calls] == [Status.FAILED, Status.FAILED, Status.PENDING]
    assert calls[0].problems[0].type == "cycle"
    assert "form a cycle" in calls[1].problems[0].message


def test_mode_follows_activities(examples: Path) -> None:
    """A tool is explicit when an activity is registered under its name; else latent."""
    document = load_document(examples / "refund_workflow.json")
    activities = Activities()
    activities.add(lambda call, tool, context: None, "notifyCustomer")
    calls = analyses(document.context, document.solution, activities)
    assert calls[4].mode is Mode.EXPLICIT
    assert calls[4].fire_and_forget
    assert calls[0].mode is Mode.LATENT


def test_scopes_pick_kinds_global_or_of_the_instance() -> None:
    """_scopes picks data messages of those kinds, global or of the call's instance."""
    context = Context([{"type": "input", "input": 1}, {"type": "input", "_instance": "a", "input": 2},
                       {"type": "input", "_instance": "b", "input": 3}, {"type": "state", "data": {}},
                       {"type": "plan", "plan": [{"_tool": "t", "_instance": "a", "_scopes": ["input"]},
                                                 {"_tool": "t", "_instance": "a"}]}])
    scoped, unscoped = analyses(context)
    assert scoped_indices(context, scoped.plan.scopes, scoped.instance) == [0, 1]
    assert scoped_indices(context, unscoped.plan.scopes, unscoped.instance) == []


def test_pattern_groups_are_numbered_in_plan_order() -> None:
    """The members of an `all` group are calls of their own, numbered in plan order."""
    context = Context([{"type": "plan", "plan": [{"_tool": "a"}, {"all": [{"_tool": "b"}, {"_tool": "c"}]}]}])
    assert [c.tool_name for c in analyses(context)] == ["a", "b", "c"]


def test_the_resolved_call_keeps_what_is_missing_as_written(examples: Path) -> None:
    """The call as it will run: references replaced by their values, missing ones left as written."""
    resolved = refund(examples)[3].resolved_call
    assert resolved["orderId"] == "A-1042"
    assert resolved["approvedBy"] == "†state.approvals.refund"


@pytest.mark.parametrize("name", ["refund_workflow", "seed_variables", "moderation_batch", "seed_output"])
def test_statuses_are_the_executions(examples: Path, name: str) -> None:
    """The analysis reports the execution's status and waits for every call of the bundled examples."""
    document = load_document(examples / f"{name}.json")
    execution = Execution(document)
    for state in execution.states:
        call = analyse_call(execution, state.index)
        assert (call.status, call.waiting_for) == (state.status, state.waiting_for)


def test_tools_and_plans_follow_edits_of_the_context() -> None:
    """The tools and the last plan are found again after inserts, replaces, moves and removes."""
    context = Context([{"type": "plan", "plan": [{"_tool": "t", "_output": 1, "_outputPath": "†state.a"}]}])
    assert analyses(context)[0].tool is None
    context.insert(0, {"type": "tool", "tool": {"t": {"type": "object"}}})
    assert analyses(context)[0].tool is not None
    context.replace(0, {"type": "tool", "tool": {"u": {"type": "object"}}})
    assert analyses(context)[0].tool is None
    context.append({"type": "plan", "plan": [{"_tool": "u"}]})
    assert analyses(context)[0].tool_name == "u"
    context.move(2, 1)
    assert analyses(context)[0].tool_name == "t"
    context.remove(2)
    assert analyses(context)[0].tool_name == "u"
