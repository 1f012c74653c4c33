"""A loopback HTTP server that serves a schema and counts the requests it gets: proof that nothing fetches."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class CountingServer:
    """`url` is where it listens; `hits` the paths asked for, in order."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.hits: list[str] = []


@contextmanager
def counting_server() -> Iterator[CountingServer]:
    """Serve `{"type": "string"}` at every path on 127.0.0.1, counting each GET, until the block ends."""
    server: CountingServer | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            assert server is not None
            server.hits.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server = CountingServer(f"http://127.0.0.1:{httpd.server_address[1]}")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


def remote_document(base: str) -> list[dict[str, Any]]:
    """A data schema and a tool schema that both `$ref` the server, and a call of that tool."""
    return [
        {"type": "input", "input": {"s": 1}, "schema": {"$ref": f"{base}/data.json"}},
        {"type": "tool", "tool": {"t": {"type": "object", "properties": {"s": {"$ref": f"{base}/tool.json"}}}}},
        {"type": "state", "data": {}},
        {"type": "plan", "plan": [{"_tool": "t", "s": 1, "_outputPath": "†state.x"}]},
    ]
