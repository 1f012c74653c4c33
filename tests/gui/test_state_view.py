"""The state view shows a newly computed state a few rows per turn of the event loop, and ends whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QRect
from PySide6.QtGui import QImage

from contextdeck.engine import Context, CursorState, IdentityState
from contextdeck.engine.resolve import _graveyard
from contextdeck.gui import _state as _gui_state
from contextdeck.gui._slices import free_in_slices
from contextdeck.gui._state import BAND_ROWS, ROWS_PER_PART, StateModel, StateView

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
    view.viewport().repaint()  # a paint still due from the first refresh is done now, not counted as the jump's
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


def _on_screen(view: StateView) -> QImage:
    """The viewport's pixels as the window shows them now (its backing store), not painted anew."""
    viewport = view.viewport()
    top = viewport.mapTo(view.window(), QPoint(0, 0))
    grabbed = view.screen().grabWindow(view.window().winId(), top.x(), top.y(), viewport.width(), viewport.height())
    return grabbed.toImage().convertToFormat(QImage.Format.Format_RGB32)


def _painted_anew(view: StateView) -> QImage:
    return view.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _other_identities(count: int) -> Context:
    """At `count` messages, `count` inputs; at `3 * count` each input set again (its row shows another value), and
    `count` states: the two cursors show other identities (the model is reset), the rows on top changed."""
    return Context([{"type": "input", "_instance": f"j{n:02d}", "data": {"w": n}} for n in range(count)] +
                   [{"type": "input", "_instance": f"j{n:02d}", "data": {"w": -n}} for n in range(count)] +
                   [{"type": "state", "_instance": f"i{n:02d}", "data": {"v": n}} for n in range(count)])


def _painted_at(qtbot: Any, context: Context, at: int) -> StateView:
    """A state view of `context` at `at` (more rows than it shows), laid out and on screen."""
    view = StateView()
    qtbot.addWidget(view)
    view.resize(500, 600)
    view.show()
    qtbot.waitExposed(view)
    view.refresh(context, at, None)
    qtbot.waitUntil(lambda: not view.is_busy() and _on_screen(view) == _painted_anew(view))
    assert view.verticalScrollBar().isVisible()
    return view


def _band(image: QImage, top: int, bottom: int) -> QImage:
    return image.copy(0, top, image.width(), bottom - top)


class HeldBands:
    """Keeps the state view's bands from going on (the next band waits until `release`), so that a test sees the
    screen after the first band whatever the speed of the machine."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch
        self.asked = 0

        def hold(_view: StateView) -> None:  # a function: bound to the view, as the method it stands for
            self.asked += 1

        monkeypatch.setattr(StateView, "_next_band", hold)

    def release(self, view: StateView) -> None:
        self._monkeypatch.undo()
        view._next_band()  # the step asked for while held


@pytest.mark.parametrize("name", ["light", "dark"])
def test_a_reset_repaints_a_band_of_rows_per_turn_and_ends_as_one_repaint(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch, theme: Callable[[str], None], name: str) -> None:
    """After a jump to other identities (the model is reset), the first repaint shows the new rows of the first band
    and leaves the rows below it as they were (they are repainted on later turns, a band a turn); at the end the
    viewport shows exactly what a repaint of the whole view paints, with each theme's palette and style sheet."""
    theme(name)
    count = 3 * BAND_ROWS
    context = _other_identities(count)
    view = _painted_at(qtbot, context, count)
    before = _on_screen(view)
    band = view.visualRect(view.state_model.index(BAND_ROWS - 1, 0)).bottom() + 1
    assert band < view.viewport().height() - 100  # rows below the first band are on screen
    held = HeldBands(monkeypatch)
    view.refresh(context, 3 * count, None)  # other identities: the model is reset
    qtbot.waitUntil(lambda: held.asked > 0)
    first = _on_screen(view)
    held.release(view)
    qtbot.waitUntil(lambda: not view.is_busy() and _on_screen(view) == _painted_anew(view))  # a whole repaint's
    last = _on_screen(view)
    assert _band(first, band, first.height()) == _band(before, band, before.height())  # not repainted yet
    assert _band(first, 0, band) == _band(last, 0, band)  # the first band: its final pixels at once
    assert _band(first, 0, band) != _band(before, 0, band)


def test_a_scroll_before_the_last_band_shows_the_whole_view_as_it_is(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scrolling while rows below the first band still show the previous state (their pixels move with the scroll)
    repaints the whole view: it ends showing what a repaint of the whole view paints, with no old row left."""
    count = 3 * BAND_ROWS
    context = _other_identities(count)
    view = _painted_at(qtbot, context, 3 * count)
    held = HeldBands(monkeypatch)
    view.refresh(context, count, None)  # other identities: the model is reset
    qtbot.waitUntil(lambda: held.asked > 0)
    view.verticalScrollBar().setValue(BAND_ROWS // 2)
    held.release(view)
    qtbot.waitUntil(lambda: not view.is_busy() and _on_screen(view) == _painted_anew(view))


def _graveyard_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's graveyard (`free_in_slices`), on a graveyard of the test's own: what a test lets go of is buried
    and freed in slices whatever ran before it in this process, and nothing of it outlives the test."""
    monkeypatch.setattr(_graveyard, "_buried", [])
    monkeypatch.setattr(_graveyard, "_held", {})
    monkeypatch.setattr(_graveyard, "_due", [])
    free_in_slices()


def test_the_writers_of_the_state_shown_before_are_let_go_of_and_then_freed_in_slices(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a million messages an identity's writers name tens of thousands of paths: the view hands the ones it
    stops showing to the engine's graveyard (`let_go`), not freeing them in the turn that shows the new state,
    and the window's slices free them afterwards (`free_in_slices`)."""
    _graveyard_in_slices(monkeypatch)
    released: list[int] = []
    release = _gui_state.let_go

    def noted(*things: dict[tuple[str, ...], int]) -> None:
        released.extend(map(id, things))
        release(*things)

    monkeypatch.setattr(_gui_state, "let_go", noted)
    context = _jump_context()
    view = _view_at(qtbot, context, INSTANCES, 400)
    before = list(view.state_model._writers.values())
    view.refresh(context, 2 * INSTANCES, None)
    qtbot.waitUntil(lambda: not view.is_busy())
    assert {id(writer) for writer in before} <= set(released)
    qtbot.waitUntil(lambda: not _graveyard._buried)


class _Writers(dict[tuple[str, ...], int]):
    """An identity's writers that count how often they are compared whole."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Writers.compared += 1
        return dict.__eq__(self, other)

    __hash__ = None


def test_the_writers_are_read_only_where_the_rows_show_a_source(qtbot: Any) -> None:
    """After an edit an identity's writers are a new dict that may name every path of a whole kind: a row whose
    value is equal is shown again only when a source it shows changed, read at those paths alone (never compared
    whole); a row made later shows the new writers' sources."""
    model = StateModel()
    told: list[int] = []
    model.dataChanged.connect(lambda top, *_: told.append(top.row()))

    def shown(sources: dict[tuple[str, ...], int]) -> None:
        writers = _Writers({(): 1, ("a",): 1, ("b",): 1, ("b", "c"): 1} | sources)
        model.set_state(None, [IdentityState(("k", None), {"a": 1, "b": {"c": 2}}, writers)])

    shown({})
    _Writers.compared = 0
    shown({("b", "c"): 5})  # a source no row shows: nothing to repaint
    assert (told, _Writers.compared) == ([], 0)
    model.fetchMore(model.index(0, 0))
    b = model.index(1, 0, model.index(0, 0))
    model.fetchMore(b)
    assert model.index(0, 2, b).data() == "#5"
    shown({("b", "c"): 5, ("a",): 7})  # one the root's rows show
    assert (told, _Writers.compared) == ([0], 0)
    assert model.index(0, 2, model.index(0, 0)).data() == "#7"


def test_another_documents_state_is_shown_anew_not_compared_with_the_one_before(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reopened document has the same identities and equal values as the one before: its state is shown anew
    (a reset, its own values in the rows), never compared value by value with the old one's, which reads both
    whole in one slice at a million messages; the same document's next state is still compared."""
    view = _view_at(qtbot, _jump_context(), 2 * INSTANCES, 400)
    compared: list[int] = []
    compare = StateModel._changed_rows
    monkeypatch.setattr(StateModel, "_changed_rows", lambda model, *args: compared.append(1) or compare(model, *args))
    reopened = _jump_context()
    with qtbot.waitSignal(view.state_model.modelReset):
        view.refresh(reopened, 2 * INSTANCES, None)
    qtbot.waitUntil(lambda: not view.is_busy())
    assert not compared
    state = _gui_state.CursorState(reopened).at(2 * INSTANCES)
    assert [node.value for node in view.state_model._roots] == [folded.value for folded in state]
    assert all(node.value is folded.value for node, folded in zip(view.state_model._roots, view._job[2], strict=True))
    view.refresh(reopened, INSTANCES, None)
    qtbot.waitUntil(lambda: not view.is_busy())
    assert compared


def test_the_state_of_the_document_before_is_let_go_of_in_a_slice_of_its_own(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another document's state: the folds of the one before (at a million messages 47,000 marks, each with the
    writer of every path) are let go of in a slice of the window's turns, not in the turn that hands the new
    document to the view."""
    _graveyard_in_slices(monkeypatch)
    view = _view_at(qtbot, _jump_context(), 2 * INSTANCES, 400)
    old = view._source
    assert old is not None
    assert old._folds.global_tracks or old._folds.instance_tracks
    view.refresh(_jump_context(), 2 * INSTANCES, None)
    assert old._folds.instance_tracks  # not in the call
    qtbot.waitUntil(lambda: not old._folds.global_tracks and not old._folds.instance_tracks)
    qtbot.waitUntil(lambda: not view.is_busy())


def test_a_partial_update_compares_only_the_rows_that_can_have_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cursor move that changes one identity of many costs what it changes: only the roots whose value or writers
    are other objects, or whose highlight may change, are compared in Python; the others are shown as they are and
    keep their writers. (At a million messages every root compared was most of the update.)"""
    count = 300
    context = Context([{"type": "state", "_instance": f"i{n}", "data": {"v": n}} for n in range(count)]
                      + [{"type": "state", "_instance": "i7", "data": {"v": -1}}])
    source = CursorState(context)
    model = StateModel()
    model.set_state(None, source.at(count), source, count)
    row = {model.index(row, 0).data(_gui_state.PathRole): row for row in range(model.rowCount())}
    compared: list[str | None] = []
    same = _gui_state._same_sources
    monkeypatch.setattr(_gui_state, "_same_sources",
                        lambda node, writer: compared.append(node.instance) or same(node, writer))
    model.set_state(None, source.at(count + 1), source, count + 1)
    assert compared == []  # i7's value is another object: shown anew without a look at its sources
    assert model.index(row["¶state[i7]"], 1).data() == "{1 key}  {v: -1}"
    assert model.index(row["¶state[i8]"], 1).data() == "{1 key}  {v: 8}"
    model.set_state(count, source.at(count + 1), source, count + 1)  # the last message selected: i7's highlight
    assert compared == ["i7"]
    assert model.index(row["¶state[i7]"], 0).data(_gui_state.ChangedRole) is True
    assert model.index(row["¶state[i8]"], 0).data(_gui_state.ChangedRole) is False
    source.close()


def test_a_long_step_announced_by_the_state_begins_the_next_slice(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the state's steps say the next one is long (a mark's copy, `CursorState.steps` yields True), the slice
    ends there however much of its share is left: the long step begins the next slice, never ends a full one."""
    context = _jump_context()
    view = _view_at(qtbot, context, INSTANCES, 400)
    monkeypatch.setattr(_gui_state, "BUDGET_S", 60.0)  # a share no slice here uses up
    pulled: list[int] = []

    def steps(at: int | None, out: list[IdentityState]) -> Any:
        for n in range(6):
            pulled.append(n)
            yield n == 1

    assert view._source is not None
    monkeypatch.setattr(view._source, "steps", steps)
    view.refresh(context, INSTANCES, None)
    view._work()
    assert pulled == [0, 1]
    view._work()
    assert pulled == [0, 1, 2, 3, 4, 5]
