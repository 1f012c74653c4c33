"""References a call's instance never finds (013): validate warns, a run says why the call is blocked."""

import asyncio
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context, Execution, Status, never_found, validate

TOOL = {"type": "tool", "tool": {"t": {"type": "object"}}}
ONLY_ONE = {"type": "data", "kind": "state", "_instance": "①", "data": {"x": 1, "z": {"a": 1}}}


def warnings(messages, solution=None):
    return [(d.message_index, d.path, d.reason) for d in validate(Context(messages), solution)
            if d.severity == "warning"]


def test_a_call_for_an_instance_no_data_message_has_reading_another_instances_path_is_warned() -> None:
    """A call whose `_instance` no data message has, reading a path only another instance's data have, never
    finds it: warned at the call, the field and the reference's position in its expression."""
    plan = {"type": "plan", "plan": [{"_tool": "t", "_instance": "③", "q": "†input.g && †state.x.deep"}]}
    assert warnings([TOOL, ONLY_ONE, {"type": "input", "data": {"g": 1}}, plan]) == [
        (3, "call 0 $.q", "†state.x.deep (at position 12) is never found for instance ③ (no data message has it): "
                          "only instance ① has it, and no global data or output path writes it, so the call would "
                          "wait forever (013)")]


def test_each_copy_of_a_call_is_judged_for_its_own_instance() -> None:
    """A call the run repeats per instance reads each instance's own layer: the instance without the path is
    named, at the call as written."""
    other = {"type": "data", "kind": "state", "_instance": "②", "data": {"y": 2}}
    plan = {"type": "plan", "plan": [{"_tool": "t", "q": {"deep": ["†state.x"]}}]}
    assert warnings([TOOL, ONLY_ONE, other, plan]) == [
        (3, "call 0 $.q.deep[0]", "†state.x (at position 0) is never found for instance ②: only instance ① has it, "
                                  "and no global data or output path writes it, so the call would wait forever (013)")]


def test_what_the_instance_may_see_written_is_not_warned() -> None:
    """Global data, the instance's own data, a schema, any call's output path and an approval gate may give the
    instance the path: no warning (and a path nothing writes is `validate`'s other warning, said once)."""
    calls = [{"_tool": "t", "_instance": "③", "q": q} for q in
             ("†state.g", "†state.own", "†state.declared", "†state.made", "†state.approvals.go", "†state.nobody")]
    plan = {"type": "plan", "plan": [*calls, {"_tool": "w", "_instance": "①", "_outputPath": "†state.made"}]}
    messages = [TOOL, ONLY_ONE, {"type": "state", "data": {"g": 1}},
                {"type": "state", "_instance": "③", "data": {"own": 1}},
                {"type": "state", "_instance": "①", "data": {"g": 0, "own": 0, "declared": 0, "made": 0},
                 "schema": {"type": "object", "properties": {"declared": {}}}}, plan]
    assert [(path, reason.split(":")[0]) for _, path, reason in warnings(messages)] == [
        ("call 5 $.q", "nothing writes †state.nobody"), ("call 6 $._tool", "unknown tool 'w'")]


def test_a_run_says_why_such_a_call_is_blocked() -> None:
    """When the run stops, a call blocked on what its instance never finds is said to be so (`never_found`), and
    a call blocked on what a call may still write is not."""
    plan = {"type": "plan", "plan": [{"_tool": "t", "_instance": "③", "q": "†state.x"},
                                     {"_tool": "t", "_instance": "③", "q": "†state.later"},
                                     {"_tool": "w", "_instance": "③", "_outputPath": "†state.later"}]}
    execution = Execution(Context([TOOL, ONLY_ONE, plan]))
    asyncio.run(execution.run())
    assert [state.status for state in execution.states] == [Status.BLOCKED, Status.BLOCKED, Status.WAITING_FOR_OUTPUT]
    assert never_found(execution, [0, 1]) == {
        0: "†state.x (at position 0) is never found for instance ③ (no data message has it): only instance ① has it, "
           "and no global data or output path writes it, so the call would wait forever (013)"}


# -- no false warning: what validate says an instance never finds, the run leaves blocked ---------------------------

PATHS = ("a", "b", "c", "c.d")


def _at(path: str, value: Any) -> Any:
    for segment in reversed(path.split(".")):
        value = {segment: value}
    return value


data_messages = st.lists(st.builds(
    lambda path, value, instance: {"type": "state", "data": _at(path, value),
                                   **({} if instance is None else {"_instance": instance})},
    st.sampled_from(PATHS), st.sampled_from([1, {"d": 2}, None, [1]]), st.sampled_from([None, "①", "①", "②", "②"])),
    max_size=4)
plan_calls = st.lists(st.builds(
    lambda instance, read, written: {"_tool": "t", **({} if instance is None else {"_instance": instance}),
                                     **({} if read is None else {"q": f"†state.{read}"}),
                                     **({} if written is None else {"_outputPath": f"†state.{written}", "_output": 1})},
    # A call for an instance no data message has, reading, is the case in point: drawn more often.
    st.sampled_from([None, "①", "②", "③", "③"]), st.sampled_from([None, *PATHS, *PATHS]),
    st.sampled_from([None, None, None, *PATHS])), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(messages=data_messages, calls=plan_calls)
def test_what_validate_says_an_instance_never_finds_stays_blocked(messages: list[dict[str, Any]],
                                                                  calls: list[dict[str, Any]]) -> None:
    """Each call (or copy of a call, 013) `validate` says never finds what it reads for an instance is blocked when
    the run of the plan has done all it can, and `never_found` says so of it (no false warning)."""
    document = [*messages, TOOL, {"type": "plan", "plan": calls}]
    said = [d for d in validate(Context(document)) if "never found" in d.reason]
    execution = Execution(Context(document))
    asyncio.run(execution.run())
    if execution.refused:  # a cycle refuses the plan: nothing runs, there is no run to compare with
        return
    event("warned" if said else "none warned")
    for warning in said:
        number = int(warning.path.split()[1])
        instances = warning.reason.split("never found for instance")[1].split(":")[0]
        copies = [index for index, plan in enumerate(execution.plans)
                  if (index if execution.origins is None else execution.origins[index][0]) == number
                  and plan.instance is not None and plan.instance in instances]
        assert copies, warning
        assert all(execution.states[index].status is Status.BLOCKED for index in copies), warning
        assert set(never_found(execution, copies)) == set(copies), warning


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(
    max_size=4)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=2)
                     | st.dictionaries(st.text(max_size=2), inner, max_size=2), max_leaves=4)


@settings(max_examples=300, deadline=None)
@given(value=_JSON)
def test_a_data_messages_instance_is_judged_from_its_text_as_from_its_value(value: Any) -> None:
    """`odd_data_instance` reads a message's `_instance` only when its kept text may be odd: for every JSON value it
    says what `odd_instance` says of the value, so no odd one is passed over unread."""
    from contextdeck.engine.run._instances import odd_data_instance, odd_instance

    if value is None:
        return
    context = Context([{"type": "data", "kind": "state", "_instance": value, "data": {}}])
    assert odd_data_instance(context.info(0).instance or "", context, 0) == odd_instance(value, call=False)


def test_an_output_path_merged_for_one_check_is_not_kept_for_the_next() -> None:
    """The data's layers are kept for the context between checks; a plan's output paths are merged into a copy of
    the kinds they write only: a later check without that plan warns again of what only it wrote."""
    from contextdeck.engine.calls._written import read_plans
    from contextdeck.engine.run._instances import instance_problems

    reader = {"_tool": "t", "_instance": "③", "q": "†state.y"}
    writer = {"_tool": "t", "_outputPath": "†state.y"}
    context = Context([TOOL, ONLY_ONE, {"type": "data", "kind": "state", "data": {"z": 1}},
                       {"type": "data", "kind": "state", "_instance": "②", "data": {"y": 1}},
                       {"type": "data", "kind": "other", "data": {"big": {"k": 1}}},
                       {"type": "plan", "plan": [reader, {"_tool": "t", "q": "†other.big.k"}]}])
    plans = read_plans(context)
    assert len(instance_problems(context, plans)) == 1  # †state.y: only ② has it
    written = {**plans, None: read_plans(Context([{"type": "plan", "plan": [writer]}]))[0]}
    assert instance_problems(context, written) == []  # an output path writes it for every instance
    assert len(instance_problems(context, plans)) == 1
