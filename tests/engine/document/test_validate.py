"""validate: schema violations with their path, malformed references in calls, conflicts."""

from __future__ import annotations

from typing import Any

import pytest

from contextdeck.engine import Activities, Context, Execution, Status, load_document, validate

SCHEMA = {"type": "object", "properties": {"age": {"type": "number"}, "tags": {"type": "array",
                                                                             "items": {"type": "string"}}}}


def problems(messages: list[dict[str, Any]], solution: Any = None) -> list[tuple[int | None, str, str]]:
    return [(d.message_index, d.path, d.reason) for d in validate(Context(messages), solution)]


def test_bundled_examples_are_valid(examples) -> None:
    """Every bundled example validates clean."""
    for path in sorted(examples.glob("*.json")):
        document = load_document(path)
        assert validate(document.context, document.solution) == [], path.name


def test_the_merged_value_is_checked_against_the_latest_schema() -> None:
    """A later message's data is merged before checking; the violation names the JSON path, and the message
    that wrote the bad value (1), with the schema's (0)."""
    messages = [{"type": "user", "data": {"age": 1}, "schema": SCHEMA},
                {"type": "user", "data": {"tags": ["a", 5]}}]
    assert problems(messages) == [(1, "¶user.tags[1]", "5 is not of type 'string' (the schema of message 0)")]


def test_a_schema_of_a_dialect_nothing_knows_is_warned_about_where_it_is_given() -> None:
    """A data message's schema whose `$schema` names no dialect jsonschema knows (here a typo: 2021-12) is read as
    2020-12 and checked; `validate` says so once, as a warning at that message. A known dialect or none: nothing."""
    typo = {**SCHEMA, "$schema": "https://json-schema.org/draft/2021-12/schema"}
    messages = [{"type": "user", "data": {"age": "old"}, "schema": typo},
                {"type": "user", "_instance": "a", "data": {"age": 2}},
                {"type": "memo", "data": {}, "schema": {**SCHEMA, "$schema": "http://json-schema.org/draft-07/schema#"}},
                {"type": "note", "data": {}, "schema": SCHEMA}]
    found = validate(Context(messages))
    said = [(d.message_index, d.path, d.severity) for d in found if "dialect" in d.reason]
    assert said == [(0, "schema", "warning")]
    assert "'https://json-schema.org/draft/2021-12/schema'" in next(d.reason for d in found if "dialect" in d.reason)
    assert any(d.path == "¶user.age" and d.severity == "error" for d in found)  # still checked, as 2020-12


def test_an_instance_is_checked_over_the_global_layer() -> None:
    """An instance's value (its layer over the global one) is checked against the global schema."""
    messages = [{"type": "user", "data": {"age": 1}, "schema": SCHEMA},
                {"type": "user", "_instance": "①", "data": {"age": "old"}}]
    assert problems(messages) == [(1, "¶user[①].age", "'old' is not of type 'number' (the schema of message 0)")]


def test_a_global_violation_is_reported_once() -> None:
    """A violation every instance inherits from the global value is reported for the global value only."""
    messages = [{"type": "user", "data": {"age": "x"}, "schema": SCHEMA},
                {"type": "user", "_instance": "①", "data": {"tags": []}},
                {"type": "user", "_instance": "②", "data": {"tags": []}}]
    assert problems(messages) == [(0, "¶user.age", "'x' is not of type 'number'")]


def test_a_violation_names_the_message_that_wrote_the_bad_value() -> None:
    """The message named is the last that wrote the value at the violation's path (an output message at its
    `_outputPath`, a plain merge, a push), not a later write elsewhere; the schema's own message is named alone."""
    messages = [{"type": "user", "data": {"age": 1, "tags": []}, "schema": SCHEMA},
                {"type": "user", "data": {"tags": "x"}, "_outputPath": "†user.tags", "_outputMethod": "set"},
                {"type": "user", "data": {"name": "Ann"}},
                {"type": "user", "data": {"age": "old"}, "schema": SCHEMA}]
    assert problems(messages) == [(3, "¶user.age", "'old' is not of type 'number'"),
                                  (1, "¶user.tags", "'x' is not of type 'array' (the schema of message 3)")]


def test_an_element_appended_names_the_message_that_appended_it() -> None:
    """A bad element a `push` or `concat` appended names that message (not the schema's, nor a later append),
    counted back from the array's folded length; an instance's append onto the global array too."""
    messages = [{"type": "user", "data": {"age": 1, "tags": []}, "schema": SCHEMA},
                {"type": "user", "data": {"tags": "a"}, "_outputPath": "†user.tags", "_outputMethod": "push"},
                {"type": "user", "data": {"tags": 5}, "_outputPath": "†user.tags", "_outputMethod": "push"},
                {"type": "user", "data": {"tags": ["b", 6]}, "_outputPath": "†user.tags", "_outputMethod": "concat"},
                {"type": "user", "data": {"tags": "c"}, "_outputPath": "†user.tags", "_outputMethod": "push"},
                {"type": "user", "_instance": "①", "data": {"tags": 7}, "_outputPath": "†user.tags",
                 "_outputMethod": "push"}]
    schema = " (the schema of message 0)"
    assert problems(messages) == [(2, "¶user.tags[1]", "5 is not of type 'string'" + schema),
                                  (3, "¶user.tags[3]", "6 is not of type 'string'" + schema),
                                  (5, "¶user[①].tags[5]", "7 is not of type 'string'" + schema)]


def test_an_element_appended_before_a_write_lengthened_the_array_names_its_appender() -> None:
    """A write at the index just past an array's end lengthens it: the appends before it are not counted back
    from the folded length, so the first push's bad element still names the first push."""
    messages = [{"type": "user", "data": {"age": 1, "tags": []}, "schema": SCHEMA},
                {"type": "user", "data": {"tags": 5}, "_outputPath": "†user.tags", "_outputMethod": "push"},
                {"type": "user", "data": {"tags": {"1": "x"}}, "_outputPath": "†user.tags.1"},
                {"type": "user", "data": {"tags": 6}, "_outputPath": "†user.tags", "_outputMethod": "push"}]
    schema = " (the schema of message 0)"
    assert problems(messages) == [(1, "¶user.tags[0]", "5 is not of type 'string'" + schema),
                                  (3, "¶user.tags[2]", "6 is not of type 'string'" + schema)]


@pytest.mark.parametrize(
    ("schema", "words"),
    [(5, "expected an object"), ({"type": "nonsense"}, "invalid schema"),
     ({"$ref": "https://example.invalid/schema.json"}, "cannot be resolved")],
)
def test_a_bad_schema_is_a_problem_not_a_crash(schema, words) -> None:
    """An invalid or unresolvable schema is reported at its message."""
    ((index, path, reason),) = problems([{"type": "user", "data": {}, "schema": schema}])
    assert (index, path) == (0, "¶user")
    assert words in reason


def test_boolean_schemas() -> None:
    """The schema true accepts anything; false refuses everything."""
    assert problems([{"type": "user", "data": {"a": 1}, "schema": True}]) == []
    assert len(problems([{"type": "user", "data": {"a": 1}, "schema": False}])) == 1


# Appended after the plans of the tests below: the tools they call and the kinds they read are defined, so
# only the malformed references are left to report.
DEFINED = [{"type": "tool", "tool": {"a": {}, "b": {}, "c": {}, "t": {}}}, {"type": "ok", "data": {}}]


def test_malformed_references_in_plan_calls_name_call_field_and_position() -> None:
    """A malformed expression anywhere in a call is reported with the call, the field and the position."""
    plan = {"type": "plan", "plan": [
        {"_tool": "a", "x": {"deep": ["ok", "†state..x"]}, "_outputPath": "†state.y"},
        {"_tool": "b", "_outputPath": "state.z"},
        {"_tool": "c", "_outputPath": "†state.w", "_outputMethod": "append"},
        {"_tool": "a", "_outputPath": "††state.v"},
        {"_tool": "a", "_outputPath": " †state.u", "_outputMethod": None},  # neither is malformed
    ]}
    assert problems([plan, *DEFINED]) == [
        (0, "call 0 $.x.deep[1]", "expected a path segment after '.', found '.' at position 7"),
        (0, "call 1 $._outputPath",
         "expected a reference starting with '†', found 's' at position 0"),
        (0, "call 2 $._outputMethod",
         "unknown _outputMethod 'append'; expected one of set, merge, assign, push, concat"),
        (0, "call 3 $._outputPath",
         "expected a kind after '†', found '†' ('††' escapes a literal '†') at position 1"),
    ]


def test_solution_calls_are_checked_instead_of_the_plan() -> None:
    """A saved request's solution calls are the pending calls; a call must be an object."""
    found = problems(DEFINED, {"calls": [{"_tool": "t", "p": "†a | †b"}, 5]})
    assert found == [(None, "solution, call 0 $.p", "expected '||', found a single '|' at position 3"),
                     (None, "solution, call 1", "a call must be an object")]


def test_the_solutions_calls_are_warned_of_as_a_plans_are() -> None:
    """The solution's calls run first: a tool nothing defines, a reference nothing writes and a scope naming no kind
    are warned of there as in a plan message; what one of its calls writes another may read."""
    found = problems([{"type": "text", "text": "hi"}], {"calls": [
        {"_tool": "nosuchTool", "x": "†state.nothing", "_scopes": ["secrets"]}], "output": None})
    assert found == [
        (None, "solution, call 0 $._tool", "unknown tool 'nosuchTool': no tool message defines it (it would run "
                                           "latent)"),
        (None, "solution, call 0 $.x", "unknown kind ¶state: no message or output path writes it"),
        (None, "solution, call 0 $._scopes[0]", "scope 'secrets' names no kind any message or output path writes")]
    chained = [{"_tool": "a", "_output": 1, "_outputPath": "†state.x"}, {"_tool": "b", "v": "†state.x", "_output": 2}]
    assert problems(DEFINED, {"calls": chained, "output": None}) == []


def test_escaped_daggers_are_not_references() -> None:
    """A parameter starting with †† is a literal and never a malformed reference."""
    assert problems([{"type": "plan", "plan": [{"_tool": "t", "p": "††not a ref.."}]}, *DEFINED]) == []


def test_conflicts_and_unusable_outputs_are_reported() -> None:
    """A push onto an object and an output without a usable path both show up, naming their message."""
    messages = [{"type": "state", "data": {"a": {}}},
                {"type": "state", "data": {"a": 1}, "_outputPath": "†state.a", "_outputMethod": "push"},
                {"type": "state", "data": {"b": 1}, "_call": {"_tool": "t", "_outputPath": "†state.c"}}]
    found = problems(messages)
    assert [(i, p) for i, p, _ in found] == [(1, "¶state"), (2, "¶state")]
    assert "push onto an object" in found[0][2]
    assert "no destination" in found[1][2]


def test_a_calls_output_path_that_is_no_string_is_skipped_and_reported() -> None:
    """`_call._outputPath` of a number or an object is a malformed path (format.md §4), as the message's own: the write
    changes nothing and validate names it, never a merge at the root."""
    messages = [{"type": "state", "data": {"x": 1}},
                {"type": "data", "kind": "state", "data": {"d": 1}, "_call": {"_tool": "t", "_outputPath": 7}},
                {"type": "data", "kind": "state", "data": {"e": 1}, "_call": {"_tool": "t", "_outputPath": {"a": 1}}}]
    assert problems(messages) == [(1, "¶state", "_call._outputPath is not a string"),
                                  (2, "¶state", "_call._outputPath is not a string")]
    assert Context(messages).resolve("†state").value == {"x": 1}


def test_a_conflict_only_the_instance_meets_is_reported_for_the_instance() -> None:
    """An instance write that conflicts with the global value is reported once, under the instance."""
    messages = [{"type": "state", "data": {"n": 5}},
                {"type": "state", "_instance": "①", "data": {"n": 1}, "_outputPath": "†state.n",
                 "_outputMethod": "push"}]
    assert [(i, p) for i, p, _ in problems(messages)] == [(1, "¶state[①]")]


def test_every_plan_is_checked_not_only_the_last() -> None:
    """Calls of earlier plans and of the solution are all checked; a plan that is not an array is reported."""
    messages = [{"type": "plan", "plan": [{"_tool": "t", "p": "†a..b"}]},
                {"type": "plan", "plan": "nope"},
                {"type": "plan", "plan": [{"_tool": "t", "p": "†ok"}]}, *DEFINED]
    found = problems(messages, {"calls": [{"_tool": "t", "p": "†"}]})
    assert [(i, p) for i, p, _ in found] == [(None, "solution, call 0 $.p"), (0, "call 0 $.p"),
                                             (1, "plan")]


def test_calls_inside_pattern_groups_are_checked() -> None:
    """A malformed reference in a member of an `all` group is reported, numbered as the executor numbers it."""
    ctx = Context([{"type": "plan", "plan": [
        {"_tool": "a"},
        {"all": [{"_tool": "b"}, {"_tool": "c", "x": "†state..y"}]},
    ]}])
    problems = validate(ctx)
    assert any("call 2" in p.path and "position 7" in p.reason for p in problems), problems


# -- everything `run` checks before it starts a call (issue 13 part 6) ------------------------------------------

GREET_TOOL = {"type": "tool", "tool": {"greet": {
    "type": "object", "properties": {"name": {"type": "string"}, "_outputPath": {"const": "†state.greeting"}},
    "required": ["name"]}}}


def test_validate_reports_what_run_refuses_with_the_message_and_the_call() -> None:
    """Parameters against the tool's schema, a prescribed output path, a cycle: each with the plan's message
    index and the call, exactly the calls `run` fails before starting anything."""
    plan = {"type": "plan", "plan": [
        {"_tool": "greet", "name": 5},
        {"_tool": "greet", "name": "a", "_outputPath": "†state.other"},
        {"_tool": "x", "v": "†state.b", "_outputPath": "†state.a"},
        {"_tool": "y", "v": "†state.a", "_outputPath": "†state.b"},
    ]}
    cycle = ("cycle: calls 2 (x), 3 (y) form a cycle: call 3 feeds call 2 through †state.b; "
             "call 2 feeds call 3 through †state.a")
    unknown = "no tool message defines it (it would run latent)"
    assert problems([GREET_TOOL, plan]) == [
        (1, "call 2 $._tool", f"unknown tool 'x': {unknown}"),  # warnings (_call_checks)
        (1, "call 3 $._tool", f"unknown tool 'y': {unknown}"),
        (1, "call 0 (greet)", "parameters: invalid parameters for 'greet': $.name: 5 is not of "
                                                  "type 'string'"),
        (1, "call 1 (greet)",
         "outputPath: the tool prescribes _outputPath '†state.greeting', not '†state.other'"),
        (1, "call 2 (x)", cycle),
        (1, "call 3 (y)", cycle),
    ]
    execution = Execution(Context([GREET_TOOL, plan]))
    assert [state.index for state in execution.states if state.status is Status.FAILED] == [0, 1, 2, 3]


def test_validate_checks_the_solutions_calls_and_names_activities_only_when_it_knows_them() -> None:
    """The solution's calls are what run runs (no message index); a tool naming an activity that is not
    loaded is said (its calls run latently, 003) only when validate is told which activities are loaded."""
    tool = {"type": "tool", "tool": {"pay": {"type": "object", "_activity": "charge",
                                             "properties": {"amount": {"type": "number"}}}}}
    solution = {"calls": [{"_tool": "pay", "amount": "50"}]}
    assert problems([tool], solution) == [
        (None, "solution, call 0 (pay)", "parameters: invalid parameters for 'pay': $.amount: '50' is not of type "
                                         "'number'")]
    loaded = [(d.path, d.reason, d.severity) for d in validate(Context([tool]), solution, activities=Activities())]
    assert ("tool", "tool 'pay': its _activity 'charge' is not loaded: its calls run latently (003), their result is "
                    "their _output, given or asked for", "warning") in loaded


# -- one reading of each plan serves every check (issue 30) -----------------------------------------------------

INSTANCES = [{"type": "input", "_instance": "①", "data": {"user": "ann"}},
             {"type": "input", "_instance": "②", "data": {"user": "bob"}}]


def test_a_call_whose_only_expressions_are_outside_its_parameters_has_its_parameters_checked() -> None:
    """The plan's reading holds every expression of a call, its `_outputPath` and `_output` included; only one
    in a parameter defers the parameters' check to run time."""
    greet = {"type": "tool", "tool": {"greet": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "greet", "name": 5, "_outputPath": "†state.a", "_output": "†state.b"},
                                     {"_tool": "greet", "name": "†state.a", "_outputPath": "†state.c"}]}
    assert problems([greet, {"type": "state", "data": {"b": 1}}, plan]) == [
        (2, "call 0 (greet)",
         "parameters: invalid parameters for 'greet': $.name: 5 is not of type 'string'")]


def test_each_instances_copy_of_a_call_is_checked_as_the_call_was_read() -> None:
    """A call run once per instance is read once: each copy's literal parameters are checked, said once at the
    call as the plan numbers it (as the malformed reference of the call after it is), with the instances."""
    greet = {"type": "tool", "tool": {"greet": {"type": "object", "properties": {"n": {"type": "string"}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "greet", "n": 5, "_outputPath": "†input.greeting"},
                                     {"_tool": "greet", "n": "†input..user", "_outputPath": "†input.other"}]}
    wrong = "parameters: invalid parameters for 'greet': $.n: 5 is not of type 'string'"
    assert problems([greet, *INSTANCES, plan]) == [
        (3, "call 1 $.n", "expected a path segment after '.', found '.' at position 7"),
        (3, "call 0 (greet)", wrong + " (for instances ①, ②)"),
    ]


STATE_INSTANCES = [{"type": "state", "_instance": "①", "data": {"x": 1}},
                   {"type": "state", "_instance": "②", "data": {"x": 2}}]


def test_a_cycle_or_group_of_copies_names_the_calls_as_written() -> None:
    """A cycle or a group's links among the copies a run makes of calls per instance (013) name the calls as the
    plan is written, as the place does, with the instances (never the run's numbers of the copies)."""
    cycle = {"type": "plan", "plan": [{"_tool": "a", "q": "†state.x", "_outputPath": "†state.y", "_output": 1},
                                      {"_tool": "b", "q": "†state.y", "_outputPath": "†state.x", "_output": 1}]}
    said = ("cycle: calls 0 (a), 1 (b) form a cycle: call 1 feeds call 0 through †state.x; "
            "call 0 feeds call 1 through †state.y (for instances ①, ②)")
    assert [p for p in problems([*STATE_INSTANCES, cycle]) if "$._tool" not in p[1]] == [
        (2, "call 0 (a)", said), (2, "call 1 (b)", said)]
    group = {"type": "plan", "plan": [{"_tool": "z", "_outputPath": "†input.z", "_output": 1}, {"all": [
        {"_tool": "a", "q": "†state.x", "_outputPath": "†state.y", "_output": 1},
        {"_tool": "b", "q": "†state.y", "_outputPath": "†state.w", "_output": 1}]}]}
    said = ("group: calls of one 'all' group run together and cannot feed each other: call 1 feeds call 2 "
            "(for instances ①, ②)")
    assert [p for p in problems([*STATE_INSTANCES, group]) if "$._tool" not in p[1]] == [
        (2, "call 1 (a)", said), (2, "call 2 (b)", said)]


def test_a_group_whose_one_member_is_not_in_an_array_runs_once_per_instance() -> None:
    """`{"all": call}` is a group of that one call (as the plan numbers it) also when the call runs once per
    instance: each copy is the call with its `_instance`, never the group with one."""
    plan = {"type": "plan", "plan": [{"all": {"_tool": "greet", "name": "†input.user", "_outputPath": "†input.hi"}}]}
    context = Context([{"type": "tool", "tool": {"greet": {"type": "object"}}}, *INSTANCES, plan])
    assert validate(context) == []
    execution = Execution(context)
    assert [(p.tool_name, p.instance, p.problems) for p in execution.plans] == [("greet", "①", ()), ("greet", "②", ())]
    assert [(unit.pattern, unit.members) for unit in execution.units] == [("all", (0,)), ("all", (1,))]


# -- each tool's check made once per set-up (issue 30) -----------------------------------------------------------


def test_calls_of_one_tool_each_report_their_own_parameters() -> None:
    """The parameter check is made once per tool and serves all its calls: each call's own bad parameters are
    reported at that call, and a call of another tool is judged by that tool's schema."""
    tools = {"type": "tool", "tool": {
        "greet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        "count": {"type": "object", "properties": {"name": {"type": "integer"}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "greet", "name": 5}, {"_tool": "greet", "name": "ann"},
                                     {"_tool": "greet", "name": ["x"]}, {"_tool": "greet"},
                                     {"_tool": "count", "name": "ann"}, {"_tool": "count", "name": 5}]}
    greet = "parameters: invalid parameters for 'greet': "
    assert problems([tools, plan]) == [
        (1, "call 0 (greet)", greet + "$.name: 5 is not of type 'string'"),
        (1, "call 2 (greet)", greet + "$.name: ['x'] is not of type 'string'"),
        (1, "call 3 (greet)", greet + "$: 'name' is a required property"),
        (1, "call 4 (count)",
         "parameters: invalid parameters for 'count': $.name: 'ann' is not of type 'integer'"),
    ]


def test_a_tool_schema_that_cannot_be_used_refuses_each_of_its_calls() -> None:
    """A tool whose schema cannot be used refuses every call of it, with literal parameters or with references."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"s": {"type": 5}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "t", "s": 1, "_outputPath": "†state.a"},
                                     {"_tool": "t", "s": "†state.a", "_outputPath": "†state.b"},
                                     {"_tool": "t", "s": 2}]}
    found = [(index, path, reason) for index, path, reason in problems([tool, plan]) if "(t)" in path]
    assert [path for _, path, _ in found] == [f"call {n} (t)" for n in range(3)]
    assert all("tool 't': its schema cannot be used" in reason for _, _, reason in found)


def test_a_missing_parameter_alone_is_told_as_the_tools_invalid_parameters() -> None:
    """A call whose one problem is at `$` (a required parameter missing) is told as every other parameter
    problem is, after "invalid parameters for" its tool: only a schema that cannot be used is told without."""
    tool = {"type": "tool", "tool": {"greet": {"type": "object", "required": ["name"]}}}
    plan = {"type": "plan", "plan": [{"_tool": "greet"}, {"_tool": "greet", "name": "ann", "_outputPath": 5}]}
    assert problems([tool, plan])[0] == (
        1, "call 0 (greet)", "parameters: invalid parameters for 'greet': $: 'name' is a required "
                                               "property")


def test_a_ref_to_nothing_refuses_calls_whose_parameters_are_references() -> None:
    """A tool schema with a `$ref` that leads nowhere cannot be used for any call: a call whose parameter is a
    reference is told before it runs (its message, its call and tool, the `$ref`), as a call with literal
    parameters is, also when its value would not reach the `$ref`."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {
        "s": {"type": "integer"}, "u": {"$ref": "#/$defs/nope"}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "t", "s": "†state.a", "_outputPath": "†state.b"},
                                     {"_tool": "t", "s": 1, "_outputPath": "†state.c"}]}
    unusable = "tool 't': its schema cannot be used: $ref '#/$defs/nope' points to nothing in the schema"
    reason = f"parameters: {unusable}"  # one wording at the tool and at its calls
    assert problems([tool, {"type": "state", "data": {"a": 1}}, plan]) == [
        (0, "tool", unusable), (2, "call 0 (t)", reason), (2, "call 1 (t)", reason)]


def test_refs_a_validator_never_follows_or_that_resolve_leave_a_schema_usable() -> None:
    """A `$ref` to a draft's metaschema, or to a definition, resolves; a dangling `$ref` inside a definition
    nothing refers to is never followed: none of these refuses a call."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "$defs": {"n": {"type": "integer"},
                                                                      "unused": {"$ref": "#/$defs/nope"}},
                                           "properties": {"s": {"$ref": "#/$defs/n"},
                                                          "m": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "t", "s": "†state.a", "m": {"type": "string"},
                                      "_outputPath": "†state.b"},
                                     {"_tool": "t", "s": 1, "_outputPath": "†state.c"}]}
    assert problems([tool, {"type": "state", "data": {"a": 1}}, plan]) == []


def test_a_malformed_output_path_is_refused_where_it_is() -> None:
    """A call's `_outputPath` is parsed once, with its other expressions: a malformed one refuses the call with
    its position, and a well-formed one is what the call writes."""
    plan = {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state..x"}, {"_tool": "t", "_outputPath": "†s.y"},
                                     {"_tool": "t", "_outputPath": "††s.y"}]}
    execution = Execution(Context([{"type": "tool", "tool": {"t": {"type": "object"}}}, plan]))
    bad, good, escaped = execution.plans
    assert [(p.type, p.message) for p in bad.problems] == [
        ("expression", "$._outputPath: expected a path segment after '.', found '.' at position 7")]
    assert [(p.type, p.message) for p in escaped.problems] == [  # `††` is a literal, never the kind `†s`
        ("expression",
         "$._outputPath: expected a kind after '†', found '†' ('††' escapes a literal '†') at position 1")]
    assert (good.problems, [str(ref) for ref in good.writes]) == ((), ["†s.y"])


def test_a_tools_unusable_prescribed_output_path_is_a_problem_validate_and_run_agree_on() -> None:
    """A tool's `const` `_outputPath` that is malformed or not a string is said by validate (the call holds
    no expression to point at) and refuses the call in run, rather than validate passing what run refuses or
    the call running with nowhere to write."""
    def tool(const: Any) -> dict[str, Any]:
        return {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_outputPath": {"const": const}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "t", "v": 1}]}
    assert problems([tool("†state..x"), plan]) == [(1, "call 0 (t)", (
        "outputPath: the tool prescribes _outputPath '†state..x': expected a path segment after '.', found '.' "
        "at position 7"))]
    assert problems([tool(5), plan]) == [(1, "call 0 (t)", (
        "outputPath: the tool prescribes _outputPath 5, which is not an expression string"))]
    for const in ("†state..x", 5):
        execution = Execution(Context([tool(const), plan]))
        assert [state.status for state in execution.states] == [Status.FAILED]


def test_a_tool_that_requires_an_output_path_refuses_a_call_without_one() -> None:
    """A tool whose `required` names `_outputPath` (its pattern leaves the place to the caller) refuses a call
    with none, or a null one, in validate and run, as a turn is refused: never run as a fire-and-forget."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "required": ["_outputPath"], "properties": {
        "_outputPath": {"type": "string", "pattern": "^†state\\."}}}}}
    plan = {"type": "plan", "plan": [{"_tool": "t"}, {"_tool": "t", "_outputPath": None},
                                     {"_tool": "t", "_outputPath": "†state.a"}]}
    assert problems([tool, plan]) == [
        (1, f"call {number} (t)", "outputPath: the tool requires _outputPath")
        for number in (0, 1)]
    execution = Execution(Context([tool, plan]))
    assert [state.status for state in execution.states][:2] == [Status.FAILED, Status.FAILED]
    assert execution.states[2].status is not Status.FAILED


def test_a_tool_that_requires_scopes_refuses_a_call_without_them_unless_it_provisions_them() -> None:
    """The same for `_scopes` (015): required by a tool that only limits them, a call must ask for some; a
    tool that provisions them (`const`) fills them in."""
    def tool(rule: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool", "tool": {"t": {"type": "object", "required": ["_scopes"],
                                              "properties": {"_scopes": rule}}}}
    plan = {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.a"}]}
    limiting = {"type": "array", "items": {"enum": ["state", "input"]}}
    assert problems([tool(limiting), plan]) == [
        (1, "call 0 (t)", "scopes: the tool requires _scopes")]
    assert problems([tool({"const": ["state"]}), {"type": "state", "a": 1}, plan]) == []


def test_every_violation_names_its_writer_however_many_there_are() -> None:
    """Each of 120 violations names the message that wrote its value (found in one pass from the end)."""
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    messages = [{"type": "user", "data": {}, "schema": schema}] + [
        {"type": "user", "data": {f"k{n}": n}} for n in range(120)]
    found = problems(messages)
    assert len(found) == 120
    assert all(index == int(path.split(".k")[1]) + 1 for index, path, _ in found)


def test_a_group_whose_members_are_no_array_is_said_as_the_group() -> None:
    """`{"all": "x"}` is a group whose `all` is not a list: that is said, not that "x" is no call; a group's
    array holding a non-call, and a loose entry that is none, are still calls that must be objects."""
    found = problems([{"type": "plan", "plan": [{"all": "x"}, {"any": [5]}, 6, {"race": 7}]}])
    assert found == [(0, "call 0", "a pattern group's 'all' must be an array of calls, not \"x\""),
                     (0, "call 1", "a call must be an object"), (0, "call 2", "a call must be an object"),
                     (0, "call 3", "a pattern group's 'race' must be an array of calls, not 7")]
    assert problems([], {"calls": [{"all": "x"}]}) == [
        (None, "solution, call 0", "a pattern group's 'all' must be an array of calls, not \"x\"")]
