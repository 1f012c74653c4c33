"""References and expressions (SPEC 3): grammar, errors with positions, escapes, nested parameters."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import (
    Context,
    ExpressionError,
    Reference,
    find_expressions,
    is_expression,
    parse_expression,
    unescape,
)
from contextdeck.engine.protocol._expressions import _parsed, _Parser, parsed_once


def shape(source: str) -> list[list[tuple[str, tuple[str, ...]]]]:
    return [[(r.kind, r.path) for r in gate] for gate in parse_expression(source).alternatives]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("†state", [[("state", ())]]),
        ("†state.user.name", [[("state", ("user", "name"))]]),
        ("†a||†b", [[("a", ())], [("b", ())]]),
        ("  †a   ||\t†b  ", [[("a", ())], [("b", ())]]),
        ("†a && †b", [[("a", ()), ("b", ())]]),
        ("†a && †b || †c", [[("a", ()), ("b", ())], [("c", ())]]),
        ("†a || †b && †c", [[("a", ())], [("b", ()), ("c", ())]]),
        ("†items.0.name", [[("items", ("0", "name"))]]),
        ("†état.ключ.名前-x_1", [[("état", ("ключ", "名前-x_1"))]]),
    ],
)
def test_grammar(source, expected) -> None:
    """Alternatives of gates of references; && binds tighter than ||; white space is optional."""
    assert shape(source) == expected


@pytest.mark.parametrize(
    ("source", "position"),
    [
        ("†", 1),
        ("†state.", 7),
        ("†state..a", 7),
        ("†a ||", 5),
        ("†a | †b", 3),
        ("†a &&& †b", 5),
        ("", 0),
        ("state.a", 0),
        ("†a †b", 3),
        ("†a || || †b", 6),
        ("†a &", 3),
        ("†a.b c", 5),
        ("††a", 1),
        ("†a || ††b", 7),
    ],
)
def test_malformed_expressions_name_the_position(source, position) -> None:
    """A malformed expression raises ExpressionError at the offending character."""
    with pytest.raises(ExpressionError) as caught:
        parse_expression(source)
    assert caught.value.position == position
    assert caught.value.expression == source
    assert f"at position {position}" in str(caught.value)


def test_reference_records_where_it_starts() -> None:
    """Each reference knows its offset in the source, for pointing at it."""
    refs = parse_expression("†a || †b.c").references
    assert [r.start for r in refs] == [0, 6]
    assert refs[1] == Reference("b", ("c",), 6)


def test_expression_prints_canonically() -> None:
    """str() gives the expression back with single spaces around operators."""
    assert str(parse_expression("†a.b||†c&&†d")) == "†a.b || †c && †d"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("†a", True), ("††a", False), ("a†", False), (" †a", False), (5, False), (None, False)],
)
def test_what_counts_as_an_expression(value, expected) -> None:
    """A parameter is an expression when it is a string starting with one †, not ††."""
    assert is_expression(value) is expected


def test_double_dagger_is_a_literal() -> None:
    """††text is the literal †text; other strings are left alone."""
    assert unescape("††state.a") == "†state.a"
    assert unescape("plain") == "plain"


def test_expressions_are_found_at_any_depth() -> None:
    """References in nested objects and arrays of call parameters are all found, with where they sit."""
    call = {
        "_tool": "t",
        "a": "†input.a",
        "b": {"c": ["x", {"d": "†state.d || †input.d"}], "e": "††literal"},
        "_outputPath": "†state.out",
    }
    assert list(find_expressions(call)) == [
        (("a",), "†input.a"),
        (("b", "c", 1, "d"), "†state.d || †input.d"),
        (("_outputPath",), "†state.out"),
    ]


CTX = Context(
    [
        {"type": "state", "data": {"user": {"name": "Alex", "nick": None}, "items": [10, {"id": 7}], "0": "key"}},
        {"type": "input", "input": {"userName": "Sam"}},
    ]
)


@pytest.mark.parametrize(
    ("expr", "found", "value"),
    [
        ("†state.user.nick", True, None),
        ("†state.items.1.id", True, 7),
        ("†state.items.2", False, None),
        ("†state.items.01", False, None),
        ("†state.items.-1", False, None),
        ("†state.items.¹", False, None),
        ("†state.0", True, "key"),
        ("†state.user.name.first", False, None),
        ("†input.userName", True, "Sam"),
        ("†nothing", False, None),
        ("†state.user.age || †input.userName", True, "Sam"),
        ("†state.user.name && †input.userName", True, "Sam"),
        ("†state.user.age && †input.userName", False, None),
        ("†state.x && †input.userName || †state.user.name", True, "Alex"),
    ],
)
def test_resolution_of_references(expr, found, value) -> None:
    """null is found; numeric segments index arrays from 0; || takes the first found; && needs all."""
    result = CTX.resolve(expr)
    assert (result.found, result.value) == (found, value)


def test_whole_kind_without_path() -> None:
    """†state with no path is the whole value of that kind."""
    assert CTX.resolve("†input").value == {"userName": "Sam"}


def test_not_found_names_the_first_missing_reference_of_each_alternative() -> None:
    """`missing` says which reference stopped each alternative."""
    result = CTX.resolve("†state.a && †state.b || †input.userName && †state.c")
    assert not result.found
    assert result.missing == ("†state.a", "†state.c")


def test_a_gate_takes_sources_from_all_its_references() -> None:
    """The sources of a && b are the messages of both references."""
    assert CTX.resolve("†state.user && †input.userName").sources == (0, 1)


def test_malformed_expression_raises_from_resolve() -> None:
    """resolve raises ExpressionError for a malformed expression (never for bad data)."""
    with pytest.raises(ExpressionError):
        CTX.resolve("†state..a")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["†", "state", "a", "é", "1", ".", "|", "&", " ", "\u2003", "\t", "††"]), max_size=10))
def test_one_reference_read_in_one_match_is_what_the_parser_reads(parts: list[str]) -> None:
    """`parse_expression` reads a lone reference in one regular-expression match: for any text it gives the
    parser's expression, or the parser's error at the same position."""
    source = "".join(parts)

    def parsed(parse: Any) -> Any:
        try:
            return parse(source)
        except ExpressionError as error:
            return (error.position, error.reason)

    assert parsed(_parsed.__wrapped__) == parsed(lambda text: _Parser(text).expression())


def test_within_parsed_once_each_text_is_parsed_once() -> None:
    """A check of a whole document reads more distinct expressions than the cache keeps: within
    `parsed_once` a text parsed before is given back, however many were parsed since."""
    many = [f"†state.k{index}" for index in range(6000)]
    with parsed_once():
        first = parse_expression(many[0])
        for text in many:
            parse_expression(text)
        assert parse_expression(many[0]) is first
    for text in many:
        parse_expression(text)
    assert parse_expression(many[0]) == first
    assert parse_expression(many[0]) is not first  # outside it, the cache forgot it
