"""Blame names the writes behind a resolved value, agrees with the fold, and shows what each shadowed."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import INSTANCES, documents, expressions

from contextdeck.engine import MISSING, Context

BASE = {"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}}
CALL = {"_tool": "updateUserStatus", "_outputPath": "†data.user.status"}
OUTPUT = {
    "type": "data",
    "data": {"user": {"status": "inactive"}},
    "_call": CALL,
    "_date": "2026-11-22T08:00:00Z",
    "_outputPath": "†data.user.status",
}


def test_seed_example_names_base_and_change() -> None:
    """†data.user comes from the plain message (its base) and the output that changed its status."""
    blame = Context([BASE, OUTPUT]).blame("†data.user")
    assert blame.found
    assert blame.value == {"name": "Alex", "status": "inactive"}
    assert blame.base is not None
    assert (blame.base.index, blame.base.method, blame.base.shadowed) == (0, "merge", MISSING)
    [change] = blame.changes
    assert (change.index, change.method, change.path, change.call, change.date) == (
        1, "set", "user.status", CALL, "2026-11-22T08:00:00Z"
    )
    assert change.shadowed == {"name": "Alex", "status": "active"}
    assert change.value == blame.value


def test_a_set_shadows_the_older_value() -> None:
    """A later set becomes the base; the value it replaced is what it shadowed."""
    ctx = Context([OUTPUT | {"data": {"user": {"status": "away"}}}, OUTPUT])
    blame = ctx.blame("†data.user.status")
    assert [(e.index, e.shadowed, e.value) for e in blame.entries] == [(1, "away", "inactive")]


def test_not_found_has_no_entries() -> None:
    """An expression that is not found is blamed on nothing."""
    blame = Context([BASE]).blame("†data.user.age")
    assert (blame.found, blame.reference, blame.entries) == (False, None, ())


def test_blame_travels_in_time() -> None:
    """`at` blames the value as of the first `at` messages."""
    blame = Context([BASE, OUTPUT]).blame("†data.user.status", at=1)
    assert (blame.value, [e.index for e in blame.entries]) == ("active", [0])


def test_blame_follows_the_found_alternative() -> None:
    """With `||`, the blame is of the reference the value came from."""
    blame = Context([BASE]).blame("†data.user.age || †data.user.name")
    assert (blame.reference, blame.value) == ("†data.user.name", "Alex")


def test_entries_carry_stable_ids() -> None:
    """Each entry's message id finds the entry's message."""
    ctx = Context([{"type": "text", "text": "hi"}, BASE, OUTPUT])
    for entry in ctx.blame("†data.user").entries:
        assert ctx.index_of(entry.message_id) == entry.index


@settings(max_examples=150, deadline=None)
@given(documents, expressions(), st.sampled_from(INSTANCES), st.one_of(st.none(), st.integers(0, 12)))
def test_blame_agrees_with_the_fold(
    document: list[dict[str, Any]], expr: str, instance: str | None, at: int | None
) -> None:
    """Entries are the resolution's sources; each shadowed the value the previous one left; the last gives it."""
    ctx = Context(document)
    resolution = ctx.resolve(expr, instance, at=at)
    blame = ctx.blame(expr, instance, at=at)
    assert (blame.found, blame.value) == (resolution.found, resolution.value)
    if not blame.found:
        assert blame.entries == ()
        return
    value = ctx.resolve(blame.reference or "", instance, at=at)
    assert sorted(e.index for e in blame.entries) == list(value.sources)
    assert blame.entries[-1].value == value.value
    for previous, entry in zip(blame.entries, blame.entries[1:], strict=False):
        assert entry.shadowed == previous.value
    for entry in blame.entries:
        message = ctx[entry.index]
        assert (entry.call, entry.date, entry.message_id) == (
            message.get("_call"), message.get("_date"), ctx.id_at(entry.index)
        )
