"""`contextdeck render --json`, and `--tools` for render, validate and run: the request and the registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextdeck._cli import main

DOCUMENT = {
    "schema": {"type": "object", "properties": {"summary": {"type": "string"}}},
    "context": [
        {"role": "system", "content": "Be brief."},
        {"type": "tool", "tool": "Tool.greetUser"},
        {"type": "preset", "model": "small"},
        {"type": "text", "text": "Greet Ann."},
    ],
    "solution": {"calls": [{"_tool": "greetUser", "userName": 5}]},
}
GREET = {"type": "object", "properties": {"_tool": {"const": "greetUser"}, "userName": {"type": "string"}}}


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(DOCUMENT), encoding="utf-8")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "greet.json").write_text(json.dumps(GREET), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_render_json_is_the_exact_request(capsys, doc) -> None:
    """--json prints {messages: [{role, content}], schema, config}; the registry supplies the named tool."""
    code, out, err = run(capsys, "render", str(doc), "--json", "--tools", str(doc.parent / "tools"))
    assert (code, err) == (0, "")
    request = json.loads(out)
    assert request["messages"] == [{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": "Greet Ann."}]
    assert request["config"] == {"model": "small"}
    assert request["schema"]["properties"]["calls"]["items"]["properties"]["_tool"] == {"const": "greetUser"}
    assert request["schema"]["required"] == ["meta", "calls", "output"]


def test_render_shows_a_tools_defs_at_the_top_of_the_composed_schema(capsys, doc) -> None:
    """A registry tool's `$defs` are the composed schema's, its `$ref` pointing there (`#` is the request's top)."""
    tool = {**GREET, "$defs": {"name": {"type": "string"}}, "properties": {**GREET["properties"],
                                                                           "userName": {"$ref": "#/$defs/name"}}}
    (doc.parent / "tools" / "greet.json").write_text(json.dumps(tool), encoding="utf-8")
    code, out, err = run(capsys, "render", str(doc), "--json", "--tools", str(doc.parent / "tools"))
    assert (code, err) == (0, "")
    schema = json.loads(out)["schema"]
    assert schema["$defs"] == {"calls.greetUser.name": {"type": "string"}}
    assert schema["properties"]["calls"]["items"]["properties"]["userName"]["anyOf"][0] == {
        "$ref": "#/$defs/calls.greetUser.name"}
    out = run(capsys, "render", str(doc), "--tools", str(doc.parent / "tools"))[1]
    assert '"$ref": "#/$defs/calls.greetUser.name"' in out
    assert '"calls.greetUser.name": {' in out


def test_render_warns_about_an_unknown_tool_and_prints_roles(capsys, doc) -> None:
    """Without the registry the reference is a warning naming the message; the text form shows the roles."""
    code, out, err = run(capsys, "render", str(doc))
    assert code == 0
    assert err == "contextdeck: warning: message 1: tool: unknown tool 'greetUser': no tool registry is loaded\n"
    assert out.startswith("--- system ---\nBe brief.\n\n--- user ---\nGreet Ann.\n\n--- schema ---\n{")


def test_validate_with_the_registry_checks_the_call_against_the_tool(capsys, doc) -> None:
    """With the registry the reference resolves, and the solution's call is checked as run would."""
    code, out, _ = run(capsys, "validate", str(doc), "--tools", str(doc.parent / "tools"))
    assert code == 1
    assert out == (f"{doc}: solution, call 0 (greetUser): parameters: invalid parameters for 'greetUser': "
                   "$.userName: 5 is not of type 'string'\n")
    code, out, _ = run(capsys, "validate", str(doc))
    assert code == 1
    assert f"{doc}: message 1: tool: unknown tool 'greetUser': no tool registry is loaded\n" in out


def test_a_registry_that_cannot_load_exits_1(capsys, doc, tmp_path) -> None:
    """A bad registry path stops the command with exit 1 and says which and why."""
    for command in ("render", "validate", "run"):
        code, out, err = run(capsys, command, str(doc), "--tools", str(tmp_path / "missing"))
        assert (code, out) == (1, "")
        assert err == f"contextdeck: cannot load tools from {tmp_path / 'missing'}: no such file or folder\n"


def test_gui_takes_tool_registries_too() -> None:
    """`contextdeck gui DOC --tools PATH ...` names the registries the window loads first."""
    from contextdeck._cli import build_parser

    args = build_parser().parse_args(["gui", "doc.json", "--tools", "a", "b"])
    assert (args.doc, args.tools) == ("doc.json", ["a", "b"])
