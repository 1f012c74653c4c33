"""Asking the model: for a latent call's result, or for the whole request's solution; recorded and replayed.

`Asker.ask(prompt)` replays a recorded answer when the cassette has one for the same question (mode
`record` or `replay`), else asks the endpoint (structured output the way the server accepts) and records
the exchange. The answer is validated against the prompt's schema; one that does not validate is a
`ModelError` of kind `invalid` carrying the model's raw reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..calls._activities import Activities
from ..calls._record import digest
from ..calls._status import CallState, Status
from ..document import _json
from ..document._document import Document, Shape
from ..document._validate import json_path
from ..protocol._schemas import SchemaFault, schema_errors
from ..run._execution import Execution
from ..run._turns import deepest_error, meta_message, model_marks
from ._cassette import MODES, Cassette
from ._prompt import STRATEGIES, Prompt, call_prompt, request_prompt
from ._provider import Completion, Delta, ModelError, Provider

# A server that does not know a way of asking for structure answers 400 or 422: try the next way.
_UNSUPPORTED = frozenset({400, 422})
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Answer:
    """The validated answer, the exchange it came from, and whether it was replayed from the cassette."""

    value: Any
    exchange: dict[str, Any]
    replayed: bool

    @property
    def summary(self) -> dict[str, Any]:
        """The exchange in short, for audit metadata: enough to find it in the cassette, and what it cost."""
        keys = ("digest", "model", "endpoint", "strategy", "usage", "latency_ms")
        return {**{key: self.exchange.get(key) for key in keys}, "replayed": self.replayed}


def _public(url: str) -> str:
    """The URL without user name or password: those never go into a document or a cassette."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def parse_answer(prompt: Prompt, text: str) -> Any:
    """The model's text as JSON valid against the prompt's schema; else ValueError saying where it fails."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped:  # no text at all (a reply whose content is null): "Expecting value" would say less
        raise ValueError("the answer is empty: the model gave no text")
    try:
        value = _json.parse(stripped)
    except ValueError as error:
        raise ValueError(f"the answer is not JSON ({error})") from None
    try:
        errors = sorted(schema_errors(prompt.schema, value), key=lambda e: [str(step) for step in e.absolute_path])
    except SchemaFault as fault:
        raise ValueError(f"the answer cannot be checked: {fault}") from None
    if errors:
        shown = [deepest_error(e) for e in errors[:5]]  # a call's field, as a turn typed by hand says it
        found = "; ".join(f"{json_path(e.absolute_path)}: {e.message}" for e in shown)
        raise ValueError(f"the answer does not match the schema: {found}")
    return value


@dataclass(frozen=True)
class Tally:
    """What an `Asker` has answered: questions sent to the endpoint, answers replayed from the cassette, and
    the tokens of all those answers as the server counted them (a replayed answer's as recorded)."""

    asked: int = 0
    replayed: int = 0
    tokens: int = 0

    def __sub__(self, before: Tally) -> Tally:
        return Tally(self.asked - before.asked, self.replayed - before.replayed, self.tokens - before.tokens)


class Asker:
    """Asks one endpoint, through a cassette: `mode` is `record` (replay what is recorded, ask and record the
    rest), `replay` (never ask: an unrecorded question is an error) or `live` (always ask, and record).

    `tally` counts what it answered (invalid answers too; an endpoint that failed gave none).
    """

    def __init__(self, provider: Provider, cassette: Cassette | None = None, mode: str = "record") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {list(MODES)}")
        self.provider = provider
        self.cassette = cassette if cassette is not None else Cassette()
        self.mode = mode
        self.tally = Tally()

    @property
    def endpoint_label(self) -> str:
        return self.provider.endpoint.label

    def key(self, prompt: Prompt) -> str:
        endpoint = self.provider.endpoint
        return digest({"model": endpoint.model, "parameters": endpoint.parameters, "prompt": prompt.as_json()})

    async def ask(self, prompt: Prompt, on_delta: Delta | None = None) -> Answer:
        key = self.key(prompt)
        recorded = self.cassette.get(key) if self.mode != "live" else None
        if recorded is not None:
            if on_delta is not None:
                on_delta(str(recorded.get("response", {}).get("text", "")))
            return self._answer(prompt, recorded, replayed=True)
        if self.mode == "replay":
            raise ModelError(self.endpoint_label, prompt.subject, "replay",
                             f"nothing is recorded for this prompt ({key[:19]}…): record it first")
        strategy, completion = await self._complete(prompt, on_delta)
        exchange = {
            "digest": key, "model": completion.model, "endpoint": _public(self.provider.endpoint.base_url),
            "strategy": strategy, "parameters": self.provider.endpoint.parameters,
            "request": {"model": self.provider.endpoint.model, **prompt.body(strategy)},
            "response": {"text": completion.text, "tool": completion.tool, "finish_reason": completion.finish_reason,
                         **({"refusal": completion.refusal} if completion.refusal else {}),
                         **({"calls": [{"name": name, "arguments": arguments} for name, arguments in completion.calls]}
                            if completion.calls else {})},
            "usage": completion.usage, "latency_ms": completion.latency_ms,
        }
        self.cassette.put(exchange)
        return self._answer(prompt, self.cassette.get(key) or exchange, replayed=False)

    async def _complete(self, prompt: Prompt, on_delta: Delta | None) -> tuple[str, Completion]:
        chosen = self.provider.endpoint.structured
        strategies = STRATEGIES if chosen == "auto" else (chosen,)
        for n, strategy in enumerate(strategies):
            try:
                return strategy, await self.provider.complete(prompt.body(strategy), on_delta)
            except ModelError as error:
                if error.kind == "status" and error.status in _UNSUPPORTED and n + 1 < len(strategies):
                    continue
                raise error.about(prompt.subject) from None
        raise AssertionError("unreachable: the last strategy raises or returns")

    def _answer(self, prompt: Prompt, exchange: dict[str, Any], *, replayed: bool) -> Answer:
        usage = exchange.get("usage")
        tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        tokens = tokens if isinstance(tokens, int) else 0
        tally = self.tally
        self.tally = Tally(tally.asked + (not replayed), tally.replayed + replayed, tally.tokens + tokens)
        text = str(exchange.get("response", {}).get("text", ""))
        refusal = exchange.get("response", {}).get("refusal")
        if isinstance(refusal, str) and refusal and not text.strip():
            raise ModelError(self.endpoint_label, prompt.subject, "invalid", f"the model refused: {refusal!r}",
                             reply=refusal)
        calls = exchange.get("response", {}).get("calls")
        if isinstance(calls, list) and len(calls) > 1:
            raise ModelError(self.endpoint_label, prompt.subject, "invalid", _several_calls(calls),
                             reply=_json.dumps(calls, indent=False))
        try:
            value = parse_answer(prompt, text)
        except ValueError as error:
            raise ModelError(self.endpoint_label, prompt.subject, "invalid", str(error), reply=text) from None
        return Answer(value, exchange, replayed)


def _several_calls(calls: list[Any]) -> str:
    names = ", ".join(str(call.get("name")) if isinstance(call, dict) else "?" for call in calls)
    return f"the answer holds {len(calls)} tool calls ({names}) where one was asked for: none of them is taken"


# -- latent calls -----------------------------------------------------------------------------------


async def answer_call(execution: Execution, index: int, asker: Asker, on_delta: Delta | None = None) -> CallState:
    """Ask the model for latent call `index` (waiting for its output) and write what it answers.

    An answer that does not validate becomes the call's error message (type `modelOutput`, with the raw
    `reply`). An endpoint that fails raises ModelError and leaves the call waiting: nothing is lost.
    """
    prompt = call_prompt(execution.context, execution.plans[index])
    try:
        answer = await asker.ask(prompt, on_delta)
    except ModelError as error:
        if error.kind != "invalid":
            raise
        return execution.fail_output(index, "modelOutput", str(error), details={"reply": error.reply})
    value = answer.value
    alternative = prompt.branches.index(value["branch"]) if "branch" in value else 0
    return execution.provide_output(index, value["result"], alternative=alternative,
                                    audit={"model": answer.summary})


def waiting_calls(execution: Execution) -> list[int]:
    return [state.index for state in execution.states if state.status is Status.WAITING_FOR_OUTPUT]


@dataclass(frozen=True)
class ModelRun:
    """What `run_with_model` did: calls run (a model's answer counts as one), the endpoint's failure, and the
    calls whose answer was refused (it did not validate: the call failed with `modelOutput`)."""

    ran: int
    failure: ModelError | None = None
    refused: tuple[int, ...] = ()


async def run_with_model(execution: Execution, asker: Asker, steps: int | None = None) -> ModelRun:
    """Run like `contextdeck run`, the model answering every latent call that waits for an output.

    `steps` limits the calls run. When the endpoint fails, asking stops there: what ran stays in the
    context, the call stays waiting, and the failure is returned.
    """
    ran = 0
    refused: list[int] = []
    while steps is None or ran < steps:
        report = await (execution.run() if steps is None else execution.step())
        ran += len(report.ran)
        if report.ran and steps is not None:
            continue
        waiting = waiting_calls(execution)
        if not waiting:
            break
        try:
            state = await answer_call(execution, waiting[0], asker)  # written at once; the next tick runs the rest
        except ModelError as error:
            return ModelRun(ran, error, tuple(refused))
        if state.status is Status.FAILED:
            refused.append(state.index)
        ran += 1
    return ModelRun(ran, None, tuple(refused))


# -- the whole request (the Vessel) ------------------------------------------------------------------


async def ask_request(
    document: Document, asker: Asker, *, activities: Activities | None = None,
    tools: dict[str, dict[str, Any]] | None = None, on_delta: Delta | None = None,
) -> Answer:
    """Ask the model for the document's solution (`meta`, `calls`, `output` or null, ...), validated."""
    prompt = request_prompt(document.context, document.schema, activities=activities, tools=tools)
    return await asker.ask(prompt, on_delta)


def apply_solution(document: Document, answer: Answer) -> str:
    """Put the model's solution where it is reviewed and run next; returns where, in words.

    A saved request gets it as its `solution` (what the protocol calls the request's answer); a bare context
    or JSON Lines gets a plan message appended (with the final `output` when the model gave one), after a meta
    message when the model's `meta` changes the context's (016).
    """
    if document.shape is Shape.REQUEST:
        document.solution = {**answer.value, "_model": answer.summary}
        return "the request's solution"
    for message in solution_messages(document, answer):
        document.context.append(message)
    return f"a plan message (message {len(document.context) - 1})"


def solution_messages(document: Document, answer: Answer) -> list[dict[str, Any]]:
    """The messages a model's solution appends to a bare context or JSON Lines (`apply_solution`), the document
    unchanged: a meta message when the model's `meta` changes the context's (016, as a turn taken appends it), then
    the plan message, with the final `output` when the model gave one."""
    solution = answer.value
    message: dict[str, Any] = {"type": "plan", "plan": solution["calls"]}
    if solution.get("output") is not None:
        message["output"] = solution["output"]
    meta = meta_message(document, solution.get("meta"), answer.summary)
    return [each for each in (meta, {**message, **model_marks(answer.summary, meta)}) if each is not None]
