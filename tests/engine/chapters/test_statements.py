"""The protocol's statements (SPEC 2–4, 6, chapters 005, 007, 008, 011–017), each held by a small example of its
own, written as a checker of the text would write it: not the chapters' examples, which `test_chapter_*` run.
Chapters 001–004, 006, 009 and 010 have theirs in `test_statements_request_to_loop.py`.

Each row is the statement, the messages, the expression (with the instance and the cut), and what the text
says `resolve` gives: found, value and the messages it came from.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from exec_support import CLOCK, execute, registry

from contextdeck.engine import Context, ExpressionError, validate


def state(value: Any, **keys: Any) -> dict[str, Any]:
    return {"type": "state", "state": value, **keys}


def out(kind: str, data: Any, path: str, method: str | None = None, **keys: Any) -> dict[str, Any]:
    """An output message of kind `kind` writing `data` at `path` (with `_outputMethod` when given)."""
    return {"type": "data", "kind": kind, "data": data, "_outputPath": path,
            **({"_outputMethod": method} if method else {}), **keys}


ABSENT = object()  # not found: no value, no sources

# (statement, messages, expression, instance, at, value or ABSENT, sources)
RESOLVED: list[tuple[str, list[dict[str, Any]], str, str | None, int | None, Any, tuple[int, ...]]] = [
    # SPEC 3: references and expressions
    ("†kind with no path is the whole value", [state({"a": 1}), state({"b": 2})], "†state", None, None,
     {"a": 1, "b": 2}, (0, 1)),
    ("a key holding null is found", [state({"a": None})], "†state.a", None, None, None, (0,)),
    ("a numeric segment indexes an array from 0", [state({"xs": [10, 20]})], "†state.xs.1", None, None, 20, (0,)),
    ("an index past the end is not found", [state({"xs": [10, 20]})], "†state.xs.2", None, None, ABSENT, ()),
    ("a numeric segment under an object is a key", [state({"m": {"0": "z"}})], "†state.m.0", None, None, "z", (0,)),
    ("01 never indexes an array", [state({"xs": [10, 20]})], "†state.xs.01", None, None, ABSENT, ()),
    ("a path below a scalar is not found", [state({"a": 5})], "†state.a.b", None, None, ABSENT, ()),
    ("a kind nothing has is not found", [state({"a": 5})], "†input", None, None, ABSENT, ()),
    ("|| takes the first alternative found", [state({"b": 2})], "†state.a || †state.b", None, None, 2, (0,)),
    ("|| prefers the first when both are", [state({"a": 1, "b": 2})], "†state.a||†state.b", None, None, 1, (0,)),
    ("&& is the last value, from both", [state({"a": 1}), state({"b": 2})], "†state.a && †state.b", None, None,
     2, (0, 1)),
    ("&& needs all", [state({"b": 2})], "†state.a && †state.b", None, None, ABSENT, ()),
    ("|| with no alternative found is not found", [state({"a": 1})], "†nope.x || †state.y", None, None, ABSENT, ()),
    ("&& binds tighter than ||", [state({"a": 1, "c": 3})], "†state.a && †state.b || †state.c", None, None, 3, (0,)),
    ("&& binds tighter than ||, leading ||", [state({"a": 1, "b": 2, "c": 3})], "†state.c || †state.a && †state.b",
     None, None, 3, (0,)),
    ("segments are any characters but . | & and space", [{"type": "état", "état": {"ключ": {"名前-x_1": 1}}}],
     "†état.ключ.名前-x_1", None, None, 1, (0,)),
    # SPEC 2: message forms
    ("kind defaults to data", [{"type": "data", "data": {"a": 1}}], "†data.a", None, None, 1, (0,)),
    ("a kind that is no string is data", [{"type": "data", "kind": 5, "data": {"a": 1}}], "†data.a", None, None, 1,
     (0,)),
    ("the key named like the type is the payload", [{"type": "input", "input": {"a": 1}, "data": {"b": 2}}],
     "†input", None, None, {"a": 1}, (0,)),
    ("else data is the payload", [{"type": "input", "data": {"b": 2}, "x": 3}], "†input", None, None, {"b": 2},
     (0,)),
    ("else the other keys but type, schema, description, _keys",
     [{"type": "state", "_instance": "①", "text": "Hi", "schema": {}, "description": "d", "_x": 1}], "†state",
     "①", None, {"text": "Hi"}, (0,)),
    ("an error message is data of kind error", [{"type": "error", "data": {"call": {}, "error": {"type": "E"}}}],
     "†error.error.type", None, None, "E", (0,)),
    ("a plan is no data", [{"type": "plan", "plan": []}], "†plan", None, None, ABSENT, ()),
    # SPEC 4: the fold, its layers and its cut
    ("an instance's message overrides a later global one", [state({"a": "i"}, _instance="①"), state({"a": "g"})],
     "†state.a", "①", None, "i", (0,)),
    ("without an instance only the global layer counts", [state({"a": "i"}, _instance="①"), state({"a": "g"})],
     "†state.a", None, None, "g", (1,)),
    ("an instance with no messages sees the global value", [state({"a": "g"})], "†state.a", "②", None, "g", (0,)),
    ("an _instance 2 is the instance '2'", [state({"a": "i"}, _instance=2)], "†state.a", "2", None, "i", (0,)),
    ("_instance null is global", [state({"a": 1}, _instance=None)], "†state.a", None, None, 1, (0,)),
    ("at n folds the first n messages", [state({"a": 1}), state({"a": 2})], "†state.a", None, 1, 1, (0,)),
    ("at 0 folds nothing", [state({"a": 1})], "†state.a", None, 0, ABSENT, ()),
    ("plain data deep-merges", [state({"u": {"a": 1}}), state({"u": {"b": 2}})], "†state.u", None, None,
     {"a": 1, "b": 2}, (0, 1)),
    ("merging is not associative", [state({"k": {"x": 1}}), state({"k": 5}), state({"k": {"y": 2}})], "†state.k",
     None, None, {"y": 2}, (2,)),
    ("an array merged replaces", [state({"xs": [1, 2]}), state({"xs": [3]})], "†state.xs", None, None, [3], (1,)),
    ("an output sets its path only", [state({"u": {"a": 1, "b": 2}}), out("state", {"u": {"a": 9, "c": 3}},
     "†state.u.a")], "†state.u", None, None, {"a": 9, "b": 2}, (0, 1)),
    ("set replaces an object", [state({"u": {"a": 1}}), out("state", {"u": {"b": 2}}, "†state.u")], "†state.u",
     None, None, {"b": 2}, (1,)),
    ("merge deep-merges", [state({"u": {"a": {"x": 1}}}), out("state", {"u": {"a": {"y": 2}}}, "†state.u",
     "merge")], "†state.u", None, None, {"a": {"x": 1, "y": 2}}, (0, 1)),
    ("assign is shallow", [state({"u": {"a": {"x": 1}, "b": 1}}), out("state", {"u": {"a": {"y": 2}}}, "†state.u",
     "assign")], "†state.u", None, None, {"a": {"y": 2}, "b": 1}, (0, 1)),
    ("push onto nothing makes a list", [out("state", {"l": 1}, "†state.l", "push")], "†state.l", None, None, [1],
     (0,)),
    ("push appends one element, a list too", [state({"l": [0]}), out("state", {"l": [1, 2]}, "†state.l", "push")],
     "†state.l", None, None, [0, [1, 2]], (0, 1)),
    ("push onto null is a conflict", [state({"l": None}), out("state", {"l": 1}, "†state.l", "push")],
     "†state.l", None, None, None, (0,)),
    ("concat appends the elements", [state({"l": [0]}), out("state", {"l": [1, 2]}, "†state.l", "concat")],
     "†state.l", None, None, [0, 1, 2], (0, 1)),
    ("concat of a scalar is a conflict", [state({"l": [0]}), out("state", {"l": 1}, "†state.l", "concat")],
     "†state.l", None, None, [0], (0,)),
    ("a scalar parent is replaced by an object", [state({"a": 5}), out("state", {"a": {"b": 1}}, "†state.a.b")],
     "†state.a", None, None, {"b": 1}, (1,)),
    ("index len appends", [state({"a": [1]}), out("state", {"a": {"1": 2}}, "†state.a.1")], "†state.a", None, None,
     [1, 2], (0, 1)),
    ("an index past len is a conflict", [state({"a": [1]}), out("state", {"a": {"2": 2}}, "†state.a.2")],
     "†state.a", None, None, [1], (0,)),
    ("an output at an index replaces that element", [state({"a": [1, 2]}), out("state", {"a": [9]}, "†state.a.0")],
     "†state.a", None, None, [9, 2], (0, 1)),
    ("a null parent is replaced by an object", [state({"a": None}), out("state", {"a": {"b": 1}}, "†state.a.b")],
     "†state.a", None, None, {"b": 1}, (1,)),
    ("merge of null replaces", [state({"u": {"a": 1}}), out("state", {"u": None}, "†state.u", "merge")], "†state.u",
     None, None, None, (1,)),
    ("merge of an array onto an object replaces", [state({"u": {"a": 1}}), out("state", {"u": [1]}, "†state.u",
     "merge")], "†state.u", None, None, [1], (1,)),
    ("assign of a scalar onto an object replaces", [state({"u": {"a": 1}}), out("state", {"u": 3}, "†state.u",
     "assign")], "†state.u", None, None, 3, (1,)),
    ("set of null replaces an object", [state({"u": {"a": 1}}), out("state", {"u": None}, "†state.u")], "†state.u",
     None, None, None, (1,)),
    ("merge onto nothing is the value", [out("state", {"u": {"a": 1}}, "†state.u", "merge")], "†state.u", None, None,
     {"a": 1}, (0,)),
    ("assign onto nothing is the value", [out("state", {"u": [1]}, "†state.u", "assign")], "†state.u", None, None,
     [1], (0,)),
    ("assign of an object onto a scalar replaces it", [state({"u": 5}), out("state", {"u": {"a": 1}}, "†state.u",
     "assign")], "†state.u", None, None, {"a": 1}, (1,)),
    ("concat onto nothing is the array", [out("state", {"l": [1, 2]}, "†state.l", "concat")], "†state.l", None,
     None, [1, 2], (0,)),
    ("push onto a string is a conflict", [state({"l": "s"}), out("state", {"l": 1}, "†state.l", "push")],
     "†state.l", None, None, "s", (0,)),
    ("push of null onto nothing is [null]", [out("state", {"l": None}, "†state.l", "push")], "†state.l", None, None,
     [None], (0,)),
    ("concat onto null is a conflict (null is found, not undefined)", [state({"l": None}), out("state", {"l": [1]},
     "†state.l", "concat")], "†state.l", None, None, None, (0,)),
    ("push onto an object is a conflict", [state({"l": {}}), out("state", {"l": 1}, "†state.l", "push")],
     "†state.l", None, None, {}, (0,)),
    ("a missing parent is made an object", [out("state", {"a": {"b": {"c": 1}}}, "†state.a.b.c")], "†state", None,
     None, {"a": {"b": {"c": 1}}}, (0,)),
    ("_call._outputPath: the first destination the data holds",
     [{"type": "state", "data": {"err": {"m": 1}}, "_call": {"_tool": "t", "_outputPath": "†state.ok || †state.err"}}],
     "†state", None, None, {"err": {"m": 1}}, (0,)),
    ("_outputPath wins over _call's", [{"type": "state", "data": {"a": 1, "b": 2}, "_outputPath": "†state.b",
                                        "_call": {"_tool": "t", "_outputPath": "†state.a"}}], "†state", None, None,
     {"b": 2}, (0,)),
    ("an output of two destinations is skipped", [state({"a": 1}), out("state", {"a": 2, "b": 2},
     "†state.a && †state.b")], "†state.a", None, None, 1, (0,)),
    ("_call._outputMethod is audit only", [state({"l": [1]}), {"type": "state", "data": {"l": 2}, "_call": {
        "_tool": "t", "_outputPath": "†state.l", "_outputMethod": "push"}}], "†state.l", None, None, 2, (1,)),
    ("a method with no path writes at the root", [{"type": "log", "data": "b", "_outputMethod": "push"}], "†log",
     None, None, ["b"], (0,)),
    ("an instance's push goes onto the global list, whatever the order",
     [out("state", {"l": 2}, "†state.l", "push", _instance="①"), state({"l": [1]})], "†state.l", "①", None,
     [1, 2], (0, 1)),
    ("a parent write that does not reach the path is no source", [state({"a": 1}), state({"b": 2})], "†state.a",
     None, None, 1, (0,)),
    ("seed 000: the user from both", [{"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}},
                                      {"type": "data", "data": {"user": {"status": "inactive"}},
                                       "_call": {"_tool": "u", "_outputPath": "†data.user.status"}}],
     "†data.user", None, None, {"name": "Alex", "status": "inactive"}, (0, 1)),
    # 012, 016, 017: which messages are data
    ("016: a meta message is data of kind meta", [{"type": "meta", "meta": {"path": "/g", "version": "1.2.3"}}],
     "†meta.version", None, None, "1.2.3", (0,)),
    ("017: an advisor message is not data", [{"type": "advisor", "id": "a", "role": "r"}], "†advisor", None, None,
     ABSENT, ()),
    ("013: a targeted input overrides the global one for its instance",
     [{"type": "input", "input": {"q": "g", "k": 1}}, {"type": "input", "_instance": "①", "input": {"q": "t"}}],
     "†input", "①", None, {"q": "t", "k": 1}, (0, 1)),
    ("013: an instance without its own input reads the global one",
     [{"type": "input", "input": {"q": "g"}}, {"type": "input", "_instance": "①", "input": {"q": "t"}}],
     "†input.q", "②", None, "g", (0,)),
]


@pytest.mark.parametrize(("statement", "messages", "expression", "instance", "at", "value", "sources"), RESOLVED,
                         ids=[row[0] for row in RESOLVED])
def test_resolve_gives_what_the_text_says(statement: str, messages: list[dict[str, Any]], expression: str,
                                          instance: str | None, at: int | None, value: Any,
                                          sources: tuple[int, ...]) -> None:
    """`resolve` gives the statement's found, value and sources."""
    resolution = Context(messages).resolve(expression, instance, at)
    found = value is not ABSENT
    assert (resolution.found, resolution.value, resolution.sources) == (
        found, value if found else None, sources), statement


def test_a_conflict_is_a_diagnostic_naming_message_path_and_reason() -> None:
    """SPEC 4.7: a conflict skips its write and names the message, the path and the reason."""
    resolution = Context([state({"l": 5}), out("state", {"l": 1}, "†state.l", "push")]).resolve("†state.l")
    assert [str(d) for d in resolution.diagnostics] == ["message 1: †state.l: push at l: push onto a number, not an "
                                                        "array"]


@pytest.mark.parametrize(("expression", "position"), [
    ("†", 1), ("†state.", 7), ("†state..a", 7), ("†a ||", 5), ("†a | †b", 3), ("†a &&& †b", 5), ("state.a", 0),
    ("†a&&", 4), ("†a †b", 3), ("", 0), ("†.a", 1), ("††state.x", 1)])
def test_a_malformed_expression_names_its_position(expression: str, position: int) -> None:
    """SPEC 3: a malformed expression is an error that names the position (0-based)."""
    with pytest.raises(ExpressionError) as raised:
        Context([]).resolve(expression)
    assert raised.value.position == position


# -- SPEC 6: calls run (in process) -----------------------------------------------------------------------------

def _echo(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {key: value for key, value in call.items() if not key.startswith("_")}


def _boom(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    raise ValueError("nope")


def _error_branch(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {"type": "state", "data": {"err": {"why": "x"}}}


def _scoped(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return context


async def _slow(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    await asyncio.sleep(0.05)
    return "slow"


async def _never(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    await asyncio.Event().wait()  # until the race it lost cancels it: no timing decides the winner


def _both(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {"type": "state", "data": {"a": 1, "b": 2}}


def _elsewhere(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {"type": "state", "_instance": "②", "_outputPath": "†state.zzz", "data": {"ok": 1}}


PATTERNS = {"all", "any", "race"}
I1, I2 = {"type": "state", "_instance": "①", "v": 1}, {"type": "state", "_instance": "②", "v": 2}

# (statement, messages, calls, what is appended: (kind or "error", data or error type, _outputPath, _instance))
RUNS: list[tuple[str, list[dict[str, Any]], list[Any], list[tuple[str, Any, str | None, str | None]]]] = [
    ("&& writes the same value to each destination", [state({"x": 1})],
     [{"_tool": "echo", "a": "†state.x", "_outputPath": "†state.y && †data.z"}],
     [("state", {"y": {"a": 1}}, "†state.y", None), ("data", {"z": {"a": 1}}, "†data.z", None)]),
    ("|| writes a plain value to the first", [], [{"_tool": "echo", "a": 1, "_outputPath": "†state.ok || †state.e"}],
     [("state", {"ok": {"a": 1}}, "†state.ok", None)]),
    ("a returned message picks its branch of ||", [], [{"_tool": "branch", "_outputPath": "†state.ok || †state.err"}],
     [("state", {"err": {"why": "x"}}, "†state.err", None)]),
    ("|| in a parameter with nothing found leaves the call blocked", [state({"a": 1})],
     [{"_tool": "echo", "a": "†state.q || †input.r", "_outputPath": "†state.o"}], []),
    ("a string with text before † is a literal", [state({"r": 2})],
     [{"_tool": "echo", "a": "hi †state.r", "b": " †state.r", "_outputPath": "†state.o"}],
     [("state", {"o": {"a": "hi †state.r", "b": " †state.r"}}, "†state.o", None)]),
    ("003: a returned message fans out over && as a plain value does", [],
     [{"_tool": "both", "_outputPath": "†state.a && †state.b"}],
     [("state", {"a": 1, "b": 2}, "†state.a", None), ("state", {"a": 1, "b": 2}, "†state.b", None)]),
    ("003: a returned message picks the first alternative it fills", [],
     [{"_tool": "both", "_outputPath": "†state.x || †state.b || †state.a"}],
     [("state", {"a": 1, "b": 2}, "†state.b", None)]),
    ("008: a returned message stays at its call's instance and destinations", [I1],
     [{"_tool": "elsewhere", "_instance": "①", "_outputPath": "†state.ok"}],
     [("state", {"ok": 1}, "†state.ok", "①")]),
    ("012: a failure fills each destination of the last alternative", [],
     [{"_tool": "boom", "_outputPath": "†state.ok || †state.e && †log.e"}],
     [("state", {"e": {"type": "ValueError", "message": "nope"}}, "†state.e", None),
      ("log", {"e": {"type": "ValueError", "message": "nope"}}, "†log.e", None)]),
    ("012: an activity's result that cannot be written fails into the last alternative too", [
        {"type": "tool", "tool": {"echo": {"type": "object", "properties": {"_output": {"type": "integer"}}}}}],
     [{"_tool": "echo", "a": 1, "_outputPath": "†state.ok || †state.e"}],
     [("state", {"e": {"type": "output", "message": "the result does not meet the _output schema of 'echo': $: "
                                                    "{'a': 1} is not of type 'integer'; the result: {\"a\":1}"}},
       "†state.e", None)]),
    ("a latent call's _output null is the result null", [],
     [{"_tool": "think", "_output": None, "_outputPath": "†state.r"}], [("state", {"r": None}, "†state.r", None)]),
    ("an output path into an array writes at that index", [state({"l": [1, 2]})],
     [{"_tool": "echo", "v": 5, "_outputPath": "†state.l.1"}], [("state", {"l": {"1": {"v": 5}}}, "†state.l.1", None)]),
    ("6.2: a tool's const _outputPath is the path of a call without one", [
        {"type": "tool", "tool": {"echo": {"type": "object", "properties": {"_outputPath": {"const": "†state.c"}}}}}],
     [{"_tool": "echo", "a": 1}], [("state", {"c": {"a": 1}}, "†state.c", None)]),
    ("6.2: a call's path must match the tool's pattern", [
        {"type": "tool", "tool": {"echo": {"type": "object", "properties": {"_outputPath": {"pattern": "^†state"}}}}}],
     [{"_tool": "echo", "a": 1, "_outputPath": "†data.d"}], [("error", "outputPath", None, None)]),
    ("6.3: the tool's _activity names the activity that runs", [
        {"type": "tool", "tool": {"greet": {"type": "object", "_activity": "echo"}}}],
     [{"_tool": "greet", "a": 1, "_outputPath": "†state.o"}], [("state", {"o": {"a": 1}}, "†state.o", None)]),
    ("6.3 and 003: _activity '' is latent, whatever is registered under the name", [
        {"type": "tool", "tool": {"echo": {"type": "object", "_activity": ""}}}],
     [{"_tool": "echo", "a": 1, "_outputPath": "†state.o"}], []),
    ("6.6: an activity without an output path runs; only its start is recorded", [],
     [{"_tool": "echo", "a": 1}], [("_run", None, None, None)]),
    ("6.6: a latent call without an output path is a thought: nothing but its record", [],
     [{"_tool": "think", "_output": {"idea": 1}}], [("_run", None, None, None)]),
    ("6.10 all: one failure and no member's output is appended", [],
     [{"all": [{"_tool": "echo", "a": 1, "_outputPath": "†state.a"}, {"_tool": "boom", "_outputPath": "†state.b"}]}],
     [("error", "ValueError", None, None)]),
    ("6.10 any: the first success wins; a failure beside it is not appended", [],
     [{"any": [{"_tool": "boom", "_outputPath": "†state.a"}, {"_tool": "slow", "_outputPath": "†state.b"}]}],
     [("state", {"b": "slow"}, "†state.b", None)]),
    ("6.10 race: the first to finish wins, a failure too", [],
     [{"race": [{"_tool": "never", "_outputPath": "†state.a"}, {"_tool": "boom", "_outputPath": "†state.b"}]}],
     [("error", "ValueError", None, None)]),
    ("6.8: a call waiting for †state.approvals runs nothing until a person writes it", [],
     [{"_tool": "echo", "ok": "†state.approvals.refund", "_outputPath": "†state.o"}], []),
    ("references resolve at any depth; †† is a literal †", [state({"q": 1})],
     [{"_tool": "echo", "a": {"b": [{"c": "†state.q"}]}, "l": "††state.q", "_outputPath": "†state.o"}],
     [("state", {"o": {"a": {"b": [{"c": 1}]}, "l": "†state.q"}}, "†state.o", None)]),
    ("a call's references resolve for its instance", [state({"q": "g"}), state({"q": "one"}, _instance="①")],
     [{"_tool": "echo", "a": "†state.q", "_instance": "①", "_outputPath": "†out.v"}],
     [("out", {"v": {"a": "one"}}, "†out.v", "①")]),
    ("the context is the scoped kinds, global and the call's instance", [state({"g": 1}), I1, I2],
     [{"_tool": "scoped", "_scopes": ["state"], "_instance": "①", "_outputPath": "†out.c"}],
     [("out", {"c": [{"type": "state", "state": {"g": 1}}, I1]}, "†out.c", "①")]),
    ("a latent call's _output, references resolved, is its result", [state({"q": 7})],
     [{"_tool": "think", "_output": {"v": "†state.q"}, "_outputPath": "†state.r"}],
     [("state", {"r": {"v": 7}}, "†state.r", None)]),
    ("a runtime error is an error message of the exception's class", [],
     [{"_tool": "boom", "_outputPath": "†state.r"}], [("error", "ValueError", None, None)]),
    ("012: a failure fills the last branch of ||", [], [{"_tool": "boom", "_outputPath": "†state.ok || †state.e"}],
     [("state", {"e": {"type": "ValueError", "message": "nope"}}, "†state.e", None)]),
    ("a structural error is appended when the tick ends", [],
     [{"_tool": "echo", "a": "†state..x", "_outputPath": "†state.p"}, {"_tool": "echo", "a": 1,
                                                                        "_outputPath": "†state.o"}],
     [("state", {"o": {"a": 1}}, "†state.o", None), ("error", "expression", None, None)]),
    ("an unknown _outputMethod is refused", [], [{"_tool": "echo", "_outputPath": "†s.o", "_outputMethod": "upsert"}],
     [("error", "outputMethod", None, None)]),
    ("a cycle refuses its calls before anything runs", [],
     [{"_tool": "echo", "a": "†state.a", "_outputPath": "†state.b"},
      {"_tool": "echo", "b": "†state.b", "_outputPath": "†state.a.x"}],
     [("error", "cycle", None, None), ("error", "cycle", None, None)]),
    ("013: a call touching an instanced kind runs once per instance", [I1, I2],
     [{"_tool": "echo", "a": "†state.v", "_outputPath": "†state.w"}],
     [("state", {"w": {"a": 1}}, "†state.w", "①"), ("state", {"w": {"a": 2}}, "†state.w", "②")]),
    ("013: a call reading a global kind only runs once", [I1, {"type": "input", "input": {"q": 1}}],
     [{"_tool": "echo", "a": "†input.q", "_outputPath": "†out.w"}], [("out", {"w": {"a": 1}}, "†out.w", None)]),
    ("013: a call targeting an instance leaves the other unaffected",
     [{"type": "state", "_instance": "A", "state": {"task": "draft"}},
      {"type": "state", "_instance": "B", "state": {"task": "review"}}],
     [{"_tool": "echo", "_instance": "B", "was": "†state.task", "_outputPath": "†state.task"}],
     [("state", {"task": {"was": "review"}}, "†state.task", "B")]),
    ("013: each copy reads its instance's input, or the global one", [
        {"type": "input", "input": {"q": "g"}}, {"type": "input", "_instance": "①", "input": {"q": "t"}}, I1, I2],
     [{"_tool": "echo", "a": "†input.q", "_outputPath": "†out.v"}],
     [("out", {"v": {"a": "t"}}, "†out.v", "①"), ("out", {"v": {"a": "g"}}, "†out.v", "②")]),
    ("012: a step written before the step that makes its data runs after it", [],
     [{"_tool": "echo", "a": "†state.a", "_outputPath": "†state.b"},
      {"_tool": "echo", "x": 1, "_outputPath": "†state.a"}],
     [("state", {"a": {"x": 1}}, "†state.a", None), ("state", {"b": {"a": {"x": 1}}}, "†state.b", None)]),
    ("012: under a lazy plan a solution runs nothing", [{"type": "plan", "mode": "lazy", "plan": []}],
     [{"_tool": "echo", "a": 1, "_outputPath": "†state.o"}], []),
    ("015: a tool's const _scopes provisions the context", [
        {"type": "tool", "tool": {"scoped": {"type": "object", "properties": {"_scopes": {"const": ["input"]}}}}},
        {"type": "input", "input": {"q": 1}}, state({"s": 1})],
     [{"_tool": "scoped", "_outputPath": "†out.c"}],
     [("out", {"c": [{"type": "input", "input": {"q": 1}}]}, "†out.c", None)]),
    ("015: a scope the tool's schema does not allow is refused", [
        {"type": "tool", "tool": {"scoped": {"type": "object", "properties": {
            "_scopes": {"type": "array", "items": {"enum": ["state", "input"]}}}}}}],
     [{"_tool": "scoped", "_scopes": ["text"], "_outputPath": "†out.c"}], [("error", "scopes", None, None)]),
    ("015: without _scopes an activity's context is empty", [state({"s": 1})],
     [{"_tool": "scoped", "_outputPath": "†out.c"}], [("out", {"c": []}, "†out.c", None)]),
    ("014: an anonymous delegate of an explicit tool runs its activity, references resolved", [state({"q": 1})],
     [{"_tool": "echo", "_delegate": "anonymous", "a": "†state.q", "_outputPath": "†state.o"}],
     [("state", {"o": {"a": 1}}, "†state.o", None)]),
    ("014: an anonymous delegate of a latent tool waits for its clean room's output", [],
     [{"_tool": "think", "_delegate": "anonymous", "a": 1, "_outputPath": "†state.o"}], []),
]


@pytest.mark.parametrize(("statement", "messages", "calls", "appended"), RUNS, ids=[row[0] for row in RUNS])
def test_a_run_appends_what_the_text_says(statement: str, messages: list[dict[str, Any]], calls: list[Any],
                                          appended: list[tuple[str, Any, str | None, str | None]]) -> None:
    """One tick appends the statement's messages: each output's kind, data, `_outputPath` and `_instance`, each
    error message's type; `_call` is the call as written and `_date` the run's clock."""
    context, _, _ = execute(messages, calls, registry(echo=_echo, boom=_boom, branch=_error_branch, scoped=_scoped,
                                                          both=_both, elsewhere=_elsewhere, slow=_slow,
                                                          never=_never))
    written = context.messages[len(messages):]
    got = [("error", m["data"]["error"]["type"], None, None) if m["type"] == "error" else
           ("_run", None, None, None) if m["type"] == "_run" else
           (m.get("kind", m["type"]), m["data"], m["_outputPath"], m.get("_instance")) for m in written]
    assert got == appended, statement
    members = [member for entry in calls for member in (
        next(iter(entry.values())) if isinstance(entry, dict) and len(entry) == 1 and set(entry) <= PATTERNS
        else [entry])]  # a group's members (SPEC 6.10)
    for message in written:
        assert message["_date"] == CLOCK()
        if message["type"] != "error":  # a copy per instance (013) is the call targeted at its instance
            untargeted = {key: value for key, value in message["_call"].items() if key != "_instance"}
            assert message["_call"] in members or untargeted in members


# -- validate: each problem names what and where ----------------------------------------------------------------

PLAN = "plan"

# (statement, messages, solution, the problems validate says, as text)
CHECKED: list[tuple[str, list[dict[str, Any]], Any, list[str]]] = [
    ("a malformed reference: message, call, field, position",
     [{"type": PLAN, "plan": [{"_tool": "t", "a": {"b": ["†state..x"]}}]}, {"type": "tool", "tool": {"t": {}}}],
     None, ["message 0: call 0 $.a.b[0]: expected a path segment after '.', found '.' at position 7"]),
    ("a malformed _outputPath on a data message: message and position",
     [{"type": "state", "data": {"q": 1}, "_outputPath": "†state..q"}], None,
     ["message 0: ¶state: _outputPath: expected a path segment after '.', found '.' at position 7"]),
    ("a conflict: the message that wrote, the path, the reason",
     [{"type": "state", "data": {"l": 5}}, {"type": "state", "data": {"l": 1}, "_outputPath": "†state.l",
                                            "_outputMethod": "push"}], None,
     ["message 1: ¶state: push at l: push onto a number, not an array"]),
    ("a schema violation: the message that wrote the value, and the schema's",
     [{"type": "user", "data": {"age": 1}, "schema": {"properties": {"age": {"type": "number"}}}},
      {"type": "user", "data": {"age": "x"}}], None,
     ["message 1: ¶user.age: 'x' is not of type 'number' (the schema of message 0)"]),
    ("the solution's call: where it is, without a message",
     [{"type": "tool", "tool": {"t": {}}}], {"calls": [{"_tool": "t", "a": "†a | †b"}], "output": None},
     ["solution, call 0 $.a: expected '||', found a single '|' at position 3"]),
    ("a cycle: each call, and the paths that link them",
     [{"type": "tool", "tool": {"t": {}}}, {"type": PLAN, "plan": [
         {"_tool": "t", "a": "†s.a", "_outputPath": "†s.b"}, {"_tool": "t", "b": "†s.b", "_outputPath": "†s.a"}]}],
     None, [f"message 1: call {n} (t): cycle: calls 0 (t), 1 (t) form a cycle: call 1 feeds call 0 through †s.a; "
            "call 0 feeds call 1 through †s.b" for n in (0, 1)]),
    ("a solution that is no solution", [], {"calls": {}}, ["solution.calls: must be an array of calls"]),
    ("016: a version bumped another way than 016's is a warning",
     [{"type": "meta", "meta": {"path": "/g", "version": "1.2.3"}}],
     {"meta": {"path": "/g", "version": "2.0.0"}, "output": None},
     ["solution.meta.version: '2.0.0' is not the context's '1.2.3' incremented: 016 asks for its last number "
      "incremented ('1.2.4', a compatible change), or a branch named in 'branches' started at 1.2.3.<branch>.1"]),
    ("017: advice from an advisor nobody registered, and one consulted without advice",
     [{"type": "advisor", "id": "risk", "on": "request", "role": "r"}],
     {"advisors": [{"id": "nobody"}], "calls": [], "output": None},
     ["solution.advisors[0]: no advisor has the id 'nobody'",
      "solution.advisors: advisor 'risk' gives no advice: it is consulted in this request (017)"]),
    ("012: a mode that is neither eager nor lazy", [{"type": PLAN, "mode": "Lazy", "plan": []}], None,
     ["message 0: plan: 'mode' must be 'eager' or 'lazy', not 'Lazy': the plan would run eagerly"]),
    ("013: what a call's instance never finds",
     [{"type": "tool", "tool": {"t": {}}}, {"type": "state", "_instance": "①", "state": {"x": 1}},
      {"type": PLAN, "plan": [{"_tool": "t", "_instance": "③", "q": "†state.x"}]}], None,
     ["message 2: call 0 $.q: †state.x (at position 0) is never found for instance ③ (no data message has it): "
      "only instance ① has it, and no global data or output path writes it, so the call would wait forever (013)"]),
    ("013: an _instance is a short token: an empty one, a boolean or an array is said where it is",
     [{"type": "tool", "tool": {"t": {}}}, {"type": "state", "_instance": "", "state": {"x": 1}},
      {"type": "state", "_instance": 2, "state": {"x": 1}},
      {"type": PLAN, "plan": [{"_tool": "t", "_instance": False}, {"all": [{"_tool": "t", "_instance": [1]}]},
                              {"_tool": "t", "_instance": "2"}]}], None,
     [f"message 3: call {n} $._instance: {shown} is not an instance id (013: a short token, a non-empty string or a "
      f"number): the call runs for an instance named {named!r}; leave _instance out for a global call"
      for n, shown, named in ((0, "false", "False"), (1, "[1]", "[1]"))]
     + ['message 1: ¶state: _instance: "" is not an instance id (013: a short token, a non-empty string or a number): '
        "the message is the data of an instance named ''; leave _instance out for global data"]),
    ("011: a fallback for what may be absent is no typo; a call whose every alternative nothing writes is",
     [{"type": "tool", "tool": {"t": {}}}, {"type": "state", "state": {"defaultData": 1}},
      {"type": PLAN, "plan": [{"_tool": "t", "d": "†input.optionalData || †state.defaultData"},
                              {"_tool": "t", "d": "†input.optionalData || †state.other"}]}], None,
     ["message 2: call 1 $.d: unknown kind ¶input: no message or output path writes it; nothing writes †state.other"]),
    ("013 and SPEC 3: an alternative the instance may find keeps the call from waiting for ever",
     [{"type": "tool", "tool": {"t": {}}}, {"type": "state", "_instance": "①", "state": {"x": 1}},
      {"type": "input", "input": {"y": 1}},
      {"type": PLAN, "plan": [{"_tool": "t", "_instance": "③", "q": "†state.x || †input.y"},
                              {"_tool": "t", "_instance": "③", "q": "†input.y && †state.x || †state.x.z"}]}], None,
     [f"message 3: call 1 $.q: †state.x{tail} (at position {at}) is never found for instance ③ (no data message has "
      "it): only instance ① has it, and no global data or output path writes it, so the call would wait forever "
      "(013)" for tail, at in (("", 12), (".z", 24))]),
    ("012: under a lazy plan a latent call's _output is latent execution",
     [{"type": "tool", "tool": {"sum": {"type": "object", "properties": {"_output": {"type": "string"}}}}},
      {"type": PLAN, "mode": "lazy", "plan": []}],
     {"calls": [{"_tool": "sum", "_output": "x", "_outputPath": "†state.s"}, {"_tool": "sum", "_outputPath": "†s.t"}],
      "output": None},
     ["solution, call 0 $._output: a lazy plan (012) asks for no latent execution: this latent call's _output is "
      "its result, given before the plan is approved (it is taken as the result when it runs)"]),
    ("012: in eager execution a latent call given its _output has one concrete output path",
     [{"type": "tool", "tool": {"sky": {"type": "object", "properties": {"_output": {"type": "string"}}}}}],
     {"calls": [{"_tool": "sky", "_output": "rain", "_outputPath": "†state.sunny || †state.rainy"},
                {"_tool": "sky", "_outputPath": "†state.sunny || †state.rainy"},
                {"_tool": "sky", "_output": "sun", "_outputPath": "†state.sunny"}], "output": None},
     ["solution, call 0 $._outputPath: a latent call given its _output has chosen its outcome (012: eager execution "
      "collapses a branching _outputPath to one concrete path), but this _outputPath still branches: the output is "
      "written to its first alternative, †state.sunny"]),
    ("014: a delegated call's result is its delegate's output, not an _output beside it",
     [{"type": "tool", "tool": {"t": {"type": "object", "_delegate": "anonymous"}}}],
     {"calls": [{"_tool": "t", "_output": 1, "_outputPath": "†s.a"}, {"_tool": "u", "_delegate": "anonymous",
                                                                    "_output": 2, "_outputPath": "†s.b"}],
      "output": None},
     [f"solution, call {n} $._output: a delegated call's result is its delegate's final output (014): this _output "
      "is not taken as its result (a reference in it is still waited for)" for n in (0, 1)]),
    ("002: an explicit call's result is what its activity returns, not an _output beside it",
     [{"type": "tool", "tool": {"fetch": {"type": "object", "_activity": "fetch"}, "sum": {"type": "object"}}}],
     {"calls": [{"_tool": "fetch", "_output": 1, "_outputPath": "†s.a"}, {"_tool": "sum", "_output": 2,
                                                                        "_outputPath": "†s.b"}], "output": None},
     ["solution, call 0 $._output: an explicit call's result is what its activity returns (002: its tool offers no "
      "_output): this _output is not taken as its result (a reference in it is still waited for)"]),
    ("014: _delegate is a string: a request file or 'anonymous'; a URL is not fetched",
     [{"type": "tool", "tool": {"t": {}}}, {"type": PLAN, "plan": [
         {"_tool": "t", "_delegate": "http://example.com/agents/speaker_EN", "_outputPath": "†s.a"},
         {"_tool": "t", "_delegate": 5}]}], None,
     ["message 1: call 0 (t): delegate: delegate 'http://example.com/agents/speaker_EN' is a URL; ContextDeck does "
      "not fetch URLs: save the request next to the document",
      "message 1: call 1 (t): delegate: _delegate must be a non-empty string: a request file or 'anonymous'"]),
]


@pytest.mark.parametrize(("statement", "messages", "solution", "said"), CHECKED, ids=[row[0] for row in CHECKED])
def test_validate_names_what_and_where(statement: str, messages: list[dict[str, Any]], solution: Any,
                                       said: list[str]) -> None:
    """Each problem `validate` finds is said with its message index (or the solution), the call, the field and
    the position where there is one."""
    assert [str(problem) for problem in validate(Context(messages), solution)] == said, statement
