"""A context's read-only view renders and validates as the context does, and stays as it was taken."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import documents, edits

from contextdeck.engine import Context, Pieces, instances_of, load_document, render_text, validate


def test_a_view_renders_and_validates_like_its_context(examples) -> None:
    """For every bundled example, render and validate read the same from the view as from the context."""
    for path in sorted(examples.glob("*.json")):
        ctx = load_document(path).context
        view = ctx.view()
        assert render_text(view) == render_text(ctx), path.name
        assert render_text(view, at=2) == render_text(ctx, at=2), path.name
        assert validate(view) == validate(ctx), path.name


def test_a_view_is_a_snapshot() -> None:
    """Edits made after the view was taken do not reach it."""
    ctx = Context([{"type": "text", "text": "first"}])
    view = ctx.view()
    ctx.append({"type": "text", "text": "second"})
    ctx.replace(0, {"type": "text", "text": "changed"})
    assert render_text(view) == "--- user ---\nfirst"
    assert len(view) == 1


@settings(max_examples=60, deadline=None)
@given(documents, st.data())
def test_instances_of_a_context_are_those_of_its_messages(messages: list[Any], data: st.DataObject) -> None:
    """A context answers `instances_of` from its writes per identity; the answer is a scan of its messages',
    through edits of every kind (order of first appearance included)."""
    ctx = Context(messages)
    for _ in range(data.draw(st.integers(0, 8))):
        ctx.apply(data.draw(edits(len(ctx))))
        assert instances_of(ctx) == instances_of(ctx.view())


@settings(max_examples=80, deadline=None)
@given(documents, st.data())
def test_a_view_taken_in_steps_is_the_context_at_its_last_step(messages: list[Any], data: st.DataObject) -> None:
    """`view_steps` copies a few messages at a time; edits of every kind (appends among them) made between two
    steps are in the view it returns: it equals `view()` taken at its last step, messages and parsed infos (or,
    asked for the messages alone, its messages and no infos)."""
    ctx = Context(messages)
    infos = data.draw(st.booleans())
    steps = ctx.view_steps(step=data.draw(st.integers(1, 3)), infos=infos)
    # A budget of edits in all: an edit other than an append starts the copy again, so edits drawn at every
    # step without end would let the copy finish only by luck (examples of seconds, or too long to draw).
    budget = data.draw(st.integers(0, 8))
    while True:
        try:
            next(steps)
        except StopIteration as done:
            view = done.value
            break
        for _ in range(min(budget, data.draw(st.integers(0, 2)))):
            budget -= 1
            if data.draw(st.booleans()):
                ctx.append({"type": "text", "text": f"appended {len(ctx)}"})
            else:
                ctx.apply(data.draw(edits(len(ctx))))
    now = ctx.view()
    assert list(view.messages) == list(now.messages)
    assert len(view) == len(now)
    every = range(-len(now), len(now))
    assert [view[index] for index in every] == [now[index] for index in every]
    joined = view.joined()
    assert isinstance(joined.messages, list)
    assert joined.messages == list(now.messages)
    if not infos:
        assert list(view.infos) == []
        return
    assert list(view.infos) == list(now.infos)
    assert [view.info(index) for index in range(len(now))] == list(now.infos)
    assert joined.infos == list(now.infos)
    assert render_text(view) == render_text(ctx) == render_text(joined)


def test_a_view_in_steps_yields_between_its_steps() -> None:
    """Each step copies at most `step` messages: 10 messages in steps of 4 take three steps (two yields)."""
    ctx = Context([{"type": "text", "text": str(n)} for n in range(10)])
    steps = ctx.view_steps(step=4)
    assert next(steps) is None
    assert next(steps) is None
    with pytest.raises(StopIteration) as done:
        next(steps)
    assert [message["text"] for message in done.value.value.messages] == [str(n) for n in range(10)]


def test_a_view_in_steps_keeps_each_steps_copy_as_a_list_of_its_own() -> None:
    """A step copies into a new list of at most `step` messages and never grows the lists copied before (one list
    grown over a million messages made a step now and then reallocate all of it); the view reads through them as
    one list would: its length, any index, a slice, iteration, and an index past the end raises IndexError."""
    ctx = Context([{"type": "text", "text": str(n)} for n in range(10)])
    steps = ctx.view_steps(step=4)
    next(steps)
    next(steps)
    with pytest.raises(StopIteration) as done:
        next(steps)
    messages = done.value.value.messages
    assert isinstance(messages, Pieces)
    assert [len(piece) for piece in messages.pieces] == [4, 4, 2]
    texts = [str(n) for n in range(10)]
    assert len(messages) == 10
    assert [messages[n]["text"] for n in range(-10, 10)] == texts + texts
    assert [message["text"] for message in messages[3:7]] == texts[3:7]
    assert [message["text"] for message in messages] == texts
    for outside in (10, -11):
        with pytest.raises(IndexError):
            messages[outside]
    assert len(Pieces(4)) == 0
    assert list(Pieces(4)) == []



def test_a_pass_over_every_message_reads_a_view_of_its_own_kind_through_its_methods() -> None:
    """`by_position` (each message and its info, for a pass of `validate`'s over them all) gives a context's and a
    view's messages and infos as they are, and reads a view of its own kind (the window's worker's, which stops at
    its next read) message by message through its methods, never its sequences at once."""
    from dataclasses import dataclass

    from contextdeck.engine.document._view import ContextView, by_position

    @dataclass(frozen=True)
    class Counting(ContextView):
        reads: list[int]

        def __getitem__(self, index: int) -> Any:
            self.reads.append(index)
            return self.messages[index]

        def info(self, index: int) -> Any:
            self.reads.append(index)
            return self.infos[index]

    ctx = Context([{"type": "state", "data": {"a": 1}}, {"type": "text", "text": "t"}, {"type": "plan", "plan": []}])
    view = ctx.view()
    expected = ([ctx[i] for i in range(3)], [ctx.info(i) for i in range(3)])
    for context in (ctx, view):
        infos, message_at = by_position(context)
        assert ([message_at(i) for i in range(3)], list(infos)) == expected
    counting = Counting(view.messages, view.infos, [])
    infos, message_at = by_position(counting)
    assert counting.reads == []
    assert [(message_at(i), info) for i, info in enumerate(infos)] == list(zip(*expected, strict=True))
    assert counting.reads == [0, 0, 1, 1, 2, 2]
