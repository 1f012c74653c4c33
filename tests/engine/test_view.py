"""A context's read-only view renders and validates as the context does, and stays as it was taken."""

from contextdeck.engine import Context, load_document, render_text, validate


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
