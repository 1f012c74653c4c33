"""What the window's GUI thread no longer does itself, so that no action blocks it long (issue 31)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject

from contextdeck.engine import Activities, Context, Watch
from contextdeck.gui._inspector import _calls
from contextdeck.gui._lines import line_starts
from contextdeck.gui._slices import slices
from contextdeck.gui._window import MainWindow

INSTANCES = [f"p{n}" for n in range(4)]
PLANNED = [
    {"type": "tool", "tool": {"classify": {"type": "object", "properties": {"text": {"type": "string"}}}}},
    *({"type": "input", "_instance": name, "input": {"text": f"post of {name}"}} for name in INSTANCES),
    {"type": "plan", "plan": [{"_tool": "classify", "text": "†input.text", "_outputPath": "†state.verdict"}]},
]


def test_the_calls_reads_are_folded_by_the_loader_not_the_window(
        monkeypatch: pytest.MonkeyPatch, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """Opening a document, the watches on its calls' reads (one lane fold each) are made on the loader's worker
    thread before the hand-over; the calls panel keeps those very watches and makes none of its own."""
    made: list[tuple[str, str | None, bool]] = []
    watch = Context.watch

    def recording(self: Context, expr: str, callback: Any, instance: str | None = None) -> Any:
        made.append((expr, instance, threading.current_thread() is threading.main_thread()))
        return watch(self, expr, callback, instance)

    monkeypatch.setattr(Context, "watch", recording)
    window = open_messages(PLANNED, "planned.json")
    model = window.inspector.model  # type: ignore[attr-defined]
    assert model.rowCount() == len(INSTANCES)
    reads = [(expr, instance, on_main) for expr, instance, on_main in made if expr == "†input.text"]
    assert sorted(instance for _e, instance, _m in reads) == INSTANCES
    assert not any(on_main for _e, _i, on_main in reads)


def _big(messages: list[Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A file of `messages`, a big document to the calls panel."""
    monkeypatch.setattr(_calls, "LARGE_CONTEXT", len(messages))
    path = tmp_path / "big.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def test_a_big_documents_calls_are_judged_in_a_turn_after_it_is_shown(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, open_window: Any) -> None:
    """When a big document replaces the open one, the calls panel is emptied at once and judges the new calls
    (an Execution over the whole run record) in a later turn of the event loop, not in the hand-over's."""
    path = _big(PLANNED, monkeypatch, tmp_path)
    window = open_window(None)
    model = window.inspector.model  # type: ignore[attr-defined]
    at_hand_over: list[int] = []
    window.session.documentReplaced.connect(lambda: at_hand_over.append(model.rowCount()))
    with qtbot.waitSignal(window.session.documentReplaced, timeout=10000):
        window.session.open(path)
    assert at_hand_over == [0]
    qtbot.waitUntil(lambda: model.rowCount() == len(INSTANCES))
    assert model.execution is not None
    assert model.execution.context is window.context()


def test_a_big_documents_hand_over_says_no_calls_only_once_they_are_judged(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, open_window: Any) -> None:
    """While a big document's calls are being judged, the calls panel does not say it has none (its rows are only
    empty until then); once judged, a document without calls says so."""
    path = _big([message for message in PLANNED if message["type"] != "plan"], monkeypatch, tmp_path)
    window = open_window(None)
    panel = window.inspector.panel  # type: ignore[attr-defined]
    at_hand_over: list[str] = []
    window.session.documentReplaced.connect(lambda: at_hand_over.append(panel.message.text()))
    with qtbot.waitSignal(window.session.documentReplaced, timeout=10000):
        window.session.open(path)
    assert at_hand_over == [""]
    qtbot.waitUntil(lambda: not panel.model.judging)
    assert panel.message.text().startswith("No calls: ")


def test_a_big_document_reopened_paints_its_calls_once_in_the_columns_they_had(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, open_window: Any) -> None:
    """While a big document's calls are judged the calls view is empty, its columns as wide as they were (not
    fitted to no rows); the judged rows come in those columns, laid out in the turn they come in, and are painted
    in that layout, never again a turn later for columns fitted back (the tool column) or a scroll bar come back (a
    repaint of the same layout, which a loaded machine's window system may ask for, is no relayout)."""
    from PySide6.QtCore import QEvent

    path = _big(PLANNED, monkeypatch, tmp_path)
    window = open_window(path)
    panel = window.inspector.panel  # type: ignore[attr-defined]
    view, model = panel.view, panel.model
    qtbot.waitUntil(lambda: model.rowCount() == len(INSTANCES) and window.document.is_shown())
    widths = [view.columnWidth(column) for column in range(model.columnCount())]
    painted: list[tuple[int, list[int], int, bool]] = []  # rows, columns' widths, viewport width, scroll bar shown

    class Paints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and model.rowCount():
                columns = [view.columnWidth(column) for column in range(model.columnCount())]
                painted.append((model.rowCount(), columns, view.viewport().width(),
                                view.verticalScrollBar().isVisible()))
            return False

    paints = Paints()
    view.viewport().installEventFilter(paints)
    judging: list[list[int]] = []
    window.session.documentReplaced.connect(
        lambda: judging.append([view.columnWidth(column) for column in range(model.columnCount())]))
    window.session.sidecar.flush()
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(path)
    qtbot.waitUntil(lambda: not model.judging and not window._busy())
    qtbot.wait(200)
    assert judging == [widths]
    assert [view.columnWidth(column) for column in range(model.columnCount())] == widths
    assert painted
    assert painted[0][:2] == (len(INSTANCES), widths)
    assert all(paint == painted[0] for paint in painted), painted  # one layout, from the first paint on


class Between(QObject):
    """A job of `times` slices of the window's turns, each noting itself in `ran`; the first then does `then()`."""

    def __init__(self, ran: list[str], then: Callable[[], object] = lambda: None, times: int = 1) -> None:
        super().__init__()
        self.ran, self.then, self.left = ran, then, times

    def work(self) -> None:
        self.ran.append("another slice")
        self.then()
        self.then, self.left = (lambda: None), self.left - 1
        if self.left:
            slices().start(self.work)


def judged_and_shown(model: _calls.CallsModel, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the calls panel's model does, in order: each execution it makes, each reset of its rows (their count)."""
    done: list[str] = []
    make = model.new_execution
    monkeypatch.setattr(model, "new_execution", lambda **options: (done.append("judged"), make(**options))[1])
    model.modelReset.connect(lambda: done.append(f"{model.rowCount()} rows"))
    model.refreshed.connect(lambda: done.append("refreshed"))
    return done


def test_a_big_documents_calls_are_judged_in_one_slice_and_shown_in_a_later_one(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls of a big document are judged (a new Execution) in one slice of the window's turns, their rows
    shown in a later one and `refreshed` (the panel's turn label, the inspector's views) said in a slice after
    that: the rows' reset and the repaint it brings share a turn with neither (at a million messages, together
    more than a frame)."""
    monkeypatch.setattr(_calls, "LARGE_CONTEXT", len(PLANNED))
    model = _calls.CallsModel()
    done = judged_and_shown(model, monkeypatch)
    model.set_source(Context(PLANNED))
    between = Between(done, times=2)  # (held: the slices hold their jobs weakly)
    slices().start(between.work)
    qtbot.waitUntil(lambda: "refreshed" in done)
    assert done == ["0 rows", "judged", "another slice", f"{len(INSTANCES)} rows", "another slice", "refreshed"]


def test_calls_judged_before_an_edit_are_not_shown(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit between the judgement and its showing drops it: the rows shown are judged after the edit, and a run
    starts from a fresh execution, never from one judged before it (`execution_to_run`)."""
    monkeypatch.setattr(_calls, "LARGE_CONTEXT", len(PLANNED))
    model = _calls.CallsModel()
    done = judged_and_shown(model, monkeypatch)
    context = Context(PLANNED)
    model.set_source(context)
    another = {"type": "input", "_instance": "p9", "input": {"text": "one more"}}
    between = Between(done, lambda: context.insert(len(PLANNED) - 1, another))
    slices().start(between.work)
    qtbot.waitUntil(lambda: "refreshed" in done, timeout=5_000)
    assert done == ["0 rows", "judged", "another slice", "judged", f"{len(INSTANCES) + 1} rows", "refreshed"]


def test_a_run_started_between_the_judgement_and_its_showing_takes_the_judged_execution(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run started after the calls were judged but before they are shown (the next slice) starts from the
    execution judged, never a second one made for it (`execution_to_run`)."""
    monkeypatch.setattr(_calls, "LARGE_CONTEXT", len(PLANNED))
    activities = Activities()
    model = _calls.CallsModel(activities=lambda: activities)
    done = judged_and_shown(model, monkeypatch)
    model.set_source(Context(PLANNED))
    started: list[Any] = []
    clock = lambda: "2026-01-01T00:00:00Z"  # noqa: E731
    between = Between(done, lambda: started.append(model.execution_to_run(activities, clock)))
    slices().start(between.work)
    qtbot.waitUntil(lambda: "refreshed" in done)
    assert done == ["0 rows", "judged", "another slice", f"{len(INSTANCES)} rows", "refreshed"]
    assert started == [model.execution]
    assert started[0].clock is clock


def test_calls_judged_for_a_document_replaced_before_they_are_shown_are_not_shown(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another document between the judgement of a big one's calls and their showing: its own calls are judged
    and shown, and the big one's never are, nor said refreshed after them."""
    monkeypatch.setattr(_calls, "LARGE_CONTEXT", len(PLANNED))
    model = _calls.CallsModel()
    done = judged_and_shown(model, monkeypatch)
    model.set_source(Context(PLANNED))
    other = Context([message for message in PLANNED if message.get("_instance") not in INSTANCES[2:]])
    between = Between(done, lambda: model.set_source(other))
    slices().start(between.work)
    qtbot.waitUntil(lambda: "refreshed" in done)
    qtbot.waitUntil(lambda: not slices().pending)
    assert done == ["0 rows", "judged", "another slice", "judged", "2 rows", "refreshed"]
    assert model.execution is not None
    assert model.execution.context is other


def test_a_long_request_diff_lays_out_only_the_lines_in_sight(qtbot: Any, open_window: Any) -> None:
    """The Experiments pane's request diff of a big context (the whole request, at turn 1) is all there at once
    and only the lines in sight are laid out (never one call that lays out megabytes)."""
    window = open_window(None)
    pane = window.experiments  # type: ignore[attr-defined]
    text = "".join(f"line {n}\n" for n in range(100_000))
    pane.details.setCurrentIndex(1)
    pane.show()
    pane._request_diff_composed((1, text, line_starts(text)))
    qtbot.waitUntil(lambda: pane.request_text.laid_out() > 0)
    assert pane.request_text.toPlainText() == text
    assert pane.request_text.line_count() == 100_001
    assert pane.request_text.laid_out() < 1_000


def test_the_previous_documents_read_watches_close_in_slices_after_the_hand_over(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another document taken by the calls panel: the watches it held on the previous one's reads (each a lane's
    fold) are closed a few a slice after the hand-over, not in it, and every one of them is closed."""
    closed: list[Any] = []
    close = Watch.close
    monkeypatch.setattr(Watch, "close", lambda self: (closed.append(self), close(self))[1])
    model = _calls.CallsModel()
    model.set_source(Context(PLANNED))
    held = list(model._reads.values())
    assert len(held) == len(INSTANCES)
    model.set_source(Context(PLANNED[:1]))
    assert closed == []
    qtbot.waitUntil(lambda: len(closed) == len(held))
    assert {id(watch) for watch in closed} == {id(watch) for watch in held}
