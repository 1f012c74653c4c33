"""Paranoid mode checks every kept answer against the reference fold, and catches a cache that is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine import Context, Cursor, CursorState
from contextdeck.engine.document import _state
from contextdeck.engine.resolve import _paranoid
from contextdeck.engine.resolve._incremental import _lanes, _watches
from contextdeck.engine.resolve._paranoid import ParanoidError

DOCUMENT = [
    {"type": "state", "state": {"user": {"name": "Ada"}, "n": 1}},
    {"role": "user", "content": "hello"},
    {"type": "state", "state": {"n": 2}, "_outputMethod": "merge"},
]
NEW = {"type": "state", "state": {"n": 3}, "_outputMethod": "merge"}


@pytest.fixture
def paranoid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_paranoid, "ENABLED", True)


def _stale_step(store: object, old: _watches.Fold, *args: object) -> _watches.Fold:
    return old  # a track that misses an appended write


@pytest.mark.usefixtures("paranoid")
def test_a_track_that_misses_an_edit_is_caught_at_the_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    context = Context(DOCUMENT)
    watch = context.watch("†state.n", lambda _: None)
    context.append(NEW)  # right: nothing raised
    assert watch.current.value == 3
    monkeypatch.setattr(_watches, "step", _stale_step)
    with pytest.raises(ParanoidError, match=r"†state\.n .*differs from the reference fold"):
        context.append({**NEW, "state": {"n": 4}})


def test_without_paranoid_mode_the_same_bug_goes_unseen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_paranoid, "ENABLED", False)
    context = Context(DOCUMENT)
    watch = context.watch("†state.n", lambda _: None)
    monkeypatch.setattr(_watches, "step", _stale_step)
    context.append(NEW)
    assert watch.current.value == 2  # wrong, silently: what paranoid mode is for


@pytest.mark.usefixtures("paranoid")
def test_probes_that_do_not_line_up_after_an_edit_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Watchers._results` pairs a fold's probes before and after an edit by position: ones out of line are caught."""
    context = Context(DOCUMENT)
    context.watch("†state.user", lambda _: None)  # (one lane: one track, two probes)
    context.watch("†state.user.name", lambda _: None)
    context.replace(0, {"type": "state", "state": {"user": {"name": "Bo"}, "n": 1}})  # right: nothing raised
    repaired = _watches._repaired

    def shuffled(*args: Any) -> _watches.Fold:
        fold = repaired(*args)
        fold.state.probes.reverse()
        return fold

    monkeypatch.setattr(_watches, "_repaired", shuffled)
    with pytest.raises(ParanoidError, match=r"Watchers\._results: the probes before the edit follow"):
        context.replace(0, {"type": "state", "state": {"user": {"name": "Cy"}, "n": 1}})


@pytest.mark.usefixtures("paranoid")
def test_a_path_log_kept_past_an_edit_is_caught_at_the_next_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    context = Context(DOCUMENT)
    assert context.resolve("†state.user.name").value == "Ada"
    monkeypatch.setattr(_lanes.LaneLogs, "touch", lambda *args: None)  # edits no longer drop path logs
    context.insert(1, {"type": "state", "state": {"user": {"name": "Bo"}}, "_outputMethod": "merge"})
    with pytest.raises(ParanoidError, match=r"Context\.resolve of †state\.user\.name"):
        context.resolve("†state.user.name")


@pytest.mark.usefixtures("paranoid")
def test_a_state_at_the_cursor_kept_past_an_edit_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_state.CursorState, "_current", lambda self: self._folds)  # edits no longer drop its folds
    context = Context(DOCUMENT)
    state = CursorState(context)
    assert [s.value for s in state.at()] == [{"user": {"name": "Ada"}, "n": 2}]
    context.replace(2, NEW)
    with pytest.raises(ParanoidError, match="CursorState of †state"):
        state.at()


@pytest.mark.usefixtures("paranoid")
def test_cursor_watches_left_alone_by_an_edit_are_checked_where_they_are() -> None:
    context = Context(DOCUMENT)
    cursor = Cursor(context, 1)
    seen = cursor.watch("†state.n", lambda _: None)
    context.insert(0, {"role": "user", "content": "first"})  # pushes message 0 out of the first 1: no state
    assert not seen.current.found
    context.insert(0, DOCUMENT[0])
    assert seen.current.value == 1


def test_the_environment_variable_turns_it_on() -> None:
    code = "from contextdeck.engine.resolve import _paranoid; print(_paranoid.ENABLED)"
    for value, expected in (("1", "True"), ("", "False"), ("0", "False")):
        env = {**os.environ, "CONTEXTDECK_PARANOID": value}
        ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert ran.stdout.strip() == expected


@settings(max_examples=3)
@given(st.integers())
def test_property_tests_run_in_paranoid_mode(number: int) -> None:
    """tests/engine/conftest.py turns it on for every `@given` test of the engine."""
    assert _paranoid.ENABLED


def test_other_tests_run_as_the_environment_says() -> None:
    assert _paranoid.ENABLED is (os.environ.get("CONTEXTDECK_PARANOID", "") not in ("", "0"))
