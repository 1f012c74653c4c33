"""An output message's write holds the path its call's plan read (`written_at`), equal to reading it afresh."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine import Activities, Context, plan_call
from contextdeck.engine.calls._outputs import output_messages
from contextdeck.engine.protocol import _messages
from contextdeck.engine.protocol._messages import classify

CLOCK = lambda: "2026-01-01T00:00:00Z"  # noqa: E731


def test_an_output_written_by_a_run_holds_its_plans_own_path() -> None:
    """A run writes a path a call: the write classified from the message is the plan's own path, not a copy."""
    plan = plan_call(0, {"_tool": "t", "_outputPath": "†state.user.name"}, {}, Activities())
    assert plan.destinations is not None
    (message,) = output_messages(plan, "Ada", CLOCK)
    write = classify(message).write
    assert write is not None
    assert write.path is plan.destinations.references[0].path
    assert (write.path, write.method, write.value, write.problem) == (("user", "name"), "set", "Ada", None)


@given(st.lists(st.from_regex(r"[a-z]{1,3}", fullmatch=True), min_size=1, max_size=3), st.sampled_from(
    ["state", "input", "memory"]))
def test_a_path_told_by_a_run_is_the_path_read_afresh(segments: list[str], kind: str) -> None:
    """Whatever the plan's path, the message's write is what reading its `_outputPath` gives without the run's
    word; a path of another kind is still refused."""
    path = f"†{kind}." + ".".join(segments)
    plan = plan_call(0, {"_tool": "t", "_outputPath": path}, {}, Activities())
    (message,) = output_messages(plan, 1, CLOCK)
    told = classify(message)
    _messages._PATHS.clear()
    assert classify(message) == told
    assert _messages._explicit_path(path, "other")[1] is not None


def test_an_output_path_too_deep_for_a_document_is_refused_before_the_call_runs() -> None:
    """A destination 51 segments deep (beside `†s.ok`) wraps its output past the 254 levels a document holds: the
    call is refused (`outputPath`) before it runs, never appended to stop the run; 50 segments are written."""
    deep = "†s." + ".".join(["a"] * 51)
    (problem,) = plan_call(0, {"_tool": "t", "_outputPath": f"†s.ok && {deep}"}, {}, Activities()).problems
    assert (problem.type, problem.where) == ("outputPath", "$._outputPath")
    assert problem.message == ("a destination in ¶s 51 segments deep; an output path may have at most 50 "
                               "(the document could not hold its output)")
    assert plan_call(0, {"_tool": "t", "_outputPath": deep[:-2]}, {}, Activities()).problems == ()


def test_a_result_at_an_array_index_is_wrapped_in_objects_and_lands_in_the_array() -> None:
    """An `_outputPath` through an array (`†state.list.1.name`) wraps the result in objects keyed by the path's
    segments, as every path is wrapped; the fold reads it at its path and writes it into the array's element."""
    plan = plan_call(0, {"_tool": "t", "_outputPath": "†state.list.1.name"}, {}, Activities())
    (message,) = output_messages(plan, "Bo", CLOCK)
    assert message["data"] == {"list": {"1": {"name": "Bo"}}}
    context = Context([{"type": "state", "data": {"list": [{"name": "Al"}, {"name": "Cy"}]}}, message])
    assert context.resolve("†state.list").value == [{"name": "Al"}, {"name": "Bo"}]
