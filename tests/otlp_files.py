"""Small OTLP JSON traces the command line's tests and the window's both read, so that each can check it says what
the other does of the same file."""

from __future__ import annotations

import json
from typing import Any

CHAT = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}])}}]


def three_traces() -> dict[str, Any]:
    """Traces `a…` and `b…` of one chat span each, and `c…` of one span that is no model span."""
    spans = [{"traceId": "a" * 32, "spanId": "1" * 16, "name": "chat", "attributes": CHAT},
             {"traceId": "b" * 32, "spanId": "2" * 16, "name": "chat", "attributes": CHAT},
             {"traceId": "c" * 32, "spanId": "3" * 16, "name": "cron job"}]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def bad_spans(count: int) -> dict[str, Any]:
    """Trace `a…`: one chat span, and `count` spans of no valid span id (`"bad 0"`, ...)."""
    spans = [{"traceId": "a" * 32, "spanId": "1" * 16, "name": "chat", "attributes": CHAT},
             *({"traceId": "a" * 32, "spanId": f"bad {n}", "name": "step"} for n in range(count))]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def bad_spans_said(file: object, count: int) -> str:
    """The one warning `bad_spans(count)` gives."""
    return (f'{file}: span "bad 0" (step) of trace {"a" * 32}: the span has no valid span id: left out (and '
            f'{count - 1} more span(s) alike: "bad 1", "bad 2", "bad 3", ...)')
