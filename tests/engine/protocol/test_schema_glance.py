"""A value valid at a glance is one jsonschema finds nothing wrong with: `schema_errors` skips the validator
only then, and everything else is still the validator's word."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine import schema_errors
from contextdeck.engine.protocol._glance import glance

NAMES = st.sampled_from(["a", "b", "c"])
TYPES = st.sampled_from(["string", "object", "array", "boolean", "null", "integer", "number"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False),
                    st.sampled_from(["", "a", "b"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(NAMES, inner, max_size=3)), max_leaves=8)


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The keywords a glance reads, and a few it does not (which leave the value to the validator)."""
    return st.fixed_dictionaries({}, optional={
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3, unique=True)),
        "properties": st.dictionaries(NAMES, inner, max_size=3),
        "required": st.lists(NAMES, max_size=3, unique=True),
        "additionalProperties": inner,
        "items": inner,
        "enum": st.lists(SCALARS, min_size=1, max_size=3),
        "const": SCALARS,
        "description": st.just("a note"),
        "format": st.just("email"),
        "_activity": st.just("lookup"),
        "minLength": st.integers(0, 2),
    })


SCHEMAS = st.recursive(st.one_of(st.booleans(), st.just({})), _schemas, max_leaves=6)
DRAFTS = st.sampled_from([None, "http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-07/schema#",
                          "https://json-schema.org/draft/2020-12/schema"])


@given(SCHEMAS, VALUES, DRAFTS, st.booleans())
def test_valid_at_a_glance_is_valid_to_jsonschema(schema: Any, value: Any, draft: str | None, formats: bool) -> None:
    """Whenever a glance says valid, jsonschema (of the schema's draft, formats checked or not) agrees."""
    if isinstance(schema, dict) and draft is not None:
        schema = {**schema, "$schema": draft}
    cls = jsonschema.validators.validator_for(schema) if isinstance(schema, dict) else jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return
    check = glance(schema, formats)
    if check is not None and check(value):
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER if formats else None)
        assert list(validator.iter_errors(value)) == []


def test_a_tool_schema_as_users_write_it_is_judged_at_a_glance() -> None:
    """The usual parameter schema (types, properties, required, enums, no extra keys) is read at a glance."""
    schema = {"type": "object", "description": "Look a key up", "required": ["key"], "additionalProperties": False,
              "properties": {"key": {"type": "string"}, "mode": {"enum": ["fast", "full"]},
                             "tags": {"type": "array", "items": {"type": "string"}}}}
    check = glance(schema, formats=False)
    assert check is not None
    assert check({"key": "k1", "mode": "fast", "tags": ["a"]})
    assert not check({"key": "k1", "other": 1})
    assert glance({**schema, "minLength": 1}, formats=False) is None  # not read at a glance: the validator's


def test_what_a_glance_does_not_pass_is_the_validators_word() -> None:
    """A value a glance cannot pass gets jsonschema's own errors, at their paths."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert [error.message for error in schema_errors(schema, {"n": "one"})] == ["'one' is not of type 'integer'"]
    assert [error.message for error in schema_errors(schema, {})] == ["'n' is a required property"]
    assert schema_errors(schema, {"n": 1.0}) == []  # a float left to the validator, which takes it (2020-12)
