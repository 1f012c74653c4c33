"""`contextdeck tools ACTIVITIES.py` prints the tool messages of typed activities; `run` holds calls to them."""

import json

import pytest

from contextdeck._cli import main

TYPED = '''
from pydantic import BaseModel


class Ticket(BaseModel):
    text: str


class Verdict(BaseModel):
    sentiment: str
    confidence: float


def judge(ticket: Ticket) -> Verdict:
    """Judge a ticket's sentiment."""
    if ticket.text == "bad":
        return {"sentiment": 5, "confidence": "high"}
    return Verdict(sentiment="negative", confidence=0.9)


ACTIVITIES = {"judge": judge}
'''


def call(capsys, *argv):
    code = main([*map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tools_prints_the_schema_of_a_typed_activity(capsys, tmp_path) -> None:
    """One tool message per typed activity: parameters, the docstring, `_output` from the return type."""
    acts = tmp_path / "acts.py"
    acts.write_text(TYPED)
    code, out, err = call(capsys, "tools", acts)
    assert code == 0, err
    assert json.loads(out) == [{"type": "tool", "tool": {"judge": {
        "type": "object", "description": "Judge a ticket's sentiment.",
        "properties": {"text": {"type": "string"},
                       "_output": {"type": "object",
                                   "properties": {"sentiment": {"type": "string"}, "confidence": {"type": "number"}},
                                   "required": ["sentiment", "confidence"]}},
        "required": ["text"]}}}]
    assert "1 tool(s): judge" in err


def test_tools_on_a_file_without_typed_activities_is_exit_1(capsys, tmp_path) -> None:
    """A file with only classic activities has no schema to print: exit 1, naming the file."""
    acts = tmp_path / "acts.py"
    acts.write_text("def f(call, tool, context):\n    return 1\n\nACTIVITIES = {'f': f}\n")
    code, _, err = call(capsys, "tools", acts)
    assert code == 1
    assert f"cannot load tools from {acts}: defines no TOOLS" in err


def test_typed_functions_not_registered_are_named_with_how_to_register_them(capsys, tmp_path) -> None:
    """Annotated functions in a file are not activities until registered: `tools` and `run` name them, so the
    message does not say the file holds no typed activity and stop there."""
    acts = tmp_path / "acts.py"
    acts.write_text("def place(order_id: str) -> str:\n    return order_id\n\n\n"
                    "def _helper(x: int) -> int:\n    return x\n")
    said = (': place is defined but not registered: name them in ACTIVITIES = {"name": fn} or mark them '
            '@activity("name")')
    code, _, err = call(capsys, "tools", acts)
    assert code == 1
    assert err.strip().endswith(said)
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"context": [{"role": "user", "content": "hi"}]}))
    code, _, err = call(capsys, "run", doc, "--activities", acts)
    assert code != 0
    assert said in err


def test_run_refuses_a_result_that_breaks_the_return_type(capsys, tmp_path) -> None:
    """The typed activity's bad result is the call's `output` error message; a good one is written."""
    acts = tmp_path / "acts.py"
    acts.write_text(TYPED)
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps([{"type": "plan", "plan": [
        {"_tool": "judge", "text": "bad", "_outputPath": "†state.bad"},
        {"_tool": "judge", "text": "fine", "_outputPath": "†state.good"}]}]))
    code, out, err = call(capsys, "run", doc, "--activities", acts)
    assert code == 0, err
    context = json.loads(out)
    error = next(m for m in context if m["type"] == "error")["data"]["error"]
    assert error["type"] == "output"
    assert "$.sentiment: Input should be a valid string" in error["message"]
    assert "call 0 (judge) failed: output: the result of 'judge' does not meet its return type" in err
    assert [m["data"] for m in context if m.get("_outputPath") == "†state.good"] == [
        {"good": {"sentiment": "negative", "confidence": 0.9}}]


def test_an_annotation_the_file_does_not_define_is_named(capsys, tmp_path) -> None:
    """An activity whose annotation names an undefined type is said as such (exit 1). Before, it was taken for
    untyped and the file was said to have "no typed activities". A classic `(call, tool, context)` may still
    name a type it imports only for a type checker: it stays an untyped activity."""
    acts = tmp_path / "acts.py"
    acts.write_text("from __future__ import annotations\n"
                    "def classic(call, tool, context: Context) -> int:\n    return 1\n"
                    "def lookup(order: Order) -> int:\n    return 1\n"
                    "ACTIVITIES = {'classic': classic, 'lookup': lookup}\n")
    code, out, err = call(capsys, "tools", acts)
    assert (code, out) == (1, "")
    assert (f"contextdeck: cannot load tools from {acts}: activity 'lookup': its annotations cannot be a tool "
            "schema: name 'Order' is not defined (an annotation names what the file does not define)\n") == err


def test_pydantic_advice_after_the_reason_is_left_out(capsys, tmp_path) -> None:
    """A type pydantic cannot make a schema of is said in one line: pydantic's reason, without the advice and
    link it adds in paragraphs of their own."""
    acts = tmp_path / "acts.py"
    acts.write_text("from typing import TypedDict\nclass Row(TypedDict):\n    a: int\n"
                    "def total(row: Row) -> int:\n    return row['a']\nACTIVITIES = {'total': total}\n")
    code, _, err = call(capsys, "tools", acts)
    assert code == 1
    assert "activity 'total': its annotations cannot be a tool schema: Please use `typing_extensions" in err
    assert "errors.pydantic.dev" not in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(("tools", "said"), [
    ("import math\nTOOLS = {'a': {'type': 'object', 'properties': {'x': {'default': math.nan}}}}",
     "tool 'a': $.properties.x.default: nan is not a JSON number"),
    ("TOOLS = {'a': {'type': 'object', 'properties': {'x': {'enum': [{1, 2}]}}}}",
     "tool 'a': $.properties.x.enum[0]: set is not a JSON value"),
    ("TOOLS = {1: {'type': 'object'}}", "TOOLS: a key that is not a string: int"),
    ("TOOLS = [1, 2]", "its TOOLS holds no tool schema"),
])
def test_a_python_registry_holding_what_json_cannot_is_named(capsys, tmp_path, tools, said) -> None:
    """A Python TOOLS holding NaN, a set or a key that is not a string is refused with the tool and the JSON path
    (exit 1); before, NaN was printed as null (the schema changed on the way), and a set or an integer name
    ended in an internal error. A TOOLS with no schema in it is said to be that, not to be missing."""
    registry = tmp_path / "registry.py"
    registry.write_text(tools + "\n")
    code, out, err = call(capsys, "tools", registry)
    assert (code, out) == (1, "")
    assert err.startswith(f"contextdeck: cannot load tools from {registry}: {said}")
    assert err.count("\n") == 1
