"""One frozen field descriptor per schema node, named after the JSON Schema keywords it carries.

`field_from_schema` normalises a schema node (resolving local `$ref`s with `referencing`), `field_from_value`
infers one from data when there is no schema. Widgets are then picked from the descriptor alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from functools import reduce
from typing import Any, Final

import regex
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .._summary import clipped

_ROOT_URI: Final = "urn:contextdeck:editor-schema"
_RECURSION: Final = 3  # how many times one `$ref` may nest inside itself before the form stops expanding it


class _Missing:
    """The absence of a keyword (distinct from a keyword whose value is null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


@dataclass(frozen=True)
class Field:
    """What the form needs to know about one schema node; attribute names follow the JSON Schema keywords."""

    type: tuple[str, ...] = ()  # the allowed JSON types other than "null"; () means any
    nullable: bool = False  # "null" was among the types
    title: str | None = None
    description: str | None = None
    default: Any = MISSING
    const: Any = MISSING
    enum: tuple[Any, ...] | None = None
    format: str | None = None
    pattern: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    multiple_of: float | None = None
    properties: tuple[tuple[str, Field], ...] = ()
    required: frozenset[str] = frozenset()
    pattern_properties: tuple[tuple[str, Field], ...] = ()  # schemas for the keys each pattern matches
    additional_properties: Field | None = None  # schema for keys not in `properties`, when one is given
    closed: bool = False  # `additionalProperties: false`: no keys beyond `properties`
    items: Field | None = None  # None: infer each item from its value
    prefix_items: tuple[Field, ...] = ()  # `prefixItems`: the first items' own schemas, `items` then for the rest
    one_of: tuple[Field, ...] = ()
    any_of: tuple[Field, ...] = ()
    read_only: bool = False
    inferred: bool = False  # made from data, not from a schema

    def property_field(self, name: str) -> Field | None:
        """The descriptor of the property `name`: listed, else of the first `patternProperties` pattern it matches,
        else `additionalProperties`; None when the schema does not describe it."""
        for key, field in self.properties:
            if key == name:
                return field
        for pattern, field in self.pattern_properties:
            if _matches(pattern, name):
                return field
        return self.additional_properties

    @property
    def branches(self) -> tuple[Field, ...]:
        """The alternatives of `oneOf`/`anyOf` (or of several types), empty when there is no choice."""
        if self.one_of or self.any_of:
            return self.one_of or self.any_of
        if len(self.type) > 1:
            return tuple(replace(self, type=(t,), nullable=False, title=t) for t in self.type)
        return ()

    @property
    def label(self) -> str:
        """A short human name for this node: its title, else its type."""
        if self.title:
            return self.title
        if self.const is not MISSING:
            return f"= {_short(self.const)}"
        if not self.type and self.nullable:
            return "null"
        return " | ".join(self.type) if self.type else "any"


PATTERN_TIMEOUT_S: Final = 0.05  # a key name is short; a pattern that takes longer is taken as no match


def _matches(pattern: str, name: str) -> bool:
    """Whether `pattern` finds `name`, as validation does, with a bound: this runs as the form is built."""
    try:
        return regex.search(pattern, name, timeout=PATTERN_TIMEOUT_S) is not None
    except (regex.error, TimeoutError):  # no regular expression (validation says so), or too slow
        return False


def branch_labels(branches: tuple[Field, ...]) -> list[str]:
    """The names of a choice's branches, told apart: two branches of one type without titles (`object`, `object`)
    are named by what tells their values apart, a property whose `const` (or single `enum` value) differs
    (`object: method = "card"`), else by their place (`object (option 2)`)."""
    plain = [branch.label if branch.label != "any" else f"option {i + 1}" for i, branch in enumerate(branches)]
    labels = []
    for i, label in enumerate(plain):
        same = [j for j, other in enumerate(plain) if other == label]
        told = _discriminator([branches[j] for j in same], same.index(i)) if len(same) > 1 else None
        labels.append(label if told is None else f"{label}: {told}" if told else f"{label} (option {i + 1})")
    return labels


def _fixed(field: Field) -> Any:
    """The one value a field allows (`const`, or an `enum` of one), else MISSING."""
    if field.const is not MISSING:
        return field.const
    return field.enum[0] if field.enum is not None and len(field.enum) == 1 else MISSING


def _discriminator(branches: list[Field], which: int) -> str:
    """`name = value` for the first property fixed to a different value in each of `branches`, for branch `which`."""
    for name, _ in branches[0].properties:
        values = [_fixed(branch.property_field(name) or Field()) for branch in branches]
        shown = [_short(value) for value in values if value is not MISSING]
        if len(shown) == len(branches) and len(set(shown)) == len(shown):
            return f"{name} = {shown[which]}"
    return ""


def _short(value: Any) -> str:
    return clipped(json.dumps(value, ensure_ascii=False), 23)


def bounds_text(field: Field) -> str:
    """The numeric bounds as a short phrase, e.g. `≥ 0, < 100`."""
    parts = []
    if field.minimum is not None:
        parts.append(f"≥ {field.minimum:g}")
    if field.exclusive_minimum is not None:
        parts.append(f"> {field.exclusive_minimum:g}")
    if field.maximum is not None:
        parts.append(f"≤ {field.maximum:g}")
    if field.exclusive_maximum is not None:
        parts.append(f"< {field.exclusive_maximum:g}")
    if field.multiple_of is not None:
        parts.append(f"multiple of {field.multiple_of:g}")
    return ", ".join(parts)


def describe_field(field: Field, required: bool) -> str:
    """The tooltip of a field: its description, then its constraints (bounds, pattern, format, required)."""
    parts = [
        field.description or "",
        bounds_text(field),
        f"pattern: {field.pattern}" if field.pattern else "",
        f"format: {field.format}" if field.format else "",
        "required" if required else "",
    ]
    return "\n".join(part for part in parts if part)


def _items(node: Mapping[str, Any], keyword: str) -> list[Any]:
    """The list under `keyword`; nothing when it is absent or not a list (validation reports the schema)."""
    value = node.get(keyword)
    return value if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Builder:
    """Walks a schema, following `$ref`s through a `referencing` resolver, cutting reference cycles."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        resource = Resource.from_contents(root, default_specification=DRAFT202012)
        self._resolver = Registry().with_resource(_ROOT_URI, resource).resolver(base_uri=_ROOT_URI)
        self._expanding: list[str] = []

    def build(self, node: Any) -> Field:
        if node is False:  # nothing is valid here: show what there is, read-only
            return Field(read_only=True)
        if not isinstance(node, Mapping):  # `true`, or junk where a schema should be: anything goes
            return Field()
        if "$ref" in node:
            return self._ref(node)
        return self._plain(node)

    def _ref(self, node: Mapping[str, Any]) -> Field:
        ref = str(node["$ref"])
        if self._expanding.count(ref) >= _RECURSION:  # a recursive schema: deeper levels are edited as raw JSON
            return Field(description=f"recursive reference {ref} (deeper levels as JSON)")
        try:
            target = self._resolver.lookup(ref).contents
        except Exception:  # Unresolvable, or a reference too malformed to parse: the form must still open
            return Field(description=f"unresolvable reference {ref}")
        if not isinstance(target, Mapping):
            return self.build(target)
        self._expanding.append(ref)
        try:
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return self.build(merged)
        finally:
            self._expanding.pop()

    def _plain(self, node: Mapping[str, Any]) -> Field:
        types = node.get("type", ())
        # a `type` of the wrong kind (a number, say) names no type: validation reports the schema
        types = (types,) if isinstance(types, str) else \
            tuple(t for t in types if isinstance(t, str)) if isinstance(types, list | tuple) else ()
        const = node.get("const", MISSING)
        enum = node.get("enum")
        if not types and const is not MISSING:
            types = (type_of(const),)
        if not types and isinstance(enum, list) and enum:
            types = tuple(dict.fromkeys(type_of(item) for item in enum))
        if not types and "properties" in node:
            types = ("object",)
        if not types and ("items" in node or "prefixItems" in node):
            types = ("array",)
        nullable = "null" in types or (isinstance(enum, list) and None in enum and len(enum) > 1)
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        patterns = node.get("patternProperties")
        items = node.get("items")
        own = _fold_null(
            Field(
                type=tuple(t for t in types if t != "null"),
                nullable=nullable,
                title=_text(node.get("title")),
                description=_text(node.get("description")),
                default=node.get("default", MISSING),
                const=const,
                enum=tuple(e for e in enum if not (nullable and e is None)) if isinstance(enum, list) else None,
                format=_text(node.get("format")),
                pattern=_text(node.get("pattern")),
                minimum=_number(node.get("minimum")),
                maximum=_number(node.get("maximum")),
                exclusive_minimum=_number(node.get("exclusiveMinimum")),
                exclusive_maximum=_number(node.get("exclusiveMaximum")),
                multiple_of=_number(node.get("multipleOf")),
                properties=tuple((str(k), self.build(v)) for k, v in properties.items())
                if isinstance(properties, Mapping)
                else (),
                required=frozenset(r for r in _items(node, "required") if isinstance(r, str)),
                pattern_properties=tuple((str(k), self.build(v)) for k, v in patterns.items())
                if isinstance(patterns, Mapping)
                else (),
                additional_properties=self.build(additional) if isinstance(additional, Mapping) else None,
                closed=additional is False,
                items=self.build(items) if isinstance(items, Mapping) else None,
                prefix_items=tuple(self.build(b) for b in _items(node, "prefixItems")),
                one_of=tuple(self.build(b) for b in _items(node, "oneOf") if isinstance(b, Mapping | bool)),
                any_of=tuple(self.build(b) for b in _items(node, "anyOf") if isinstance(b, Mapping | bool)),
                read_only=bool(node.get("readOnly", False)),
            )
        )
        # A value meets every `allOf` branch: the form shows what they describe together (validation checks each).
        together = reduce(_together, (self.build(b) for b in _items(node, "allOf") if isinstance(b, Mapping)), own)
        # `then` and `else` may ask for more properties, as the value makes `if` hold or not: the form offers them
        # (required or not, by what validation says once the value is there). An object that lists none of its own
        # takes any new key already, and stays so.
        if not together.properties:
            return together
        maybe = (self._maybe(node[key]) for key in ("then", "else") if isinstance(node.get(key), Mapping))
        return reduce(_offered, maybe, together)

    def _maybe(self, node: Mapping[str, Any]) -> Field:
        """A conditional branch: its properties, and the names it requires that it does not describe."""
        field = self.build(node)
        listed = {name for name, _ in field.properties}
        unlisted = sorted(name for name in field.required if name not in listed)
        return replace(field, properties=field.properties + tuple((name, Field()) for name in unlisted))


def _offered(field: Field, branch: Field) -> Field:
    """`field` with the properties a conditional branch may ask for, after its own, none of them required."""
    listed = {name for name, _ in field.properties}
    return replace(field, properties=field.properties + tuple(
        (name, sub) for name, sub in branch.properties if name not in listed))


_KEPT_TOGETHER: Final = frozenset({"properties", "required", "closed", "read_only", "inferred"})


def _together(field: Field, other: Field) -> Field:
    """`field` with what an `allOf` branch adds: its properties and required ones, and each keyword `field` leaves
    unsaid (its type, bounds, items, ...); where both say one, `field`'s is shown."""
    said = {f.name: getattr(other, f.name) for f in fields(Field) if f.name not in _KEPT_TOGETHER
            and getattr(field, f.name) == f.default and getattr(other, f.name) != f.default}
    listed = {name for name, _ in field.properties}
    return replace(
        field, **said,
        properties=field.properties + tuple((name, sub) for name, sub in other.properties if name not in listed),
        required=field.required | other.required,
        closed=field.closed or other.closed,
        read_only=field.read_only or other.read_only,
    )


_NULL: Final = Field(nullable=True)


def _fold_null(field: Field) -> Field:
    """`anyOf: [X, {type: null}]` (how pydantic writes Optional) is a nullable X, not a choice of two."""
    branches = field.one_of or field.any_of
    others = [b for b in branches if replace(b, title=None, description=None) != _NULL]
    if len(branches) < 2 or len(others) != 1 or field.type or field.properties:
        return field
    (other,) = others
    return replace(
        other,
        nullable=True,
        title=field.title or other.title,
        description=field.description or other.description,
        default=other.default if field.default is MISSING else field.default,
        read_only=field.read_only or other.read_only,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def type_of(value: Any) -> str:
    """The JSON type name of a decoded JSON value (`integer` for numbers written without a fraction)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def field_from_schema(schema: Mapping[str, Any]) -> Field:
    """The descriptor of a whole schema, its local `$ref`s (`#/$defs/...`) resolved."""
    return _Builder(schema).build(schema)


def field_from_value(value: Any) -> Field:
    """A descriptor inferred from data alone: each key and item gets the widget its value calls for."""
    kind = type_of(value)
    if kind == "object":
        return Field(
            type=("object",),
            properties=tuple((k, field_from_value(v)) for k, v in value.items()),
            required=frozenset(value),
            inferred=True,
        )
    if kind == "array":
        return Field(type=("array",), inferred=True)
    if kind == "null":
        return Field(inferred=True)
    return Field(type=(kind,), inferred=True)
