"""Whatever a broken input holds, import reads it or says where it is wrong: never another exception."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_responses import stateless
from test_traces import exchange, genai_trace, jsonl, log_lines

from contextdeck.engine import TraceError, compose_request, export_otlp, import_bytes, validate

ODD = [None, True, 0, -1, 1.5, "", "x", "†a", [], {}, [1], {"a": 1}, "call_1", "tool", "assistant", "{", "[]", "{}",
       10**13, -(10**13), 2**70, "99999999999999999999999"]  # times no date can say, past 64 bits


def paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*path, index))
    return found


def mutated(value: Any, changes: list[tuple[int, Any]]) -> Any:
    """`value` with each change: the node at a chosen place replaced by an odd value, or removed."""
    value = json.loads(json.dumps(value))
    for place, odd in changes:
        candidates = paths(value)[1:]
        if not candidates:
            break
        *parents, last = candidates[place % len(candidates)]
        parent = value
        for key in parents:
            parent = parent[key]
        if odd == "<remove>":
            del parent[last]
        else:
            parent[last] = copy.deepcopy(odd)  # never ODD's own list or dict: a later change would mutate it
    return value


def outcome(raw: bytes) -> Any:
    """The imported contexts, or the TraceError the import raised (any other exception goes up)."""
    try:
        return import_bytes(raw, "input.json")
    except TraceError as error:
        return error


SOURCES = {"exchange": exchange, "log": log_lines, "otlp": genai_trace, "responses": stateless}
LOGS = ("log", "responses")  # written as JSON Lines
change = st.tuples(st.integers(0, 10_000), st.sampled_from([*ODD, "<remove>"]))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(SOURCES)), st.lists(change, min_size=1, max_size=3))
def test_a_mutated_input_imports_or_is_a_located_error(source: str, changes: list[tuple[int, Any]]) -> None:
    """Nodes of a valid exchange, log or trace replaced by odd values or removed: the import gives documents
    that validate, render and export, or a TraceError; nothing else."""
    value = mutated(SOURCES[source](), changes)
    raw = jsonl(value) if source in LOGS and isinstance(value, list) else json.dumps(value).encode()
    imported = outcome(raw)
    if isinstance(imported, TraceError):
        assert str(imported).startswith("input.json")
        return
    for item in imported:
        document = item.document
        validate(document.context, document.solution, schema=document.schema)
        compose_request(document.context, document.schema)
        export_otlp(document)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(SOURCES)), st.integers(0, 100_000), st.binary(max_size=3))
def test_a_cut_or_spoiled_file_is_a_located_error(source: str, at: int, junk: bytes) -> None:
    """A file cut anywhere, or with bytes put in: read, or a TraceError naming the file."""
    value = SOURCES[source]()
    raw = jsonl(value) if source in LOGS else json.dumps(value).encode()
    at %= len(raw)
    for spoiled in (raw[:at], raw[:at] + junk + raw[at + len(junk):]):
        result = outcome(spoiled)
        assert isinstance(result, list) or str(result).startswith("input.json")
