"""The tools a run and `validate` check calls against: those the request can offer, and every one registered in
code."""

from __future__ import annotations

from typing import Any

from ..calls._tools import ToolDefinition, form_indices, tool_definitions
from ..document._view import Messages
from ..protocol._messages import Form
from ._request import CONSULT_ADVISOR, consult_tool, survey


def merged_tools(
    context: Messages, code_tools: dict[str, dict[str, Any]] | None = None, at: int | None = None
) -> dict[str, ToolDefinition]:
    """Tools registered in code, then the context's tool messages over them (the context is later: it wins), then
    the ConsultAdvisor tool the request offers for on-demand advisors (017), over a tool of that name: the request's
    schema of it is what the turn check judges, so a run and `validate` judge its calls by it too."""
    limit = len(context) if at is None else max(0, min(at, len(context)))
    found = {name: ToolDefinition(name, schema, None) for name, schema in (code_tools or {}).items()}
    found.update(tool_definitions(context, limit, code_tools))
    if form_indices(context, Form.ADVISOR, limit):  # a look at every message only when some advisor is defined
        seen = survey(context, limit)
        consult = consult_tool(seen.advisors, seen.instances)
        if consult is not None:
            found[CONSULT_ADVISOR] = consult
    return found
