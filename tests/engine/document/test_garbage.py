"""Edits leave no reference cycles: everything an edit drops is freed by reference counting.

The window can then run the cycle collector when it is idle (contextdeck/_runtime.py) without it ever
being what frees the engine's memory.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable
from typing import Any

from contextdeck.engine import Activities, Context, Insert, Move, Remove, Replace
from contextdeck.engine.calls._calls import plan_call, resolve_call

SEGMENTS = ("a", "b", "0")


def _message(rng: random.Random) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.1:
        return {"type": "text", "text": "hi"}
    path = tuple(rng.choice(SEGMENTS) for _ in range(rng.randint(0, 2)))
    value: Any = rng.choice([1, "x", None, [1], {"a": 1}, {"b": {"a": 2}}])
    for segment in reversed(path):
        value = {segment: value}
    message: dict[str, Any] = {"type": "data", "kind": rng.choice(("s", "t")), "data": value}
    if rng.random() < 0.5:
        message["_instance"] = rng.choice(("1", "2"))
    if rng.random() < 0.7:
        message["_outputPath"] = "†" + ".".join((message["kind"], *path)) if rng.random() < 0.9 else "†"
        message["_outputMethod"] = rng.choice(("set", "merge", "assign", "push", "concat"))
    return message


def _edit(rng: random.Random, size: int) -> Any:
    roll = rng.random()
    if roll < 0.4 or size < 2:
        return Insert(rng.randint(0, size), _message(rng))
    if roll < 0.6:
        return Replace(rng.randrange(size), _message(rng))
    if roll < 0.8:
        return Move(rng.randrange(size), rng.randrange(size))
    return Remove(rng.randrange(size))


def _cyclic_garbage(action: Callable[[], None]) -> list[str]:
    """The types of the objects `action` leaves in reference cycles (the collector is off while it runs)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        action()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_edits_leave_no_cyclic_garbage() -> None:
    rng = random.Random(7)
    ctx = Context([_message(rng) for _ in range(300)])
    watches = [
        ctx.watch(expr, lambda _: None, instance=instance)
        for expr in ("†s.a", "†s.a.b || †t.0", "†s && †t.b.a", "†t.a.0")
        for instance in (None, "1")
    ]

    def edit_at_random() -> None:
        for _ in range(400):
            ctx.apply(_edit(rng, len(ctx)))

    assert _cyclic_garbage(edit_at_random) == []
    for watch in watches:  # and they were kept current all along
        assert watch.current == ctx.resolve(watch.expression, watch.instance)


def test_resolving_a_call_leaves_no_cyclic_garbage() -> None:
    """A call's parameters, nested ones too, are resolved without a reference cycle: the recursive closure used
    before was one, holding the context, so a window that froze it kept a replaced document."""
    ctx = Context([{"type": "input", "input": {"text": "hi", "n": [1, 2]}}])
    plan = plan_call(0, {"_tool": "t", "text": "†input.text", "nested": {"items": ["†input.n", "plain"]}}, {},
                     Activities())
    resolved: list[dict[str, Any]] = []
    assert _cyclic_garbage(lambda: resolved.append(resolve_call(ctx, plan))) == []
    assert resolved[0]["nested"] == {"items": [[1, 2], "plain"]}
