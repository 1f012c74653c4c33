"""A plan of hundreds of calls: the form makes each entry's box as it scrolls into view, not all at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QWidget

from contextdeck.gui._message_editor._calls import LAZY_ENTRIES, PENDING_HEIGHT, CallBox, CallsBody, GroupBox
from contextdeck.gui._window import MainWindow

CALLS = 200
GREET = {"type": "object", "properties": {"who": {"type": "string"}}}
PLANNED = [{"type": "tool", "tool": {"greet": GREET}},
           {"type": "plan", "plan": [{"_tool": "greet", "who": f"guest {n}"} for n in range(CALLS)]}]
# Calls of every height, a group every third entry, and a problem in each call (the list of problems is long).
WIDE = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(8)}, "required": ["p0", "p7"]}
UNEVEN = [{"type": "tool", "tool": {"greet": WIDE}},
          {"type": "plan", "plan": [{"group": ["all", [{"_tool": "greet", "p1": "x"}, {"_tool": "greet", "p1": "y"}]]}
                                    if n % 3 == 0 else {"_tool": "greet", "p0": f"g{n}"} for n in range(CALLS)]}]


def made(body: CallsBody) -> list[int]:
    return [number for number, _box in body.boxes.made()]


def laid_out(body: CallsBody) -> bool:
    """Every box made has its place and height in the form (the form's layout has run since)."""
    boxes = [widget for widget in body.entries() if isinstance(widget, CallBox | GroupBox)]
    return all(widget.height() == widget.sizeHint().height() for widget in boxes) and \
        body.inner.height() == body.inner.sizeHint().height()


def blanks(body: CallsBody) -> list[int]:
    """The entries in view that are still stand-ins."""
    view = body.viewport().rect().translated(0, body.verticalScrollBar().value())
    return [entry for entry, widget in enumerate(body.entries())
            if not isinstance(widget, CallBox | GroupBox) and widget.geometry().intersects(view)]


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


def test_every_entry_in_view_is_made_wherever_the_form_is_scrolled(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """Scrolled to a third, to the middle and back near the top: each entry the view shows is a box, not a blank
    stand-in, with calls and groups of many heights and the plan's long list of problems shown below them."""
    window = open_messages(UNEVEN, "long-plan.json")
    window.select_message(1)
    body = window.editor.body()
    assert isinstance(body, CallsBody)
    bar = body.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > CALLS * PENDING_HEIGHT // 2)
    assert body.problems.isVisible()

    for fraction in (3, 2, 7, 5):
        bar.setValue(bar.maximum() // fraction)
        qtbot.waitUntil(lambda: not blanks(body))


def test_the_list_of_problems_wraps_without_making_the_form_height_for_width(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """The problems under a long plan wrap at the form's width, every line shown; the form's layout is not
    height-for-width (which the scroll area measures again over every entry at each resize)."""
    window = open_messages(UNEVEN, "long-plan.json")
    window.select_message(1)
    body = window.editor.body()
    assert isinstance(body, CallsBody)
    qtbot.waitUntil(lambda: body.problems.isVisible() and body.problems.width() > 100)
    assert not body.inner.layout().hasHeightForWidth()
    problems = body.problems
    qtbot.waitUntil(lambda: problems.height() == problems.heightForWidth(problems.width()))
    lines = problems.text().count("\n") + 1
    assert problems.height() >= lines * problems.fontMetrics().lineSpacing()


def test_a_plan_selected_again_is_not_checked_or_marked_again(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow], monkeypatch: Any) -> None:
    """Back on the same plan, against the same tools and written paths, its problems are as they were: the
    engine's check is not run again and no field's style is set again (each such set re-polishes the field)."""
    from contextdeck.gui._message_editor import _calls

    window = open_messages(UNEVEN, "long-plan.json")
    window.select_message(1)
    body = window.editor.body()
    assert isinstance(body, CallsBody)
    qtbot.waitUntil(lambda: bool(made(body)))

    def marks() -> list[Any]:
        return [widget.property("problems") for _number, box in body.boxes.made()
                for widget in (box.tool, *box.fields.values())]

    qtbot.waitUntil(lambda: any(marks()))
    marked = marks()
    checks: list[int] = []
    real = _calls.call_problems
    monkeypatch.setattr(_calls, "call_problems", lambda *args: checks.append(1) or real(*args))
    styled: list[QWidget] = []
    monkeypatch.setattr(QWidget, "setStyleSheet", lambda widget, sheet: styled.append(widget))
    window.select_message(0)
    window.select_message(1)
    assert window.editor.body() is body
    assert checks == []
    assert styled == []
    assert marks()[:len(marked)] == marked


def test_the_scroll_bar_keeps_its_length_as_the_boxes_are_made(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """An entry not made yet stands in at the height its box will have (its fields counted, a group's calls
    added), so the form's height hardly changes as the form is scrolled through and the boxes are made."""
    window = open_messages(UNEVEN, "long-plan.json")
    window.select_message(1)
    body = window.editor.body()
    assert isinstance(body, CallsBody)
    bar = body.verticalScrollBar()
    # The first boxes' heights count only once the form's layout has run: a loaded machine can read between.
    qtbot.waitUntil(lambda: bar.maximum() > CALLS * PENDING_HEIGHT // 2 and bool(made(body)) and laid_out(body))
    first = bar.maximum()
    for fraction in (0.3, 0.6, 1.0):
        bar.setValue(int(bar.maximum() * fraction))
        qtbot.waitUntil(lambda: not blanks(body) and laid_out(body))
        assert abs(bar.maximum() - first) <= first // 100
