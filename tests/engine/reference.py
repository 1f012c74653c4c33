"""A small, obviously-correct fold of SPEC 4, written from the SPEC alone (it shares no code with the engine).

Slow on purpose: every write deep-copies the whole value. Alongside the value it keeps, for every node,
the set of messages that wrote the node or any part of it since the node was last replaced as a whole
(its provenance); the sources of a path are its node's provenance (docs/format.md, "Sources").
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

DAGGER = "†"
METHODS = ("set", "merge", "assign", "push", "concat")
INDEX = re.compile(r"0|[1-9][0-9]*")


class Absent:
    """Undefined: not there at all (JSON null is a value)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __deepcopy__(self, memo: dict[int, Any]) -> Absent:
        return self


ABSENT: Any = Absent()


class Conflict(Exception):
    """The write cannot be applied; the fold skips it."""


# -- messages (SPEC 2) ----------------------------------------------------------------------------


def body(message: dict[str, Any]) -> dict[str, Any]:
    """001's custom content types: a message with no `type` and a `content` object whose `type` is a non-empty
    string is that object (docs/format.md §2)."""
    content = message.get("content")
    if "type" not in message and isinstance(content, dict) and isinstance(content.get("type"), str) \
            and content["type"] != "":
        return content
    return message


def kind(message: dict[str, Any]) -> str | None:
    """The kind of a data message; None for text (with or without a `type`), tool and plan."""
    kind_ = message.get("type")
    if not isinstance(kind_, str) or kind_ in ("text", "tool", "plan"):
        return None
    if kind_ == "data":
        return message["kind"] if isinstance(message.get("kind"), str) else "data"
    return kind_


def payload(message: dict[str, Any]) -> Any:
    """The key named like the type, else `data`, else every other key but type/schema/description/_keys."""
    if message["type"] in message:
        return message[message["type"]]
    if "data" in message:
        return message["data"]
    skip = {"type", "schema", "description"} | ({"kind"} if message["type"] == "data" else set())
    return {k: v for k, v in message.items() if k not in skip and not k.startswith("_")}


def refs(expression: str) -> list[list[tuple[str, tuple[str, ...]]]]:
    """Alternatives of gates of (kind, path); only for well-formed expressions."""
    alternatives = []
    for alternative in expression.split("||"):
        gate = []
        for ref in alternative.split("&&"):
            name, *path = ref.strip().removeprefix(DAGGER).split(".")
            gate.append((name, tuple(path)))
        alternatives.append(gate)
    return alternatives


def at_path(value: Any, path: tuple[str, ...]) -> Any:
    """The value at `path`, or ABSENT."""
    for segment in path:
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and INDEX.fullmatch(segment) and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return ABSENT
    return value


@dataclass(frozen=True)
class Write:
    path: tuple[str, ...]
    method: str
    value: Any


def write_of(message: dict[str, Any]) -> Write | None:
    """The write a data message makes (SPEC 4.3, 4.4), or None when it has to be skipped."""
    data = payload(message)
    method = message.get("_outputMethod")
    if method is not None and method not in METHODS:
        return None
    path: tuple[str, ...] | None = None
    if message.get("_outputPath") is not None:
        destinations = [ref for gate in refs(message["_outputPath"]) for ref in gate]
        if len(destinations) != 1 or destinations[0][0] != kind(message):
            return None
        path = destinations[0][1]
    elif isinstance(message.get("_call"), dict) and message["_call"].get("_outputPath") is not None:
        if not isinstance(message["_call"]["_outputPath"], str):
            return None
        candidates = [ref for gate in refs(message["_call"]["_outputPath"]) for ref in gate]
        matching = [p for k, p in candidates if k == kind(message) and at_path(data, p) is not ABSENT]
        if not matching:
            return None
        path = matching[0]
    if path is None:
        return Write((), method or "merge", data)
    if at_path(data, path) is ABSENT:
        return None
    return Write(path, method or "set", at_path(data, path))


# -- the fold (SPEC 4.5, 4.6) with provenance -------------------------------------------------------


class State:
    """The folded value and, for every path that exists, the messages it came from."""

    def __init__(self) -> None:
        self.value: Any = ABSENT
        self.provenance: dict[tuple[str, ...], set[int]] = {}

    def replace(self, path: tuple[str, ...], new: Any, index: int) -> None:
        """Put `new` at `path` (its parent exists); every node of it comes from `index` alone."""
        for known in [p for p in self.provenance if p[: len(path)] == path]:
            del self.provenance[known]
        if not path:
            self.value = new
        else:
            parent = at_path(self.value, path[:-1])
            if isinstance(parent, list) and int(path[-1]) == len(parent):
                parent.append(new)
            elif isinstance(parent, list):
                parent[int(path[-1])] = new
            else:
                parent[path[-1]] = new
        self._mark(path, new, index)

    def _mark(self, path: tuple[str, ...], node: Any, index: int) -> None:
        self.provenance[path] = {index}
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            self._mark((*path, str(key)), child, index)

    def touch(self, path: tuple[str, ...], index: int) -> None:
        self.provenance[path].add(index)

    def write(self, index: int, write: Write) -> None:
        new = copy.deepcopy(write.value)
        path = write.path
        for depth in range(len(path)):
            parent, segment = path[:depth], path[depth]
            node = at_path(self.value, parent)
            if isinstance(node, list):
                if not INDEX.fullmatch(segment) or int(segment) > len(node):
                    raise Conflict("index outside the array")
            elif not isinstance(node, dict):
                self.replace(parent, {}, index)  # a missing or scalar parent becomes an object
        existing = at_path(self.value, path)
        getattr(self, "_" + write.method)(path, existing, new, index)
        for depth in range(len(path)):
            self.touch(path[:depth], index)

    def _set(self, path: tuple[str, ...], existing: Any, new: Any, index: int) -> None:
        self.replace(path, new, index)

    def _merge(self, path: tuple[str, ...], existing: Any, new: Any, index: int) -> None:
        if isinstance(existing, dict) and isinstance(new, dict):
            self.touch(path, index)
            for key, value in new.items():
                if key in existing:
                    self._merge((*path, key), existing[key], value, index)
                else:
                    self.replace((*path, key), value, index)
        else:
            self.replace(path, new, index)

    def _assign(self, path: tuple[str, ...], existing: Any, new: Any, index: int) -> None:
        if isinstance(existing, dict) and isinstance(new, dict):
            self.touch(path, index)
            for key, value in new.items():
                self.replace((*path, key), value, index)
        else:
            self.replace(path, new, index)

    def _push(self, path: tuple[str, ...], existing: Any, new: Any, index: int) -> None:
        self._concat(path, existing, [new], index)

    def _concat(self, path: tuple[str, ...], existing: Any, new: Any, index: int) -> None:
        if not isinstance(new, list):
            raise Conflict("concat of a non-array")
        if existing is ABSENT:
            self.replace(path, new, index)
        elif isinstance(existing, list):
            self.touch(path, index)
            for item in new:
                self.replace((*path, str(len(existing))), item, index)
        else:
            raise Conflict("push or concat onto a non-array")


def fold(messages: list[dict[str, Any]], kind_: str, instance: str | None, at: int | None = None) -> State:
    """The value of `kind_` for `instance` as of the first `at` messages: global layer, then instance layer."""
    chosen = [(i, m) for i, m in enumerate(map(body, messages[:at])) if kind(m) == kind_]
    global_layer = [(i, m) for i, m in chosen if m.get("_instance") is None]
    own = [(i, m) for i, m in chosen if instance is not None and m.get("_instance") is not None
           and str(m["_instance"]) == instance]
    state = State()
    for index, message in global_layer + own:
        write = write_of(message)
        if write is None:
            continue
        saved = (copy.deepcopy(state.value), copy.deepcopy(state.provenance))
        try:
            state.write(index, write)
        except Conflict:
            state.value, state.provenance = saved
    return state


def resolve(messages: list[dict[str, Any]], expression: str, instance: str | None = None,
            at: int | None = None) -> tuple[bool, Any, list[int]]:
    """(found, value, sources) of a well-formed expression: the first alternative whose references all exist."""
    for gate in refs(expression):
        results = []
        for kind_, path in gate:
            state = fold(messages, kind_, instance, at)
            results.append((at_path(state.value, path), state.provenance.get(path, set())))
        if all(value is not ABSENT for value, _ in results):
            return True, results[-1][0], sorted(set().union(*(sources for _, sources in results)))
    return False, None, []
