"""The data editor's field descriptors and widget table: schema nodes normalised, widgets picked by key."""

from __future__ import annotations

from typing import Any

import pytest

from contextdeck.gui._editor._field import MISSING, Field, field_from_schema, field_from_value
from contextdeck.gui._editor._widgets import default_value, pick_branch, widget_key


def test_keywords_become_descriptor_attributes() -> None:
    """Bounds, format, pattern, description and required are carried under their keyword names."""
    field = field_from_schema(
        {
            "type": "object",
            "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMaximum": 5, "description": "d"}},
            "required": ["n"],
        }
    )
    n = field.property_field("n")
    assert n == Field(type=("number",), minimum=0, exclusive_maximum=5, description="d")
    assert field.required == frozenset({"n"})


def test_local_refs_are_resolved() -> None:
    """`$ref: #/$defs/...` is replaced by the definition, sibling keywords kept."""
    field = field_from_schema(
        {"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s", "description": "x"}}}
    )
    assert field.property_field("a") == Field(type=("string",), description="x")


def test_recursive_refs_stop_at_the_cycle() -> None:
    """A self-referencing schema builds a finite descriptor; the recursion is edited as raw JSON."""
    field = field_from_schema(
        {
            "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}},
            "$ref": "#/$defs/node",
        }
    )
    levels = [field]
    while levels[-1].type and len(levels) < 10:
        child = levels[-1].property_field("child")
        assert child is not None
        levels.append(child)
    assert [level.type for level in levels] == [("object",)] * 3 + [()]
    assert "recursive" in (levels[-1].description or "")


def test_unresolvable_refs_become_raw_fields() -> None:
    """A `$ref` to nowhere gives an untyped field that says so."""
    field = field_from_schema({"properties": {"a": {"$ref": "#/$defs/missing"}}})
    a = field.property_field("a")
    assert a is not None
    assert a.type == ()
    assert "unresolvable" in (a.description or "")


def test_null_in_type_is_nullable() -> None:
    """`type: [x, "null"]` is a nullable x."""
    assert field_from_schema({"type": ["integer", "null"]}) == Field(type=("integer",), nullable=True)


def test_optional_written_as_any_of_is_nullable() -> None:
    """`anyOf: [X, {type: null}]` folds into a nullable X with the outer title and default."""
    field = field_from_schema({"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Nick", "default": None})
    assert field == Field(type=("string",), nullable=True, title="Nick", default=None)


def test_several_types_are_a_choice() -> None:
    """`type: [string, number]` offers one branch per type."""
    field = field_from_schema({"type": ["string", "number"]})
    assert [b.type for b in field.branches] == [("string",), ("number",)]


def test_inferred_fields_follow_the_data() -> None:
    """Without a schema, each value's JSON type names its field's type."""
    field = field_from_value({"a": 1, "b": [True], "c": None})
    assert field.inferred
    assert field.property_field("a") == Field(type=("integer",), inferred=True)
    assert field.property_field("b") == Field(type=("array",), inferred=True)
    assert field.property_field("c") == Field(inferred=True)


@pytest.mark.parametrize(
    ("schema", "value", "key"),
    [
        ({"type": "number"}, 3, "number"),
        ({"type": "integer"}, 3, "integer"),
        ({"type": "integer"}, 3.5, "raw"),
        ({"type": "integer"}, True, "raw"),
        ({"type": "string"}, None, "raw"),
        ({"type": "string"}, "a\nb", "text"),
        ({"type": "string", "format": "date-time"}, "2024-01-01T00:00:00Z", "date-time"),
        ({"type": "string", "format": "date-time"}, "yesterday", "string"),
        ({"const": 1}, 1, "const"),
        ({"const": 1}, 2, "raw"),
        ({"enum": [1, 2]}, 3, "enum"),
        ({}, {"a": 1}, "raw"),
        ({"type": ["string", "null"]}, None, "nullable"),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, 1, "choice"),
    ],
)
def test_widget_keys(schema: dict[str, Any], value: Any, key: str) -> None:
    """The table key follows the field and the value: a value that does not fit gets raw JSON."""
    assert widget_key(field_from_schema(schema), value) == key


def test_branches_are_picked_by_discriminator() -> None:
    """The branch whose const property matches the value wins, whatever the order."""
    field = field_from_schema(
        {
            "oneOf": [
                {"type": "object", "properties": {"k": {"const": "a"}}},
                {"type": "object", "properties": {"k": {"const": "b"}}},
            ]
        }
    )
    assert pick_branch(field, {"k": "b"}) == 1
    assert pick_branch(field, {"k": "a"}) == 0


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string"}, ""),
        ({"type": "integer", "default": 7}, 7),
        ({"enum": ["x", "y"]}, "x"),
        ({"const": {"a": 1}}, {"a": 1}),
        (
            {"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "string"}}, "required": ["a"]},
            {"a": False},
        ),
        ({"oneOf": [{"type": "array"}, {"type": "string"}]}, []),
        ({"type": ["null"]}, None),
    ],
)
def test_default_values(schema: dict[str, Any], value: Any) -> None:
    """A field added by the user starts from its default, const, first enum value, or an empty value."""
    assert default_value(field_from_schema(schema)) == value


def test_missing_is_not_null() -> None:
    """An absent keyword is told apart from a keyword whose value is null."""
    assert field_from_schema({"type": "string"}).default is MISSING
    assert field_from_schema({"type": "string", "default": None}).default is None
