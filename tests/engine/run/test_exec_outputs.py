"""Writing results (SPEC 6.5–6.6, 6.12): one audited output message per destination, with the seeds' examples."""

import asyncio
import json

import exec_support as support
import pytest
from exec_support import registry

from contextdeck.engine import Context, Document, Execution, Loop, LoopStatus, Status, digest, fixed_clock, validate

NOW = "2025-10-26T12:00:00Z"
CLOCK = fixed_clock(NOW)


def execute(messages, calls, activities=None, **options):
    return support.execute(messages, calls, activities, clock=CLOCK, **options)


USER = {"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}}
UPDATE = {"_tool": "updateUserStatus", "newStatus": "inactive", "_outputPath": "†data.user.status"}


def test_update_user_status_appends_the_seed_output_message() -> None:
    """Seed 000: the appended message wraps the value at the path and carries _call, _date and _outputPath."""
    context, _, _ = execute([USER], [UPDATE], registry(updateUserStatus=lambda call, tool, ctx: call["newStatus"]),
                            timer=lambda: 0.0)
    assert context[1] == {
        "type": "data",
        "kind": "data",
        "data": {"user": {"status": "inactive"}},
        "_call": UPDATE,
        "_date": NOW,
        "_outputPath": "†data.user.status",
        "_run": {"call": 0, "started": NOW, "digest": digest({"newStatus": "inactive"}),
                 "inputs": {"newStatus": "inactive"}, "result": "inactive", "seconds": 0.0},
    }


def test_update_user_status_resolves_as_the_seed_says() -> None:
    """After the write, status comes from the output, name from the first message, user from both."""
    context, _, _ = execute([USER], [UPDATE], registry(updateUserStatus=lambda call, tool, ctx: call["newStatus"]))
    status = context.resolve("†data.user.status")
    assert (status.value, status.sources) == ("inactive", (1,))
    assert context.resolve("†data.user.name").value == "Alex"
    user = context.resolve("†data.user")
    assert (user.value, user.sources) == ({"name": "Alex", "status": "inactive"}, (0, 1))


def test_call_is_recorded_as_written_with_references_unresolved() -> None:
    """`_call` keeps the `†` references; the activity received their values."""
    seen = []
    call = {"_tool": "greetUser", "userName": "†input.userName", "_outputPath": "†state.greeting"}

    def greet(call, tool, ctx):
        seen.append(call["userName"])
        return "Hello, " + call["userName"]

    context, _, _ = execute([{"type": "input", "input": {"userName": "Maya"}}], [call], registry(greetUser=greet))
    assert seen == ["Maya"]
    assert context[-1]["_call"] == call
    assert context.resolve("†state.greeting").value == "Hello, Maya"


def test_fan_out_writes_the_same_value_to_each_destination() -> None:
    """`a && b` (generateSummary) appends one message per destination, both holding the value."""
    call = {"_tool": "generateSummary", "text": "Long body",
            "_outputPath": "†state.user.summary && †state.audit.summary"}
    context, _, _ = execute([], [call], registry(generateSummary=lambda c, t, x: "short"))
    assert [m["_outputPath"] for m in context.messages] == ["†state.user.summary", "†state.audit.summary"]
    assert context.resolve("†state.user.summary").value == "short"
    assert context.resolve("†state.audit.summary").value == "short"
    assert context[0]["data"] == {"user": {"summary": "short"}}


VERIFY = {"_tool": "verifyUser", "userId": "perfect-stranger",
          "_outputPath": "†state.user.verified || †state.user.failed"}


def test_branch_plain_value_goes_to_the_first_alternative() -> None:
    """`a || b` with a plain returned value writes `a` only."""
    context, _, _ = execute([], [VERIFY], registry(verifyUser=lambda c, t, x: True))
    assert len(context) == 1
    assert context.resolve("†state.user.verified").value is True
    assert not context.resolve("†state.user.failed").found


def test_branch_activity_picks_the_second_by_returning_a_data_message() -> None:
    """A returned data message is appended as is, with the audit metadata and the branch it fills."""
    def verify(call, tool, ctx):
        return {"type": "state", "data": {"user": {"failed": {"reason": "unknown user"}}}}

    context, _, _ = execute([], [VERIFY], registry(verifyUser=verify))
    message = context[0]
    assert message["type"] == "state"
    assert message["_outputPath"] == "†state.user.failed"
    assert (message["_call"], message["_date"]) == (VERIFY, NOW)
    assert context.resolve("†state.user.failed.reason").value == "unknown user"
    assert not context.resolve("†state.user.verified").found


def test_a_returned_role_and_content_message_is_the_message_its_content_is() -> None:
    """001's `{role, content: {type, ...}}` returned by an activity is a data message (it was taken as a plain
    value and written whole at the first branch): its content is appended in the typed form, audited by the
    engine, at the branch its data fills; one whose content is not data is an output error, as a typed one."""
    def verify(call, tool, ctx):
        return {"role": "assistant", "_outputPath": "†state.user.verified",
                "content": {"type": "state", "data": {"user": {"failed": {"reason": "unknown user"}}},
                            "_call": {"_tool": "someoneElse"}}}

    context, execution, _ = execute([], [VERIFY], registry(verifyUser=verify))
    (message,) = context.messages
    assert {key: value for key, value in message.items() if key != "_run"} == {
        "type": "state", "data": {"user": {"failed": {"reason": "unknown user"}}}, "_call": VERIFY, "_date": NOW,
        "_outputPath": "†state.user.failed"}
    assert context.resolve("†state.user.failed.reason").value == "unknown user"
    assert not context.resolve("†state.user.verified").found
    assert execution.state(0).status is Status.DONE
    text = {"role": "assistant", "content": {"type": "text", "text": "verified"}}
    context, execution, _ = execute([], [VERIFY], registry(verifyUser=lambda c, t, x: text))
    assert context.resolve("†state.user.failed").value == {  # an output failure, in the plan's error branch (012)
        "type": "output", "message": "the returned message of type 'text' is not a data message"}
    assert execution.state(0).status is Status.FAILED
    alone = {**VERIFY, "_outputPath": "†state.user.verified"}  # no branch for it: an error message
    context, _, _ = execute([], [alone], registry(verifyUser=lambda c, t, x: text))
    assert context[0]["data"]["error"]["message"] == "the returned message of type 'text' is not a data message"
    failed = {"type": "error", "data": {"call": VERIFY, "error": {"type": "activity", "message": "no"}}}
    context, execution, _ = execute([], [alone], registry(verifyUser=lambda c, t, x: failed))
    assert context[0]["data"]["error"]["message"] == (  # it fails by raising: the engine's error names the call
        "the returned error message is not written: an activity fails its call by raising an exception, and the "
        "engine writes the error message with the call that failed")
    assert execution.state(0).status is Status.FAILED
    untyped = {"role": "assistant", "content": {"verified": True}}  # no typed content: a plain value
    context, _, _ = execute([], [VERIFY], registry(verifyUser=lambda c, t, x: untyped))
    assert context.resolve("†state.user.verified").value == untyped


def test_a_returned_object_with_a_type_key_is_a_message_and_its_error_says_so() -> None:
    """A plain object with a `type` key returned as a value (`{"type": "rain"}`) is read as a data message (SPEC
    6.4); filling no destination, it is an output error that says why and shows the message writing a value."""
    call = {"_tool": "weather", "_outputPath": "†state.today.weather"}
    context, execution, _ = execute([], [call], registry(weather=lambda c, t, x: {"type": "rain", "mm": 3}))
    assert context[0]["data"]["error"] == {"type": "output", "message": (
        "the returned ¶rain message fills none of the destinations '†state.today.weather' (a result with a string "
        "'type' is read as a message, SPEC 6.4: to write an object with a 'type' key as a value, return it in a data "
        'message, e.g. {"type": "data", "kind": "state", "data": {"today": {"weather": ...}}})')}
    assert execution.state(0).status is Status.FAILED
    wrapped = {"type": "data", "kind": "state", "data": {"today": {"weather": {"type": "rain", "mm": 3}}}}
    context, _, _ = execute([], [call], registry(weather=lambda c, t, x: wrapped))
    assert context.resolve("†state.today.weather").value == {"type": "rain", "mm": 3}


def test_the_engine_writes_the_audit_of_a_returned_message_itself() -> None:
    """A returned message's own `_call`, `_outputPath`, `_date`, `_instance` and `_run` are dropped: the engine
    writes the call, the destination the data fills, the clock's date and the run's audit."""
    def verify(call, tool, ctx):
        return {"type": "state", "data": {"user": {"verified": 1}}, "_date": "2020-01-01T00:00:00Z",
                "_call": {"_tool": "someoneElse"}, "_outputPath": "†state.user.failed", "_instance": "②",
                "_run": {"call": 7}}

    context, execution, _ = execute([], [VERIFY], registry(verifyUser=verify))
    (message,) = context.messages
    assert (message["_call"], message["_date"], message["_outputPath"]) == (VERIFY, NOW, "†state.user.verified")
    assert "_instance" not in message
    assert message["_run"]["call"] == 0
    assert execution.state(0).status is Status.DONE


def test_a_returned_path_the_call_does_not_declare_writes_nothing_there() -> None:
    """`_outputPath` in a result never picks where it goes: data filling no declared destination is refused."""
    def sneaky(call, tool, ctx):
        return {"type": "state", "data": {"admin": True}, "_outputPath": "†state.admin"}

    context, execution, _ = execute([], [VERIFY], registry(verifyUser=sneaky))
    assert not context.resolve("†state.admin").found
    assert execution.state(0).error["type"] == "output"


def test_a_result_claiming_another_call_does_not_run_again_forever() -> None:
    """A message-shaped result naming another `_call` is still this call's record: the loop ends after one
    run (it used to re-run the call at every tick)."""
    def again(call, tool, ctx):
        return {"type": "state", "data": {"n": 1}, "_call": {"_tool": "other"}}

    document = Document(Context([{"type": "state", "data": {"n": 0}},
                                 {"type": "plan", "plan": [{"_tool": "again", "_outputPath": "†state.n"}]}]))
    loop = Loop(document, activities=registry(again=again), clock=CLOCK)
    asyncio.run(loop.run(max_ticks=5))
    assert loop.status is LoopStatus.WAITING_FOR_TURN
    assert len([m for m in document.context.messages if m.get("_outputPath") == "†state.n"]) == 1


def test_returned_message_that_fills_no_destination_is_an_error() -> None:
    """A message that writes none of the call's destinations is refused as an output error: in the last branch
    of `a || b` when the call has one (012: the tool failed), else as an error message."""
    context, execution, _ = execute([], [VERIFY], registry(verifyUser=lambda c, t, x: {"type": "state", "x": 1}))
    assert [m["_outputPath"] for m in context.messages] == ["†state.user.failed"]
    assert context.resolve("†state.user.failed.type").value == "output"
    assert execution.state(0).status is Status.FAILED
    alone = {**VERIFY, "_outputPath": "†state.user.verified"}
    context, execution, _ = execute([], [alone], registry(verifyUser=lambda c, t, x: {"type": "state", "x": 1}))
    assert [m["type"] for m in context.messages] == ["error"]
    assert context[0]["data"]["error"]["type"] == "output"
    assert execution.state(0).status is Status.FAILED


def test_output_method_and_instance_are_recorded() -> None:
    """`_outputMethod` (when not set) and the call's `_instance` go on the output message, and the fold uses them."""
    call = {"_tool": "logStep", "_instance": "①", "_outputPath": "†state.log", "_outputMethod": "push", "_output": "a"}
    context, _, _ = execute([{"type": "state", "_instance": "①", "data": {"log": ["x"]}}], [call])
    message = context[1]
    assert (message["_instance"], message["_outputMethod"]) == ("①", "push")
    assert context.resolve("†state.log", instance="①").value == ["x", "a"]
    assert not context.resolve("†state.log").found


def test_set_method_is_not_written() -> None:
    """The default method `set` is left implicit on the output message."""
    call = {"_tool": "t", "_outputPath": "†state.a", "_outputMethod": "set", "_output": 1}
    context, _, _ = execute([], [call])
    assert "_outputMethod" not in context[0]


def test_a_null_output_method_is_set_as_validate_and_the_fold_read_it() -> None:
    """A call's `_outputMethod: null` counts as absent (`set`), as on a data message and as validate reads
    it: the call runs and writes, instead of run refusing what validate passed."""
    call = {"_tool": "t", "_outputPath": "†state.a", "_outputMethod": None, "_output": 2}
    messages = [{"type": "state", "data": {"a": [1]}}]
    assert [problem for problem in validate(Context(messages), {"calls": [call]}) if problem.severity == "error"] == []
    context, execution, _ = execute(messages, [call])
    assert execution.state(0).status is Status.DONE
    assert "_outputMethod" not in context[1]
    assert context.resolve("†state.a").value == 2


def test_numeric_segments_write_into_arrays() -> None:
    """A destination with an array index resolves to the written element."""
    call = {"_tool": "t", "_outputPath": "†state.items.1", "_output": "B"}
    context, _, _ = execute([{"type": "state", "data": {"items": ["a", "b"]}}], [call])
    assert context.resolve("†state.items").value == ["a", "B"]


def test_latent_call_writes_its_output_with_references_resolved() -> None:
    """A latent call's result is its `_output`, references inside it resolved."""
    call = {"_tool": "think", "_outputPath": "†state.copy", "_output": {"name": "†data.user.name", "tag": "††lit"}}
    context, _, _ = execute([USER], [call])
    assert context.resolve("†state.copy").value == {"name": "Alex", "tag": "†lit"}


def test_latent_call_without_output_path_is_an_ephemeral_thought() -> None:
    """No output path on a latent call: no data is written, only a run record (audit only), and the call is done."""
    context, execution, _ = execute([USER], [{"_tool": "think", "_output": "a plan"}])
    assert [m["type"] for m in context.messages] == ["data", "_run"]
    assert context.identities() == [("data", None)]
    assert execution.state(0).status is Status.DONE


def test_every_date_comes_from_the_clock() -> None:
    """`_date` on outputs and errors is what the injected clock says."""
    calls = [{"_tool": "a", "_outputPath": "†state.a", "_output": 1},
             {"_tool": "b", "_outputPath": "†state.", "_output": 1}]
    context, _, _ = execute([], calls)
    assert {m["_date"] for m in context.messages} == {NOW}
    assert [m["type"] for m in context.messages] == ["data", "error"]


def test_non_json_result_is_an_output_error() -> None:
    """An activity returning something a document cannot hold fails with an output error."""
    context, _, _ = execute([], [{"_tool": "t", "_outputPath": "†state.a"}], registry(t=lambda c, t, x: {1, 2}))
    assert context[0]["data"]["error"]["type"] == "output"
    assert "set" in context[0]["data"]["error"]["message"]


def test_message_appended_signal_names_each_output() -> None:
    """`message_appended` fires with the context index and the call index for every output."""
    context = Context([])
    execution = Execution(context, {"calls": [VERIFY | {"_output": 1, "_outputPath": "†s.a && †s.b"}]}, clock=CLOCK)
    seen = []
    execution.message_appended.connect(lambda index, call: seen.append((index, call)))
    asyncio.run(execution.run())
    assert seen == [(0, 0), (1, 0)]
    assert execution.state(0).outputs == (context.id_at(0), context.id_at(1))


def _nested(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


def _cyclic():
    inner = [0]
    value = {"a": [1, inner]}
    inner.append(value)
    return value


@pytest.mark.parametrize(("result", "reason"), [
    (10**5000, "result: an integer of about 5000 digits (at most 4300 can be saved)"),
    ({"a": [1, {"b": -(10**4300)}]}, "result.a[1].b: an integer of about 4300 digits"),
    (_nested(1000), f"result{'[0]' * 12}… (200 levels): nested deeper than 200 levels"),
    ({"bad": {1, 2}}, "result.bad: a set is not JSON"),
    ({"bad": [object()]}, "result.bad[0]: an object is not JSON"),
    ({"x": float("nan")}, "result.x: nan is not a JSON number"),
    ("x" * (16 * 1024 * 1024 + 1), "result: 16,777,219 bytes of JSON, more than the 16,777,216 a result may be"),
    (_cyclic(), "result.a[1][1]: the value contains itself (a cycle)"),
], ids=["huge-integer", "integer-inside", "deep", "set", "object", "nan", "oversized", "cycle"])
def test_a_result_beyond_the_limits_is_an_output_error_naming_the_place(result, reason) -> None:
    """Huge integers, deep nesting, non-JSON values and oversized results fail the call with an `output` error
    saying where; nothing is written, so the document can still be saved and read back."""
    context, execution, _ = execute([], [UPDATE], registry(updateUserStatus=lambda c, t, x: result))
    assert [m["type"] for m in context.messages] == ["error"]
    error = execution.state(0).error
    assert error["type"] == "output"
    assert reason in error["message"]
    assert json.loads(json.dumps(context.messages))  # the document as a whole still serialises
