"""The tests' fake OpenAI server (tests/fake_llm.py) leaves nothing running behind it."""

from __future__ import annotations

import contextlib
import http.client
import threading
from urllib.parse import urlsplit

from fake_llm import FakeLLM, Reply


def connect(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)


def ask(connection: http.client.HTTPConnection) -> int:
    connection.request("POST", "/v1/chat/completions", b"{}", {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    return response.status


def test_leaving_the_server_ends_every_handler_thread() -> None:
    """`__exit__` returns once each handler thread has ended, so that none frees objects during a later test:
    the one of a connection the client still keeps alive, and the one of a reply still delayed."""
    before = set(threading.enumerate())
    asked = threading.Event()  # waited on in small steps, never set: a pause

    def ask_and_wait(url: str) -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):  # the server left without answering
            ask(connect(url))

    with FakeLLM() as server:
        kept = connect(server.url)
        server.push(Reply.json({}), Reply.json({}, delay=30.0))
        assert ask(kept) == 200  # HTTP/1.1: the connection stays open for the next request
        waiting = threading.Thread(target=ask_and_wait, args=(server.url,))
        waiting.start()
        for _ in range(1000):  # until the delayed request is in (its handler then waits out the delay)
            if len(server.requests) == 2:
                break
            asked.wait(0.01)
        assert len(server.requests) == 2
    left = set(threading.enumerate()) - before - {waiting}
    kept.close()
    waiting.join()
    assert not left, left
