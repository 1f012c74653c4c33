"""A `Context` stays whole whatever the code that listens to it does."""

from collections.abc import Callable
from typing import Any

import pytest

from contextdeck.engine import Context

EDITS: dict[str, tuple[str, Callable[[Context], Any]]] = {
    "insert": ("inserted", lambda ctx: ctx.append({"type": "state", "data": {"x": 2}})),
    "replace": ("replaced", lambda ctx: ctx.replace(1, {"type": "state", "data": {"x": 2}})),
    "remove": ("removed", lambda ctx: ctx.remove(1)),
    "move": ("moved", lambda ctx: ctx.move(1, 0)),
}


@pytest.mark.parametrize("name", EDITS)
def test_a_listener_that_raises_leaves_the_watches_current(name: str) -> None:
    """An edit a signal's handler raises after is still made everywhere: the error reaches the caller, and the
    watches and `resolve` answer with the edit, then and after the next one."""
    ctx = Context([{"type": "state", "data": {"x": 0}}, {"type": "state", "data": {"x": 1}}])
    seen: list[object] = []
    watch = ctx.watch("†state.x", lambda resolution: seen.append(resolution.value))
    signal, edit = EDITS[name]

    def fails(*_: object) -> None:
        raise RuntimeError("a listener's own bug")

    getattr(ctx, signal).connect(fails)
    with pytest.raises(Exception, match="a listener's own bug"):
        edit(ctx)
    expected = {"insert": 2, "replace": 2, "remove": 0, "move": 0}[name]
    assert ctx.resolve("†state.x").value == watch.current.value == expected
    assert seen == [expected]
    getattr(ctx, signal).disconnect(fails)
    ctx.append({"type": "state", "data": {"y": 0}})
    assert ctx.resolve("†state.x").value == watch.current.value == expected
