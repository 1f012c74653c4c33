"""Checking against schemas: no `$ref` leaves the schema, a looping or missing one is a located problem, and a
pattern that backtracks without end is reported at its field within a deadline."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest

from contextdeck.engine import (
    Activities,
    Context,
    SchemaFault,
    pattern_problem,
    schema_errors,
    telling_large_schemas,
    validate,
)
from contextdeck.engine.protocol import _pattern_searches, _schemas
from loopback import CountingServer, counting_server, remote_document
from pattern_searches import Searches

EVIL = "^(a|a)+$"  # backtracks without end under `re` on "aaaa…!"
SLOW_TEXT = "a" * 40 + "!"


@pytest.fixture
def server() -> Iterator[CountingServer]:
    with counting_server() as running:
        yield running


def test_validate_never_fetches_a_remote_ref(server: CountingServer) -> None:
    """A `$ref` to a server in a data schema and in a tool schema: no request, and each is a problem naming it."""
    problems = validate(Context(remote_document(server.url)))
    assert server.hits == []
    reasons = "\n".join(str(problem) for problem in problems)
    assert f"$ref '{server.url}/data.json' cannot be resolved" in reasons
    assert f"$ref '{server.url}/tool.json' cannot be resolved" in reasons


def test_a_file_ref_is_not_read(tmp_path) -> None:
    """A `file:` reference is never opened: the schema it names is not applied."""
    (tmp_path / "s.json").write_text('{"type": "string"}')
    with pytest.raises(SchemaFault, match="never the network or a file"):
        schema_errors({"$ref": (tmp_path / "s.json").as_uri()}, 1)


@pytest.mark.parametrize(
    ("schema", "ref"),
    [({"$ref": "#"}, "#"),
     ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
      "#/$defs/a"),
     ({"properties": {"s": {"$ref": "#/properties/s"}}}, "#/properties/s")],
)
def test_a_looping_ref_is_a_problem_naming_it(schema: Any, ref: str) -> None:
    """A `$ref` that leads back to itself without descending into the value is refused, naming the ref."""
    with pytest.raises(SchemaFault) as caught:
        schema_errors(schema, {"s": 1})
    assert f"$ref {ref!r} refers back to itself" in str(caught.value)


@pytest.mark.parametrize(
    ("schema", "said"),
    [({"properties": {"id": {"type": "string", "pattern": "^A-[0-9{4}$"}}},
      "invalid schema at #/properties/id/pattern: '^A-[0-9{4}$' is not a regular expression: unterminated character "
      "set at position 3"),
     ({"items": {"properties": {"a/b": {"minimum": "one"}}}},
      "invalid schema at #/items/properties/a~1b/minimum: 'one' is not of type 'number'"),
     ({"type": "nonsense"}, "invalid schema at #/type: 'nonsense' is not valid under any of the given schemas")],
)
def test_an_invalid_schema_says_where_and_why(schema: Any, said: str) -> None:
    """A schema the metaschema refuses names the keyword (a JSON pointer into the schema) and, for a pattern, what
    `re` says of it: "'^A-[0-9{4}$' is not a 'regex'" named neither."""
    with pytest.raises(SchemaFault) as caught:
        schema_errors(schema, {})
    assert str(caught.value) == said
    assert pattern_problem("^A-[0-9{4}$") == "not a regular expression: unterminated character set at position 3"
    assert pattern_problem("^A-[0-9]{4}$") is None


def test_a_recursive_schema_that_descends_is_not_a_loop() -> None:
    """A tree schema refers to itself below a property: that is recursion into the value, checked as usual."""
    tree = {"type": "object", "properties": {"child": {"$ref": "#"}, "n": {"type": "integer"}}}
    (error,) = schema_errors(tree, {"child": {"child": {"n": "x"}}})
    assert list(error.absolute_path) == ["child", "child", "n"]


def test_a_missing_ref_in_a_data_schema_is_reported_at_its_message() -> None:
    """A pointer to nothing is one problem at the schema's message, naming the ref."""
    (problem,) = validate(Context([{"type": "user", "data": {"a": 1},
                                    "schema": {"properties": {"a": {"$ref": "#/$defs/nope"}}}}]))
    assert (problem.message_index, problem.path) == (0, "¶user")
    assert problem.reason == "$ref '#/$defs/nope' points to nothing in the schema"


@pytest.mark.parametrize(("schema", "reason"), [
    ({"$ref": "#nope"}, "$ref '#nope' points to nothing in the schema"),
    ({"properties": {"a": {"$ref": "#missingAnchor"}}}, "$ref '#missingAnchor' points to nothing in the schema"),
    ({"$id": "urn:x", "$ref": "urn:x#nope"}, "$ref 'urn:x#nope' points to nothing in the schema"),
    ({"$dynamicRef": "#nope"}, "$dynamicRef '#nope' points to nothing in the schema"),
])
def test_a_ref_to_a_missing_anchor_names_the_ref_as_written(schema, reason) -> None:
    """A `$ref` or `$dynamicRef` to an anchor the schema lacks is a reference to nothing like a pointer to nothing,
    named as the schema writes it: never referencing's text, which holds the whole schema."""
    (problem,) = validate(Context([{"type": "user", "data": {"a": 1}, "schema": schema}]))
    assert problem.reason == reason
    (problem,) = validate(Context([{"type": "tool", "tool": {"t": schema}}]))
    assert problem.reason == f"tool 't': its schema cannot be used: {reason}"


def test_a_ref_into_an_array_by_a_name_points_to_nothing() -> None:
    """A pointer whose step into an array is no number (`#/allOf/a`) is a `$ref` to nothing like any other, in a
    schema with `$id`s too (whose refs are looked up to be rewritten): said at its message, never an internal
    error (referencing raises ValueError there)."""
    schema = {"$id": "urn:x", "type": "object", "allOf": [{}], "properties": {"p": {"$ref": "#/allOf/a"}}}
    (problem,) = validate(Context([{"type": "tool", "tool": {"t": schema}}]))
    assert (problem.message_index, problem.reason) == (
        0, "tool 't': its schema cannot be used: $ref '#/allOf/a' points to nothing in the schema")
    assert _schemas.ref_targets({**schema, "$defs": {"d": {"$ref": "#/allOf/a"}}}) == {}


def test_a_looping_ref_in_a_tool_schema_is_reported_at_the_call() -> None:
    """A tool whose schema loops: the call's problem names the tool and the ref (it was a RecursionError)."""
    messages = [{"type": "tool", "tool": {"t": {"properties": {"s": {"$ref": "#/properties/s"}}}}},
                {"type": "state", "data": {}},
                {"type": "plan", "plan": [{"_tool": "t", "s": 1, "_outputPath": "†state.x"}]}]
    activities = Activities()
    activities.add(lambda call, tool, context: 1, "t")
    (problem,) = [p for p in validate(Context(messages), activities=activities) if p.severity == "error"]
    assert problem.message_index == 2
    assert "tool 't': its schema cannot be used: $ref '#/properties/s' refers back to itself" in problem.reason


def test_a_backtracking_pattern_is_reported_at_its_field() -> None:
    """A pattern that would backtrack for ever runs out of time and is reported at the value's path."""
    (problem,) = validate(Context([{"type": "user", "data": {"name": SLOW_TEXT},
                                    "schema": {"properties": {"name": {"pattern": EVIL}}}}]))
    assert (problem.message_index, problem.path) == (0, "¶user.name")
    assert problem.reason.startswith("the pattern took too long")
    assert EVIL in problem.reason


@pytest.mark.parametrize(
    "schema",
    [{"patternProperties": {EVIL: {"type": "string"}}},
     {"patternProperties": {EVIL: {}}, "additionalProperties": False},
     {"patternProperties": {EVIL: {}}, "unevaluatedProperties": False}],
)
def test_a_backtracking_property_pattern_is_reported(schema: dict[str, Any]) -> None:
    """Property-name patterns run under the same deadline (the keywords whose searches jsonschema makes)."""
    errors = schema_errors(schema, {SLOW_TEXT: 1})
    assert any(error.message.startswith("the pattern took too long") for error in errors)


class _JumpingClock:
    """Stands in for `time` in the schema module: the wall clock jumps a second at each reading, and a
    search's CPU time is `spent` (0: a quick search)."""

    def __init__(self, spent: float = 0.0) -> None:
        self.now = self.cpu = 0.0
        self.spent = spent

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now

    def thread_time(self) -> float:
        self.cpu += self.spent  # read before and after each search: each search spends `spent`
        return self.cpu


MANY_IDS = {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"}}


def test_a_large_valid_value_is_not_blamed_for_the_time_of_its_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the pattern searches spend the budget: a check whose other work is slow (here a wall clock that
    jumps a second between searches, as a large value on a loaded machine) finds its valid value valid."""
    monkeypatch.setattr(_pattern_searches, "time", _JumpingClock())
    monkeypatch.setattr(_pattern_searches, "_known", OrderedDict())  # (what this clock times is kept apart)
    assert schema_errors(MANY_IDS, [f"A-{i:04d}" for i in range(50)]) == []


def test_a_search_the_spent_budget_leaves_untried_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the searches have spent the budget, the next pattern is not tried, and its violation says that,
    not that this pattern was slow."""
    monkeypatch.setattr(_pattern_searches, "time", _JumpingClock(spent=_pattern_searches.PATTERN_BUDGET_S))
    monkeypatch.setattr(_pattern_searches, "_known", OrderedDict())
    errors = schema_errors(MANY_IDS, ["A-0001", "A-0002", "A-0003"])
    assert [error.path[0] for error in errors] == [1, 2]
    assert all(error.message.startswith("the pattern took too long: '^[A-Z]-[0-9]{4}$' was not tried against")
               for error in errors)


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> Searches:
    """The pattern searches made from here on, none kept from before."""
    return Searches().install(monkeypatch)


SLOW_CALLS = [
    {"type": "tool", "tool": {"check": {"type": "object", "properties": {"id": {"type": "string", "pattern": EVIL}}}}},
    {"type": "state", "data": {}},
    {"type": "plan", "plan": [{"_tool": "check", "id": SLOW_TEXT, "_outputPath": "†state.out"}] * 3},
]


def test_a_search_that_ran_out_of_time_is_searched_once(searches: Searches) -> None:
    """A pattern search that ran out of time is kept: the same search in another check (here three calls giving a
    tool the same literal value, then a second `validate`) is answered at once, and said as the first one."""
    first = [problem.reason for problem in validate(Context(SLOW_CALLS))]
    again = [problem.reason for problem in validate(Context(SLOW_CALLS))]
    assert searches.made == [(SLOW_TEXT, _pattern_searches.PATTERN_BUDGET_S)]
    assert len(first) == 3
    assert again == first
    assert all("the pattern took too long against 'aaaa" in reason and EVIL in reason for reason in first)


def test_a_kept_search_is_searched_again_with_more_time_than_it_had(searches: Searches) -> None:
    """A search that ran out of a shorter time than a check has is not taken as running out of this one."""
    with _pattern_searches.searching_apart():
        schema_errors({"pattern": EVIL}, SLOW_TEXT)  # tried for `SLOW_SEARCH_S` only
    errors = schema_errors({"pattern": EVIL}, SLOW_TEXT)
    assert searches.made == [(SLOW_TEXT, _pattern_searches.SLOW_SEARCH_S),
                             (SLOW_TEXT, _pattern_searches.PATTERN_BUDGET_S)]
    (error,) = errors
    assert error.message.startswith("the pattern took too long against")


def test_a_slow_search_is_left_to_be_searched_apart_then_answered_as_outside(searches: Searches) -> None:
    """Searching apart, a slow search is tried briefly, once per check however many values search it, and left:
    the check says the pattern is still being searched. Once `search_apart` searched it with the whole budget,
    the same check answers as a check outside would, without searching."""
    schema = {"type": "array", "items": {"pattern": EVIL}}
    with _pattern_searches.searching_apart() as left:
        provisional = schema_errors(schema, [SLOW_TEXT, SLOW_TEXT])
    assert left == {(EVIL, 0, SLOW_TEXT)}
    assert searches.made == [(SLOW_TEXT, _pattern_searches.SLOW_SEARCH_S)]
    assert [error.message.split(":")[0] for error in provisional] == [
        "the pattern is still being searched against 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"] * 2
    _pattern_searches.search_apart(left)
    with _pattern_searches.searching_apart() as left_again:
        answered = [error.message for error in schema_errors(schema, [SLOW_TEXT, SLOW_TEXT])]
    assert left_again == set()
    assert searches.made[1:] == [(SLOW_TEXT, _pattern_searches.PATTERN_BUDGET_S)]
    assert answered[0].startswith("the pattern took too long against")
    assert answered == [error.message for error in schema_errors(schema, [SLOW_TEXT, SLOW_TEXT])]


def test_a_search_under_way_apart_is_not_tried(searches: Searches) -> None:
    """A search `search_apart` has under way already is left to it without a try (the check is provisional)."""
    with _pattern_searches.searching_apart(searching={(EVIL, 0, SLOW_TEXT)}) as left:
        (error,) = schema_errors({"pattern": EVIL}, SLOW_TEXT)
    assert searches.made == []
    assert left == {(EVIL, 0, SLOW_TEXT)}
    assert error.message.startswith("the pattern is still being searched")


def test_a_quick_search_searching_apart_is_answered_at_once(searches: Searches) -> None:
    """Searching apart changes nothing for a pattern that answers quickly."""
    with _pattern_searches.searching_apart() as left:
        (error,) = schema_errors({"pattern": "^[a-z]+$"}, "ab1")
    assert left == set()
    assert error.message == "'ab1' does not match '^[a-z]+$'"


def test_patterns_keep_their_meaning() -> None:
    """Lookaround and backreferences (ECMA-262 has both) work as under `re`."""
    schema = {"properties": {"a": {"pattern": r"^(?=x)(\w)\1$"}}}
    assert schema_errors(schema, {"a": "xx"}) == []
    assert len(schema_errors(schema, {"a": "xy"})) == 1


def test_a_large_schema_is_told_before_its_check_once_and_only_to_who_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema whose text reaches `LARGE_SCHEMA_BYTES` is told about before its metaschema check, once (its
    validator is kept); a smaller one is not, nor one checked outside `telling_large_schemas`."""
    monkeypatch.setattr(_schemas, "LARGE_SCHEMA_BYTES", 2000)
    large = {"title": "told", "properties": {f"p{n}": {"type": "string", "pattern": f"^{n}"} for n in range(100)}}
    told: list[str] = []
    with telling_large_schemas(told.append):
        assert schema_errors(large, {"p1": "1"}) == []
        assert [error.message for error in schema_errors(large, {"p2": "x"})] == ["'x' does not match '^2'"]
        assert schema_errors({"title": "small"}, 1) == []
    assert told == ["checking a schema of 0.0 MiB against its metaschema first (a large schema takes a while)"]
    large["title"] = "not told"
    assert schema_errors(large, {}) == []
    assert len(told) == 1


def test_a_schema_of_a_dialect_jsonschema_does_not_know_is_read_as_2020_12() -> None:
    """A `$schema` naming no dialect jsonschema knows is read as 2020-12, as a schema without one: checked, and
    without jsonschema's warning that it will refuse such a schema one day (it would become an error there)."""
    import warnings

    import jsonschema

    schema = {"$schema": "https://example.com/my-dialect", "type": "object", "required": ["a"],
              "prefixItems": [{"type": "string"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [error.message for error in schema_errors(schema, {})] == ["'a' is a required property"]
        assert _schemas.validator_class(schema) is jsonschema.Draft202012Validator
