"""Impact preview predicts exactly what an edit does to the watches, and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import documents, edits, watch_lists

from contextdeck.engine import Context, Insert, Move, Remove, Replace, Resolution
from contextdeck.engine.resolve._resolution import same_json

SIGNALS = ("inserting", "inserted", "removing", "removed", "moving", "moved", "replacing", "replaced")


def _snapshot(ctx: Context) -> tuple[list[Any], list[int]]:
    return ctx.messages, [ctx.id_at(i) for i in range(len(ctx))]


def test_preview_lists_old_and_new() -> None:
    """Previewing a replace names the watch it would change, with its current and its new resolution."""
    ctx = Context([{"type": "state", "data": {"a": 1}}])
    handle = ctx.watch("†state.a", lambda _: None)
    untouched = ctx.watch("†state.b", lambda _: None)
    [(watch, old, new)] = ctx.preview(Replace(0, {"type": "state", "data": {"a": 2}}))
    assert watch is handle
    assert (old.value, new.value) == (1, 2)
    assert untouched.current.found is False


def test_preview_changes_nothing() -> None:
    """After a preview the messages, ids and watches are as before, and no signal or callback ran."""
    ctx = Context([{"type": "state", "data": {"a": 1}}, {"type": "text", "text": "x"}])
    heard: list[str] = []
    for name in SIGNALS:
        getattr(ctx, name).connect(lambda *args, name=name: heard.append(name))
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append)
    before, current = _snapshot(ctx), handle.current
    for edit in (Insert(0, {"type": "state", "data": {"a": 5}}), Remove(0), Move(1, 0), Replace(0, {"type": "text"})):
        ctx.preview(edit)
        assert _snapshot(ctx) == before
        assert handle.current == current  # (ranked again if the preview shifted indices: an equal object)
    assert heard == []
    assert calls == []


def test_preview_of_an_insert_uses_no_id() -> None:
    """A previewed insert does not consume an id: the next real insert gets the id it would have had."""
    ctx, twin = Context([]), Context([])
    ctx.preview(Insert(0, {"type": "text", "text": "x"}))
    ctx.insert(0, {"type": "text", "text": "x"})
    twin.insert(0, {"type": "text", "text": "x"})
    assert ctx.id_at(0) == twin.id_at(0)


def test_preview_of_an_invalid_edit_raises_and_changes_nothing() -> None:
    """A preview of an edit that cannot apply raises as applying it would, and leaves the context alone."""
    ctx = Context([{"type": "state", "data": {"a": 1}}])
    before = _snapshot(ctx)
    with pytest.raises(IndexError):
        ctx.preview(Remove(3))
    with pytest.raises(TypeError):
        ctx.preview(Insert(0, "not a message"))  # type: ignore[arg-type]
    assert _snapshot(ctx) == before


@settings(max_examples=120, deadline=None)
@given(documents, watch_lists(5), st.data())
def test_preview_predicts_apply(document: list[dict[str, Any]], watched: list[Any], data: st.DataObject) -> None:
    """For random edits, the previewed changes are exactly the callbacks that applying the edit then makes."""
    ctx = Context(document)
    calls: list[tuple[int, Resolution]] = []
    handles = [
        ctx.watch(expr, lambda r, n=n: calls.append((n, r)), instance=instance)
        for n, (expr, instance) in enumerate(watched)
    ]
    for _ in range(data.draw(st.integers(1, 5))):
        edit = data.draw(edits(len(ctx)))
        before = _snapshot(ctx)
        predicted = [(handles.index(watch), new) for watch, _, new in ctx.preview(edit)]
        assert _snapshot(ctx) == before
        calls.clear()
        ctx.apply(edit)
        assert calls == predicted


@settings(max_examples=120, deadline=None)
@given(documents, watch_lists(5), st.data())
def test_watches_stay_exact_after_previews(
    document: list[dict[str, Any]], watched: list[Any], data: st.DataObject
) -> None:
    """Previews of other edits between real ones leave nothing behind: every watch still equals a fresh fold."""
    ctx = Context(document)
    handles = [(ctx.watch(expr, lambda _: None, instance=instance), expr, instance) for expr, instance in watched]
    for _ in range(data.draw(st.integers(1, 6))):
        for _ in range(data.draw(st.integers(1, 3))):
            ctx.preview(data.draw(edits(len(ctx))))
        ctx.apply(data.draw(edits(len(ctx))))
        fresh = Context(ctx.messages)
        for handle, expr, instance in handles:
            expected = fresh.resolve(expr, instance)
            assert (handle.current.found, handle.current.sources) == (expected.found, expected.sources)
            assert same_json(handle.current.value, expected.value)


@pytest.mark.parametrize("previewed", [Remove(1), Move(1, 3)])
def test_a_previewed_edit_puts_the_message_back_exactly(previewed: Any) -> None:
    """Undoing a previewed remove or move restores the message's place in the order exactly, so a watch
    naming it still reads the right index after later edits around it."""
    ctx = Context([{"type": "state", "data": {"a": 1}}, {"type": "text", "text": "end"}])
    ctx.insert(1, {"type": "state", "data": {"a": 2}})  # between two messages: its order key is a midpoint
    ctx.insert(2, {"type": "text", "text": "after it"})
    handle = ctx.watch("†state.a", lambda _: None)
    ctx.preview(previewed)
    ctx.insert(0, {"type": "text", "text": "first"})
    assert handle.current.sources == (2,) == ctx.resolve("†state.a").sources


def test_a_previewed_remove_of_the_only_message_puts_its_key_back() -> None:
    """Found by hypothesis: with nothing after it, the message's old key lies beyond the usual room at the
    end of the order; it is still the key it gets back."""
    ctx = Context([{"type": "text"}, {"type": "state", "data": None}])
    ctx.remove(0)
    handle = ctx.watch("†state", lambda _: None)
    ctx.preview(Remove(0))
    ctx.insert(0, {"type": "text"})
    assert handle.current.sources == (1,) == ctx.resolve("†state").sources


def test_preview_of_a_renumbering_lists_no_watch() -> None:
    """An insert or a move that only renumbers the watched messages is previewed as no change, as applying
    it calls nothing back; an insert of a message the watch reads is listed, and applying it calls that
    watch back alone."""
    ctx = Context([{"type": "text"}, {"type": "state", "data": {"a": {"x": 1}}}, {"type": "state", "data": {"b": 1}}])
    calls: list[tuple[str, Resolution]] = []
    a = ctx.watch("†state.a", lambda r: calls.append(("a", r)))
    ctx.watch("†state.b", lambda r: calls.append(("b", r)))
    for renumbering in (Insert(0, {"type": "text"}), Move(0, 2)):  # the state messages shift, twice
        assert ctx.preview(renumbering) == []
        ctx.apply(renumbering)
        assert calls == []
    adding = Insert(1, {"type": "state", "data": {"a": {"y": 2}}})
    [(watch, old, new)] = ctx.preview(adding)
    assert (watch, old.sources, new.sources) == (a, (1,), (1, 2))
    ctx.apply(adding)
    assert calls == [("a", new)]


def test_a_preview_that_relabels_the_order_leaves_every_watch_exact() -> None:
    """A previewed insert where the order keys have no room left relabels every key (and the preview puts
    the context back): the watches follow at once, with no callback, and still read the right indices,
    also those renumbered by earlier edits and not read since."""
    ctx = Context([{"type": "text"}, {"type": "state", "data": {"a": 1}}])
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append)
    keys = ctx._store.order.keys
    while keys[1] - keys[0] >= 2:  # inserts at one spot, each halving the room there, never read
        ctx.insert(1, {"type": "text"})
    generation = ctx._store.order.generation
    assert ctx.preview(Insert(1, {"type": "text"})) == []
    assert ctx._store.order.generation == generation + 1
    assert calls == []
    assert handle.current == ctx.resolve("†state.a") == Context(ctx.messages).resolve("†state.a")
    ctx.insert(0, {"type": "text"})
    assert calls == []
    assert handle.current.sources == (len(ctx) - 1,)
