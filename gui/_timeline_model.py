"""`TimelineModel`: a thin Qt item model over the engine's `Context` (never a copy of it).

Top-level rows are the messages, in order (row == message index); the calls of a plan message are its
child rows; when the document has a solution, one last top-level row holds the solution's calls.
The model follows the context's psygnal signals with the matching begin/end calls, so views stay exact
and cheap (no reset) whatever the edit.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QByteArray,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from contextdeck.engine import Context, Form, body_of, group_of

from ._engine_signals import connect_all
from ._icons import icon
from ._summary import call_summary, counted, is_output, message_summary, type_label
from ._theme import message_icon

_Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()

# Roles (module constants, as the views and tests use them).
KindRole = Qt.ItemDataRole.UserRole + 1  # the message's kind ("" for text/tool/plan), or the call's tool
InstanceRole = Qt.ItemDataRole.UserRole + 2  # `_instance` or ""
SummaryRole = Qt.ItemDataRole.UserRole + 3  # the one-line summary
TypeRole = Qt.ItemDataRole.UserRole + 4  # the message's `type` ("call" for call rows, "solution")
MessageIndexRole = Qt.ItemDataRole.UserRole + 5  # the message index a row stands for (-1: solution row)
ItemRole = Qt.ItemDataRole.UserRole + 6  # the engine object: the message dict or the call
IsOutputRole = Qt.ItemDataRole.UserRole + 7  # whether a data message is the output of a call
# Everything the delegate paints, in one call:
# (number or -1, kind, instance, summary, colour key, icon, after the time cursor).
LookRole = Qt.ItemDataRole.UserRole + 8

MIME_TYPE = "application/x-contextdeck-rows"
# internalId of a top-level row; a child row's internalId is its parent message's stable id (ids start at 1);
# children of the solution row carry this one.
_TOP = 0
_SOLUTION = 1 << 40
LOOKS_KEPT = 4096  # rows whose look is kept (a few screens, and the rows a filter shows most often)


class TimelineModel(QAbstractItemModel):
    """Messages as rows, plan and solution calls as children. Drops ask for a move (`moveRequested`)."""

    moveRequested = Signal(int, int)  # (src, dst) message indices; the window pushes an undoable Move
    rowMoving = Signal(int, int)  # (src, dst): a message is about to move (its row leaves, then comes back)
    rowMoved = Signal(int, int)  # (src, dst): it is back, at dst

    def __init__(self, context: Context, solution: Any = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._context = context
        self._solution_calls = _solution_calls(solution)
        self._rows_by_id: dict[int, int] = {}
        self._hidden_children: int | None = None  # a plan row whose children are being replaced
        self._gap: int | None = None  # a message hidden from views while it moves (see `_moving`)
        self._cursor: int | None = None  # the time cursor, for painting (see `set_cursor`)
        # What a message's row paints but its number and shade, by stable id: made once per version of the message
        # (a summary costs more than the paint itself), so showing a screen of rows again costs only the paint.
        self._looks: dict[int, tuple[str, str, str, str, Any]] = {}
        # While a run appends (`pace_for_a_run`): the message rows the views know of, when messages appended since
        # are still to be announced; they are, in one row insert, on the next turn of the event loop.
        self._held = False
        self._shown: int | None = None
        self._announce_timer = QTimer(self, singleShot=True, interval=0)
        self._announce_timer.timeout.connect(self.announce_appended)
        connect_all((
            (context.inserting, self._inserting), (context.inserted, self._inserted),
            (context.removing, self._removing), (context.removed, self._removed),
            (context.moving, self._moving), (context.moved, self._moved),
            (context.replacing, self._replacing), (context.replaced, self._replaced),
        ))

    @property
    def context(self) -> Context:
        return self._context

    def detach(self) -> None:
        """Stop following the context (before the document is replaced)."""
        self._announce_timer.stop()
        for signal, slot in (
            (self._context.inserting, self._inserting), (self._context.inserted, self._inserted),
            (self._context.removing, self._removing), (self._context.removed, self._removed),
            (self._context.moving, self._moving), (self._context.moved, self._moved),
            (self._context.replacing, self._replacing), (self._context.replaced, self._replaced),
        ):
            signal.disconnect(slot)

    # -- structure -------------------------------------------------------------------------------

    def _has_solution_row(self) -> bool:
        return self._solution_calls is not None

    def _count(self) -> int:
        """How many message rows the views see (one fewer while a message moves; messages appended while held and not
        announced yet are not rows yet)."""
        if self._shown is not None:
            return self._shown
        return len(self._context) - (self._gap is not None)

    def _message(self, row: int) -> int:
        """The message index of a top-level row."""
        return row + 1 if self._gap is not None and row >= self._gap else row

    def _calls_of(self, row: int) -> list[Any]:
        if row == self._count():
            return self._solution_calls or []
        index = self._message(row)
        if self._context.info(index).form is not Form.PLAN or index == self._hidden_children:
            return []
        plan = body_of(self._context[index]).get("plan")
        return plan if isinstance(plan, list) else []

    def _parent_row(self, internal: int) -> int:
        if internal == _SOLUTION:
            return self._count()
        index = self._rows_by_id.get(internal)
        if index is None:
            index = self._rows_by_id[internal] = self._context.index_of(internal)
        return index - 1 if self._gap is not None and index > self._gap else index

    def index(self, row: int, column: int = 0, parent: _Index = _ROOT) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            if row >= self.rowCount():
                return QModelIndex()
            return self.createIndex(row, 0, _TOP)
        if parent.internalId() != _TOP:
            return QModelIndex()
        prow = parent.row()
        if row >= len(self._calls_of(prow)):
            return QModelIndex()
        internal = _SOLUTION if prow == self._count() else self._context.id_at(self._message(prow))
        return self.createIndex(row, 0, internal)

    def row_index(self, row: int) -> QModelIndex:
        """The index of top-level `row`, unchecked: for the filtered rows, which know it exists (and ask often)."""
        return self.createIndex(row, 0, _TOP)

    def parent(self, child: _Index = _ROOT) -> QModelIndex:  # type: ignore[override]
        if not child.isValid() or child.internalId() == _TOP:
            return QModelIndex()
        return self.createIndex(self._parent_row(child.internalId()), 0, _TOP)

    def rowCount(self, parent: _Index = _ROOT) -> int:
        if not parent.isValid():
            return self._count() + (1 if self._has_solution_row() else 0)
        if parent.internalId() != _TOP or parent.column() != 0:
            return 0
        return len(self._calls_of(parent.row()))

    def columnCount(self, parent: _Index = _ROOT) -> int:
        return 1

    def hasChildren(self, parent: _Index = _ROOT) -> bool:
        return self.rowCount(parent) > 0

    def getItem(self, index: _Index) -> Any:
        """The engine object a row stands for: the message dict, the call, or the solution's calls."""
        if not index.isValid():
            return None
        if index.internalId() == _TOP:
            row = index.row()
            return self._solution_calls if row == self._count() else self._context[self._message(row)]
        calls = self._calls_of(self._parent_row(index.internalId()))
        return calls[index.row()] if index.row() < len(calls) else None

    def message_index(self, index: _Index) -> int:
        """The message a row stands for (a call row: its plan message); -1 for the solution row."""
        if not index.isValid():
            return -1
        row = index.row() if index.internalId() == _TOP else self._parent_row(index.internalId())
        return self._message(row) if row < self._count() else -1

    # -- data ------------------------------------------------------------------------------------

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == LookRole:
            return self._look(index)
        if index.internalId() != _TOP:
            return self._call_data(index, role)
        if index.row() == self._count():
            return self._solution_data(role)
        row = self._message(index.row())
        if role == MessageIndexRole:
            return row
        message = self._context[row]
        info = self._context.info(row)
        if role == Qt.ItemDataRole.DisplayRole:
            badge = f" [{info.instance}]" if info.instance is not None else ""
            return f"{_label(message, info.kind)}{badge}  {message_summary(message, info)}"
        if role == Qt.ItemDataRole.DecorationRole:
            return message_icon(type_label(message), is_output(message))
        if role == KindRole:
            return _label(message, info.kind)
        if role == InstanceRole:
            return info.instance or ""
        if role == SummaryRole:
            return message_summary(message, info)
        if role == TypeRole:
            return type_label(message)
        if role == ItemRole:
            return message
        if role == IsOutputRole:
            return info.form is Form.DATA and is_output(message)
        if role == Qt.ItemDataRole.ToolTipRole:
            text = json.dumps(message, ensure_ascii=False, indent=2)
            return text if len(text) < 2000 else text[:2000] + "\n…"
        return None

    def set_cursor(self, message: int | None) -> None:
        """Rows after `message` (the time cursor) are painted as the future; None: no cursor."""
        if message == self._cursor:
            return
        old, self._cursor = self._cursor, message
        # Only the rows between the old and the new cursor change shade (a step repaints one row, not the screen);
        # with no cursor before or after, every row past the other one (and the solution row).
        last = self.rowCount() - 1
        if old is not None and message is not None:
            first, last = min(old, message) + 1, max(old, message)
        else:
            first = (old if old is not None else message or 0) + 1
        first, last = max(first, 0), min(last, self.rowCount() - 1)
        if first <= last:
            self.dataChanged.emit(self.index(first, 0), self.index(last, 0), [LookRole])

    def _look(self, index: _Index) -> tuple[int, str, str, str, str, Any, bool]:
        top = index.internalId() == _TOP
        number = self.data(index, MessageIndexRole) if top else -1
        future = self._cursor is not None and top and (number > self._cursor or number < 0)
        key = self._context.id_at(number) if number >= 0 else None
        look = self._looks.get(key) if key is not None else None
        if look is None:
            colour = "output" if self.data(index, IsOutputRole) else self.data(index, TypeRole)
            look = (self.data(index, KindRole), self.data(index, InstanceRole), self.data(index, SummaryRole), colour,
                    self.data(index, Qt.ItemDataRole.DecorationRole))
            if key is not None:
                if len(self._looks) >= LOOKS_KEPT:  # a long scroll: start again rather than keep every row
                    self._looks.clear()
                self._looks[key] = look
        return (number, *look, future)

    def _call_data(self, index: _Index, role: int) -> Any:
        call = self.getItem(index)
        if role == Qt.ItemDataRole.DisplayRole:
            return call_summary(call)
        if role == SummaryRole:
            return call_summary(call, with_tool=False)
        if role == Qt.ItemDataRole.DecorationRole:
            return icon("msg-call")
        if role == KindRole:  # the tool, or a group's pattern
            group = group_of(call)
            return group[0] if group is not None else str(call.get("_tool", "?")) if isinstance(call, dict) else "?"
        if role == InstanceRole:
            instance = call.get("_instance") if isinstance(call, dict) else None
            return "" if instance is None else str(instance)
        if role == TypeRole:
            return "call"
        if role == ItemRole:
            return call
        if role == MessageIndexRole:
            return self.message_index(index)
        if role == IsOutputRole:
            return False
        return None

    def _solution_data(self, role: int) -> Any:
        count = len(self._solution_calls or [])
        values = {
            Qt.ItemDataRole.DisplayRole: f"solution  {counted(count, 'call')}",
            Qt.ItemDataRole.DecorationRole: icon("msg-solution"),
            KindRole: "solution",
            InstanceRole: "",
            SummaryRole: f"{counted(count, 'call')} (the document's solution)",
            TypeRole: "solution",
            MessageIndexRole: -1,
            ItemRole: self._solution_calls,
            IsOutputRole: False,
        }
        return values.get(Qt.ItemDataRole(role) if role < Qt.ItemDataRole.UserRole else role)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        if index.internalId() == _TOP and index.row() < self._count():
            return base | Qt.ItemFlag.ItemIsDragEnabled
        return base

    # -- drag and drop: a drop asks for an undoable move, it never edits the context itself ------

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [MIME_TYPE]

    def mimeData(self, indexes: list[QModelIndex]) -> QMimeData:  # type: ignore[override]
        rows = sorted({i.row() for i in indexes if i.isValid() and i.internalId() == _TOP})
        mime = QMimeData()
        mime.setData(MIME_TYPE, QByteArray(json.dumps(rows).encode()))
        return mime

    def canDropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: _Index) -> bool:
        return data.hasFormat(MIME_TYPE) and (not parent.isValid() or parent.internalId() == _TOP)

    def dropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: _Index) -> bool:
        """Translate a drop into `moveRequested(src, dst)`; returns False so the view removes nothing."""
        if not data.hasFormat(MIME_TYPE):
            return False
        if parent.isValid():  # dropped onto a row: place before it
            row = parent.row() if parent.internalId() == _TOP else self._parent_row(parent.internalId())
        size = len(self._context)
        target = size if row < 0 or row > size else row
        rows = json.loads(bytes(data.data(MIME_TYPE).data()).decode())
        for src in rows[:1]:  # one row at a time: the timeline is single-selection
            if 0 <= src < size:
                dst = target - 1 if target > src else target
                if dst != src:
                    self.moveRequested.emit(src, min(dst, size - 1))
        return False

    # -- following the context -------------------------------------------------------------------

    def _structure_changed(self) -> None:
        self._rows_by_id.clear()

    def pace_for_a_run(self, running: bool) -> None:
        """While a run appends its outputs, messages appended at the end become rows once per turn of the
        event loop, in one row insert, instead of one each: the views lay out and repaint once a turn. Released, the
        rows are all there at once."""
        self._held = running
        if not running:
            self.announce_appended()

    def solution_replaced(self, solution: Any) -> None:
        """The document's solution replaced (a turn taken or undone, the model's answer to the whole request): the
        solution row, after the message rows, follows it with its calls; none when it has no `calls`."""
        self.announce_appended()
        row = self._count()
        if self._has_solution_row():
            self.beginRemoveRows(_ROOT, row, row)
            self._solution_calls = None
            self.endRemoveRows()
        calls = _solution_calls(solution)
        if calls is not None:
            self.beginInsertRows(_ROOT, row, row)
            self._solution_calls = calls
            self.endInsertRows()

    def announce_appended(self) -> None:
        """Make rows of the messages appended while held that the views do not know of yet."""
        shown = self._shown
        if shown is None:
            return
        self._announce_timer.stop()
        self.beginInsertRows(_ROOT, shown, len(self._context) - 1)
        self._shown = None
        self.endInsertRows()

    def _inserting(self, index: int) -> None:
        if self._held and index == len(self._context) and self._gap is None:
            if self._shown is None:
                self._shown = index
                self._announce_timer.start()
            return
        self.announce_appended()
        self.beginInsertRows(_ROOT, index, index)

    def _inserted(self, index: int) -> None:
        if self._shown is not None:  # appended while held: a row on the next turn
            return
        self._structure_changed()
        self.endInsertRows()

    def _removing(self, index: int) -> None:
        self.announce_appended()
        self._looks.pop(self._context.id_at(index), None)
        self.beginRemoveRows(_ROOT, index, index)

    def _removed(self, index: int) -> None:
        self._structure_changed()
        self.endRemoveRows()

    # A move is announced to views as a removal then an insertion: QTableView handles rowsMoved by
    # relaying out its header over every row (O(rows)), where a remove and an insert cost O(1) each.
    # While the row is "out", `_gap` hides it: before the engine moves it at `src`, after at `dst`.

    def _moving(self, src: int, dst: int) -> None:
        self.announce_appended()
        self.rowMoving.emit(src, dst)
        self.beginRemoveRows(_ROOT, src, src)
        self._gap = src
        self.endRemoveRows()

    def _moved(self, src: int, dst: int) -> None:
        self._structure_changed()
        self._gap = dst
        self.beginInsertRows(_ROOT, dst, dst)
        self._gap = None
        self.endInsertRows()
        self.rowMoved.emit(src, dst)

    def _replacing(self, index: int) -> None:
        self.announce_appended()
        self._looks.pop(self._context.id_at(index), None)
        old = len(self._calls_of(index))
        if old:
            parent = self.createIndex(index, 0, _TOP)
            self.beginRemoveRows(parent, 0, old - 1)
            self._hidden_children = index
            self.endRemoveRows()

    def _replaced(self, index: int) -> None:
        self._hidden_children = None
        new = len(self._calls_of(index))
        if new:
            self._hidden_children = index
            parent = self.createIndex(index, 0, _TOP)
            self.beginInsertRows(parent, 0, new - 1)
            self._hidden_children = None
            self.endInsertRows()
        top = self.createIndex(index, 0, _TOP)
        self.dataChanged.emit(top, top)


def _label(message: dict[str, Any], kind: str | None) -> str:
    return kind if kind is not None else type_label(message)


def _solution_calls(solution: Any) -> list[Any] | None:
    calls = solution.get("calls") if isinstance(solution, dict) else None
    return calls if isinstance(calls, list) else None
