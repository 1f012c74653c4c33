"""The state view shows a newly computed state a few rows per turn of the event loop, and ends whole."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect

from contextdeck.engine import Context
from contextdeck.gui._state import ROWS_PER_PART, StateModel, StateView

INSTANCES = 2 * ROWS_PER_PART + 3  # three parts when every instance's value changes


def _rows(model: StateModel) -> list[tuple[Any, ...]]:
    return [(model.index(row, 0).data(), model.index(row, 1).data(), model.index(row, 2).data())
            for row in range(model.rowCount())]


class Paints(QObject):
    """The rectangles of each paint a widget is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.regions: list[list[QRect]] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.regions.append(list(event.region()))  # type: ignore[attr-defined]
        return False


def _jump_context() -> Context:
    """Each instance set twice: a jump from the first `INSTANCES` messages to all of them changes every value."""
    return Context([{"type": "state", "_instance": f"i{n % INSTANCES:02d}", "data": {"v": n}}
                    for n in range(2 * INSTANCES)])


def _view_at(qtbot: Any, context: Context, at: int, height: int) -> StateView:
    view = StateView()
    qtbot.addWidget(view)
    view.resize(500, height)
    view.show()
    qtbot.waitExposed(view)
    view.refresh(context, at, None)
    qtbot.waitUntil(lambda: not view.is_busy() and view.state_model.rowCount() == INSTANCES)
    return view


def test_a_far_jump_is_shown_a_part_per_turn_and_ends_as_the_state_at_the_cursor(qtbot: Any) -> None:
    """After a jump that changes every identity, the first part's rows show the new values while the view is
    still busy and the later rows still show the old ones (their repaint comes on later turns); then every row
    is the state at the cursor, and `updated` says so once."""
    context = _jump_context()
    view = _view_at(qtbot, context, INSTANCES, 400)
    model = view.state_model
    before = _rows(model)
    assert len(before) == INSTANCES
    seen: list[tuple[bool, list[tuple[Any, ...]]]] = []
    model.dataChanged.connect(lambda *_: seen.append((view.is_busy(), _rows(model))))
    updates: list[bool] = []
    view.updated.connect(lambda: updates.append(True))
    view.refresh(context, 2 * INSTANCES, 2 * INSTANCES - 1)
    qtbot.waitUntil(lambda: not view.is_busy())
    parts = [shown for n, shown in enumerate(seen) if n == 0 or shown != seen[n - 1]]  # a signal per row of a part
    assert len(parts) == 3
    busy, first = parts[0]
    assert busy
    assert all(new != old for new, old in zip(first[:ROWS_PER_PART], before[:ROWS_PER_PART], strict=True))
    assert first[ROWS_PER_PART:] == before[ROWS_PER_PART:]
    after = StateModel()
    after.refresh(context, 2 * INSTANCES, 2 * INSTANCES - 1)
    assert _rows(model) == _rows(after)
    assert updates == [True]


def test_each_part_of_a_far_jump_repaints_its_own_rows(qtbot: Any) -> None:
    """After a jump that changes every identity, the first part's repaint covers that part's rows and no row after
    them (a `dataChanged` over a range of rows had the tree repaint about twice as many)."""
    context = _jump_context()
    view = _view_at(qtbot, context, INSTANCES, 900)
    model = view.state_model
    assert view.viewport().rect().contains(view.visualRect(model.index(INSTANCES - 1, 0)))  # every row on screen
    part_bottom = view.visualRect(model.index(ROWS_PER_PART - 1, 0)).bottom()
    paints = Paints()
    view.viewport().installEventFilter(paints)
    try:
        view.refresh(context, 2 * INSTANCES, None)
        qtbot.waitUntil(lambda: not view.is_busy() and len(paints.regions) >= 2)
    finally:
        view.viewport().removeEventFilter(paints)
    first = paints.regions[0]
    assert first
    assert max(rect.bottom() for rect in first) == part_bottom, (part_bottom, first)
