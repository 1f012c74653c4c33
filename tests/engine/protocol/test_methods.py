"""The five output methods (SPEC 4.5) and writing at a path (SPEC 4.6), through resolution."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incremental_strategies import METHODS, paths, values

from contextdeck.engine import Context, deep_merge
from contextdeck.engine.protocol._methods import Conflict, Owned, write_at
from contextdeck.engine.protocol._values import MISSING


def out(path: str, value: Any, method: str | None = None, kind: str = "state") -> dict[str, Any]:
    """An output message of `kind` writing `value` at `path` (dotted, without the kind)."""
    data: Any = value
    for segment in reversed(path.split(".") if path else []):
        data = {segment: data}
    message: dict[str, Any] = {"type": "data", "kind": kind, "data": data,
                               "_outputPath": "†" + ".".join(filter(None, (kind, path)))}
    if method is not None:
        message["_outputMethod"] = method
    return message


def state(*messages: dict[str, Any], expr: str = "†state.x") -> Any:
    result = Context(list(messages)).resolve(expr)
    return result.value if result.found else "<not found>"


def conflicts(*messages: dict[str, Any], expr: str = "†state.x") -> list[str]:
    return [d.reason for d in Context(list(messages)).resolve(expr).diagnostics]


@pytest.mark.parametrize(
    ("before", "method", "new", "after"),
    [
        ({"a": 1}, "set", {"b": 2}, {"b": 2}),
        ({"a": {"p": 1, "q": 1}}, "merge", {"a": {"q": 2}, "b": 3}, {"a": {"p": 1, "q": 2}, "b": 3}),
        ({"a": [1, 2]}, "merge", {"a": [3]}, {"a": [3]}),
        ({"a": 1}, "merge", {"a": None}, {"a": None}),
        ([1], "merge", {"a": 1}, {"a": 1}),
        ({"a": {"p": 1}}, "assign", {"a": {"q": 2}}, {"a": {"q": 2}}),
        ({"a": 1, "b": 2}, "assign", {"b": 3}, {"a": 1, "b": 3}),
        ("s", "assign", {"b": 3}, {"b": 3}),
        ({"a": 1}, "assign", [1], [1]),
        ([1], "push", 2, [1, 2]),
        ([1], "push", [2], [1, [2]]),
        ([1], "concat", [2, 3], [1, 2, 3]),
        ([], "concat", [], []),
    ],
)
def test_method_on_an_existing_value(before, method, new, after) -> None:
    """Each method combines the earlier value E with the new value N as SPEC 4.5 says."""
    assert state(out("x", before), out("x", new, method)) == after


@pytest.mark.parametrize(
    ("method", "new", "after"),
    [("set", 1, 1), ("merge", {"a": 1}, {"a": 1}), ("assign", {"a": 1}, {"a": 1}), ("push", 1, [1]),
     ("concat", [1, 2], [1, 2])],
)
def test_method_on_an_undefined_value(method, new, after) -> None:
    """On an undefined value: set/merge/assign give N, push gives [N], concat gives N."""
    assert state(out("x", new, method)) == after


@pytest.mark.parametrize(
    ("before", "method", "new", "reason"),
    [
        ({"a": 1}, "push", 1, "push onto an object"),
        (None, "push", 1, "push onto null"),
        ("s", "concat", [1], "concat onto a string"),
        ([1], "concat", 2, "concat of a number"),
        ([1], "concat", {"a": 1}, "concat of an object"),
    ],
)
def test_push_and_concat_conflicts(before, method, new, reason) -> None:
    """push/concat onto a non-array, and concat of a non-array, are conflicts that skip the write."""
    messages = [out("x", before), out("x", new, method)]
    assert state(*messages) == before
    (found,) = conflicts(*messages)
    assert found.startswith(f"{method} at x: {reason}")


def test_concat_of_a_non_array_onto_nothing_conflicts() -> None:
    """concat needs an array even when nothing is there yet."""
    assert state(out("x", 2, "concat")) == "<not found>"
    assert "concat of a number" in conflicts(out("x", 2, "concat"))[0]


def test_a_conflict_names_message_path_and_reason() -> None:
    """The diagnostic of a conflict carries the message index, the path read and the reason."""
    (diagnostic,) = Context([out("x", 1), out("x", 2, "push")]).resolve("†state.x").diagnostics
    assert (diagnostic.message_index, diagnostic.path) == (1, "†state.x")
    assert "push onto a number" in diagnostic.reason
    assert str(diagnostic).startswith("message 1: †state.x: push at x")


def test_conflicts_never_raise_and_later_writes_still_apply() -> None:
    """A skipped write leaves the value as it was; the writes after it still apply."""
    assert state(out("x", [1]), out("x", 2, "concat"), out("x", 3, "push")) == [1, 3]


# -- path creation (SPEC 4.6) --------------------------------------------------------------------


def test_missing_parents_become_objects() -> None:
    """Writing at a.b.c with nothing there creates the objects on the way."""
    assert state(out("x.a.b", 1)) == {"a": {"b": 1}}


def test_a_scalar_parent_is_replaced_by_an_object() -> None:
    """A scalar (or null) on the way is replaced by an object holding the write."""
    assert state(out("x", 5), out("x.a", 1)) == {"a": 1}
    assert state(out("x", {"a": None}), out("x.a.b", 1)) == {"a": {"b": 1}}


@pytest.mark.parametrize(("index", "after"), [("0", ["z", 2]), ("1", [1, "z"]), ("2", [1, 2, "z"])])
def test_numeric_segment_under_an_array_addresses_0_to_len(index, after) -> None:
    """Under an array an index may be 0..len; len appends."""
    assert state(out("x", [1, 2]), out(f"x.{index}", "z")) == after


@pytest.mark.parametrize(("index", "reason"), [
    ("3", "index '3' outside an array of 2"),
    ("a", "'a' is not an index of an array"),
    ("-1", "'-1' is not an index of an array"),
    ("01", "'01' is not an index of an array"),
])
def test_other_segments_under_an_array_conflict(index, reason) -> None:
    """An index past len, or a segment that is not an index, under an array is a conflict. Only the index
    past the end names the array's length: a key under an array fails whatever the array holds."""
    assert state(out("x", [1, 2]), out(f"x.{index}", "z")) == [1, 2]
    assert conflicts(out("x", [1, 2]), out(f"x.{index}", "z"))[0].endswith(f"x.{index}: {reason}")


def test_an_index_of_thousands_of_digits_is_past_the_end() -> None:
    """An index longer than Python converts (4,300 digits) is past the end of the array: not found when read, a
    conflict naming the array's length when written, never an exception."""
    huge = "1" * 4301
    assert state(out("x", [1, 2]), expr=f"†state.x.{huge}") == "<not found>"
    assert state(out("x", [1, 2]), out(f"x.{huge}", "z")) == [1, 2]
    assert conflicts(out("x", [1, 2]), out(f"x.{huge}", "z"))[0].endswith(f"index {huge!r} outside an array of 2")


def test_appending_under_an_array_creates_the_element() -> None:
    """x.2.name on a two-element array appends an object holding name."""
    assert state(out("x", [1, 2]), out("x.2.name", "n")) == [1, 2, {"name": "n"}]


def test_push_onto_an_element() -> None:
    """push at x.0.tags appends to the array inside the first element."""
    assert state(out("x", [{"tags": ["a"]}]), out("x.0.tags", "b", "push")) == [{"tags": ["a", "b"]}]


def test_digit_keys_of_objects_are_keys() -> None:
    """Under an object a numeric segment is an ordinary key."""
    assert state(out("x.0", "zero")) == {"0": "zero"}


# -- deep merge ------------------------------------------------------------------------------------


def test_merge_is_not_associative() -> None:
    """{"k":{"x":1}} then {"k":5} then {"k":{"y":2}} folds left to {"k":{"y":2}}: the 5 wiped x."""
    plain = [{"type": "state", "data": {"k": {"x": 1}}}, {"type": "state", "data": {"k": 5}},
             {"type": "state", "data": {"k": {"y": 2}}}]
    assert state(*plain, expr="†state.k") == {"y": 2}
    # Merging the last two first would keep x: the fold must go left to right.
    assert deep_merge({"k": {"x": 1}}, deep_merge({"k": 5}, {"k": {"y": 2}})) == {"k": {"x": 1, "y": 2}}


def test_deep_merge_does_not_mutate_its_inputs() -> None:
    """Merging copies along the way: the document's own dicts are never changed."""
    old, new = {"a": {"b": 1}}, {"a": {"c": 2}}
    assert deep_merge(old, new) == {"a": {"b": 1, "c": 2}}
    assert old == {"a": {"b": 1}}
    assert new == {"a": {"c": 2}}


def test_messages_are_never_mutated_by_resolution() -> None:
    """Resolving, pushing and merging leave every message dict as it was loaded."""
    messages = [out("x", [1]), out("x", 2, "push"), {"type": "state", "data": {"x": [0], "y": {"z": 1}}}]
    snapshot = repr(messages)
    ctx = Context(messages)
    ctx.resolve("†state.x")
    ctx.resolve("†state")
    assert repr(messages) == snapshot


@settings(max_examples=300, deadline=None)
@given(writes=st.lists(st.tuples(paths, st.sampled_from(METHODS), values), max_size=24), shown_at=st.sets(
    st.integers(0, 24)))
def test_a_fold_writes_in_place_only_the_containers_it_owns(
    writes: list[tuple[tuple[str, ...], str, Any]], shown_at: set[int]
) -> None:
    """`write_at` with `owned` gives what it gives without, and a write that conflicts leaves the root as it was;
    a root shown (its `owned` cleared) and every message's value stay as they were, whatever is written after."""
    owned, root, copied = Owned(), MISSING, MISSING
    shown: list[tuple[Any, Any]] = [(value, copy.deepcopy(value)) for _, _, value in writes]
    for step, (path, method, value) in enumerate(writes):
        if step in shown_at:
            shown.append((root, copy.deepcopy(root)))
            owned.clear()
        before = copy.deepcopy(root)
        try:
            copied = write_at(copied, path, method, value)
        except Conflict as conflict:
            with pytest.raises(Conflict, match=re.escape(conflict.reason)):
                write_at(root, path, method, value, owned)
            assert root == before
            continue
        root = write_at(root, path, method, value, owned)
        assert root == copied
    assert all(value == was for value, was in shown)
