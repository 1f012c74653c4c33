"""What the model is sent: the prompt for one latent call, and for the whole request (the Vessel, 002/004).

A `Prompt` is the messages (`{role, content}`), the JSON Schema the answer must match, and its name; it
turns into a chat completion body for each way of asking for structure (`body`). The context part and
the whole request come from `compose_request` (issue 13), the one place that decides what the model receives.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..calls._activities import Activities
from ..calls._calls import CallPlan, resolve_call
from ..calls._output_check import tool_output_schema as output_schema
from ..calls._registry import Registry
from ..document import _json
from ..document._context import Context
from ..document._view import Messages
from ..request._render import shown
from ..request._request import Request, compose_request, hoisted
from ..request._sent import sent_messages

STRATEGIES = ("json_schema", "tool", "prompt")
# Settings about the request's function tools: the API refuses them (HTTP 400) in a body without `tools`.
TOOL_SETTINGS = ("tool_choice", "parallel_tool_calls")
JSON_ONLY = "Answer with one JSON object that matches this JSON Schema, and nothing else:"


@dataclass(frozen=True)
class Prompt:
    """Exactly what is asked: `messages`, the answer's `schema` (named `name`), and whom it is for."""

    subject: str  # "call 2 (checkEligibility)" or "the request"
    messages: tuple[dict[str, Any], ...]  # `{role, content}`: a text, or content parts (`sent_messages`)
    schema: dict[str, Any]
    name: str
    branches: tuple[str, ...] = ()  # the alternatives of `a || b` the answer may choose among
    config: dict[str, Any] = field(default_factory=dict)  # settings from preset messages (temperature, ...)

    def body(self, strategy: str) -> dict[str, Any]:
        """The chat completion body (without the model) asking for `schema` as `strategy` says."""
        messages = [dict(message) for message in self.messages]
        # A preset's tool settings (an imported agent's, which offered its functions as tools) are the
        # recorded agent's: here the calls come in the answer, and only `tool` offers a function.
        config = {key: value for key, value in self.config.items() if key not in TOOL_SETTINGS}
        if strategy == "json_schema":
            return {**config, "messages": messages, "response_format": {
                "type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema}}}
        if strategy == "tool":
            function = {"name": self.name, "description": f"Give the answer for {self.subject}.",
                        "parameters": self.schema}
            return {**config, "messages": messages, "tools": [{"type": "function", "function": function}],
                    "tool_choice": {"type": "function", "function": {"name": self.name}}}
        if strategy == "prompt":
            instruction = f"{JSON_ONLY}\n{_json.dumps(self.schema)}"
            return {**config, "messages": [*messages, {"role": "user", "content": instruction}]}
        raise ValueError(f"unknown way to ask for structure {strategy!r}; expected one of {list(STRATEGIES)}")

    def as_json(self) -> dict[str, Any]:
        """What a digest is taken of: everything that decides the answer except the endpoint."""
        return {"messages": list(self.messages), "name": self.name, "schema": self.schema, "config": self.config}


def content_shown(message: dict[str, Any]) -> str:
    """A prompt message's content as text: its text, or its content parts as the JSON the LLM view shows."""
    content = message["content"]
    return content if isinstance(content, str) else shown(content)


def context_messages(context: Messages, at: int | None = None) -> list[dict[str, Any]]:
    """What the model is sent of the context as of the first `at` messages: `compose_request`'s messages, as sent
    (`sent_messages`: content parts as parts)."""
    return sent_messages(context, compose_request(context, at=at))


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def call_prompt(context: Context, plan: CallPlan) -> Prompt:
    """The prompt for latent call `plan`: the context as of now, the tool, the resolved call, the result's schema.

    The answer is `{"result": ...}`; when the call writes to `a || b` it is `{"branch": ..., "result": ...}`
    and the model picks the destination.
    """
    branches = tuple(" && ".join(map(str, alt)) for alt in plan.destinations.alternatives) if plan.destinations else ()
    result = output_schema(plan.tool)
    defs: dict[str, Any] = {}  # its `$ref`s point into the tool's `$defs`: in the answer's schema they are at the top
    properties: dict[str, Any] = {"result": hoisted(result, "result", defs)}
    if len(branches) > 1:
        properties = {"branch": {"type": "string", "enum": list(branches)}, **properties}
    call = {key: value for key, value in resolve_call(context, plan).items() if key != "_output"}
    lines = [f"Carry out {plan.label} yourself: no code runs this tool, your answer is its result."]
    if plan.tool is not None:
        description = plan.tool.schema.get("description")
        lines += ["", f"Tool `{plan.tool_name}`" + (f": {description}" if isinstance(description, str) else ""),
                  "Parameters schema:", _json.dumps(plan.tool.parameters)]
    lines += ["", "The call, its references resolved:", _json.dumps(call)]
    if plan.scopes:  # 015: for a latent call, its scopes are a nudge, not a filter: the whole context stays
        kinds = ", ".join(f"¶{kind}" for kind in plan.scopes)
        lines += ["", f"Focus on {kinds} in the context (the call's _scopes); the rest is background."]
    lines += ["", "Answer with an object whose `result` is the call's result, matching this schema:",
              _json.dumps(result)]
    if len(branches) > 1:
        choices = ", ".join(f"`{branch}`" for branch in branches)
        lines += ["", f"The result goes to one of {choices}: name it in `branch` (the first is the usual one)."]
    messages = (*context_messages(context), {"role": "user", "content": "\n".join(lines)})
    schema = _closed(properties) | ({"$defs": defs} if defs else {})
    return Prompt(plan.label, messages, schema, "result", branches)


def request_prompt(context: Messages, schema: Any = None, *, activities: Activities | None = None,
                   tools: Registry | None = None) -> Prompt:
    """The whole request (the Vessel): exactly `compose_request`'s messages, composed schema and settings.

    `context` may be a frozen view (`Context.view()`), composed off the GUI thread."""
    return prompt_of(context, compose_request(context, schema, activities=activities, tools=tools))


def prompt_of(context: Messages, request: Request) -> Prompt:
    """The prompt of `request`, composed from `context`: its messages as sent (`sent_messages`), its schema, its
    settings but the model (the asker's)."""
    return Prompt("the request", tuple(sent_messages(context, request)), copy.deepcopy(dict(request.schema)),
                  "solution", config={key: copy.deepcopy(value) for key, value in request.config.items()
                                      if key != "model"})
