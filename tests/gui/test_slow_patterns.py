"""A tool schema's slow `pattern` against a plan's parameters: the window's thread never waits for its search, and
shows in the end what `validate` reports."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from contextdeck.engine import Context, validate
from contextdeck.engine.protocol import _pattern_searches
from contextdeck.gui._inspector._calls import DETAIL
from contextdeck.gui._window import MainWindow
from pattern_searches import Searches

EVIL = "^(a|a)+$"  # backtracks without end on "aaaa…!"
SLOW_TEXT = "a" * 40 + "!"
CHECK = {"_tool": "check", "_outputPath": "†state.out"}
DOCUMENT = [
    {"type": "text", "role": "system", "text": "probe"},
    {"type": "input", "data": {"id": SLOW_TEXT}, "schema": {"type": "object"}},
    {"type": "state", "data": {}, "schema": {"type": "object"}},
    {"type": "tool", "tool": {"check": {"type": "object", "properties": {
        "id": {"type": "string", "pattern": EVIL}, "_outputPath": {"type": "string", "const": "†state.out"}},
        "required": ["id"]}}},
    {"type": "plan", "plan": [*[{**CHECK, "id": "†input.id"}] * 2, *[{**CHECK, "id": SLOW_TEXT}] * 3]},
]
LITERAL_CALLS = (2, 3, 4)


class WindowSearches(Searches):
    """Each search of the slow text: whether on the window's thread, and the time it was given."""

    def record(self, string: str, timeout: float) -> None:
        if string == SLOW_TEXT:
            self.made.append((threading.current_thread() is threading.main_thread(), timeout))

    def on_the_windows_thread(self) -> list[float]:
        return [given for on_main, given in self.made if on_main]


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> WindowSearches:
    """The searches of the slow text from here on, none kept from before."""
    return WindowSearches().install(monkeypatch)


def _details(window: MainWindow) -> list[str]:
    model = window.inspector.model  # type: ignore[attr-defined]
    return [model.data(model.index(row, DETAIL)) for row in range(model.rowCount())]


def _reported() -> list[str]:
    """What `validate` says of the literal calls: what the window must show in the end (the searches it kept
    forgotten, the records of them too)."""
    reported = [problem.reason for problem in validate(Context(DOCUMENT)) if problem.severity == "error"]
    _pattern_searches._known.clear()
    return reported


def test_the_calls_panel_leaves_a_slow_search_to_a_worker_and_shows_its_answer(
        qtbot: Any, searches: WindowSearches, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """Opening and editing a document whose calls give a slow pattern its text, the window's thread tries each
    search at most once per check and only for `SLOW_SEARCH_S` (a worker searches it with the whole budget), and
    the calls panel shows, once searched, what `validate` says; after the edit, the search is not made again."""
    reported = _reported()
    searches.made.clear()
    window = open_messages(DOCUMENT, "slow.json")
    qtbot.waitUntil(lambda: all("took too long" in _details(window)[row] for row in LITERAL_CALLS), timeout=20_000)
    assert [given for given in searches.on_the_windows_thread() if given > _pattern_searches.SLOW_SEARCH_S] == []
    assert (False, _pattern_searches.PATTERN_BUDGET_S) in searches.made
    details = _details(window)
    assert len(reported) == len(LITERAL_CALLS)
    assert [detail for row, detail in enumerate(details) if row in LITERAL_CALLS] == reported

    searches.made.clear()
    model = window.inspector.model  # type: ignore[attr-defined]
    with qtbot.waitSignal(model.refreshed, timeout=20_000):
        window.commands.replace(0, {"type": "text", "role": "system", "text": "probe!"}, "Edit")
    assert searches.made == []
    assert _details(window) == details


def test_the_plan_form_leaves_a_slow_search_to_a_worker_and_shows_its_answer(
        qtbot: Any, searches: WindowSearches, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """The plan form's problems of its literal calls: said as still being searched while a worker searches, then as
    `validate` says them, the window's thread never giving the search more than `SLOW_SEARCH_S`."""
    reported = _reported()
    window = open_messages(DOCUMENT[:-1], "tools.json")
    searches.made.clear()
    window.commands.insert(len(DOCUMENT) - 1, DOCUMENT[-1], "Insert the plan")
    window.select_message(len(DOCUMENT) - 1)
    plan = window.editor.body()
    qtbot.waitUntil(lambda: plan.problems.text().count("took too long") == len(LITERAL_CALLS), timeout=20_000)
    assert [given for given in searches.on_the_windows_thread() if given > _pattern_searches.SLOW_SEARCH_S] == []
    assert "still being searched" not in plan.problems.text()
    said = {reason.split("$.id: ")[1] for reason in reported}  # (the form says each at its call's field)
    assert len(said) == 1
    assert plan.problems.text().count(said.pop()) == len(LITERAL_CALLS)
