"""File → Load Tool Registry… offers the tool schemas of a file of typed activities."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TYPED = '''
from pydantic import BaseModel


class Verdict(BaseModel):
    sentiment: str
    confidence: float


def judge(text: str) -> Verdict:
    """Judge a ticket's sentiment."""
    return Verdict(sentiment="negative", confidence=0.9)


ACTIVITIES = {"judge": judge}
'''


def test_a_file_of_typed_activities_is_a_tool_registry(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """Loaded as a registry (after the code warning), it holds the typed activity's schema with its `_output`."""
    window = open_window(None)
    acts = tmp_path / "acts.py"
    acts.write_text(TYPED)
    registry = window.tool_registry
    registry.ask_file = lambda parent: str(acts)
    registry.confirm = lambda parent, path: True
    registry.actions_by_name["load_tools"].trigger()
    tools = registry.tools()
    assert tools is not None
    assert tools["judge"]["description"] == "Judge a ticket's sentiment."
    assert tools["judge"]["properties"]["_output"]["properties"]["confidence"] == {"type": "number"}
    assert "Loaded 1 tools from acts.py: judge" in window.statusBar().currentMessage()
