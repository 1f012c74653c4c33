"""`validate`'s checks of a message's protocol fields that no other check reads."""

from __future__ import annotations

from contextdeck.engine import Context, render, validate


def test_a_role_no_chat_api_takes_is_a_warning_at_its_message() -> None:
    """A misspelt role reaches the model as written, and one that is no string is sent as user: each is a
    warning naming its message, and a known role is none."""
    context = Context([{"type": "text", "text": "a", "role": "assistnat"}, {"role": "robot", "content": "b"},
                       {"type": "text", "text": "c", "role": 5}, {"role": "assistant", "content": "d"},
                       {"type": "text", "text": "e"}])
    warnings = [(p.message_index, p.path, p.severity) for p in validate(context)]
    assert warnings == [(0, "role", "warning"), (1, "role", "warning"), (2, "role", "warning")]
    reasons = [p.reason for p in validate(context)]
    assert reasons[0].endswith("the request sends 'assistnat'")
    assert reasons[2].startswith("5 is not a role of a chat message")
    assert reasons[2].endswith("the message is sent as 'user'")
    assert [m.role for m in render(context)][:3] == ["assistnat", "robot", "user"]


def test_a_data_messages_kind_that_is_no_name_is_a_warning() -> None:
    """`kind: 5` makes data of the kind `data`, and `kind: ""` of the kind `''`: each is a warning at its
    message; a string kind is none."""
    context = Context([{"type": "data", "kind": 5, "data": {"a": 1}}, {"type": "data", "kind": "", "data": {}},
                       {"type": "data", "kind": "user", "data": {}}, {"type": "data", "data": {}}])
    problems = [(p.message_index, p.path, p.severity, p.reason) for p in validate(context)]
    assert problems == [
        (0, "¶data", "warning", "'kind' 5 is not a non-empty string: the message is data of the kind 'data'"),
        (1, "¶", "warning", "'kind' \"\" is not a non-empty string: the message is data of the kind ''")]


def test_a_protocol_field_of_the_wrong_type_is_a_warning_at_its_message() -> None:
    """A `preset` that is no object gives the call a setting named preset, a meta's or an error's data that is
    no object is none of 016's: each is a warning at its field."""
    context = Context([{"type": "data", "kind": "user", "data": {"a": 1}}, {"type": "preset", "preset": 5},
                       {"type": "meta", "meta": 5}, {"type": "error", "data": 5},
                       {"role": "user", "content": {"type": "error", "error": "x"}},
                       {"type": "data", "kind": "meta", "data": {"path": "/p", "version": "1.0.0"}},
                       {"type": "preset", "preset": {"model": "m"}}, {"type": "error", "data": {"error": {}}}])
    assert [(p.message_index, p.path, p.severity) for p in validate(context)] == [
        (1, "preset", "warning"), (2, "meta", "warning"), (3, "data", "warning"),
        (4, "error", "warning")]
    reasons = [p.reason for p in validate(context)]
    assert reasons[0] == "5 is not an object of settings: the model call is given 'preset' as a setting"
    assert "016" in reasons[1]
    assert reasons[3].startswith('"x" is not an object')


def test_a_tool_schema_no_validator_can_use_is_a_problem_of_its_message() -> None:
    """A tool whose latest definition no validator can use is said at that message, though no plan calls it
    yet: `run` would refuse every call of it. An earlier definition the latest replaces is not judged."""
    bad_type = {"type": "object", "properties": {"p": {"type": "strin"}}}
    context = Context([{"type": "tool", "tool": {"a": {"type": "object", "properties": {"p": {"$ref": "#/nope"}}}}},
                       {"type": "tool", "tool": {"b": bad_type}},
                       {"type": "tool", "tool": {"a": {"type": "object"}}}])
    problems = [(p.message_index, p.path, p.severity, p.reason) for p in validate(context)]
    assert problems == [(1, "tool", "error", "tool 'b': its schema cannot be used: invalid schema at "
                         "#/properties/p/type: 'strin' is not valid under any of the given schemas")]
