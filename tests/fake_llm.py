"""A small OpenAI-compatible server on 127.0.0.1 for the tests: scripted replies, every request kept.

It speaks just enough of the chat completions API for the `openai` SDK: `POST /v1/chat/completions`
(plain JSON or server-sent events when `stream` is true, text or a tool call, usage) and `GET /v1/models`.
A reply can instead be an HTTP error, garbage, a delay, or a dropped connection. Nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `content` is the assistant's text; `tool` is (function name, arguments text)."""

    content: str | None = None
    tool: tuple[str, str] | None = None
    status: int = 200
    raw: bytes | None = None  # sent as the body as it is (garbage, an error body of one's own)
    delay: float = 0.0  # seconds before answering (or between streamed pieces, when `pieces` > 1)
    pieces: int = 3  # how many chunks a streamed reply is cut into
    drop: bool = False  # close the connection without answering
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 11, "completion_tokens": 7})
    model: str = "fake-small"
    call_id: str = "call_1"  # the id of the tool call, when `tool` is given
    more_tools: tuple[tuple[str, str], ...] = ()  # further tool calls after `tool` (ids call_2, ...)
    refusal: str | None = None  # the model refused (structured outputs): `content` null, this text instead

    @classmethod
    def json(cls, value: Any, **options: Any) -> Reply:
        return cls(content=json.dumps(value), **options)

    @classmethod
    def error(cls, status: int, message: str = "scripted failure") -> Reply:
        body = json.dumps({"error": {"message": message, "type": "test", "code": None}}).encode()
        return cls(status=status, raw=body)


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeLLM:
    """Start with `with FakeLLM() as server:`; `server.url` is the base URL (`http://127.0.0.1:PORT/v1`).

    Replies are taken from `script` in order; when it is empty, `answer(body)` decides (by default an error
    500 saying nothing was scripted). `requests` keeps every request received, parsed.
    """

    def __init__(self, models: list[str] | None = None) -> None:
        self.script: deque[Reply] = deque()
        self.answer: Callable[[Any], Reply] = lambda body: Reply.error(500, "the fake server has no reply scripted")
        self.requests: list[Received] = []
        self.models = ["fake-small", "fake-large"] if models is None else models
        self._lock = threading.Lock()
        self.closing = threading.Event()  # set on leaving: a delayed or streamed reply stops where it is
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), name="fake-llm", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *replies: Reply) -> FakeLLM:
        self.script.extend(replies)
        return self

    @property
    def completions(self) -> list[Any]:
        """The bodies of the chat completion requests received, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def next_reply(self, body: Any) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        return self.answer(body)

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving and wait for every handler thread, so that none lives on into a later test (where the
        objects it frees would change what that test counts, such as the collector's frozen objects)."""
        self._server.shutdown()
        self.closing.set()
        self._server.end_handlers(_HANDLERS_END_WITHIN)
        self._server.server_close()


_HANDLERS_END_WITHIN = 10.0  # seconds: a bound, never reached unless a handler is stuck


class _Server(ThreadingHTTPServer):
    """A threading server that knows its handler threads and their connections, to end them on leaving."""

    daemon_threads = True  # one stuck past the bound never holds up the interpreter's exit

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._handlers: dict[threading.Thread, socket.socket] = {}
        self._handlers_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self._handle, args=(request, client_address), name="fake-llm-handler",
                                  daemon=True)
        with self._handlers_lock:
            self._handlers[thread] = request
        thread.start()

    def _handle(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._handlers_lock:
                self._handlers.pop(threading.current_thread(), None)

    def end_handlers(self, within: float) -> None:
        """A connection the client keeps alive waits in a read for its next request: shut for reading, the read
        ends and its handler with it (a reply being written still goes out). Each is waited for, `within` in all."""
        with self._handlers_lock:
            handlers = dict(self._handlers)
        for connection in handlers.values():
            with contextlib.suppress(OSError):  # closed already
                connection.shutdown(socket.SHUT_RD)
        deadline = time.monotonic() + within
        for thread in handlers:
            thread.join(max(0.0, deadline - time.monotonic()))


def _completion(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    if reply.tool is not None:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, (name, arguments) in _tool_calls(reply)]
    usage = dict(reply.usage)
    usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": reply.model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if reply.tool else "stop"}],
        "usage": usage,
    }


def _tool_calls(reply: Reply) -> list[tuple[str, tuple[str, str]]]:
    assert reply.tool is not None
    more = [(f"call_{n}", tool) for n, tool in enumerate(reply.more_tools, start=2)]
    return [(reply.call_id, reply.tool), *more]


def _cut(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _chunks(reply: Reply, include_usage: bool) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": reply.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reply.tool is not None:
        for index, (call_id, (name, arguments)) in enumerate(_tool_calls(reply)):
            for n, piece in enumerate(_cut(arguments, reply.pieces)):
                call: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
                if n == 0:
                    call.update(id=call_id, type="function")
                    call["function"]["name"] = name
                chunks.append(chunk({"tool_calls": [call]}))
        chunks.append(chunk({}, "tool_calls"))
    elif reply.refusal is not None:
        chunks.extend(chunk({"refusal": piece}) for piece in _cut(reply.refusal, reply.pieces))
        chunks.append(chunk({}, "stop"))
    else:
        chunks.extend(chunk({"content": piece}) for piece in _cut(reply.content or "", reply.pieces))
        chunks.append(chunk({}, "stop"))
    if include_usage:
        usage = dict(reply.usage)
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        chunks.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                       "model": reply.model, "choices": [], "usage": usage})
    return chunks


def _handler(server: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures anyway
            pass

        def _keep(self, body: Any) -> None:
            server.requests.append(Received(self.command, self.path, dict(self.headers.items()), body))

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._keep(None)
            if self.path.rstrip("/").endswith("/models") and server.models:
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            self._keep(body)
            if not self.path.endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            reply = server.next_reply(body)
            streaming = isinstance(body, dict) and body.get("stream") is True
            if reply.delay and not (streaming and reply.pieces > 1 and reply.raw is None):
                server.closing.wait(reply.delay)
            if reply.drop or server.closing.is_set():
                self.close_connection = True
                self.connection.close()
                return
            if reply.raw is not None or reply.status != 200:
                self._send(reply.status, reply.raw or b"{}")
                return
            if not streaming:
                self._send(200, json.dumps(_completion(reply)).encode())
                return
            options = body.get("stream_options") or {}
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for chunk in _chunks(reply, bool(options.get("include_usage"))):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    if reply.delay and server.closing.wait(reply.delay / max(1, reply.pieces)):
                        return  # the server is leaving: the reply ends here, the connection with it
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client cancelled mid-stream

    return Handler


# A small document with one latent call that waits for the model, used by the engine, CLI and GUI tests.
TICKET_TOOL = {
    "type": "object",
    "description": "Classify a support ticket.",
    "properties": {
        "ticket": {"type": "string"},
        "_output": {
            "type": "object",
            "properties": {"label": {"type": "string", "enum": ["damage", "other"]}},
            "required": ["label"],
        },
    },
    "required": ["ticket"],
}


def ticket_document(output_path: str = "†state.label", **call: Any) -> dict[str, Any]:
    return {
        "schema": {"type": "object", "properties": {"reply": {"type": "string"}}, "required": ["reply"]},
        "context": [
            {"type": "text", "role": "system", "text": "You sort support tickets."},
            {"type": "input", "input": {"ticket": "My kettle arrived broken"}},
            {"type": "tool", "tool": {"classify": TICKET_TOOL}},
            {"type": "plan", "plan": [
                {"_tool": "classify", "ticket": "†input.ticket", "_outputPath": output_path, **call}]},
        ],
    }
