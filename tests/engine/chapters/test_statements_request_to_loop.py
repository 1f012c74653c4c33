"""The protocol's statements of chapters 001 (request), 002 (tool), 003 (activity), 004 (call), 006 (input),
009 (state) and 010 (loop), each held by a small example of its own, written as a checker of the text would
write it: not the chapters' examples, which `test_chapter_*` run. `test_statements.py` holds SPEC 2–4, 6 and
the other chapters.

Each row is the statement, the messages, and what the engine gives: the request the model receives
(`compose_request`), what `validate` says, what one tick of a run appends, or what the loop does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from exec_support import CLOCK, execute, registry

from contextdeck.engine import Context, Decision, Document, Execution, Loop, LoopStatus, compose_request, validate

# -- the request the model receives (001, 002, 006, 009) ----------------------------------------------------------

TOOL_T = {"type": "tool", "tool": {"t": {"type": "object", "description": "old", "properties": {
    "a": {"type": "string"}}}}}
TOOL_T_AGAIN = {"type": "tool", "tool": {"t": {"type": "object", "description": "new", "properties": {
    "a": {"type": "integer"}}}}}
REFERENCE = {"type": "string", "pattern": "^†", "description": "a reference to a value in the context, as †state.path"}
INPUT_SCHEMA = {"type": "object", "properties": {"topic": {"type": "string"}}}


def block(heading: str, value: Any, *lines: str, description: str | None = None, schema: Any = None) -> str:
    """A data block as SPEC 5 and 005 lay it out: heading, lines under it, the value, the description, the schema."""
    shown = [heading, *lines, json.dumps(value, indent=2, ensure_ascii=False)]
    shown += [] if description is None else [description]
    if schema is not None:
        shown += [f"Schema for {heading.removeprefix('## Data: ')}:", json.dumps(schema, indent=2)]
    return "\n".join(shown)


# (statement, messages, at, what the model reads: (role, text) in order)
READ: list[tuple[str, list[dict[str, Any]], int | None, list[tuple[str, str]]]] = [
    ("001: a context of {role, content} messages reaches the model as those messages, with their roles",
     [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
      {"role": "assistant", "content": "Hello"}], None,
     [("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello")]),
    ("001: a content that is a custom content type is that message, made text by its handler",
     [{"role": "user", "content": {"type": "input", "input": {"name": "Jane"}}}], None,
     [("user", block("## Data: ¶input", {"name": "Jane"}, "Input data MUST be treated as a structured prompt"))]),
    ("001: a handler may adjust the LLM config: a preset reaches no message",
     [{"type": "preset", "model": "m", "temperature": 0.2}, {"role": "user", "content": "Hi"}], None,
     [("user", "Hi")]),
    ("001: the context is rebuilt for each request: a request as of its first n messages reads those only",
     [{"role": "user", "content": "first"}, {"role": "assistant", "content": "later"}], 1, [("user", "first")]),
    ("002: a tool message is no message to the model: it shapes the schema", [TOOL_T, {"type": "text", "text": "go"}],
     None, [("user", "go")]),
    ("006: an input is a structured prompt: heading, the line, the data, its schema",
     [{"type": "input", "input": {"topic": "rain"}, "schema": INPUT_SCHEMA}], None,
     [("user", block("## Data: ¶input", {"topic": "rain"}, "Input data MUST be treated as a structured prompt",
                     schema=INPUT_SCHEMA))]),
    ("006: an input is data of kind input, written as data too",
     [{"type": "data", "kind": "input", "data": {"topic": "rain"}}], None,
     [("user", block("## Data: ¶input", {"topic": "rain"}, "Input data MUST be treated as a structured prompt"))]),
    ("009: the state's patches reach the model as one view, with its schema",
     [{"type": "state", "state": {"a": 1}, "schema": {"type": "object"}}, {"type": "text", "text": "go"},
      {"type": "state", "state": {"b": 2}}], None,
     [("user", block("## Data: ¶state", {"a": 1, "b": 2}, schema={"type": "object"})), ("user", "go")]),
    ("009: a tool's write into the state reaches the model as the state, without its audit metadata",
     [{"type": "state", "state": {"a": 1}, "description": "The run's memory."},
      {"type": "data", "kind": "state", "data": {"b": {"x": 1}}, "_outputPath": "†state.b", "_outputMethod": "merge",
       "_call": {"_tool": "t", "_outputPath": "†state.b"}, "_date": "2026-01-01T00:00:00Z"}], None,
     [("user", block("## Data: ¶state", {"a": 1, "b": {"x": 1}}, description="The run's memory."))]),
    ("009: each instance's state is its own block", [{"type": "state", "state": {"a": 1}},
                                                     {"type": "state", "_instance": "①", "state": {"a": 2}}], None,
     [("user", block("## Data: ¶state", {"a": 1})), ("user", block("## Data: ¶state (instance ①)", {"a": 2}))]),
    ("010: the next request sees a failed call and its error",
     [{"type": "error", "data": {"call": {"_tool": "t", "_outputPath": "†state.o"},
                                 "error": {"type": "KeyError", "message": "'k'"}}}], None,
     [("user", block("## Data: ¶error", {"call": {"_tool": "t", "_outputPath": "†state.o"},
                                         "error": {"type": "KeyError", "message": "'k'"}}))]),
]


@pytest.mark.parametrize(("statement", "messages", "at", "read"), READ, ids=[row[0] for row in READ])
def test_the_model_reads_what_the_text_says(statement: str, messages: list[dict[str, Any]], at: int | None,
                                            read: list[tuple[str, str]]) -> None:
    """`compose_request` gives the statement's messages, each with its role."""
    request = compose_request(Context(messages), at=at)
    assert [(message.role, message.text) for message in request.messages] == read, statement


def calls_item(request: Any) -> Any:
    return request.schema["properties"]["calls"]["items"]


# (statement, messages, the request's schema, activities' names, what to read of the request, what it is)
COMPOSED: list[tuple[str, list[dict[str, Any]], Any, tuple[str, ...] | None, Any, Any]] = [
    ("001: the schema is no message: it is the request's, beside them, fields in their order",
     [{"type": "text", "text": "go"}], {"type": "object", "properties": {"thought": {"type": "string"},
                                                                         "answer": {"type": "string"}}}, None,
     lambda r: list(r.schema["properties"]["output"]["properties"]), ["thought", "answer"]),
    ("001: the request is its messages, its schema and the LLM config, sent in one",
     [{"type": "preset", "temperature": 0.2}, {"type": "text", "text": "go"}], None, None,
     lambda r: (list(r.to_json()), r.config), (["messages", "schema", "config"], {"temperature": 0.2})),
    ("002: the composed schema is meta, output and calls, all required", [], {"type": "object"}, None,
     lambda r: (list(r.schema["properties"]), r.schema["required"]),
     (["meta", "output", "calls"], ["meta", "calls", "output"])),
    ("002: the output may be null (not finished yet)", [], {"type": "object", "properties": {"n": {"type": "integer"}}},
     None, lambda r: r.schema["properties"]["output"],
     {"type": ["object", "null"], "properties": {"n": {"type": "integer"}}, "additionalProperties": False}),
    ("002: fields without _ are parameters; the tool's own _-fields are the engine's, not the model's",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "x", "description": "d",
                                      "properties": {"q": {"type": "string"}}, "required": ["q"]}}}], None, None,
     calls_item, {"type": "object", "description": "d",
                  "properties": {"_tool": {"const": "t"}, "q": {"type": "string"}}, "required": ["_tool", "q"]}),
    ("002: a tool's title and description reach the model with it",
     [{"type": "tool", "tool": {"t": {"type": "object", "title": "T", "description": "does t"}}}], None, None,
     lambda r: (calls_item(r)["title"], calls_item(r)["description"]), ("T", "does t")),
    ("002: _tool names the tool: a schema naming itself in properties._tool.const",
     [{"type": "tool", "tool": {"type": "object", "properties": {"_tool": {"const": "greet"}}}}], None, None,
     calls_item, {"type": "object", "properties": {"_tool": {"const": "greet"}}, "required": ["_tool"]}),
    ("002: the latest definition of a name wins; the earlier is excluded from the schema", [TOOL_T, TOOL_T_AGAIN],
     None, None, calls_item, {"type": "object", "description": "new", "properties": {
         "_tool": {"const": "t"}, "a": {"anyOf": [{"type": "integer"}, REFERENCE]}}, "required": ["_tool"]}),
    ("002: the latest definition as of the request's messages", [TOOL_T, {"type": "text", "text": "go"},
                                                                  TOOL_T_AGAIN], None, None,
     lambda r: compose_request(Context([TOOL_T, TOOL_T_AGAIN]), at=1).schema["properties"]["calls"]["items"],
     {"type": "object", "description": "old", "properties": {"_tool": {"const": "t"}, "a": {"type": "string"}},
      "required": ["_tool"]}),
    ("002: two tools are two choices", [{"type": "tool", "tool": {"a": {"type": "object"}, "b": {"type": "object"}}}],
     None, None, lambda r: [item["properties"]["_tool"]["const"] for item in calls_item(r)["anyOf"]], ["a", "b"]),
    ("002: a latent tool (no activity) offers its _output as is",
     [{"type": "tool", "tool": {"t": {"type": "object", "properties": {"_output": {"type": "integer"}}}}}], None, (),
     lambda r: calls_item(r)["properties"].get("_output"), {"type": "integer"}),
    ("002: an explicit tool (an activity of its name) has its _output removed",
     [{"type": "tool", "tool": {"t": {"type": "object", "properties": {"_output": {"type": "integer"}}}}}], None,
     ("t",), lambda r: calls_item(r)["properties"].get("_output"), None),
    ("002 and 003: a tool whose _activity names an activity has its _output removed",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "impl",
                                      "properties": {"_output": {"type": "integer"}}}}}], None, ("impl",),
     lambda r: calls_item(r)["properties"].get("_output"), None),
    ("003 rule 3: a tool whose _activity names none of the loaded activities is latent: its _output is offered",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "absent",
                                      "properties": {"_output": {"type": "integer"}}}}}], None, ("t", "other"),
     lambda r: calls_item(r)["properties"].get("_output"), {"type": "integer"}),
    ("003: not knowing what is loaded, a named activity is taken as loaded: the model gives the inputs only",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "impl",
                                      "properties": {"_output": {"type": "integer"}}}}}], None, None,
     lambda r: calls_item(r)["properties"].get("_output"), None),
    ("003: _activity '' is latent: its _output is offered, whatever has the tool's name",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "",
                                      "properties": {"_output": {"type": "integer"}}}}}], None, ("t",),
     lambda r: calls_item(r)["properties"].get("_output"), {"type": "integer"}),
    ("006: an input is data: no tool comes of it", [{"type": "input", "input": {"q": 1}, "schema": INPUT_SCHEMA}],
     None, None, lambda r: r.schema["properties"]["calls"], {"type": "array", "maxItems": 0}),
]


@pytest.mark.parametrize(("statement", "messages", "schema", "activities", "read", "expected"), COMPOSED,
                         ids=[row[0] for row in COMPOSED])
def test_the_request_is_composed_as_the_text_says(statement: str, messages: list[dict[str, Any]], schema: Any,
                                                  activities: tuple[str, ...] | None, read: Any, expected: Any) -> None:
    """`compose_request` gives the statement's schema (or the part of it the statement is about)."""
    loaded = None if activities is None else registry(**{name: (lambda call, tool, context: None)
                                                         for name in activities})
    request = compose_request(Context(messages), schema, activities=loaded)
    assert read(request) == expected, statement


# -- validate (002, 004, 006, 009, 010) ------------------------------------------------------------------------

CLOSED = {"type": "tool", "tool": {"t": {"type": "object", "properties": {"a": {"type": "string"}},
                                         "additionalProperties": False}}}

# (statement, messages, solution, the problems validate says, as text)
CHECKED: list[tuple[str, list[dict[str, Any]], Any, list[str]]] = [
    ("002: the latest definition of a tool checks its calls", [TOOL_T, TOOL_T_AGAIN],
     {"calls": [{"_tool": "t", "a": "x"}], "output": None},
     ["solution, call 0 (t): parameters: invalid parameters for 't': $.a: 'x' is not of type 'integer'"]),
    ("002 and 004: meta-properties are no parameters: a closed tool takes a call that carries them", [CLOSED],
     {"calls": [{"_tool": "t", "a": "x", "_reasoningForCall": "why", "_outputPath": "†state.o",
                 "_instance": "①"}], "output": None}, []),
    ("002: a parameter the closed tool does not have is refused", [CLOSED],
     {"calls": [{"_tool": "t", "a": "x", "b": 1}], "output": None},
     ["solution, call 0 (t): parameters: invalid parameters for 't': $: Additional properties are not allowed ('b' "
      "was unexpected)"]),
    ("002: a latent call's _output must meet the tool's _output", [
        {"type": "tool", "tool": {"t": {"type": "object", "properties": {"_output": {"type": "integer"}}}}}],
     {"calls": [{"_tool": "t", "_output": "x", "_outputPath": "†state.o"}], "output": None},
     ["solution, call 0 (t): output: the result does not meet the _output schema of 't': $: 'x' is not of type "
      "'integer'; the result: \"x\""]),
    ("006: an input conforms to its schema; one that does not is a problem of its message",
     [{"type": "input", "input": {"topic": 5}, "schema": INPUT_SCHEMA}], None,
     ["message 0: ¶input.topic: 5 is not of type 'string'"]),
    ("006: an input that conforms is no problem", [{"type": "input", "input": {"topic": "rain"},
                                                    "schema": INPUT_SCHEMA}], None, []),
    ("009: a state's schema is optional", [{"type": "state", "state": {"a": 1}}, {"type": "state", "state": {"b": 2}}],
     None, []),
    ("009: the state's schema holds what a call writes into it",
     [{"type": "state", "state": {"a": 1}, "schema": {"type": "object", "properties": {"b": {"type": "string"}}}},
      {"type": "data", "kind": "state", "data": {"b": 2}, "_outputPath": "†state.b",
       "_call": {"_tool": "t", "_outputPath": "†state.b"}}], None,
     ["message 1: ¶state.b: 2 is not of type 'string' (the schema of message 0)"]),
    ("010: an invalid variable reference is a structural error, found before running", [],
     {"calls": [{"_tool": "t", "a": "†state..a"}], "output": None},
     ["solution, call 0 $.a: expected a path segment after '.', found '.' at position 7"]),
]


@pytest.mark.parametrize(("statement", "messages", "solution", "said"), CHECKED, ids=[row[0] for row in CHECKED])
def test_validate_says_what_the_text_says(statement: str, messages: list[dict[str, Any]], solution: Any,
                                          said: list[str]) -> None:
    """`validate`'s errors for the statement's example (its warnings are not the text's)."""
    found = validate(Context(messages), solution)
    assert [str(problem) for problem in found if problem.severity == "error"] == said, statement


def test_003_validate_says_which_tools_fall_back_to_latent_for_want_of_their_activity() -> None:
    """003 rule 3 falls back to latent execution when no activity matches the tool's `_activity`: run does, and
    `validate`, told which activities are loaded, says so of the tool as a warning (not when it is not told)."""
    messages = [{"type": "tool", "tool": {"pay": {"type": "object", "_activity": "charge"},
                                          "note": {"type": "object", "_activity": "jot"}}}]
    found = validate(Context(messages), None, activities=registry(jot=lambda call, tool, context: None))
    assert [(p.message_index, p.severity, p.reason) for p in found] == [
        (0, "warning", "tool 'pay': its _activity 'charge' is not loaded: its calls run latently (003), their result "
                       "is their _output, given or asked for")]
    assert validate(Context(messages)) == []


# -- one tick of a run (002, 003, 004, 006, 009, 010) -------------------------------------------------------------

def _echo(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {key: value for key, value in call.items() if not key.startswith("_")}


def _boom(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    raise KeyError("k")


def _text(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return "hello"


def _listed(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return [1, 2]


def _nothing(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return None


def _message(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {"type": "state", "data": {"o": {"ok": True}}}


def _note(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return {"type": "text", "text": "a note"}


def _named(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return "named"


def _interface(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
    return list(tool["properties"])  # 003: the tool "allows the activity to inspect its own interface"


ACTIVITIES = {"echo": _echo, "boom": _boom, "text": _text, "listed": _listed, "nothing": _nothing, "message": _message,
              "note": _note, "impl": _named, "inspect": _interface}
SCHEMA_OF = {"type": "tool", "tool": {"inspect": {"type": "object", "properties": {
    "level": {"type": "integer"}, "_output": {"type": "array"}}}}}
NEEDS_N = {"type": "tool", "tool": {"boom": {"type": "object", "properties": {"n": {"type": "number"}},
                                             "required": ["n"]}}}

# (statement, messages, calls, what is appended: (kind, data, _outputPath, _instance), or ("error", the error's
# type, the call that failed))
RUNS: list[tuple[str, list[dict[str, Any]], list[Any], list[tuple[Any, ...]]]] = [
    ("002: latent is the default: a call to a tool with no activity is its _output", [],
     [{"_tool": "think", "_output": {"idea": 1}, "_outputPath": "†state.o"}],
     [("state", {"o": {"idea": 1}}, "†state.o", None)]),
    ("002: a latent call's _output that breaks the tool's _output is not written", [
        {"type": "tool", "tool": {"think": {"type": "object", "properties": {"_output": {"type": "integer"}}}}}],
     [{"_tool": "think", "_output": "x", "_outputPath": "†state.o"}],
     [("error", "output", {"_tool": "think", "_output": "x", "_outputPath": "†state.o"})]),
    ("003: a returned value that is no message is wrapped in a data message at the call's _outputPath", [],
     [{"_tool": "text", "_outputPath": "†state.o"}], [("state", {"o": "hello"}, "†state.o", None)]),
    ("003: a returned list is a value too", [], [{"_tool": "listed", "_outputPath": "†log.o"}],
     [("log", {"o": [1, 2]}, "†log.o", None)]),
    ("003: None is a value too: null at the path", [], [{"_tool": "nothing", "_outputPath": "†state.o"}],
     [("state", {"o": None}, "†state.o", None)]),
    ("003: a returned data message is appended", [], [{"_tool": "message", "_outputPath": "†state.o"}],
     [("state", {"o": {"ok": True}}, "†state.o", None)]),
    ("003: a returned message is a data message (SPEC 6.4): a text message writes no destination, an output error",
     [], [{"_tool": "note", "_outputPath": "†state.o"}],
     [("error", "output", {"_tool": "note", "_outputPath": "†state.o"})]),
    ("003 rule 1: a non-empty _activity names the activity that runs, over one of the tool's name",
     [{"type": "tool", "tool": {"echo": {"type": "object", "_activity": "impl"}}}],
     [{"_tool": "echo", "a": 1, "_outputPath": "†state.o"}], [("state", {"o": "named"}, "†state.o", None)]),
    ("003 rule 2: an activity registered under the tool's name runs its calls", [],
     [{"_tool": "echo", "a": 1, "_outputPath": "†state.o"}], [("state", {"o": {"a": 1}}, "†state.o", None)]),
    ("003 rule 3: with neither, the call is latent", [{"type": "tool", "tool": {"free": {"type": "object"}}}],
     [{"_tool": "free", "_output": 7, "_outputPath": "†state.o"}], [("state", {"o": 7}, "†state.o", None)]),
    ("003 rule 3: an _activity no registered activity has falls back to latent: the call's _output is its result",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "absent"}}}],
     [{"_tool": "t", "_output": 7, "_outputPath": "†state.o"}], [("state", {"o": 7}, "†state.o", None)]),
    ("003 rule 3: ... and without an _output it waits for one, as every latent call does",
     [{"type": "tool", "tool": {"t": {"type": "object", "_activity": "absent"}}}],
     [{"_tool": "t", "_outputPath": "†state.o"}], []),
    ("003: one activity implements several tools",
     [{"type": "tool", "tool": {"a": {"type": "object", "_activity": "impl"},
                                "b": {"type": "object", "_activity": "impl"}}}],
     [{"_tool": "a", "_outputPath": "†state.a"}, {"_tool": "b", "_outputPath": "†state.b"}],
     [("state", {"a": "named"}, "†state.a", None), ("state", {"b": "named"}, "†state.b", None)]),
    ("003: an explicit call's result is its activity's, not an _output beside it", [],
     [{"_tool": "text", "_output": "given", "_outputPath": "†state.o"}], [("state", {"o": "hello"}, "†state.o", None)]),
    ("003: the activity receives its tool's schema", [SCHEMA_OF], [{"_tool": "inspect", "_outputPath": "†state.o"}],
     [("state", {"o": ["level", "_output"]}, "†state.o", None)]),
    ("004: a call's own _activity does not choose the code that runs: its tool does", [],
     [{"_tool": "text", "_activity": "impl", "_outputPath": "†state.o"}],
     [("state", {"o": "hello"}, "†state.o", None)]),
    ("004: _instance focuses the call's reads and writes on its instance",
     [{"type": "state", "state": {"q": "g"}}, {"type": "state", "_instance": "①", "state": {"q": "one"}}],
     [{"_tool": "echo", "_instance": "①", "q": "†state.q", "_outputPath": "†state.r"}],
     [("state", {"r": {"q": "one"}}, "†state.r", "①")]),
    ("006: calls read the input by reference", [{"type": "input", "input": {"topic": "rain"}}],
     [{"_tool": "echo", "about": "†input.topic", "_outputPath": "†state.o"}],
     [("state", {"o": {"about": "rain"}}, "†state.o", None)]),
    ("009: one tool writes the state, another reads it as its input", [],
     [{"_tool": "echo", "got": "†state.first", "_outputPath": "†state.second"},
      {"_tool": "text", "_outputPath": "†state.first"}],
     [("state", {"first": "hello"}, "†state.first", None),
      ("state", {"second": {"got": "hello"}}, "†state.second", None)]),
    ("010: a completion unblocks the calls waiting for it, in the same tick", [],
     [{"_tool": "echo", "b": "†state.b", "_outputPath": "†state.c"},
      {"_tool": "echo", "a": "†state.a", "_outputPath": "†state.b"},
      {"_tool": "think", "_output": 1, "_outputPath": "†state.a"}],
     [("state", {"a": 1}, "†state.a", None), ("state", {"b": {"a": 1}}, "†state.b", None),
      ("state", {"c": {"b": {"a": 1}}}, "†state.c", None)]),
    ("010: a call whose dependency never comes stays pending", [],
     [{"_tool": "echo", "a": "†state.never", "_outputPath": "†state.o"}], []),
    ("010: a structural error (parameters its tool refuses) is caught before the activity runs", [NEEDS_N],
     [{"_tool": "boom", "n": "x", "_outputPath": "†state.o"}],
     [("error", "parameters", {"_tool": "boom", "n": "x", "_outputPath": "†state.o"})]),
    ("010: a call missing a required parameter is refused before it runs", [NEEDS_N],
     [{"_tool": "boom", "_outputPath": "†state.o"}],
     [("error", "parameters", {"_tool": "boom", "_outputPath": "†state.o"})]),
    ("010: a mismatched type once references resolve is a structural error too",
     [NEEDS_N, {"type": "state", "state": {"s": "text"}}], [{"_tool": "boom", "n": "†state.s", "_outputPath": "†o.o"}],
     [("error", "parameters", {"_tool": "boom", "n": "†state.s", "_outputPath": "†o.o"})]),
    ("010: a runtime error is the activity's exception, in an error message with the full call", [],
     [{"_tool": "boom", "x": 1, "_outputPath": "†state.o", "_reasoningForCall": "why"}],
     [("error", "KeyError", {"_tool": "boom", "x": 1, "_outputPath": "†state.o", "_reasoningForCall": "why"})]),
    ("010: errors are appended when the tick ends, after the outputs made after them", [],
     [{"_tool": "boom", "_outputPath": "†state.e"}, {"_tool": "think", "_output": 1, "_outputPath": "†state.a"},
      {"_tool": "echo", "a": "†state.a", "_outputPath": "†state.b"}],
     [("state", {"a": 1}, "†state.a", None), ("state", {"b": {"a": 1}}, "†state.b", None),
      ("error", "KeyError", {"_tool": "boom", "_outputPath": "†state.e"})]),
]


@pytest.mark.parametrize(("statement", "messages", "calls", "appended"), RUNS, ids=[row[0] for row in RUNS])
def test_a_tick_appends_what_the_text_says(statement: str, messages: list[dict[str, Any]], calls: list[Any],
                                           appended: list[tuple[Any, ...]]) -> None:
    """One tick appends the statement's outputs (kind, data, `_outputPath`, `_instance`) and error messages
    (the error's type and the call as written, 010: `{call, error}`)."""
    context, _, _ = execute(messages, calls, registry(**ACTIVITIES))
    got = [("error", m["data"]["error"]["type"], m["data"]["call"]) if m["type"] == "error" else
           (m.get("kind", m["type"]), m["data"], m["_outputPath"], m.get("_instance"))
           for m in context.messages[len(messages):] if m["type"] != "_run"]
    assert got == appended, statement


def test_003_the_activity_receives_the_call_with_its_meta_properties_and_references_resolved() -> None:
    """003: `call` is "the concrete Call object ... including any meta-properties (prefixed with `_`)"; SPEC 6.4:
    its references resolved."""
    seen: list[Any] = []

    def spy(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
        seen.append(call)
        return 1

    written = {"_tool": "spy", "q": "†state.q", "_outputPath": "†state.o", "_reasoningForCall": "why"}
    execute([{"type": "state", "state": {"q": 2}}], [written], registry(spy=spy))
    assert seen == [{"_tool": "spy", "q": 2, "_outputPath": "†state.o", "_reasoningForCall": "why"}]


def test_003_the_tool_argument_is_the_tools_schema_definition() -> None:
    """003: `tool` is "the schema definition of the Tool being executed": read as that schema, and a tool nothing
    defines (an activity of its name alone) has none."""
    seen: list[Any] = []

    def spy(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
        seen.append(None if tool is None else (dict(tool), tool.get("description"), "properties" in tool))
        return 1

    schema = {"type": "object", "description": "d", "properties": {"_output": {"type": "integer"}}}
    execute([{"type": "tool", "tool": {"spy": schema}}], [{"_tool": "spy", "_outputPath": "†state.o"}],
            registry(spy=spy))
    execute([], [{"_tool": "spy", "_outputPath": "†state.o"}], registry(spy=spy))
    assert seen == [(schema, "d", True), None]


def test_009_each_instance_keeps_its_own_state() -> None:
    """009: "each one maintains its own isolated State object": a call's write for instance ① is not instance
    ②'s, nor the global state's."""
    messages = [{"type": "state", "_instance": "①", "state": {"v": 1}}, {"type": "state", "_instance": "②",
                                                                         "state": {"v": 2}}]
    context, _, _ = execute(messages, [{"_tool": "think", "_instance": "①", "_output": "mine",
                                        "_outputPath": "†state.w"}])
    assert [context.resolve("†state.w", instance).found for instance in ("①", "②", None)] == [True, False, False]


# -- the loop (004, 010) -------------------------------------------------------------------------------------------

def loop_over(messages: list[dict[str, Any]], solution: Any) -> tuple[Loop, LoopStatus]:
    loop = Loop(Document(Context(messages), solution=solution), clock=CLOCK)
    return loop, asyncio.run(loop.run())


def test_004_and_010_a_null_output_runs_the_calls_and_asks_again_with_their_results() -> None:
    """004: "It nullifies the output and instead generates a set of Calls ... their results are added to the
    context. A new Request is then made with this enriched context"; 010: "If output is null ... it loops back"."""
    loop, status = loop_over([{"type": "text", "text": "go"}], {
        "calls": [{"_tool": "think", "_output": 1, "_outputPath": "†state.x"}], "output": None})
    assert status is LoopStatus.WAITING_FOR_TURN
    request = compose_request(loop.document.context)
    assert [m.text for m in request.messages][-1] == block("## Data: ¶state", {"x": 1})


@pytest.mark.parametrize("output", [{"done": True}, "done", 0, False, []])
def test_010_an_output_that_is_not_null_ends_the_loop_and_is_returned(output: Any) -> None:
    """010: "If output is not null, the agent's goal is considered achieved ... the output value ... is returned";
    004: "it generates the Final Output directly, completing the process"."""
    loop, status = loop_over([{"type": "text", "text": "go"}], {"calls": [], "output": output})
    assert (status, loop.output) == (LoopStatus.FINISHED, output)


def test_001_a_solution_whose_output_breaks_the_schema_is_not_the_end() -> None:
    """001: the solution "strictly conforms to the provided schema": an output that does not is not the final
    output; 010: the loop catches it as an error message for the next turn."""
    loop = Loop(Document(Context([{"type": "text", "text": "go"}]), schema={
        "type": "object", "properties": {"n": {"type": "integer"}}}, solution={"calls": [], "output": {"n": "x"}}),
        clock=CLOCK)
    assert asyncio.run(loop.run()) is LoopStatus.WAITING_FOR_TURN
    assert [m["data"] for m in loop.document.context.messages if m["type"] == "error"] == [
        {"output": {"n": "x"}, "error": {"type": "output", "message": "the output does not meet the request schema: "
                                                                      "$.n: 'x' is not of type 'integer'"}}]


def test_010_calls_and_an_output_in_one_step_run_and_then_stop() -> None:
    """010: "An agent can produce both calls and a final output in a single step; the presence of the output is
    the definitive signal to stop"."""
    loop, status = loop_over([], {"calls": [{"_tool": "think", "_output": 1, "_outputPath": "†state.x"}],
                                  "output": {"done": True}})
    assert (status, loop.document.context.resolve("†state.x").value) == (LoopStatus.FINISHED, 1)


def test_010_approval_is_asked_only_of_calls_that_are_ready() -> None:
    """010: "the user is only prompted to act on calls that are ready to run" — never one blocked by a
    dependency; a call its dependency unblocks is asked when it is ready."""
    asked: list[str] = []

    def approver(state: Any) -> Decision:
        asked.append(state.call["_tool"])
        return Decision.approve()

    execute([], [{"_tool": "second", "a": "†state.a", "_output": 2, "_outputPath": "†state.b"},
                 {"_tool": "never", "a": "†state.never", "_output": 3, "_outputPath": "†state.c"},
                 {"_tool": "first", "_output": 1, "_outputPath": "†state.a"}], approver=approver)
    assert asked == ["first", "second"]


def test_010_a_person_may_correct_a_call_or_replace_it() -> None:
    """010: "The user can modify the parameters of a Call or even replace it with a different one": what runs,
    and what `_call` records, is the corrected call."""
    corrected = {"_tool": "echo", "a": 2, "_outputPath": "†state.o"}
    replaced = {"_tool": "text", "_outputPath": "†state.p"}
    for edit, written in ((corrected, ("state", {"o": {"a": 2}})), (replaced, ("state", {"p": "hello"}))):
        context, _, _ = execute([], [{"_tool": "echo", "a": 1, "_outputPath": "†state.o"}], registry(**ACTIVITIES),
                                approver=lambda state, edit=edit: Decision("edit", call=edit))
        [output] = [m for m in context.messages if m["type"] != "_run"]
        assert ((output["kind"], output["data"]), output["_call"]) == (written, edit)


def test_010_a_rejected_call_is_an_error_message_and_does_not_run() -> None:
    """SPEC 6.11 (010's approval): a call the person rejects becomes an error message; its activity never runs."""
    context, _, _ = execute([], [{"_tool": "boom", "_outputPath": "†state.o"}], registry(**ACTIVITIES),
                            approver=lambda state: Decision("reject", reason="not now"))
    assert [m["data"] for m in context.messages] == [
        {"call": {"_tool": "boom", "_outputPath": "†state.o"}, "error": {"type": "rejected", "message": "not now"}}]


def test_010_of_two_writes_to_one_path_in_a_tick_the_last_written_wins() -> None:
    """010: concurrent calls writing one path: "last-write-wins". **Decision** (docs/format.md §8): a tick writes
    its completions in the order their calls started, so the later-started call's value wins whichever finishes
    first, and a run gives the same context every time (010 warns the order "may lead to non-deterministic
    outcomes"; SPEC 6.12 asks for reproducible runs)."""
    async def run() -> Context:
        first_may_finish = asyncio.Event()

        async def slow(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
            await first_may_finish.wait()  # finishes after `fast` has (010: they run in parallel): no timing decides
            return "started first, finished last"

        async def fast(call: dict[str, Any], tool: Any, context: list[Any]) -> Any:
            first_may_finish.set()
            return "started last, finished first"

        context = Context([])
        await Execution(context, {"calls": [{"_tool": "slow", "_outputPath": "†state.x"},
                                            {"_tool": "fast", "_outputPath": "†state.x"}]},
                        activities=registry(slow=slow, fast=fast), clock=CLOCK).run()
        return context

    context = asyncio.run(run())
    assert [m["data"]["x"] for m in context.messages] == ["started first, finished last",
                                                          "started last, finished first"]
    assert context.resolve("†state.x").value == "started last, finished first"
