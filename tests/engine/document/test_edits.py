"""Edit commands apply and return their inverse; ids survive edits."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import edits, messages

from contextdeck.engine import Context, Form, Insert, Move, Remove, Replace

A, B, C = ({"type": "state", "data": {"n": n}} for n in range(3))


@pytest.mark.parametrize(
    "edit", [Insert(1, {"type": "text", "text": "x"}), Insert(-1, {"type": "text", "text": "x"}),
             Remove(0), Remove(-1), Replace(2, {"type": "state", "data": {"n": 9}}), Move(0, 2), Move(2, 0)]
)
def test_inverse_restores_the_messages(edit) -> None:
    """Applying an edit and then its inverse gives back the same messages in the same order."""
    ctx = Context([A, B, C])
    before = ctx.messages
    inverse = ctx.apply(edit)
    assert ctx.messages != before
    ctx.apply(inverse)
    assert ctx.messages == before


def test_ids_follow_their_message() -> None:
    """A message keeps its id through moves and replaces; the id of a removed message is gone."""
    ctx = Context([A, B, C])
    first, last = ctx.id_at(0), ctx.id_at(2)
    ctx.move(0, 2)
    assert ctx.index_of(first) == 2
    ctx.replace(2, {"type": "state", "data": {}})
    assert ctx.id_at(2) == first
    ctx.remove(1)
    with pytest.raises(KeyError):
        ctx.index_of(last)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_messages_in_order_follow_every_edit_and_undo(data: st.DataObject) -> None:
    """`messages`, indexing and `view()` list what a plain list given the same edits holds, after
    applies and undos alike."""
    model = data.draw(st.lists(messages(), max_size=6))
    ctx = Context(model)
    ctx.watch("†state.a", lambda _resolution: None)  # edits fold something
    undos: list[tuple[Any, list[Any]]] = []  # each edit's undo, and the list before it
    for _ in range(data.draw(st.integers(1, 12))):
        if data.draw(st.booleans()) and undos:
            undo, model = undos.pop()
            ctx.apply(undo)
        else:
            edit = data.draw(edits(len(ctx)))
            undos.append((ctx.apply(edit), model))
            model = _applied(model, edit)
        assert ctx.messages == model
        assert [ctx[index] for index in range(len(ctx))] == model
        assert list(ctx.view().messages) == model


def _applied(model: list[Any], edit: Any) -> list[Any]:
    """`edit` done on a plain list of messages."""
    model = list(model)
    if isinstance(edit, Insert):
        model.insert(edit.index, edit.message)
    elif isinstance(edit, Remove):
        del model[edit.index]
    elif isinstance(edit, Replace):
        model[edit.index] = edit.message
    else:
        model.insert(edit.dst, model.pop(edit.src))
    return model


_forms = st.sampled_from([
    {"type": "tool", "tool": {"name": "t", "parameters": {}}},
    {"type": "plan", "plan": []},
    {"type": "text", "text": "x"},
    {"type": "state", "data": {"n": 1}},
])


@settings(max_examples=100, deadline=None)
@given(st.lists(_forms, max_size=6), st.data())
def test_the_tools_and_plans_are_known_after_any_edits(start: list[dict[str, Any]], data: st.DataObject) -> None:
    """`indices_of` names the tool and plan messages, in order, after inserts, removes, replaces and moves,
    as a look at every message does (the calls panel finds the tools and calls through it)."""
    ctx = Context(start)
    for _ in range(data.draw(st.integers(1, 8))):
        ctx.apply(data.draw(edits(len(ctx), _forms)))
        for form in (Form.TOOL, Form.PLAN):
            at = data.draw(st.integers(0, len(ctx)))
            assert ctx.indices_of(form, at) == [i for i in range(at) if ctx.info(i).form is form]
