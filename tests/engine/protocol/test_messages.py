"""001's custom content types: a `{role, content}` message whose content is a typed object is that message."""

from __future__ import annotations

import json
from typing import Any

import reference
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import INSTANCES, documents, edits, expressions, messages, watch_lists

from contextdeck.engine import (
    Context,
    Form,
    Insert,
    Move,
    Remove,
    Replace,
    Resolution,
    body_of,
    classify,
    content_text,
    kind_of,
    payload_key,
    payload_of,
    text_of,
)

INPUT = {"type": "input", "_instance": "①", "input": {"name": "Jane"}, "schema": {"type": "object"}}


def dressed(message: dict[str, Any], role: str = "user") -> dict[str, Any]:
    """`message` written as 001 writes a custom content type: the message as the content of a role message."""
    return {"role": role, "content": message}


def test_a_typed_content_object_is_the_message_it_stands_for() -> None:
    """Form, kind, instance and write are the content object's: `_instance`, `schema` and the payload are read there."""
    wrapped = dressed(INPUT)
    assert body_of(wrapped) is INPUT
    assert classify(wrapped) == classify(INPUT)
    assert classify(wrapped).identity == ("input", "①")
    assert (kind_of(wrapped), payload_of(wrapped), payload_key(wrapped)) == ("input", {"name": "Jane"}, "input")
    assert classify(dressed({"type": "plan", "plan": []})).form is Form.PLAN
    assert classify(dressed({"type": "tool", "tool": {}})).form is Form.TOOL
    assert classify(dressed({"type": "data", "kind": "user", "data": {"a": 1}})).identity == ("user", None)


def test_keys_beside_the_content_mean_nothing_to_the_fold() -> None:
    """An `_instance` (or an audit key) beside `role` is not the message's: the content object alone says it."""
    outer = {"role": "user", "_instance": "②", "_outputPath": "†input.x", "content": {"type": "input", "input": 1}}
    info = classify(outer)
    assert info.identity == ("input", None)
    assert info.write is not None
    assert (info.write.path, info.write.method, info.write.problem) == ((), "merge", None)


def test_what_is_not_a_custom_content_type_stays_text() -> None:
    """A string content, a content without a string `type` (or an empty one) and a message with a `type` are what
    they were: the wrapper is looked for only where a message has no `type`."""
    for content in ("hi", {"text": "x"}, {"type": ""}, {"type": 3, "input": 1}, [{"type": "image_url"}], None):
        message = {"role": "user", "content": content}
        assert body_of(message) is message
        assert classify(message).form is Form.TEXT
    typed = {"type": "text", "text": "hi", "content": {"type": "input", "input": 1}}
    assert body_of(typed) is typed
    assert classify(typed).form is Form.TEXT


def test_text_content_keeps_the_role_of_its_message() -> None:
    """`content: {"type": "text", "text": ...}` is text with the outer role; a `system` content is system's."""
    assert text_of({"role": "assistant", "content": {"type": "text", "text": "Paris."}}) == ("assistant", "Paris.")
    assert text_of({"role": "user", "content": {"type": "system", "message": "Be brief."}}) == ("system", "Be brief.")
    assert classify({"role": "assistant", "content": {"type": "text", "text": "x"}}).form is Form.TEXT


def test_a_list_of_text_parts_is_their_text_joined() -> None:
    """OpenAI's content parts: text parts are joined by a newline; a list with any other part stays as it is."""
    parts = [{"type": "text", "text": "one"}, {"type": "input_text", "text": "two"}]
    assert content_text(parts) == "one\ntwo"
    assert text_of({"role": "user", "content": parts}) == ("user", "one\ntwo")
    assert content_text([]) == ""
    image = [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "x"}}]
    assert content_text(image) is image
    assert content_text([{"type": "text", "text": 5}]) == [{"type": "text", "text": 5}]


def test_references_resolve_through_a_custom_content_type() -> None:
    """001's example: `†input.name` reads the input written as content, for its instance, with its source."""
    context = Context([{"role": "system", "content": "You help."}, dressed(INPUT)])
    found = context.resolve("†input.name", instance="①")
    assert (found.found, found.value, found.sources) == (True, "Jane", (1,))
    assert not context.resolve("†input.name").found  # the instance is the content's


def test_an_edit_that_wraps_or_unwraps_a_message_keeps_every_answer() -> None:
    """Replacing a message by its wrapped form leaves values and sources as they were; a watch is not called back."""
    plain = {"type": "state", "state": {"a": 1}}
    context = Context([plain, {"type": "state", "_outputPath": "†state.b", "state": {"b": 2}}])
    calls: list[Resolution] = []
    watch = context.watch("†state", calls.append)
    before = watch.current
    context.apply(Replace(0, dressed(plain)))
    assert watch.current == before
    assert calls == []
    context.apply(Replace(0, {"role": "user", "content": {"type": "state", "state": {"a": 3}}}))
    assert watch.current.value == {"a": 3, "b": 2}
    assert len(calls) == 1


def _same(one: Resolution, other: Resolution) -> bool:
    return one == other and json.dumps(one.value) == json.dumps(other.value)


def _check(plain: Context, wrapped: Context, expr: str, instance: str | None, at: int | None) -> None:
    want, got = plain.resolve(expr, instance, at), wrapped.resolve(expr, instance, at)
    assert _same(got, want), (expr, instance, at, got, want)
    messages = wrapped.messages
    if all(isinstance(reference.body(m).get("_outputPath", ""), str) for m in messages):  # what it reads
        found, value, sources = reference.resolve(messages, expr, instance, at)
        assert (got.found, got.value if got.found else None, list(got.sources)) == (found, value, sources)


roles = st.sampled_from(["user", "system", "assistant"])


@settings(max_examples=80, deadline=None)
@given(document=documents, data=st.data(), exprs=st.lists(expressions(), min_size=1, max_size=4))
def test_a_wrapped_message_folds_exactly_as_its_unwrapped_form(
    document: list[dict[str, Any]], data: st.DataObject, exprs: list[str]
) -> None:
    """Any message of a random document written as a custom content type: every resolution at every cut (found,
    value, sources, diagnostics) is the plain document's, and the reference fold's over the wrapped messages."""
    flags = data.draw(st.lists(st.booleans(), min_size=len(document), max_size=len(document)))
    wrapped = [dressed(m, data.draw(roles)) if flag else m for m, flag in zip(document, flags, strict=True)]
    plain, dressed_context = Context(document), Context(wrapped)
    for expr in exprs:
        for instance in INSTANCES:
            for at in (None, data.draw(st.integers(0, len(document)))):
                _check(plain, dressed_context, expr, instance, at)


def _both(message: dict[str, Any], wrap: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    return message, dressed(message) if wrap else message


@settings(max_examples=60, deadline=None)
@given(document=documents, watches=watch_lists(5), data=st.data())
def test_watches_over_wrapped_messages_follow_every_edit_as_over_plain_ones(
    document: list[dict[str, Any]], watches: list[tuple[str, str | None]], data: st.DataObject
) -> None:
    """The incremental engine (indexes, tracks, watches) given the same edits, once with messages as they are and
    once with some written as content: each watch holds the same answer and is called back alike."""
    flags = data.draw(st.lists(st.booleans(), min_size=len(document), max_size=len(document)))
    plain = Context(document)
    wrapped = Context([dressed(m) if flag else m for m, flag in zip(document, flags, strict=True)])
    calls: list[tuple[list[Resolution], list[Resolution]]] = [([], []) for _ in watches]
    handles = [(plain.watch(expr, calls[n][0].append, instance=instance),
                wrapped.watch(expr, calls[n][1].append, instance=instance))
               for n, (expr, instance) in enumerate(watches)]
    for _ in range(data.draw(st.integers(1, 10))):
        edit = data.draw(edits(len(plain), messages()))
        wrap = data.draw(st.booleans())
        if isinstance(edit, Insert):
            one, other = Insert(edit.index, edit.message), Insert(edit.index, _both(edit.message, wrap)[1])
        elif isinstance(edit, Replace):
            one, other = Replace(edit.index, edit.message), Replace(edit.index, _both(edit.message, wrap)[1])
        else:
            assert isinstance(edit, Remove | Move)
            one = other = edit
        plain.apply(one)
        wrapped.apply(other)
        for (mine, theirs), (expr, instance), (got_plain, got_wrapped) in zip(handles, watches, calls, strict=True):
            assert _same(theirs.current, mine.current), (edit, expr, instance)
            assert len(got_wrapped) == len(got_plain), (edit, expr, instance)
            got_plain.clear()
            got_wrapped.clear()
        _check(plain, wrapped, watches[0][0], watches[0][1], None)
