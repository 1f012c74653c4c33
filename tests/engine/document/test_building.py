"""Building a context or parsing a document pauses the cyclic collector, and gives it back as it was."""

from __future__ import annotations

import gc

import pytest

from contextdeck.engine import Context, json_building, parse_document


class _Watching:
    """Whether the collector was on while a context read its messages."""

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def messages(self, count: int) -> object:
        for number in range(count):
            self.seen.append(gc.isenabled())
            yield {"type": "data", "kind": "state", "data": {"n": number}}


def test_a_build_pauses_the_collector_and_turns_it_back_on() -> None:
    watching = _Watching()
    assert gc.isenabled()
    context = Context(watching.messages(3))
    assert watching.seen == [False, False, False]
    assert gc.isenabled()
    assert context.resolve("†state.n").value == 2


def test_a_collector_that_was_off_stays_off_and_nested_builds_share_the_pause() -> None:
    gc.disable()
    try:
        Context([{"type": "text", "text": "hi"}])
        assert not gc.isenabled()
    finally:
        gc.enable()
    with json_building():
        with json_building():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer build is still under way
    assert gc.isenabled()


def test_a_refused_message_gives_the_collector_back() -> None:
    with pytest.raises(TypeError, match="message 1"):
        Context([{"type": "text", "text": "hi"}, 3])  # type: ignore[list-item]
    assert gc.isenabled()
    parse_document(b'[{"type": "text", "text": "hi"}]')
    assert gc.isenabled()
