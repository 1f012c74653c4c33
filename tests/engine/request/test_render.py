"""What the LLM sees (SPEC 5)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from incremental_strategies import documents

from contextdeck.engine import Context, load_document, render, render_text, validate
from contextdeck.engine.protocol._values import MISSING
from contextdeck.engine.request._render import heading, shown
from contextdeck.engine.resolve._fold import fold

SEED_005 = [
    {"type": "text", "text": "Update the user's city to Austin"},
    {"type": "data", "kind": "user", "description": "Represents the current user.", "data": {"name": "John Doe"},
     "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "number"},
                                                 "city": {"type": "string"}}}},
    {"type": "data", "kind": "user", "data": {"age": 30}},
]

EXPECTED_BLOCK = """## Data: ¶user
{
  "name": "John Doe",
  "age": 30
}
Represents the current user.
Schema for ¶user:
{
  "type": "object",
  "properties": {
    "name": {
      "type": "string"
    },
    "age": {
      "type": "number"
    },
    "city": {
      "type": "string"
    }
  }
}"""


def test_seed_005_example_renders_as_the_seed_shows() -> None:
    """The text passes through; the two ¶user messages become one block: heading, value, description, schema."""
    rendered = render(Context(SEED_005))
    assert [(m.role, m.text, m.sources) for m in rendered] == [
        ("user", "Update the user's city to Austin", (0,)),
        ("user", EXPECTED_BLOCK, (1, 2)),
    ]


def test_bundled_seed_example_renders_the_same(examples) -> None:
    """The bundled seed_user_merge.json renders the seed's block."""
    assert EXPECTED_BLOCK in render_text(load_document(examples / "seed_user_merge.json").context)


def test_text_passes_through_with_its_role() -> None:
    """A text message keeps its text exactly and its role (user by default)."""
    messages = [{"type": "text", "role": "system", "text": "  be brief \n"}, {"type": "text", "text": "hi"}]
    assert [(m.role, m.text) for m in render(Context(messages))] == [("system", "  be brief \n"), ("user", "hi")]


def test_a_null_content_is_sent_as_no_text() -> None:
    """A null content (an assistant turn that only called tools) is sent as no text; any other value as JSON."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None},
                {"type": "text", "text": None}, {"type": "text", "text": {"a": 1}}]
    assert [(m.role, m.text) for m in render(Context(messages))] == [
        ("user", "hi"), ("assistant", ""), ("user", ""), ("user", shown({"a": 1}))]


def test_a_block_sits_where_its_identity_first_appears() -> None:
    """Data of one identity is one block, placed at its first message, whatever comes in between."""
    messages = [
        {"type": "state", "data": {"a": 1}},
        {"type": "text", "text": "between"},
        {"type": "note", "data": "n"},
        {"type": "state", "data": {"b": 2}},
    ]
    rendered = render(Context(messages))
    assert [m.sources for m in rendered] == [(0, 3), (1,), (2,)]
    assert rendered[0].text == '## Data: ¶state\n{\n  "a": 1,\n  "b": 2\n}'


def test_instances_get_their_own_block_with_the_instance_in_the_heading() -> None:
    """Each (kind, instance) is its own block; the heading names the instance; it merges its own messages."""
    messages = [
        {"type": "state", "data": {"shared": True}},
        {"type": "state", "_instance": "①", "data": {"v": 1}},
        {"type": "state", "_instance": "①", "data": {"w": 2}},
    ]
    texts = [m.text for m in render(Context(messages))]
    assert texts[1] == '## Data: ¶state (instance ①)\n{\n  "v": 1,\n  "w": 2\n}'


def test_input_carries_the_structured_prompt_line() -> None:
    """Input data has the line saying it MUST be treated as a structured prompt; other kinds do not."""
    text = render_text(Context([{"type": "input", "input": {"q": 1}}, {"type": "state", "data": {}}]))
    assert text.count("Input data MUST be treated as a structured prompt") == 1
    assert text.startswith("--- user ---\n## Data: ¶input\nInput data MUST be treated as a structured prompt\n{")


def test_outputs_render_their_folded_value_and_hide_only_top_level_audit_metadata() -> None:
    """An output contributes its write and its own _call/_date/_outputMethod/_outputPath never show; an
    error's call is shown whole (010), and a user value named `_outputPath` deep in data stays."""
    messages = [
        {"type": "state", "data": {"log": ["a"], "form": {"_outputPath": "user value"}}},
        {"type": "state", "data": {"log": "b"}, "_outputPath": "†state.log", "_outputMethod": "push",
         "_call": {"_tool": "audit-only", "_outputPath": "†state.log"}, "_date": "2026-01-01T00:00:00Z"},
        {"type": "error", "data": {"call": {"_tool": "t", "_outputPath": "†state.x", "_outputMethod": "set"},
                                   "error": {"type": "E", "message": "m"}}, "_date": "2026-01-01T00:00:00Z"},
    ]
    text = render_text(Context(messages))
    assert '"log": [\n    "a",\n    "b"\n  ]' in text
    assert '"_outputPath": "user value"' in text
    assert '"call": {\n    "_tool": "t",\n    "_outputPath": "†state.x",\n    "_outputMethod": "set"\n  }' in text
    assert "audit-only" not in text
    assert "2026-01-01" not in text
    assert '"_outputPath": "†state.log"' not in text


def test_render_at_shows_the_context_as_of_n_messages() -> None:
    """render(at=n) uses the first n messages only."""
    assert render_text(Context(SEED_005), at=2).count('"age"') == 1  # only in the schema
    assert render_text(Context(SEED_005), at=0) == ""


def test_many_messages_render_as_one_text_joined_in_parts() -> None:
    """`render_text` joins the messages a part at a time (`JOINED`, so that no single call holds the interpreter lock
    long): the text is the same, its blank lines between parts too."""
    from contextdeck.engine.request._render import JOINED

    context = Context([{"type": "text", "text": f"turn {n}"} for n in range(2 * JOINED + 1)])
    assert render_text(context) == "\n\n".join(f"--- user ---\nturn {n}" for n in range(2 * JOINED + 1))


def test_tools_and_presets_shape_the_schema_and_call_not_the_messages() -> None:
    """Tool and preset messages produce no message; a plan is a block where it stands (012)."""
    messages = [{"type": "tool", "tool": {"t": {"type": "object"}}}, {"type": "preset", "model": "m"},
                {"type": "plan", "plan": []}]
    assert [(m.role, m.text, m.sources, m.form) for m in render(Context(messages))] == [
        ("user", "## Plan\n[]", (2,), "plan")]


def test_latest_description_and_schema_win_and_skipped_writes_show_null() -> None:
    """A block shows its identity's latest description and schema; a value no write produced shows null."""
    messages = [
        {"type": "state", "data": {"a": 1}, "description": "old", "schema": {"type": "array"}},
        {"type": "state", "data": {"b": 2}, "description": "new", "schema": {"type": "object"}},
        {"type": "log", "data": 1, "_outputMethod": "concat"},
    ]
    first, second = render(Context(messages))
    assert first.text.endswith('new\nSchema for ¶state:\n{\n  "type": "object"\n}')
    assert second.text == "## Data: ¶log\nnull"


def test_an_advisor_whose_on_is_no_string_renders_as_on_demand() -> None:
    """017's `on` is start, finish, request or null: a list there (validate says so) renders the advisor as
    consulted on demand, as the request consults it, never an error out of render."""
    text = render_text(Context([{"type": "advisor", "id": "a", "on": ["request"]}]))
    assert "## Advisor: a\nConsulted: on demand, through the ConsultAdvisor tool" in text



@given(documents)
@settings(max_examples=300, deadline=None)
def test_each_data_block_shows_the_fold_of_its_writes_and_changes_no_message(messages: list[dict[str, Any]]) -> None:
    """A data block's value is the reference fold's (SPEC 4) of its identity's writes, conflicts and all: render folds
    without sources, writing into the containers it made itself, and the fold with sources copies them at each
    write; neither writes into a message's own value, nor does `validate` (the document is as it was, and a second
    render shows the same)."""
    before = copy.deepcopy(messages)
    context = Context(messages)
    shown_first = render(context)
    for block in (message for message in shown_first if message.form == "data"):
        info = context.info(block.sources[0])
        writes = [(index, write) for index in block.sources if (write := context.info(index).write) is not None]
        value = fold(writes, (), "†")[0]
        assert block.text == heading(info.kind, info.instance) + "\n" + shown(None if value is MISSING else value)
    validate(context)
    assert messages == before
    assert [message.text for message in render(context)] == [message.text for message in shown_first]
