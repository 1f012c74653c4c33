"""Talking to an OpenAI-compatible endpoint through the official `openai` SDK (async, streaming, cancellable).

Every failure of the endpoint (down, slow, HTTP 4xx/5xx, a body that is not a completion) becomes a
`ModelError` that names the endpoint; cancellation propagates. The API key is read from an environment
variable when the client is made and is never stored anywhere else.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from attrs import frozen

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"
# Local servers (Ollama, llama.cpp, vLLM, LM Studio) accept any key, but the SDK insists on one.
NO_KEY = "not-needed"


def base_url_problem(text: str) -> str | None:
    """Why `text` cannot be an endpoint's base URL (not http or https, no host, a port that is no number), or
    None. Said before anything is asked: such a URL would fail only when the model is first asked."""
    try:
        parts = urlsplit(text)
        host, _ = parts.hostname, parts.port  # `port` raises when it is no number from 0 to 65535
        named = parts.scheme in ("http", "https") and bool(host)
    except ValueError:  # a port that is no number, an unclosed [
        named = False
    return None if named else f"not an http:// or https:// URL: {text!r} (for example http://localhost:11434/v1)"


@dataclass(frozen=True)
class Endpoint:
    """Where to ask and whom: the base URL (`http://localhost:11434/v1`), the model, and the variable of the key.

    `structured` picks how the result's schema is asked for: `json_schema` (response format), `tool` (a
    forced tool call), `prompt` (the schema in words, the reply validated), or `auto` (the first the
    server accepts, in that order). `parameters` go into every request (temperature, seed, ...).
    """

    base_url: str
    model: str
    api_key_env: str = DEFAULT_KEY_VARIABLE
    timeout: float = 120.0
    max_retries: int = 2
    structured: str = "auto"
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.base_url} (model {self.model})"

    def api_key(self) -> str:
        """The key from the environment; a missing default variable means a local server that needs none."""
        value = os.environ.get(self.api_key_env)
        if value:
            return value
        if self.api_key_env != DEFAULT_KEY_VARIABLE:
            raise ModelError(self.label, "", "key", f"the environment variable {self.api_key_env} is not set")
        return NO_KEY


@frozen
class ModelError(Exception):
    """The model could not give an answer: `kind` is unreachable, timeout, status, garbage, key or cancelled.

    `subject` names the call or request it was for; `reply` is what the model said, when it said anything.
    """

    endpoint: str
    subject: str
    kind: str
    reason: str
    status: int | None = None
    reply: str | None = None

    def __str__(self) -> str:
        about = f"{self.subject}: " if self.subject else ""
        return f"{about}{self.endpoint}: {self.reason}"

    def about(self, subject: str) -> ModelError:
        return ModelError(self.endpoint, subject, self.kind, self.reason, self.status, self.reply)


@dataclass(frozen=True)
class Completion:
    """What the model answered: its text (or the arguments of the tool call it made), usage and latency."""

    text: str
    tool: str | None  # the name of the function it called, when it answered with a tool call
    finish_reason: str | None
    usage: dict[str, int]
    latency_ms: int
    model: str
    refusal: str | None = None  # the model declined to answer (structured outputs): its words, and no text
    # Every tool call of the answer, (name, arguments), when it made more than one: `text` and `tool` are the
    # first's. The asks force one function, so the asker refuses such an answer rather than pick one.
    calls: tuple[tuple[str, str], ...] = ()


def client_for(endpoint: Endpoint, **options: Any) -> AsyncOpenAI:
    from openai import AsyncOpenAI  # imported when first used: `contextdeck render` stays quick

    return AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key(), timeout=endpoint.timeout,
                       max_retries=endpoint.max_retries, **options)


def _prepared(endpoint: Endpoint, options: dict[str, Any]) -> AsyncOpenAI:
    """A client whose parts a request uses are imported too (the SDK imports each on first use)."""
    client = client_for(endpoint, **options)
    _ = client.chat.completions, client.models
    _first_use()
    return client


_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
_CALL = {"index": 0, "id": "", "type": "function", "function": {"name": "", "arguments": ""}}
_ANSWERS: dict[str, dict[str, Any]] = {
    "ChatCompletionChunk": {"choices": [{"index": 0, "finish_reason": None, "delta": {
        "role": "assistant", "content": "", "tool_calls": [_CALL]}}], "usage": _USAGE},
    "ChatCompletion": {"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "", "tool_calls": [_CALL]}}], "usage": _USAGE},
}


def _first_use() -> None:
    """Do here what the SDK does on its first request, in the caller's thread otherwise: import the transport's
    async backend, build the answers' models (their schemas are built when first read) and read the request
    parameters' annotations. Best effort: the SDK's private helpers may move, which only costs the first request
    its speed."""
    try:
        import anyio._backends._asyncio  # noqa: F401  (anyio imports it on its first lock)
        from openai._utils._transform import transform
        from openai.types.chat import ChatCompletion, ChatCompletionChunk, completion_create_params

        for model in (ChatCompletionChunk, ChatCompletion):
            model.model_construct(**_ANSWERS[model.__name__])
        request = {"model": "", "messages": [{"role": "user", "content": ""}], "stream_options": {}}
        transform({**request, "stream": True}, completion_create_params.CompletionCreateParamsStreaming)
        transform({**request, "stream": False}, completion_create_params.CompletionCreateParamsNonStreaming)
    except Exception:  # a warm-up only
        return


def _failure(endpoint: Endpoint, error: Exception) -> ModelError:
    import openai

    label = endpoint.label
    if isinstance(error, openai.APITimeoutError):
        return ModelError(label, "", "timeout", f"no answer within {endpoint.timeout:g} s")
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error
        return ModelError(label, "", "unreachable", f"cannot connect ({type(cause).__name__}: {cause})")
    if isinstance(error, openai.APIStatusError):
        detail = _error_text(error.body) or error.message
        return ModelError(label, "", "status", f"the server answered HTTP {error.status_code}: {detail}",
                          status=error.status_code)
    return ModelError(label, "", "garbage", f"the answer is not a chat completion ({type(error).__name__}: {error})")


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        return str(message) if message else ""
    return str(body)[:300] if body else ""


def _usage(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    found = {key: getattr(usage, key, None) for key in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return {key: value for key, value in found.items() if isinstance(value, int)}


Delta = Callable[[str], None]
# Streamed once a second tool call begins, as a piece of its own, instead of its pieces: the asks force one function,
# and the asker refuses an answer of several calls (`Completion.calls`), which is known from here on.
SECOND_CALL = "\n\n(A second tool call began: one was asked for, so this answer will be refused.)"


class Provider:
    """One endpoint's client. `complete(body)` sends a chat completion request; `models()` lists models."""

    def __init__(self, endpoint: Endpoint, **client_options: Any) -> None:
        self.endpoint = endpoint
        self._client_options = client_options
        self._client: AsyncOpenAI | None = None

    @property
    def client(self) -> AsyncOpenAI:
        if self._client is None:
            self._client = client_for(self.endpoint, **self._client_options)
        return self._client

    async def prepare(self) -> None:
        """Make the client on a worker thread: the first `import openai` takes more than a second, which the
        caller's event loop (the window's) would otherwise spend frozen. The CLI need not call this."""
        if self._client is None:
            client = await asyncio.to_thread(_prepared, self.endpoint, self._client_options)
            if self._client is None:  # another caller may have made one meanwhile
                self._client = client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def models(self) -> list[str]:
        """The model names the server offers (`GET /models`); a server without the list raises ModelError."""
        import openai

        try:
            page = await self.client.models.list()
            return sorted(model.id for model in page.data)
        except openai.OpenAIError as error:
            raise _failure(self.endpoint, error) from None
        except ValueError as error:  # a body that is not JSON
            raise _failure(self.endpoint, error) from None

    async def complete(self, body: dict[str, Any], on_delta: Delta | None = None) -> Completion:
        """Send `body` (messages, response format or tools; the model is added) and gather the answer.

        With `on_delta` the answer is streamed and each piece of text is handed to it as it arrives.
        """
        import openai

        request = {"model": self.endpoint.model, **self.endpoint.parameters, **body}
        started = time.monotonic()
        try:
            if on_delta is None:
                response = await self.client.chat.completions.create(**request)
                gathered = _gather(response)
            else:
                gathered = await self._stream(request, on_delta)
        except openai.OpenAIError as error:
            raise _failure(self.endpoint, error) from None
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            raise _failure(self.endpoint, error) from None
        text, calls, finish, usage, model, refusal = gathered
        tool = None
        if calls:
            tool, text = calls[0]
        latency = round((time.monotonic() - started) * 1000)
        return Completion(text, tool, finish, usage, latency, model or self.endpoint.model, refusal or None,
                          tuple(calls) if len(calls) > 1 else ())

    async def _stream(self, request: dict[str, Any], on_delta: Delta) -> tuple[Any, ...]:
        stream = await self.client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True})
        parts: list[str] = []
        refused: list[str] = []
        calls: list[tuple[str, str]] = []
        ids: dict[int, tuple[int, str]] = {}  # a call's stream index -> its place in `calls`, its id
        finish: str | None = None
        usage: dict[str, int] = {}
        model = ""
        async with stream:  # closes the connection when cancelled midway
            async for chunk in stream:
                model = getattr(chunk, "model", "") or model
                usage = _usage(getattr(chunk, "usage", None)) or usage
                for choice in chunk.choices or ():
                    finish = choice.finish_reason or finish
                    delta = choice.delta
                    refused.append(getattr(delta, "refusal", None) or "")
                    piece = delta.content or ""
                    parts.append(piece)
                    second = False
                    for call in delta.tool_calls or ():
                        if call.function is not None:
                            arguments = call.function.arguments or ""
                            before = len(calls)
                            _add_piece(calls, ids, call, arguments)
                            piece += arguments if len(calls) == 1 else ""
                            second = second or (before == 1 and len(calls) == 2)
                    if piece:
                        on_delta(piece)
                    if second:  # a piece of its own: a listener knows it by its name
                        on_delta(SECOND_CALL)
        return "".join(parts), calls, finish, usage, model, "".join(refused)


def _add_piece(calls: list[tuple[str, str]], ids: dict[int, tuple[int, str]], call: Any, arguments: str) -> None:
    """Add a streamed piece of a tool call to the call it belongs to: the one of its index, unless it brings
    another id (servers that number every call 0 tell them apart by id only)."""
    index = call.index if isinstance(call.index, int) else 0
    known = ids.get(index)
    if known is None or (call.id and known[1] and call.id != known[1]):
        ids[index] = (len(calls), call.id or "")
        calls.append((call.function.name or "", arguments))
        return
    place, call_id = known
    name, text = calls[place]
    calls[place] = (name or call.function.name or "", text + arguments)
    if call.id and not call_id:
        ids[index] = (place, call.id)


def _gather(response: Any) -> tuple[Any, ...]:
    if isinstance(response, str) or not getattr(response, "choices", None):
        raise ValueError(f"no choices in the answer: {str(response)[:200]!r}")
    choice = response.choices[0]
    message = choice.message
    calls = [(function.name, function.arguments or "") for call in message.tool_calls or ()
             if (function := getattr(call, "function", None)) is not None]
    refusal = getattr(message, "refusal", None)
    return message.content or "", calls, choice.finish_reason, _usage(response.usage), response.model, refusal
