"""Checking a value against a JSON Schema: the one way the engine, and through it `validate`, `run` and the
window, does it.

- **A `$ref` never leaves the schema.** The validator gets a `referencing` registry that holds only the
  schema itself and the drafts' metaschemas, with no retrieval: a remote (`http://…`) or file reference is
  unresolvable, never fetched. An unresolvable `$ref`, or one that loops back to itself, is a `SchemaFault`
  naming the reference, never a traceback.
- **A pattern has a deadline.** jsonschema matches `pattern`, `patternProperties` (and the property
  finders of `additionalProperties` and `unevaluatedProperties`) with `re`, which backtracks without end on
  a pattern such as `^(a|a)+$`. Those searches run through the `regex` package instead, with a timeout: one
  check of one value may spend `PATTERN_BUDGET_S` of CPU time in pattern searches (only the searches count,
  not the rest of the check nor compiling a pattern, so a large valid value with many matches is never
  blamed), and a search past it is reported as a violation at the value's path
  (`_pattern_searches.with_unanswered`), not a hang; a search the spent budget leaves untried says so. `regex`
  is a backtracking engine that reads `re`'s syntax (so every pattern means what it meant before) and keeps what
  ECMA-262 patterns may use and RE2 refuses (lookaround, backreferences). It also leaves the interpreter lock free
  while it matches, so a worker thread searching a slow pattern does not stall the window's event loop. A slow
  search is kept and answered at once when asked again, and a window's own checks leave one to a worker thread
  instead of waiting for it (`_pattern_searches`).
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import jsonschema
import orjson
import regex
from attrs import frozen
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry, Resource, Specification
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

from ._glance import Glance, glance
from ._metaschema import meets_metaschema
from ._pattern_searches import budget, with_unanswered
from ._values import type_name

# A schema's JSON text from which its check against its metaschema is a wait a user notices (`telling_large_schemas`).
LARGE_SCHEMA_BYTES: Final = 1 << 20


@frozen
class SchemaFault(ValueError):
    """A schema that cannot be used to check anything: invalid, an unresolvable or looping `$ref`, too deep."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def schema_errors(schema: Any, value: Any, *, formats: bool = False) -> list[ValidationError]:
    """Every way `value` breaks `schema` (each with its path), patterns bounded by their deadline.

    Raises `SchemaFault` when the schema itself cannot be used. `formats` checks `format` too (the drafts
    only annotate it by default).
    """
    schema = _as_object(schema)
    validator, valid = _validator(schema, formats)
    return _errors(schema, validator, valid, value)


@frozen
class SchemaCheck:
    """`schema_errors` against one schema, its validator found once (`schema_check`), for many values.
    `valid`: its glance (None: the validator judges every value), for a caller that only asks "valid?"."""

    schema: dict[str, Any]
    validator: Any
    valid: Glance | None

    def __call__(self, value: Any) -> list[ValidationError]:
        return _errors(self.schema, self.validator, self.valid, value)


def schema_check(schema: Any, *, formats: bool = False) -> SchemaCheck:
    """`schema_errors` against `schema`, its validator found once: for many values checked against one schema
    (`schema_errors` finds it by the schema's JSON text at each call). Raises `SchemaFault` as `schema_errors`
    does, when made (a schema that cannot be used) or when checking (a schema nested too deeply)."""
    schema = _as_object(schema)
    validator, valid = _validator(schema, formats)
    return SchemaCheck(schema, validator, valid)


def _errors(schema: dict[str, Any], validator: Any, valid: Glance | None, value: Any) -> list[ValidationError]:
    if valid is not None and valid(value):
        return []  # valid at a glance (`_glance`): the validator would find nothing
    with budget() as unanswered:
        try:
            found = list(validator.iter_errors(value))
        except Unresolvable as error:
            raise SchemaFault(_unresolvable(error)) from None
        except RecursionError:
            loop = looping_ref(schema)
            if loop is not None:
                raise SchemaFault(f"$ref {loop!r} refers back to itself: the schema never reaches a check") from None
            raise SchemaFault("the data or schema is nested too deeply to check") from None
        except (regex.error, re.error) as error:  # a pattern the metaschema's format check let through
            raise SchemaFault(f"invalid pattern: {error}") from None
    return with_unanswered(found, unanswered)


def first_error(schema: Any, value: Any) -> ValidationError | None:
    """The violation that says best what is wrong (jsonschema's `best_match`), None when `value` is valid."""
    found: ValidationError | None = best_match(schema_errors(schema, value))
    return found


def errors_by_key(check: SchemaCheck, value: dict[str, Any]) -> dict[str, list[ValidationError]]:
    """The violations of an object (a call's meta-properties) by a schema of objects (its tool's), by the key they
    are under, and those of the root's `required` under "". Raises `SchemaFault` as `check` does."""
    found: dict[str, list[ValidationError]] = {}
    for error in check(value):
        if error.absolute_path:
            found.setdefault(str(error.absolute_path[0]), []).append(error)
        elif error.validator is None:  # a `false` rule: jsonschema places its error at the root, with its value
            for key in [key for key, given in value.items() if given is error.instance][:1]:
                found.setdefault(key, []).append(error)
        elif error.validator == "required":
            found.setdefault("", []).append(error)
    return found


def _as_object(schema: Any) -> dict[str, Any]:
    if isinstance(schema, bool):  # JSON Schema's `true` accepts everything, `false` nothing
        return {} if schema else {"not": {}}
    if not isinstance(schema, dict):
        raise SchemaFault(f"invalid schema: expected an object, got {type_name(schema)}")
    return schema


def _validator(schema: dict[str, Any], formats: bool) -> tuple[Any, Glance | None]:
    """A validator of `schema`, checked against its metaschema, and its glance (None: the validator
    judges every value). The check costs far more than most validations, and the same schemas are asked
    about again and again (each turn, each call, each case of an experiment): validators are kept by the
    schema's JSON text, each built on its own copy of the schema, so a schema changed in place later is a
    new text, never a stale validator."""
    try:
        text = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # not plain JSON: checked as it is, every time
        return _checked_validator(schema, formats), None
    return _kept_validator(text, formats)


@functools.lru_cache(maxsize=512)
def _kept_validator(text: bytes, formats: bool) -> tuple[Any, Glance | None]:
    if len(text) >= LARGE_SCHEMA_BYTES and (tell := _TELL.get()) is not None:
        tell(f"checking a schema of {len(text) / (1 << 20):.1f} MiB against its metaschema first (a large "
                   "schema takes a while)")
    schema = orjson.loads(text)
    return _checked_validator(schema, formats), glance(schema, formats)


_TELL: ContextVar[Callable[[str], None] | None] = ContextVar("_TELL", default=None)


@contextmanager
def telling_large_schemas(tell: Callable[[str], None]) -> Iterator[None]:
    """While inside, `tell` is given a sentence before a schema large enough to take seconds is checked against its
    metaschema (once per schema: its validator is kept), so that whoever waits for it is told why (the command
    line says it on stderr)."""
    token = _TELL.set(tell)
    try:
        yield
    finally:
        _TELL.reset(token)


def _checked_validator(schema: dict[str, Any], formats: bool) -> Any:
    cls = validator_class(schema)
    try:
        if not meets_metaschema(schema, cls):  # a draft it does not answer for, or a fault to find and say
            cls.check_schema(schema)
    except SchemaError as error:
        raise SchemaFault(_invalid(error)) from None
    except RecursionError:
        raise SchemaFault("the schema is nested too deeply to check") from None
    dangling = dangling_ref(schema, cls)
    if dangling is not None:
        raise SchemaFault(dangling)
    # An empty registry: only the schema and the metaschemas jsonschema adds; nothing is ever retrieved.
    return cls(schema, registry=_OFFLINE, format_checker=cls.FORMAT_CHECKER if formats else None)


_OFFLINE: Final[Registry[Any]] = Registry()


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be a schema's `pattern` (the check every schema gets says it), or None."""
    try:
        re.compile(pattern)
    except re.error as error:
        return f"not a regular expression: {error}"
    return None


def validator_class(schema: dict[str, Any]) -> Any:
    """The validator of `schema`'s dialect (its `$schema`; 2020-12 without one, and with one jsonschema does not know,
    which it reads so too, but with a warning that it will refuse it one day). A `$schema` that is no string names
    none: 2020-12's, whose metaschema check says what is wrong with it (jsonschema's own lookup raises there)."""
    if not isinstance(schema.get("$schema", ""), str):
        schema = {key: value for key, value in schema.items() if key != "$schema"}
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def unknown_dialect(schema: Any) -> str | None:
    """Why a schema's `$schema` is worth a warning: a URI naming no dialect jsonschema knows (a typo of a known one, a
    dialect of one's own), which is read as 2020-12 (`validator_class`) with keywords its author may mean otherwise;
    else None."""
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    unknown = Specification.OPAQUE  # (referencing's dialects are jsonschema's)
    if not isinstance(declared, str) or specification_with(declared, default=unknown) is not unknown:
        return None
    return f"$schema {declared!r} names no JSON Schema dialect known here: the schema is read as draft 2020-12"


def _invalid(error: SchemaError) -> str:
    """A schema's fault where it is (a JSON pointer into the schema) and why: a pattern's says what `re` says of it,
    not only that it is "not a 'regex'"."""
    where = "".join(f"/{str(step).replace('~', '~0').replace('/', '~1')}" for step in error.path)
    what = error.message
    if error.validator == "format" and error.validator_value == "regex" and isinstance(error.instance, str):
        what = f"{error.instance!r} is {pattern_problem(error.instance) or 'not a regular expression'}"
    return f"invalid schema at #{where}: {what}" if where else f"invalid schema: {what}"


def dangling_ref(schema: dict[str, Any], cls: Any) -> str | None:
    """What is wrong with the first `$ref` (or `$dynamicRef`, which the validator looks up alike) a validator of
    `schema` (of validator class `cls`) could follow that leads nowhere, or None. Found before any value is checked,
    so that a schema is unusable for every value, not only for those that reach the `$ref` (a call whose parameter
    is a reference is told before it runs). A `$ref` only inside `$defs` or `definitions` that no reachable `$ref`
    points to is never followed."""
    specification = specification_with(cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
                                       default=Specification.OPAQUE)
    registry = SPECIFICATIONS.combine(_OFFLINE)
    seen: set[int] = set()
    stack = [(schema, registry.resolver_with_root(specification.create_resource(schema)))]
    while stack:
        node, resolver = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        resource = specification.create_resource(node)
        resolver = resolver.in_subresource(resource)
        for keyword in _REFERENCES:
            ref = node.get(keyword)
            if isinstance(ref, str) and keyword in cls.VALIDATORS:
                try:
                    found = lookup(resolver, ref)
                except Unresolvable as error:
                    return _unresolvable(error, ref, keyword)
                stack.append((found.contents, found.resolver))
        kept = [node.get(key) for key in ("$defs", "definitions")]
        defined = {id(item) for each in kept if isinstance(each, dict) for item in each.values()}
        stack.extend((sub.contents, resolver) for sub in reversed(list(resource.subresources()))
                     if id(sub.contents) not in defined)
    return None


_REFERENCES: Final = ("$ref", "$dynamicRef")


def identifying(schema: Any) -> tuple[str, ...]:
    """The keywords by which `schema`'s dialect (its `$schema`, as `ref_targets` reads it) says where a `$ref` is read
    from: draft-03's and draft-04's `id`, a later draft's `$id` and `$anchor`."""
    legacy = isinstance(schema, dict) and validator_class(schema) in _LEGACY
    return ("id",) if legacy else ("$id", "$anchor")


_LEGACY: Final = (jsonschema.Draft3Validator, jsonschema.Draft4Validator)


def ref_targets(schema: Any) -> dict[int, tuple[str, ...] | bool]:
    """Where each `$ref` of `schema` that leads into `schema` itself leads, as a validator of it would follow it:
    by the `id` of the object holding the `$ref`, the JSON pointer's steps from the root to its target (an object).
    A `$ref` is read against the `$id`s above it and may name an `$anchor` (a schema embedded into another, whose
    root is elsewhere, cannot say either: its `$ref`s are rewritten to these pointers, `request/hoisted`). A `$ref`
    to a boolean schema is given that boolean instead: it has no identity to be found by, so its rewriter points
    at a copy of it. A `$ref` that leads nowhere or out of the schema is left out."""
    if not isinstance(schema, dict):
        return {}
    cls: Any = validator_class(schema)
    specification = specification_with(cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
                                       default=Specification.OPAQUE)
    steps_of: dict[int, tuple[str, ...]] = {}
    holders: list[tuple[dict[str, Any], Any]] = []

    def walk(node: Any, steps: tuple[str, ...], resolver: Any, names: bool) -> None:
        if isinstance(node, dict) and not names:
            steps_of.setdefault(id(node), steps)
            # an identifier that is no string (data under a keyword no dialect has) scopes nothing
            with contextlib.suppress(AttributeError, TypeError):
                resolver = resolver.in_subresource(specification.create_resource(node))
            if isinstance(node.get("$ref"), str):
                holders.append((node, resolver))
        for key, value, named in inside_schema(node, names):
            walk(value, (*steps, key), resolver, named)

    root, registry = specification.create_resource(schema), SPECIFICATIONS.combine(_OFFLINE)
    try:
        resolver = registry.resolver_with_root(root)
    except AttributeError:  # a root `$id` that is no string (the metaschema check refuses it): no URI of its own
        resolver = registry.with_resource("", root).resolver()
    try:
        walk(schema, (), resolver, False)
    except RecursionError:
        return {}  # too deep to check at all: refused where it is checked
    found: dict[int, tuple[str, ...] | bool] = {}
    for node, resolver in holders:
        try:
            target = lookup(resolver, node["$ref"]).contents
        except (Unresolvable, RecursionError):
            continue
        if isinstance(target, dict) and id(target) in steps_of:
            found[id(node)] = steps_of[id(target)]
        elif isinstance(target, bool):
            found[id(node)] = target
    return found


def inside_schema(node: Any, names: bool = False) -> Iterator[tuple[str, Any, bool]]:
    """What a walk of a schema goes into from `node` (a schema, or with `names` an object of named schemas, or a
    list of schemas): each member that holds schemas, by its key or index, with whether its own keys are names.
    The one rule every schema walk here follows: `const` and the like hold values, never schemas; under
    `properties` and the like every value is a schema, whatever its key."""
    if isinstance(node, list):
        yield from ((str(number), value, False) for number, value in enumerate(node))
    elif isinstance(node, dict):
        yield from ((key, value, not names and key in SCHEMA_NAMED) for key, value in node.items()
                    if names or key not in SCHEMA_DATA)


# In these a schema's keys are values, never schemas; in these, keys are names and every value is a schema.
SCHEMA_DATA: Final = ("const", "enum", "default", "examples")
SCHEMA_NAMED: Final = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies",
                        "dependentRequired")


def lookup(resolver: Any, ref: str) -> Any:
    """`resolver.lookup(ref)`, where referencing's own faults on a schema it does not expect are `Unresolvable`, as
    any `$ref` to nothing is: a pointer's step into an array that is no number (`#/allOf/a`: ValueError); in a schema
    the metaschema check refuses (and says why), an `$anchor` that is no string (TypeError), `$defs` or `properties`
    that are no object (AttributeError, met while looking for an anchor)."""
    try:
        return resolver.lookup(ref)
    except (ValueError, TypeError, AttributeError):
        raise Unresolvable(ref=ref) from None


def _unresolvable(error: Unresolvable, written: str | None = None, keyword: str = "$ref") -> str:
    """What a reference that leads nowhere says, naming it as `written` when the caller knows it. Never the error's
    own text: referencing's for an anchor holds the whole schema."""
    anchor = getattr(error, "anchor", None)  # a missing or malformed anchor (jsonschema may wrap the error)
    ref = written or (f"#{anchor}" if isinstance(anchor, str) else str(getattr(error, "ref", None) or error))
    if ref.startswith("/"):  # a JSON pointer that leads nowhere is reported without its '#'
        ref = f"#{ref}"
    if ref.startswith("#") or anchor is not None:  # an anchor's resource was found: it is inside the schema
        return f"{keyword} {ref!r} points to nothing in the schema"
    return (f"{keyword} {ref!r} cannot be resolved: only references inside the schema are followed, "
            "never the network or a file")


# -- loops -----------------------------------------------------------------------------------------

_IN_PLACE: Final = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE: Final = ("not", "if", "then", "else")


def looping_ref(schema: Any) -> str | None:
    """The first `$ref` that leads back to a schema it came from without descending into the value (so a
    validator would follow it forever), or None."""
    if not isinstance(schema, dict):
        return None
    root = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = Registry().resolver_with_root(root)
    for node in _subschemas(schema):
        found = _loop_from(node, resolver)
        if found is not None:
            return found
    return None


def _subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _loop_from(start: dict[str, Any], resolver: Any) -> str | None:
    on_path: set[int] = set()
    stack: list[tuple[Any, Any, bool]] = [(start, resolver, False)]
    while stack:
        node, here, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            continue
        on_path.add(id(node))
        stack.append((node, here, True))
        for ref, target, there in _in_place(node, here):
            if id(target) in on_path:
                return ref
            stack.append((target, there, False))
    return None


def _in_place(node: dict[str, Any], resolver: Any) -> Iterator[tuple[str | None, Any, Any]]:
    """The subschemas applied to the same value as `node` (a `$ref`'s target with the ref that reaches it)."""
    ref = node.get("$ref")
    if isinstance(ref, str):
        try:
            resolved = lookup(resolver, ref)
        except Unresolvable:
            pass
        else:
            if isinstance(resolved.contents, dict):
                yield ref, resolved.contents, resolved.resolver
    for key in _IN_PLACE:
        items = node.get(key)
        if isinstance(items, list):
            yield from ((None, item, resolver) for item in items if isinstance(item, dict))
    for key in _IN_PLACE_ONE:
        item = node.get(key)
        if isinstance(item, dict):
            yield None, item, resolver
