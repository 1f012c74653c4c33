"""The `†` expression language of SPEC 3.

    expr := alt ("||" alt)*     the first alternative that is found
    alt  := ref ("&&" ref)*     all must be found; the value is the last one's
    ref  := "†" kind ("." segment)*
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import field
from functools import lru_cache
from typing import Any

from ._errors import ExpressionError
from ._records import record

DAGGER = "†"
_ESCAPED = DAGGER * 2  # `††text` is the literal `†text`
_STOP = frozenset(".|&")


@record
class Reference:
    """`†kind.seg.seg`: a kind and a path of segments; `start` is its offset in the source text."""

    kind: str
    path: tuple[str, ...]
    start: int = 0

    def __str__(self) -> str:
        return DAGGER + ".".join((self.kind, *self.path))


@record
class Expression:
    """Alternatives (`||`) of gates (`&&`) of references."""

    source: str
    alternatives: tuple[tuple[Reference, ...], ...]
    # Every reference, alternative after alternative (`every_reference`): made once, as expressions are read
    # again and again.
    references: tuple[Reference, ...] = field(repr=False, compare=False)

    def __str__(self) -> str:
        return " || ".join(" && ".join(str(ref) for ref in gate) for gate in self.alternatives)


def every_reference(alternatives: tuple[tuple[Reference, ...], ...]) -> tuple[Reference, ...]:
    """An expression's `references`: one alternative (the common case) is its own tuple of them."""
    return alternatives[0] if len(alternatives) == 1 else tuple(ref for gate in alternatives for ref in gate)


def is_expression(value: Any) -> bool:
    """A string that starts with `†` but not `††` (the escape of a literal dagger)."""
    return isinstance(value, str) and value.startswith(DAGGER) and not value.startswith(_ESCAPED)


def unescape(value: str) -> str:
    """`††text` is the literal `†text`."""
    return value[1:] if value.startswith(DAGGER * 2) else value


# One reference with nothing around it (`†state.user.name`), the common case: read in one match. Its
# segments are what `_Parser.segment` reads: anything but `.`, `|`, `&` and white space; a kind does not
# start with `†` (`_Parser.reference`).
_ONE_REFERENCE = re.compile(r"†([^.|&\s†][^.|&\s]*)((?:\.[^.|&\s]+)*)")


# A whole document's checks read each expression several times (its call's data check, the paths it
# writes, its plan, its instances): more distinct ones than the cache keeps from one reading to the next.
# Within `parsed_once()` every expression parsed is kept until it ends (per thread: a context variable).
_KEPT: ContextVar[dict[str, Expression] | None] = ContextVar("parsed_once", default=None)


@contextmanager
def parsed_once() -> Iterator[None]:
    """Within it, each expression text is parsed once (a check of a whole document)."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def parse_expression(source: str) -> Expression:
    """Parse `source`, or raise `ExpressionError` naming the position of the first problem."""
    kept = _KEPT.get()
    if kept is None:
        return _parsed(source)
    found = kept.get(source)
    if found is None:
        found = kept[source] = _parse(source)  # kept till `parsed_once` ends: not through the cache as well
    return found


def as_expression(expr: object) -> Expression:
    """`expr` parsed (a string) or as it is (an `Expression`); anything else is a TypeError saying what it got."""
    if isinstance(expr, str):
        return parse_expression(expr)
    if isinstance(expr, Expression):
        return expr
    raise TypeError(f"expected an expression (a string such as '†state.x', or an Expression), got "
                    f"{type(expr).__name__}")


def _parse(source: str) -> Expression:
    one = _ONE_REFERENCE.fullmatch(source)  # `lone_reference`, read here: a document has 100,000 expressions
    if one is not None:
        kind, path = one.groups()
        references = (Reference(sys.intern(kind), tuple(path[1:].split(".")) if path else ()),)
        return Expression(source, (references,), references)
    return _Parser(source).expression()


_parsed = lru_cache(maxsize=4096)(_parse)


def lone_reference(source: str) -> tuple[str, tuple[str, ...]] | None:
    """The kind and path of `source` when it is one reference with nothing around it (what `parse_expression`
    would give), else None: read in one match, without making the expression."""
    one = _ONE_REFERENCE.fullmatch(source)
    if one is None:
        return None
    path = one[2]
    return sys.intern(one[1]), tuple(path[1:].split(".")) if path else ()


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0

    def fail(self, reason: str, position: int | None = None) -> ExpressionError:
        return ExpressionError(self.source, self.pos if position is None else position, reason)

    def skip_space(self) -> None:
        while self.pos < len(self.source) and self.source[self.pos].isspace():
            self.pos += 1

    def operator(self) -> str | None:
        """Consume `||` or `&&` if next; refuse any other run of `|` or `&`."""
        self.skip_space()
        rest = self.source[self.pos :]
        for op in ("||", "&&"):
            if rest.startswith(op):
                if rest[2:3] in ("|", "&"):
                    raise self.fail(f"unexpected {rest[2]!r} after {op!r}", self.pos + 2)
                self.pos += 2
                return op
        if rest[:1] in ("|", "&"):
            raise self.fail(f"expected '{rest[0] * 2}', found a single {rest[0]!r}")
        return None

    def expression(self) -> Expression:
        alternatives: list[tuple[Reference, ...]] = []
        gate = [self.reference()]
        while True:
            op = self.operator()
            if op is None:
                break
            if op == "||":
                alternatives.append(tuple(gate))
                gate = []
            gate.append(self.reference())
        alternatives.append(tuple(gate))
        self.skip_space()
        if self.pos != len(self.source):
            raise self.fail(f"unexpected {self.source[self.pos]!r}")
        return Expression(self.source, tuple(alternatives), every_reference(tuple(alternatives)))

    def reference(self) -> Reference:
        self.skip_space()
        start = self.pos
        if self.pos >= len(self.source):
            raise self.fail("expected a reference starting with '†', found the end")
        if self.source[self.pos] != DAGGER:
            raise self.fail(f"expected a reference starting with '†', found {self.source[self.pos]!r}")
        self.pos += 1
        if self.source.startswith(DAGGER, self.pos):  # `††x` is the literal `†x` everywhere else (SPEC 3)
            raise self.fail("expected a kind after '†', found '†' ('††' escapes a literal '†')")
        kind = self.segment("a kind after '†'")
        path: list[str] = []
        while self.pos < len(self.source) and self.source[self.pos] == ".":
            self.pos += 1
            path.append(self.segment("a path segment after '.'"))
        return Reference(kind, tuple(path), start)

    def segment(self, what: str) -> str:
        start = self.pos
        source = self.source
        while self.pos < len(source) and source[self.pos] not in _STOP and not source[self.pos].isspace():
            self.pos += 1
        if self.pos == start:
            found = repr(source[self.pos]) if self.pos < len(source) else "the end"
            raise self.fail(f"expected {what}, found {found}")
        return source[start : self.pos]


# Where an expression sits in a value (keys and array indices), and its text.
Where = tuple[str | int, ...]
# Where a call's destination sits (within `parsed_once`, every call's is this one tuple).
OUTPUT_PATH: Where = ("_outputPath",)
# An expression a value holds: where it sits, its text, and what it parses to or why it does not.
Occurrence = tuple[Where, str, "Expression | ExpressionError"]


def is_read(where: Where) -> bool:
    """Whether a `†` string a call holds at `where` is an expression the call reads (SPEC 3, 6.8): one in a
    parameter (a key without `_`) or in its `_output`. Its `_outputPath` is a destination, and a `†` string in any
    other meta-property (`_reasoningForCall`, `_instance`) is its text."""
    key = where[0]
    return key == "_output" or not (isinstance(key, str) and key.startswith("_"))


def calls_reads(expressions: list[list[Occurrence]]) -> list[tuple[Occurrence, ...]]:
    """For each call's expressions (`calls_occurrences`), those it reads (`is_read`), malformed ones too."""
    # A call whose one expression is its output path reads nothing (most calls of a run): no loop for it.
    return [() if len(found) == 1 and found[0][0] == OUTPUT_PATH else tuple(each for each in found if is_read(each[0]))
            for found in expressions]


def find_expressions(value: Any, path: Where = ()) -> list[tuple[Where, str]]:
    """Every expression string in nested call parameters, with where it sits (in document order)."""
    found: list[tuple[Where, str]] = []
    if isinstance(value, dict | list):
        _find(value, path, found)
    elif is_expression(value):
        found.append((path, value))
    return found


def occurrences(value: Any) -> list[Occurrence]:
    """Every expression string in `value` (`find_expressions`), each parsed: its `Expression`, or the
    `ExpressionError` that says where it is malformed."""
    kept = _KEPT.get()
    if kept is None:
        return [(where, text, parsed_or_error(text)) for where, text in find_expressions(value)]
    if type(value) is not dict:
        return [(where, text, _kept_or_error(text, kept)) for where, text in find_expressions(value)]
    return _of_call(value, kept)


def calls_occurrences(calls: list[Any]) -> list[list[Occurrence]]:
    """`occurrences` of each of a plan's calls (none for a call that is no object), in one loop."""
    kept = _KEPT.get()
    if kept is None:
        return [occurrences(call) if isinstance(call, dict) else [] for call in calls]
    return [_of_call(call, kept) if type(call) is dict else occurrences(call) if isinstance(call, dict) else []
            for call in calls]


def _of_call(call: dict[str, Any], kept: dict[str, Expression]) -> list[Occurrence]:
    """`occurrences` of a call within `parsed_once` (a plan holds 100,000): its top-level strings read here,
    without a list of them first, each parsed at most once."""
    found: list[Occurrence] = []
    for key, item in call.items():
        if type(item) is str:
            if item.startswith(DAGGER) and not item.startswith(_ESCAPED):
                parsed: Expression | ExpressionError | None = kept.get(item)
                if parsed is None:
                    try:
                        parsed = kept[item] = _parse(item)
                    except ExpressionError as error:
                        parsed = error
                found.append((OUTPUT_PATH if key == "_outputPath" else (key,), item, parsed))
        elif isinstance(item, dict | list):
            found.extend((where, text, _kept_or_error(text, kept)) for where, text in find_expressions(item, (key,)))
    return found


def _kept_or_error(source: str, kept: dict[str, Expression]) -> Expression | ExpressionError:
    """`parsed_or_error(source)` within `parsed_once`, whose `kept` is in hand (100,000 calls are read)."""
    found = kept.get(source)
    if found is None:
        try:
            found = kept[source] = _parse(source)
        except ExpressionError as error:
            return error
    return found


def parsed_or_error(source: str) -> Expression | ExpressionError:
    """`parse_expression(source)`, or the error it raises."""
    try:
        return parse_expression(source)
    except ExpressionError as error:
        return error


def _find(value: dict[str, Any] | list[Any], path: Where, found: list[tuple[Where, str]]) -> None:
    # Every call of a plan is read this way several times: a leaf that is no expression costs no path.
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, str):
            if item.startswith(DAGGER) and not item.startswith(_ESCAPED):
                found.append(((*path, key), item))
        elif isinstance(item, dict | list):
            _find(item, (*path, key), found)
