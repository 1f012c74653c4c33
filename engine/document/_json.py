"""JSON in and out: orjson for speed, the standard library where orjson refuses valid JSON.

orjson keeps key order both ways and is several times faster than `json` on large documents, but it
reads integers beyond 64 bits as floats (or refuses them); those documents are still valid JSON, so the
standard library takes over. Every value `parse` returns can be written back by `dumps` unchanged:
nesting is capped at `MAX_DEPTH`, numbers too large for a double are refused, and so on.
"""

from __future__ import annotations

import gc
import json
import math
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from attrs import frozen

# orjson writes at most 254 levels; past that every recursive walk in Python (deep merge, the standard
# library's encoder, jsonschema) comes near the interpreter's recursion limit. Deeper is refused at load.
MAX_DEPTH = 254
BOM = b"\xef\xbb\xbf"


_building = 0  # parses and context builds under way, on any thread
_building_lock = threading.Lock()
_enabled_before = True


# A batch computation over a whole document (a command of the command line, a tick with no window to keep
# responsive) collects its young generation every this many allocations instead of CPython's 700: collections
# walking the same survivors again took about half of `validate`'s CPU at 100,000 messages and a fifth of a long
# run's. The older generations keep their counts.
BATCH_YOUNG = 50_000


@contextmanager
def batch_collector() -> Iterator[None]:
    """Within it, the young generation is collected every `BATCH_YOUNG` allocations (or less often, if it was
    already); the thresholds are given back after."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], BATCH_YOUNG), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


@contextmanager
def building() -> Iterator[None]:
    """The cyclic collector paused while a document is parsed or a context built from it.

    A million messages make tens of millions of objects, none of them garbage and none in a cycle, and
    CPython's counts run a full collection over all of them every time the heap grew by a quarter: about
    60 % of building a context (and 75 % of `json.loads`) at a million messages. Nothing is lost by not
    looking: what becomes garbage meanwhile is freed by reference counting or waits for the next collection.
    Builds on several threads share one pause; the collector is back (unless it was off before) when the
    last ends.
    """
    global _building, _enabled_before
    with _building_lock:
        if _building == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _building += 1
    try:
        yield
    finally:
        with _building_lock:
            _building -= 1
            if _building == 0 and _enabled_before:
                gc.enable()


@frozen
class JSONSyntaxError(ValueError):
    """Malformed JSON, with a 1-based line and column."""

    reason: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.reason} (line {self.line}, column {self.column})"


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


# orjson reads integers beyond 64 bits as floats, silently changing the value: such documents (a run of 19 or
# more digits that may be a number) go through the standard library. A run right after a quote is a string's own
# (OTLP's nanosecond timestamps): a number never follows a quote. Found by mapping digits to "0", the quote to
# itself and the rest to " ", then looking for a run after a space: several times faster than a regular expression.
_DIGITS_AND_QUOTES = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x22 if byte == 0x22 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def _has_long_digits(raw: bytes) -> bool:
    mapped = raw.translate(_DIGITS_AND_QUOTES)
    return b" " + _LONG_RUN in mapped or mapped.startswith(_LONG_RUN)


# Tokens that change nesting depth, strings skipped whole (only used to locate a depth error).
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class _NotJSON(Exception):
    def __init__(self, reason: str, literal: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.literal = literal


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; accepting them would make the document change on save.
    raise _NotJSON(f"{name} is not valid JSON", name)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _NotJSON(f"the number {literal[:40]} is too large for a double", literal)
    return value


# The standard library's decoder with the engine's rules (no NaN or Infinity, no float overflow). The GUI's
# stepwise loader decodes with this same object, so both read a document alike.
DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _stdlib_loads(decoded: str) -> Any:
    return DECODER.decode(decoded)


def nests_within(value: Any, outer: int) -> bool:
    """Whether `value`, under `outer` enclosing containers, passes the check `parse` makes on nesting.

    False also for what orjson cannot write (huge integers, lone surrogates): there `parse` decides.
    """
    wrapped = value
    for _ in range(outer):
        wrapped = [wrapped]
    try:
        orjson.dumps(wrapped)
    except orjson.JSONEncodeError:
        return False
    return True


# Python writes at most this many digits of an integer (`sys.get_int_max_str_digits`'s default), and `parse`
# reads no more: a larger integer could be neither saved nor opened again.
MAX_INT_DIGITS = 4300
# Where a message sits in the largest document shape (a saved request: {"context": [message]}).
MESSAGE_OUTER = 2


def unwritable(value: Any, outer: int = 0) -> tuple[tuple[str | int, ...], str] | None:
    """Where and why `dumps` could not write `value` back so that `parse` reads it again, under `outer`
    enclosing containers: a cycle, nesting past `MAX_DEPTH`, an integer of more than `MAX_INT_DIGITS` digits,
    NaN or an infinity, a key that is not a string, a value that is not JSON. None when it can be written."""
    wrapped = value
    for _ in range(outer):
        wrapped = [wrapped]
    try:
        written = orjson.dumps(wrapped)
    except (TypeError, orjson.JSONEncodeError):
        return _first_unwritable(value, outer)
    if b"null" in written:  # orjson writes NaN and infinities as null: the standard library's C encoder tells
        try:
            _STRICT.encode(value)
        except ValueError:
            return _first_unwritable(value, outer)
    return None


_STRICT = json.JSONEncoder(allow_nan=False, check_circular=False, ensure_ascii=False)
CYCLE = "the value contains itself (a cycle)"


def _first_unwritable(value: Any, outer: int) -> tuple[tuple[str | int, ...], str] | None:
    """The first problem `unwritable` describes, walking `value` without recursion."""
    stack: list[tuple[Any, tuple[str | int, ...], frozenset[int]]] = [(value, (), frozenset())]
    while stack:
        node, path, above = stack.pop()
        if isinstance(node, dict | list | tuple):
            if id(node) in above:
                return path, CYCLE
            if len(path) + 1 + outer > MAX_DEPTH:
                return path, f"nesting deeper than {MAX_DEPTH} levels"
            inside = above | {id(node)}
            if isinstance(node, dict):
                for key in node:
                    if not isinstance(key, str):
                        return path, f"a key that is not a string: {type(key).__name__}"
                children: list[tuple[str | int, Any]] = list(node.items())
            else:
                children = list(enumerate(node))
            stack.extend((child, (*path, key), inside) for key, child in reversed(children))
        elif isinstance(node, bool) or node is None or isinstance(node, str):
            continue
        elif isinstance(node, int):
            if node.bit_length() > _MAX_INT_BITS:
                return path, f"an integer of more than {MAX_INT_DIGITS} digits"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return path, f"{node} is not a JSON number"
        else:
            return path, f"{type(node).__name__} is not a JSON value"
    return None


_MAX_INT_BITS = int(MAX_INT_DIGITS * math.log2(10))


def parse(text: str | bytes) -> Any:
    """Parse one JSON value or raise `JSONSyntaxError` with line and column; never `RecursionError`.

    A UTF-8 byte order mark at the start is ignored (it is not part of the JSON value).
    """
    raw = text.encode("utf-8", errors="surrogatepass") if isinstance(text, str) else text
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as fast_error:
        decoded = raw.decode("utf-8", errors="replace")
        line, column = _position(decoded, fast_error.pos)
        message = str(fast_error).lower()
        if "recursion" in message or "depth" in message:
            raise _too_deep(decoded) from None
        if "utf-8" in message:
            raise not_utf8(raw) from None
        # orjson refuses some valid JSON (huge integers, lone surrogates): the standard library decides.
        value = _fallback(decoded, line, column)
    else:
        if _has_long_digits(raw):
            value = _fallback(raw.decode("utf-8"), 1, 1)
    _check_depth(value, raw)
    return value


def unclosed(text: str) -> bool:
    """Whether the text ends inside a string, an object or an array: what a cut-off file looks like. A closer that
    does not close the innermost opener (`[{"a": 1]`) is a mistake in the text, not an end that came early."""
    openers: list[str] = []
    in_string, escaped = False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            openers.append(char)
        elif char in "]}" and (not openers or openers.pop() != _OPENER[char]):
            return False
    return in_string or bool(openers)


_OPENER = {"]": "[", "}": "{"}


NOT_UTF8 = "not valid UTF-8"


LINES_BEFORE = "without this last line, the lines before it can be read"


def file_reason(error: JSONSyntaxError, text: bytes, *, last: bool = True, after: str = "") -> str:
    """A file's JSON text that does not parse, said as every reader of a file says it (a document, a dataset, a
    turn, a trace, a cassette, a tool registry), after the place `FILE:LINE:COLUMN`: the reason, and when `text`
    (the whole file, or its last piece: a JSON Lines line, one of several objects) is its end (`last`) and stops
    inside a string, an object or an array, that the file ends early (a byte that is not UTF-8 is what is wrong
    wherever it is); `after`: what comes before that piece and can be read without it (`LINES_BEFORE`)."""
    if not last or error.reason.startswith(NOT_UTF8) or not unclosed(text.decode("utf-8", errors="replace")):
        return error.reason
    rest = f"; {after}" if after else ""
    return f"{error.reason} (the file ends early: truncated?{rest})"


def not_utf8(raw: bytes) -> JSONSyntaxError:
    """Where the first byte that is not UTF-8 is (orjson reports position 0 whatever it is): its line, and
    its column counted in characters like every other column, then which byte it is."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        start = raw.rfind(b"\n", 0, error.start) + 1
        line = raw.count(b"\n", 0, error.start) + 1
        column = len(raw[start : error.start].decode("utf-8")) + 1
        # UTF-16's byte order mark: what Windows PowerShell's `>` and Notepad's "Unicode" write.
        utf16 = ": a UTF-16 text, save it as UTF-8" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        return JSONSyntaxError(f"{NOT_UTF8} (byte 0x{raw[error.start]:02x}){utf16}", line, column)
    return JSONSyntaxError(NOT_UTF8, 1, 1)  # orjson's own reading of it (a lone surrogate)


def _fallback(decoded: str, line: int, column: int) -> Any:
    try:
        return _stdlib_loads(decoded)
    except json.JSONDecodeError as error:
        raise JSONSyntaxError(error.msg, error.lineno, error.colno) from None
    except _NotJSON as error:
        offset = decoded.find(error.literal) if error.literal else -1
        where = _position(decoded, offset) if offset >= 0 else (line, column)
        raise JSONSyntaxError(error.reason, *where) from None
    except RecursionError:
        raise _too_deep(decoded) from None
    except ValueError as error:  # an integer with more digits than Python converts (4300)
        raise JSONSyntaxError(str(error).split(";")[0], line, column) from None


def _check_depth(value: Any, raw: bytes) -> None:
    """Refuse values nested deeper than `MAX_DEPTH`, naming where the limit is crossed."""
    if not isinstance(value, dict | list):
        return
    try:
        orjson.dumps(value)  # fast, and fails exactly when nesting passes orjson's limit
        return
    except orjson.JSONEncodeError as error:
        if "recursion" not in str(error).lower() and depth(value) <= MAX_DEPTH:
            return  # a huge integer or a lone surrogate: not a depth problem
    raise _too_deep(raw.decode("utf-8", errors="replace"))


def _too_deep(decoded: str) -> JSONSyntaxError:
    """The error for nesting past `MAX_DEPTH`, at the bracket that crosses it."""
    return JSONSyntaxError(f"nesting deeper than {MAX_DEPTH} levels", *crossing(decoded, MAX_DEPTH))


def crossing(decoded: str, limit: int) -> tuple[int, int]:
    """The line and column of the bracket that nests JSON text deeper than `limit` levels ((1, 1) when none does)."""
    level = 0
    for token in _TOKENS.finditer(decoded):
        char = token.group()
        if char in "[{":
            level += 1
            if level > limit:
                return _position(decoded, token.start())
        elif char in "]}":
            level -= 1
    return 1, 1


def depth(value: Any) -> int:
    """How many containers deep `value` is (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def dumps(value: Any, *, indent: bool = True) -> str:
    """Serialise with keys in their order; non-ASCII kept as is. Raises ValueError if it cannot."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        return orjson.dumps(value, option=option).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        pass
    # Integers beyond 64 bits, lone surrogates and the like: the standard library writes what it read.
    try:
        text = json.dumps(value, indent=2 if indent else None, ensure_ascii=False,
                          separators=None if indent else (",", ":"), allow_nan=False)
    except RecursionError:
        raise ValueError("nesting too deep to write") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be written as UTF-8; as a \u escape it is the same JSON string.
        text = json.dumps(value, indent=2 if indent else None, separators=None if indent else (",", ":"),
                          allow_nan=False)
    return text


# One dict per shape (its keys in order) whose table of keys the dicts `sharing_keys` makes share.
_SHAPES: dict[tuple[str, ...], dict[str, Any]] = {}
_MOST_SHAPES = 64
_SETTLE = 32  # objects of a shape's class made before its dict is taken (CPython shares at most 30 keys)


def sharing_keys(value: dict[str, Any]) -> dict[str, Any]:
    """`value` as a dict that shares its table of keys with every other of the same keys in the same order.

    CPython keeps one table of keys for the attribute dicts of a class's objects, and a copy of such a dict
    shares it too (key-sharing dictionaries, PEP 412): each holds only its values, about half the memory of a
    small dict of its own. A run writes thousands of outputs and audits with the same keys. The result is a dict like
    any other, equal to `value` and in the same order; an edit that breaks the shared order gives it a table of
    its own. Keys that are not all plain strings, and shapes past the first `_MOST_SHAPES`, are left as they are.
    """
    keys = tuple(value)
    shape = _SHAPES.get(keys)
    if shape is None:
        if len(_SHAPES) >= _MOST_SHAPES or not all(type(key) is str and not key.startswith("__") for key in keys):
            return value  # (`__class__` and the like name the object's own attributes, not its dict's)
        kind = type("Shape", (), {})
        for _ in range(_SETTLE):  # each object made leaves less room for more keys: the values shrink to fit
            holder = kind()
            for key in keys:
                setattr(holder, key, None)
        shape = _SHAPES[keys] = holder.__dict__
    shared = shape.copy()
    shared.update(value)
    return shared
