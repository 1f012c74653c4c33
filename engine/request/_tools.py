"""The tools a run and `validate` check calls against: those the request can offer, and every one registered in
code."""

from __future__ import annotations

from typing import Any

from ..calls._tools import ToolDefinition, form_indices, tool_definitions
from ..document._view import Messages
from ..protocol._messages import Form, body_of
from ._render import limit_of
from ._request import CONSULT_ADVISOR, consult_tool, survey


def merged_tools(
    context: Messages, code_tools: dict[str, dict[str, Any]] | None = None, at: int | None = None
) -> dict[str, ToolDefinition]:
    """Tools registered in code, then the context's tool messages over them (the context is later: it wins), then
    the ConsultAdvisor tool the request offers for on-demand advisors (017), over a tool of that name: the request's
    schema of it is what the turn check judges, so a run and `validate` judge its calls by it too."""
    limit = limit_of(context, at)
    found = {name: ToolDefinition(name, schema, None) for name, schema in (code_tools or {}).items()}
    found.update(tool_definitions(context, limit, code_tools))
    advisors: dict[str, dict[str, Any]] = {}  # the latest definition of each id, as `survey` keeps them
    for index in form_indices(context, Form.ADVISOR, limit):
        message = body_of(context[index])
        if isinstance(name := message.get("id"), str) and name:
            advisors[name] = message
    on_demand = [advisor for advisor in advisors.values() if advisor.get("on") is None]
    if on_demand:
        # The instances an instanced advisor's advice names (the request's, so a look at every message) only then.
        instanced = any(advisor.get("isInstanced") is True for advisor in on_demand)
        consult = consult_tool(on_demand, survey(context, limit).instances if instanced else [])
        if consult is not None:
            found[CONSULT_ADVISOR] = consult
    return found
