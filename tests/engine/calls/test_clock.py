"""The default clock: ISO 8601 UTC to the second, one string for all the answers of one second."""

from __future__ import annotations

import datetime as dt
import time
from types import SimpleNamespace

import pytest

from contextdeck.engine import utc_now
from contextdeck.engine.calls import _outputs


def at(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """`utc_now` reads the system clock as `seconds` since the epoch."""
    monkeypatch.setattr(_outputs, "time", SimpleNamespace(time=lambda: seconds, gmtime=time.gmtime,
                                                          strftime=time.strftime))


def test_the_answers_of_one_second_are_one_string(monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, 1_795_000_000.25)
    first = utc_now()
    at(monkeypatch, 1_795_000_000.75)
    assert utc_now() is first
    assert first == dt.datetime.fromtimestamp(1_795_000_000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    at(monkeypatch, 1_795_000_001.0)
    assert utc_now() == "2026-11-18T11:06:41Z"


def test_it_tells_the_time_now() -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    told = dt.datetime.strptime(utc_now(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    assert before <= told <= dt.datetime.now(dt.UTC)
