"""Hypothesis strategies: random contexts (data messages, outputs with every method) and expressions."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

KINDS = ("state", "data")  # few kinds, so that writes meet often
DECOY_KINDS = ("state", "data", "input")
INSTANCES = (None, "①", "②")
SEGMENTS = ("a", "b", "0", "1")
METHODS = ("set", "merge", "assign", "push", "concat")

keys = st.sampled_from(SEGMENTS)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "y", ""]))
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=3)),
    max_leaves=6,
)
paths = st.lists(keys, max_size=2).map(tuple)


def ref(kind: str, path: tuple[str, ...]) -> str:
    return "†" + ".".join((kind, *path))


def wrap(path: tuple[str, ...], value: Any) -> Any:
    """The data of an output message: the value wrapped in the path (SPEC 6.5)."""
    for segment in reversed(path):
        value = {segment: value}
    return value


@st.composite
def data_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A plain data message in one of the forms of SPEC 2."""
    kind = draw(st.sampled_from(KINDS))
    value = draw(values)
    form = draw(st.sampled_from(["data", "keyed", "shorthand-data"]))
    if form == "data" or kind == "data":
        message: dict[str, Any] = {"type": "data", "kind": kind, "data": value}
        if kind == "data" and draw(st.booleans()):
            del message["kind"]
    elif form == "keyed":
        message = {"type": kind, kind: value}
    else:
        message = {"type": kind, "data": value}
    # A method without a path applies at the root; a `_call` without `_outputPath` is a root write too.
    if draw(st.integers(0, 4)) == 0:
        message["_outputMethod"] = draw(st.sampled_from(METHODS))
    if draw(st.integers(0, 4)) == 0:
        message["_call"] = {"_tool": "t"}
    return _instanced(draw, message)


@st.composite
def output_messages(draw: st.DrawFn) -> dict[str, Any]:
    """An output message: explicit `_outputPath`, or derived from `_call._outputPath` among decoys."""
    kind = draw(st.sampled_from(KINDS))
    path = draw(paths)
    method = draw(st.sampled_from((None, *METHODS)))
    value = draw(st.lists(values, max_size=2) if method == "concat" and draw(st.booleans()) else values)
    message: dict[str, Any] = {"type": "data", "kind": kind, "data": wrap(path, value)}
    call: dict[str, Any] = {"_tool": "t", "x": "†input.a"}
    if draw(st.booleans()):
        message["_outputPath"] = ref(kind, path)
        if draw(st.booleans()):
            call["_outputPath"] = ref(kind, path)
            message["_call"] = call
    else:
        decoys = draw(st.lists(st.tuples(st.sampled_from(DECOY_KINDS), paths), max_size=2))
        destinations = [ref(k, p) for k, p in [*decoys, (kind, path)]]
        operator = draw(st.sampled_from([" || ", " && ", "||"]))
        call["_outputPath"] = operator.join(draw(st.permutations(destinations)))
        message["_call"] = call
    if method is not None:
        message["_outputMethod"] = method
        call["_outputMethod"] = method
    message["_date"] = "2026-01-01T00:00:00Z"
    return _instanced(draw, message)


def _instanced(draw: st.DrawFn, message: dict[str, Any]) -> dict[str, Any]:
    instance = draw(st.sampled_from(INSTANCES))
    if instance is not None:
        message["_instance"] = instance
        if isinstance(message.get("_call"), dict):
            message["_call"]["_instance"] = instance
    return message


texts = st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["hello", "go on"]))
contexts = st.lists(st.one_of(data_messages(), output_messages(), output_messages(), texts), max_size=10)
references = st.builds(ref, st.sampled_from(KINDS), paths)
expressions = st.lists(st.lists(references, min_size=1, max_size=2).map(" && ".join), min_size=1, max_size=3).map(
    " || ".join
)
