"""Tools, modes and errors (SPEC 6.1–6.3, 6.7): structural errors before running, runtime errors as messages."""

import asyncio
import threading

import pytest
from exec_support import execute, registry

from contextdeck.engine import Activities, Context, Execution, Mode, SolutionRefused, Status, fixed_clock, validate

NOW = "2026-01-01T00:00:00Z"
CLOCK = fixed_clock(NOW)


def tool(name, **schema):
    return {"type": "tool", "tool": {name: {"type": "object", **schema}}}


def errors(context):
    return [m["data"]["error"] for m in context.messages if m["type"] == "error"]


# -- tools and modes ------------------------------------------------------------------------------

def test_tool_activity_property_makes_the_call_explicit() -> None:
    """A tool schema's top-level `_activity` names the activity that runs its calls."""
    context = Context([{"type": "tool", "tool": {"greetUser": {"type": "object", "_activity": "greeter"}}}])
    execution = Execution(context, {"calls": [{"_tool": "greetUser"}]}, activities=registry(greeter=lambda *a: 1))
    assert execution.plans[0].mode is Mode.EXPLICIT
    assert execution.plans[0].activity.name == "greeter"


def test_same_name_activity_makes_the_call_explicit() -> None:
    """An activity registered under the tool's name runs it, with or without a tool message."""
    execution = Execution(Context([]), {"calls": [{"_tool": "greetUser"}]}, activities=registry(greetUser=lambda *a: 1))
    assert execution.plans[0].mode is Mode.EXPLICIT


def test_unknown_tool_is_latent_not_an_error() -> None:
    """A call to a tool nothing defines is latent: its `_output` is written and no error appears."""
    context, execution, _ = execute([], [{"_tool": "nobodyKnows", "_outputPath": "†state.a", "_output": 3}])
    assert execution.plans[0].mode is Mode.LATENT
    assert context.resolve("†state.a").value == 3
    assert errors(context) == []


def test_tool_naming_an_unloaded_activity_is_latent_and_runs_no_code() -> None:
    """A document cannot run code: `_activity` naming nothing loaded runs nothing of that name; the call is latent
    (003's fallback), so its `_output` is its result."""
    context, execution, _ = execute([tool("t", _activity="os.system")], [{"_tool": "t", "_output": 1,
                                                                           "_outputPath": "†state.r"}])
    assert (execution.plans[0].mode, context.resolve("†state.r").value, errors(context)) == (Mode.LATENT, 1, [])


def test_an_activity_name_that_is_no_string_is_a_structural_error() -> None:
    """`_activity: 5` names no activity (a string, or "" for latent): the call fails, nothing runs."""
    context, execution, _ = execute([tool("t", _activity=5)], [{"_tool": "t", "_output": 1}])
    message = "the tool's _activity 5 is not an activity's name (a string; \"\" for latent)"
    assert errors(context) == [{"type": "activity", "message": message}]
    assert execution.state(0).status is Status.FAILED


def test_latest_tool_definition_wins() -> None:
    """Two definitions of a name: the later one's schema validates the call."""
    messages = [tool("t", properties={"n": {"type": "string"}}), tool("t", properties={"n": {"type": "number"}})]
    context, _, _ = execute(messages, [{"_tool": "t", "n": 5, "_outputPath": "†state.n", "_output": 5}])
    assert errors(context) == []
    assert context.resolve("†state.n").value == 5


def test_context_tool_wins_over_a_code_tool() -> None:
    """Tools registered in code come first; the context's definition of the same name replaces it."""
    code = {"t": {"type": "object", "properties": {"n": {"type": "string"}}}}
    messages = [tool("t", properties={"n": {"type": "number"}})]
    context, _, _ = execute(messages, [{"_tool": "t", "n": 5}], tools=code)
    assert errors(context) == []


def test_code_tool_validates_calls() -> None:
    """A tool registered in code is a known tool: its schema checks the parameters."""
    code = {"t": {"type": "object", "properties": {"n": {"type": "string"}}}}
    context, _, _ = execute([], [{"_tool": "t", "n": 5}], tools=code)
    assert errors(context)[0]["type"] == "parameters"


# -- output paths from the tool schema ------------------------------------------------------------

LOOKUP = tool("lookupOrder", properties={"_outputPath": {"type": "string", "const": "†state.order"}})


def test_prescribed_path_is_used_when_the_call_has_none() -> None:
    """`const` gives the destination; `_call` stays as written, `_outputPath` names the concrete one."""
    call = {"_tool": "lookupOrder", "_output": {"id": 1}}
    context, _, _ = execute([LOOKUP], [call])
    assert context[1]["_outputPath"] == "†state.order"
    assert context[1]["_call"] == call
    assert context.resolve("†state.order.id").value == 1


def test_an_activity_is_told_the_prescribed_path() -> None:
    """003, SPEC 6.2: the activity's `call` holds the tool's `const` path when the call gives none, so that it can
    pick a branch of `a || b`; the `_call` written stays as written."""
    told = []

    def route(call, tool, context):
        told.append(call.get("_outputPath"))
        return {"type": "data", "kind": "state", "data": {"miss": {"why": "none"}}}

    routed = tool("route", properties={"_outputPath": {"type": "string", "const": "†state.hit || †state.miss"}})
    context, execution, _ = execute([routed], [{"_tool": "route"}], registry(route=route))
    assert told == ["†state.hit || †state.miss"]
    assert context.resolve("†state.miss.why").value == "none"
    assert context[1]["_call"] == {"_tool": "route"}
    assert execution.state(0).status is Status.DONE


def test_prescribed_path_refuses_another_path() -> None:
    """A call whose path differs from the tool's `const` is a structural error and writes nothing."""
    context, _, _ = execute([LOOKUP], [{"_tool": "lookupOrder", "_outputPath": "†state.other", "_output": 1}])
    assert [m["type"] for m in context.messages[1:]] == ["error"]
    assert errors(context)[0]["type"] == "outputPath"
    assert "†state.order" in errors(context)[0]["message"]


def test_dynamic_path_must_match_the_pattern() -> None:
    """`pattern`: a matching path is written, one that does not match is refused."""
    check = tool("check", properties={"_outputPath": {"type": "string", "pattern": "^†state\\."}})
    calls = [{"_tool": "check", "_outputPath": "†state.ok", "_output": 1},
             {"_tool": "check", "_outputPath": "†data.no", "_output": 1}]
    context, execution, _ = execute([check], calls)
    assert context.resolve("†state.ok").value == 1
    assert execution.state(1).status is Status.FAILED
    assert errors(context)[0]["type"] == "outputPath"


# -- structural errors ------------------------------------------------------------------------------

def test_bad_expression_in_parameters_is_structural() -> None:
    """A malformed reference fails its call before anything runs, naming where and the position."""
    ran = []
    calls = [{"_tool": "t", "x": "†state..a"}, {"_tool": "u", "_outputPath": "†state.u"}]
    context, _execution, _ = execute([], calls, registry(t=lambda *a: ran.append("t"), u=lambda *a: ran.append("u")))
    assert ran == ["u"]
    error = errors(context)[0]
    assert error["type"] == "expression"
    assert error["message"].startswith("$.x:")
    assert "position" in error["message"]


def test_bad_output_path_expression_is_structural() -> None:
    """A malformed `_outputPath` is refused before running."""
    context, execution, _ = execute([], [{"_tool": "t", "_outputPath": "†a ||", "_output": 1}])
    assert errors(context)[0]["type"] == "expression"
    assert execution.state(0).status is Status.FAILED


def test_bad_output_method_is_structural() -> None:
    """An unknown `_outputMethod` is refused and names the accepted ones."""
    context, _, _ = execute([], [{"_tool": "t", "_outputPath": "†state.a", "_outputMethod": "append", "_output": 1}])
    assert errors(context)[0]["type"] == "outputMethod"
    assert "'append'" in errors(context)[0]["message"]


def test_invalid_literal_parameters_fail_before_anything_runs() -> None:
    """Parameters without references are validated against a known tool before the tick starts."""
    schema = tool("pay", properties={"amount": {"type": "number", "minimum": 0}}, required=["amount"])
    execution = Execution(Context([schema]), {"calls": [{"_tool": "pay", "amount": -5}]})
    assert execution.state(0).status is Status.FAILED
    assert "-5 is less than the minimum of 0" in execution.state(0).error["message"]


def test_parameters_are_validated_after_references_resolve() -> None:
    """A reference whose value breaks the schema fails the call with a parameters error, and it does not run."""
    ran = []
    schema = tool("pay", properties={"amount": {"type": "number"}})
    calls = [{"_tool": "pay", "amount": "†input.amount"}]
    context, _, _ = execute([schema, {"type": "input", "input": {"amount": "lots"}}], calls,
                            registry(pay=lambda *a: ran.append(1)))
    assert ran == []
    assert errors(context)[0]["type"] == "parameters"
    assert "$.amount" in errors(context)[0]["message"]


def test_a_latent_call_whose_parameters_break_the_schema_is_not_waited_for() -> None:
    """A latent call without `_output` whose resolved parameters break its tool fails on them when it is ready:
    nobody (person or model) is asked for an output it would refuse."""
    schema = tool("refund", properties={"approvedBy": {"type": "string"}})
    call = {"_tool": "refund", "approvedBy": "†state.approvals.refund", "_outputPath": "†state.refund"}
    context, execution, _ = execute([schema, {"type": "state", "approvals": {"refund": True}}], [call])
    assert execution.state(0).status is Status.FAILED
    assert errors(context)[0]["type"] == "parameters"
    assert "$.approvedBy" in errors(context)[0]["message"]


def test_a_latent_call_with_valid_parameters_waits_for_its_output() -> None:
    """The same call given a valid approver waits for its output; nothing is written meanwhile."""
    schema = tool("refund", properties={"approvedBy": {"type": "string"}})
    call = {"_tool": "refund", "approvedBy": "†state.approvals.refund", "_outputPath": "†state.refund"}
    context, execution, _ = execute([schema, {"type": "state", "approvals": {"refund": "Ana"}}], [call])
    assert execution.state(0).status is Status.WAITING_FOR_OUTPUT
    assert errors(context) == []


def test_meta_properties_are_not_parameters() -> None:
    """`required: ["_tool"]` and `additionalProperties: false` apply to parameters only, not `_` keys."""
    schema = tool("t", properties={"_tool": {"const": "t"}, "a": {"type": "number"}},
                  required=["_tool", "a"], additionalProperties=False)
    context, _, _ = execute([schema], [{"_tool": "t", "a": 1, "_reasoningForCall": "why", "_output": 1}])
    assert errors(context) == []


def _nested(depth, value=1):
    for _ in range(depth):
        value = [value]
    return value


def _holding_itself():
    call = {"_tool": "t"}
    call["p"] = call
    return call


@pytest.mark.parametrize(("solution", "place"), [
    ({"calls": [{"_tool": "t", "_outputPath": "†state.a", "_output": _nested(300)}]}, "solution.calls[0]._output[0]…"),
    ([{"all": [{"_tool": "t", "_output": 1}, {"_tool": "t", "p": _nested(260)}]}], "solution[0].all[1]…"),
    ({"calls": [{"_tool": "t", "p": {1, 2}}]}, "solution.calls[0].p"),
    ({"calls": [_holding_itself()]}, "solution.calls[0].p"),
])
def test_a_solution_from_code_the_document_could_not_hold_is_refused_whole(solution, place) -> None:
    """A solution given from code whose call no plan message could hold (the run quotes a call in its error
    message, `data.call`) is refused when the run is made, naming the call's field: nothing runs, nothing is
    appended, as a document and a turn refuse it (never a ContentError at the error message's append)."""
    context = Context([tool("t")])
    with pytest.raises(SolutionRefused) as refused:
        Execution(context, solution)
    assert refused.value.problem.path == place
    assert "the document could not hold the call as a plan message" in refused.value.problem.reason
    assert len(context) == 1
    assert (place, refused.value.problem.reason) in [(d.path, d.reason) for d in validate(context, solution)]


def test_error_message_has_the_spec_shape() -> None:
    """A runtime exception becomes {"type":"error","data":{"call","error":{"type","message"}},"_date"}."""
    call = {"_tool": "boom", "_outputPath": "†state.a"}

    def boom(*args):
        raise KeyError("nope")

    context, execution, _ = execute([], [call], registry(boom=boom))
    [message] = context.messages
    audit = message.pop("_run")
    assert message == {"type": "error", "data": {"call": call, "error": {"type": "KeyError", "message": "'nope'"}},
                       "_date": NOW}
    assert (audit["call"], audit["started"], audit["inputs"]) == (0, NOW, {})
    assert audit["traceback"].startswith("Traceback")
    assert audit["traceback"].endswith("KeyError: 'nope'")
    assert execution.state(0).error == {"type": "KeyError", "message": "'nope'"}


def test_errors_are_appended_when_the_tick_ends() -> None:
    """A fast failure's error message comes after the outputs of calls that finished later in the tick."""
    async def fails(*args):
        raise ValueError("fast")

    async def slow(*args):
        for _ in range(5):
            await asyncio.sleep(0)
        return "late"

    calls = [{"_tool": "fails", "_outputPath": "†state.a"}, {"_tool": "slow", "_outputPath": "†state.b"}]
    context, _, report = execute([], calls, registry(fails=fails, slow=slow))
    assert [m["type"] for m in context.messages] == ["data", "error"]
    assert report.errors == (context[1],)


# -- timeouts -------------------------------------------------------------------------------------

def test_async_activity_past_its_timeout_fails_and_others_finish() -> None:
    """A hanging async activity times out into an error; the other call still writes its output."""
    async def hang(*args):
        await asyncio.sleep(3600)

    activities = registry(ok=lambda *a: "fine")  # the default timeout: a busy machine cannot fail it
    activities.add(hang, "hang", timeout=0.05)
    calls = [{"_tool": "hang", "_outputPath": "†state.a"}, {"_tool": "ok", "_outputPath": "†state.b"}]
    context, execution, _ = execute([], calls, activities)
    assert context.resolve("†state.b").value == "fine"
    assert errors(context) == [{"type": "timeout", "message": "activity 'hang' did not finish within 0.05 s"}]
    assert execution.state(0).status is Status.FAILED


def test_hanging_sync_activity_never_blocks_the_tick() -> None:
    """A sync activity stuck in its thread times out; the tick ends and the thread's late result is dropped."""
    gate = threading.Event()

    def stuck(*args):
        gate.wait(10)
        return "too late"

    try:
        context, _execution, _ = execute([], [{"_tool": "stuck", "_outputPath": "†state.a"}],
                                        registry(stuck=stuck), timeout=0.05)
    finally:
        gate.set()
    assert errors(context)[0]["type"] == "timeout"
    assert not context.resolve("†state.a").found


def test_activity_timeout_overrides_the_default() -> None:
    """An activity registered with its own timeout uses it instead of the execution's."""
    async def hang(*args):
        await asyncio.sleep(3600)

    activities = Activities()
    activities.add(hang, "hang", timeout=0.01)
    context, _, _ = execute([], [{"_tool": "hang", "_outputPath": "†state.a"}], activities, timeout=60)
    assert errors(context)[0]["message"] == "activity 'hang' did not finish within 0.01 s"


def test_sync_activity_runs_off_the_event_loop_thread() -> None:
    """Sync activities run in a worker thread, so they cannot freeze the loop."""
    threads = []

    def where(*args):
        threads.append(threading.current_thread())
        return 1

    execute([], [{"_tool": "where", "_outputPath": "†state.a"}], registry(where=where))
    assert threads
    assert threads[0] is not threading.main_thread()


def test_an_in_process_activity_that_exits_fails_its_call_as_in_a_worker() -> None:
    """SPEC 6.7: a runtime error is the activity's exception, by its own name. `sys.exit` or a KeyboardInterrupt
    raised by an in-process activity, sync or async, is its call's `SystemExit`/`KeyboardInterrupt` error, as a
    worker process reports it; the run goes on (it neither ends the program nor loses what the run made)."""
    def leave(call, tool, context):
        raise SystemExit(3)

    async def leave_async(call, tool, context):
        raise SystemExit(4)

    async def interrupt(call, tool, context):
        raise KeyboardInterrupt

    calls = [{"_tool": name, "_outputPath": f"†state.{name}"} for name in ("leave", "leave_async", "interrupt")]
    context, execution, _ = execute([], [*calls, {"_tool": "ok", "_outputPath": "†state.ok"}], registry(
        leave=leave, leave_async=leave_async, interrupt=interrupt, ok=lambda call, tool, context: 1))
    assert [execution.state(index).error for index in range(3)] == [
        {"type": "SystemExit", "message": "3"}, {"type": "SystemExit", "message": "4"},
        {"type": "KeyboardInterrupt", "message": "KeyboardInterrupt"}]
    assert context.resolve("†state.ok").value == 1


@pytest.mark.parametrize(
    ("options", "error", "reason"),
    [
        ({"timeout": 0}, ValueError, "timeout must be a positive number of seconds, got 0"),
        ({"timeout": -1.0}, ValueError, "timeout must be a positive number of seconds, got -1.0"),
        ({"timeout": float("nan")}, ValueError, "timeout must be a positive number of seconds, got nan"),
        ({"timeout": "5"}, TypeError, "timeout must be a number of seconds, got str '5'"),
        ({"clock": NOW}, TypeError, "clock must be a function returning the date, got str"),
        ({"approver": True}, TypeError, "approver must be a function of a call's state, or None; got bool"),
    ],
)
def test_a_run_made_with_an_unusable_option_is_refused_before_any_call(options, error, reason) -> None:
    """A timeout that is not a positive number of seconds, or a clock or approver that is not a function, would fail
    every call with an error message written into the document: the Execution refuses it, and nothing is written."""
    context = Context([tool("t")])
    activities = registry(t=lambda call, tool, context: 1)
    with pytest.raises(error, match=reason):
        Execution(context, {"calls": [{"_tool": "t", "_outputPath": "†state.r"}]}, activities=activities, **options)
    assert len(context) == 1


def test_an_activitys_own_timeout_is_checked_when_it_is_registered() -> None:
    """`Activities.add(fn, name, timeout=0)` is refused there, naming the activity."""
    with pytest.raises(ValueError, match="activity 't': timeout must be a positive number of seconds, got 0"):
        Activities().add(lambda call, tool, context: 1, "t", timeout=0)
