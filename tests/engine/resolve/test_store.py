"""The store keeps what each message is by its id: whatever the edits, each message's parsed view is what
classifying it gives, an id no message has any more has none, and the tool and plan messages are known."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine import Context
from contextdeck.engine.protocol._messages import Form, classify

MESSAGES: list[dict[str, Any]] = [
    {"type": "state", "data": {"a": 1}},
    {"role": "user", "content": "hi"},
    {"type": "tool", "tool": {"t": {"type": "object"}}},
    {"type": "plan", "plan": []},
    {"type": "input", "data": {"b": 2}, "_instance": "x"},
]
EDITS = st.lists(st.tuples(st.sampled_from(["insert", "replace", "remove", "move"]), st.integers(0, 20),
                           st.integers(0, 20), st.sampled_from(MESSAGES)), max_size=25)


@given(EDITS)
def test_what_each_message_is_follows_every_edit(edits: list[tuple[str, int, int, dict[str, Any]]]) -> None:
    context = Context(MESSAGES[:2])
    gone: list[int] = []
    for edit, at, to, message in edits:
        size = len(context)
        if edit == "insert":
            context.insert(at % (size + 1), dict(message))
        elif size and edit == "replace":
            context.replace(at % size, dict(message))
        elif size and edit == "remove":
            gone.append(context.id_at(at % size))
            context.remove(at % size)
        elif size and edit == "move":
            context.move(at % size, to % size)
    store = context._store
    for index in range(len(context)):
        assert context.info(index) == classify(context[index])
        assert store.info_of(context.id_at(index)) == context.info(index)
    assert all(store.info_of(message_id) is None for message_id in [0, -1, *gone, context._next_id])
    for form in (Form.TOOL, Form.PLAN):
        assert context.indices_of(form) == [i for i in range(len(context)) if context.info(i).form is form]
