"""Chapters 001, 002, 005, 006, 010, 012, 016 and 017: their examples load, render and validate as the chapters say.

The request as the model receives it (messages with roles, the composed schema) and `validate`; the expected
results are written from the chapters' text. The documents are in `tests/engine/chapters/`.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from chapter_support import CHAPTERS, chapter

from contextdeck.engine import Activities, Context, Form, compose_request, load_tools, render, validate

REGISTRY = load_tools(CHAPTERS / "registry")


def request_of(name: str, **options: Any):
    document = chapter(name)
    return document, compose_request(document.context, document.schema, **options)


def problems(document, **options: Any) -> list[str]:
    """validate's errors (its warnings, such as a call to a tool nothing defines, are not errors: SPEC 6.7)."""
    found = validate(document.context, document.solution, **options)
    return [str(problem) for problem in found if problem.severity == "error"]


def items_by_tool(request) -> dict[str, dict[str, Any]]:
    items = request.schema["properties"]["calls"]["items"]
    return {item["properties"]["_tool"]["const"]: item for item in items.get("anyOf", [items])}


# -- 001: Agent/Request --------------------------------------------------------------------------------------


def test_001_message_array_reaches_the_model_with_its_roles() -> None:
    """001: `[{role: system, ...}, {role: user, ...}]` is a context; the model receives exactly those messages."""
    document, request = request_of("001_roles.json")
    assert [document.context.info(i).form for i in range(2)] == [Form.TEXT, Form.TEXT]
    assert request.to_json()["messages"] == json.loads((CHAPTERS / "001_roles.json").read_text())
    assert problems(document) == []


# -- 002: Agent/Tool -------------------------------------------------------------------------------------------


def test_002_latent_tool_keeps_its_output_and_the_llm_output_is_a_valid_call() -> None:
    """002: sentimentAnalysis is latent (no activity): its `_output` is offered, and the example LLM output
    (a call with `_output`) is a valid item of the composed schema."""
    document, request = request_of("002_sentiment_latent.json")
    item = items_by_tool(request)["sentimentAnalysis"]
    assert item["properties"]["_output"] == {
        "type": "object", "properties": {"sentiment": {"type": "string"}, "confidence": {"type": "number"}}}
    assert item["description"] == "Analyzes text sentiment"
    jsonschema.validate(document.solution["calls"][0], item)
    assert [m.text for m in request.messages] == ["What is the sentiment of 'This is the best!'"]
    assert problems(document) == []


def test_002_composed_schema_is_the_chapters() -> None:
    """002: the greetUser tool and the summary output schema compose into the chapter's schema, key for key."""
    document, request = request_of("002_composition.json")
    assert request.schema == {
        "type": "object",
        "properties": {
            "meta": {
                "type": "object",
                "description": "Metadata about the idea, including version and identity. The LLM is expected to "
                               "update this, for example by bumping the version.",
                "properties": {"path": {"type": "string"}, "version": {"type": "string"}},
            },
            "output": {"type": ["object", "null"], "properties": {"summary": {"type": "string"}},
                       "required": ["summary"], "additionalProperties": False},
            "calls": {"type": "array", "items": {"type": "object",
                                                 "properties": {"_tool": {"const": "greetUser"},
                                                                "userName": {"type": "string"}},
                                                 "required": ["_tool", "userName"]}},
        },
        "required": ["meta", "calls", "output"],
    }
    assert [(m.role, m.text) for m in request.messages] == [("user", "some prompt here")]
    # 002's three choices are all valid solutions: calls only, output only, both.
    for solution in ({"meta": {}, "calls": [{"_tool": "greetUser", "userName": "Ann"}], "output": None},
                     {"meta": {"version": "1.0.1"}, "calls": [], "output": {"summary": "done"}},
                     {"meta": {}, "calls": [{"_tool": "greetUser", "userName": "Ann"}], "output": {"summary": "hi"}}):
        jsonschema.validate(solution, request.schema)
    assert problems(document) == []


def test_002_the_latest_definition_of_a_tool_wins_and_the_earlier_is_excluded() -> None:
    """002's tool overriding: the later greetUser replaces the earlier in the schema; the earlier is gone."""
    _, request = request_of("002_overriding.json")
    assert [tool.name for tool in request.tools] == ["greetUser"]
    item = items_by_tool(request)["greetUser"]
    assert item["description"] == "Greets a user formally, with their title."
    assert item["required"] == ["_tool", "userName", "title"]
    assert "Greets a user." not in json.dumps(request.schema)


def test_002_explicit_tool_output_is_removed_from_the_schema() -> None:
    """002/003: weatherCheck backed by an activity is explicit: its `_output` is removed, its description kept."""
    activities = Activities()
    activities.add(lambda call, tool, context: {"temperature": 20, "conditions": "sun"}, "weatherCheck")
    _document, request = request_of("003_weather_check.json", activities=activities)
    item = items_by_tool(request)["weatherCheck"]
    assert "_output" not in item["properties"]
    assert item["description"] == "Gets the current weather for a location."
    assert item["required"] == ["_tool", "location"]
    _, latent = request_of("003_weather_check.json")  # no activity loaded: latent, the model writes `_output`
    assert "_output" in items_by_tool(latent)["weatherCheck"]["properties"]


# -- 005: Agent/Data, 006: Agent/Input ---------------------------------------------------------------------


def test_005_text_passes_and_the_user_messages_merge_into_one_block() -> None:
    """005: the text passes as is; the two `user` data messages become one text block as the chapter shows."""
    document, request = request_of("005_user_merge.json")
    assert [(m.role, m.sources) for m in request.messages] == [("user", (0,)), ("user", (1, 2))]
    assert request.messages[0].text == "Update the user's city to Austin"
    assert request.messages[1].text == "\n".join([
        "## Data: ¶user",
        json.dumps({"name": "John Doe", "age": 30}, indent=2),
        "Represents the current user.",
        "Schema for ¶user:",
        json.dumps({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "number"},
                                                     "city": {"type": "string"}}}, indent=2),
    ])
    assert problems(document) == []


def test_006_input_is_a_structured_prompt_with_its_schema() -> None:
    """006: the input reaches the model as a user message headed ¶input, with the structured-prompt line, the
    schema (with its descriptions) and the data. Layout: 005's for every kind (see docs/format.md)."""
    document, request = request_of("006_structured_prompt.json")
    (message,) = request.messages
    assert message.role == "user"
    lines = message.text.split("\n")
    assert lines[:2] == ["## Data: ¶input", "Input data MUST be treated as a structured prompt"]
    assert json.dumps({"userName": "Jane", "topic": "the weather"}, indent=2) in message.text
    assert '"description": "Author of the article"' in message.text
    assert '"description": "Topic to write article about"' in message.text
    assert problems(document) == []


# -- 010: Agent/Loop -------------------------------------------------------------------------------------------


def test_010_each_error_message_shows_its_whole_call_and_error() -> None:
    """010: "it sees the failed call and the specific error it produced": two errors are two blocks, each
    with its own whole call (output path included) and error, never merged or mixed."""
    document, request = request_of("010_errors.json")
    errors = [m for m in request.messages if m.form == "error"]
    assert [m.sources for m in errors] == [(1,), (2,)]
    for message, index in zip(errors, (1, 2), strict=True):
        assert json.loads(message.text.split("\n", 1)[1]) == document.context[index]["data"]
    assert "2025-10-26" not in request.messages_text()  # the messages' own `_date` is audit metadata
    assert problems(document) == []


# -- 012: Agent/Plan -------------------------------------------------------------------------------------------


def test_012_refund_request_schema_is_the_solutions_with_a_nullable_output() -> None:
    """012: the request's schema gives `calls` and a `nullable` output: the output is object-or-null; the
    chapter's solution (two calls to tools the context does not define, output null) is valid."""
    document, request = request_of("012_refund_request.json")
    output = request.schema["properties"]["output"]
    assert output["type"] == ["object", "null"]
    assert "nullable" not in output
    assert request.schema["properties"]["calls"] == {"type": "array", "maxItems": 0}
    (message,) = request.messages
    assert json.loads(message.text.split("\n", 2)[2]) == {
        "request": "I'd like a refund for my last order.", "customerId": "cust_123", "amount": 50.0}
    assert problems(document) == []  # calls to undefined tools are latent, not errors (SPEC 6.7)


def test_012_next_request_sees_the_state_and_the_previous_plan() -> None:
    """012: "the context for a request contains the State object and the Plan message from the previous step"."""
    document, request = request_of("012_refund_next_request.json")
    assert [m.form for m in request.messages] == ["data", "plan"]
    assert request.messages[0].text.startswith("## Data: ¶state\n")
    assert request.messages[1].text.startswith("## Plan\n")
    assert json.loads(request.messages[1].text.split("\n", 1)[1]) == document.context[1]["plan"]
    assert problems(document) == []


def test_012_handling_failure_names_tools_that_need_a_registry() -> None:
    """012: `{type: tool, tool: 'Tool.processPayment'}` names a registered tool; a name nothing defines is a
    clear problem of that message, never silently dropped."""
    context = Context([{"type": "tool", "tool": "Tool.processPayment"}, {"type": "input", "amount": 50.0}])
    request = compose_request(context)
    assert [(p.message_index, p.reason) for p in request.problems] == [
        (0, "unknown tool 'processPayment': no tool registry is loaded")]
    assert request.tools == ()


def test_012_schema_guided_planning_offers_the_registry_tools_and_the_state_schema() -> None:
    """012: the three tools come from the registry by name; the state message with only a schema shows the
    schema as the blueprint; the chapter's solution is a valid solution of the composed schema."""
    document, request = request_of("012_schema_guided.json", tools=REGISTRY)
    assert [tool.name for tool in request.tools] == ["detectLanguage", "isEnglish", "translateText"]
    assert request.problems == ()
    state = request.messages[1].text
    assert state.startswith("## Data: ¶state\n{}\nSchema for ¶state:\n")
    solution = {"meta": {}, "output": None, "calls": [
        {"_tool": "detectLanguage", "text": "†input.text", "_outputPath": "†state.language"},
        {"_tool": "isEnglish", "language": "†state.language", "_outputPath": "†state.isEnglish"},
        {"_tool": "translateText", "text": "†input.text", "isEnglish": "†state.isEnglish",
         "_outputPath": "†state.translatedText"}]}
    jsonschema.validate(solution, request.schema)  # `isEnglish` (a boolean) may be a reference: 007
    items = items_by_tool(request)
    assert items["translateText"]["properties"]["isEnglish"] == {"anyOf": [
        {"type": "boolean"}, {"type": "string", "pattern": "^†",
                              "description": "a reference to a value in the context, as †state.path"}]}
    assert items["translateText"]["properties"]["text"] == {"type": "string"}
    assert problems(document, tools=REGISTRY) == []
    assert len(problems(document)) == 3  # without the registry each name is reported


# -- 016: Agent/Meta ---------------------------------------------------------------------------------------------


def test_016_meta_is_in_the_context_and_required_in_the_solution() -> None:
    """016: the meta message tells the model the current identity; the schema requires a `meta` with its fields
    (the `$ref: MetaSchema` is composed), and the chapter's solution with the bumped version is valid."""
    document, request = request_of("016_meta.json")
    meta_block = request.messages[0].text
    assert meta_block.startswith("## Data: ¶meta\nThe identity of this request:")
    assert '"version": "1.2.3"' in meta_block
    meta = request.schema["properties"]["meta"]
    assert list(meta["properties"]) == ["path", "version", "domain", "branches", "createdAt"]
    assert "meta" in request.schema["required"]
    jsonschema.validate(document.solution, request.schema)
    assert document.context.resolve("†meta.version").value == "1.2.3"
    assert problems(document) == []


def test_016_validate_holds_the_solutions_meta_to_the_request_and_asks_for_a_bumped_version() -> None:
    """016: the solution's `meta` is checked against the request's meta schema (not only a turn's), and one
    that gives back the context's version unchanged is a warning: the chapter asks the agent to bump it."""
    document = chapter("016_meta.json")
    solution = document.solution
    same = {**solution, "meta": {**solution["meta"], "version": "1.2.3"}}
    assert [(p.path, p.reason, p.severity) for p in validate(document.context, same, schema=document.schema)] == [
        ("solution.meta.version", "'1.2.3' is the context's version: 016 asks for it bumped", "warning")]
    wrong = {**solution, "meta": {**solution["meta"], "path": 321, "branches": "main"}}
    assert sorted((p.path, p.reason) for p in validate(document.context, wrong, schema=document.schema)) == [
        ("solution.meta.branches", "'main' is not of type 'array'"),
        ("solution.meta.path", "321 is not of type 'string'")]


# -- 017: Agent/Advisor -------------------------------------------------------------------------------------------


def test_017_advisor_is_not_data_and_its_advice_comes_first() -> None:
    """017: the advisor message is rendered as a persona (no false schema error); the solution's `advisors`
    come first in the schema; the chapter's response is valid advice and a valid solution."""
    document, request = request_of("017_advisor.json")
    assert document.context.info(0).form is Form.ADVISOR
    (message,) = request.messages
    assert message.text.split("\n")[:4] == [
        "## Advisor: riskAnalyst", "Analyze risks and Vote for deployment actions.",
        "Consulted: on every request", "Focus on: †state.deploymentHistory"]
    assert next(iter(request.schema["properties"])) == "advisors"
    advice = request.schema["properties"]["advisors"]["items"]
    assert advice["properties"]["id"] == {"const": "riskAnalyst"}
    assert advice["required"] == ["id", "thought"]
    jsonschema.validate(document.solution["advisors"], request.schema["properties"]["advisors"])
    assert problems(document) == []


def test_017_two_advisors_are_two_identities_and_advice_is_checked_against_its_own_schema() -> None:
    """017: two advisors never merge; each advice is checked against its own advisor's schema only."""
    risk = {"type": "advisor", "id": "risk", "on": "request", "role": "Risk.",
            "schema": {"type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}}
    budget = {"type": "advisor", "id": "budget", "on": "request", "role": "Cost.",
              "schema": {"type": "object", "properties": {"estimate": {"type": "number"}}, "required": ["estimate"]}}
    context = Context([risk, budget])
    assert [m.text.split("\n")[0] for m in render(context)] == ["## Advisor: risk", "## Advisor: budget"]
    good = {"advisors": [{"id": "risk", "thought": "fine"}, {"id": "budget", "estimate": 3}], "calls": []}
    assert validate(context, good) == []
    bad = {"advisors": [{"id": "risk", "estimate": 3}, {"id": "budget", "estimate": "lots", "calls": "x"},
                        {"id": "nobody"}], "calls": []}
    assert [(p.path, p.reason) for p in validate(context, bad)] == [
        ("solution.advisors[0]", "'thought' is a required property"),
        ("solution.advisors[1].calls", "votes must be inline JSON: a string holding an object"),
        ("solution.advisors[1].estimate", "'lots' is not of type 'number'"),
        ("solution.advisors[2]", "no advisor has the id 'nobody'"),
    ]


def test_017_when_advisors_are_consulted() -> None:
    """017's `on`: request and finish every time, start only in the first request, on-demand through a
    ConsultAdvisor tool."""
    advisors = [{"type": "advisor", "id": name, "on": on, "role": name} for name, on in
                (("always", "request"), ("opener", "start"), ("closer", "finish"), ("asked", None))]
    first = compose_request(Context(advisors))
    items = first.schema["properties"]["advisors"]["items"]["anyOf"]
    assert [item["properties"]["id"]["const"] for item in items] == ["always", "opener", "closer"]
    consult = items_by_tool(first)["ConsultAdvisor"]
    assert consult["properties"]["advisor"] == {"enum": ["asked"]}
    later = compose_request(Context([*advisors, {"type": "plan", "plan": []}]))
    later_items = later.schema["properties"]["advisors"]["items"]["anyOf"]
    assert [item["properties"]["id"]["const"] for item in later_items] == ["always", "closer"]


def test_017_advice_from_an_advisor_not_consulted_in_this_request_is_a_problem() -> None:
    """validate holds the solution's advice to the request's schema: an on-demand advisor speaks through
    ConsultAdvisor, a `start` one in the first request only; `request` ones advise every time."""
    advisors = [{"type": "advisor", "id": name, "on": on, "role": name} for name, on in
                (("always", "request"), ("opener", "start"), ("asked", None))]
    advice = {"advisors": [{"id": "always"}, {"id": "opener"}, {"id": "asked"}], "calls": []}
    assert [(p.path, p.reason) for p in validate(Context(advisors), advice)] == [
        ("solution.advisors[2]", "advisor 'asked' gives no advice in this request: it is consulted on demand, "
                                 "through ConsultAdvisor (017)")]
    later = Context([*advisors, {"type": "plan", "plan": []}])
    assert [p.path for p in validate(later, advice)] == ["solution.advisors[1]", "solution.advisors[2]"]


def test_017_an_instanced_advisor_gives_advice_per_instance() -> None:
    """017's `isInstanced`: the advice names the instance it is about, one of the context's instances, and each
    instance is advised ("each item in a batch is evaluated by the advisor individually"): one left without is
    a warning."""
    context = Context([{"type": "state", "_instance": "①", "text": "Hello"},
                       {"type": "state", "_instance": "②", "text": "Bonjour"},
                       {"type": "advisor", "id": "tone", "on": "request", "isInstanced": True, "role": "Tone."}])
    item = compose_request(context).schema["properties"]["advisors"]["items"]
    assert item["properties"]["_instance"] == {"enum": ["①", "②"]}
    assert item["required"] == ["id", "_instance"]
    both = [{"id": "tone", "_instance": "①"}, {"id": "tone", "_instance": "②"}]
    assert validate(context, {"advisors": both, "calls": []}) == []
    assert [(str(p), p.severity) for p in validate(context, {"advisors": both[:1], "calls": []})] == [
        ("solution.advisors: advisor 'tone' gives no advice for instance ②: it advises each instance (017)",
         "warning")]


def test_017_an_advisor_consulted_in_this_request_gives_its_advice() -> None:
    """017: a consulted advisor's advice comes first in the solution (`request`: every request); a solution
    without it is a warning, as is one with no `advisors` at all; an on-demand advisor is not expected."""
    context = Context([{"type": "advisor", "id": "risk", "on": "request", "role": "Risks."},
                       {"type": "advisor", "id": "helper", "role": "Ask me."}])
    said = [("solution.advisors: advisor 'risk' gives no advice: it is consulted in this request (017)", "warning")]
    for solution in ({"advisors": [], "calls": []}, {"calls": [], "output": None}):
        assert [(str(p), p.severity) for p in validate(context, solution)] == said
    assert validate(context, {"advisors": [{"id": "risk"}], "calls": []}) == []


def test_017_an_instanced_advisors_advice_names_one_of_the_instances() -> None:
    """validate holds advice to what the request asks of it (`isInstanced`): the `_instance` is required and
    one of the context's instances, as the composed schema says."""
    context = Context([{"type": "state", "_instance": "①", "text": "Hello"},
                       {"type": "advisor", "id": "tone", "on": "request", "isInstanced": True, "role": "Tone."}])
    advice = {"advisors": [{"id": "tone", "_instance": "③"}, {"id": "tone"}], "calls": []}
    assert [(p.path, p.reason) for p in validate(context, advice)] == [
        ("solution.advisors[0]._instance", "'③' is not one of the context's instances ['①']"),
        ("solution.advisors[1]", "an instanced advisor's advice names its _instance"),
        ("solution.advisors", "advisor 'tone' gives no advice for instance ①: it advises each instance (017)")]


def test_017_an_advisors_unusable_fields_are_problems_of_its_message() -> None:
    """017's fields, each said at the advisor's message (even with no advice in the solution), never dropped
    unsaid: a schema no validator can use (it would be composed into the request schema), scopes that are
    not an array of strings or hold a malformed reference (with its position), `isInstanced` and `role`."""
    advisor = {"type": "advisor", "id": "risk", "on": "request", "role": 5, "isInstanced": "yes",
               "scopes": ["input", "†state..history"], "schema": {"type": "object", "properties": {
                   "score": {"type": "bogus"}}}}
    assert [(p.message_index, p.path, p.reason) for p in validate(Context([advisor]))] == [
        (0, "advisor risk", "'schema' cannot be used: invalid schema at #/properties/score/type: 'bogus' is not valid "
                            "under any of the given schemas"),
        (0, "advisor risk", "'role' must be a string"),
        (0, "advisor risk", "'isInstanced' must be true or false"),
        (0, "advisor risk", "scopes[1]: expected a path segment after '.', found '.' at position 7"),
    ]
    assert [p.reason for p in validate(Context([{**advisor, "role": "Risk.", "isInstanced": False,
                                                 "schema": {"type": "object"}, "scopes": "state"}]))] == [
        "'scopes' must be an array of strings (kinds or † references)"]
    assert [p.reason for p in compose_request(Context([advisor])).problems][-1].startswith("scopes[1]")


def test_005_and_008_plain_data_merges_and_an_output_sets_its_path() -> None:
    """005 vs 008: plain data messages of one identity merge (005's patches); an output message without a
    method sets its concrete path (008), replacing what was there and keeping the rest (008's example)."""
    context = Context([
        {"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}},
        {"type": "data", "data": {"user": {"age": 30}}},
        {"type": "data", "data": {"user": {"status": "inactive"}}, "_outputPath": "†data.user.status",
         "_call": {"_tool": "updateUserStatus", "newStatus": "inactive", "_outputPath": "†data.user.status"}},
        {"type": "data", "data": {"user": {"address": {"city": "Austin"}}}, "_outputPath": "†data.user.address",
         "_call": {"_tool": "setAddress", "_outputPath": "†data.user.address"}},
        {"type": "data", "data": {"user": {"address": {"zip": "78701"}}}, "_outputPath": "†data.user.address",
         "_call": {"_tool": "setAddress", "_outputPath": "†data.user.address"}},
    ])
    assert context.resolve("†data.user", at=2).value == {"name": "Alex", "status": "active", "age": 30}
    assert context.resolve("†data.user.status").value == "inactive"
    assert context.resolve("†data.user.name").value == "Alex"
    assert context.resolve("†data.user.address").value == {"zip": "78701"}  # the newer set replaced the older
    block = render(context)[0].text
    assert '"address": {\n      "zip": "78701"\n    }' in block
