"""While the window is idle, the pinned watches' paths are folded ahead over the whole document
(`WatchModel._warm`), so that a far jump of the time cursor resolves them without folding writes."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from contextdeck.engine import Context, Insert
from contextdeck.engine.resolve._incremental._index import FOLD_STEPS
from contextdeck.engine.resolve._incremental._lanes import PathLog
from contextdeck.gui import _loader
from contextdeck.gui._watches import PinnedWatch, WatchModel

COUNT = 1200
PINS = ("†state.n @p0", "†state.n @p1", "†state.label @p2", "†state.base", "†input.k")


def _context() -> Context:
    """A global state first, then state writes of three instances and global inputs, in turn (the bench's shape: an
    instance's fold starts from the global one where it ends)."""
    def message(n: int) -> dict[str, Any]:
        if n % 4 == 3:
            return {"type": "input", "input": {"k": n}}
        return {"type": "state", "_instance": f"p{n % 4}", "data": {"n": n, "label": f"l {n}"}}
    return Context([{"type": "state", "data": {"base": 0}}, *(message(n) for n in range(COUNT - 1))])


@pytest.fixture
def folded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many writes each fold of a path log added (a spy on the engine's `PathLog.upto`)."""
    added: list[int] = []
    upto = PathLog.upto

    def counting(log: PathLog, limit: int | None, most: int | None = None) -> tuple[int, bool]:
        steps, complete = upto(log, limit, most)
        added.append(steps)
        return steps, complete

    monkeypatch.setattr(PathLog, "upto", counting)
    return added


def _jump(qtbot: Any, model: WatchModel, context: Context, at: int) -> None:
    model.set_cursor(at)
    qtbot.waitUntil(lambda: not model.is_busy())
    for row, text in enumerate(PINS):
        expression, _, instance = text.partition(" @")
        assert model.getItem(model.index(row, 0)).resolution == context.resolve(expression, instance or None, at)


def _pinned_and_idle(qtbot: Any, context: Context) -> WatchModel:
    """A model at message 10 of `context` with every pin, left idle until it has folded them ahead."""
    model = WatchModel()
    model.set_context(context, 10)
    for text in PINS:
        model.add(text)
    qtbot.waitUntil(lambda: not model.is_warming(), timeout=5000)
    return model


def test_a_far_jump_after_idle_folds_no_write(qtbot: Any, folded: list[int]) -> None:
    """Pins made at the start of a long document are folded over all of it at idle, a quarter at a time: a jump
    to its end then resolves every pin from the folds, and shows the engine's values."""
    context = _context()
    model = _pinned_and_idle(qtbot, context)
    assert sum(folded) > 0
    assert max(folded) <= COUNT // 4 // 4 + 1  # a quarter of one layer's writes per call at most
    folded.clear()
    _jump(qtbot, model, context, COUNT - 5)
    assert sum(folded) == 0


def test_a_far_jump_before_idle_folds_a_whole_kind_a_slice_at_a_time(qtbot: Any, folded: list[int]) -> None:
    """A whole-kind pin's first fold at the cursor after a far jump (3,000 writes, before anything was folded
    ahead) is split over the cursor's slices, at most `FOLD_STEPS` writes in one call, and shows the engine's
    value."""
    context = Context([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(3000)])
    model = WatchModel()
    model.set_context(context, 10)
    model.add("†state")
    folded.clear()
    model.set_cursor(2990)
    qtbot.waitUntil(lambda: not model.is_busy())
    assert sum(folded) >= 2980  # (and past it, when the pins are folded ahead at idle meanwhile)
    assert max(folded) <= FOLD_STEPS
    assert model.getItem(model.index(0, 0)).resolution == context.resolve("†state", None, 2990)


def test_a_pin_added_far_into_a_long_path_is_folded_in_slices_then_shown(qtbot: Any, folded: list[int]) -> None:
    """A pin added at a cursor past thousands of writes of its path (nothing folded yet) shows "…" at first; its
    first fold goes on in the cursor's slices, at most `FOLD_STEPS` writes in one call (the add's own included),
    and its row then shows the engine's value."""
    context = Context([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(3000)])
    model = WatchModel()
    model.set_context(context, 2990)
    folded.clear()
    with qtbot.waitSignal(model.dataChanged, timeout=5000):
        model.add("†state")
        assert model.index(0, 1).data() == "…"
        assert model.getItem(model.index(0, 0)).resolution is None
        assert model.is_busy()
    qtbot.waitUntil(lambda: not model.is_busy())
    assert sum(folded) >= 2980
    assert max(folded) <= FOLD_STEPS
    assert model.getItem(model.index(0, 0)).resolution == context.resolve("†state", None, 2990)
    assert model.index(0, 1).data() != "…"


def test_a_pin_removed_or_changed_while_its_first_fold_goes_on_leaves_no_row_waiting(qtbot: Any) -> None:
    """Between the slices of pins' first folds, one pin removed, another's expression changed, the cursor moved
    and the document edited: the cursor drops the removed pin's fold, and every row left shows the engine's value
    at the cursor as it is then, none "…"."""
    context = Context([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(3000)])
    model = WatchModel()
    model.set_context(context, 2990)
    for text in ("†state", "†state.k1", "†state.k2"):
        model.add(text)
    assert [model.index(row, 1).data() for row in range(3)] == ["…"] * 3
    model.remove(0)
    model.setData(model.index(0, 0), "†state.k3")
    model.set_cursor(1500)
    context.insert(0, {"type": "state", "data": {"k2": "first"}})
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    assert [model.getItem(model.index(row, 0)).expression for row in range(model.rowCount())] == [
        "†state.k3", "†state.k2"]
    for row in range(model.rowCount()):
        pin = model.getItem(model.index(row, 0))
        assert pin.resolution == context.resolve(pin.expression, None, 1500)
        assert model.index(row, 1).data() == str(pin.resolution.value)


def test_an_edit_folds_the_paths_it_changed_again_at_idle(qtbot: Any, folded: list[int]) -> None:
    """An edit drops the folds of the paths it can change; they are folded again at idle, and a far jump after it
    folds nothing either."""
    context = _context()
    model = _pinned_and_idle(qtbot, context)
    context.apply(Insert(5, {"type": "state", "_instance": "p0", "data": {"n": -1}}))
    qtbot.waitUntil(lambda: not model.is_warming() and not model.is_busy(), timeout=5000)
    folded.clear()
    _jump(qtbot, model, context, COUNT - 5)
    assert sum(folded) == 0


def test_a_repaint_reads_a_pins_resolution_only_for_what_it_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view asks each cell for about seven roles per repaint; the roles the model does not answer (size, font,
    alignment, colours behind, icons, check state) are answered without reading the pin's resolution, whose
    `current` ranks its sources each time it is read."""
    context = _context()
    model = WatchModel()
    model.set_context(context, 10)
    model.add("†state.n @p0")
    reads: list[int] = []
    resolution = PinnedWatch.resolution

    def counted(pin: PinnedWatch) -> Any:
        reads.append(1)
        return resolution.fget(pin)  # type: ignore[attr-defined]

    monkeypatch.setattr(PinnedWatch, "resolution", property(counted))
    unanswered = (Qt.ItemDataRole.SizeHintRole, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.TextAlignmentRole,
                  Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.CheckStateRole)
    for column in range(model.columnCount()):
        for role in unanswered:
            assert model.data(model.index(0, column), role) is None
    assert not reads
    assert model.data(model.index(0, 1), Qt.ItemDataRole.DisplayRole) == "8"  # n of p0 in the first 10
    assert reads


def test_a_pin_added_following_the_latest_is_folded_in_slices_and_agrees_after_an_edit(qtbot: Any) -> None:
    """Following the latest, a pin on a long path is the context's own watch, its first fold done in the cursor's
    slices: "…" until then, an edit meanwhile included, then the engine's value, and every later edit at once."""
    context = Context([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(3000)])
    model = WatchModel()
    model.set_context(context)
    model.add("†state")
    assert model.index(0, 1).data() == "…"
    assert model.is_busy()
    context.insert(3, {"type": "state", "data": {"k0": "early"}})
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    assert model.getItem(model.index(0, 0)).resolution == context.resolve("†state")
    context.append({"type": "state", "data": {"k9": "late"}})
    assert model.getItem(model.index(0, 0)).resolution.value["k9"] == "late"


def test_turning_follow_latest_on_shows_each_pin_once_its_live_fold_is_done(qtbot: Any) -> None:
    """Pins at a cursor become the context's own watches when the cursor follows the latest: none is folded in
    that turn (each shows "…"), and each then shows the engine's value."""
    context = _context()
    model = WatchModel()
    model.set_context(context, 10)
    for text in PINS:
        model.add(text)
    qtbot.waitUntil(lambda: not model.is_busy())
    model.set_cursor(None)
    assert [model.index(row, 1).data() for row in range(len(PINS))] == ["…"] * len(PINS)
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    for row, text in enumerate(PINS):
        expression, _, instance = text.partition(" @")
        assert model.getItem(model.index(row, 0)).resolution == context.resolve(expression, instance or None)


def test_a_document_reopened_following_the_latest_folds_its_pins_after_the_hand_over(
        qtbot: Any, open_messages: Any) -> None:
    """Reopened while Follow Latest is on, the pins are live watches of the new document whose first folds are
    not done in the hand-over (they show "…" then), and then show its values."""
    messages = [{"type": "state", "data": {f"k{n % 7}": n}} for n in range(3000)]
    window = open_messages(messages, "long.json")
    window.set_follow_latest(True)
    model = window.watches.model
    for text in ("†state", "†state.k3"):
        model.add(text)
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    handed: list[list[Any]] = []
    window.session.documentReplaced.connect(lambda: handed.append([pin.resolution for pin in model.pins]))
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(window.session.path)
    assert handed == [[None, None]]
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    context = window.context()
    assert [pin.resolution for pin in model.pins] == [context.resolve("†state"), context.resolve("†state.k3")]


def test_a_document_reopened_following_the_latest_closes_the_old_pins_after_the_hand_over(
        qtbot: Any, open_messages: Any) -> None:
    """Reopened while Follow Latest is on, the old document's pins' live watches (each may let go of a kind's fold)
    are closed in slices after the hand-over, not in it; and the pins come back in one reset of the rows."""
    window = open_messages([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(300)], "long.json")
    window.set_follow_latest(True)
    model = window.watches.model
    for text in ("†state", "†state.k3", "†state.k4"):
        model.add(text)
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    old = [pin.handle.live for pin in model.pins if pin.handle is not None]
    watchers = window.context()._watchers
    assert len(old) == 3
    assert all(watch is not None for watch in old)
    handed: list[int] = []
    window.session.documentReplaced.connect(lambda: handed.append(len(watchers._watches)))
    rows: list[str] = []
    model.rowsInserted.connect(lambda *_: rows.append("inserted"))
    model.modelReset.connect(lambda: rows.append("reset"))
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(window.session.path)
    assert handed == [3]  # still open as the new document is handed over
    qtbot.waitUntil(lambda: not watchers._watches and not watchers._tracks, timeout=5000)
    assert "inserted" not in rows
    assert rows.count("reset") == 2  # the old pins gone, the document's own back
    assert [pin.label for pin in model.pins] == ["†state", "†state.k3", "†state.k4"]


def test_a_document_reopened_following_the_latest_makes_its_pins_watches_after_the_hand_over(
        qtbot: Any, open_messages: Any) -> None:
    """Reopened while Follow Latest is on, the pins it brings back are rows at once, their watches made in slices
    after the hand-over, in order ("…" until then); a row the user selects meanwhile stays selected, and a pin the
    user adds meanwhile stays, after them."""
    window = open_messages([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(300)], "long.json")
    window.set_follow_latest(True)
    model = window.watches.model
    texts = ["†state", "†state.k3", "†state.k4 || †state.k5", "†state.k1"]
    for text in texts:
        model.add(text)
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    made: list[str] = []
    window.session.loadFinished.connect(lambda *_: made.append("handed over"))
    original = WatchModel._evaluate

    def evaluate(self: WatchModel, pin: PinnedWatch, *args: Any, **kwargs: Any) -> None:
        made.append(pin.label)
        original(self, pin, *args, **kwargs)

    handed: list[list[Any]] = []

    def handing_over() -> None:
        handed.append([model.index(row, 1).data() for row in range(model.rowCount())])
        window.watches.table.selectRow(1)
        model.add("†state.k6")

    window.session.documentReplaced.connect(handing_over)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WatchModel, "_evaluate", evaluate)
        with qtbot.waitSignal(window.document.documentShown, timeout=10000):
            window.session.open(window.session.path)
        qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    assert handed == [["…"] * len(texts)]
    assert made == ["†state.k6", "handed over", *texts]  # (the user's own at once)
    assert [pin.label for pin in model.pins] == [*texts, "†state.k6"]
    assert [index.row() for index in window.watches.table.selectionModel().selectedRows()] == [1]
    context = window.context()
    assert [pin.resolution for pin in model.pins] == [context.resolve(text) for text in [*texts, "†state.k6"]]


def test_the_pins_are_not_folded_ahead_while_another_document_loads(
        qtbot: Any, open_messages: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a document loads, the open one's pins are not folded ahead (the new document's hand-over would drop
    those folds); a cancelled load lets the folding ahead go on."""
    window = open_messages([{"type": "state", "data": {f"k{n % 7}": n}} for n in range(3000)], "long.json")
    model = window.watches.model
    free: list[bool] = []  # each time the folding ahead looked: whether the window had no work of its own queued
    busy = window._busy_for_work_ahead
    model.set_busy(lambda: free.append(not window._busy() and not window.forms_ahead.pending()) or busy())
    folded: list[int | None] = []
    fold_ahead = Context.fold_ahead
    shown = window.context()  # (a model another test left behind, not yet collected, may still fold its own)

    def folding(context: Context, expression: Any, instance: Any = None, at: int | None = None, **kw: Any) -> bool:
        if context is shown:
            folded.append(at)
        return fold_ahead(context, expression, instance, at, **kw)

    monkeypatch.setattr(Context, "fold_ahead", folding)
    monkeypatch.setattr(_loader.LoadTask, "run", lambda task: None)  # a load that never ends
    for text in ("†state", "†state.k3"):
        model.add(text)
    qtbot.waitUntil(lambda: not model.is_busy(), timeout=5000)
    assert model.is_warming()
    folded.clear()
    window.session.open(window.session.path)
    # until it looked twice with nothing else to do (or folded them all)
    qtbot.waitUntil(lambda: free.count(True) >= 2 or not model.is_warming(), timeout=5000)
    assert folded == []
    window.session.cancel_load()
    qtbot.waitUntil(lambda: not model.is_warming(), timeout=10_000)
    assert folded


def test_a_narrow_pane_gives_the_value_room(qtbot: Any) -> None:
    """In a pane as narrow as the window's bottom dock, the value column keeps a third of the width (it was cut to
    "missin…" between the expression's 260 pixels and the sources'); with room again the columns take back their
    widths, and a width the user dragged a column to is the one taken back."""
    from contextdeck.gui._watches import WatchPanel

    panel = WatchPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 300)
    panel.show()
    qtbot.waitExposed(panel)
    header = panel.table.horizontalHeader()
    first = header.sectionSize(0)
    panel.resize(400, 300)
    qtbot.waitUntil(lambda: panel.table.viewport().width() < 400)
    assert header.sectionSize(1) >= panel.table.viewport().width() / 3
    assert header.length() <= panel.table.viewport().width()  # no column pushed out of sight
    panel.resize(1200, 300)
    qtbot.waitUntil(lambda: header.sectionSize(0) == first)
    header.resizeSection(0, 300)  # the user's drag
    panel.resize(400, 300)
    qtbot.waitUntil(lambda: header.sectionSize(0) < 300)
    panel.resize(1200, 300)
    qtbot.waitUntil(lambda: header.sectionSize(0) == 300)
