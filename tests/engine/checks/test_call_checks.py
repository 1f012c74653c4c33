"""Plan calls checked against the context: unknown tools, references nothing writes, refused parameters."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine import (
    Activities,
    Context,
    ToolDefinition,
    call_problems,
    reference_problem,
    validate,
    written_paths,
)
from contextdeck.engine.calls._written import read_plans
from contextdeck.engine.checks._call_checks import _written_for
from contextdeck.engine.protocol._expressions import parsed_once

TOOLS: dict[str, Any] = {"lookup": {"type": "object", "properties": {
    "id": {"type": "string"}, "count": {"type": "integer", "minimum": 1},
    "_outputPath": {"type": "string", "const": "†state.order"}}, "required": ["id"]}}


def context(*plan: dict[str, Any]) -> Context:
    return Context([
        {"type": "input", "input": {"id": "A-1", "customer": {"email": "a@b"}}},
        {"type": "state", "data": {"order": None, "log": []},
         "schema": {"type": "object", "properties": {"approvals": {"type": "object"}, "policy": {
             "type": "object", "properties": {"max": {"type": "integer"}}}}}},
        {"type": "tool", "tool": TOOLS},
        {"type": "plan", "plan": list(plan)},
    ])


def test_a_call_to_a_tool_nothing_defines_is_a_warning_of_validate() -> None:
    """`_tool: "lokup"` is reported at the call's `_tool`, by validate as a warning; a defined tool is not."""
    ctx = context({"_tool": "lokup", "id": "x"}, {"_tool": "lookup", "id": "x"})
    problems = [(str(problem), problem.severity) for problem in validate(ctx)]
    assert problems == [("message 3: call 0 $._tool: unknown tool 'lokup': no tool message "
                         "defines it (it would run latent)", "warning")]


def test_a_tool_of_the_registry_is_defined_and_an_activity_of_the_name_runs() -> None:
    """SPEC 6.1 takes tools from the context and from code (a registry): a registry tool is not unknown. SPEC 6.3
    runs an activity registered under the tool's name: validate says so instead of "it would run latent"."""
    ctx = context({"_tool": "fromRegistry", "id": "x"}, {"_tool": "echo", "id": "x"})
    registry = {"fromRegistry": {"type": "object", "properties": {"id": {"type": "string"}}}}
    activities = Activities()
    activities.add(lambda call, tool, context: None, "echo")
    problems = [str(problem) for problem in validate(ctx, tools=registry, activities=activities)]
    assert problems == ["message 3: call 1 $._tool: unknown tool 'echo': no tool message defines it "
                        "(it runs the activity 'echo')"]


def test_a_call_naming_its_delegate_needs_no_tool() -> None:
    """A call with `_delegate` runs the request it names (014), tool or not: validate does not say it would run
    latent."""
    ctx = context({"_tool": "research", "_delegate": "anonymous", "topic": "x"})
    assert [str(problem) for problem in validate(ctx) if "research" in str(problem)] == []


def test_references_to_kinds_and_paths_nothing_writes() -> None:
    """Unknown kinds and paths are named; values, schema properties, open shapes and output paths count as
    written."""
    written = written_paths(context({"_tool": "lookup", "id": "x", "_outputPath": "†result.answer"}))
    assert reference_problem(written, "†input.customer.email") is None
    assert reference_problem(written, "†input.customer.phone") == "nothing writes †input.customer.phone"
    assert reference_problem(written, "†nope.x") == "unknown kind ¶nope: no message or output path writes it"
    assert reference_problem(written, "†state.order.id") is None  # null: may become anything
    assert reference_problem(written, "†state.approvals.refund") is None  # an object schema without properties
    assert reference_problem(written, "†state.policy.max") is None  # declared by the schema
    assert reference_problem(written, "†state.policy.min") == "nothing writes †state.policy.min"
    assert reference_problem(written, "†result.answer.text") is None  # an output path writes it
    # 011's fallback for what may be absent: while one alternative is written the others are not typos.
    assert reference_problem(written, "†input.nope || †input.id") is None
    assert reference_problem(written, "†input.nope || †input.no && †input.id") == ("nothing writes †input.nope; "
                                                                                  "nothing writes †input.no")


def test_a_dagger_string_in_a_meta_property_the_run_does_not_read_is_text() -> None:
    """SPEC 3 and 6.8: a call reads the expressions of its parameters and its `_output`. A `†` string in another
    meta-property (`_reasoningForCall`, `_instance`, one of the caller's own) is never read, so validate neither
    calls it malformed nor says nothing writes it, as the run runs the call without waiting for it."""
    calls = [{"_tool": "lookup", "id": "x", "_reasoningForCall": "†state..why", "_instance": "†a | †b"},
             {"_tool": "lookup", "id": "y", "_custom": {"note": "†nothing.writes"}, "_output": "†nope.x"},
             {"_tool": "lookup", "id": "†state..z", "_outputPath": "†state.order"}]
    said = [(p.path, p.reason) for p in validate(context(*calls)) if "call" in p.path]
    assert said == [("call 2 $.id", "expected a path segment after '.', found '.' at position 7"),
                    ("call 1 $._output", "unknown kind ¶nope: no message or output path writes it")]


def test_scopes_naming_a_kind_nothing_writes_are_warnings() -> None:
    """015: a scope is a kind. One no message or output path writes (a typo, or a `†` reference in its place)
    would give the call's context nothing of it without a word: validate warns at the scope; kinds the
    context has, or a call of the plan writes, are fine."""
    ctx = context({"_tool": "lookup", "id": "x", "_scopes": ["input", "stat", "†state", "state", "memo"]},
                  {"_tool": "lookup", "id": "y", "_outputPath": "†memo.note"})
    assert [(str(problem), problem.severity) for problem in validate(ctx) if "_scopes" in problem.path] == [
        ("message 3: call 0 $._scopes[1]: scope 'stat' names no kind any message or output "
         "path writes", "warning"),
        ("message 3: call 0 $._scopes[2]: scope '†state' names no kind any message or output "
         "path writes (a scope is a kind: 'state'?)", "warning"),
    ]


def test_an_approval_gate_is_not_a_reference_nothing_writes() -> None:
    """SPEC 6.8: a call waiting under `†state.approvals` awaits a person's approval, which nobody has written
    yet by design: validate does not call it a typo; a misspelt gate still is one."""
    ctx = Context([{"type": "tool", "tool": TOOLS}, {"type": "plan", "plan": [
        {"_tool": "lookup", "id": "†state.approvals.refund && †input.id"},
        {"_tool": "lookup", "id": "†state.aprovals.refund"}]}])
    assert [(p.path, p.reason) for p in validate(ctx) if p.severity == "warning"] == [
        ("call 0 $.id", "unknown kind ¶input: no message or output path writes it"),
        ("call 1 $.id", "unknown kind ¶state: no message or output path writes it")]


def test_parameters_the_tool_schema_refuses_but_not_references() -> None:
    """A wrong type, a missing required parameter and a wrong `_outputPath` const are refused; a `†` value is
    not judged (its value is not known before the run), a `††` literal is."""
    calls = [{"_tool": "lookup", "id": "†input.id", "count": 0, "_outputPath": "†state.other"},
             {"_tool": "lookup", "count": "††5"}]
    ctx = context(*calls)
    tools = {name: ToolDefinition(name, schema) for name, schema in TOOLS.items()}
    problems = call_problems(calls, tools, written_paths(ctx))
    assert [(p.call, p.field) for p in problems] == [(0, "$._outputPath"), (0, "$.count"), (1, "$"),
                                                     (1, "$.count")]
    assert "less than the minimum" in problems[1].reason
    assert "'id' is a required property" in problems[2].reason


def test_a_reference_where_the_schema_wants_another_type_is_not_judged() -> None:
    """A `†` value stands for what it will resolve to: a reference given for an integer (or an array) is not
    refused as a string; a literal of the wrong type still is."""
    calls = [{"_tool": "lookup", "id": "x", "count": "†input.count"}, {"_tool": "lookup", "id": 5}]
    tools = {name: ToolDefinition(name, schema) for name, schema in TOOLS.items()}
    problems = call_problems(calls, tools, written_paths(context(*calls)))
    assert [(p.call, p.field) for p in problems] == [(0, "$.count"), (1, "$.id")]
    assert problems[0].reason == "nothing writes †input.count"  # the reference's own problem, not its type
    assert "is not of type 'string'" in problems[1].reason


def test_the_moderation_example_has_no_call_problems(examples: Any) -> None:
    """Its calls pass `†state.rules` for an array parameter: nothing to refuse before the run."""
    from contextdeck.engine import load_document

    document = load_document(examples / "moderation_batch.json")
    assert call_problems(document.context[8]["plan"], {name: ToolDefinition(name, schema) for name, schema in
                         document.context[5]["tool"].items()}, written_paths(document.context)) == []


def test_the_refund_example_has_no_call_problems(examples: Any) -> None:
    """The bundled refund workflow calls only defined tools with acceptable parameters and known paths."""
    from contextdeck.engine import load_document

    document = load_document(examples / "refund_workflow.json")
    assert validate(document.context, document.solution) == []


_SEGMENTS = st.sampled_from(["a", "b", "c", "0"])
_PATHS = st.lists(_SEGMENTS, max_size=3)
_KINDS = st.sampled_from(["state", "input", "memo"])
_VALUES = st.recursive(st.none() | st.integers(0, 2), lambda inner: st.dictionaries(_SEGMENTS, inner, max_size=3),
                       max_leaves=6)
_SCHEMAS = st.recursive(st.just({"type": "object"}), lambda inner: st.builds(
    lambda properties: {"type": "object", "properties": properties}, st.dictionaries(_SEGMENTS, inner, max_size=2)),
    max_leaves=4)


def _expression(kind: str, path: list[str]) -> str:
    return "†" + ".".join((kind, *path))


@st.composite
def _documents(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 6))):
        message: dict[str, Any] = {"type": draw(_KINDS), "data": draw(_VALUES)}
        if draw(st.booleans()):
            message["schema"] = draw(_SCHEMAS)
        messages.append(message)
    calls = [{"_tool": "t", "x": _expression(draw(_KINDS), draw(_PATHS)),
              "_outputPath": _expression(draw(_KINDS), draw(_PATHS))} for _ in range(draw(st.integers(0, 4)))]
    position = draw(st.integers(0, len(messages)))
    return [*messages[:position], {"type": "plan", "plan": calls}, *messages[position:]]


@given(_documents(), st.lists(st.tuples(_KINDS, _PATHS), max_size=4))
def test_validate_reads_only_the_written_paths_its_plans_read(document: list[dict[str, Any]],
                                                               more: list[tuple[str, list[str]]]) -> None:
    """`plan_problems` keeps of the written paths only the kinds and first segments the plans read: every
    reference they hold gets the answer the whole tree gives (the warnings `validate` prints stay the same)."""
    plan = next(message for message in document if message["type"] == "plan")
    plan["plan"] += [{"_tool": "t", "x": _expression(kind, path)} for kind, path in more]
    ctx = Context(document)
    with parsed_once():
        plans = read_plans(ctx)
        kept = _written_for(ctx, plans)
        whole = written_paths(ctx)
        for call in plan["plan"]:
            assert reference_problem(kept, call["x"]) == reference_problem(whole, call["x"])


def test_a_group_where_a_call_goes_is_said_as_a_group_and_reads_nothing() -> None:
    """SPEC 6.10's groups are objects of one key holding calls. A group inside a group, or one with another key,
    is said as such (not as a call without `_tool`), and its members' references are not checked as reads of a
    call that will never run; `_tool: ""` is no call either, not an unknown tool."""
    member = {"_tool": "lookup", "id": "x", "_outputPath": "†nowhere.a"}
    ctx = context({"all": [{"any": [member]}]}, {"any": [member], "why": "x"}, {"_tool": "", "x": "†nothing.y"})
    assert [str(problem) for problem in validate(ctx)] == [
        "message 3: call 0 (?): call: pattern groups do not nest: a group's members are calls, not another group "
        "('any')",
        "message 3: call 1 (?): call: a pattern group is an object of one key, 'all', 'any' or 'race'; this one "
        "also has 'why'",
        "message 3: call 2 (?): call: a call must be an object with a non-empty string _tool"]
