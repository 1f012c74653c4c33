"""A turn as data: checked against the composed request schema, appended as a plan, concluded once."""

import asyncio

import pytest
from chapter_support import chapter
from exec_support import CLOCK, registry

from contextdeck.engine import (
    MISSING,
    Context,
    Document,
    Loop,
    LoopStatus,
    Remove,
    Shape,
    TurnRefused,
    compose_request,
    conclude,
    current_turn,
    solution_problem,
    turn_change,
    turn_problems,
    validate,
)
from contextdeck.engine.experiments import request_of, run_start
from contextdeck.engine.protocol._groups import read_plan
from contextdeck.engine.request._request import version_problem
from contextdeck.engine.run._setup import set_up


def problems(document: Document, turn: object) -> list[tuple[str, str, str]]:
    return [(p.path, p.reason, p.severity) for p in turn_problems(document, turn)]


def test_a_valid_turn_has_no_problems_and_meta_may_be_left_out() -> None:
    """012's replanned turn meets the composed schema; `meta` (002 asks it of a model) is not asked of a person."""
    document = chapter("012_handling_failure.json")
    assert problems(document, {"calls": [{"_tool": "reportFailure", "error": "†state.error"}],
                               "output": {"status": "Failed"}}) == []
    assert problems(document, {"output": {"status": "Success"}}) == []  # no calls: none
    assert problems(document, [{"_tool": "confirmOrder", "receipt": 1}]) == []  # an array is its calls (202)


def test_each_problem_says_what_and_where() -> None:
    """Output and parameters are checked where they are, a parameter's own schema before the † alternative."""
    document = chapter("012_handling_failure.json")
    found = problems(document, {"calls": [{"receipt": 1}, {"_tool": "processPayment", "amount": "fifty"}],
                                "output": {"status": "Done", "extra": 1}})
    assert found == [
        ("$.calls[0]", "a call must be an object with a non-empty string _tool", "error"),
        ("$.calls[1].amount", "'fifty' is not of type 'number'", "error"),
        ("$.output", "Additional properties are not allowed ('extra' was unexpected)", "error"),
        ("$.output.status", "'Done' is not one of ['Success', 'Failed']", "error"),
    ]


def test_a_call_to_a_tool_not_offered_is_a_warning_and_groups_are_checked_by_member() -> None:
    """SPEC 6.7: a call to a tool nothing defines runs latent (a warning); group members are checked too."""
    document = chapter("012_handling_failure.json")
    found = problems(document, {"calls": [{"_tool": "sendFax"},
                                          {"any": [{"_tool": "processPayment", "amount": True}]}]})
    assert found[0][0] == "$.calls[0]._tool"
    assert found[0][2] == "warning"
    assert "offers no tool 'sendFax' (it offers: confirmOrder, processPayment, reportFailure)" in found[0][1]
    assert found[1] == ("$.calls[1].any[0].amount", "True is not of type 'number'", "error")


def test_a_call_to_an_activity_of_the_tools_name_is_not_said_to_run_latent() -> None:
    """003: an activity registered under the tool's name makes the call explicit, offered by the request or not:
    the warning says that it runs the activity, not that it runs latent."""
    document = chapter("012_handling_failure.json")
    turn = {"calls": [{"_tool": "sendFax", "to": "x"}]}
    warning = turn_problems(document, turn, activities=registry(sendFax=lambda call, tool, context: None))[0]
    assert warning.severity == "warning"
    assert warning.reason.endswith("; the call runs the activity 'sendFax'")
    assert problems(document, turn)[0][1].endswith("; the call will run latent")


def test_a_call_naming_its_delegate_is_not_said_to_run_latent() -> None:
    """A call with `_delegate` runs the request it names (014), whatever tools the request offers: no warning
    that it would run latent."""
    document = chapter("012_handling_failure.json")
    assert problems(document, {"calls": [{"_tool": "research", "_delegate": "anonymous", "topic": "x"}]}) == []


def test_a_closed_tools_schema_judges_parameters_never_the_calls_meta_properties() -> None:
    """SPEC 6.1 and 002: the tool's schema judges the parameters; meta-properties augment any call (017's
    `_reasoningForCall`, an `_outputPath`), so a tool with `additionalProperties: false` refuses an unknown
    parameter in a turn, as run does, but not the meta-properties run accepts."""
    tool = {"type": "object", "properties": {"days": {"type": "integer"}}, "additionalProperties": False}
    document = Document(Context([{"type": "tool", "tool": {"delay": tool}}]))
    call = {"_tool": "delay", "days": 2, "_reasoningForCall": "risk", "_outputPath": "†state.delay",
            "_instance": "①", "_scopes": ["state"]}
    assert problems(document, {"calls": [call]}) == []
    assert problems(document, {"calls": [{**call, "hours": 3}]}) == [
        ("$.calls[0]", "Additional properties are not allowed ('hours' was unexpected)", "error")]


def test_a_turn_that_is_not_a_solution_is_one_problem() -> None:
    document = Document(Context([]))
    assert problems(document, "calls please")[0][1].startswith("a turn is a solution")
    assert problems(document, {"calls": {}}) == [("$", "the turn's 'calls' must be an array of calls", "error")]


def test_the_loop_refuses_an_invalid_turn_and_changes_nothing() -> None:
    """take_turn checks the turn first: TurnRefused with every error, the context and the solution untouched."""
    loop = Loop(chapter("012_handling_failure.json"), clock=CLOCK)
    asyncio.run(loop.run())
    before = loop.document.context.messages
    with pytest.raises(TurnRefused) as refused:
        loop.take_turn({"output": {"status": "Done"}})
    assert [p.path for p in refused.value.problems] == ["$.output.status"]
    assert loop.document.context.messages == before
    assert loop.document.solution is None
    assert loop.status is LoopStatus.WAITING_FOR_TURN


def test_a_turn_taken_is_the_documents_own_copy() -> None:
    """The loop copies the turn it takes: the caller changing its object after changes neither the plan message nor
    the call that runs, whose output's `_call` says the destination it was written to."""
    loop = Loop(Document(Context([{"type": "text", "role": "user", "text": "go"}]), Shape.ARRAY), clock=CLOCK)
    asyncio.run(loop.run())
    turn = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†state.q"}], "output": None}
    loop.take_turn(turn)
    turn["calls"][0]["_outputPath"] = "†state.other"
    asyncio.run(loop.run())
    plan, output = loop.document.context.messages[1:3]
    assert plan["plan"][0]["_outputPath"] == "†state.q"
    assert (output["_outputPath"], output["_call"]["_outputPath"]) == ("†state.q", "†state.q")


def test_a_turn_the_document_could_not_hold_is_refused_not_taken() -> None:
    """A turn (a model's answer, parsed) nested deeper than a document holds would be appended as a plan message
    the context refuses: the turn check refuses it first, at the call (an array of calls too), and the loop takes
    nothing of it."""
    deep: object = 0
    for _ in range(300):
        deep = [deep]
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"}}}}}
    loop = Loop(Document(Context([tool]), Shape.ARRAY), clock=CLOCK)
    turn = {"calls": [{"_tool": "t", "_output": deep}]}  # no destination: a run would write nothing of it
    reason = "the document could not hold the turn: nesting deeper than 254 levels"
    assert problems(loop.document, turn) == [("$.calls[0]._output…", reason, "error")]
    assert problems(loop.document, turn["calls"]) == [("$[0]._output…", reason, "error")]
    with pytest.raises(TurnRefused):
        loop.take_turn(turn)
    assert loop.document.context.messages == [tool]


def test_turn_change_appends_the_plan_once_and_keeps_a_bare_contexts_output() -> None:
    """A request keeps its output in the solution; a bare context in the plan message; a plan already there
    is not appended again; a lazy plan's mode and the model's audit are carried."""
    request = chapter("012_handling_failure.json")
    turn = {"calls": [{"_tool": "reportFailure", "error": "†state.error"}], "output": {"status": "Failed"}}
    change = turn_change(request, turn)
    assert change.plan == {"type": "plan", "plan": turn["calls"]}
    assert change.solution == turn
    bare = Document(Context([{"type": "plan", "plan": [], "mode": "lazy"}]))
    assert bare.shape is not Shape.REQUEST
    change = turn_change(bare, turn, {"model": "fake"})
    assert change.plan == {"type": "plan", "plan": turn["calls"], "mode": "lazy", "output": {"status": "Failed"},
                           "_model": {"model": "fake"}, "_turnMeta": False}
    assert change.solution is MISSING
    bare.context.append(change.plan)
    assert turn_change(bare, turn).plan is None
    assert current_turn(bare) == turn


def test_a_turns_advice_stays_on_its_plan_unseen_by_the_model() -> None:
    """017: the advice a turn gives before its calls is kept on the plan message as `_advisors`, so it outlives the
    cleared solution; as audit metadata it is not in the request the model reads next."""
    advisor = {"type": "advisor", "id": "risk", "on": "request", "role": "Weigh the risks.",
               "schema": {"type": "object", "properties": {"thought": {"type": "string"}}}}
    tool = {"type": "tool", "tool": {"delay": {"type": "object", "properties": {}}}}
    loop = Loop(Document(Context([advisor, tool]), Shape.ARRAY), clock=CLOCK)
    asyncio.run(loop.run())
    advice = [{"id": "risk", "thought": "High risk of regression", "calls": "{\"delay\": 95}"}]
    loop.take_turn({"advisors": advice, "calls": [{"_tool": "delay"}], "output": None})
    plan = loop.document.context.messages[-1]
    assert (plan["plan"], plan["_advisors"]) == ([{"_tool": "delay"}], advice)
    assert "High risk" not in str(compose_request(loop.document.context).messages)


def test_a_users_text_after_the_plan_takes_its_output_away() -> None:
    """A bare context's turn is its last plan, output and all, until a user's text after it asks something new."""
    calls = [{"_tool": "note", "_outputPath": "†state.n", "_output": 1}]
    bare = Document(Context([{"type": "plan", "plan": calls, "output": "done"},
                             {"type": "text", "role": "assistant", "text": "Done."}]))
    assert current_turn(bare) == {"calls": calls, "output": "done"}
    bare.context.append({"type": "text", "text": "And again?"})  # a text's role is the user's unless it says
    assert current_turn(bare) == {"calls": calls, "output": None}


def test_a_refused_output_is_concluded_once() -> None:
    """The error message for a refused output is given once: concluding the same turn again appends nothing."""
    document = chapter("012_handling_failure.json")
    turn = {"calls": [], "output": {"status": "Done"}}
    first = conclude(document, turn, CLOCK())
    assert not first.finished
    assert first.error is not None
    assert first.error["data"]["error"]["type"] == "output"
    document.context.append(first.error)
    again = conclude(document, turn, CLOCK())
    assert (again.problem, again.error) == (first.problem, None)
    assert conclude(document, {"output": {"status": "Failed"}}, CLOCK()).finished
    assert not conclude(document, {"output": None}, CLOCK()).finished


def test_validate_checks_final_outputs_against_the_request_schema() -> None:
    """The solution's output and a plan message's output (a turn's) are checked, the plan's with its message index."""
    document = chapter("012_handling_failure.json")
    document.solution["output"] = {"status": "Done"}
    document.context.append({"type": "plan", "plan": [], "output": {"status": "Nope"}})
    found = [str(p) for p in validate(document.context, document.solution, schema=document.schema)]
    assert "solution.output.status: 'Done' is not one of ['Success', 'Failed']" in found
    assert "message 4: output.status: 'Nope' is not one of ['Success', 'Failed']" in found
    document.solution["output"] = {"status": "Failed"}
    document.context.apply(Remove(len(document.context) - 1))
    found = [str(p) for p in validate(document.context, document.solution, schema=document.schema)]
    assert not [text for text in found if "output" in text]


def test_validate_says_once_that_the_request_output_schema_cannot_be_used() -> None:
    """An output schema no validator can use (002 composes it into the request the model receives) is one
    problem of the document's `schema`, said with or without an output to check, never once per output."""
    document = chapter("012_handling_failure.json")
    document.schema["properties"]["output"]["properties"]["status"]["type"] = "text"
    reason = ("the request's output schema cannot be used: invalid schema at #/properties/status/type: 'text' is not "
              "valid under any of the given schemas")
    for output in (None, {"status": "Failed"}):
        document.solution["output"] = output
        found = [(p.path, p.reason) for p in validate(document.context, document.solution, schema=document.schema)]
        assert [problem for problem in found if "schema" in problem[1]] == [("schema", reason)]
    assert [(p.path, p.reason) for p in validate(document.context, schema=5)] == [
        ("schema", "the request's output schema cannot be used: invalid schema: expected an object, got number")]


def test_a_document_whose_solution_is_no_solution_is_refused_by_the_loop() -> None:
    """SPEC 1: the loop takes a document's own solution as its first turn; one that is not a solution (a number,
    `calls` that are not an array) is a `TurnRefused` naming `solution`, never a TypeError midway, and the
    document gains no plan message."""
    document = chapter("012_handling_failure.json")
    size = len(document.context)
    for solution, where in ((5, "solution"), ({"calls": {}, "output": None}, "solution.calls")):
        document.solution = solution
        with pytest.raises(TurnRefused) as refused:
            Loop(document, clock=CLOCK)
        assert [problem.path for problem in refused.value.problems] == [where]
        assert solution_problem(solution) == refused.value.problems[0]
    assert len(document.context) == size
    assert solution_problem(None) is solution_problem([]) is solution_problem({"output": 1}) is None


def test_a_document_whose_solution_s_advice_is_an_error_is_refused_by_the_loop() -> None:
    """017: the loop takes a document's own solution as its first turn; advice `validate` calls an error refuses it
    (`TurnRefused` with those errors, the document untouched), as it refuses the same turn typed by hand."""
    from contextdeck.engine import Context, Document, Shape, solution_refusals, validate

    advisor = {"type": "advisor", "id": "critic", "on": "request",
               "schema": {"type": "object", "properties": {"thought": {"type": "string"}}}}
    solution = {"advisors": [{"id": "critic", "thought": 5}], "calls": [], "output": "done"}
    document = Document(Context([advisor]), Shape.REQUEST, None, solution)
    with pytest.raises(TurnRefused) as refused:
        Loop(document, clock=CLOCK)
    errors = [p for p in validate(document.context, solution) if p.severity == "error"]
    assert list(refused.value.problems) == errors == solution_refusals(document.context, solution)
    assert [p.path for p in errors] == ["solution.advisors[0].thought"]
    assert len(document.context) == 1
    assert turn_problems(document, {**solution, "advisors": [{"id": "critic", "thought": 5}]})[0].path == (
        "$.advisors[0].thought")


def test_a_malformed_reference_in_a_turn_is_said_once_at_its_field_with_its_position() -> None:
    """SPEC 3: a malformed expression is an error naming its position; in a turn it is said at the call's field,
    the field not repeated in the reason."""
    document = chapter("012_handling_failure.json")
    turn = {"calls": [{"_tool": "reportFailure", "error": "†state..error"}]}
    assert ("$.calls[0].error", "expected a path segment after '.', found '.' at position 7", "error") in problems(
        document, turn)


def test_a_turns_meta_is_the_identity_the_next_request_sees() -> None:
    """016: the context's meta is the request's identity, and the solution gives it back with its version bumped.
    A turn's meta becomes a meta message before its plan, so the next request (and `†meta`) sees the new
    version; a turn giving the identity back unchanged appends none."""
    document = Document(Context([{"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3"}},
                                 {"type": "text", "text": "go"}]))
    call = {"_tool": "think", "_output": 1, "_outputPath": "†state.a"}
    loop = Loop(document, clock=CLOCK)
    loop.take_turn({"meta": {"path": "/g/1", "version": "1.2.4"}, "calls": [call], "output": None})
    assert [message["type"] for message in document.context.messages] == ["meta", "text", "meta", "plan"]
    assert document.context.resolve("†meta.version").value == "1.2.4"
    assert turn_change(document, {"meta": {"version": "1.2.4"}, "calls": [call]}).meta is None


@pytest.mark.parametrize(("version", "branches", "said"), [
    ("1.2.4", None, None),  # 016's example: the last number incremented
    ("1.2.3.branch-A.1", ["main", "branch-A"], None),  # 016: a new branch's first version
    ("1.2.3", None, "'1.2.3' is the context's version: 016 asks for it bumped"),
    ("1.3.0", None, "'1.3.0' is not the context's '1.2.3' incremented: 016 asks for its last number incremented "
                    "('1.2.4', a compatible change), or a branch named in 'branches' started at 1.2.3.<branch>.1"),
    ("1.2.3.branch-B.1", ["main"], "'1.2.3.branch-B.1' is not the context's '1.2.3' incremented: 016 asks for its "
                                   "last number incremented ('1.2.4', a compatible change), or a branch named in "
                                   "'branches' started at 1.2.3.<branch>.1"),
])
def test_a_version_given_back_is_the_contexts_incremented(version, branches, said) -> None:
    """016 asks a new solution against the same schema (a compatible change) to increment the version: its example
    bumps 1.2.3 to 1.2.4 (and "compatible with 1.2" finds 1.2.x), or a branch starts at 1.2.3.<branch>.1. Any
    other version given back is a warning of the turn check and of validate, at the version."""
    document = Document(Context([{"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3", "branches": ["main"]}},
                                 {"type": "text", "text": "go"}]))
    meta = {"path": "/g/1", "version": version, "branches": branches or ["main"]}
    expected = [] if said is None else [("$.meta.version", said, "warning")]
    assert problems(document, {"meta": meta, "calls": [], "output": None}) == expected
    found = [(d.path, d.reason, d.severity) for d in validate(document.context, {"meta": meta, "output": None})]
    assert found == [(path.replace("$", "solution"), reason, severity) for path, reason, severity in expected]


def test_a_new_branch_is_named_between_the_version_and_its_first_number() -> None:
    """016's new line of development is `<version>.<branch>.1`: `.1` straight after the version names no branch."""
    assert version_problem("1.2.3", "1.2.3.feature.1") is None
    assert version_problem("1.2.3", "1.2.3.1") is not None
    assert version_problem("1.2.3", "1.2.3.a.b.1") is not None


@pytest.mark.parametrize(("version", "bumped"), [
    ("1.2.9", "1.2.10"), ("1.2.99", "1.2.100"), ("1.2.007", "1.2.8"), ("1.2.0", "1.2.1"), ("1.2.\u0663", "1.2.4"),
    ("1.2." + "9" * 5000, "1.2.1" + "0" * 5000)])
def test_a_version_is_incremented_on_its_digits(version, bumped) -> None:
    """The version a turn must give back is worked out on the digits: carries, leading zeros and other scripts' digits
    as an int reads them, and a number of thousands of digits (more than Python converts) as any other."""
    document = Document(Context([{"type": "meta", "meta": {"path": "/g/1", "version": version}}]))
    assert problems(document, {"meta": {"path": "/g/1", "version": bumped}, "calls": [], "output": None}) == []
    wrong = problems(document, {"meta": {"path": "/g/1", "version": version + "0"}, "calls": [], "output": None})
    assert [(path, severity) for path, _, severity in wrong] == [("$.meta.version", "warning")]


def test_checking_a_typed_turn_reads_no_message_again(monkeypatch) -> None:
    """A dialog composes the request once and checks the turn per keystroke: the version warning (016, the
    request's `meta`) and a lazy plan far back (012, the context's index of plans) read no message, so the check
    does not grow with the document."""
    document = Document(Context([{"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3"}},
                                 {"type": "tool", "tool": {"t": {"type": "object"}}},
                                 {"type": "plan", "mode": "lazy", "plan": []},
                                 *({"type": "text", "text": f"{n}"} for n in range(3000))]))
    request = compose_request(document.context, document.schema)
    read = []
    monkeypatch.setattr(Context, "info", lambda self, index, info=Context.info: read.append(index) or info(self, index))
    turn = {"meta": {"path": "/g/1", "version": "1.2.3"}, "calls": [{"_tool": "t", "_output": 1}], "output": None}
    found = [(d.path, d.severity) for d in turn_problems(document, turn, request=request)]
    assert found == [("$.calls[0]._output", "warning"), ("$.meta.version", "warning")]
    assert len(read) < 300


def test_a_latent_calls_output_under_a_lazy_plan_is_a_warning() -> None:
    """012: under a lazy plan the model "will not perform latent execution": a latent call given its `_output`
    (a tool offered as latent, or one nothing defines) is warned at the field; an explicit call's is not."""
    document = Document(Context([
        {"type": "tool", "tool": {"sum": {"type": "object", "properties": {"_output": {"type": "string"}}}}},
        {"type": "tool", "tool": {"fetch": {"type": "object", "_activity": "fetch"}}},
        {"type": "plan", "mode": "lazy", "plan": []}]))
    turn = {"calls": [{"_tool": "sum", "_output": "x", "_outputPath": "†state.s"},
                      {"_tool": "fetch", "_output": 1, "_outputPath": "†state.f"},
                      {"_tool": "nobody", "_output": 1}], "output": None}
    found = [(path, severity) for path, reason, severity in problems(document, turn) if "lazy plan (012)" in reason]
    assert found == [("$.calls[0]._output", "warning"), ("$.calls[2]._output", "warning")]


def test_a_latent_calls_output_with_a_branching_path_is_a_warning_in_eager_execution() -> None:
    """012: in eager execution the model collapses a branching `_outputPath` to one concrete path when it gives a
    latent call's `_output`; one still branching is warned at the path (its output goes to the first alternative).
    A call left to wait for its output, or run by an activity, may keep its branches."""
    document = Document(Context([
        {"type": "tool", "tool": {"sky": {"type": "object", "properties": {"_output": {"type": "string"}}}}},
        {"type": "tool", "tool": {"fetch": {"type": "object", "_activity": "fetch"}}}]))
    branches = "†state.sunny || †state.rainy && †log.rainy"
    turn = {"calls": [{"_tool": "sky", "_output": "rain", "_outputPath": branches},
                      {"_tool": "sky", "_outputPath": branches},
                      {"_tool": "fetch", "_output": 1, "_outputPath": branches}], "output": None}
    assert [(path, severity) for path, reason, severity in problems(document, turn)
            if "still branches" in reason] == [("$.calls[0]._outputPath", "warning")]


def test_a_delegated_calls_output_is_a_warning() -> None:
    """014: a delegated call's result is what its delegate's session gives; an `_output` typed beside it (the call's
    own `_delegate` or its tool's) is warned at the field, as `validate` warns of it in a plan."""
    document = Document(Context([{"type": "tool", "tool": {"t": {"type": "object", "_delegate": "anonymous"}}}]))
    turn = {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†s.a"},
                      {"_tool": "u", "_delegate": "anonymous", "_output": 2},
                      {"_tool": "u", "_output": 3}], "output": None}
    assert [(path, severity) for path, reason, severity in problems(document, turn) if "(014)" in reason] == [
        ("$.calls[0]._output", "warning"), ("$.calls[1]._output", "warning")]


def test_a_turns_call_for_an_instance_that_never_finds_what_it_reads_is_a_warning() -> None:
    """013: a turn's call for an instance no data message has, reading a path only another instance has, would
    wait forever: the turn check warns at the field, as `validate` does at the plan's call."""
    document = Document(Context([{"type": "tool", "tool": {"t": {"type": "object"}}},
                                 {"type": "state", "_instance": "①", "data": {"x": 1}}]))
    targeted = {"_tool": "t", "_instance": "③", "q": {"a": ["†state.x"]}}
    turn = {"calls": [{"_tool": "t", "q": "†state.x"}, {"all": [targeted]}], "output": None}
    assert problems(document, turn) == [
        ("$.calls[1].all[0].q.a[0]", "†state.x (at position 0) is never found for instance ③ (no data message has "
                                     "it): only instance ① has it, and no global data or output path writes it, so "
                                     "the call would wait forever (013)", "warning")]


def test_a_turns_call_whose_instance_is_no_instance_id_is_a_warning_at_its_field() -> None:
    """013 names an instance by a short token: an `_instance` that is empty, a boolean or an array (a model filling
    an optional field) made the call one of an instance of that text, blocked for ever, and the turn check said
    nothing of it. It says so at the call's `_instance`, as a warning (the run takes it: format.md §2); a number,
    a token and null (global) are ids."""
    document = Document(Context([{"type": "tool", "tool": {"t": {"type": "object"}}},
                                 {"type": "state", "_instance": "①", "data": {"x": 1}}]))
    calls = [{"_tool": "t", "_instance": ""}, {"all": [{"_tool": "t", "_instance": ["①"]}]},
             {"_tool": "t", "_instance": True}, {"_tool": "t", "_instance": 2}, {"_tool": "t", "_instance": "①"},
             {"_tool": "t", "_instance": None}]
    said = "is not an instance id (013: a short token, a non-empty string or a number): the call runs for an instance"
    assert problems(document, {"calls": calls, "output": None}) == [
        ("$.calls[0]._instance", f'"" {said} named \'\'; leave _instance out for a global call', "warning"),
        ("$.calls[1].all[0]._instance", f'["①"] {said} named "[\'①\']"; leave _instance out for a global call',
         "warning"),
        ("$.calls[2]._instance", f"true {said} named 'True'; leave _instance out for a global call", "warning")]


def test_checking_a_turn_again_reads_the_instances_data_once_and_follows_edits(monkeypatch) -> None:
    """The 013 check of a turn's reads folds what the data write in one pass over the context; checked again (a
    keystroke in the turn dialog) it reads no message while the document is as it was, and an edit, a replace or
    an append, is seen at once."""
    document = Document(Context([{"type": "tool", "tool": {"t": {"type": "object"}}},
                                 {"type": "state", "_instance": "①", "data": {"x": 1}},
                                 *({"type": "text", "text": f"{n}"} for n in range(2000))]))
    request = compose_request(document.context, document.schema)
    turn = {"calls": [{"_tool": "t", "_instance": "③", "q": "†state.x"}], "output": None}

    def never_found() -> list[str]:
        return [p.path for p in turn_problems(document, turn, request=request) if "never found" in p.reason]

    assert never_found() == ["$.calls[0].q"]
    read = []
    monkeypatch.setattr(Context, "info", lambda self, index, info=Context.info: read.append(index) or info(self, index))
    assert never_found() == ["$.calls[0].q"]
    assert len(read) < 300  # the last plan looked for among the last messages (012), no more
    document.context.append({"type": "state", "data": {"x": 0}})  # global now: every instance finds it
    assert never_found() == []
    document.context.replace(len(document.context) - 1, {"type": "state", "data": {"y": 0}})
    assert never_found() == ["$.calls[0].q"]


def test_a_cycle_the_copies_of_a_turns_calls_close_names_the_calls_as_written() -> None:
    """013: a cycle among the copies the run would make of a turn's calls per instance names the calls as the turn
    writes them, at each one, with the instances (never the run's numbers of the copies)."""
    document = Document(Context([{"type": "state", "_instance": "①", "data": {"x": 1}},
                                 {"type": "state", "_instance": "②", "data": {"x": 2}}]))
    turn = {"calls": [{"_tool": "a", "q": "†state.x", "_outputPath": "†state.y", "_output": 1},
                      {"_tool": "b", "q": "†state.y", "_outputPath": "†state.x", "_output": 1}], "output": None}
    cycle = ("cycle: calls 0 (a), 1 (b) form a cycle: call 1 feeds call 0 through †state.x; call 0 feeds call 1 "
             "through †state.y (for instances ①, ②)")
    assert [(path, reason) for path, reason, severity in problems(document, turn) if severity == "error"] == [
        ("$.calls[0]", cycle), ("$.calls[1]", cycle)]


def test_a_turn_check_merges_the_documents_tools_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools a turn's calls are planned against, the activities their tools name (taken as loaded) and the
    delegates are read from one merge of the document's tools and the code's: a document of thousands of tools is
    merged once a keystroke, not once per use."""
    import contextdeck.engine.request._tools as tools_module

    merges: list[int] = []
    real = tools_module.tool_definitions
    monkeypatch.setattr(tools_module, "tool_definitions",
                        lambda *args, **kwargs: merges.append(1) or real(*args, **kwargs))
    tools = {"type": "tool", "tool": {name: {"type": "object", "_activity": "act"} for name in ("a", "b", "c")}}
    document = Document(Context([tools, {"type": "tool", "tool": {"d": {"type": "object"}}}]), Shape.ARRAY)
    request = compose_request(document.context, document.schema)
    turn = {"calls": [{"_tool": "a", "_output": 1}, {"_tool": "d", "_output": 2, "_outputPath": "†x || †y"}]}
    assert [(problem.path, problem.reason[:22]) for problem in turn_problems(document, turn, request=request)] == [
        ("$.calls[0]._output", "an explicit call's res"), ("$.calls[1]._outputPath", "a latent call given it")]
    assert len(merges) == 1


def test_a_turn_check_leaves_the_request_it_is_given_as_it_was() -> None:
    """The turn dialog composes the request once and checks every keystroke's turn against it: the check copies
    only the parts of its schema it changes (`calls`, `required`), and changes nothing of the request's."""
    import json

    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    document = Document(Context([tool, {"role": "user", "content": "Go"}]), Shape.ARRAY, schema={"type": "integer"})
    request = compose_request(document.context, document.schema)
    before = json.dumps(request.to_json(), sort_keys=True)
    turn = {"calls": [{"_tool": "t", "n": "x"}], "output": "many"}
    assert [problem.path for problem in turn_problems(document, turn, request=request)] == ["$.calls[0].n", "$.output"]
    assert [problem.path for problem in turn_problems(document, turn, request=request)] == ["$.calls[0].n", "$.output"]
    assert json.dumps(request.to_json(), sort_keys=True) == before
    assert request.schema["properties"]["calls"]["items"]


def test_the_turn_check_plans_a_turn_as_the_set_up_does_but_for_literal_parameters() -> None:
    """The turn check is the set-up without the literal parameters' check (`literals=False`): a literal that breaks
    the tool's schema is said once, at its field, by the schema; every other refusal is the set-up's."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_tool": {"const": "t"},
                                                                           "n": {"type": "integer"}}}}}
    context = Context([tool])
    turn = {"calls": [{"_tool": "t", "n": "x"}, {"_tool": "t", "n": 1, "_outputMethod": "bad"}], "output": None}
    reading = read_plan(turn["calls"])
    judged = set_up(context, turn, registry(), {}, reading=reading)
    unjudged = set_up(context, turn, registry(), {}, reading=reading, literals=False)
    assert [problem.type for problem in judged.structural[0]] == ["parameters"]
    assert 0 not in unjudged.structural
    assert unjudged.structural[1] == judged.structural[1]
    found = problems(Document(context, Shape.ARRAY), turn)
    assert [(path, severity) for path, _, severity in found] == [("$.calls[0].n", "error"),
                                                                ("$.calls[1]._outputMethod", "error")]


def test_a_saved_model_solution_run_later_keeps_its_mark_on_the_meta_and_plan_it_appends() -> None:
    """`ask` saves the model's turn with its `_model`; `run` plans it later with no audit given: the meta and the
    plan it appends still carry that mark, so the run starts at them and no case's request holds the model's plan."""
    request = [{"type": "meta", "meta": {"path": "/g/1", "version": "1.2.3"}}, {"type": "input", "input": {"a": 1}}]
    document = Document(Context([dict(message) for message in request]), Shape.REQUEST)
    document.solution = {"meta": {"path": "/g/1", "version": "1.2.4"}, "output": None, "_model": {"model": "m"},
                         "calls": [{"_tool": "think", "_output": 1, "_outputPath": "†state.a"}]}
    asyncio.run(Loop(document).run(max_ticks=2))
    assert [message.get("_model") for message in document.context.messages[2:4]] == [{"model": "m"}] * 2
    assert (run_start(document.context), request_of(document).context.messages) == (2, request)


def test_a_meta_typed_before_the_first_model_plan_stays_the_request_s_when_no_turn_gave_a_meta() -> None:
    """A model's plan says whether the meta just before it is its turn's (`_turnMeta`): in a document none of whose
    turns gave an identity back, a meta typed by hand before the first model plan is the request's, not cut out of
    each case's request. A document written before the mark (a model plan without it, no marked meta) still reads
    that meta as the turn's; one whose turn gave a meta back starts at it."""
    request = [{"type": "input", "input": {"a": 1}}, {"type": "meta", "meta": {"path": "/g/1", "version": "1.0.0"}}]
    document = Document(Context([dict(message) for message in request]), Shape.ARRAY)
    take = {"output": None, "calls": [{"_tool": "think", "_output": 1, "_outputPath": "†state.a"}]}
    change = turn_change(document, take, {"model": "m"})
    assert change.meta is None
    assert (change.plan["_model"], change.plan["_turnMeta"]) == ({"model": "m"}, False)
    document.context.append(change.plan)
    assert (run_start(document.context), request_of(document).context.messages) == (2, request)
    old = {key: value for key, value in change.plan.items() if key != "_turnMeta"}  # written before the mark
    assert run_start(Context([*request, old])) == 1
    again = [{"_tool": "think", "_output": 2, "_outputPath": "†state.b"}]
    given = turn_change(document, {**take, "calls": again, "meta": {"version": "1.0.1"}}, {"model": "m"})
    assert (given.plan["_turnMeta"], given.meta["_model"]) == (True, {"model": "m"})
    marked = Context([*request, given.meta, given.plan])
    assert run_start(marked) == 2
    # The mark's value is read: a meta just before a plan marked as its turn's starts the run, even unmarked.
    unmarked_meta = {key: value for key, value in given.meta.items() if key != "_model"}
    assert run_start(Context([request[0], unmarked_meta, given.plan])) == 1
    assert run_start(Context([request[0], unmarked_meta, {**given.plan, "_turnMeta": False}])) == 2
