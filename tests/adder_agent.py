"""The agent the loop, eval and experiment tests (and eval_bench) run: add two numbers with a tool, answer.

`adder` is the fake model's side: its first turn calls `add` on the input, its next answers with the sum it
reads in ¶state (ten times it when the system text says "Multiply", so a context edit can change an output).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fake_llm import Reply

ADD = {"type": "object", "description": "Adds a and b.",
       "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "_output": {"type": "number"}},
       "required": ["a", "b"]}
FIRST = {"meta": {}, "calls": [{"_tool": "add", "a": "†input.a", "b": "†input.b", "_outputPath": "†state.sum"}],
         "output": None}
ACTIVITIES = "def add(call, tool, context):\n    return call['a'] + call['b']\n\nACTIVITIES = {'add': add}\n"


def adder(body: Any, **reply: Any) -> Reply:
    text = "\n".join(str(message.get("content")) for message in body["messages"])
    found = re.search(r'"sum": (-?\d+)', text)
    if found is None:
        return Reply.json(FIRST, **reply)
    total = int(found.group(1)) * (10 if "Multiply" in text else 1)
    return Reply.json({"meta": {}, "calls": [], "output": {"total": total}}, **reply)


def write_agent(path: Path, system: str) -> Path:
    """A saved request: the system text, an input {a, b} for each case to replace, the `add` tool."""
    path.write_text(json.dumps({
        "schema": {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]},
        "context": [{"type": "text", "role": "system", "text": system},
                    {"type": "input", "input": {"a": 0, "b": 0}},
                    {"type": "tool", "tool": {"add": ADD}}]}))
    return path
