"""A dict that shares its keys (`_json.sharing_keys`) is, to every reader, the dict it was made from."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine import Activities, Context, Execution, fixed_clock
from contextdeck.engine.document import _json

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


@contextmanager
def own_shapes() -> Iterator[None]:
    """The shapes made inside are forgotten after (a test's many shapes would use up the process's)."""
    saved = dict(_json._SHAPES)
    try:
        yield
    finally:
        _json._SHAPES.clear()
        _json._SHAPES.update(saved)


@given(st.dictionaries(st.sampled_from(["type", "kind", "data", "_call", "_run", "call", "seconds", "é", "a b"]),
                       values, max_size=6))
def test_a_shared_dict_equals_its_source_in_order_and_as_json(value: dict[str, Any]) -> None:
    """Equal, the same keys in the same order, the same JSON both ways, and its own values."""
    with own_shapes():
        shared = _json.sharing_keys(value)
        assert type(shared) is dict
        assert shared is not value
        assert shared == value
        assert list(shared) == list(value)
        assert _json.dumps(shared) == _json.dumps(value)
        assert json.dumps(shared) == json.dumps(value)
        shared["extra"] = 1  # an edit changes this dict only
        assert "extra" not in value
        assert "extra" not in _json.sharing_keys(value)


def test_an_edit_that_breaks_the_shared_order_keeps_the_dict_right() -> None:
    """Deleting a key, adding it back and adding another behave as with any dict."""
    with own_shapes():
        shared = _json.sharing_keys({"a": 1, "b": 2, "c": 3})
        del shared["a"]
        shared["a"] = 4
        shared["d"] = 5
        assert list(shared.items()) == [("b", 2), ("c", 3), ("a", 4), ("d", 5)]
        assert _json.sharing_keys({"a": 1, "b": 2, "c": 3}) == {"a": 1, "b": 2, "c": 3}


def test_keys_a_class_holds_itself_are_left_alone() -> None:
    """`__class__`, `__dict__` and keys that are not strings are not attribute names: the dict is returned as is."""
    with own_shapes():
        for value in ({"__class__": 1}, {"__dict__": 2, "a": 1}, {1: "one"}):
            assert _json.sharing_keys(value) is value  # type: ignore[arg-type]


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="key-sharing dicts are CPython's")
def test_dicts_of_one_shape_share_their_keys() -> None:
    """Many dicts of the same keys made by `sharing_keys` each hold less than a dict of their own."""
    value = {"call": 0, "started": "s", "digest": "d", "inputs": {}, "result": 1, "seconds": 0.5}
    with own_shapes():
        shared = [_json.sharing_keys(value) for _ in range(100)]
    assert sys.getsizeof(shared[-1]) < sys.getsizeof(dict(value))


def test_a_run_s_outputs_share_their_keys_and_save_as_before() -> None:
    """A run's output messages and their `_run` audits are shared-key dicts that save, load and edit as plain
    ones."""
    activities = Activities()
    activities.add(lambda call, tool, context: {"n": call["n"]}, "echo")
    context = Context([{"type": "state", "data": {}}])
    calls = [{"_tool": "echo", "n": n, "_outputPath": f"†state.c{n}"} for n in range(40)]
    execution = Execution(context, {"calls": calls}, activities=activities, clock=fixed_clock("2026-01-01T00:00:00Z"),
                          in_process=True, timer=lambda: 0.0)
    asyncio.run(execution.run())
    outputs = context.messages[1:]
    plain = json.loads(json.dumps(outputs))
    assert _json.dumps(outputs) == _json.dumps(plain)
    assert sys.getsizeof(outputs[-1]) < sys.getsizeof(plain[-1])
    assert sys.getsizeof(outputs[-1]["_run"]) < sys.getsizeof(plain[-1]["_run"])
    whole = {f"c{n}": {"n": n} for n in range(40)}
    assert Context(plain).resolve("†state").value == context.resolve("†state").value == whole
    context.replace(5, {**outputs[4], "data": {"c4": 0}})
    assert context.resolve("†state.c4").value == 0
