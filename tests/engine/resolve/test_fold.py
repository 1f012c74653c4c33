"""Message forms (SPEC 2) and the fold (SPEC 4): layers, output paths, sources, `at`, diagnostics."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from contextdeck.engine import Context, Form, classify, kind_of, payload_of
from contextdeck.engine.resolve._fold import fold


def resolve(messages: list[dict[str, Any]], expr: str, **kw: Any) -> tuple[bool, Any, list[int]]:
    result = Context(messages).resolve(expr, **kw)
    return result.found, result.value, list(result.sources)


# -- message forms ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "kind", "payload"),
    [
        ({"type": "data", "kind": "user", "data": {"a": 1}, "schema": {}, "description": "d"}, "user", {"a": 1}),
        ({"type": "data", "data": [1]}, "data", [1]),
        ({"type": "data", "a": 1, "kind": "k", "schema": {}, "_instance": "i"}, "k", {"a": 1}),
        ({"type": "state", "_instance": "①", "text": "Hello"}, "state", {"text": "Hello"}),
        ({"type": "input", "input": {"q": 1}, "schema": {}}, "input", {"q": 1}),
        ({"type": "input", "input": None, "data": 5}, "input", None),
        ({"type": "state", "data": {"d": 1}, "other": 2}, "state", {"d": 1}),
        ({"type": "state", "a": 1, "kind": "x", "description": "d", "_date": "t"}, "state", {"a": 1, "kind": "x"}),
        ({"type": "error", "data": {"call": {}, "error": {"type": "E", "message": "m"}}}, "error",
         {"call": {}, "error": {"type": "E", "message": "m"}}),
    ],
)
def test_kind_and_payload_of_every_data_form(message, kind, payload) -> None:
    """kind defaults to data; the payload is the key named like the type, else data, else the loose keys."""
    assert kind_of(message) == kind
    assert payload_of(message) == payload
    assert classify(message).form is Form.DATA


@pytest.mark.parametrize(
    ("message", "form"),
    [({"type": "text", "text": "t"}, Form.TEXT), ({"type": "tool", "tool": {}}, Form.TOOL),
     ({"type": "plan", "plan": [], "_instance": "①"}, Form.PLAN)],
)
def test_text_tool_and_plan_are_not_data(message, form) -> None:
    """text, tool and plan messages have no kind and no identity; a plan is never instanced."""
    info = classify(message)
    assert (info.form, info.kind, info.identity) == (form, None, None)


def test_identity_is_kind_and_instance() -> None:
    """Identity is (kind, _instance); an instance id that is not a string is compared as text."""
    assert classify({"type": "state", "data": 1}).identity == ("state", None)
    assert classify({"type": "state", "data": 1, "_instance": "①"}).identity == ("state", "①")
    assert classify({"type": "state", "data": 1, "_instance": 2}).identity == ("state", "2")


def test_shorthand_keyed_payload_resolves() -> None:
    """{"type":"input","input":{...}} is read as †input."""
    assert resolve([{"type": "input", "input": {"q": "why"}}], "†input.q") == (True, "why", [0])


def test_error_messages_are_data_of_kind_error() -> None:
    """An error message resolves under †error."""
    message = {"type": "error", "data": {"call": {"_tool": "t"}, "error": {"type": "E", "message": "boom"}}}
    assert resolve([message], "†error.error.message")[1] == "boom"


# -- layers -------------------------------------------------------------------------------------------


LAYERED = [
    {"type": "state", "_instance": "①", "data": {"v": "mine", "only": 1}},
    {"type": "state", "data": {"v": "global", "g": True}},
    {"type": "state", "_instance": "②", "data": {"v": "other"}},
]


def test_instance_layer_overrides_global_whatever_the_order() -> None:
    """A targeted message wins over a global one even when the global one comes later."""
    assert resolve(LAYERED, "†state.v", instance="①") == (True, "mine", [0])
    assert resolve(LAYERED, "†state", instance="①")[1] == {"v": "mine", "g": True, "only": 1}


def test_global_resolution_ignores_instances() -> None:
    """Without an instance only the global layer counts."""
    assert resolve(LAYERED, "†state") == (True, {"v": "global", "g": True}, [1])
    assert resolve(LAYERED, "†state.only")[0] is False


def test_an_unknown_instance_sees_the_global_layer() -> None:
    """An instance with no messages of its own resolves to the global value."""
    assert resolve(LAYERED, "†state.v", instance="③") == (True, "global", [1])


def test_instances_do_not_see_each_other() -> None:
    """Instance ② never sees instance ①'s data."""
    assert resolve(LAYERED, "†state.only", instance="②")[0] is False


# -- output messages (SPEC 4.4) ------------------------------------------------------------------


BASE = {"type": "state", "data": {"user": {"name": "Ann"}, "audit": {}}}


def output(data: Any, **meta: Any) -> dict[str, Any]:
    return {"type": "data", "kind": "state", "data": data, **meta}


def test_explicit_output_path_writes_with_set_by_default() -> None:
    """An output with _outputPath sets the value its data holds at that path."""
    msg = output({"user": {"name": "Bob", "extra": 1}}, _outputPath="†state.user.name")
    assert resolve([BASE, msg], "†state.user") == (True, {"name": "Bob"}, [0, 1])


def test_output_path_is_derived_from_the_call() -> None:
    """Without _outputPath the first destination of _call._outputPath of this kind present in data is used."""
    call = {"_tool": "verifyUser", "_outputPath": "†input.user.verified || †state.user.verified || †state.user.failed"}
    msg = output({"user": {"failed": "no"}}, _call=call)
    assert resolve([BASE, msg], "†state.user") == (True, {"name": "Ann", "failed": "no"}, [0, 1])


def test_fan_out_writes_one_message_per_destination() -> None:
    """generateSummary's `a && b` output messages each carry their own destination."""
    call = {"_tool": "generateSummary", "_outputPath": "†state.user.summary && †state.audit.summary"}
    first = output({"user": {"summary": "S"}}, _call=call, _outputPath="†state.user.summary")
    second = output({"audit": {"summary": "S"}}, _call=call, _outputPath="†state.audit.summary")
    assert resolve([BASE, first, second], "†state.user.summary && †state.audit.summary") == (True, "S", [1, 2])


def test_a_set_output_replaces_the_earlier_value_but_not_its_siblings() -> None:
    """A derived set at user.name replaces only that key; the rest of the object is kept."""
    call = {"_tool": "t", "_outputPath": "†state.user.name"}
    data = {"user": {"name": {"first": "B"}, "ignored": 1}}
    assert resolve([BASE, output(data, _call=call)], "†state.user") == (True, {"name": {"first": "B"}}, [0, 1])


@pytest.mark.parametrize(
    ("meta", "words"),
    [
        ({"_call": {"_tool": "t", "_outputPath": "†state.elsewhere"}}, "no destination"),
        ({"_call": {"_tool": "t", "_outputPath": "†state..x"}}, "position 7"),
        ({"_outputPath": "†state.missing"}, "holds no value at missing"),
        ({"_outputPath": "†state.a || †state.b"}, "one destination"),
        ({"_outputPath": "†input.user"}, "kind 'input'"),
        ({"_outputPath": 5}, "not a string"),
        ({"_call": {"_tool": "t", "_outputPath": 7}}, "_call._outputPath is not a string"),
        ({"_call": {"_tool": "t", "_outputPath": {"user": 1}}}, "_call._outputPath is not a string"),
        ({"_outputMethod": "append"}, "unknown _outputMethod"),
    ],
)
def test_an_unusable_output_is_skipped_with_a_diagnostic(meta, words) -> None:
    """An output whose path cannot be found or used changes nothing and says why."""
    messages = [BASE, output({"user": {"name": "Zed"}}, **meta)]
    result = Context(messages).resolve("†state.user.name")
    assert (result.found, result.value, list(result.sources)) == (True, "Ann", [0])
    assert [d.message_index for d in result.diagnostics] == [1]
    assert words in result.diagnostics[0].reason


def test_a_method_without_a_path_applies_at_the_root() -> None:
    """_outputMethod on a data message without a path acts on the whole value."""
    messages = [{"type": "log", "data": ["a"]}, {"type": "log", "data": "b", "_outputMethod": "push"}]
    assert resolve(messages, "†log") == (True, ["a", "b"], [0, 1])


def test_a_call_without_output_path_is_a_root_merge() -> None:
    """A data message carrying only _call (an activity's returned message) deep-merges at the root."""
    messages = [BASE, output({"user": {"age": 3}}, _call={"_tool": "t"})]
    assert resolve(messages, "†state.user")[1] == {"name": "Ann", "age": 3}


# -- the seeds ------------------------------------------------------------------------------------


SEED_000 = [
    {"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}},
    {"type": "data", "data": {"user": {"status": "inactive"}},
     "_call": {"_tool": "updateUserStatus", "newStatus": "inactive", "_outputPath": "†data.user.status"},
     "_date": "2025-10-26T12:00:00Z"},
]


@pytest.mark.parametrize(
    ("expr", "value", "sources"),
    [("†data.user.status", "inactive", [1]), ("†data.user.name", "Alex", [0]),
     ("†data.user", {"name": "Alex", "status": "inactive"}, [0, 1])],
)
def test_seed_000_worked_example(expr, value, sources) -> None:
    """SPEC 4's worked example: status from the output, name from the first message, user from both."""
    assert resolve(SEED_000, expr) == (True, value, sources)


def test_reverse_chronological_push_history() -> None:
    """Seed 000's newest-to-oldest rule: a set stops the history, later pushes add on top."""
    messages = [output({"log": ["old"]}, _outputPath="†state.log"),
                output({"log": ["new"]}, _outputPath="†state.log"),
                output({"log": "a"}, _outputPath="†state.log", _outputMethod="push"),
                output({"log": ["b", "c"]}, _outputPath="†state.log", _outputMethod="concat")]
    assert resolve(messages, "†state.log") == (True, ["new", "a", "b", "c"], [1, 2, 3])


# -- sources (SPEC 4.8) ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "expr", "sources"),
    [
        # A root merge that does not reach the path is not a source of it.
        ([{"type": "s", "data": {"a": 1}}, {"type": "s", "data": {"b": 2}}], "†s.a", [0]),
        ([{"type": "s", "data": {"a": 1}}, {"type": "s", "data": {"b": 2}}], "†s", [0, 1]),
        # A merge that replaces the value resets the sources.
        ([{"type": "s", "data": {"a": {"x": 1}}}, {"type": "s", "data": {"a": 5}}], "†s.a", [1]),
        # A merge into an object adds to them.
        ([{"type": "s", "data": {"a": {"x": 1}}}, {"type": "s", "data": {"a": {"y": 1}}}], "†s.a", [0, 1]),
        # A write below the path adds; a sibling write does not.
        ([{"type": "s", "data": {"a": {"x": 1}, "b": 1}}, output({"a": {"y": 2}}, type="s", _outputPath="†s.a.y")],
         "†s.a", [0, 1]),
        ([{"type": "s", "data": {"a": {"x": 1}, "b": 1}}, output({"b": 2}, type="s", _outputPath="†s.b")],
         "†s.a", [0]),
        # A write below a scalar replaces it: the scalar's message is no longer a source.
        ([{"type": "s", "data": {"a": 5}}, output({"a": {"y": 2}}, type="s", _outputPath="†s.a.y")], "†s.a", [1]),
        # A push adds to the array; the pushed element comes from the push alone.
        ([{"type": "s", "data": {"l": []}}, output({"l": 1}, type="s", _outputPath="†s.l", _outputMethod="push")],
         "†s.l", [0, 1]),
        ([{"type": "s", "data": {"l": [0]}}, output({"l": 1}, type="s", _outputPath="†s.l", _outputMethod="push")],
         "†s.l.1", [1]),
        ([{"type": "s", "data": {"l": [0]}}, output({"l": 1}, type="s", _outputPath="†s.l", _outputMethod="push")],
         "†s.l.0", [0]),
        # assign replaces the keys it names, whole.
        ([{"type": "s", "data": {"a": {"k": {"x": 1}}}},
          output({"a": {"k": {"y": 1}}}, type="s", _outputPath="†s.a", _outputMethod="assign")], "†s.a.k", [1]),
        # A conflict is no source.
        ([{"type": "s", "data": {"a": 1}}, output({"a": 2}, type="s", _outputPath="†s.a", _outputMethod="push")],
         "†s.a", [0]),
    ],
)
def test_sources_are_the_messages_the_value_came_from(messages, expr, sources) -> None:
    """Sources: the last write that replaced the value, then every later write that changed part of it."""
    assert resolve(messages, expr)[2] == sources


def test_not_found_has_no_sources() -> None:
    """A value that is not found comes from no message."""
    assert resolve([{"type": "s", "data": {"a": 1}}], "†s.b")[2] == []


# -- at ---------------------------------------------------------------------------------------------


def test_at_resolves_as_of_the_first_n_messages() -> None:
    """at=n ignores message n and later; at=0 sees nothing; at beyond the end sees everything."""
    assert resolve(SEED_000, "†data.user.status", at=1) == (True, "active", [0])
    assert resolve(SEED_000, "†data.user.status", at=0)[0] is False
    assert resolve(SEED_000, "†data.user.status", at=99)[1] == "inactive"


def test_a_whole_kind_and_identities() -> None:
    """`†kind` resolves to the whole folded value; identities lists (kind, instance) by first appearance."""
    ctx = Context(LAYERED)
    assert ctx.resolve("†state", "②").value == {"v": "other", "g": True}
    assert ctx.identities() == [("state", "①"), ("state", None), ("state", "②")]
    assert ctx.identities(at=1) == [("state", "①")]


def test_resolution_never_raises_for_bad_data() -> None:
    """Strange but loadable messages resolve with diagnostics, never an exception."""
    messages = [
        {"type": "state", "data": 5},
        {"type": "state", "data": {"a": 1}, "_outputPath": ["†state.a"]},
        {"type": "state", "data": {"a": 1}, "_call": "not a call"},
        {"type": "state", "data": {"a": 1}, "_call": {"_outputPath": 7}},
        {"type": "data", "kind": 3, "data": {"a": 1}},
        {"type": "state", "_outputMethod": None, "data": {"b": [1]}, "_outputPath": "†state.b.0.x"},
    ]
    ctx = Context(messages)
    for expr in ("†state", "†state.a", "†state.b.0.x", "†data.a"):
        ctx.resolve(expr)
    assert ctx.resolve("†state.a").value == 1


def test_at_beyond_the_end_never_raises() -> None:
    """resolve and identities accept any at: past the end means everything."""
    ctx = Context(SEED_000)
    assert ctx.resolve("†data", at=99) == ctx.resolve("†data")
    assert ctx.identities(at=99) == [("data", None)]


def test_tools_in_both_forms_and_the_latest_definition_wins() -> None:
    """A tool message is a name → schema map or one schema named by properties._tool.const; later wins."""
    from contextdeck.engine import tool_definitions

    single = {"type": "object", "properties": {"_tool": {"const": "greetUser"}, "name": {"type": "string"}}}
    messages = [
        {"type": "tool", "tool": {"greetUser": {"type": "object"}, "other": {"type": "object"}}},
        {"type": "tool", "tool": single},
        {"type": "text", "text": "not a tool"},
    ]
    tools = tool_definitions(Context(messages))
    assert sorted(tools) == ["greetUser", "other"]
    assert (tools["greetUser"].schema, tools["greetUser"].message_index) == (single, 1)
    assert tool_definitions(Context(messages), at=1)["greetUser"].schema == {"type": "object"}


def test_seed_variables_branch_and_fan_out(examples) -> None:
    """seed 002: the plan's references resolve; verifyUser's `||` output lands on one branch, generateSummary's
    `&&` outputs on both, each message carrying its call and concrete destination as SPEC 6.5 writes them."""
    from contextdeck.engine import load_document, pending_calls

    ctx = load_document(examples / "seed_variables.json").context
    calls, _ = pending_calls(ctx)
    assert [ctx.resolve(call[key]).value for call, key in zip(calls, ("userName", "userId", "text"), strict=True)] \
        == ["Ada", "perfect-stranger", "Long body of text here..."]
    verify, summary = calls[1], calls[2]
    ctx.append({"type": "data", "kind": "state", "data": {"user": {"failed": "unknown id"}}, "_call": verify,
                "_outputPath": "†state.user.failed", "_date": "2026-01-01T00:00:00Z"})
    for destination in ("user", "audit"):
        ctx.append({"type": "data", "kind": "state", "data": {destination: {"summary": "S"}}, "_call": summary,
                    "_outputPath": f"†state.{destination}.summary", "_date": "2026-01-01T00:00:01Z"})
    branch = ctx.resolve(verify["_outputPath"])
    assert (branch.found, branch.value, list(branch.sources)) == (True, "unknown id", [5])
    fan_out = ctx.resolve(summary["_outputPath"])
    assert (fan_out.value, list(fan_out.sources)) == ("S", [6, 7])
    assert ctx.resolve("†state").value == {"user": {"failed": "unknown id", "summary": "S"}, "audit": {"summary": "S"}}


def test_the_method_is_the_messages_own_not_the_calls() -> None:
    """An output without _outputMethod sets, even when its _call asked for push."""
    call = {"_tool": "t", "_outputPath": "†state.log", "_outputMethod": "push"}
    messages = [output({"log": ["a"]}, _outputPath="†state.log"), output({"log": "b"}, _call=call)]
    assert resolve(messages, "†state.log") == (True, "b", [1])


def test_null_instance_is_global_and_a_non_string_kind_is_data() -> None:
    """_instance: null belongs to the global layer; a data message whose kind is not a string is of kind data."""
    assert classify({"type": "state", "data": 1, "_instance": None}).identity == ("state", None)
    assert kind_of({"type": "data", "kind": 7, "data": 1}) == "data"


def test_the_fold_writes_in_place_only_what_it_made_itself() -> None:
    """The reference fold writes the top object it made in place (n keys in O(n)), never a message's value:
    a root `set` then writes below it, and a value written and then written below, leave the messages as
    they were, and the fold is the one of fresh copies."""
    root = {"kept": {"deep": 1}}
    given = {"x": 1}
    messages = [
        {"type": "state", "data": root},
        {"type": "state", "data": {"a": 1}, "_outputPath": "†state.a"},
        {"type": "state", "data": {"kept": {"more": 2}}, "_outputMethod": "merge"},
        {"type": "state", "data": {"g": given}, "_outputPath": "†state.g"},
        {"type": "state", "data": {"g": {"y": 2}}, "_outputPath": "†state.g", "_outputMethod": "merge"},
        *({"type": "state", "data": {f"k{n}": n}, "_outputPath": f"†state.k{n}"} for n in range(3)),
    ]
    before = copy.deepcopy(messages)
    writes = [(index, classify(message).write) for index, message in enumerate(messages)]
    value, _ = fold(writes, (), "†state")
    assert messages == before
    assert (root, given) == ({"kept": {"deep": 1}}, {"x": 1})
    assert value == {"kept": {"deep": 1, "more": 2}, "a": 1, "g": {"x": 1, "y": 2}, "k0": 0, "k1": 1, "k2": 2}
    assert fold(writes, (), "†state")[0] == value  # a second fold over the same writes gives the same
