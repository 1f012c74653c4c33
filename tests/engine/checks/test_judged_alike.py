"""`validate`, a run and the turn check refuse the same calls of a solution: what one refuses before it starts,
the other two refuse too (format.md §6; the turn check in debugger.md)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from exec_support import CLOCK
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import MISSING, Context, Document, Execution, Loop, Shape, flatten, turn_problems, validate
from contextdeck.engine.calls._outputs import MAX_RESULT_DEPTH
from contextdeck.engine.protocol._groups import read_plan
from contextdeck.engine.run._instancing import copied_from

STATE = {"type": "state", "state": {"a": 1, "s": "x"}}
ABSENT = object()
UNWRITABLE: Any = 0
for _ in range(MAX_RESULT_DEPTH + 10):  # a document holds it, a result may not nest so deep: the run cannot write it
    UNWRITABLE = [UNWRITABLE]


def _maybe(values: list[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(ABSENT), st.sampled_from(values))


@st.composite
def tools(draw: st.DrawFn) -> dict[str, Any]:
    """A tool `t` with an integer parameter (or integers a `push` made), maybe required, maybe a prescribed or a
    patterned output path, maybe required too, maybe rules of its calls' method, instance and reasons (a `false`
    rule, a `$defs` reference), those required too, and a typed `_output`: an integer, which `n` may read. Its choices
    are tuples, so that each strategy is made once (hypothesis caches those of hashable arguments)."""
    properties: dict[str, Any] = {"_tool": {"const": "t"},
                                  "n": {"type": ["integer", "array"], "items": {"type": "integer"}},
                                  "_output": {"type": "integer", "minimum": 0}}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    path = draw(st.sampled_from(("free", "const", "pattern")))
    if path == "const":
        properties["_outputPath"] = {"const": "†state.x"}
    elif path == "pattern":
        properties["_outputPath"] = {"type": "string", "pattern": "^†state\\."}
    method = draw(st.sampled_from(("free", "const", "enum", "no method")))  # SPEC 6.2: it rules the others too
    if method == "const":
        properties["_outputMethod"] = {"const": "push"}
    elif method == "no method":
        properties["_outputMethod"] = {"const": "pushh"}
    elif method == "enum":
        properties["_outputMethod"] = {"enum": ["merge", "push"]}
    if draw(st.booleans()):
        properties["_instance"] = {"enum": ["①"]}
    reasons = draw(st.sampled_from(("free", "typed", "false", "ref")))  # a rule as any schema may say one
    if reasons == "typed":
        properties["_reasoningForCall"] = {"type": "string", "maxLength": 3}
    elif reasons == "false":
        properties["_reasoningForCall"] = False
    elif reasons == "ref":
        properties["_reasoningForCall"] = {"$ref": "#/$defs/why"}
        schema["$defs"] = {"why": {"type": "string", "maxLength": 3}}
    required = draw(st.lists(st.sampled_from(("n", "_outputPath", "_reasoningForCall", "_outputMethod")), unique=True))
    if required:
        schema["required"] = required
    return {"type": "tool", "tool": {"t": schema}}


# Each meta-property's values, drawn or left out: made once, since a strategy made afresh per draw is checked
# afresh (most of a drawn call's time).
_PARAMETERS = tuple((key, _maybe(values)) for key, values in (
    ("n", [1, "x", "†state.a", "†", "†nope.q", "††lit", None, "†state.x", "†state.y", "†item.v"]),
    ("_outputPath", ["†state.x", "†state.y", "bad", 5, "†state.x || †state.y", "†state.", None]),
    ("_outputMethod", ["merge", "bad", 3, "push", None]),
    ("_instance", ["①", "③", 2, None]),
    ("_reasoningForCall", ["ok", "too long", 5]),
    ("_scopes", [["state"], "state", ["nope"], ["†state.a"]]),
    ("_delegate", ["https://example.com/d.json", "d.json", "", 5])))
_OUTPUTS = {"t": _maybe([1, -1, "x", "††1", "†state.a", {"v": 1}, [2], None, UNWRITABLE]),
            "u": _maybe([1, "†state.a", UNWRITABLE])}  # what `n` may read of it
_TOOLS = st.sampled_from(["t", "t", "u"])


@st.composite
def calls(draw: st.DrawFn) -> dict[str, Any]:
    """A call of `t` or of a tool nothing defines, with literal, referenced, escaped and malformed parameters and
    meta-properties, typed `_output`s (null, and one no document can hold, too) and delegates that cannot be used
    (the document is not saved: no file can be). A reference whose value breaks the schema (`†state.s` for an
    integer, or what `u`'s `_output` writes, which no schema describes) is left out: it is judged only as the run
    goes (format.md §6), which neither check can do."""
    call: dict[str, Any] = {"_tool": draw(_TOOLS)}
    for key, values in _PARAMETERS:
        value = draw(values)
        if value is not ABSENT:
            call[key] = value
    value = draw(_OUTPUTS[call["_tool"]])
    if value is not ABSENT:
        call["_output"] = value
    return call


entries = st.one_of(calls(), calls(), st.builds(lambda pattern, members: {pattern: members},
                                                st.sampled_from(["all", "any", "race"]),
                                                st.lists(calls(), min_size=1, max_size=2)))


# Instances (013): none, the state's (every call that touches state runs once per instance), or another kind's
# (only the calls that read it do). `③` is an instance a call may name that no data message has.
instances = st.sampled_from([[], [{"type": "state", "_instance": "①", "state": {"a": 2}},
                                  {"type": "state", "_instance": "②", "state": {"x": 3}}],
                             [{"type": "item", "_instance": "①", "item": {"v": 1}},
                              {"type": "item", "_instance": "②", "item": {"v": 2}}]])


def _refused_by_validate(context: list[dict[str, Any]], solution: dict[str, Any]) -> set[int]:
    """The calls refused, numbered as the solution's are written (a call repeated per instance once)."""
    return {int(found.group(1)) for problem in validate(Context(context), solution)
            if problem.severity == "error" and (found := re.match(r"solution, call (\d+)\b", problem.path))}


def _refused_by_the_turn_check(context: list[dict[str, Any]], solution: dict[str, Any]) -> set[int]:
    """The calls refused, numbered as the executor numbers them (a group's members in turn)."""
    _, units = flatten(solution["calls"])
    number = {(unit.entry, None if unit.pattern == "one" else position): index
              for unit in units for position, index in enumerate(unit.members)}
    document = Document(Context(context), Shape.ARRAY)
    return {number[int(found.group(1)), None if found.group(2) is None else int(found.group(2))]
            for problem in turn_problems(document, solution) if problem.severity == "error"
            and (found := re.match(r"\$\.calls\[(\d+)\](?:\.(?:all|any|race)\[(\d+)\])?", problem.path))}


def _refused_by_a_run(context: list[dict[str, Any]], solution: dict[str, Any]) -> set[int]:
    live = Context(context)
    asyncio.run(Execution(live, solution, clock=CLOCK).run())  # no activities: nothing runs, only refusals
    origins = copied_from(read_plan(solution["calls"]), Context(context))  # which call each copy is a copy of
    return {origins[message["_run"]["call"]][0] for message in live.messages[len(context):]
            if message.get("type") == "error"}


@settings(max_examples=300, deadline=None)
@given(tool=tools(), solution_calls=st.lists(entries, min_size=1, max_size=3), instanced=instances)
def test_validate_a_run_and_the_turn_check_refuse_the_same_calls(tool: dict[str, Any],
                                                                 solution_calls: list[dict[str, Any]],
                                                                 instanced: list[dict[str, Any]]) -> None:
    """Each call (a group's members each) is refused by all three or by none: its own problems, a group whose calls
    feed each other, a cycle; with instances, a call is refused when the run refuses any of its copies."""
    context = [tool, STATE, *instanced]
    solution = {"calls": solution_calls, "output": None}
    ran = _refused_by_a_run(context, solution)
    assert _refused_by_validate(context, solution) == ran
    assert _refused_by_the_turn_check(context, solution) == ran


@pytest.mark.parametrize("rule", [{"type": 5}, {"type": "string", "pattern": "["}])
def test_a_meta_property_rule_no_validator_can_use_refuses_every_call(rule: dict[str, Any]) -> None:
    """A tool whose rule of a meta-property cannot be used (format.md §6): its calls are refused by all three, a call
    that gives no such meta-property too (the turn check's `calls` item holds the rule)."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"},
                                                                            "_reasoningForCall": rule}}}}
    solution = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.x"},
                          {"_tool": "t", "_output": 2, "_outputPath": "†state.y", "_reasoningForCall": "why"}],
                "output": None}
    context = [tool, STATE]
    assert _refused_by_a_run(context, solution) == {0, 1}
    assert _refused_by_validate(context, solution) == {0, 1}
    assert _refused_by_the_turn_check(context, solution) == {0, 1}


def _tool_t(properties: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}, **properties},
                                           **schema}}}


@pytest.mark.parametrize(("tool", "given", "refused"), [
    (_tool_t({"_reasoningForCall": {"type": "string"}}, required=["_reasoningForCall"]), [None, "why"], {0}),
    (_tool_t({"_outputMethod": {"enum": ["set", "push"]}}, required=["_outputMethod"]), [None, "push"], {0}),
    (_tool_t({"_reasoningForCall": False}), [None, "why"], {1}),
    (_tool_t({"_reasoningForCall": {"$ref": "#/$defs/why"}}, **{"$defs": {"why": {"maxLength": 3}}}),
     ["why", "because"], {1}),
    (_tool_t({}, patternProperties={"^_r": {"type": "integer"}}), [None, "why"], set()),  # judged if declared only
    (_tool_t({"_reasoningForCall": {}}, patternProperties={"^_r": {"type": "integer"}}), [None, "why"], {1}),
    (_tool_t({"_scopes": {"$ref": "#/$defs/kinds"}}, **{"$defs": {"kinds": {"items": {"enum": ["state"]}}}}),
     [["state"], ["input"]], {1}),
    (_tool_t({"_outputPath": {"$ref": "#/$defs/p"}}, **{"$defs": {"p": {"pattern": "^†state\\.x0"}}}),
     ["†state.x0", "†state.y"], {1}),
])
def test_a_tools_meta_property_rules_are_read_as_its_whole_schema_says(tool: dict[str, Any], given: list[Any],
                                                                        refused: set[int]) -> None:
    """`required`, a `false` rule, a `$ref` into the tool's `$defs` (of `_scopes` and `_outputPath` too),
    `patternProperties`: the tool's schema judges the meta-properties of a call as the turn check's `calls` item
    does, so the three refuse the same calls."""
    key = next(iter(tool["tool"]["t"]["properties"].keys() - {"_tool"}), "_reasoningForCall")
    solution = {"calls": [{"_tool": "t", "_output": number, "_outputPath": f"†state.x{number}"}
                          | ({} if value is None else {key: value}) for number, value in enumerate(given)],
                "output": None}
    context = [tool, STATE]
    assert _refused_by_a_run(context, solution) == refused
    assert _refused_by_validate(context, solution) == refused
    assert _refused_by_the_turn_check(context, solution) == refused


def _errors_of_a_run(context: list[dict[str, Any]], solution: dict[str, Any]) -> list[str]:
    live = Context(context)
    asyncio.run(Execution(live, solution, clock=CLOCK).run())
    return [message["data"]["error"]["message"] for message in live.messages[len(context):]
            if message.get("type") == "error"]


@pytest.mark.parametrize("rules", [{"_reasoningForCall": {"type": 5}},
                                   {"_outputPath": {"type": "string", "pattern": "("}},
                                   {"_outputPath": {"type": "string", "pattern": "("}, "_reasoningForCall": {}}])
def test_a_tool_schema_no_validator_can_use_refuses_each_call_in_one_sentence(rules: dict[str, Any]) -> None:
    """Whichever meta-properties a call gives, a tool whose schema cannot be used refuses it in the sentence
    `validate` says at the tool (the fault placed in the whole schema)."""
    tool = _tool_t(rules)
    solution = {"calls": [{"_tool": "t", "_output": 1},
                          {"_tool": "t", "_output": 2, "_outputPath": "†state.y", "_reasoningForCall": "why"}],
                "output": None}
    context = [tool, STATE]
    said = [problem.reason for problem in validate(Context(context), solution) if problem.severity == "error"]
    at_tool = said[0]
    assert at_tool.startswith("tool 't': its schema cannot be used: ")
    assert "at #/properties/_" in at_tool
    assert said[1:] == [f"parameters: {at_tool}"] * 2
    assert _errors_of_a_run(context, solution) == [at_tool] * 2
    assert _refused_by_the_turn_check(context, solution) == {0, 1}


def test_an_output_rule_may_refer_to_the_tools_defs() -> None:
    """`_output: {"$ref": "#/$defs/o"}` is a schema like any other: validate finds the tool fine, and the run
    judges a result by it rather than refusing the call."""
    tool = _tool_t({"_output": {"$ref": "#/$defs/o"}}, **{"$defs": {"o": {"type": "integer"}}})
    solution = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.x"},
                          {"_tool": "t", "_output": "one", "_outputPath": "†state.y"}], "output": None}
    context = [tool, STATE]
    said = [problem.reason for problem in validate(Context(context), solution) if problem.severity == "error"]
    assert len(said) == 1
    assert "does not meet the _output schema of 't': $: 'one' is not of type 'integer'" in said[0]
    assert [error.split(";")[0] for error in _errors_of_a_run(context, solution)] == [
        "the result does not meet the _output schema of 't': $: 'one' is not of type 'integer'"]


def test_an_unknown_method_under_a_tools_enum_is_said_once() -> None:
    """A method that is no method is said as unknown, not again as one the tool's rule refuses."""
    tool = _tool_t({"_outputMethod": {"enum": ["merge", "push"]}})
    solution = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.x", "_outputMethod": "bad"}],
                "output": None}
    said = [problem.reason for problem in validate(Context([tool, STATE]), solution) if problem.severity == "error"]
    assert len(said) == 1
    assert "unknown _outputMethod 'bad'" in said[0]


def test_an_unknown_method_is_told_apart_by_its_code_not_its_words() -> None:
    """validate leaves a call's unknown method to the data check (said once) by the problem's code, never by its
    wording; a run still says it as an `outputMethod` error, and a tool's prescribed method that is no method
    (another problem of the same type) is not left out."""
    from contextdeck.engine import Activities
    from contextdeck.engine.calls._calls import UNKNOWN_METHOD, plan_call

    solution = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.x", "_outputMethod": "bad"}],
                "output": None}
    context = [_tool_t({}), STATE]
    [problem] = plan_call(0, solution["calls"][0], {}, Activities({})).problems
    assert (problem.type, problem.code) == ("outputMethod", UNKNOWN_METHOD)
    said = [p.reason for p in validate(Context(context), solution) if p.severity == "error"]
    assert len(said) == 1
    live = Context(context)
    asyncio.run(Execution(live, solution, clock=CLOCK).run())
    assert live.messages[-1]["data"]["error"]["type"] == "outputMethod"
    prescribed = {"_tool": "t", "_output": 1, "_outputPath": "†state.x"}
    tool = _tool_t({"_outputMethod": {"const": "pushh"}})
    [other] = [p for p in validate(Context([tool, STATE]), {"calls": [prescribed], "output": None})
               if p.severity == "error"]
    assert "prescribes _outputMethod 'pushh'" in other.reason


def test_a_prescribed_method_that_is_no_method_refuses_a_call_that_gives_none() -> None:
    """A tool's `const` `_outputMethod` is the method of a call that gives none (format.md §2): one that is no method
    refuses the call, as an unknown method the call gives would, rather than run it `set`."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"},
                                                                            "_outputMethod": {"const": "pushh"}}}}}
    solution = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.x"}], "output": None}
    context = [tool, STATE]
    assert _refused_by_a_run(context, solution) == {0}
    assert _refused_by_validate(context, solution) == {0}
    assert _refused_by_the_turn_check(context, solution) == {0}


def test_a_tools_const_instance_is_checked_never_filled() -> None:
    """A tool's `const` `_instance` is not filled into a call that gives none (format.md §2): the call runs globally,
    its output without `_instance`; copied per instance (013), the copy for any other instance is refused by all
    three checks."""
    tool = _tool_t({"_instance": {"const": "①"}, "_output": {}})
    solution = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.x"}], "output": None}
    live = Context([tool, STATE])
    asyncio.run(Execution(live, solution, clock=CLOCK).run())
    (written,) = live.messages[2:]
    assert (written["kind"], written["data"], "_instance" in written) == ("state", {"x": 1}, False)
    assert _refused_by_validate([tool, STATE], solution) == _refused_by_the_turn_check([tool, STATE], solution) == set()
    instanced = [tool, STATE, {"type": "state", "_instance": "①", "state": {"a": 2}},
                 {"type": "state", "_instance": "②", "state": {"a": 3}}]
    solution = {"calls": [{"_tool": "t", "_output": "†state.a", "_outputPath": "†state.x"}], "output": None}
    assert _refused_by_a_run(instanced, solution) == {0}
    assert _refused_by_the_turn_check(instanced, solution) == {0}
    said = [problem.reason for problem in validate(Context(instanced), solution) if problem.severity == "error"]
    assert said == ["call: the tool prescribes _instance '①', not '②' (for instance ②)"]


def test_a_solution_written_as_an_array_of_calls_is_checked_as_its_calls() -> None:
    """An array solution is its calls (format.md §8): validate says their malformed output path and unknown method,
    as it does for the same calls under `calls`, and a run refuses both."""
    calls = [{"_tool": "t", "_output": 1, "_outputPath": "†state."},
             {"_tool": "t", "_output": 2, "_outputPath": "†state.b", "_outputMethod": "bogus"}]
    context = [{"type": "state", "data": {"k": 1}}, {"type": "tool", "tool": {"t": {"type": "object"}}}]
    said = [(problem.path, problem.reason) for problem in validate(Context(context), calls)]
    assert said == [
        ("solution, call 0 $._outputPath", "expected a path segment after '.', found the end at position 7"),
        ("solution, call 1 $._outputMethod", "unknown _outputMethod 'bogus'; expected one of set, merge, assign, "
                                             "push, concat")]
    assert said == [(problem.path, problem.reason)
                    for problem in validate(Context(context), {"calls": calls, "output": None})]
    assert _refused_by_a_run(context, {"calls": calls, "output": None}) == {0, 1}
    live = Context(context)
    asyncio.run(Execution(live, calls, clock=CLOCK).run())
    assert [message["data"]["error"]["type"] for message in live.messages[2:]] == ["expression", "outputMethod"]


ON_DEMAND = {"type": "advisor", "id": "onDemand", "role": "Ask me",
             "schema": {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}}


def test_consult_advisor_calls_are_judged_by_the_tool_the_request_offers() -> None:
    """An on-demand advisor's ConsultAdvisor tool (017) is the request's for all three: a call naming no such advisor
    and advice that breaks the advisor's schema are refused by each; good advice is written."""
    calls = [{"_tool": "ConsultAdvisor", "advisor": "onDemand", "_output": {"id": "onDemand", "note": "fine"},
              "_outputPath": "†state.advice"},
             {"_tool": "ConsultAdvisor", "advisor": "ghost", "_output": {"id": "ghost"}, "_outputPath": "†state.b"},
             {"_tool": "ConsultAdvisor", "advisor": "onDemand", "_output": {"id": "onDemand", "note": 5},
              "_outputPath": "†state.c"}]
    solution = {"calls": calls, "output": None}
    context = [ON_DEMAND, STATE]
    assert _refused_by_a_run(context, solution) == {1, 2}
    assert _refused_by_validate(context, solution) == {1, 2}
    assert _refused_by_the_turn_check(context, solution) == {1, 2}
    said = [problem.reason for problem in validate(Context(context), solution)]
    assert said == ["parameters: invalid parameters for 'ConsultAdvisor': $.advisor: 'ghost' is not one of "
                    "['onDemand']",
                    "output: the result does not meet the _output schema of 'ConsultAdvisor': $.note: 5 is not of "
                    "type 'string'; the result: {\"id\":\"onDemand\",\"note\":5}"]
    live = Context(context)
    asyncio.run(Execution(live, solution, clock=CLOCK).run())
    assert live.messages[2]["data"] == {"advice": {"id": "onDemand", "note": "fine"}}
    planned = Context([ON_DEMAND, {"type": "plan", "plan": calls[:1]}])
    assert validate(planned) == []  # a plan's call of the offered tool calls no unknown tool


def test_the_turn_check_refuses_what_a_run_refuses_before_it_starts() -> None:
    """A malformed output path, an unknown method, scopes that are not kinds, a `††` literal that breaks the schema
    and an output path the tool requires: each at its field. A prescribed path the call leaves out is filled."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {
        "_tool": {"const": "t"}, "n": {"type": "integer"}, "_outputPath": {"const": "†state.x"}},
        "required": ["_outputPath"]}}}
    other = {"type": "tool", "tool": {"u": {"type": "object", "properties": {"_tool": {"const": "u"}},
                                            "required": ["_outputPath"]}}}
    document = Document(Context([tool, other, STATE]), Shape.ARRAY)
    turn = {"calls": [{"_tool": "t", "_outputMethod": "bad"}, {"_tool": "t", "n": "††1"},
                      {"_tool": "t", "_scopes": "state"}, {"_tool": "u", "_outputPath": "†state."},
                      {"_tool": "u"}, {"_tool": "t", "n": 1}], "output": None}
    assert [(problem.path, problem.severity) for problem in turn_problems(document, turn)] == [
        ("$.calls[0]._outputMethod", "error"), ("$.calls[1].n", "error"), ("$.calls[2]._scopes", "error"),
        ("$.calls[3]._outputPath", "error"), ("$.calls[4]._outputPath", "error")]


def test_the_turn_check_refuses_a_cycle_and_a_group_that_feeds_itself() -> None:
    """Calls that feed each other in a circle, and calls of one group that feed each other, are refused where
    they are, as a run's set-up refuses them."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}, "n": {}}}}}
    document = Document(Context([tool, STATE]), Shape.ARRAY)
    turn = {"calls": [{"_tool": "t", "n": "†state.y", "_outputPath": "†state.x"},
                      {"_tool": "t", "n": "†state.x", "_outputPath": "†state.y"},
                      {"all": [{"_tool": "t", "_outputPath": "†state.z"}, {"_tool": "t", "n": "†state.z"}]}]}
    assert [(problem.path, problem.reason.split(":")[0]) for problem in turn_problems(document, turn)] == [
        ("$.calls[0]", "cycle"), ("$.calls[1]", "cycle"), ("$.calls[2].all[0]", "group"),
        ("$.calls[2].all[1]", "group")]


def test_the_turn_check_refuses_a_delegate_a_run_cannot_use_at_its_field(tmp_path: Any) -> None:
    """A URL, a file that is not there, a delegate outside the document's folder and one that is not a string are
    refused at the call's `_delegate`, as a run's set-up refuses them; a file next to the document is taken."""
    (tmp_path / "helper.json").write_text('{"context": []}', encoding="utf-8")
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}}}}}
    document = Document(Context([tool, STATE]), Shape.ARRAY, path=tmp_path / "doc.json")
    turn = {"calls": [{"_tool": "t", "_delegate": "https://example.com/d.json"}, {"_tool": "t", "_delegate": "gone"},
                      {"_tool": "t", "_delegate": "../outside.json"}, {"_tool": "t", "_delegate": 5},
                      {"_tool": "t", "_delegate": "helper"}]}
    found = turn_problems(document, turn)
    assert [(problem.path, problem.severity) for problem in found] == [
        (f"$.calls[{index}]._delegate", "error") for index in range(4)]
    assert "URL" in found[0].reason


def test_the_turn_check_judges_a_typed_output_as_the_run_does() -> None:
    """A latent call's typed `_output` that breaks the tool's `_output` schema is refused at `_output` with the
    run's own words; one that holds a reference is judged when the run resolves it, and an `_output` given to a
    call an activity runs is not the call's result (a warning says so)."""
    output = {"type": "object", "properties": {"v": {"type": "integer"}}, "required": ["v"]}
    tool = {"type": "tool", "tool": {
        "t": {"type": "object", "properties": {"_tool": {"const": "t"}, "_output": output}},
        "e": {"type": "object", "_activity": "act", "properties": {"_tool": {"const": "e"}, "_output": output}}}}
    document = Document(Context([tool, STATE]), Shape.ARRAY)
    turn = {"calls": [{"_tool": "t", "_output": {"v": "x"}}, {"_tool": "t", "_output": "††1"},
                      {"_tool": "t", "_output": {"v": "†state.a"}}, {"_tool": "t", "_output": {"v": 2}},
                      {"_tool": "e", "_output": 3}]}
    found = [problem for problem in turn_problems(document, turn) if problem.severity == "error"]
    assert [problem.path for problem in found] == ["$.calls[0]._output", "$.calls[1]._output"]
    assert found[0].reason.startswith("the result does not meet the _output schema of 't': $.v:")
    assert [(problem.path, problem.reason.split(":")[0]) for problem in turn_problems(document, turn)
            if problem.severity == "warning"] == [("$.calls[4]._output", "an explicit call's result is what its "
                                                                          "activity returns (002")]
    assert {problem.path for problem in validate(Context([tool, STATE]), turn) if problem.severity == "error"} == {
        "solution, call 0 (t)", "solution, call 1 (t)"}


def test_a_null_output_and_one_no_document_can_take_are_judged_up_front() -> None:
    """A latent call's `_output: null` is its result (not a missing one), refused by the tool's `_output` schema
    when the call writes it; an `_output` too deep to be written is refused for a tool nothing defines too. The run
    refuses both before it starts, and `validate` and the turn check say so, at `_output`."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {
        "_tool": {"const": "t"}, "_output": {"type": "integer"}}}}}
    context = [tool, STATE]
    turn = {"calls": [{"_tool": "t", "_output": None, "_outputPath": "†state.x"},
                      {"_tool": "u", "_output": UNWRITABLE, "_outputPath": "†state.y"},
                      {"_tool": "t", "_output": None}, {"_tool": "u", "_output": None, "_outputPath": "†state.z"}],
            "output": None}
    found = [problem for problem in turn_problems(Document(Context(context), Shape.ARRAY), turn)
             if problem.severity == "error"]
    assert [problem.path for problem in found] == ["$.calls[0]._output", "$.calls[1]._output"]
    assert "None is not of type 'integer'" in found[0].reason
    assert "nested deeper than" in found[1].reason
    assert _refused_by_validate(context, turn) == {0, 1}
    live = Context(context)
    report = asyncio.run(Execution(live, turn, clock=CLOCK).run())
    assert report.ran == (2, 3)  # the other two are refused before they start
    assert len(report.errors) == 2


def test_a_call_repeated_per_instance_is_judged_as_the_run_repeats_it() -> None:
    """A call without `_instance` that touches an instanced kind runs once per instance (013): a cycle that only its
    copy for ① closes with a call naming ① is refused by the turn check too, and `validate` names each call as the
    plan writes it (not as the run numbers the copies), with the instances it is refused for."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}, "n": {}}}}}
    context = [tool, STATE, {"type": "state", "_instance": "①", "state": {"a": 2}},
               {"type": "state", "_instance": "②", "state": {"a": 3}}]
    turn = {"calls": [{"_tool": "t", "n": "†state.x", "_outputPath": "†state.y"},
                      {"_tool": "t", "n": "†state.y", "_outputPath": "†state.x", "_instance": "①"},
                      {"_tool": "t", "_outputMethod": "push", "_scopes": "state"}], "output": None}
    found = turn_problems(Document(Context(context), Shape.ARRAY), turn)
    assert [(problem.path, problem.reason.split(":")[0]) for problem in found] == [
        ("$.calls[0]", "cycle"), ("$.calls[1]", "cycle"), ("$.calls[2]._scopes", "_scopes must be a list of kinds")]
    assert found[0].reason.endswith("(for instance ①)")
    assert not found[1].reason.endswith(")")
    said = [(problem.path, problem.reason.endswith("(for instance ①)"))
            for problem in validate(Context(context), turn) if problem.severity == "error"]
    assert said == [("solution, call 0 (t)", True), ("solution, call 1 (t)", False),
                    ("solution, call 2 (t)", False)]


def test_a_loop_checks_a_turn_with_its_runs_delegate_folder(tmp_path: Any) -> None:
    """A loop's turn check finds delegate files where its run does (a delegate session's folder is its request
    file's), so a turn it would run is not refused for a document that has no file of its own."""
    (tmp_path / "helper.json").write_text('{"context": []}', encoding="utf-8")
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}}}}}
    document = Document(Context([tool, STATE]), Shape.ARRAY)
    turn = {"calls": [{"_tool": "t", "_delegate": "helper"}]}
    assert [problem.path for problem in turn_problems(document, turn)] == ["$.calls[0]._delegate"]
    assert Loop(document, base=tmp_path).check_turn(turn) == []


def _output_warnings_of_validate(context: list[dict[str, Any]], solution: dict[str, Any]) -> set[tuple[int, str, str]]:
    return {(int(found.group(1)), found.group(2), problem.reason) for problem in validate(Context(context), solution)
            if problem.severity == "warning"
            and (found := re.match(r"solution, call (\d+) \$\.(_output|_outputPath)$", problem.path))}


def _output_warnings_of_the_turn_check(context: list[dict[str, Any]],
                                       solution: dict[str, Any]) -> set[tuple[int, str, str]]:
    _, units = flatten(solution["calls"])
    number = {(unit.entry, None if unit.pattern == "one" else position): index
              for unit in units for position, index in enumerate(unit.members)}
    document = Document(Context(context), Shape.ARRAY)
    return {(number[int(found.group(1)), None if found.group(2) is None else int(found.group(2))], found.group(3),
             problem.reason)
            for problem in turn_problems(document, solution) if problem.severity == "warning"
            and (found := re.match(r"\$\.calls\[(\d+)\](?:\.(?:all|any|race)\[(\d+)\])?\.(_output|_outputPath)$",
                                   problem.path))}


@settings(max_examples=300, deadline=None)
@given(tool=tools(), solution_calls=st.lists(entries, min_size=1, max_size=3), instanced=instances,
       more=st.sampled_from([[], [{"type": "tool", "tool": {"e": {"type": "object", "_activity": "u"}}}],
                             [{"type": "tool", "tool": {"u": {"type": "object", "_delegate": "d.json"}}}],
                             [{"type": "plan", "mode": "lazy", "plan": []}]]))
def test_validate_and_the_turn_check_say_the_same_of_each_output_given(tool: dict[str, Any],
                                                                        solution_calls: list[dict[str, Any]],
                                                                        instanced: list[dict[str, Any]],
                                                                        more: list[dict[str, Any]]) -> None:
    """An `_output` given to a delegated or an explicit call, or to a latent one under a lazy plan or with a
    branching output path: both say the same warning of the same call (one piece sorts the calls for both)."""
    context = [tool, STATE, *instanced, *more]
    solution = {"calls": solution_calls, "output": None}
    assert _output_warnings_of_validate(context, solution) == _output_warnings_of_the_turn_check(context, solution)


# Plan entries that are no call, each with what all three say of it (format.md §6, execution.md's patterns).
NO_CALLS = [
    ({"all": "x"}, "$.calls[0].all", "a pattern group's 'all' must be an array of calls, not \"x\""),
    ({"race": {"n": 1}}, "$.calls[0].race", "a pattern group's 'race' must be an array of calls, not {\"n\": 1}"),
    (5, "$.calls[0]", "a call must be an object"),
    ({"any": [5]}, "$.calls[0].any[0]", "a call must be an object"),
    ({"n": 1}, "$.calls[0]", "a call must be an object with a non-empty string _tool"),
    ({"_tool": ""}, "$.calls[0]", "a call must be an object with a non-empty string _tool"),
    ({"all": [{"any": [{"_tool": "t"}]}]}, "$.calls[0].all[0]",
     "pattern groups do not nest: a group's members are calls, not another group ('any')"),
    ({"any": [{"_tool": "t"}], "why": 1}, "$.calls[0]",
     "a pattern group is an object of one key, 'all', 'any' or 'race'; this one also has 'why'"),
]


@pytest.mark.parametrize(("entry", "where", "reason"), NO_CALLS)
def test_validate_a_run_and_the_turn_check_say_a_plan_entry_that_is_no_call_alike(entry: Any, where: str,
                                                                                   reason: str) -> None:
    """A plan entry that is no call is said in the same words by `validate`, a run's refusal and the turn check:
    a group whose members are no list as that group (at the group's field in a turn), a group where a call goes as
    a group."""
    context = [{"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}}}}}]
    solution = {"calls": [entry], "output": None}
    said = [problem.reason.removeprefix("call: ") for problem in validate(Context(context), solution)
            if problem.path.startswith("solution, call 0")]
    live = Context(context)
    asyncio.run(Execution(live, solution, clock=CLOCK).run())
    refused = [message["data"]["error"]["message"] for message in live.messages[len(context):]
               if message.get("type") == "error"]
    document = Document(Context(context), Shape.ARRAY)
    turned = [(problem.path, problem.reason) for problem in turn_problems(document, solution)]
    assert said == [reason]
    assert refused == [reason]
    assert turned == [(where, reason)]


ADVISOR = {"type": "advisor", "id": "risk", "on": "request", "role": "r", "isInstanced": False,
           "schema": {"type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}}


@pytest.mark.parametrize("advice", [
    MISSING, [], "x", [{"id": "risk", "thought": "t"}], [{"id": "risk", "thought": "t", "calls": "{bad"}],
    [{"id": "risk", "thought": "t", "calls": "{\"deploy\": 10}"}], [{"id": "risk"}], [{"id": "nope", "thought": "t"}],
    [5], [{"id": "risk", "thought": "t"}, {"id": "risk", "thought": 3}],
])
@pytest.mark.parametrize("on", ["request", "start", None])
def test_validate_and_the_turn_check_say_the_same_of_a_solutions_advice(advice: Any, on: Any) -> None:
    """017's advice is judged by one piece: the turn check says of a turn's `advisors` what validate says of the
    same solution, at `$` for `solution`, with the same severity (format.md §8: left out, a warning)."""
    context = [{**ADVISOR, "on": on}, {"type": "text", "text": "go"}]
    solution = {"calls": [], "output": None} | ({} if advice is MISSING else {"advisors": advice})
    said = [(problem.path.replace("solution", "$", 1), problem.reason, problem.severity)
            for problem in validate(Context(context), solution) if problem.path.startswith("solution.advisors")]
    turned = [(problem.path, problem.reason, problem.severity)
              for problem in turn_problems(Document(Context(context), Shape.REQUEST), solution)]
    assert turned == said
