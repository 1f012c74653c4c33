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
