"""Properties: the engine agrees with the reference fold; documents survive load and save unchanged."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import reference
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import INSTANCES, KINDS, contexts, expressions, paths

from contextdeck.engine import AUDIT_KEYS, Context, parse_document, render_text
from contextdeck.engine.protocol._messages import MISSING
from contextdeck.engine.resolve._fold import fold


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, key order included, with true distinct from 1."""
    return orjson.dumps(a) == orjson.dumps(b)


@settings(max_examples=300, deadline=None)
@given(contexts, expressions, st.sampled_from(INSTANCES), st.none() | st.integers(0, 8))
def test_resolve_agrees_with_the_reference_fold(messages, expression, instance, at) -> None:
    """found, value and sources of any expression equal those of the reference fold."""
    got = Context(messages).resolve(expression, instance=instance, at=at)
    found, value, sources = reference.resolve(messages, expression, instance, at)
    assert got.found == found
    assert same(got.value, value)
    assert list(got.sources) == sources


@settings(max_examples=300, deadline=None)
@given(contexts)
def test_a_fold_without_sources_gives_the_value_and_problems_with_them(messages) -> None:
    """The fold of values and problems alone (`validate`'s, `render`'s) gives each layer the value and the diagnostics
    the fold with sources gives, and leaves the messages as they were: a one-key `set` (a run's every output) is
    written straight into an object the fold made, and into nothing else."""
    before = copy.deepcopy(messages)
    context = Context(messages)
    layers: dict[tuple[str, str | None], list[Any]] = {}
    for index in range(len(context)):
        info = context.info(index)
        if info.kind is not None and info.write is not None:
            layers.setdefault((info.kind, info.instance), []).append((index, info.write))
    for (kind, _), writes in layers.items():
        lean_value, lean = fold(writes, (), kind, with_sources=False)
        value, found = fold(writes, (), kind)
        assert lean_value is MISSING if value is MISSING else same(lean_value, value)
        assert lean.diagnostics == found.diagnostics
    assert messages == before


@settings(max_examples=200, deadline=None)
@given(contexts, st.sampled_from(KINDS), paths, st.sampled_from(INSTANCES))
def test_found_values_never_depend_on_how_the_path_is_split(messages, kind, path, instance) -> None:
    """The value at a path equals the path looked up inside the value of its parent (whole-kind fold)."""
    ctx = Context(messages)
    whole = ctx.resolve("†" + kind, instance=instance)
    part = ctx.resolve("†" + ".".join((kind, *path)), instance=instance)
    assert part.found == (reference.at_path(whole.value, path) is not reference.ABSENT and whole.found)
    if part.found:
        assert same(part.value, reference.at_path(whole.value, path))


audit_laden = st.recursive(
    st.one_of(st.none(), st.integers(), st.sampled_from(["x", "†state.a"])),
    lambda children: st.one_of(st.lists(children, max_size=2),
                               st.dictionaries(st.sampled_from(("a", *AUDIT_KEYS)), children, max_size=3)),
    max_leaves=8,
)
AUDIT_DATE = "1999-09-09T09:09:09Z"
audit_messages = st.builds(
    lambda kind, data, schema, description: {"type": kind, "data": data, "schema": schema,
                                             "description": description, "_date": AUDIT_DATE},
    st.sampled_from(["state", "input", "error"]), audit_laden, audit_laden, st.sampled_from(["d", None]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(contexts, st.lists(audit_messages, max_size=3)), max_size=2))
def test_render_hides_audit_metadata_only_at_a_messages_top_level(parts) -> None:
    """A message's own audit metadata never reaches the model; user keys named like it inside data stay."""
    messages = [message for part in parts for message in part]
    text = render_text(Context(messages))
    assert AUDIT_DATE not in text
    for message in messages:
        if message.get("type") == "error" and message.get("_date") == AUDIT_DATE:  # each error is its own block
            shown = json.dumps([message["data"], message["schema"]])
            assert [key for key in AUDIT_KEYS if key in shown and key not in text] == []


# -- documents ------------------------------------------------------------------------------------

json_keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.0, 1e300, -0.0, 0.1, 2**63, -(2**63) - 1]),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8)),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(json_keys, children, max_size=3)),
    max_leaves=12,
)
messages = st.builds(
    lambda kind, extra: {"type": kind, **extra},
    st.sampled_from(["text", "state", "data", "input"]),
    st.dictionaries(json_keys.filter(lambda k: k != "type"), json_values, max_size=4),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, max_size=4), st.sampled_from(["array", "request", "jsonl"]), st.data())
def test_load_then_save_gives_back_the_same_json(msgs, shape, data) -> None:
    """Loading and saving an unedited document keeps its JSON value, its shape and every key order."""
    if shape == "array":
        original: Any = msgs
        raw = json.dumps(original, ensure_ascii=data.draw(st.booleans()), indent=data.draw(st.sampled_from([None, 1])))
    elif shape == "request":
        original = {"schema": data.draw(json_values), "context": msgs, "extra": data.draw(json_values)}
        raw = json.dumps(original, ensure_ascii=False)
    else:
        original = msgs
        raw = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in msgs)
    document = parse_document(raw.encode("utf-8"), jsonl=shape == "jsonl")
    saved = document.dumps()
    if shape == "jsonl":
        reloaded: Any = [json.loads(line) for line in saved.split("\n") if line]
    else:
        reloaded = json.loads(saved)
    # json.dumps writes every key in order and tells true from 1: equal text means equal value and order.
    assert json.dumps(reloaded) == json.dumps(original)
    assert document.shape == shape


meta_values = st.one_of(json_values, st.sampled_from(["†state.a", "†state..a", "†data.0 || †state.a", "push", "set"]))
messy_messages = st.builds(
    lambda kind, payload, meta: {"type": kind, **payload, **meta},
    st.sampled_from(["text", "tool", "plan", "state", "data", "error"]),
    st.dictionaries(st.sampled_from(["data", "state", "text", "kind", "tool", "plan", "schema", "a"]), json_values,
                    max_size=3),
    st.dictionaries(st.sampled_from(["_outputPath", "_outputMethod", "_call", "_instance"]), meta_values, max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(messy_messages, max_size=6), expressions)
def test_nothing_raises_on_messy_messages(msgs, expression) -> None:
    """Whatever the messages hold, resolve, render and validate return (diagnostics), never raise."""
    from contextdeck.engine import validate

    ctx = Context(msgs)
    for instance in (None, "①"):
        result = ctx.resolve(expression, instance=instance)
        assert result.found or result.value is None
    assert isinstance(render_text(ctx), str)
    assert all(d.reason for d in validate(ctx, {"calls": [m for m in msgs if m["type"] == "plan"]}))


@settings(max_examples=150, deadline=None)
@given(contexts, expressions, st.sampled_from(INSTANCES), st.integers(0, 10))
def test_at_is_the_same_as_cutting_the_context(msgs, expression, instance, at) -> None:
    """Resolving as of the first n messages equals resolving a context of only those messages."""
    early = Context(msgs).resolve(expression, instance=instance, at=at)
    cut = Context(msgs[:at]).resolve(expression, instance=instance)
    assert (early.found, list(early.sources)) == (cut.found, list(cut.sources))
    assert same(early.value, cut.value)


@settings(max_examples=150, deadline=None)
@given(contexts, expressions, st.sampled_from(["①", "②"]))
def test_the_instance_layer_wins_whatever_the_order(msgs, expression, instance) -> None:
    """Moving every global message before the instance's own ones changes no instance value."""
    own = [m for m in msgs if m.get("_instance") == instance]
    reordered = [m for m in msgs if m.get("_instance") != instance] + own
    before = Context(msgs).resolve(expression, instance=instance)
    after = Context(reordered).resolve(expression, instance=instance)
    assert before.found == after.found
    assert same(before.value, after.value)
