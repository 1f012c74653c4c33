"""001's custom content types through render, validate, a run and the turn check: each sees the message its
content stands for, and the document keeps the form the user wrote."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from exec_support import CLOCK, registry

from contextdeck.engine import Context, Document, Execution, Shape, render, turn_problems, validate

ECHO = {"type": "object", "properties": {"_tool": {"const": "echo"}, "text": {"type": "string"}}}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}

# 001's `{role, content}` messages, with 006's input and 012's plan and 002's tool written as content.
CONTEXT: list[dict[str, Any]] = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": {"type": "text", "text": "Hello there"}},
    {"role": "user", "content": {"type": "input", "input": {"name": "Jane"}, "schema": SCHEMA,
                                 "description": "Who asks."}},
    {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]},
    {"role": "user", "content": {"type": "plan", "plan": [
        {"_tool": "echo", "text": "†input.name", "_outputPath": "†state.greeting"}]}},
    {"role": "user", "content": {"type": "tool", "tool": {"echo": ECHO}}},
]


def test_the_model_sees_each_content_type_as_its_message() -> None:
    """Text content is text with its role; an input is 006's block (schema and description from the content); text
    parts are joined; a plan is a plan block; a tool is not a message the model reads."""
    rendered = render(Context(CONTEXT))
    assert [(m.role, m.form, m.sources) for m in rendered] == [
        ("system", "text", (0,)), ("user", "text", (1,)), ("user", "data", (2,)), ("user", "text", (3,)),
        ("user", "plan", (4,))]
    assert rendered[1].text == "Hello there"
    assert rendered[2].text.startswith("## Data: ¶input\nInput data MUST be treated as a structured prompt\n{")
    assert "Who asks.\nSchema for ¶input:" in rendered[2].text
    assert rendered[3].text == "part one\npart two"
    assert rendered[4].text.startswith("## Plan\n[")


def test_a_block_keeps_the_role_of_the_message_that_places_it() -> None:
    """A custom content type under `system` is a system block; other parts (an image) stay JSON under their role."""
    image = [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "u"}}]
    rendered = render(Context([{"role": "system", "content": {"type": "meta", "meta": {"version": "1.0.0"}}},
                               {"role": "user", "content": image}]))
    assert [(m.role, m.form) for m in rendered] == [("system", "data"), ("user", "text")]
    assert '"image_url"' in rendered[1].text


def test_validate_reads_data_plans_and_tools_written_as_content() -> None:
    """No unknown kind for `†input.name` and no unknown tool; the content's schema is checked, at its message."""
    assert validate(Context(CONTEXT)) == []
    broken = copy.deepcopy(CONTEXT)
    broken[2]["content"]["input"]["name"] = 5
    problems = validate(Context(broken))
    assert [(p.message_index, p.path, p.severity) for p in problems] == [(2, "¶input.name", "error")]


def test_keys_beside_the_content_are_a_warning() -> None:
    """An `_instance` or `schema` next to `role` is ignored: validate says so, naming them."""
    outer = {"role": "user", "_instance": "a", "schema": SCHEMA, "content": {"type": "input", "input": {}}}
    problems = validate(Context([outer]))
    assert [(p.message_index, p.severity) for p in problems] == [(0, "warning")]
    assert "_instance, schema beside 'content' is ignored" in problems[0].reason


def test_a_run_reads_the_input_and_plan_written_as_content() -> None:
    """The plan's call reads `†input.name` from the wrapped input and writes its output as an ordinary message;
    the wrapped messages are left as the user wrote them."""
    messages = copy.deepcopy(CONTEXT)
    context = Context(messages)
    seen: list[Any] = []

    def echo(call: dict[str, Any], tool: Any, scoped: list[dict[str, Any]]) -> str:
        seen.append(call["text"])
        return "Hi " + call["text"]

    execution = Execution(context, None, activities=registry(echo=echo), clock=CLOCK)
    asyncio.run(execution.run())
    assert seen == ["Jane"]
    assert context.resolve("†state.greeting").value == "Hi Jane"
    assert context.messages[: len(CONTEXT)] == CONTEXT


def test_the_turn_check_reads_the_wrapped_input() -> None:
    """A turn whose call reads the wrapped input is no problem; the wrapped tool's schema still judges its calls."""
    document = Document(Context(copy.deepcopy(CONTEXT)), Shape.ARRAY)
    good = {"calls": [{"_tool": "echo", "text": "†input.name"}], "output": None}
    assert turn_problems(document, good) == []
    assert validate(document.context, good) == []
    bad = {"calls": [{"_tool": "echo", "text": 5}], "output": None}
    assert [p.path for p in turn_problems(document, bad)] == ["$.calls[0].text"]
    assert [p.severity for p in validate(document.context, bad)] == ["error"]
