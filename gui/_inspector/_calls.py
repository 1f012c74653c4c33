"""The calls panel: one row per pending call with its live status, and a gutter column for breakpoints."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableView, QWidget

from contextdeck.engine import Context

from ._analysis import OPEN, CallAnalysis, Status, analyse_calls, wait_for_feeders
from ._plan import PlanGraph, plan_graph
from ._style import breakpoint_icon, status_colour, status_icon

_Index = QModelIndex | QPersistentModelIndex

CALL_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
BREAKPOINT_ROLE = Qt.ItemDataRole.UserRole + 3

GUTTER, NUMBER, TOOL, STATUS, DETAIL = range(5)
LARGE_CONTEXT = 10_000
HEADERS = ("", "#", "tool", "status", "detail")


@dataclass(frozen=True)
class RunState:
    """What the debugger knows about a call beyond the static analysis: a status and a line of detail."""

    status: Status
    detail: str = ""


def detail_of(call: CallAnalysis) -> str:
    """The one line the panel shows beside the status."""
    if call.status is Status.INVALID:
        return call.problems[0].message if call.problems else "invalid"
    if call.status in (Status.BLOCKED, Status.AWAITING_APPROVAL):
        return "waits for " + ", ".join(call.missing)
    if call.status in (Status.DONE, Status.FAILED):
        return "recorded at " + ", ".join(f"#{i}" for i in call.done_at)
    if call.fire_and_forget:
        return "fire-and-forget (no _outputPath)"
    if call.ephemeral:
        return "thought (no _outputPath)"
    suffix = " · needs an output" if call.needs_output else ""
    return f"→ {call.output_path}{suffix}"


class CallsModel(QAbstractTableModel):
    """The calls of the solution (or last plan) of a context, re-analysed after every edit of the context."""

    breakpointsChanged = Signal()
    refreshed = Signal()

    def __init__(
        self,
        context: Context | None = None,
        solution: Any = None,
        activities: Callable[[], Collection[str]] = tuple,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._context: Context | None = None
        self._solution: Any = None
        self._activities = activities
        self._calls: list[CallAnalysis] = []
        self._graph = plan_graph([])
        self._plan_index: int | None = None
        self._runtime: dict[int, RunState] = {}
        self._breakpoints: set[int] = set()
        self._tool_breakpoints: set[str] = set()  # stop at every call of these tools
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        # Coalesce the edits of one action (a run appends several messages) into one re-analysis.
        self._timer.timeout.connect(self.refresh)
        if context is not None:
            self.set_source(context, solution)

    # -- source ---------------------------------------------------------------------------------

    def set_source(self, context: Context | None, solution: Any = None) -> None:
        """Follow another context (a newly opened document); breakpoints and run states are cleared."""
        if self._context is not None:
            for signal in self._signals(self._context):
                signal.disconnect(self.schedule_refresh)
        self._context, self._solution = context, solution
        if context is not None:
            for signal in self._signals(context):
                signal.connect(self.schedule_refresh)
        self._runtime.clear()
        self._breakpoints.clear()
        self._tool_breakpoints.clear()
        self.refresh()

    @staticmethod
    def _signals(context: Context) -> tuple[Any, ...]:
        return (context.inserted, context.removed, context.moved, context.replaced)

    @property
    def context(self) -> Context | None:
        return self._context

    @property
    def solution(self) -> Any:
        return self._solution

    @property
    def plan_index(self) -> int | None:
        return self._plan_index

    def schedule_refresh(self, *_: object) -> None:
        # A big context costs more to re-analyse (each resolution folds its kind): wait for a longer pause.
        size = len(self._context) if self._context is not None else 0
        self._timer.setInterval(30 if size < LARGE_CONTEXT else 300)
        self._timer.start()

    def refresh(self) -> None:
        """Re-analyse now; rows are reset only when the list of calls itself changed."""
        self._timer.stop()
        if self._context is None:
            fresh: list[CallAnalysis] = []
            self._plan_index = None
        else:
            fresh, self._plan_index = analyse_calls(self._context, self._solution, self._activities())
        self._graph = plan_graph(fresh)
        if [c.call for c in fresh] != [c.call for c in self._calls]:
            self._runtime.clear()
        fed = {c.index for c in fresh if self._status_of(c) in (Status.DONE, Status.FIRE_AND_FORGET)}
        fresh = wait_for_feeders(fresh, self._graph.feeders, fed)
        if [c.call for c in fresh] != [c.call for c in self._calls]:
            self.beginResetModel()
            self._calls = fresh
            self._runtime.clear()
            self._breakpoints = {b for b in self._breakpoints if b < len(fresh)}
            self.endResetModel()
        else:
            self._calls = fresh
            if fresh:
                self.dataChanged.emit(self.index(0, 0), self.index(len(fresh) - 1, len(HEADERS) - 1))
        self.refreshed.emit()

    # -- what the debugger adds -----------------------------------------------------------------

    def set_run_state(self, row: int, state: RunState | None) -> None:
        """Overlay a run status (running, done, failed...) on a call; None returns to the static one."""
        if state is None:
            self._runtime.pop(row, None)
        else:
            self._runtime[row] = state
        self.schedule_refresh()  # readers of this call may stop waiting for it

    def clear_run_states(self) -> None:
        self._runtime.clear()
        self.schedule_refresh()

    def toggle_breakpoint(self, row: int) -> None:
        self.set_breakpoint(row, row not in self._breakpoints)

    def set_breakpoint(self, row: int, enabled: bool) -> None:
        if not 0 <= row < len(self._calls):
            return
        if enabled:
            self._breakpoints.add(row)
        else:
            self._breakpoints.discard(row)
        self.dataChanged.emit(self.index(row, GUTTER), self.index(row, GUTTER))
        self.breakpointsChanged.emit()

    def toggle_tool_breakpoint(self, tool: str) -> None:
        """Stop at every call of `tool` (the engine's breakpoints by tool name), or no longer."""
        self._tool_breakpoints ^= {tool}
        if self._calls:
            self.dataChanged.emit(self.index(0, GUTTER), self.index(len(self._calls) - 1, GUTTER))
        self.breakpointsChanged.emit()

    @property
    def breakpoints(self) -> frozenset[int]:
        return frozenset(self._breakpoints)

    @property
    def tool_breakpoints(self) -> frozenset[str]:
        return frozenset(self._tool_breakpoints)

    def stops_at(self, row: int) -> bool:
        """Whether a breakpoint holds call `row`: its own, or one on its tool."""
        return row in self._breakpoints or self._calls[row].tool in self._tool_breakpoints

    # -- reading ----------------------------------------------------------------------------------

    def calls(self) -> list[CallAnalysis]:
        return list(self._calls)

    def getItem(self, row: int) -> CallAnalysis:
        return self._calls[row]

    @property
    def graph(self) -> PlanGraph:
        return self._graph

    def _status_of(self, call: CallAnalysis) -> Status:
        state = self._runtime.get(call.index)
        # A run state that is still open (ready, blocked...) may be stale after an edit: analysis decides those.
        return state.status if state is not None and state.status not in OPEN else call.status

    def status(self, row: int) -> Status:
        return self._status_of(self._calls[row])

    def statuses(self) -> list[Status]:
        return [self._status_of(c) for c in self._calls]

    def detail(self, row: int) -> str:
        state = self._runtime.get(row)
        if state is not None and state.status not in OPEN and state.detail:
            return state.detail
        return detail_of(self._calls[row])

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's names
        return 0 if parent.isValid() else len(self._calls)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's names
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == GUTTER:
            return "Breakpoints: click to toggle"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._calls):
            return None
        row, column = index.row(), index.column()
        call = self._calls[row]
        if role == CALL_ROLE:
            return call
        if role == STATUS_ROLE:
            return self.status(row)
        if role == BREAKPOINT_ROLE:
            return self.stops_at(row)
        return _CELLS.get((column, role), _nothing)(self, row, call)


def _nothing(model: CallsModel, row: int, call: CallAnalysis) -> object:
    return None


_Display = Qt.ItemDataRole.DisplayRole
_CELLS: dict[tuple[int, Qt.ItemDataRole | int], Callable[[CallsModel, int, CallAnalysis], object]] = {
    (GUTTER, Qt.ItemDataRole.DecorationRole): lambda m, r, c: breakpoint_icon(m.stops_at(r)),
    (GUTTER, Qt.ItemDataRole.ToolTipRole): lambda m, r, c: "Breakpoint (click to toggle)",
    (NUMBER, _Display): lambda m, r, c: str(r),
    (TOOL, _Display): lambda m, r, c: c.tool or "(no _tool)",
    (TOOL, Qt.ItemDataRole.ToolTipRole): lambda m, r, c: f"{c.mode} call"
    + (f", instance {c.instance}" if c.instance else ""),
    (STATUS, _Display): lambda m, r, c: str(m.status(r)),
    (STATUS, Qt.ItemDataRole.DecorationRole): lambda m, r, c: status_icon(m.status(r)),
    (STATUS, Qt.ItemDataRole.ForegroundRole): lambda m, r, c: status_colour(m.status(r)),
    (DETAIL, _Display): lambda m, r, c: m.detail(r),
    (DETAIL, Qt.ItemDataRole.ToolTipRole): lambda m, r, c: "\n".join(f"{p.where}: {p.message}" for p in c.problems)
    or m.detail(r),
}


class CallsView(QTableView):
    """The calls table; a click in the gutter column toggles a breakpoint, selecting a row selects the call."""

    callSelected = Signal(int)

    def __init__(self, model: CallsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(26)
        header = self.horizontalHeader()
        header.setSectionResizeMode(GUTTER, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(GUTTER, 26)
        header.setSectionResizeMode(NUMBER, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TOOL, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(STATUS, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.clicked.connect(self._clicked)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(lambda point: self.tool_menu(self.indexAt(point)).popup(
            self.viewport().mapToGlobal(point)))
        self.selectionModel().currentRowChanged.connect(self._current_changed)
        model.modelReset.connect(self._restore_selection)
        self._selected: int | None = None

    def calls_model(self) -> CallsModel:
        model = self.model()
        assert isinstance(model, CallsModel)
        return model

    def tool_menu(self, index: QModelIndex) -> QMenu:
        """The context menu of a row: break on every call of its tool."""
        menu = QMenu(self)
        model = self.calls_model()
        tool = model.getItem(index.row()).tool if index.isValid() else None
        if tool is not None:
            action = menu.addAction(f"Break on every {tool} call")
            action.setCheckable(True)
            action.setChecked(tool in model.tool_breakpoints)
            action.triggered.connect(lambda _checked=False: model.toggle_tool_breakpoint(tool))
        return menu

    def _clicked(self, index: QModelIndex) -> None:
        if index.column() == GUTTER:
            self.calls_model().toggle_breakpoint(index.row())

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and current.row() != self._selected:
            self._selected = current.row()
            self.callSelected.emit(current.row())

    def _restore_selection(self) -> None:
        row = self._selected
        self._selected = None
        if row is not None and row < self.calls_model().rowCount():
            self.select_call(row)

    def select_call(self, row: int) -> None:
        """Select call `row` (from the graph, an audit link, the debugger)."""
        if 0 <= row < self.calls_model().rowCount():
            self.setCurrentIndex(self.calls_model().index(row, TOOL))
