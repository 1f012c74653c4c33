"""The request as the model receives it: messages with roles, the composed schema, settings, problems."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import (
    Activities,
    Context,
    Form,
    ToolLoadError,
    classify,
    compose_request,
    load_tools,
    parse_document,
    solution_refusals,
    validate,
)
from contextdeck.engine.request._request import foreign_dialect

GREET = {"greetUser": {"type": "object", "properties": {"userName": {"type": "string"}}, "required": ["userName"]}}
WEATHER = {"type": "object", "description": "Gets the current weather for a location.",
           "properties": {"_tool": {"type": "string", "const": "weatherCheck"}, "location": {"type": "string"},
                          "_output": {"type": "object", "properties": {"temperature": {"type": "number"}}}},
           "required": ["location"]}


def calls_items(request) -> list[dict]:
    items = request.schema["properties"]["calls"]["items"]
    return items.get("anyOf", [items])


def test_role_content_and_system_messages_keep_their_roles() -> None:
    """001's `{role, content}` messages and `system` messages reach the model with their roles, in order."""
    context = Context([{"role": "system", "content": "You are a helpful assistant."},
                       {"role": "user", "content": "What is the capital of France?"},
                       {"type": "system", "message": "You are a translator."},
                       {"role": "assistant", "content": "Paris."}])
    request = compose_request(context)
    assert request.to_json()["messages"] == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "system", "content": "You are a translator."},
        {"role": "assistant", "content": "Paris."},
    ]
    assert [classify(m).form for m in context.messages] == [Form.TEXT] * 4


def test_a_role_message_loads_from_a_document() -> None:
    """A document of `{role, content}` messages loads (no `type` needed) and is text, not data."""
    document = parse_document(b'[{"role": "user", "content": "hi"}]')
    assert document.context.info(0).form is Form.TEXT
    assert validate(document.context) == []


def test_each_error_is_its_own_block_with_its_whole_call() -> None:
    """Two errors are two blocks, each with the call that failed (its `_outputPath` too), never merged."""
    first = {"call": {"_tool": "pay", "amount": 5, "_outputPath": "†state.receipt"}, "error": "declined"}
    second = {"call": {"_tool": "ship"}, "error": {"type": "E", "message": "no address"}}
    request = compose_request(Context([{"type": "error", "data": first}, {"type": "error", "data": second}]))
    assert [(m.form, m.sources) for m in request.messages] == [("error", (0,)), ("error", (1,))]
    assert json.loads(request.messages[0].text.split("\n", 1)[1]) == first
    assert json.loads(request.messages[1].text.split("\n", 1)[1]) == second


def test_composed_schema_is_002s_example() -> None:
    """A tool and an output schema compose into 002's schema: meta, nullable output, calls of the tool."""
    request = compose_request(Context([{"type": "tool", "tool": GREET}, {"type": "text", "text": "some prompt here"}]),
                              {"type": "object", "properties": {"summary": {"type": "string"}},
                               "required": ["summary"]})
    assert request.schema == {
        "type": "object",
        "properties": {
            "meta": {"type": "object",
                     "description": "Metadata about the idea, including version and identity. The LLM is expected "
                                    "to update this, for example by bumping the version.",
                     "properties": {"path": {"type": "string"}, "version": {"type": "string"}}},
            "output": {"type": ["object", "null"], "properties": {"summary": {"type": "string"}},
                       "required": ["summary"], "additionalProperties": False},
            "calls": {"type": "array", "items": {"type": "object",
                                                 "properties": {"_tool": {"const": "greetUser"},
                                                                "userName": {"type": "string"}},
                                                 "required": ["_tool", "userName"]}},
        },
        "required": ["meta", "calls", "output"],
    }


def test_output_is_kept_for_latent_tools_and_removed_for_explicit_ones() -> None:
    """002: a latent tool's `_output` is the model's to write; an explicit (or delegated) tool's is not."""
    context = Context([{"type": "tool", "tool": WEATHER},
                       {"type": "tool", "tool": {"think": {"properties": {"_output": {"type": "string"}}}}},
                       {"type": "tool", "tool": {"ask": {"_delegate": "ask.json",
                                                         "properties": {"_output": {"type": "string"}}}}},
                       {"type": "tool", "tool": {"off": {"_activity": "", "properties": {"_output": {}}}}}])
    activities = Activities()
    activities.add(lambda call, tool, context: None, "weatherCheck")
    request = compose_request(context, activities=activities)
    latent = {tool.name: tool.latent for tool in request.tools}
    assert latent == {"weatherCheck": False, "think": True, "ask": False, "off": True}
    items = {item["properties"]["_tool"]["const"]: item for item in calls_items(request)}
    assert "_output" not in items["weatherCheck"]["properties"]
    assert items["weatherCheck"]["properties"]["_tool"] == {"const": "weatherCheck"}
    assert items["weatherCheck"]["description"] == "Gets the current weather for a location."
    assert "_output" in items["think"]["properties"]
    assert "_output" not in items["ask"]["properties"]
    assert "_delegate" not in items["ask"]
    assert "_output" in items["off"]["properties"]
    without = compose_request(context)  # nothing loaded: every tool without an activity is latent
    assert "_output" in {t.name: t for t in without.tools}["weatherCheck"].item["properties"]


def test_nullable_output_forms() -> None:
    """Null always means "not finished": OpenAPI's `nullable`, enums, refs and no schema at all."""
    def output(schema):
        return compose_request(Context([]), schema).schema["properties"]["output"]

    assert output(None) == {}
    assert output({"type": "object", "nullable": True, "properties": {}}) == {
        "type": ["object", "null"], "properties": {}, "additionalProperties": False}
    assert output({"type": "string", "enum": ["a"]}) == {"type": ["string", "null"], "enum": ["a", None]}
    assert output({"$ref": "#/$defs/x", "$defs": {"x": {}}}) == {"anyOf": [{"$ref": "#/$defs/output.x"},
                                                                            {"type": "null"}]}


def test_a_solution_schema_gives_its_output_and_keeps_its_own_fields() -> None:
    """012 and 016 give the whole solution's schema: its `output` is the output, its other fields stay."""
    schema = {"type": "object", "properties": {"thought": {"type": "string"}, "calls": {"type": "array"},
                                               "output": {"type": "object", "nullable": True}}}
    properties = compose_request(Context([]), schema).schema["properties"]
    assert list(properties) == ["thought", "meta", "output", "calls"]
    assert properties["output"] == {"type": ["object", "null"], "additionalProperties": False}
    assert properties["calls"] == {"type": "array", "maxItems": 0}


def test_tool_references_come_from_the_registry_and_unknown_ones_are_problems(tmp_path) -> None:
    """`"tool": "Tool.detectLanguage"` takes the registry's schema; a name it lacks is a problem everywhere."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "detect.json").write_text(json.dumps(
        {"type": "object", "properties": {"_tool": {"const": "detectLanguage"}, "text": {"type": "string"}}}))
    registry = load_tools(folder)
    context = Context([{"type": "tool", "tool": "Tool.detectLanguage"}, {"type": "tool", "tool": "Tool.nope"}])
    request = compose_request(context, tools=registry)
    assert [tool.name for tool in request.tools] == ["detectLanguage"]
    assert [(p.message_index, p.reason) for p in request.problems] == [
        (1, "unknown tool 'nope': the tool registry has no such tool")]
    assert [(p.message_index, p.reason) for p in validate(context, tools=registry)] == [
        (1, "unknown tool 'nope': the tool registry has no such tool")]
    assert [p.reason for p in validate(context)] == [
        "unknown tool 'detectLanguage': no tool registry is loaded", "unknown tool 'nope': no tool registry is loaded"]


def test_a_bare_schema_is_named_after_its_file_never_after_its_keys(tmp_path) -> None:
    """A registry file holding a schema without `_tool.const` is the tool named after the file (format.md §2),
    not a tool called `properties`; in a tool message such a schema defines nothing, and says so."""
    (tmp_path / "greet.json").write_text(json.dumps(
        {"type": "object", "description": "Say hi.", "properties": {"name": {"type": "string"}}}))
    assert list(load_tools(tmp_path)) == ["greet"]
    unnamed = {"type": "tool", "tool": {"type": "object", "properties": {"name": {"type": "string"}}}}
    context = Context([unnamed, {"type": "tool", "tool": {"wave": 5}}, {"type": "tool", "tool": [5]},
                       {"type": "tool"}])
    assert compose_request(context).tools == ()
    assert [(p.message_index, p.reason) for p in validate(context)] == [
        (0, "a schema without a name: give it properties._tool.const, or write {name: schema}"),
        (1, "tool 'wave': its schema must be an object"),
        (2, "tool[0]: expected a schema naming itself in properties._tool.const, or a registry name"),
        (3, 'no \'tool\': expected a schema, {name: schema}, a list, or a registry name such as "Tool.name"'),
    ]


def test_a_python_registry_and_bad_registries(tmp_path) -> None:
    """A Python file's TOOLS is a registry; a file that defines none, or broken JSON, is a clear error."""
    module = tmp_path / "tools.py"
    module.write_text("TOOLS = {'isEnglish': {'type': 'object', 'properties': {'language': {'type': 'string'}}}}\n")
    assert list(load_tools(module)) == ["isEnglish"]
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(ToolLoadError, match="defines no TOOLS"):
        load_tools(empty)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ToolLoadError, match=r"broken\.json:1:2: "):
        load_tools(broken)


def test_presets_set_the_call_and_are_never_shown() -> None:
    """Preset messages give the model call's settings (a later key wins); the model never reads them."""
    context = Context([{"type": "preset", "model": "a", "temperature": 0.2},
                       {"type": "preset", "preset": {"model": "b"}}, {"type": "text", "text": "hi"}])
    request = compose_request(context)
    assert request.config == {"model": "b", "temperature": 0.2}
    assert [m.text for m in request.messages] == ["hi"]


def test_at_cuts_messages_tools_and_settings() -> None:
    """As of the first `at` messages: later tools, presets and messages are not part of the request."""
    context = Context([{"type": "text", "text": "a"}, {"type": "tool", "tool": GREET},
                       {"type": "preset", "model": "m"}])
    request = compose_request(context, at=1)
    assert (len(request.messages), request.tools, dict(request.config)) == (1, (), {})


def test_a_required_list_with_non_names_composes_without_them() -> None:
    """A tool whose `required` holds something other than property names (a list, a number) still composes:
    only the names that are properties are required."""
    tool = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"a": {"type": "string"}},
                                           "required": [["a"], 3, "a"]}}}
    [item] = calls_items(compose_request(Context([tool])))
    assert item["required"] == ["_tool", "a"]


def test_an_advisor_without_an_id_has_its_other_faults_said_too() -> None:
    """017: an advisor needs an id; the same message's other faults (here `on` and `scopes`) are said at once,
    each at its message, and the advisor is left out of the request."""
    request = compose_request(Context([{"type": "advisor", "on": "sometimes", "scopes": "state"}]), None)
    assert [str(problem) for problem in request.problems] == [
        "message 0: advisor: an advisor needs a non-empty string 'id'",
        "message 0: advisor: 'on' must be start, finish, request or null, not 'sometimes'",
        "message 0: advisor: 'scopes' must be an array of strings (kinds or † references)"]
    assert "advisors" not in request.schema["properties"]


def test_a_rule_at_a_tools_top_level_is_said_to_be_unread() -> None:
    """SPEC 6.2 and 015 rule a call's `_outputPath` and `_scopes` in the tool's `properties` (SPEC 6.3 reads
    `_activity` at the top level): written at the top level they rule nothing, and a prescribed path would be
    lost in silence. render and validate say so, as warnings; the same rules in `properties` are not said."""
    rules = {"_outputPath": {"const": "†state.x"}, "_scopes": {"const": ["input"]}}
    top = Context([{"type": "tool", "tool": {"t": {"type": "object", **rules}}}])
    said = ["message 0: tool: tool 't': a top-level _outputPath is not read; rule a call's _outputPath in "
            "properties._outputPath",
            "message 0: tool: tool 't': a top-level _scopes is not read; rule a call's _scopes in properties._scopes"]
    assert [str(problem) for problem in compose_request(top, None).problems] == said
    assert [(str(problem), problem.severity) for problem in validate(top)] == [(text, "warning") for text in said]
    inside = Context([{"type": "tool", "tool": {"t": {"type": "object", "properties": rules}}}])
    assert compose_request(inside, None).problems == ()


def test_a_lazy_plan_offers_latent_tools_without_their_output() -> None:
    """012: under a lazy plan the model plans only ("it will not perform latent execution"), so a latent tool's
    item has no `_output` to fill, as an explicit tool's has none (002); under an eager plan it keeps it."""
    tool = {"type": "tool", "tool": {"s": {"type": "object", "properties": {"t": {"type": "string"},
                                                                           "_output": {"type": "string"}}}}}

    def item(mode: str) -> dict:
        request = compose_request(Context([tool, {"type": "plan", "mode": mode, "plan": []}]), None)
        return dict(request.schema["properties"]["calls"]["items"]["properties"])

    assert list(item("lazy")) == ["_tool", "t"]
    assert list(item("eager")) == ["_tool", "t", "_output"]


def test_a_tool_whose_own_name_differs_from_its_key_is_said() -> None:
    """002: a tool is identified by its unique `_tool` name. Under `{name: schema}` the key names it; a schema
    whose `properties._tool.const` names another is a warning of the tool message, not a second tool."""
    schema = {"type": "object", "properties": {"_tool": {"const": "other"}}}
    request = compose_request(Context([{"type": "tool", "tool": {"greet": schema}}]), None)
    assert [str(problem) for problem in request.problems] == [
        "message 0: tool: tool 'greet': its properties._tool.const names 'other'; the tool is called 'greet'"]
    assert [tool.name for tool in request.tools] == ["greet"]


WHY = {"type": "string", "minLength": 3}
SHARED_DEFS = {"type": "object", "$defs": {"why": WHY, "step": {"type": "object", "properties": {
    "next": {"$ref": "#/$defs/step"}}}},
               "properties": {"reason": {"$ref": "#/$defs/why"}, "same": {"$ref": "#/properties/reason"},
                              "_output": {"type": "object", "properties": {"why": {"$ref": "#/$defs/why"},
                                                                           "step": {"$ref": "#/$defs/step"}}}},
               "required": ["reason"]}


def refs_of(node) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [ref for value in node.values() for ref in refs_of(value)]
    return [r for v in node for r in refs_of(v)] if isinstance(node, list) else []


def composed_refs_resolve(schema) -> None:
    """Every `$ref` of a composed schema resolves in it, read as a validator reads it (`$id`s included)."""
    from jsonschema import Draft202012Validator

    from contextdeck.engine.protocol._schemas import dangling_ref

    Draft202012Validator.check_schema(schema)
    assert dangling_ref(schema, Draft202012Validator) is None
    assert "$id" not in json.dumps(schema)
    assert "$anchor" not in json.dumps(schema)


ADDRESS = {"$id": "https://example.com/address", "type": "object",
           "$defs": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
           "properties": {"zip": {"$ref": "#/$defs/zip"}, "line": {"$anchor": "line", "type": "string"},
                          "again": {"$ref": "#line"}}}


def test_refs_read_against_a_nested_or_root_id_resolve_in_the_composed_schema() -> None:
    """A `$ref` relative to an `$id` inside an embedded schema (a tool's parameter, its `_output`, the output, an
    advisor's) or to its root's `$id`, by pointer, anchor or URI, still finds its target once composed: the `$id`s
    go (embedded, they would make `#` mean something else) and the `$ref`s become pointers from the composed root.
    The composed schema judges as the tool's own item does."""
    from jsonschema import Draft202012Validator

    tool = {"$id": "https://example.com/ship", "type": "object",
            "$defs": {"name": {"type": "string", "minLength": 2}},
            "properties": {"address": ADDRESS, "name": {"$ref": "#/$defs/name"},
                           "back": {"$ref": "https://example.com/address#/$defs/zip"},
                           "_output": {"$id": "result", "$defs": {"n": {"type": "integer"}},
                                       "properties": {"n": {"$ref": "#/$defs/n"}}}}}
    output = {"$id": "https://example.com/out", "$defs": {"w": {"type": "string"}}, "type": "object",
              "properties": {"a": {"$ref": "#/$defs/w"}, "address": ADDRESS}}
    advisor = {"type": "advisor", "id": "critic", "on": "request",
               "schema": {"properties": {"where": ADDRESS}}}
    request = compose_request(Context([{"type": "tool", "tool": {"ship": tool}}, advisor]), output)
    schema = request.schema
    composed_refs_resolve(schema)
    validator = Draft202012Validator(schema)
    good = {"meta": {}, "advisors": [{"id": "critic", "where": {"zip": "12345"}, "calls": "{}"}],
            "output": {"a": "x", "address": {"zip": "12345", "again": "x"}},
            "calls": [{"_tool": "ship", "address": {"zip": "12345", "again": "x"}, "name": "ab", "back": "54321",
                       "_output": {"n": 1}}]}
    assert list(validator.iter_errors(good)) == []
    bad = {"meta": {}, "advisors": [{"id": "critic", "where": {"zip": "1"}, "calls": "{}"}],
           "output": {"a": 1, "address": {"zip": "1", "again": 2}},
           "calls": [{"_tool": "ship", "address": {"zip": "1", "again": 2}, "name": "a", "back": "1",
                      "_output": {"n": "x"}}]}
    wrong = {".".join(map(str, error.absolute_path)) for error in validator.iter_errors(bad)}
    assert {"advisors.0.where.zip", "output.a", "output.address.zip", "output.address.again"} <= wrong
    item = Draft202012Validator(request.tools[0].item)
    call = bad["calls"][0]
    assert {".".join(map(str, e.absolute_path)) for e in item.iter_errors(call)} == {
        "address", "name", "back", "_output.n"}  # the item as the tool wrote it: the same fields wrong


def test_a_parameter_written_as_the_output_resolves_when_the_output_is_left_out() -> None:
    """A `$ref` to `#/properties/_output` in a tool whose `_output` the model is not given (an explicit tool, any
    tool under a lazy plan) points at a copy of it in the composed `$defs`, and the turn check judges the parameter
    by it, as it does for a latent tool whose `_output` it leaves to the set-up."""
    from contextdeck.engine import Document, Shape, turn_problems

    tool = {"type": "object", "properties": {"previous": {"$ref": "#/properties/_output"},
                                             "_output": {"type": "object", "properties": {"text": {"type": "string"}},
                                                         "required": ["text"]}}}
    for explicit in (True, False):
        written = {**tool, "_activity": "refine"} if explicit else tool
        context = Context([{"type": "tool", "tool": {"refine": written}}])
        request = compose_request(context, None)
        composed_refs_resolve(request.schema)
        item = calls_items(request)[0]
        assert ("_output" in item["properties"]) is not explicit
        document = Document(context, Shape.REQUEST, None)
        bad = {"output": None, "calls": [{"_tool": "refine", "previous": {"text": 1}}]}
        assert [p.path for p in turn_problems(document, bad) if p.severity == "error"] == ["$.calls[0].previous.text"]
        assert turn_problems(document, {"output": None, "calls": [{"_tool": "refine",
                                                                   "previous": {"text": "a"}}]}) == []


def test_only_refs_that_lead_into_the_tools_own_output_move() -> None:
    """A `$ref` is read against the `$id`s above it: `#/properties/_output` inside a nested `$id` is that
    subschema's own `_output`, never the tool's, and stays there (an explicit tool's composed schema types `q` as
    a string; a latent call is judged by it, not refused); an `$anchor` inside the tool's `_output` follows the
    copy when `_output` is left out."""
    from jsonschema import Draft202012Validator

    from contextdeck.engine import Document, Shape, turn_problems

    nested = {"$id": "https://example.com/p", "type": "object",
              "properties": {"_output": {"type": "string"}, "q": {"$ref": "#/properties/_output"}}}
    tool = {"type": "object", "properties": {"p": nested, "r": {"$ref": "#kept"},
                                             "_output": {"$anchor": "kept", "type": "integer"}}}
    for explicit in (True, False):
        context = Context([{"type": "tool", "tool": {"t": {**tool, "_activity": "act"} if explicit else tool}}])
        request = compose_request(context, None)
        composed_refs_resolve(request.schema)
        document = Document(context, Shape.REQUEST, None)
        for call, wrong in (({"p": {"q": "s"}, "r": 1}, []), ({"p": {"q": 1}, "r": "x"}, ["$.calls[0].p.q",
                                                                                         "$.calls[0].r"])):
            turn = {"meta": {}, "output": None, "calls": [{"_tool": "t", **call}]}
            assert [p.path for p in turn_problems(document, turn) if p.severity == "error"] == wrong
            assert Draft202012Validator(request.schema).is_valid(turn) is not wrong


def test_local_refs_of_tools_advisors_and_the_output_schema_resolve_in_the_composed_schema() -> None:
    """Embedded schemas' `$defs` move to the composed root's under `<prefix>.<name>`, their `$ref`s with them: `#` in
    the schema the model receives is its top. Two tools' `why` do not clash; `#/properties/...` follows a copy."""
    from jsonschema import Draft202012Validator
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    from contextdeck.engine import Document, Shape, turn_problems

    other = {"type": "object", "definitions": {"why": {"type": "integer"}},
             "properties": {"count": {"$ref": "#/definitions/why"}}}
    output = {"type": "object", "$defs": {"why": {"enum": ["done"]}}, "properties": {"status": {"$ref": "#/$defs/why"}}}
    advisor = {"type": "advisor", "id": "critic", "on": "request",
               "schema": {"$defs": {"why": WHY}, "properties": {"why": {"$ref": "#/$defs/why"}}}}
    context = Context([{"type": "tool", "tool": {"explain": SHARED_DEFS}}, {"type": "tool", "tool": {"count": other}},
                       advisor])
    request = compose_request(context, output)
    schema = request.schema
    Draft202012Validator.check_schema(schema)
    assert set(schema["$defs"]) == {"output.why", "advisors.critic.why", "calls.explain.why", "calls.explain.step",
                                    "calls.explain", "calls.count.why"}
    resource = DRAFT202012.create_resource(schema)
    resolver = Registry().with_resource("urn:s", resource).resolver("urn:s")
    for ref in refs_of(schema):
        resolver.lookup(ref)  # each resolves: none points to nothing
    assert schema["$defs"]["calls.count.why"] == {"type": "integer"}
    assert schema["$defs"]["calls.explain.step"]["properties"]["next"] == {"$ref": "#/$defs/calls.explain.step"}
    items = {item["properties"]["_tool"]["const"]: item for item in calls_items(request)}
    assert items["explain"]["properties"]["same"]["anyOf"][0] == {"$ref": "#/$defs/calls.explain/properties/reason"}
    validator = Draft202012Validator(schema)
    good = {"meta": {}, "output": {"status": "done"}, "advisors": [{"id": "critic", "why": "fine", "calls": "{}"}],
            "calls": [{"_tool": "explain", "reason": "because", "same": "because",
                       "_output": {"why": "it is", "step": {"next": {}}}}, {"_tool": "count", "count": 2}]}
    assert list(validator.iter_errors(good)) == []
    bad = {**good, "output": {"status": "no"}, "calls": [{"_tool": "explain", "reason": "no"},
                                                          {"_tool": "count", "count": "x"}]}
    assert len(list(validator.iter_errors(bad))) == 3
    document = Document(context, Shape.REQUEST, output)
    assert turn_problems(document, good) == []
    found = {(p.path, p.severity) for p in turn_problems(document, bad)}
    assert {("$.output.status", "error"), ("$.calls[0].reason", "error"), ("$.calls[1].count", "error")} <= found
    assert "calls.explain.why" in request.schema_text()
    assert compose_request(Context([]), {"$ref": "http://x/s"}).schema["properties"]["output"] == {
        "anyOf": [{"$ref": "http://x/s"}, {"type": "null"}]}  # a remote ref stays (refused elsewhere)


# -- the composed calls item judges a call as the tool's own item does -------------------------------------------

_LEAVES = [{"type": "string"}, {"type": "integer", "minimum": 0}, {"enum": [1, "ab"]},
           {"type": "string", "minLength": 2}, True, {"type": "array", "items": {"type": "integer"}}]
_VALUES = ["x", "ab", 1, -1, [1], ["ab"], {"zip": "12345"}, {"zip": "1"}, None, {"text": "a"}, {"text": 1}]


@st.composite
def _embedded_tools(draw: st.DrawFn) -> dict[str, Any]:
    """A tool schema with local `$ref`s of every kind the composition rewrites: into its `$defs` or `definitions`,
    into its properties (`#/properties/...`, its `_output`'s), the whole schema, and relative to a nested `$id`
    (by pointer and by anchor), maybe a root `$id` too."""
    defs = {"d": draw(st.sampled_from(_LEAVES)), "list": {"type": "array", "items": {"$ref": "#/$defs/d"}}}
    # a boolean schema cannot carry an `$anchor`: reached by pointer only
    leaf = draw(st.sampled_from([*_LEAVES, False]))
    zip_ref = draw(st.sampled_from(["#/$defs/zip", "#z"])) if isinstance(leaf, dict) else "#/$defs/zip"
    nested = {"$id": "https://example.com/n", "type": "object",
              "$defs": {"zip": {**leaf, "$anchor": "z"} if isinstance(leaf, dict) else leaf},
              "properties": {"zip": {"$ref": zip_ref}}}
    choices = [*_LEAVES, {"$ref": "#/$defs/d"}, {"$ref": "#/$defs/list"}, {"$ref": "#/definitions/e"},
               {"$ref": "#/properties/_output"}, {"$ref": "#/properties/a"}, nested,
               {"$ref": "https://example.com/n#/$defs/zip"}, {"type": "array", "items": {"$ref": "#/properties/b"}}]
    properties = {name: draw(st.sampled_from(choices)) for name in ("a", "b", "c")}
    if properties["a"] == {"$ref": "#/properties/a"}:
        properties["a"] = {"type": "string"}  # a `$ref` to itself refers back to itself
    if properties["b"] == {"type": "array", "items": {"$ref": "#/properties/b"}}:
        properties["b"] = {"type": "integer"}
    # `#/properties/b` from `a` and `a` from `b` would loop: `b` may not point back at `a`
    if properties["b"] == {"$ref": "#/properties/a"} and properties["a"] in ({"$ref": "#/properties/b"},):
        properties["b"] = {"type": "string"}
    if {"$ref": "https://example.com/n#/$defs/zip"} in properties.values() and nested not in properties.values():
        properties["c"] = nested  # the `$id` a reference from outside reaches into
    properties["_output"] = {"type": "object", "properties": {"text": draw(st.sampled_from(_LEAVES))}}
    schema: dict[str, Any] = {"type": "object", "$defs": defs, "definitions": {"e": draw(st.sampled_from(_LEAVES))},
                              "properties": properties,
                              "required": draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True))}
    if draw(st.booleans()):
        schema["$id"] = "https://example.com/tool"
    if draw(st.booleans()):
        schema["_activity"] = "act"  # explicit: its `_output` left out of the item
    return schema


def test_a_ref_to_a_boolean_schema_under_an_id_resolves_in_the_composed_schema() -> None:
    """A `$ref` read against an `$id` that leads to a boolean schema (`false` refuses every value) leads to a copy
    of it in the composed `$defs`, by pointer or by URI, in a tool whose `_output` is sent or left out."""
    from jsonschema import Draft202012Validator

    nested = {"type": "object", "properties": {"a": {"$id": "https://example.com/n", "$defs": {"no": False},
                                                     "$ref": "#/$defs/no"}}}
    by_uri = {"$id": "https://example.com/r", "type": "object",
              "properties": {"n": {"$id": "n", "$defs": {"no": False}}, "a": {"$ref": "n#/$defs/no"}}}
    into_output = {"$id": "https://example.com/o", "type": "object", "_activity": "act",
                   "properties": {"a": {"$ref": "#/properties/_output"},
                                  "_output": {"$id": "out", "$defs": {"no": False}, "type": "object",
                                              "properties": {"b": {"$ref": "#/$defs/no"}}}}}
    for tool, wrong in ((nested, {"a": 1}), (by_uri, {"a": 1}), (into_output, {"a": {"b": 1}})):
        request = compose_request(Context([{"type": "tool", "tool": {"t": tool}}]), None)
        composed_refs_resolve(request.schema)
        validator = Draft202012Validator(request.schema)
        assert not validator.is_valid({"meta": {}, "output": None, "calls": [{"_tool": "t", **wrong}]})
        assert validator.is_valid({"meta": {}, "output": None, "calls": [{"_tool": "t"}]})


def test_a_root_ref_and_a_ref_to_the_whole_tool_resolve_in_the_composed_schema() -> None:
    """A `$ref` at the root of an embedded schema with an `$id`, and `#` (the tool's whole item) from a parameter and
    from inside an `_output` that is left out, lead where they led: the item keeps `#` for itself, the composed schema
    points at the item's copy, and both judge a call alike."""
    from jsonschema import Draft202012Validator

    output = {"$id": "https://example.com/o", "$ref": "#/$defs/pair", "$defs": {"pair": {"required": ["a"]}}}
    tool = {"$id": "https://example.com/t", "type": "object", "_activity": "act",
            "properties": {"self": {"$ref": "#"}, "prev": {"$ref": "#/properties/_output"}, "n": {"type": "integer"},
                           "_output": {"type": "object", "properties": {"again": {"$ref": "#"}}}}}
    request = compose_request(Context([{"type": "tool", "tool": {"t": tool}}]), output)
    composed_refs_resolve(request.schema)
    item = request.tools[0].item
    assert item["properties"]["self"]["anyOf"][0] == {"$ref": "#"}
    assert item["$defs"]["_output"]["properties"]["again"] == {"$ref": "#"}
    validator, alone = Draft202012Validator(request.schema), Draft202012Validator(item)
    good = {"_tool": "t", "self": {"_tool": "t", "n": 1}, "prev": {"again": {"_tool": "t", "n": 2}}}
    for call, valid in ((good, True), ({"_tool": "t", "self": {"_tool": "t", "n": "x"}}, False),
                        ({"_tool": "t", "prev": {"again": {"_tool": "t", "n": "x"}}}, False)):
        assert alone.is_valid(call) is valid
        assert validator.is_valid({"meta": {}, "output": None, "calls": [call]}) is valid
    assert validator.is_valid({"meta": {}, "output": {"a": 1}, "calls": []})
    assert not validator.is_valid({"meta": {}, "output": {"b": 1}, "calls": []})


def test_a_defs_name_with_a_percent_sign_resolves_in_the_composed_schema() -> None:
    """A `$ref` is a URI fragment: `#/$defs/a%2541` names the `$defs` key `a%41` (not `aA`), and so does the
    rewritten one."""
    tool = {"type": "object", "$defs": {"a%41": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a%2541"}}}
    request = compose_request(Context([{"type": "tool", "tool": {"t": tool}}]), None)
    composed_refs_resolve(request.schema)


@settings(max_examples=100, deadline=None)
@given(_embedded_tools(), st.fixed_dictionaries({}, optional={name: st.sampled_from(_VALUES) for name in "abc"}))
def test_the_composed_calls_item_judges_a_call_as_the_tool_s_item_does(schema, call) -> None:
    """The turn check judges each call against its tool's item as written (its own `$defs`, `$id`s and anchors); the
    model is sent that item hoisted into the composed schema. For every tool and call the two agree: the call is
    valid under one exactly when it is under the other, and the turn check refuses it exactly then."""
    from jsonschema import Draft202012Validator

    from contextdeck.engine import Document, Shape, turn_problems
    from contextdeck.engine.protocol._schemas import dangling_ref

    context = Context([{"type": "tool", "tool": {"t": schema}}])
    request = compose_request(context, None)
    composed = request.schema
    assert dangling_ref(composed, Draft202012Validator) is None
    item = request.tools[0].item
    call = {"_tool": "t", **call}
    alone = not list(Draft202012Validator(item).iter_errors(call))
    solution = {"meta": {}, "output": None, "calls": [call]}
    sent = not list(Draft202012Validator(composed).iter_errors(solution))
    assert alone == sent
    refused = [p for p in turn_problems(Document(context, Shape.REQUEST, None), solution)
               if p.severity == "error" and p.path.startswith("$.calls")]
    assert (not refused) == sent


def test_a_tool_or_request_schema_of_another_dialect_is_a_warning_of_validate() -> None:
    """The composed schema is 2020-12, where a tool's draft-07 keywords (a tuple `items`, `dependencies`) mean
    otherwise than in the tool's own item, which the turn check judges: where the two could read a call apart,
    validate warns at the tool (and at the request's schema); a schema declaring 2020-12, or nothing, is not told."""
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"q": {"dependencies": {"x": ["y"]}}}}
    same = {**draft7, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    context = Context([{"type": "tool", "tool": {"pair": draft7}}, {"type": "tool", "tool": {"other": same}}])
    said = [(p.message_index, p.path, p.severity) for p in validate(context, schema=draft7)]
    assert said == [(0, "tool", "warning"), (None, "schema", "warning")]
    assert "tool 'pair': its schema declares $schema 'http://json-schema.org/draft-07/schema#'" in str(
        validate(context)[0])


def test_an_advisor_schema_of_another_dialect_is_a_warning_as_a_tool_s_is() -> None:
    """017: an advisor's schema is composed into the request (2020-12) and its advice checked against the schema as
    written: one declaring draft-07 is warned about at the advisor, as a tool's is; the warning refuses nothing."""
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"q": {"dependencies": {"x": ["y"]}}}}
    advisor = {"type": "advisor", "id": "critic", "on": "request", "schema": draft7}
    same = {**advisor, "id": "plain", "schema": {**draft7, "$schema": "https://json-schema.org/draft/2020-12/schema"}}
    context = Context([advisor, same])
    said = [(p.message_index, p.path, p.severity, p.reason) for p in validate(context)]
    assert said == [(0, "advisor critic", "warning", "its schema " + foreign_dialect(draft7))]
    assert [str(p) for p in compose_request(context, None).problems] == [str(validate(context)[0])]
    solution = {"advisors": [{"id": "critic", "calls": "{}"}, {"id": "plain", "calls": "{}"}], "calls": [],
                "output": "done"}
    assert solution_refusals(context, solution) == []


D4 = "http://json-schema.org/draft-04/schema#"


def test_draft_04_ids_are_read_and_dropped_as_later_drafts_ids_are() -> None:
    """A schema declaring draft-04 says where its `$ref`s are read from with `id` (not `$id`): a `$ref` relative to a
    nested `id`, by pointer or by URI, still finds its target once composed, and the `id`s go (left in, with the
    embedded `$schema`, they would make the composed `#` mean something else). The composed schema judges a call
    as the tool's own item does, in a parameter and in an `_output` left out."""
    from jsonschema import Draft4Validator, Draft202012Validator

    nested = {"id": "http://example.com/p", "definitions": {"x": {"type": "integer"}},
              "properties": {"q": {"$ref": "#/definitions/x"}}}
    tools = [{"$schema": D4, "type": "object", "definitions": {"x": {"type": "string"}},
              "properties": {"p": nested, "s": {"$ref": "#/definitions/x"}}},
             {"$schema": D4, "type": "object", "definitions": {"x": {"type": "string"}},
              "properties": {"p": nested, "r": {"$ref": "http://example.com/p#/definitions/x"}}},
             {"$schema": D4, "type": "object", "_activity": "act",
              "properties": {"p": {"$ref": "#/properties/_output"}, "_output": nested}}]
    calls = [{"p": {"q": 1}, "r": 1, "s": "a"}, {"p": {"q": "a"}}, {"r": "a"}, {"s": 1}]
    for tool in tools:
        request = compose_request(Context([{"type": "tool", "tool": {"t": tool}}]), None)
        assert '"id": "http' not in json.dumps(request.schema)
        composed, alone = Draft202012Validator(request.schema), Draft4Validator(request.tools[0].item)
        judged = [(alone.is_valid(call), composed.is_valid({"meta": {}, "output": None, "calls": [call]}))
                  for call in ({"_tool": "t", **given} for given in calls)]
        assert all(left == right for left, right in judged)
        assert (False, False) in judged  # the nested `id`'s integer, not the root's string
    plain = {"type": "object", "properties": {"id": {"type": "string"}, "a": {"$ref": "#/properties/id"}}}
    item = calls_items(compose_request(Context([{"type": "tool", "tool": {"t": plain}}]), None))[0]
    assert "id" in item["properties"]  # a property named id is no identifier


@pytest.mark.parametrize("tool", [
    {"$schema": D4, "id": "http://example.com/t", "type": "object",
     "properties": {"id": {"type": "string"}, "name": {"type": "string"}}, "dependencies": {"id": ["name"]}},
    {"$schema": D4, "type": "object", "dependencies": {"id": ["name"]},
     "properties": {"id": {"type": "string"}, "name": {"type": "string", "default": {"id": "x"}}}},
    {"type": "object", "x-note": {"id": 5, "$id": ["x"]}, "properties": {"a": {"$ref": "#/$defs/a"}},
     "$defs": {"a": {"$id": "http://example.com/a", "type": "integer"}}},
    {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
     "dependentRequired": {"id": ["name"]}, "$id": "http://example.com/r"}])
def test_names_under_dependencies_and_ids_that_are_no_strings_compose(tool: Any) -> None:
    """`dependencies` (draft-04's property dependencies: `{"id": ["name"]}`) and `dependentRequired` hold property
    names, not schemas: a property named `id` there is no identifier, and an `id` or `$id` that is no string under
    a keyword no dialect has scopes nothing. The request composes (it raised, so render, run and the LLM view
    failed on such a document that validate called ok) and judges a call as the tool's own item does."""
    from jsonschema import Draft202012Validator, validators

    request = compose_request(Context([{"type": "tool", "tool": {"t": tool}}]), None)
    composed = Draft202012Validator(request.schema)
    alone = validators.validator_for(tool)(request.tools[0].item)
    for call in ({"id": "a", "name": "b"}, {"id": "a"}, {"name": "b"}, {"a": 1}, {"a": "x"}):
        given = {"_tool": "t", **call}
        assert alone.is_valid(given) == composed.is_valid({"meta": {}, "output": None, "calls": [given]}), call


def test_a_dynamic_ref_in_an_embedded_schema_is_a_warning_with_its_place() -> None:
    """A `$dynamicRef` finds its target through the dynamic scope, made of the `$id` resources the composition merges
    into one: the request may resolve it otherwise, or not at all (one naming an `$id`'s URI). validate says so at
    the tool, the advisor and the request's schema, with where it is (a JSON pointer), as a warning."""
    tree = {"$id": "https://example.com/tree", "$dynamicAnchor": "node", "type": "object",
            "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}},
                           "other": {"$dynamicRef": "https://example.com/tree#node"}}}
    advisor = {"type": "advisor", "id": "critic", "on": "request", "schema": {"properties": {"tree": tree}}}
    context = Context([{"type": "tool", "tool": {"t": tree}}, advisor])
    said = [(p.message_index, p.path, p.severity, p.reason) for p in validate(context, schema=tree)]
    where = "/properties/children/items (and 1 more)"
    reason = (f"has a $dynamicRef at #{where}, which the request the model receives (one schema, its $ids merged) "
              "may resolve otherwise or not at all: write it as a $ref")
    assert said == [(0, "tool", "warning", "tool 't': its schema " + reason),
                    (1, "advisor critic", "warning", "its schema " + reason.replace("#/", "#/properties/tree/", 1)),
                    (None, "schema", "warning", "the request's schema " + reason)]


def test_a_tool_message_that_is_its_own_schema_offers_an_object() -> None:
    """SPEC 2: a tool is "a single schema whose `properties._tool.const` is its name"; written as the message
    itself, its `type` is the message's form ("tool"), not the schema's, so the tool's calls are objects (002: a
    tool is a JSON Schema object) and the request offers a schema a provider accepts."""
    own = {"type": "tool", "description": "Greets.",
           "properties": {"_tool": {"const": "greet"}, "n": {"type": "integer"}}, "required": ["n"]}
    for message in (own, {"role": "user", "content": own}):
        context = Context([message])
        (item,) = calls_items(compose_request(context, None))
        assert item["type"] == "object"
        assert item["description"] == "Greets."
        assert validate(context) == []
    calls = Context([own, {"type": "plan", "plan": [{"_tool": "greet", "n": "five"}]}])
    assert [str(p) for p in validate(calls)] == [
        "message 1: call 0 (greet): parameters: invalid parameters for 'greet': $.n: 'five' is not of type "
        "'integer'"]


_KEYWORDS = ["$schema", "$ref", "$id", "$anchor", "$dynamicRef", "$defs", "definitions", "properties",
             "patternProperties", "dependencies", "dependentRequired", "items", "allOf", "anyOf", "not", "const",
             "enum", "id", "a"]
_REFS = st.sampled_from(["#", "#/properties/a", "#/$defs/d", "#/allOf/a", "#/allOf/0", "#x", "urn:x#/a", "#/items"])
_JUNK = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2, 2), _REFS, st.just("x")),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.sampled_from(_KEYWORDS), inner, max_size=4)),
                     max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYWORDS), _JUNK, max_size=5))
def test_any_schema_is_validated_and_rendered_without_an_internal_error(schema) -> None:
    """Whatever a tool's or a data message's schema holds under its keywords (refs into arrays by name, a `$schema`,
    `$id`s and anchors that are no strings, `properties` that is a list), `validate` says what is wrong and `render`
    composes: neither raises."""
    context = Context([{"type": "tool", "tool": {"t": schema}}, {"type": "state", "data": {"a": 1}, "schema": schema},
                       {"type": "text", "role": "user", "text": "hi"}])
    validate(context, None)
    assert compose_request(context, None).text()


def test_advice_is_judged_against_the_context_as_edited() -> None:
    """The advisors are read from the context's index of them, kept through every edit: an advisor inserted is
    found, one replaced by a text or removed is not. An `on: start` advisor advises until an earlier request shows:
    a plan, an output (`_outputPath`) or an error, wherever it is."""
    opener = {"type": "advisor", "id": "opener", "on": "start"}
    advice = {"advisors": [{"id": "opener", "calls": "{}"}], "calls": []}
    context = Context([{"type": "text", "text": "hi"}, {"type": "data", "kind": "state", "data": {"x": 1}}])

    def reasons() -> list[str]:
        return [problem.reason for problem in solution_refusals(context, advice)]

    assert reasons() == ["no advisor has the id 'opener'"]
    context.insert(1, opener)
    assert reasons() == []
    not_now = "advisor 'opener' gives no advice in this request: it is consulted at the start only (017)"
    for later in ({"type": "data", "kind": "state", "data": 2, "_outputPath": "†state.x", "_outputMethod": "set"},
                  {"type": "data", "kind": "error", "data": {"message": "boom"}},
                  {"type": "plan", "plan": []}):
        context.append(later)
        assert reasons() == [not_now], later
        context.remove(len(context) - 1)
        assert reasons() == []
    context.replace(1, {"type": "text", "text": "no longer an advisor"})
    assert reasons() == ["no advisor has the id 'opener'"]
    context.replace(1, opener)
    context.move(1, 2)
    assert reasons() == []
    context.remove(2)
    assert reasons() == ["no advisor has the id 'opener'"]
