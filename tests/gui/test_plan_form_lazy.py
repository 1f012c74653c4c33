"""A plan of hundreds of calls: the form makes each entry's box as it scrolls into view, not all at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QWidget

from contextdeck.gui._message_editor._calls import LAZY_ENTRIES, PENDING_HEIGHT, CallsBody
from contextdeck.gui._window import MainWindow

CALLS = 200
GREET = {"type": "object", "properties": {"who": {"type": "string"}}}
PLANNED = [{"type": "tool", "tool": {"greet": GREET}},
           {"type": "plan", "plan": [{"_tool": "greet", "who": f"guest {n}"} for n in range(CALLS)]}]


def made(body: CallsBody) -> list[int]:
    return [number for number, _box in body.boxes.made()]


def test_a_long_plan_makes_the_boxes_in_view_and_the_rest_as_they_scroll_in(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """Selecting a 200-call plan makes only the boxes around the view (a few dozen widgets, not thousands); the
    last call's box is made once the form scrolls to the bottom, and a box asked for by number is made then;
    an edit in a box made late writes the whole plan, every call kept."""
    window = open_messages(PLANNED, "long-plan.json")
    window.select_message(1)
    body = window.editor.body()
    assert isinstance(body, CallsBody)
    qtbot.waitUntil(lambda: bool(made(body)))
    first = made(body)
    assert first[0] == 0
    assert len(first) < LAZY_ENTRIES
    assert len(body.inner.findChildren(QWidget)) < 40 * len(first) + CALLS + 20
    bar = body.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > CALLS * PENDING_HEIGHT // 2)  # laid out: each pending entry's place
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: CALLS - 1 in made(body))
    assert len(made(body)) < 2 * LAZY_ENTRIES
    middle = body.boxes[CALLS // 2]
    assert middle.fields["who"].text() == f"guest {CALLS // 2}"
    middle.fields["who"].setText("host")
    middle.fields["who"].textEdited.emit("host")
    plan = window.context()[1]["plan"]
    assert len(plan) == CALLS
    assert plan[CALLS // 2] == {"_tool": "greet", "who": "host"}
    assert plan[CALLS // 2 + 1] == {"_tool": "greet", "who": f"guest {CALLS // 2 + 1}"}
