"""Searching the timeline without freezing the window: the query, a search run in slices, the matching rows.

Matching every message of a 100,000-message document takes seconds of Python the first time (the text
of each message is made once and kept), so a search never runs in one go on the GUI thread: it runs in
slices of `SLICE_S` on the turns of the event loop, a newer query abandons the older one, and the
result replaces the shown rows in one step, on a turn of its own. Not on a worker thread: the GIL would
make the GUI thread wait for it on each call into Python, the timeline delegate's paint of every row
included, so a scroll during a search would drop frames. The rows
shown (`FilteredTimeline`) are a sorted list of the model's rows, kept exact through inserts, removals,
moves and replacements without searching again.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal

from contextdeck.engine import body_of

from ._engine_signals import connect_all
from ._timeline_model import InstanceRole, KindRole, LookRole, SummaryRole, TimelineModel, TypeRole

_Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()
SLICE_S = 0.004  # one slice of a search: a quarter of a frame, so a busy machine's delays still fit in one
CHECK_EVERY = 16  # rows between two looks at the clock (a row takes far less than a look at the clock)


@dataclass(frozen=True)
class Query:
    """What the filter box asks for: every part must hold. `kind:K` (a kind or a type), `instance:I` or
    `@I`, and words, each of which must appear in the kind, the role or the message's JSON (keys and values)."""

    kinds: tuple[str, ...] = ()
    instances: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Query:
        kinds, instances, words = [], [], []
        for token in text.split():
            lowered = token.lower()
            if lowered.startswith("kind:"):
                kinds.append(lowered[5:])
            elif lowered.startswith(("instance:", "@")):
                instances.append(token.split(":", 1)[1] if ":" in token else token[1:])
            else:
                words.append(lowered)
        return cls(tuple(kinds), tuple(instances), tuple(words))

    def __bool__(self) -> bool:
        return bool(self.kinds or self.instances or self.words)

    def narrows(self, other: Query) -> bool:
        """Whether every row this query matches also matches `other` (typing on: search only `other`'s rows).
        Kinds and instances each match any of theirs; every word must be found."""
        def within(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
            return not theirs or (bool(mine) and set(mine) <= set(theirs))

        return (within(self.kinds, other.kinds) and within(self.instances, other.instances)
                and all(any(word in mine for mine in self.words) for word in other.words))


class Haystacks:
    """The lower-case text words are looked for in, per message (see `_haystack`), made once per
    version of the message: a replaced message's text is dropped before the change."""

    def __init__(self, model: TimelineModel) -> None:
        self._model = model
        self._texts: dict[int, str] = {}  # by stable message id; strings are not tracked by the cyclic collector
        connect_all([(model.context.replacing, self._forget)])

    def detach(self) -> None:
        self._model.context.replacing.disconnect(self._forget)

    def _forget(self, index: int) -> None:
        self._texts.pop(self._model.context.id_at(index), None)

    def matches(self, query: Query, row: int) -> bool:
        """Whether top-level `row` of the model (a message, or the solution row) matches `query`."""
        context = self._model.context
        if row >= len(context):
            return self._matches_solution(query, row)
        message, info = context[row], context.info(row)
        type_name = str(body_of(message).get("type")).lower()
        kind = info.kind.lower() if info.kind is not None else type_name
        if query.kinds and not any(k in (kind, type_name) for k in query.kinds):
            return False
        if query.instances and (info.instance or "") not in query.instances:
            return False
        if not query.words:
            return True
        key = context.id_at(row)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = _haystack(kind, message)
        return all(word in text for word in query.words)

    def _matches_solution(self, query: Query, row: int) -> bool:
        index = self._model.index(row, 0)
        kind = str(index.data(KindRole)).lower()
        if query.kinds and not any(k in (kind, str(index.data(TypeRole)).lower()) for k in query.kinds):
            return False
        if query.instances and str(index.data(InstanceRole)) not in query.instances:
            return False
        text = f"{kind}\n{index.data(SummaryRole)}".lower()
        return all(word in text for word in query.words)


def _haystack(kind: str, message: dict[str, Any]) -> str:
    """The kind, `role:` as the row shows it, and the message's JSON (keys and values), in lower case.

    Not the row's summary: making it for every message costs several times the JSON, and everything it
    shows is in the JSON."""
    role = message.get("role")
    said = f"{role}: " if isinstance(role, str) else ""
    return f"{kind}\n{said}\n{orjson.dumps(message, option=orjson.OPT_NON_STR_KEYS).decode()}".lower()


class TimelineSearch(QObject):
    """Runs one query at a time over a model in slices. `start` abandons the search under way."""

    started = Signal(object)  # the Query
    progress = Signal(int, int)  # rows looked at, rows in all
    finished = Signal(object, object)  # the Query, the matching rows (a sorted list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._steps: Iterator[tuple[int, int] | None] | None = None
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._work)

    def is_busy(self) -> bool:
        return self._steps is not None

    def start(self, haystacks: Haystacks, model: TimelineModel, query: Query,
              among: Sequence[int] | None = None) -> None:
        """Search the model's rows, or only the rows `among` (sorted: the rows of a query this one narrows)."""
        self._steps = self._scan(haystacks, range(model.rowCount()) if among is None else list(among), query)
        self.started.emit(query)
        self._timer.start()

    def cancel(self) -> None:
        self._steps = None
        self._timer.stop()

    def _scan(self, haystacks: Haystacks, candidates: Sequence[int], query: Query) -> Iterator[tuple[int, int] | None]:
        """Yields (rows looked at, rows in all) every few rows, then None; emits `finished` when resumed after it."""
        total = len(candidates)
        rows: list[int] = []
        for done, row in enumerate(candidates, 1):
            if haystacks.matches(query, row):
                rows.append(row)
            if done % CHECK_EVERY == 0:
                yield done, total
        yield None
        self._steps = None
        self.finished.emit(query, rows)

    def _work(self) -> None:
        steps = self._steps
        if steps is None:
            return
        deadline = time.perf_counter() + SLICE_S
        for step in steps:
            if step is None or time.perf_counter() >= deadline:
                if step is not None:
                    self.progress.emit(*step)
                if self._steps is steps:  # not abandoned by a slot of `progress`
                    self._timer.start()  # the rows are shown on a turn of their own, not after a slice
                return


class FilteredTimeline(QAbstractProxyModel):
    """The top-level rows of a `TimelineModel` that match a query, as a flat list (`set_result`).

    It follows the model's edits itself: an inserted or replaced message is matched on its own, a removed
    one leaves, the others shift. `staleResult` asks for a new search when it cannot tell (a reset)."""

    staleResult = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[int] = []
        self._query = Query()
        self._haystacks: Haystacks | None = None
        self._exact = True  # False from a change it cannot follow (`staleResult`) to the next result

    def is_exact(self) -> bool:
        """Whether the rows are exactly those of the model that match the query (else a new search is due)."""
        return self._exact

    @property
    def query(self) -> Query:
        return self._query

    def source_rows(self) -> list[int]:
        return list(self._rows)

    def setSourceModel(self, model: Any) -> None:
        old = self.sourceModel()
        if old is not None:
            for signal, slot in self._connections(old):
                signal.disconnect(slot)
        self.beginResetModel()
        self._rows, self._query = [], Query()
        super().setSourceModel(model)
        self.endResetModel()
        if model is not None:
            for signal, slot in self._connections(model):
                signal.connect(slot)

    def _connections(self, model: Any) -> list[tuple[Any, Any]]:
        return [(model.rowsAboutToBeRemoved, self._removing), (model.rowsRemoved, self._removed),
                (model.rowsInserted, self._inserted), (model.dataChanged, self._data_changed),
                (model.modelReset, self._reset)]

    def set_result(self, haystacks: Haystacks, query: Query, rows: Sequence[int]) -> None:
        """Show `rows` (sorted rows of the source model), the result of `query`."""
        self.beginResetModel()
        self._haystacks, self._query, self._rows, self._exact = haystacks, query, list(rows), True
        self.endResetModel()

    # -- the mapping -------------------------------------------------------------------------------

    def index(self, row: int, column: int = 0, parent: _Index = _ROOT) -> QModelIndex:
        if parent.isValid() or column != 0 or not 0 <= row < len(self._rows):
            return QModelIndex()
        return self.createIndex(row, 0)

    def parent(self, child: _Index = _ROOT) -> QModelIndex:  # type: ignore[override]
        return QModelIndex()

    def rowCount(self, parent: _Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = _ROOT) -> int:
        return 0 if parent.isValid() else 1

    def hasChildren(self, parent: _Index = _ROOT) -> bool:
        return not parent.isValid() and bool(self._rows)

    def mapToSource(self, proxy: _Index) -> QModelIndex:
        source = self.sourceModel()
        if source is None or not proxy.isValid() or proxy.row() >= len(self._rows):
            return QModelIndex()
        return cast(TimelineModel, source).row_index(self._rows[proxy.row()])  # the source is always one

    def mapFromSource(self, source: _Index) -> QModelIndex:
        if not source.isValid() or source.parent().isValid():
            return QModelIndex()
        position = bisect_left(self._rows, source.row())
        if position < len(self._rows) and self._rows[position] == source.row():
            return self.createIndex(position, 0)
        return QModelIndex()

    # -- following the model -----------------------------------------------------------------------

    def _removing(self, parent: QModelIndex, first: int, last: int) -> None:
        if parent.isValid():
            return
        low, high = bisect_left(self._rows, first), bisect_right(self._rows, last)
        if low < high:
            self.beginRemoveRows(_ROOT, low, high - 1)
            del self._rows[low:high]
            self.endRemoveRows()

    def _removed(self, parent: QModelIndex, first: int, last: int) -> None:
        if not parent.isValid():
            self._shift(first, -(last - first + 1))

    def _inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if parent.isValid():
            return
        self._shift(first, last - first + 1)
        for row in range(first, last + 1):
            self._match(row)

    def _shift(self, first: int, by: int) -> None:
        low = bisect_left(self._rows, first)
        self._rows[low:] = [row + by for row in self._rows[low:]]

    def _data_changed(self, top: QModelIndex, bottom: QModelIndex, roles: Sequence[int] = ()) -> None:
        if top.parent().isValid():
            return
        if list(roles) == [LookRole] or top.row() != bottom.row():  # the time cursor: the look, not the match
            low, high = bisect_left(self._rows, top.row()), bisect_right(self._rows, bottom.row())
            if low < high:
                self.dataChanged.emit(self.index(low, 0), self.index(high - 1, 0), roles)
            if list(roles) != [LookRole]:
                self._exact = False
                self.staleResult.emit()
            return
        self._match(top.row())

    def _match(self, row: int) -> None:
        """Show or hide one source row as it matches the query now."""
        position = bisect_left(self._rows, row)
        shown = position < len(self._rows) and self._rows[position] == row
        matches = self._haystacks is not None and bool(self._query) and self._haystacks.matches(self._query, row)
        if matches and not shown:
            self.beginInsertRows(_ROOT, position, position)
            self._rows.insert(position, row)
            self.endInsertRows()
        elif shown and not matches:
            self.beginRemoveRows(_ROOT, position, position)
            del self._rows[position]
            self.endRemoveRows()
        elif shown:
            self.dataChanged.emit(self.index(position, 0), self.index(position, 0))

    def _reset(self) -> None:
        self.beginResetModel()
        self._rows, self._exact = [], False
        self.endResetModel()
        self.staleResult.emit()

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        source = self.sourceModel()
        return source.data(self.mapToSource(index), role) if source is not None else None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        source = self.sourceModel()
        if source is None:
            return Qt.ItemFlag.NoItemFlags
        return source.flags(self.mapToSource(index)) if index.isValid() else source.flags(QModelIndex())
