"""Breakpoints tied to a call's identity, not its row: they follow the call when calls are inserted or edited.

Qt-free. A breakpoint is kept as `{"call": <the call as written>, "index": <its row then>, "condition"?: "†..."}`
in the document's sidecar settings (key "breakpoints"), so it is there again when the document is reopened.
"""

from __future__ import annotations

from typing import Any

from contextdeck.engine import digest

SIDECAR_KEY = "breakpoints"


def place(entries: Any, calls: list[Any]) -> dict[int, str | None]:
    """The rows the kept breakpoints hold now, with their conditions.

    A breakpoint goes to the identical call nearest its old row (calls inserted or removed around it);
    else, when the call was edited, to the call now at its old row if it has the same tool; else it is
    dropped (its call is gone).
    """
    texts = [_text(call) for call in calls]
    rows: dict[int, str | None] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        call, index, condition = entry.get("call"), entry.get("index"), entry.get("condition")
        old = index if isinstance(index, int) and not isinstance(index, bool) else 0
        same = [row for row, text in enumerate(texts) if text == _text(call) and row not in rows]
        if same:
            row = min(same, key=lambda candidate: abs(candidate - old))
        elif 0 <= old < len(calls) and old not in rows and _tool(calls[old]) == _tool(call) is not None:
            row = old
        else:
            continue
        rows[row] = condition if isinstance(condition, str) and condition.strip() else None
    return rows


def entries_of(rows: dict[int, str | None], calls: list[Any]) -> list[dict[str, Any]]:
    """What to keep for the breakpoints on `rows`: each call as written, its row, its condition (a row
    past `calls`, whose call is gone, keeps nothing)."""
    kept = []
    for row in sorted(row for row in rows if row < len(calls)):
        entry: dict[str, Any] = {"call": calls[row], "index": row}
        if rows[row] is not None:
            entry["condition"] = rows[row]
        kept.append(entry)
    return kept


def _text(call: Any) -> str | None:
    try:
        return digest(call)
    except (TypeError, ValueError):
        return None


def _tool(call: Any) -> Any:
    return call.get("_tool") if isinstance(call, dict) else None
