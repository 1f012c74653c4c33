"""A `Context` stays whole whatever the code that listens to it does."""

from collections.abc import Callable
from typing import Any

import pytest

from contextdeck.engine import Context, parse_expression

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


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda ctx: ctx.insert(1.5, {"type": "text", "text": "x"}), "message index must be an integer, got float 1.5"),
        (lambda ctx: ctx.insert("1", {"type": "text", "text": "x"}), "message index must be an integer, got str '1'"),
        (lambda ctx: ctx.move(0.0, 1), "message index must be an integer, got float 0.0"),
        (lambda ctx: ctx.remove(None), "message index must be an integer, got NoneType None"),
        (lambda ctx: ctx.resolve("†state.x", at=1.5), "`at` must be an integer, got float 1.5"),
        (lambda ctx: ctx.resolve(None), "expected an expression .* got NoneType"),
        (lambda ctx: ctx.blame(123), "expected an expression .* got int"),
        (lambda ctx: ctx.watch("†state.x", "print"), "watch '†state.x': the callback is not callable: str"),
    ],
)
def test_arguments_of_the_wrong_type_are_refused_before_anything_changes(call, reason) -> None:
    """A TypeError that says which argument and what it got, before any announcement: nothing changes."""
    ctx = Context([{"type": "state", "data": {"x": n}} for n in range(3)])
    heard: list[object] = []
    ctx.inserting.connect(heard.append)
    ctx.moving.connect(lambda *where: heard.append(where))
    with pytest.raises(TypeError, match=reason):
        call(ctx)
    assert (heard, len(ctx), ctx.resolve("†state.x").value) == ([], 3, 2)
    ctx.append({"type": "state", "data": {"x": 9}})
    assert [ctx.id_at(index) for index in range(4)] == [1, 2, 3, 4]


def test_watch_takes_a_parsed_expression_as_resolve_does() -> None:
    """`watch` takes an `Expression` as `resolve` and `blame` do."""
    ctx = Context([{"type": "state", "data": {"x": 1}}])
    assert ctx.watch(parse_expression("†state.x"), lambda resolution: None).current.value == 1


def test_a_watch_callback_that_raises_keeps_no_other_watch_from_hearing() -> None:
    """Every watch whose value an edit changed is called back even when an earlier callback raises; that error
    then reaches the edit's caller."""
    ctx = Context([{"type": "state", "data": {"x": 1, "y": 1}}])
    heard: list[tuple[str, object]] = []

    def fails(resolution: object) -> None:
        raise RuntimeError("a callback's own bug")

    ctx.watch("†state.x", fails)
    ctx.watch("†state.x", lambda resolution: heard.append(("x", resolution.value)))
    ctx.watch("†state.y", lambda resolution: heard.append(("y", resolution.value)))
    with pytest.raises(RuntimeError, match="a callback's own bug"):
        ctx.append({"type": "state", "data": {"x": 2, "y": 2}})
    assert heard == [("x", 2), ("y", 2)]


@pytest.mark.parametrize("read", [lambda ctx, index: ctx[index], lambda ctx, index: ctx.info(index)])
@pytest.mark.parametrize("index", [3, -4, 100])
def test_a_message_out_of_range_says_the_index_and_the_length(read, index) -> None:
    """`Context[i]` (and `info(i)`) out of range said only "list index out of range": the error names the index and
    how many messages there are; a negative index in range counts from the end, as a list's does."""
    ctx = Context([{"type": "state", "data": {"x": n}} for n in range(3)])
    with pytest.raises(IndexError, match=rf"^message index {index} out of range: the context has 3 messages$"):
        read(ctx, index)
    assert ctx[-1] == {"type": "state", "data": {"x": 2}}
    assert ctx.info(-3).kind == "state"


@pytest.mark.parametrize("signal", ["inserting", "removing", "moving", "replacing"])
def test_an_edit_inside_an_announcement_is_refused_and_nothing_changes(signal: str) -> None:
    """An edit made by a handler of an edit's announcement would shift what was announced (a remove of message 2
    would remove another): it is refused, the announced edit is not made, and the messages stay as they were."""
    messages = [{"type": "state", "data": {"x": n}} for n in range(3)]
    ctx = Context(messages)
    ctx.watch("†state.x", lambda resolution: None)

    def edits(*_: object) -> None:
        ctx.insert(0, {"type": "state", "data": {"x": "inside"}})

    getattr(ctx, signal).connect(edits)
    edit = {"inserting": lambda: ctx.append({"type": "text", "text": "t"}), "removing": lambda: ctx.remove(2),
            "moving": lambda: ctx.move(2, 0), "replacing": lambda: ctx.replace(2, {"type": "text", "text": "t"})}
    with pytest.raises(Exception, match="a message edit inside the announcement of another"):
        edit[signal]()
    assert ctx.messages == messages
    assert ctx.resolve("†state.x").value == 2
    getattr(ctx, signal).disconnect(edits)
    ctx.remove(2)
    assert ctx.resolve("†state.x").value == 1


def test_an_edit_made_in_a_callback_tells_each_watch_once() -> None:
    """A callback that edits the context (re-entrancy): the watches called back for that inner edit are not
    called again with the same resolution when the outer edit's callbacks go on."""
    ctx = Context([{"type": "state", "data": {"x": 1}}])
    first: list[object] = []
    second: list[object] = []

    def corrects(resolution) -> None:
        first.append(resolution.value)
        if resolution.value == 2:
            ctx.append({"type": "state", "data": {"x": 3}})

    ctx.watch("†state.x", corrects)
    ctx.watch("†state.x", lambda resolution: second.append(resolution.value))
    ctx.append({"type": "state", "data": {"x": 2}})
    assert (first, second) == ([2, 3], [3])
    ctx.append({"type": "state", "data": {"x": 4}})
    assert (first, second) == ([2, 3, 4], [3, 4])
