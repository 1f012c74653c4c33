"""A corpus of malformed documents and faulty schemas through `contextdeck validate`, `render` and `run`: each
ends with a message that says where, the documented exit code, no traceback and no hang (the subprocess's
timeout is the hang check, not a measure of speed), and no `$ref` reaches the network."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from loopback import CountingServer, counting_server

HANG = 120  # seconds: far beyond any of these on a loaded machine; reaching it means a hang
REFUND = (Path(__file__).resolve().parents[2] / "resources" / "examples" / "refund_workflow.json").read_bytes()
EVIL = "^(a|a)+$"  # backtracks without end under Python's `re` against "aaaa…!"
SLOW = "a" * 40 + "!"

Make = Callable[[str], bytes]  # the server's URL -> the document's bytes


@dataclass(frozen=True)
class Case:
    """A document, and what each command must say (a substring of stdout + stderr) and exit with; a command
    left out must only end without a traceback or a hang."""

    name: str
    make: Make
    says: dict[str, tuple[int, str]]
    suffix: str = ".json"


def doc(value: Any) -> Make:
    return lambda url: json.dumps(value, ensure_ascii=False).encode("utf-8")


def raw(data: bytes) -> Make:
    return lambda url: data


def unloadable(where: str) -> dict[str, tuple[int, str]]:
    """A document that cannot be opened: every command exits 1 naming the file and the place."""
    return dict.fromkeys(("validate", "render", "run"), (1, where))


def tool_document(schema: dict[str, Any], call: dict[str, Any]) -> Any:
    """A tool `t` with this schema and a plan calling it (an activity `t` is loaded for every command)."""
    return {"context": [{"type": "tool", "tool": {"t": schema}}, {"type": "state", "data": {}},
                        {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.x", **call}]}]}


def remote_tool(url: str) -> bytes:
    schema = {"type": "object", "properties": {"s": {"$ref": f"{url}/tool.json"}}}
    return json.dumps(tool_document(schema, {"s": 1})).encode("utf-8")


def remote_data(url: str) -> bytes:
    return json.dumps([{"type": "input", "input": {"s": 1}, "schema": {"$ref": f"{url}/data.json"}}]).encode()


def deep(levels: int) -> bytes:
    return b'[{"type": "state", "data": ' + b"[" * levels + b"]" * levels + b"}]"


LOOP = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "type": "object",
        "properties": {"s": {"$ref": "#/$defs/a"}}}
CASES = [
    # truncations: the refund example cut short at several places
    *(Case(f"truncated at {share}%", raw(REFUND[: len(REFUND) * share // 100]), unloadable("doc.json:"))
      for share in (1, 33, 66, 99)),
    Case("empty file", raw(b""), unloadable("doc.json:1:1: ")),
    # encodings
    Case("UTF-16 with its byte order mark", raw("[]".encode("utf-16")), unloadable("doc.json:1:1: ")),
    Case("Latin-1 in a string", raw(b'[{"type": "text", "text": "caf\xe9"}]'),
         unloadable("doc.json:1:31: not valid UTF-8 (byte 0xe9)")),
    Case("a NUL byte", raw(b'[{"type": "text"\x00}]'), unloadable("doc.json:1:")),
    Case("JSON Lines with a bad line", raw(b'{"type": "text", "text": "a"}\n{"type": \n'),
         unloadable("doc.jsonl:2:"), suffix=".jsonl"),
    Case("not messages", doc([1, 2]), unloadable("doc.json: message 0: expected a message object")),
    # depth and numbers
    Case("1,000-deep nesting", raw(deep(1000)), unloadable("doc.json:1:280: nesting deeper than 254 levels")),
    Case("an integer of 5,001 digits", raw(b'[{"type": "state", "data": {"n": 1' + b"0" * 5000 + b"}}]"),
         unloadable("doc.json:1:")),
    Case("a float beyond a double", raw(b'[{"type": "state", "data": {"n": 1e400}}]'),
         unloadable("doc.json:1:34: the number 1e400 is too large for a double")),
    Case("NaN", raw(b'[{"type": "state", "data": {"n": NaN}}]'), unloadable("doc.json:1:34: NaN is not valid JSON")),
    # regexes
    Case("a backtracking pattern in a data schema",
         doc([{"type": "input", "input": {"s": SLOW}, "schema": {"properties": {"s": {"pattern": EVIL}}}}]),
         {"validate": (1, "message 0: ¶input.s: the pattern took too long"),
          "run": (1, "message 0: ¶input.s: the pattern took too long")}),  # an input that cannot be judged runs not
    Case("a backtracking pattern in a tool schema",
         doc(tool_document({"properties": {"s": {"pattern": EVIL}}}, {"s": SLOW})),
         {"validate": (1, "call 0 (t): parameters: invalid parameters for 't': $.s: the pattern took too long"),
          "run": (0, "call 0 (t) failed: parameters: invalid parameters for 't': $.s: the pattern took too long")}),
    Case("a backtracking property pattern",
         doc([{"type": "input", "input": {SLOW: 1}, "schema": {"patternProperties": {EVIL: {"type": "string"}}}}]),
         {"validate": (1, "message 0: ¶input: the pattern took too long"),
          "run": (1, "message 0: ¶input: the pattern took too long")}),
    Case("an invalid pattern", doc([{"type": "input", "input": {"s": "x"},
                                     "schema": {"properties": {"s": {"pattern": "(unclosed"}}}}]),
         {"validate": (1, "message 0: ¶input: invalid schema at #/properties/s/pattern: '(unclosed' is not a regular "
                      "expression: missing ), unterminated subpattern at position 0"),
          "run": (1, "message 0: ¶input: invalid schema at #/properties/s/pattern: '(unclosed'")}),
    # $refs
    Case("a remote $ref in a data schema", remote_data,
         {"validate": (1, "message 0: ¶input: $ref '{url}/data.json' cannot be resolved"),
          "run": (1, "message 0: ¶input: $ref '{url}/data.json' cannot be resolved")}),
    Case("a remote $ref in a tool schema", remote_tool,
         {"validate": (1, "tool 't': its schema cannot be used: $ref '{url}/tool.json' cannot be resolved"),
          "run": (0, "call 0 (t) failed: parameters: tool 't': its schema cannot be used: $ref '{url}/tool.json'")}),
    Case("a $ref to nothing", doc(tool_document({"properties": {"s": {"$ref": "#/$defs/nope"}}}, {"s": 1})),
         {"validate": (1, "$ref '#/$defs/nope' points to nothing in the schema"),
          "run": (0, "call 0 (t) failed: parameters: tool 't': its schema cannot be used: $ref '#/$defs/nope'")}),
    Case("an invalid tool schema, its parameter a reference",
         doc([{"type": "tool", "tool": {"t": {"type": 5}}}, {"type": "state", "data": {"a": 1}},
              {"type": "plan", "plan": [{"_tool": "t", "s": "†state.a", "_outputPath": "†state.x"}]}]),
         {"validate": (1, "message 2: call 0 (t): parameters: tool 't': its schema cannot be "
                          "used: invalid schema"),
          "run": (0, "call 0 (t) failed: parameters: tool 't': its schema cannot be used: invalid schema")}),
    Case("a $ref that loops", doc(tool_document(LOOP, {"s": 1})),
         {"validate": (1, "$ref '#/$defs/a' refers back to itself"),
          "run": (0, "call 0 (t) failed: parameters: tool 't': its schema cannot be used: $ref '#/$defs/a' refers")}),
    Case("a file: $ref", doc([{"type": "input", "input": {"s": 1}, "schema": {"$ref": "file:///etc/passwd"}}]),
         {"validate": (1, "message 0: ¶input: $ref 'file:///etc/passwd' cannot be resolved"),
          "run": (1, "message 0: ¶input: $ref 'file:///etc/passwd' cannot be resolved")}),
    # cycles
    Case("calls that feed each other", doc([
        {"type": "state", "data": {}},
        {"type": "plan", "plan": [{"_tool": "t", "x": "†state.b", "_outputPath": "†state.a"},
                                  {"_tool": "t", "x": "†state.a", "_outputPath": "†state.b"}]}]),
         {"validate": (1, "call 0 (t): cycle: "), "run": (0, "refused: ")}),
]

ACTIVITIES = "from contextdeck.engine import activity\n\n@activity('t')\ndef t(call, tool, context):\n    return 1\n"


@pytest.fixture(scope="module")
def server() -> Iterator[CountingServer]:
    with counting_server() as running:
        yield running


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_every_command_ends_with_a_located_message(case: Case, server: CountingServer, tmp_path: Path) -> None:
    """validate, render and run: the message and exit code above, never a traceback, a hang or a request."""
    path = tmp_path / f"doc{case.suffix}"
    path.write_bytes(case.make(server.url))
    activities = tmp_path / "acts.py"
    activities.write_text(ACTIVITIES)
    for command in ("validate", "render", "run"):
        done = subprocess.run(
            [sys.executable, "-m", "contextdeck", command, str(path), "--activities", str(activities)],
            capture_output=True, text=True, timeout=HANG, cwd=tmp_path,
        )
        said = done.stdout + done.stderr
        assert "Traceback" not in said, (command, said)
        if command in case.says:
            code, words = case.says[command]
            assert words.format(url=server.url) in said, (command, said)
            assert done.returncode == code, (command, said)
        elif command == "run":
            json.loads(done.stdout)  # the run's document, whole
    assert server.hits == []


def test_the_window_validation_worker_ends_when_its_window_is_gone() -> None:
    """The form's worker process, asked about a backtracking pattern and then left (its stdin closes, as when
    the window is killed), answers at the field and exits by itself; under `re` it ran on for good."""
    from contextdeck._child import child_command

    program, arguments = child_command("contextdeck._validation_worker")
    request = {"id": 1, "schema": {"properties": {"s": {"pattern": EVIL}}}, "value": {"s": SLOW}}
    done = subprocess.run([program, *arguments], input=json.dumps(request) + "\n", capture_output=True, text=True,
                          timeout=HANG, check=True)
    answer = json.loads(done.stdout.splitlines()[-1])
    ((path, message),) = answer["errors"]
    assert path == ["s"]
    assert message.startswith("the pattern took too long")
