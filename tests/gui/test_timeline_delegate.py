"""The timeline's delegate keeps pictures of what it painted: a repaint shows each row as it is now."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QAbstractItemView, QTableView

from contextdeck.engine import Context, Replace
from contextdeck.gui._timeline_delegate import TimelineDelegate, row_height
from contextdeck.gui._timeline_model import TimelineModel


def _table(qtbot: Any, context: Context) -> QTableView:
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(TimelineModel(context))
    view.setItemDelegate(TimelineDelegate(view))
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.horizontalHeader().setStretchLastSection(True)
    view.verticalHeader().setDefaultSectionSize(row_height(view.fontMetrics()))
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def _painted(view: QTableView) -> QImage:
    return view.viewport().grab().toImage()


def _painted_afresh(view: QTableView) -> QImage:
    """The same view painted by a new delegate (no pictures kept)."""
    kept = view.itemDelegate()
    fresh = TimelineDelegate(view)
    view.setItemDelegate(fresh)
    image = _painted(view)
    view.setItemDelegate(kept)
    return image


def test_rows_painted_from_kept_pictures_match_rows_painted_anew(qtbot: Any) -> None:
    """After an edit, a selection and a time cursor, the rows painted with the pictures kept from earlier repaints
    are those a new delegate paints; the edited, selected and future rows did change."""
    context = Context([
        {"type": "text", "role": "user", "text": "hello there"},
        {"type": "state", "_instance": "①", "data": {"x": 1}},
        {"type": "input", "_instance": "②", "input": {"post": "a post"}},
        {"type": "text", "role": "assistant", "text": "fine"},
    ])
    view = _table(qtbot, context)
    model = view.model()
    assert isinstance(model, TimelineModel)
    first = _painted(view)
    assert first == _painted_afresh(view)
    context.apply(Replace(1, {"type": "state", "_instance": "①", "data": {"x": "a much longer value now"}}))
    edited = _painted(view)
    assert edited != first
    assert edited == _painted_afresh(view)
    view.selectRow(2)
    selected = _painted(view)
    assert selected != edited
    assert selected == _painted_afresh(view)
    model.set_cursor(1)
    shaded = _painted(view)
    assert shaded != selected
    assert shaded == _painted_afresh(view)
    context.move(3, 0)  # the rows shift: every number changes, the bodies are the same pictures
    moved = _painted(view)
    assert moved == _painted_afresh(view)
