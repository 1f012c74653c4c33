"""Which message set a value: the one lookup the state view uses (swap in `ctx.blame` when the engine has it)."""

from __future__ import annotations

from contextdeck.engine import Context, Reference


def last_writer(context: Context, kind: str, instance: str | None, path: tuple[str, ...], at: int | None) -> int | None:
    """The message that last set `†kind.path` (or a parent) as of the first `at` messages, or None."""
    limit = len(context) if at is None else at
    sources = context.resolve_reference(Reference(kind, path), instance, limit).sources
    return max(sources) if sources else None
