"""What is wrong with a document's data, as diagnostics (data vs schema, references, conflicts); see `_checks`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from jsonschema.exceptions import ValidationError

from ..protocol._errors import ExpressionError
from ..protocol._expressions import DAGGER, OUTPUT_PATH, Where, is_read, parsed_or_error
from ..protocol._groups import PlanReading, PlanReadings, why_no_call
from ..protocol._messages import METHODS, MISSING, Write, body_of
from ..protocol._schemas import SchemaFault, schema_errors, unknown_dialect
from ..protocol._values import get_path
from ..resolve._fold import fold
from ..resolve._resolution import Diagnostic
from ._view import Messages, by_position


def json_path(path: Any) -> str:
    """`$.a[0].b` for a jsonschema error path; a key that would read as more than one part (empty, or with
    a dot, a bracket, a quote or a space) is written `["a.b"]`, so that `json_path_parts` reads it back."""
    text = "$"
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}"
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def json_path_parts(text: str) -> tuple[str | int, ...] | None:
    """The parts of a path `json_path` wrote (keys and array indices); None when `text` is not one."""
    if not text.startswith("$"):
        return None
    parts: list[str | int] = []
    position = 1
    while position < len(text):
        found = _PATH_PART.match(text, position)
        if found is None:
            return None
        plain, index, quoted = found.groups()
        parts.append(plain if plain is not None else int(index) if index is not None else json.loads(quoted))
        position = found.end()
    return tuple(parts)


def path_order(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders paths as their values are laid out: `$.calls[2]` before `$.calls[10]`."""
    parts = json_path_parts(text)
    if parts is None:
        return ((2, text),)
    return tuple((0, part) if isinstance(part, int) else (1, part) for part in parts)


_PLAIN_KEY = re.compile(r"[^.\[\]\"'\s]+")
_PATH_PART = re.compile(r"\.([^.\[\]\"'\s]+)|\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]")


def data_problems(context: Messages, plans: PlanReadings) -> list[Diagnostic]:
    """Schema violations per identity, malformed expressions in the calls `plans` read (`read_plans`), write
    conflicts, keys beside a custom content type's content (see `validate`)."""
    beside: list[Diagnostic] = []
    schemas, writes = _layer_problems(context, _layers(context, beside))
    return [*schemas, *_call_problems(plans), *writes, *beside]


# Per kind: the global layer's writes, its latest message with a schema, and each instance's own (writes, schema).
Layer = tuple[list[tuple[int, Write]], int | None]
Layers = dict[str, tuple[Layer, dict[str | None, Layer]]]


def schema_problems_of(context: Messages, kind: str) -> list[Diagnostic]:
    """What `validate` says of one kind's values against their schema (a case's ¶input, say), nothing else."""
    return _layer_problems(context, _layers(context, [], {kind}))[0]


def conflicts_since(context: Messages, since: int) -> list[Diagnostic]:
    """The write conflicts and unusable output paths of the messages from index `since` on (what a run's own
    outputs did: a `push` onto a number, a `concat` of a string), each once, as `validate` says them: an
    instance's write in its layer over the global one, a global write in the global layer."""
    touched = {(info.kind, info.instance) for index in range(since, len(context))
               if (info := context.info(index)).kind is not None and info.write is not None}
    found: list[Diagnostic] = []
    layers = _layers(context, [], {kind for kind, _ in touched})
    for kind, ((global_layer, _), instances) in layers.items():
        if (kind, None) in touched:
            found += fold(global_layer, (), _label(kind, None), with_sources=False)[1].diagnostics
        for name, (own, _) in instances.items():
            if (kind, name) in touched:
                mine = {index for index, _ in own}
                folded = fold(global_layer + own, (), _label(kind, name), with_sources=False)[1].diagnostics
                found += (d for d in folded if d.message_index in mine)
    return [d for d in found if d.message_index is not None and d.message_index >= since]


def _layers(context: Messages, beside: list[Diagnostic], only: set[str] | None = None) -> Layers:
    """Per kind: the global layer's writes and each instance's own writes, in context order, each with the index
    of its latest message that gives a schema. A data message written as a custom content type (001) with keys
    beside its content that the content would hold adds a warning to `beside` (`_beside`). `only`: these kinds
    alone."""
    kinds: dict[str, tuple[list[tuple[int, Write]], dict[str | None, list[tuple[int, Write]]]]] = {}
    schemas: dict[tuple[str, str | None], int] = {}
    infos, message_at = by_position(context)
    for index, info in enumerate(infos):
        if info.kind is None or info.write is None or (only is not None and info.kind not in only):
            continue
        layers = kinds.get(info.kind)
        if layers is None:  # `setdefault` would make a list and a dict for each of 100,000 writes
            layers = kinds[info.kind] = ([], {})
        if info.instance is None:
            layers[0].append((index, info.write))
        elif (own := layers[1].get(info.instance)) is None:
            layers[1][info.instance] = [(index, info.write)]
        else:
            own.append((index, info.write))
        message = message_at(index)
        if "type" not in message:
            message = _beside(message, index, beside)
        if "schema" in message:
            schemas[info.kind, info.instance] = index
            if (unknown := unknown_dialect(message["schema"])) is not None:
                beside.append(Diagnostic(index, "schema", unknown, "warning"))
    return {kind: ((global_layer, schemas.get((kind, None))),
                   {name: (own, schemas.get((kind, name))) for name, own in instances.items()})
            for kind, (global_layer, instances) in kinds.items()}


def _beside(message: dict[str, Any], index: int, beside: list[Diagnostic]) -> dict[str, Any]:
    """The body of a data message written as a custom content type; a warning naming the keys beside its content
    that the content object would hold (`_instance`, `schema`, `description`, `kind`, `_` keys): they are read
    from the content alone (format.md §2)."""
    body = body_of(message)
    ignored = [key for key in message if key[:1] == "_" or key in _BODY_KEYS]
    if body is not message and ignored:
        beside.append(Diagnostic(index, "content", f"{', '.join(ignored)} beside 'content' is ignored: a custom "
                                                   f"content type is read from its content object (here of type "
                                                   f"{body['type']!r}); move it inside", "warning"))
    return body


_BODY_KEYS = frozenset(("schema", "description", "kind"))


def _label(kind: str, instance: str | None) -> str:
    return f"¶{kind}" + (f"[{instance}]" if instance is not None else "")


def _layer_problems(context: Messages, layers: Layers) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """What each identity's writes fold to (an instance: its layer over the global one), folded once for both
    checks: the value against its schema, and the conflicts and unusable output paths the fold met.

    The schema is the latest one given among those messages (an instance's own, else the global layer's). A
    violation an instance inherits unchanged from the global value is reported once, for the global value; so
    is a conflict of the global layer.
    """
    schemas: list[Diagnostic] = []
    conflicts: list[Diagnostic] = []
    for kind, ((global_layer, global_schema), instances) in layers.items():
        inherited: set[tuple[str, str]] = set()
        layered = [(None, global_layer, None, global_schema)] + [
            (name, global_layer + own, {index for index, _ in own}, global_schema if schema is None else schema)
            for name, (own, schema) in instances.items()]
        for instance, writes, mine, schema_at in layered:
            label = _label(kind, instance)
            # A fold targeting the root collects every conflict (every write is relevant to the root).
            value, found = fold(writes, (), label, with_sources=False)  # its values and problems: no sources
            conflicts.extend(found.diagnostics if mine is None else
                             (d for d in found.diagnostics if d.message_index in mine))
            for problem in _check(context, schema_at, label, value, writes):
                key = (problem.path[len(label) :], problem.reason)
                if instance is None:
                    inherited.add(key)
                elif key in inherited:
                    continue
                schemas.append(problem)
    return schemas, conflicts


def _check(context: Messages, schema_at: int | None, label: str, value: Any,
           writes: list[tuple[int, Write]]) -> list[Diagnostic]:
    """`value` against the schema of message `schema_at` (None: no schema). Each violation names the message that
    wrote the value it is about (`_writers`), and the schema's message when that is another: the message to
    look at is the one that wrote the bad value, not the schema's."""
    if value is MISSING or schema_at is None:
        return []
    schema = body_of(context[schema_at])["schema"]
    try:
        violations = schema_errors(schema, value)
    except SchemaFault as fault:
        return [Diagnostic(schema_at, label, str(fault))]
    paths = [tuple(str(part) for part in violation.absolute_path) for violation in violations]
    writers = _writers(writes, set(paths), value)
    problems = []
    for violation, path in zip(violations, paths, strict=True):
        where = writers.get(path, schema_at)
        reason = violation.message if where == schema_at else f"{violation.message} (the schema of message {schema_at})"
        problems.append(Diagnostic(where, label + json_path(violation.absolute_path)[1:], reason))
    return problems


def _writers(writes: list[tuple[int, Write]], paths: set[tuple[str, ...]], value: Any) -> dict[tuple[str, ...], int]:
    """For each path, the last message that wrote the value there or a part of it: the last write at the path
    or above it whose value holds it (a `push` or `concat` above it: the one that appended its element), or below
    it. One pass from the end, over the writes that can matter to a path still unnamed (by its first segment), so
    a document of 100,000 writes costs one pass however many violations it has. `value`: what `writes` fold to.
    An element of an array that a write below it may have lengthened (a write at the index past its end) is
    not counted back: its writer is the last source of a fold at its path."""
    found: dict[tuple[str, ...], int] = {}
    pending: dict[str, set[tuple[str, ...]]] = {}
    for path in paths:
        if path:
            pending.setdefault(path[0], set()).add(path)
        elif writes:
            found[path] = writes[-1][0]  # the whole value: the last write changed it
    lengths: dict[tuple[str, ...], int] = {}  # an array appended to: its length before the appends passed
    indexed: set[tuple[str, ...]] = set()  # arrays a write passed wrote an element of (it may have lengthened them)
    unsure: set[tuple[str, ...]] = set()
    for index, write in reversed(writes):
        if not pending:
            break
        if write.problem is not None:
            continue
        above, written = write.path, write.value
        heads = ([above[0]] if above else
                 [key for key in written if key in pending] if isinstance(written, dict) else list(pending))
        appended = None
        if above and above[0] in pending:
            indexed.update(above[:depth] for depth in range(1, len(above)) if above[depth].isdigit())
            appended = _appended(write, lengths, value)
        for head in heads:
            for path in list(pending.get(head, ())):
                depth = len(above)
                if path[:depth] != above and above[: len(path)] != path:
                    continue  # another branch
                if len(path) > depth and path[:depth] == above:
                    if appended is not None and above in indexed:
                        unsure.add(path)  # which element this append made is not known by counting
                    elif (path[depth] not in appended if appended is not None
                          else get_path(written, path[depth:]) is MISSING):
                        continue  # a write above the path that does not reach it (an element another appended)
                found[path] = index
                pending[head].discard(path)
                if not pending[head]:
                    del pending[head]
    for path in unsure:
        sources = fold(writes, path, "", with_sources=True)[1].sources
        if sources:
            found[path] = sources[-1]
        else:
            found.pop(path, None)
    return found


def _appended(write: Write, lengths: dict[tuple[str, ...], int], value: Any) -> frozenset[str] | None:
    """The indices a `push` or `concat` appended, as strings, walking back from the end (`lengths`: each array's
    length before the appends walked past, from its folded length in `value`); None for another method."""
    if write.method not in _APPENDING:
        return None
    end = lengths.get(write.path)
    if end is None:
        array = get_path(value, write.path)
        end = len(array) if isinstance(array, list) else 0
    count = 1 if write.method == "push" else len(write.value) if isinstance(write.value, list) else 0
    start = max(end - count, 0)
    lengths[write.path] = start
    return frozenset(str(position) for position in range(start, end))


_APPENDING = frozenset(("push", "concat"))


def schema_violations(schema: Any, value: Any, message_index: int | None, label: str,
                      explain: Callable[[ValidationError], ValidationError] | None = None) -> list[Diagnostic]:
    """`value` against `schema`, each violation with its JSON path under `label`; a bad schema is one problem.

    `explain` may replace a violation by the one that says best what is wrong (inside an `anyOf`, say).
    """
    try:
        violations = schema_errors(schema, value)
    except SchemaFault as fault:
        return [Diagnostic(message_index, label, str(fault))]
    if explain is not None:
        violations = [explain(violation) for violation in violations]
    return [
        Diagnostic(message_index, label + json_path(violation.absolute_path)[1:], violation.message)
        for violation in violations
    ]


def call_place(plan_index: int | None, call: str) -> str:
    """Where a call is (`call`: "call 3", or a plan's label of it), as a diagnostic's path: a plan message's call
    needs no more, the diagnostic names the message (`message 2: call 3 $.x: ...`); the solution's has none."""
    return call if plan_index is not None else f"solution, {call}"


def _call_problems(plans: PlanReadings) -> list[Diagnostic]:
    """Malformed expressions in the calls of the solution and of every plan message (earlier plans too)."""
    problems: list[Diagnostic] = []
    for index, reading in plans.items():
        if reading is None:
            problems.append(Diagnostic(index, "plan", "'plan' must be an array of calls"))
        else:
            problems.extend(_calls_problems(reading, index))
    return problems


def _calls_problems(reading: PlanReading, plan_index: int | None) -> list[Diagnostic]:
    """Malformed expressions in these calls' parameters, `_output`s and output paths (what a run reads and writes:
    a `†` string in another meta-property is text); bad output methods."""
    problems: list[Diagnostic] = []
    unlisted = reading.unlisted or {}
    # Members of all/any/race groups are numbered along with the other calls, as the executor numbers them.
    for number, (call, found) in enumerate(zip(reading.calls, reading.expressions, strict=True)):
        if not isinstance(call, dict):  # one with no `_tool` is the set-up's to say (`plan_call`), for pending calls
            problems.append(Diagnostic(plan_index, call_place(plan_index, f"call {number}"),
                                       why_no_call(call, unlisted.get(number))))
            continue
        if "_outputMethod" in call and (method := call["_outputMethod"]) is not None and method not in METHODS:
            problems.append(Diagnostic(plan_index, call_place(plan_index, f"call {number} $._outputMethod"),
                                       f"unknown _outputMethod {method!r}; expected one of {', '.join(METHODS)}"))
        for path, _, parsed in found:
            if isinstance(parsed, ExpressionError) and (path == OUTPUT_PATH or is_read(path)):
                problems.append(_malformed(plan_index, number, path, parsed))
        destination = call.get("_outputPath")
        # A destination must be an expression (`is_expression`, read here: a plan holds 100,000 calls).
        if isinstance(destination, str) and (not destination.startswith(DAGGER) or destination.startswith(DAGGER, 1)):
            parsed = parsed_or_error(destination)
            if isinstance(parsed, ExpressionError):
                problems.append(_malformed(plan_index, number, ("_outputPath",), parsed))
    return problems


def _malformed(plan_index: int | None, number: int, path: Where, error: ExpressionError) -> Diagnostic:
    return Diagnostic(plan_index, call_place(plan_index, f"call {number} {json_path(path)}"),
                      f"{error.reason} at position {error.position}")
