"""A context's read-only view renders and validates as the context does, and stays as it was taken."""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import documents, edits

from contextdeck.engine import Context, instances_of, load_document, render_text, validate


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
