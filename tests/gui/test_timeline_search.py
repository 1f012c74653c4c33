"""The timeline filter: debounced, searched in slices, in values too, exact through edits; Go to message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as limits
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QInputDialog

from contextdeck.engine import Context, Insert, Move, Remove, Replace
from contextdeck.gui import _timeline_search
from contextdeck.gui._timeline_model import TimelineModel
from contextdeck.gui._timeline_search import FilteredTimeline, Haystacks, Query, TimelineSearch
from contextdeck.gui._window import MainWindow

NEEDLE = "zebra-42"
MESSAGES: list[dict[str, Any]] = [
    {"type": "text", "role": "user", "text": "hi"},
    {"type": "state", "_instance": "①", "data": {"x": 1}},
    {"type": "plan", "plan": [{"_tool": "a", "_outputPath": "†state.x"}, {"_tool": "b", "q": "†state.x"}]},
    {"type": "state", "data": {"y": [1, 2]}},
    # The needle is past what the one-line summary shows: only a search in the values finds it.
    {"type": "input", "input": {"notes": "x" * 400 + NEEDLE}},
]


def search(model: TimelineModel, text: str, qtbot: Any) -> list[int]:
    runner = TimelineSearch()
    with qtbot.waitSignal(runner.finished) as done:
        runner.start(Haystacks(model), model, Query.parse(text))
    return list(done.args[1])


@pytest.mark.parametrize(("text", "rows"), [
    ("kind:state", [1, 3]), ("@①", [1]), ("instance:①", [1]), ("hi", [0]), ("kind:plan b", [2]),
    ("KIND:INPUT", [4]), (NEEDLE, [4]), ("zebra kind:state", []), ("solution", [5]), ("nothing-like-this", []),
])
def test_the_query_matches_kind_instance_words_and_values(qtbot: Any, text: str, rows: list[int]) -> None:
    """Each part of the query narrows the rows; words are found in the message's values, not only its summary."""
    model = TimelineModel(Context([dict(m) for m in MESSAGES]), {"calls": [{"_tool": "z"}]})
    assert search(model, text, qtbot) == rows


_TOKENS = st.sampled_from(["kind:state", "kind:plan", "kind:input", "@①", "instance:②", "s", "st", "state", "ta",
                           "x", "hi", "zebra", "zebra-42", "b", "_tool"])


@limits(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_TOKENS, max_size=3), st.lists(_TOKENS, max_size=3))
def test_a_narrower_query_matches_only_rows_of_the_wider_one(qtbot: Any, wider: list[str], narrower: list[str]) -> None:
    """What `narrows` promises (typing on searches only the rows shown): each row it matches, the other does."""
    model = TimelineModel(Context([dict(m) for m in MESSAGES]), {"calls": [{"_tool": "z"}]})
    haystacks = Haystacks(model)
    first, second = Query.parse(" ".join(wider)), Query.parse(" ".join(narrower))
    if second.narrows(first):
        for row in range(model.rowCount()):
            assert not haystacks.matches(second, row) or haystacks.matches(first, row), row


def test_typing_on_narrows_looks_only_at_the_rows_shown(qtbot: Any) -> None:
    """`ref` then `refund`, `kind:state` then `kind:state x`: narrower; a new kind, instance or word elsewhere: not."""
    assert Query.parse("kind:state refund").narrows(Query.parse("kind:state ref"))
    assert Query.parse("kind:state x").narrows(Query.parse("kind:state"))
    assert Query.parse("@① kind:state").narrows(Query.parse("kind:state kind:input"))
    assert not Query.parse("kind:state").narrows(Query.parse("kind:st"))
    assert not Query.parse("kind:state kind:input").narrows(Query.parse("kind:state"))
    assert not Query.parse("fund").narrows(Query.parse("refund"))


def test_the_filtered_rows_obey_qt_rules_and_follow_every_edit(qtbot: Any, qtmodeltester: Any) -> None:
    """Inserted, replaced, removed and moved messages keep the shown rows exactly those that match."""
    context = Context([dict(m) for m in MESSAGES])
    model = TimelineModel(context)
    haystacks = Haystacks(model)
    proxy = FilteredTimeline()
    proxy.setSourceModel(model)
    query = Query.parse("kind:state")
    proxy.set_result(haystacks, query, search(model, "kind:state", qtbot))
    qtmodeltester.check(proxy, force_py=True)
    for edit in (Insert(0, {"type": "state", "data": {"z": 1}}), Insert(6, {"type": "text", "text": "t"}),
                 Replace(1, {"type": "text", "text": "no longer state"}), Replace(0, {"type": "state", "data": {}}),
                 Move(4, 0), Move(0, 6), Remove(2), Remove(0)):
        context.apply(edit)
        expected = [row for row in range(model.rowCount()) if haystacks.matches(query, row)]
        assert proxy.source_rows() == expected, edit
        for position, row in enumerate(expected):
            assert proxy.mapToSource(proxy.index(position, 0)).row() == row
            assert proxy.mapFromSource(model.index(row, 0)).row() == position


def test_a_replaced_message_is_searched_in_its_new_values(qtbot: Any) -> None:
    """The text kept for a message is dropped when the message is replaced: an edit is found at once."""
    context = Context([dict(m) for m in MESSAGES])
    model = TimelineModel(context)
    assert search(model, "walrus", qtbot) == []
    context.apply(Replace(0, {"type": "text", "role": "user", "text": "a walrus"}))
    assert search(model, "walrus", qtbot) == [0]


@pytest.fixture
def window(open_window: Any, tmp_path: Path) -> MainWindow:
    """The window on a document of 600 messages: a search takes several slices when slices are short."""
    path = tmp_path / "doc.json"
    messages = [{"type": "state", "_instance": f"i{n % 7}", "data": {"n": n, "word": f"w{n}"}} for n in range(600)]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return open_window(path)  # type: ignore[no-any-return]


def shown_messages(window: MainWindow) -> list[int]:
    model = window.timeline.table.model()
    return [model.index(row, 0).data(Qt.ItemDataRole.UserRole + 5) for row in range(model.rowCount())]


def test_typing_a_filter_searches_once_when_typing_pauses(qtbot: Any, window: MainWindow) -> None:
    """Ten keystrokes in a row start one search, for the whole text, and show its rows."""
    started: list[Query] = []
    window.timeline.search.started.connect(started.append)
    qtbot.keyClicks(window.timeline.filter_box, "w59 @i3")  # w59 and w590..w599, of instance i3
    assert started == []  # still typing (within the pause)
    qtbot.waitUntil(lambda: not window.timeline.is_searching())
    assert started == [Query.parse("w59 @i3")]
    assert shown_messages(window) == [59, 591, 598]
    assert window.timeline.filter_status.text() == "3 of 600"


def test_a_search_typed_over_never_shows_its_rows(qtbot: Any, window: MainWindow,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A query changed while its search runs is abandoned: only the newest query's rows are ever shown."""
    monkeypatch.setattr(_timeline_search, "SLICE_S", 0.0)
    monkeypatch.setattr(_timeline_search, "CHECK_EVERY", 1)  # one row per turn of the event loop
    panel = window.timeline
    shown: list[Query] = []
    panel._filter.modelReset.connect(lambda: shown.append(panel._filter.query))
    progress: list[int] = []
    panel.search.progress.connect(lambda done, total: progress.append(done))
    panel.filter_box.setText("w1")
    qtbot.waitUntil(lambda: len(progress) > 5)  # its search is under way
    assert panel.search.is_busy()
    panel.filter_box.setText("w2")
    qtbot.waitUntil(lambda: not panel.is_searching(), timeout=20000)
    assert [q for q in shown if q] == [Query.parse("w2")]
    assert shown_messages(window) == [n for n in range(600) if str(n).startswith("2")]


def test_showing_the_rows_keeps_the_selected_message_without_showing_it_again(qtbot: Any, window: MainWindow) -> None:
    """The filtered rows replace the table's model with the selection kept: the editor and views are not redone."""
    window.select_message(59)
    announced: list[int] = []
    window.timeline.currentChanged.connect(lambda index: announced.append(index.row()))
    qtbot.keyClicks(window.timeline.filter_box, "w59")
    qtbot.waitUntil(lambda: not window.timeline.is_searching())
    assert shown_messages(window) == [59, *range(590, 600)]
    assert window.timeline.current_index().row() == 59
    window.timeline.filter_box.clear()
    assert window.timeline.current_index().row() == 59
    assert announced == []
    window.select_message(60)
    assert announced == [60]


def test_typing_on_searches_only_the_rows_shown(qtbot: Any, window: MainWindow,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`w5` shows 111 rows; typing `9` after it looks at those 111 rows, not the 600, and finds the right ones."""
    monkeypatch.setattr(_timeline_search, "SLICE_S", 0.0)
    monkeypatch.setattr(_timeline_search, "CHECK_EVERY", 1)  # one row per turn: progress says how many in all
    panel = window.timeline
    qtbot.keyClicks(panel.filter_box, "w5")
    qtbot.waitUntil(lambda: not panel.is_searching())
    assert len(shown_messages(window)) == 111  # w5, w50-w59, w500-w599
    totals: set[int] = set()
    panel.search.progress.connect(lambda done, total: totals.add(total))
    qtbot.keyClicks(panel.filter_box, "9")
    qtbot.waitUntil(lambda: not panel.is_searching())
    assert totals == {111}
    assert shown_messages(window) == [59, *range(590, 600)]
    panel.filter_box.setText("w6")  # not narrower: every row is searched
    qtbot.waitUntil(lambda: not panel.is_searching())
    assert totals == {111, 600}
    assert shown_messages(window) == [6, *range(60, 70)]


def test_an_edit_while_filtered_keeps_the_rows_exact(qtbot: Any, window: MainWindow) -> None:
    """Insert a matching message, make another stop matching: the filtered table follows without a new search."""
    panel = window.timeline
    qtbot.keyClicks(panel.filter_box, "@i0")
    qtbot.waitUntil(lambda: not panel.is_searching())
    assert shown_messages(window) == list(range(0, 600, 7))
    started: list[Query] = []
    panel.search.started.connect(started.append)
    window.apply_edit(Insert(1, {"type": "state", "_instance": "i0", "data": {}}))
    window.apply_edit(Replace(8, {"type": "text", "text": "was i0"}))  # message 7 before the insert
    assert shown_messages(window) == [0, 1, *range(15, 601, 7)]
    assert started == []
    window.session.undo_stack.undo()
    window.session.undo_stack.undo()
    assert shown_messages(window) == list(range(0, 600, 7))


def test_clearing_the_filter_shows_every_row_and_keeps_the_selection(qtbot: Any, window: MainWindow) -> None:
    """Escape-free path: the clear button (an empty box) brings every row back at once, selection kept."""
    panel = window.timeline
    qtbot.keyClicks(panel.filter_box, "w77")
    qtbot.waitUntil(lambda: not panel.is_searching())
    panel.table.setCurrentIndex(panel.table.model().index(0, 0))
    assert window.selected_message() == 77
    panel.filter_box.clear()
    assert panel.table.model().rowCount() == 600
    assert not panel.is_searching()
    assert window.selected_message() == 77
    assert panel.table.currentIndex().row() == 77


def test_go_to_message_selects_it_even_when_the_filter_hides_it(qtbot: Any, window: MainWindow) -> None:
    """Ctrl+G asks for a number; Enter selects that message (clearing a filter that hides it)."""
    panel = window.timeline
    qtbot.keyClicks(panel.filter_box, "@i1")
    qtbot.waitUntil(lambda: not panel.is_searching())
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, QInputDialog)
    assert dialog.intMaximum() == 599
    dialog.setIntValue(123)
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    assert window.selected_message() == 123
    assert panel.filter_box.text() == ""
    assert panel.table.currentIndex().row() == 123
