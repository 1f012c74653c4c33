"""The timeline's delegate keeps pictures of what it painted: a repaint shows each row as it is now."""

from __future__ import annotations

import itertools
from typing import Any

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QAbstractItemView, QTableView

from contextdeck.engine import Context, Replace
from contextdeck.gui._timeline_delegate import TimelineDelegate, row_height
from contextdeck.gui._timeline_model import TimelineModel

BLENDING = 3  # of 255: a picture blended onto the row may differ from text drawn on it by rounding


def _table(qtbot: Any, context: Context) -> tuple[QTableView, TimelineDelegate]:
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(TimelineModel(context))
    delegate = TimelineDelegate(view)
    view.setItemDelegate(delegate)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.horizontalHeader().setStretchLastSection(True)
    view.verticalHeader().setDefaultSectionSize(row_height(view.fontMetrics()))
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    return view, delegate


def _painted(view: QTableView) -> QImage:
    return view.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _painted_afresh(view: QTableView) -> QImage:
    """The same view painted by a new delegate (no pictures kept: every row drawn)."""
    kept = view.itemDelegate()
    view.setItemDelegate(TimelineDelegate(view))
    image = _painted(view)
    view.setItemDelegate(kept)
    return image


def _difference(one: QImage, other: QImage) -> int:
    """The largest difference of a colour channel between two images of one size."""
    assert one.size() == other.size()
    first, second = bytes(one.constBits()), bytes(other.constBits())
    return max((abs(a - b) for a, b in zip(first, second, strict=True)), default=0)


def _painted_from_pictures(qtbot: Any, view: QTableView, delegate: TimelineDelegate) -> QImage:
    """Paint, let the loop wait so the rows' pictures are made, paint again: every row is copied."""
    _painted(view)
    qtbot.waitUntil(lambda: delegate.pictures.waiting() == 0)
    kept = len(delegate.pictures)
    image = _painted(view)
    assert delegate.pictures.waiting() == 0  # nothing drawn anew: all copied
    assert len(delegate.pictures) == kept
    return image


def test_rows_painted_from_kept_pictures_match_rows_painted_anew(qtbot: Any) -> None:
    """After an edit, a selection, a time cursor and a move, rows painted from the pictures kept since are those a
    new delegate draws; the edited, selected and future rows did change."""
    context = Context([
        {"type": "text", "role": "user", "text": "hello there"},
        {"type": "state", "_instance": "①", "data": {"x": 1}},
        {"type": "input", "_instance": "②", "input": {"post": "a post"}},
        {"type": "text", "role": "assistant", "text": "fine"},
    ])
    view, delegate = _table(qtbot, context)
    model = view.model()
    assert isinstance(model, TimelineModel)
    shown: list[QImage] = []
    for change in (lambda: None,
                   lambda: context.apply(Replace(1, {"type": "state", "_instance": "①", "data": {"x": "longer"}})),
                   lambda: view.selectRow(2),
                   lambda: model.set_cursor(1),
                   lambda: context.move(3, 0)):  # the rows shift: numbers and bodies are pictures kept before
        change()
        image = _painted_from_pictures(qtbot, view, delegate)
        assert _difference(image, _painted_afresh(view)) <= BLENDING
        shown.append(image)
    assert len(delegate.pictures) > 0
    for before, after in itertools.pairwise(shown):
        assert _difference(before, after) > 4 * BLENDING  # each change is seen
