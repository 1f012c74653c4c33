"""The state view shows a newly computed state a few rows per turn of the event loop, and ends whole."""

from __future__ import annotations

from typing import Any

from contextdeck.engine import Context
from contextdeck.gui._state import ROWS_PER_PART, StateModel, StateView

INSTANCES = 2 * ROWS_PER_PART + 3  # three parts when every instance's value changes


def _rows(model: StateModel) -> list[tuple[Any, ...]]:
    return [(model.index(row, 0).data(), model.index(row, 1).data(), model.index(row, 2).data())
            for row in range(model.rowCount())]


def test_a_far_jump_is_shown_a_part_per_turn_and_ends_as_the_state_at_the_cursor(qtbot: Any) -> None:
    """After a jump that changes every identity, the first part's rows show the new values while the view is
    still busy and the later rows still show the old ones (their repaint comes on later turns); then every row
    is the state at the cursor, and `updated` says so once."""
    context = Context([{"type": "state", "_instance": f"i{n % INSTANCES:02d}", "data": {"v": n}}
                       for n in range(2 * INSTANCES)])
    view = StateView()
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    view.refresh(context, INSTANCES, None)
    qtbot.waitUntil(lambda: not view.is_busy())
    model = view.state_model
    before = _rows(model)
    assert len(before) == INSTANCES
    seen: list[tuple[bool, list[tuple[Any, ...]]]] = []
    model.dataChanged.connect(lambda *_: seen.append((view.is_busy(), _rows(model))))
    updates: list[bool] = []
    view.updated.connect(lambda: updates.append(True))
    view.refresh(context, 2 * INSTANCES, 2 * INSTANCES - 1)
    qtbot.waitUntil(lambda: not view.is_busy())
    assert len(seen) == 3
    busy, first = seen[0]
    assert busy
    assert all(new != old for new, old in zip(first[:ROWS_PER_PART], before[:ROWS_PER_PART], strict=True))
    assert first[ROWS_PER_PART:] == before[ROWS_PER_PART:]
    after = StateModel()
    after.refresh(context, 2 * INSTANCES, 2 * INSTANCES - 1)
    assert _rows(model) == _rows(after)
    assert updates == [True]
