"""Hypothesis strategies shared by the incremental-engine tests: small documents, expressions, edits.

The alphabet is tiny on purpose (two kinds, two instances, four path segments, two of them numeric) so
that random writes collide: sets under merges, pushes onto scalars, arrays indexed by segments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st
from strategies import ref, wrap

from contextdeck.engine import Insert, Move, Remove, Replace
from contextdeck.engine.resolve import _paranoid
from contextdeck.engine.resolve._resolution import same_json

KINDS = ("s", "t")
SEGMENTS = ("a", "b", "0", "1")
INSTANCES = (None, "1", "2")
METHODS = ("set", "merge", "assign", "push", "concat")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["x", "y"]))
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(SEGMENTS), inner, max_size=2)
    ),
    max_leaves=4,
)
paths = st.lists(st.sampled_from(SEGMENTS), max_size=3).map(tuple)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """A text, a plain data message, an output (explicit or derived path), or a broken output."""
    shape = draw(st.sampled_from(["text", "data", "data", "output", "output", "derived", "broken"]))
    if shape == "text":
        return {"type": "text", "text": "hi"}
    kind = draw(st.sampled_from(KINDS))
    message: dict[str, Any] = {"type": kind} if draw(st.booleans()) else {"type": "data", "kind": kind}
    instance = draw(st.sampled_from(INSTANCES))
    if instance is not None:
        message["_instance"] = instance
    payload_key = kind if message["type"] == kind else "data"
    if shape == "data":
        message[payload_key] = draw(values)
        return message
    path = draw(paths)
    method = draw(st.sampled_from(METHODS))
    message[payload_key] = wrap(path, draw(values))
    if method != "set" or draw(st.booleans()):
        message["_outputMethod"] = method
    target = ref(kind, path)
    if shape == "output":
        message["_outputPath"] = target
    elif shape == "derived":
        other = ref(kind, draw(paths))
        message["_call"] = {"_tool": "t", "_outputPath": f"{other} || {target}"}
        message["_date"] = "2026-01-01T00:00:00Z"
    elif draw(st.booleans()):
        message["_outputPath"] = draw(st.sampled_from(["†", 5, "†a || †b"]))
    else:  # a call's output path that is no expression: skipped, as the message's own
        message["_call"] = {"_tool": "t", "_outputPath": draw(st.sampled_from([7, {"a": 1}, ""]))}
    return message


MESSAGES = messages()
documents = st.lists(MESSAGES, max_size=12)


@st.composite
def expressions(draw: st.DrawFn) -> str:
    def reference() -> str:
        return ref(draw(st.sampled_from(KINDS)), draw(paths))

    gates = [" && ".join(reference() for _ in range(draw(st.integers(1, 2)))) for _ in range(draw(st.integers(1, 2)))]
    return " || ".join(gates)


def watch_lists(most: int) -> st.SearchStrategy[list[tuple[str, str | None]]]:
    """One to `most` watches: (expression, instance)."""
    return st.lists(st.tuples(expressions(), st.sampled_from(INSTANCES)), min_size=1, max_size=most)


@st.composite
def array_messages(draw: st.DrawFn, above: tuple[str, ...] = ()) -> dict[str, Any]:
    """Mostly pushes and concats onto `†s.a` (global or instance ①), now and then a set or a merge there,
    a key under the array (a conflict whatever it holds) or a write into an element. `above`: the array is at
    `†s.<above>.a` instead, and now and then a write sets or merges the object above it, or a sibling of it."""
    methods = ["push", "push", "concat", "concat", "set", "merge", "under", *(["above"] * bool(above))]
    method = draw(st.sampled_from(methods))
    if method in ("under", "above"):
        path = (*above, "a", draw(st.sampled_from(["status", "0", "1", "2"])), *draw(st.sampled_from([(), ("n",)])))
        if method == "above":
            path = (*above[:-1], *draw(st.sampled_from([(above[-1],), (above[-1], "x")])))
        method = draw(st.sampled_from(["set", "merge", "push"]))
        return {"type": "s", "s": wrap(path, draw(scalars)), "_outputPath": ref("s", path), "_outputMethod": method,
                **({"_instance": "1"} if draw(st.booleans()) else {})}
    value = draw(st.lists(scalars, max_size=2)) if method in ("concat", "set") else draw(scalars)
    path = (*above, "a")
    message: dict[str, Any] = {"type": "s", "s": wrap(path, value), "_outputPath": ref("s", path),
                               "_outputMethod": method}
    if draw(st.booleans()):
        message["_instance"] = "1"
    return message


# The strategies of a message's parts, made once: one made afresh per draw is checked afresh, most of a draw's time.
_NESTED_INNER = st.one_of(scalars, st.dictionaries(st.sampled_from(["c", "d"]), scalars, max_size=2))
_NESTED_LEAVES = st.one_of(scalars, st.dictionaries(st.sampled_from(["b", "c", "d"]), _NESTED_INNER, max_size=2))
_UNTIDY_NESTED = st.one_of(
    scalars, st.dictionaries(st.sampled_from(["d", "e"]), st.dictionaries(st.sampled_from(["d", "e", "f"]), scalars,
                                                                          max_size=2), max_size=2))
_LANE_VALUES = st.one_of(scalars, st.dictionaries(st.sampled_from(["x", "y"]), scalars, max_size=2))
_LANE_ROOTS = st.dictionaries(st.sampled_from(("a", "b", "c", "d")), _LANE_VALUES, min_size=1, max_size=3)


@st.composite
def nested_messages(draw: st.DrawFn) -> dict[str, Any]:
    """Writes under `†s.a` (global or instance ①) that often differ at one nested field only, which later
    writes leave alone, replace, or act on by what it is."""
    path = draw(st.sampled_from([("a",), ("a", "b"), ("a", "b", "c"), ("a", "d"), ("a", "b", "d")]))
    method = draw(st.sampled_from(["set", "set", "merge", "merge", "assign", "push"]))
    message: dict[str, Any] = {
        "type": "s",
        "s": wrap(path, draw(_NESTED_LEAVES)),
        "_outputPath": ref("s", path),
        "_outputMethod": method,
    }
    if draw(st.booleans()):
        message["_instance"] = "1"
    return message


@st.composite
def untidy_messages(draw: st.DrawFn) -> dict[str, Any]:
    """Documents as agent runs leave them (global or instance ①): a string where an array belongs
    (`†s.a`) and pushes onto it, keys written under an array (`†s.b.x` where `b` is one) and into its
    elements, nested objects merged and assigned, and now and then a write with an unusable path."""
    shape = draw(st.sampled_from(["bad", "push", "push", "push", "array", "under", "nested", "nested", "broken"]))
    path: tuple[str, ...]
    if shape == "bad":
        path, method, value = ("a",), "set", draw(st.sampled_from(["oops", 3, None]))
    elif shape == "push":
        path, method, value = ("a",), "push", draw(scalars)
    elif shape == "array":
        path, method = ("b",), draw(st.sampled_from(["push", "concat", "set"]))
        value = draw(st.lists(scalars, max_size=2)) if method != "push" else {"x": draw(scalars)}
    elif shape == "under":
        path = draw(st.sampled_from([("b", "x"), ("b", "0", "x"), ("b", "1"), ("b", "0")]))
        method, value = draw(st.sampled_from(["set", "merge"])), draw(scalars)
    else:
        path = draw(st.sampled_from([("c",), ("c", "d"), ("c", "d", "e")]))
        method = draw(st.sampled_from(["set", "merge", "assign", "concat"]))
        value = draw(_UNTIDY_NESTED)
    message: dict[str, Any] = {"type": "s", "s": wrap(path, value), "_outputPath": ref("s", path)}
    if method != "set":
        message["_outputMethod"] = method
    if shape == "broken":
        message["_outputPath"] = "†t.a"  # another kind: the write has a problem and is skipped
    if draw(st.booleans()):
        message["_instance"] = "1"
    return message


@st.composite
def edits(draw: st.DrawFn, size: int, new: st.SearchStrategy[dict[str, Any]] | None = None) -> Any:
    """An edit that is valid for a context of `size` messages (new messages drawn from `new`)."""
    fresh = MESSAGES if new is None else new
    if size == 0:
        return Insert(0, draw(fresh))
    index = st.integers(0, size - 1)
    choice = draw(st.sampled_from(["append", "insert", "remove", "replace", "move"]))
    if choice == "append":
        return Insert(size, draw(fresh))
    if choice == "insert":
        return Insert(draw(st.integers(0, size)), draw(fresh))
    if choice == "remove":
        return Remove(draw(index))
    if choice == "replace":
        return Replace(draw(index), draw(fresh))
    return Move(draw(index), draw(index))


@st.composite
def lane_messages(draw: st.DrawFn) -> dict[str, Any]:
    """Writes of one kind across several lanes (global or instance ①), for whole-kind watches: objects
    merged or assigned at the root over several lanes at once, sets and merges inside a lane, pushes
    (some onto a string: conflicts), keys under arrays, writes with an unusable path, and now and then a
    write that replaces the root itself (whole-kind tracks then repair the usual way)."""
    lanes = ("a", "b", "c", "d")
    shape = draw(st.sampled_from(["root", "root", "set", "set", "merge", "push", "push", "under", "broken", "whole"]))
    message: dict[str, Any] = {"type": "s"}
    if shape == "root":
        value = draw(_LANE_ROOTS)
        message["s"] = value
        if draw(st.booleans()):
            message["_outputMethod"] = draw(st.sampled_from(["merge", "assign"]))
    elif shape == "whole":
        message.update({"s": draw(_LANE_VALUES), "_outputPath": "†s"})
    else:
        lane = draw(st.sampled_from(lanes))
        path: tuple[str, ...] = {"set": (lane,), "merge": (lane,), "push": (lane,), "broken": (lane,)}.get(
            shape, (lane, "x")
        )
        if shape == "set" and draw(st.booleans()):
            path = (lane, draw(st.sampled_from(["x", "y"])))
        value = draw(_LANE_VALUES)
        message.update({"s": wrap(path, value), "_outputPath": ref("s", path)})
        if shape in ("merge", "push"):
            message["_outputMethod"] = shape
        if shape == "broken":
            message["_outputPath"] = "†t.a"  # another kind: the write has a problem and is skipped
    if draw(st.booleans()):
        message["_instance"] = "1"
    return message


class Json:
    """A value compared as JSON (1 == 1.0, True != 1, key order ignored)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Json) and same_json(self.value, other.value)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"Json({self.value!r})"


def seen(context: Any, resolution: Any) -> tuple[Any, ...]:
    """What a watcher is called back for (found, value, the source messages by id), as of now."""
    ids = tuple(context.id_at(i) for i in resolution.sources)
    return resolution.found, Json(resolution.value if resolution.found else None), ids


def moved_id(context: Any, edit: Any) -> int | None:
    """The id of the message an edit moves (before it is applied): a moved source is a change too."""
    if not isinstance(edit, Move) or not len(context):
        return None
    src, dst = edit.src % len(context), edit.dst % len(context)
    return None if src == dst else context.id_at(src)


def calls_back(context: Any, before: tuple[Any, ...], moved: int | None, now: Any) -> bool:
    """Whether a watch whose `seen` was `before` (and an edit moving message `moved`) is called back, now
    that it resolves to `now`: found, value or source messages changed, or one of them was moved."""
    after = seen(context, now)
    return before != after or (moved is not None and moved in after[2])


@contextmanager
def compared_by_the_test() -> Iterator[None]:
    """Paranoid mode off (tests/engine/conftest.py) where the test compares every answer it is given with the
    reference fold itself, after every edit, with `exactly`: paranoid mode would fold the same again."""
    was, _paranoid.ENABLED = _paranoid.ENABLED, False
    try:
        yield
    finally:
        _paranoid.ENABLED = was


def exactly(resolution: Any) -> tuple[Any, str]:
    """A resolution and its value as JSON text, keys in their order: as paranoid mode compares them (`==` on
    resolutions ignores key order and says `True == 1`)."""
    return resolution, json.dumps(resolution.value if resolution.found else None)
