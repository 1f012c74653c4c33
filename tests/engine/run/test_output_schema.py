"""Every result is checked against its tool's `_output` schema (002): breaking it is the call's error, not data."""

import exec_support as support
from exec_support import registry

from contextdeck.engine import Context, Status, validate

SENTIMENT = {"type": "tool", "tool": {"sentiment": {
    "type": "object", "properties": {
        "text": {"type": "string"},
        "_output": {"type": "object", "properties": {"sentiment": {"type": "string"}, "confidence": {"type": "number"}},
                    "required": ["sentiment"]}}}}}
CALL = {"_tool": "sentiment", "text": "This is the best!", "_outputPath": "†state.mood"}
BAD = {"sentiment": 5, "confidence": "high"}


def error_of(context):
    errors = [m for m in context if m.get("type") == "error"]
    assert len(errors) == 1
    return errors[0]["data"]["error"]


def test_an_activity_result_that_breaks_output_is_an_error_message() -> None:
    """The activity's result is not written: the call fails with an `output` error naming each path and the value."""
    context, execution, _ = support.execute([SENTIMENT], [CALL], registry(sentiment=lambda call, tool, ctx: BAD))
    assert context.resolve("†state.mood").found is False
    assert execution.state(0).status is Status.FAILED
    error = error_of(context)
    assert error["type"] == "output"
    assert "the _output schema of 'sentiment'" in error["message"]
    assert "$.sentiment: 5 is not of type 'string'" in error["message"]
    assert "$.confidence: 'high' is not of type 'number'" in error["message"]
    assert 'the result: {"sentiment":5,"confidence":"high"}' in error["message"]


def test_a_large_result_that_breaks_output_is_quoted_in_short() -> None:
    """A result of a million characters breaking `_output`: the error says the path and what is wrong in a few
    hundred characters, the value cut in its middle; before, jsonschema's reason quoted the whole value (a
    line of megabytes on stderr, and as much again in the error message)."""
    huge = "x" * 1_000_000
    context, _, _ = support.execute([SENTIMENT], [CALL], registry(sentiment=lambda call, tool, ctx: {"sentiment": 5,
                                                                                                  "note": huge}))
    message = error_of(context)["message"]
    assert len(message) < 1_000
    assert "$.sentiment: 5 is not of type 'string'" in message
    big = {"type": "tool", "tool": {"sentiment": {"type": "object", "properties": {"_output": {"type": "number"}}}}}
    context, _, _ = support.execute([big], [CALL], registry(sentiment=lambda call, tool, ctx: huge))
    message = error_of(context)["message"]
    assert len(message) < 1_000
    reason, result = message.split("; the result: ")
    assert reason.startswith("the result does not meet the _output schema of 'sentiment': $: 'xxx")
    assert "x…x" in reason
    assert reason.endswith("x' is not of type 'number'")
    assert result.startswith('"xxx')
    assert result.endswith("x…")


def test_a_latent_output_typed_into_the_plan_that_breaks_output_is_an_error_message() -> None:
    """A latent call's own `_output` is checked the same way before it is written."""
    context, _, _ = support.execute([SENTIMENT], [{**CALL, "_output": {"confidence": 0.9}}])
    assert context.resolve("†state.mood").found is False
    assert "$: 'sentiment' is a required property" in error_of(context)["message"]


def test_a_valid_result_is_written() -> None:
    """A result that meets `_output` is data, as before."""
    good = {"sentiment": "positive", "confidence": 0.99}
    context, _, _ = support.execute([SENTIMENT], [CALL], registry(sentiment=lambda call, tool, ctx: good))
    assert context.resolve("†state.mood").value == good
    assert not [m for m in context if m.get("type") == "error"]


def test_a_returned_message_is_checked_on_the_usual_branch_only() -> None:
    """A data message an activity returns for the first branch of `a || b` is checked, and one that breaks the
    schema is the tool failing (012): written to the error branch; one it routes to another branch (012's error
    branch, with its own shape) is not checked."""
    call = {**CALL, "_outputPath": "†state.mood || †state.failure"}
    usual = {"type": "state", "data": {"mood": BAD}}
    context, _, _ = support.execute([SENTIMENT], [call], registry(sentiment=lambda c, t, x: usual))
    assert not context.resolve("†state.mood").found
    failure = context.resolve("†state.failure").value
    assert failure["type"] == "output"
    assert "$.sentiment: 5 is not of type 'string'" in failure["message"]
    other = {"type": "state", "data": {"failure": {"code": "offline"}}}
    context, _, _ = support.execute([SENTIMENT], [call], registry(sentiment=lambda c, t, x: other))
    assert context.resolve("†state.failure").value == {"code": "offline"}


def test_a_typed_latent_output_that_breaks_output_is_refused_up_front_and_validate_says_so() -> None:
    """A latent `_output` written without references is the call's result before it runs: validate reports it
    at the call (as run will refuse it), and run refuses it before starting; one holding a reference waits."""
    call = {**CALL, "_output": {"sentiment": 5}}
    waiting = {**CALL, "_output": {"sentiment": "†state.guess"}, "_outputPath": "†state.other"}
    context = Context([SENTIMENT, {"type": "plan", "plan": [call, waiting]}])
    assert [(p.path, p.reason) for p in validate(context) if p.severity == "error"] == [
        ("call 0 (sentiment)", "output: the result does not meet the _output schema of "
                                                  "'sentiment': $.sentiment: 5 is not of type 'string'; the result: "
                                                  '{"sentiment":5}')]
    context, execution, _ = support.execute([SENTIMENT], [call, waiting])
    assert [state.status for state in execution.states] == [Status.FAILED, Status.BLOCKED]
    error = next(m for m in context if m.get("type") == "error")
    assert error["data"]["error"]["type"] == "output"
    assert "started" not in error["_run"]  # refused before it started


def test_a_tool_whose_output_schema_cannot_be_used_fails_its_calls_before_they_run() -> None:
    """An `_output` schema that cannot check anything (an unknown type, a `$ref` to nothing): validate says so at
    each call, and the run fails the call before its activity runs. Before, validate said nothing, and the run
    ran the activity (its side effects done) only to refuse whatever it returned."""
    broken = {"type": "tool", "tool": {"sentiment": {"type": "object", "properties": {
        "text": {"type": "string"}, "_output": {"type": "nonsense"}}}}}
    unusable = ("tool 'sentiment': its schema cannot be used: invalid schema at #/properties/_output/type: "
                "'nonsense' is not valid under any of the given schemas")
    said = f"parameters: {unusable}"  # one sentence at the tool and at every call, whatever the fault's place
    context = Context([broken, {"type": "plan", "plan": [CALL]}])
    assert [(p.path, p.reason) for p in validate(context) if p.severity == "error"] == [
        ("tool", unusable), ("call 0 (sentiment)", said)]
    ran = []
    context, execution, _ = support.execute([broken], [CALL], registry(sentiment=lambda c, t, x: ran.append(c)))
    assert ran == []
    assert execution.state(0).status is Status.FAILED
    assert error_of(context) == {"type": "parameters", "message": unusable}
