"""Typed activities: annotations (pydantic models or plain types) are the tool schema and validate every call."""

from typing import Annotated

import pytest
from exec_support import execute
from pydantic import BaseModel, Field

from contextdeck.engine import Activities, Activity, Status, activity


class Address(BaseModel):
    city: str


class Customer(BaseModel):
    """A customer to greet."""

    name: str = Field(description="the customer's name")
    address: Address


class Greeting(BaseModel):
    text: str
    length: int


def greet(customer: Customer) -> Greeting:
    """Greet a customer by name."""
    text = f"Hello, {customer.name} from {customer.address.city}"
    return Greeting(text=text, length=len(text))


def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


def test_a_model_of_the_parameters_is_the_tool_schema() -> None:
    """Parameters from the model (nested models written in place), description from the docstring, `_output`
    from the return type; pydantic's titles are left out."""
    schema = Activity("greet", greet).schema
    assert schema == {
        "type": "object",
        "description": "Greet a customer by name.",
        "properties": {
            "name": {"type": "string", "description": "the customer's name"},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "_output": {"type": "object", "properties": {"text": {"type": "string"}, "length": {"type": "integer"}},
                        "required": ["text", "length"]},
        },
        "required": ["name", "address"],
    }


def test_plain_annotated_parameters_are_taken_by_name() -> None:
    """`add(a: int, b: int = 0) -> int`: the call's parameters by name, defaults kept, `_output` an integer."""
    entry = Activity("add", add)
    assert entry.schema == {"type": "object", "description": "Add two integers.",
                            "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 0},
                                           "_output": {"type": "integer"}}, "required": ["a"]}
    assert entry.fn({"_tool": "add", "a": 2, "b": 3, "_outputPath": "†state.sum"}, None, []) == 5


def test_a_model_beside_other_annotated_parameters_is_one_parameter_among_them() -> None:
    """`place(customer: Customer, priority: int = 1)`: every parameter is the call's, by name (the model one a
    nested object); the model form `(params: Model, [tool, [context]])` is only for what takes tool and context,
    else `priority` was left out of the schema and handed the tool."""

    def place(customer: Customer, priority: int = 1) -> str:
        return f"{customer.name}:{priority}"

    entry = Activity("place", place)
    assert entry.schema["properties"]["customer"]["properties"]["address"]["required"] == ["city"]
    assert entry.schema["properties"]["priority"] == {"type": "integer", "default": 1}
    assert entry.schema["required"] == ["customer"]
    call = {"_tool": "place", "customer": {"name": "Maya", "address": {"city": "Oslo"}}, "priority": 3}
    assert entry.fn(call, {"tool": "a tool"}, []) == "Maya:3"
    assert entry.fn({**call, "priority": 1}, None, []) == "Maya:1"

    def greet_with(customer: Customer, tool, context) -> str:
        return f"{customer.name}:{tool['tool']}:{context}"

    assert Activity("g", greet_with).fn({"name": "Ann", "address": {"city": "Rome"}}, {"tool": "t"}, []) == "Ann:t:[]"


def test_annotated_constraints_and_descriptions_are_the_schemas_and_are_checked() -> None:
    """`Annotated[int, Field(ge=0, description=...)]`, pydantic's way to describe a parameter, keeps its
    description and bounds in the schema, and a call or a result outside them fails."""

    def dose(mg: Annotated[int, Field(ge=0, le=10, description="milligrams")]) -> Annotated[int, Field(ge=0)]:
        return mg - 5

    entry = Activity("dose", dose)
    assert entry.schema["properties"]["mg"] == {"type": "integer", "minimum": 0, "maximum": 10,
                                                "description": "milligrams"}
    assert entry.schema["properties"]["_output"] == {"type": "integer", "minimum": 0}
    assert entry.fn({"_tool": "dose", "mg": 7}, None, []) == 2
    with pytest.raises(ValueError, match=r"\$\.mg: Input should be less than or equal to 10"):
        entry.fn({"_tool": "dose", "mg": 11}, None, [])
    with pytest.raises(ValueError, match=r"the result of 'dose' does not meet its return type: \$: Input should be "
                                         r"greater than or equal to 0"):
        entry.fn({"_tool": "dose", "mg": 1}, None, [])


def test_a_parameter_named_with_an_underscore_is_refused_when_registered() -> None:
    """A call's `_` keys are its metadata, never parameters: `f(_token: str, x: int)` could never be given its
    `_token` (and pydantic left it out of the schema), so it is refused, named, when registered."""

    def f(_token: str, x: int) -> int:
        return x

    with pytest.raises(TypeError, match=r"activity 'f': its annotations cannot be a tool schema: parameter "
                                        r"'_token' starts with '_'"):
        Activities().add(f, "f")


def test_a_classic_activity_has_no_schema_and_is_called_as_before() -> None:
    """`fn(call, tool, context)` without annotations is left as it is."""

    def classic(call, tool, context):
        return call["x"]

    entry = Activity("classic", classic)
    assert (entry.schema, entry.fn) == (None, classic)


def test_a_run_writes_the_models_json_and_refuses_bad_parameters() -> None:
    """The returned model is written as JSON; parameters that break the annotations fail the call (`parameters`)."""
    acts = Activities()
    acts.add(greet, "greet")
    call = {"_tool": "greet", "name": "Maya", "address": {"city": "Oslo"}, "_outputPath": "†state.greeting"}
    context, _, _ = execute([], [call], acts)
    assert context.resolve("†state.greeting").value == {"text": "Hello, Maya from Oslo", "length": 21}
    context, execution, _ = execute([], [{**call, "address": {"town": "Oslo"}}], acts)
    assert execution.state(0).status is Status.FAILED
    assert execution.state(0).error == {
        "type": "parameters", "message": "invalid parameters for 'greet': $.address.city: Field required"}


def test_a_result_that_breaks_the_return_type_is_an_output_error() -> None:
    """A typed activity whose result does not meet its return type fails with an `output` error, not data."""
    acts = Activities()

    @activity("count")
    async def count(text: str) -> int:
        return "many"  # type: ignore[return-value]

    acts.add(count)
    context, execution, _ = execute([], [{"_tool": "count", "text": "abc", "_outputPath": "†state.n"}], acts)
    assert context.resolve("†state.n").found is False
    error = execution.state(0).error
    assert error["type"] == "output"
    assert "the result of 'count' does not meet its return type: $: Input should be a valid integer" in error["message"]


def test_a_value_returned_by_a_function_annotated_none_is_an_output_error() -> None:
    """`-> None` is a return type like any other: a function so annotated that returns a value fails its call
    with an `output` error naming the activity, not a write of the value; returning None stays fine."""
    acts = Activities()

    @activity("note")
    def note(text: str) -> None:
        return 5 if text == "bad" else None  # type: ignore[return-value]

    acts.add(note)
    context, execution, _ = execute([], [{"_tool": "note", "text": "bad", "_outputPath": "†state.n"}], acts)
    assert context.resolve("†state.n").found is False
    assert execution.state(0).error == {
        "type": "output",
        "message": "the result of 'note' does not meet its return type: it is annotated -> None, but returned int 5"}
    context, execution, _ = execute([], [{"_tool": "note", "text": "fine", "_outputPath": "†state.n"}], acts)
    assert execution.state(0).status is Status.DONE
    assert context.resolve("†state.n").value is None


def test_a_classic_activity_annotated_none_that_returns_a_value_fails_its_call_too() -> None:
    """`fn(call, tool, context) -> None` is not typed (no tool schema), but its return type is checked as a typed
    one's: a value returned (sync or async) is an `output` error naming the activity; None writes null."""
    acts = Activities()

    def note(call, tool, context) -> None:  # type: ignore[no-untyped-def]
        return {"type": "data", "kind": "state", "data": {"n": 1}} if call["text"] == "bad" else None

    async def later(call, tool, context) -> None:  # type: ignore[no-untyped-def]
        return "x"

    assert acts.add(note, "note").schema is None
    acts.add(later, "later")
    context, execution, _ = execute([], [{"_tool": "note", "text": "bad", "_outputPath": "†state.n"},
                                         {"_tool": "later", "_outputPath": "†state.l"}], acts)
    assert [execution.state(index).error for index in (0, 1)] == [
        {"type": "output", "message": "the result of 'note' does not meet its return type: it is annotated -> None, "
                                     "but returned dict {'type': 'data', 'kind': 'state', 'data': {'n': 1}}"},
        {"type": "output", "message": "the result of 'later' does not meet its return type: it is annotated -> None, "
                                      "but returned str 'x'"}]
    context, execution, _ = execute([], [{"_tool": "note", "text": "fine", "_outputPath": "†state.n"}], acts)
    assert context.resolve("†state.n").value is None


def test_a_result_pydantic_cannot_write_as_json_is_an_output_error() -> None:
    """`-> bytes` returning bytes that are not UTF-8: an `output` error saying the result cannot be written as
    JSON; before, the call failed with pydantic's bare UnicodeDecodeError as if the activity had raised it."""
    acts = Activities()

    @activity("blob")
    def blob(n: int) -> bytes:
        return b"\xff\x00"

    acts.add(blob)
    context, execution, _ = execute([], [{"_tool": "blob", "n": 1, "_outputPath": "†state.b"}], acts)
    assert context.resolve("†state.b").found is False
    error = execution.state(0).error
    assert error["type"] == "output"
    assert error["message"].startswith("the result of 'blob' cannot be written as JSON: UnicodeDecodeError: ")


def test_a_recursive_model_is_refused_when_registered() -> None:
    """A model that refers to itself cannot be a stand-alone tool schema: registering it says so."""

    class Node(BaseModel):
        child: "Node | None" = None

    def walk(node: Node) -> int:
        return 0

    with pytest.raises(TypeError, match=r"activity 'walk': .*refers to itself"):
        Activities().add(walk, "walk")


def test_a_function_of_no_parameters_is_called_with_none() -> None:
    """`def now() -> str` (or `def ping()`) takes no call: it runs with no arguments rather than failing each call
    with Python's TypeError, and its schema has no parameters."""

    def now() -> str:
        return "2026-03-01"

    def ping():
        return "pong"

    acts = Activities()
    acts.add(now, "now")
    acts.add(ping, "ping")
    assert Activity("now", now).schema == {"type": "object", "properties": {"_output": {"type": "string"}}}
    calls = [{"_tool": "now", "_outputPath": "†state.day"}, {"_tool": "ping", "_outputPath": "†state.echo"}]
    context, _, _ = execute([], calls, acts)
    assert (context.resolve("†state.day").value, context.resolve("†state.echo").value) == ("2026-03-01", "pong")


def test_a_function_that_is_neither_form_is_refused_when_registered() -> None:
    """Parameters not all annotated make a classic activity; one that cannot take (call, tool, context) is refused
    when registered, naming it and its signature."""

    def half(a, b: int) -> int:
        return b

    with pytest.raises(TypeError, match=r"activity 'half': half\(a, b: int\) -> int cannot be called as \(call, "):
        Activities().add(half, "half")
