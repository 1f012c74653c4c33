"""Valid at a glance: for the JSON Schema keywords a tool's parameters are mostly written with (`type`,
`properties`, `required`, `additionalProperties`, `items`, `enum`, `const` and annotations), a plain-Python
test that a value breaks none of them.

jsonschema builds a validator object for every property it descends into, which made checking the
parameters of 100,000 calls cost more than reading the document. A glance answers only "valid": when it
cannot tell (another keyword, a `$ref`, a float where an integer may be, a number in an `enum`), or the
value breaks a rule, the validator judges and its errors are the ones reported. So a glance never changes
an answer; tests/engine/protocol/test_schema_glance.py holds it to jsonschema's over random schemas and values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

Glance = Callable[[Any], bool]

# Keywords that never make a value invalid: annotations, and what only a `$ref` (never read at a glance) uses.
_INERT: Final = frozenset(("title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
                           "writeOnly", "$id", "$defs", "definitions"))
# The drafts whose meaning of the keywords above is the same (draft 3's `required` is another thing).
_DRAFTS: Final = frozenset(
    uri + end for uri in ("http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-06/schema",
                          "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2019-09/schema",
                          "https://json-schema.org/draft/2020-12/schema") for end in ("", "#"))
_TYPES: Final[dict[str, Glance]] = {
    "string": lambda value: isinstance(value, str),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),  # 1.0: the drafts differ
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
}
# The Python types of each type name (a bool is an int to Python: `_type` tells them apart).
_KINDS: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,), "object": (dict,), "array": (list,), "boolean": (bool,), "null": (type(None),),
    "integer": (int,), "number": (int, float),
}
_EXACT: Final = (str, int, bool, type(None))  # `enum` and `const` members compared by type and value


def glance(schema: Any, formats: bool) -> Glance | None:
    """A test that a value is valid against `schema` (a schema its metaschema accepts), or None when the
    schema uses what a glance does not read. `formats`: `format` is checked (then it is not read either)."""
    try:
        return _glance(schema, formats, root=True)
    except RecursionError:
        return None


def _glance(schema: Any, formats: bool, root: bool = False) -> Glance | None:
    if isinstance(schema, bool):
        return _anything if schema else _nothing
    if not isinstance(schema, dict):
        return None
    checks: list[Glance] = []
    for key, rule in schema.items():
        if key in _INERT or key.startswith("_") or (key == "format" and not formats):
            continue  # no draft has a keyword that starts with `_`: jsonschema ignores them
        if key == "$schema":
            if not root or rule not in _DRAFTS:
                return None
            continue
        keyword = _KEYWORDS.get(key)
        check = keyword(rule, schema, formats) if keyword is not None else None
        if check is None:
            return None
        checks.append(check)
    return _object(schema, formats) or _every(checks)


def _object(schema: dict[str, Any], formats: bool) -> Glance | None:
    """The glance of an object with `properties` and `required` only (a tool's parameters, most often): one
    test, where `_every` would call one for each keyword (a run checks 100,000 calls' parameters)."""
    if schema.get("type") != "object" or not all(
            key in _OBJECT or key in _INERT or key.startswith("_") or (key == "format" and not formats)
            for key in schema):
        return None
    checks = _property_checks(schema.get("properties", {}), formats)
    required = schema.get("required", [])
    if checks is None or not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return None
    names = frozenset(required)

    def valid(value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        for name, check in checks:
            if name in value and not check(value[name]):
                return False
        return value.keys() >= names

    return valid


_OBJECT: Final = frozenset(("type", "properties", "required"))


def _every(checks: list[Glance]) -> Glance:
    """All of `checks` (a loop, not `all` over a generator: a glance is made for 100,000 values)."""
    if not checks:
        return _anything
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:
        for check in checks:  # noqa: SIM110 (a loop: `all` would make a generator for each value)
            if not check(value):
                return False
        return True

    return every


def _anything(value: Any) -> bool:
    return True


def _nothing(value: Any) -> bool:
    return False


def _type(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    names = [rule] if isinstance(rule, str) else rule if isinstance(rule, list) else None
    if not names or not all(isinstance(name, str) and name in _TYPES for name in names):
        return None
    if len(names) == 1:
        return _TYPES[names[0]]
    kinds = tuple({kind for name in names for kind in _KINDS[name]})
    if "boolean" in names:
        return lambda value: isinstance(value, kinds)
    return lambda value: isinstance(value, kinds) and type(value) is not bool  # a bool is an int to Python


def _property_checks(rule: Any, formats: bool) -> list[tuple[str, Glance]] | None:
    if not isinstance(rule, dict):
        return None
    checks: list[tuple[str, Glance]] = []
    for name, subschema in rule.items():
        check = _glance(subschema, formats)
        if check is None:
            return None
        checks.append((name, check))
    return checks


def _properties(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    checks = _property_checks(rule, formats)
    if checks is None:
        return None

    def properties(value: Any) -> bool:
        if isinstance(value, dict):
            for name, check in checks:
                if name in value and not check(value[name]):
                    return False
        return True

    return properties


def _required(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    if not isinstance(rule, list) or not all(isinstance(name, str) for name in rule):
        return None
    names = frozenset(rule)
    return lambda value: not isinstance(value, dict) or value.keys() >= names


def _additional(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    declared = schema.get("properties", {})
    check = _glance(rule, formats)
    if check is None or "patternProperties" in schema or not isinstance(declared, dict):
        return None
    return lambda value: not isinstance(value, dict) or all(
        check(item) for name, item in value.items() if name not in declared)


def _items(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    check = _glance(rule, formats)  # an array of schemas (items by position) is not read at a glance
    if check is None or "prefixItems" in schema or "additionalItems" in schema:
        return None
    return lambda value: not isinstance(value, list) or all(check(item) for item in value)


def _enum(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    if not isinstance(rule, list):
        return None
    members = [(type(member), member) for member in rule if isinstance(member, _EXACT)]
    return lambda value: any(kind is type(value) and member == value for kind, member in members)


def _const(rule: Any, schema: dict[str, Any], formats: bool) -> Glance | None:
    return _enum([rule], schema, formats)


_KEYWORDS: Final[dict[str, Callable[[Any, dict[str, Any], bool], Glance | None]]] = {
    "type": _type, "properties": _properties, "required": _required, "additionalProperties": _additional,
    "items": _items, "enum": _enum, "const": _const,
}
