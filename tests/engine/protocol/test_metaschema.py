"""The metaschema made one (`meets_metaschema`) gives jsonschema's own verdict on every schema, and a schema it
finds invalid is still said in `check_schema`'s words."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from contextdeck.engine import SchemaFault, schema_errors
from contextdeck.engine.protocol._metaschema import meets_metaschema

# Patterns `re` takes, and some it refuses (each a fault of the whole schema).
PATTERNS = st.sampled_from(["^a$", "[0-9]{4}", "(?<=a)b", "(", "a{2,1}", "(?<=a+)b", "\\p{L}", "*", "", "^[A-Z]-"])
NAMES = st.sampled_from(["a", "b", "c"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([0.5, -1.0, 2.0]),
                    st.sampled_from(["", "a", "string", "#", "#/$defs/a"]), PATTERNS)
ANY = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                   st.dictionaries(NAMES, inner, max_size=2)), max_leaves=4)
TYPES = st.sampled_from(["string", "object", "array", "integer", "null", "thing"])


def _keywords(inner: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """What each keyword usually holds (a fault now and then: a bad pattern, a type that is none)."""
    schemas = st.dictionaries(NAMES, inner, max_size=3)
    return {
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3, unique=True)),
        **dict.fromkeys(["properties", "$defs", "definitions", "dependentSchemas"], schemas),
        "patternProperties": st.dictionaries(PATTERNS, inner, max_size=3),
        **dict.fromkeys(["additionalProperties", "items", "not", "if", "then", "else", "propertyNames", "contains",
                         "unevaluatedProperties", "contentSchema"], inner),
        **dict.fromkeys(["allOf", "anyOf", "oneOf", "prefixItems"], st.lists(inner, min_size=1, max_size=3)),
        "required": st.lists(NAMES, max_size=3, unique=True),
        "pattern": PATTERNS,
        "enum": st.lists(SCALARS, max_size=3),
        "const": ANY,
        **dict.fromkeys(["minimum", "exclusiveMaximum", "multipleOf", "minLength", "maxItems", "minContains"],
                        st.integers(-1, 3)),
        "uniqueItems": st.booleans(),
        "dependencies": st.dictionaries(NAMES, st.one_of(inner, st.lists(NAMES, max_size=2, unique=True)),
                                        max_size=2),
        "dependentRequired": st.dictionaries(NAMES, st.lists(NAMES, max_size=2), max_size=2),
        "$ref": st.sampled_from(["#", "#/$defs/a"]),
        **dict.fromkeys(["$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"], st.sampled_from(["a", "b1", "1"])),
        "$vocabulary": st.dictionaries(st.sampled_from(["https://example.com/v", "v"]), st.booleans(), max_size=1),
        "format": st.sampled_from(["email", "regex"]),
        **dict.fromkeys(["title", "default", "examples", "x-own"], ANY),
        "deprecated": st.booleans(),
    }


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Objects of schema keywords, each holding what it usually holds, now and then anything."""
    keywords = _keywords(inner)
    return st.dictionaries(st.sampled_from(sorted(keywords)), ANY, max_size=4).flatmap(
        lambda drawn: st.fixed_dictionaries({key: st.one_of(keywords[key], keywords[key], keywords[key], st.just(value))
                                             for key, value in drawn.items()}))


SCHEMAS = st.recursive(st.one_of(st.booleans(), st.just({})), _schemas, max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(SCHEMAS)
def test_the_metaschema_made_one_gives_jsonschemas_verdict(schema: Any) -> None:
    """Valid by the one-piece metaschema exactly when draft 2020-12's own check, format checks included, finds no
    fault: the way `schema_errors` takes a schema is unchanged."""
    expected = next(Draft202012Validator(Draft202012Validator.META_SCHEMA,
                                         format_checker=Draft202012Validator.FORMAT_CHECKER).iter_errors(schema),
                    None) is None
    assert meets_metaschema(schema, Draft202012Validator) is expected


def test_a_fault_is_said_in_check_schemas_words_and_other_drafts_are_checked_as_before() -> None:
    """A schema the fast check refuses is checked again for the first fault's place and words; a draft whose
    metaschema is one already is not answered for (None), and is checked the usual way."""
    schema = {"properties": {f"p{n}": {"type": "string", "pattern": f"^{n}-"} for n in range(50)}}
    schema["properties"]["p7"]["pattern"] = "(?<=a+)b"
    with pytest.raises(SchemaFault, match=r"^invalid schema at #/properties/p7/pattern: '\(\?<=a\+\)b' is not a "
                                          "regular expression: look-behind requires fixed-width pattern$"):
        schema_errors(schema, {})
    assert meets_metaschema({"pattern": "("}, Draft7Validator) is None
    with pytest.raises(SchemaFault, match=r"^invalid schema at #/pattern: "):
        schema_errors({"$schema": "http://json-schema.org/draft-07/schema#", "pattern": "("}, "x")
