"""The calls panel: one row per pending call with its live status, and a gutter column for breakpoints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QContextMenuEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableView, QWidget

from contextdeck.engine import (
    OPEN,
    Activities,
    CallAnalysis,
    CallPlan,
    CallRecord,
    CallState,
    Context,
    Execution,
    Graph,
    SolutionRefused,
    Stale,
    Status,
    Watch,
    analyse_call,
    blocked_because,
    expand_instances,
    flatten,
    merged_tools,
    pending_calls,
    plan_call,
)

from .._engine_signals import connect_all
from .._slices import slices
from .._slow_patterns import slow_patterns
from .._touches import cells_by_fusion
from ._breakpoints import entries_of, place
from ._plan import PlanGraph, plan_graph
from ._style import WARNING_COLOUR, breakpoint_icon, status_colour, status_icon

_Index = QModelIndex | QPersistentModelIndex

CALL_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
BREAKPOINT_ROLE = Qt.ItemDataRole.UserRole + 3

GUTTER, NUMBER, TOOL, STATUS, DETAIL = range(5)
LARGE_CONTEXT = 10_000
HEADERS = ("", "#", "tool", "status", "detail")

Reads = dict[tuple[str, str | None], Watch]  # (expression, instance) -> the watch that keeps its fold current


def watch_reads(context: Context, solution: Any = None) -> Reads:
    """A watch on every read of the calls the panel will show for `context` (what `CallsModel` holds while
    they are shown, see `_keep_reads_current`).

    The loader calls it on its worker thread, before the document is handed over and while nothing else holds
    the context: each watch folds its lane from the start there, not in the window's first refresh."""
    entries, _ = pending_calls(context, solution)
    calls, _ = flatten(expand_instances(entries, context))
    tools = merged_tools(context, {})  # a call's reads and instance do not depend on its tool or activity
    plans = [plan_call(index, call, tools, Activities()) for index, call in enumerate(calls)]
    return {read: context.watch(read[0], _ignore, read[1]) for read in _reads_of(plans)}


def _reads_of(plans: Sequence[CallPlan]) -> set[tuple[str, str | None]]:
    return {(expression.source, plan.instance) for plan in plans for expression in plan.reads}


def detail_of(plan: CallPlan, state: CallState, context: Context) -> str:
    """The one line the panel shows beside the status: the engine's error, wait, outputs or destination."""
    if state.error is not None and state.status is not Status.FIRE_AND_FORGET:
        return f"{state.error.get('type')}: {state.error.get('message')}"
    if state.status in (Status.BLOCKED, Status.AWAITING_APPROVAL):
        failed = ", ".join(f"#{writer}" for writer in state.failed_writers)
        return "waits for " + ", ".join(state.waiting_for) + blocked_because(state, failed)
    if state.status is Status.DONE:
        places = []
        for message_id in state.outputs:
            try:
                places.append(f"#{context.index_of(message_id)}")
            except KeyError:  # removed since
                continue
        return "wrote " + ", ".join(places) if places else "done (nothing written)"
    if state.status is Status.FIRE_AND_FORGET:
        if state.error is not None:
            return f"finished in the background with {state.error.get('type')}: {state.error.get('message')}"
        return "finished in the background" if state.finished else "running in the background"
    if state.status in (Status.RUNNING, Status.CANCELLED):
        return str(state.status)
    if plan.output_path is None:
        return "fire-and-forget (no _outputPath)" if plan.activity is not None else "thought (no _outputPath)"
    suffix = " · needs an output" if state.status is Status.WAITING_FOR_OUTPUT else ""
    return f"→ {plan.output_path}{suffix}"


# How often a running debugger's calls repaint their rows (a repaint of the calls view is a large part of what a
# turn of a Continue costs beyond the command line's tick; statuses a tenth of a second late are not noticed).
ROWS_WHILE_RUNNING_MS = 100


class CallsModel(QAbstractTableModel):
    """The calls of the solution (or last plan) of a context, with the statuses of the engine's `Execution`.

    Before the debugger runs anything, a fresh `Execution` is made after each edit pause: the statuses
    shown are the engine's own (invalid calls and cycles failed, blocked ones with their paths). Once the
    debugger has one (`follow`), its live statuses are shown, judged again after each edit.
    """

    breakpointsChanged = Signal()
    refreshed = Signal()

    def __init__(
        self,
        context: Context | None = None,
        solution: Any = None,
        activities: Callable[[], Activities] = Activities,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._context: Context | None = None
        self._solution: Any = None
        self._activities = activities
        self.tools: Callable[[], dict[str, Any] | None] = lambda: None  # the tool registry (`Tool.name`)
        # Where the delegate files of the calls are found: `{"path": the document's file}`, or a delegate
        # session's `{"base": folder, "chain": files}` (the Execution's keywords).
        self.origin: dict[str, Any] = {}
        self._execution: Execution | None = None
        self._live = False  # the execution is the debugger's: runs are kept
        self._analyses: dict[int, CallAnalysis] = {}
        self._stale: dict[int, Stale] = {}  # finished calls whose inputs changed since they ran
        self._graph = plan_graph([])
        self._graph_of: Graph | None = None  # the engine's graph `_graph` was drawn from: the same one is not again
        self._prefixes: tuple[object, dict[int, str]] | None = None  # (the execution's units, each row's prefix)
        self._held = False  # the debugger runs: its own outputs do not re-judge the calls (`hold`)
        self._due = False  # an edit came while held: one refresh once it ends
        self._current = False  # nothing was edited since the fresh execution shown was made (`execution_to_run`)
        # What the latest fresh execution or analysis judged waits for a slow pattern's search (`slow_patterns`):
        # judged again once it is searched, and never run from.
        self._provisional = False
        self._judged: tuple[Context, Execution] | None = None  # made in one slice, shown in the next (`_judge`)
        self._judging = False  # emptied for a big document handed over: its calls not shown yet (`_forget`)
        self._breakpoints: dict[int, str | None] = {}  # row -> its condition (a `†` expression) or None
        self._tool_breakpoints: set[str] = set()  # stop at every call of these tools
        # Where breakpoints are kept across sessions (the window: the document's sidecar settings).
        self.kept_breakpoints: Callable[[], Any] = dict
        self.keep_breakpoints: Callable[[Any], None] = lambda value: None
        self._restore_kept = False  # a new document: its kept breakpoints are placed on its calls
        self._changed_rows: set[int] = set()
        self._reads: dict[tuple[str, str | None], Watch] = {}  # see `_keep_reads_current`
        self._shown: list[tuple[str, str]] = []  # each row's status and detail as last painted
        self._answers: dict[int, dict[tuple[int, int], object]] = {}  # see `data`
        # The calls the rows were made from: an execution's own plans change in place when a loop's next
        # turn resets it, so they cannot say afterwards which call a breakpoint's row was.
        self._calls: list[Any] = []
        self._rows_timer = QTimer(self, singleShot=True, interval=0)
        self._rows_timer.timeout.connect(self._rows_changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        # Coalesce the edits of one action (a run appends several messages) into one re-analysis, run in a turn
        # of the event loop of its own (`slices`): not added to a slice of the state view or the watches.
        self._timer.timeout.connect(self._refresh_in_a_turn)
        slow_patterns().searched.connect(self._searched)
        if context is not None:
            self.set_source(context, solution)

    # -- source ---------------------------------------------------------------------------------

    def set_source(self, context: Context | None, solution: Any = None, origin: dict[str, Any] | None = None,
                   reads: Reads | None = None) -> None:
        """Follow another context (a newly opened document); breakpoints and run states are cleared.

        `origin` says where its delegate files are found (see `origin`); `reads` are watches already made on
        `context`'s reads (`watch_reads`), kept instead of made again."""
        self.origin = dict(origin or {})
        self._timer.stop()  # a refresh asked for the context before: this one's supersedes it
        self._judged = None
        if self._context is not None:
            for signal in self._signals(self._context):
                signal.disconnect(self.schedule_refresh)
        if self._context is not context:  # the old document's watches close in slices, not in the hand-over
            slices().close_later(self._reads.values())
            self._reads = {}
        self._keep_reads_current([])
        self._context, self._solution = context, solution
        self._reads = dict(reads or {})
        if context is not None:
            connect_all((signal, self.schedule_refresh) for signal in self._signals(context))
        self._live = False
        self._breakpoints.clear()
        self._tool_breakpoints.clear()
        self._restore_kept = True
        if context is not None and len(context) >= LARGE_CONTEXT:
            # A big document's calls are judged in a turn of their own: the window shows the document first.
            self._forget()
            slices().start(self._judge)
        else:
            self.refresh()

    def _forget(self) -> None:
        """No rows until the next refresh (the previous document's are gone); the reads kept are kept."""
        self.beginResetModel()
        self._judging = True
        self._execution, self._calls, self._graph, self._stale, self._shown = None, [], plan_graph([]), {}, []
        self._analyses.clear()
        self._answers.clear()
        self.endResetModel()

    @staticmethod
    def _signals(context: Context) -> tuple[Any, ...]:
        return (context.inserted, context.removed, context.moved, context.replaced)

    @property
    def context(self) -> Context | None:
        return self._context

    @property
    def judging(self) -> bool:
        """Whether the rows are empty only until a big document's calls, being judged, are shown."""
        return self._judging

    @property
    def solution(self) -> Any:
        return self._solution

    @property
    def plan_index(self) -> int | None:
        return None if self._execution is None else self._execution.plan_index

    @property
    def execution(self) -> Execution | None:
        """The execution whose statuses are shown: the debugger's, else a fresh one (nothing run)."""
        return self._execution

    def follow(self, execution: Execution | None) -> None:
        """Show the debugger's live `execution`; None: back to a fresh one after each edit."""
        self._live = execution is not None
        self._judged = None
        if execution is not None:
            self._show(execution)
        else:
            self.schedule_refresh()

    def pace_for_a_run(self, running: bool) -> None:
        """While the debugger runs, the outputs it appends do not each re-judge every call (its execution, followed
        live, moves their statuses on itself: `state_changed`); when it stops, one refresh judges them (stale
        calls, details) if anything was appended or edited meanwhile."""
        self._held = running
        # A run moves calls on in every turn it gives; their rows are repainted a few times a second, not each turn.
        self._rows_timer.setInterval(ROWS_WHILE_RUNNING_MS if running else 0)
        if not running and self._rows_timer.isActive():
            self._rows_timer.stop()
            self._rows_changed()
        if not running and self._due:
            self._due = False
            self.schedule_refresh()

    def schedule_refresh(self, *_: object) -> None:
        self._current = False
        self._answers.clear()  # an edit moves the messages a detail names (`wrote #3`)
        self._judged = None  # judged before this edit: judged again after it
        if self._held:
            self._due = True
            return
        # A big context costs more to re-analyse: wait for a longer pause.
        size = len(self._context) if self._context is not None else 0
        self._timer.setInterval(30 if size < LARGE_CONTEXT else 300)
        self._timer.start()

    def _refresh_in_a_turn(self) -> None:
        slices().start(self._judge)

    def _judge(self) -> None:
        """A slice of the window's turns that judges the calls afresh (a new `Execution` reads every call and the
        run record), shown in the next slice (`_show_judged`): the rows' reset and their repaint then have a turn
        without that work, which with them was more than a frame at a million messages. The debugger's live
        execution is judged and shown at once (`refresh`)."""
        if self._context is None or self._live:
            self.refresh()
            return
        self._timer.stop()
        self._judged = (self._context, self._fresh_execution())
        slices().start(self._show_judged)

    def _show_judged(self) -> None:
        """The rows of the calls judged in the slice before; `refreshed` (the panel's turn label, the inspector's
        views) in a slice after, so that the rows' repaint has this turn to itself."""
        judged, self._judged = self._judged, None
        if judged is None or judged[0] is not self._context or self._live:
            return  # an edit, another document or the debugger came since: its own refresh follows
        self._live, self._current = False, True
        self._show(judged[1], announce=False)
        slices().start(self._announce)

    def _announce(self) -> None:
        self.refreshed.emit()

    def refresh(self) -> None:
        """Judge the calls again now; rows are reset only when the list of calls itself changed."""
        self._timer.stop()
        self._judged = None
        execution = self._execution
        if self._context is None:
            self._live, execution = False, None
        elif self._live and execution is not None and self._same_calls(execution):
            execution.refresh()
        else:
            self._live = False  # a new plan (or none yet run): the engine judges it afresh
            execution = self._fresh_execution()
            self._current = True
        self._show(execution)

    def _fresh_execution(self) -> Execution:
        """`new_execution` to show: its slow pattern searches left to a worker (`slow_patterns`), judged again after."""
        with slow_patterns().apart() as left:
            execution = self.new_execution()
        self._provisional = bool(left)
        return execution

    def _searched(self) -> None:
        if self._provisional and self._context is not None:
            self.schedule_refresh()

    def new_execution(self, **options: Any) -> Execution:
        """A fresh execution of the calls (nothing running): the loaded activities and tools, the delegate
        files found where `origin` says; `options` are the Execution's keywords (the debugger's clock)."""
        keywords = {"activities": self._activities(), "tools": self.tools(), **self.origin, **options}
        try:
            return Execution(self._context or Context(), self._solution, **keywords)
        except SolutionRefused:  # `run` refuses it (the debugger says why): no call shown, nor the last plan's
            return Execution(self._context or Context(), [], **keywords)

    def execution_to_run(self, activities: Activities, clock: Callable[[], str]) -> Execution:
        """The execution a run starts from: the fresh one judged after the last edit (shown, or to be shown in the
        next slice) when it has the run's activities (it gets the run's clock), else a new one: making one reads
        every call and the run record again, in the turn the run starts in."""
        execution = self._execution if self._current else None
        if self._judged is not None and self._judged[0] is self._context:  # (an edit empties it: judged after it)
            execution = self._judged[1]
        if self._provisional:  # its statuses wait for a slow search, which the run makes itself
            execution = None
        if (execution is not None and not self._live and execution.activities is activities
                and (execution.clock is clock or not any(map(execution.problems, range(len(execution.plans)))))):
            execution.clock = clock  # no error message was made with its own clock (none is failed before running)
            return execution
        return self.new_execution(activities=activities, clock=clock)

    def _same_calls(self, execution: Execution) -> bool:
        assert self._context is not None
        calls, _ = flatten(pending_calls(self._context, self._solution)[0])
        return calls == [plan.call for plan in execution.plans]

    def _keep_reads_current(self, plans: Sequence[CallPlan]) -> None:
        """Hold an engine watch on every read of the shown calls, for as long as they are shown.

        The engine keeps a watched fold current through every edit, and `Context.resolve` reads it instead of
        folding the lane again: the next analysis (after each edit pause) then reads each call's inputs from a
        kept fold instead of folding a lane per read (for a plan run once per instance, per read per instance)."""
        wanted = _reads_of(plans)
        for read in self._reads.keys() - wanted:
            self._reads.pop(read).close()
        if self._context is not None:
            for source, instance in wanted - self._reads.keys():
                self._reads[source, instance] = self._context.watch(source, _ignore, instance)

    def _show(self, execution: Execution | None, announce: bool = True) -> None:
        before = self._calls
        self._judging = False
        plans = [] if execution is None else execution.plans
        self._keep_reads_current(plans)
        self._analyses.clear()
        self._answers.clear()
        self._stale = {} if execution is None else {found.index: found for found in execution.stale()}
        calls = [plan.call for plan in plans]
        self._calls = calls
        if calls != before or self._restore_kept:
            self.beginResetModel()
            self._execution = execution
            self._draw_graph(execution)
            self._place_breakpoints(before, calls)
            self.endResetModel()
            self._shown = self._looks()
        else:
            self._execution = execution
            self._draw_graph(execution)
            looks = self._looks()
            changed = [row for row, look in enumerate(looks) if row >= len(self._shown) or self._shown[row] != look]
            if changed:  # only those rows repaint (an edit elsewhere in the document usually changes none)
                self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(HEADERS) - 1))
            self._shown = looks
        if announce:
            self.refreshed.emit()

    def _draw_graph(self, execution: Execution | None) -> None:
        """The plan graph of the execution's calls, laid out again only when the engine's graph is another one (a
        new execution, an approval's edit): a refresh of the same calls changes only their statuses."""
        source = None if execution is None else execution.graph
        if source is None or source is not self._graph_of:
            self._graph = plan_graph([] if execution is None else execution.plans, source)
            self._graph_of = source

    def _looks(self) -> list[tuple[str, str]]:
        """What each row shows that a refresh can change: its status and its detail."""
        return [(self.status_text(row), self.detail(row)) for row in range(self.rowCount())]

    def state_changed(self, state: CallState) -> None:
        """The live execution moved a call on (the debugger forwards `Execution.status_changed`).

        A tick moves many calls at once: the rows are told once per turn of the event loop, in one
        `dataChanged` (each one makes the view measure its columns again).
        """
        self._analyses.pop(state.index, None)
        self._answers.clear()  # (a call's detail names those it waits for)
        if 0 <= state.index < self.rowCount():
            self._changed_rows.add(state.index)
            if not self._rows_timer.isActive():
                self._rows_timer.start()

    def _rows_changed(self) -> None:
        rows, self._changed_rows = self._changed_rows, set()
        count = self.rowCount()
        rows = {row for row in rows if row < count}
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), len(HEADERS) - 1))

    # -- breakpoints ------------------------------------------------------------------------------

    def _place_breakpoints(self, before: list[Any], calls: list[Any]) -> None:
        """The breakpoints follow their calls' identity through a plan edit, or come from the kept settings."""
        if self._restore_kept:
            self._restore_kept = False
            kept = self.kept_breakpoints()
            kept = kept if isinstance(kept, dict) else {}
            self._breakpoints = place(kept.get("calls"), calls)
            tools = kept.get("tools")
            self._tool_breakpoints = {t for t in tools if isinstance(t, str)} if isinstance(tools, list) else set()
            return
        self._breakpoints = place(entries_of(self._breakpoints, before), calls)
        self._keep()

    def _keep(self) -> None:
        if self._execution is not None:
            self.keep_breakpoints({"calls": entries_of(self._breakpoints, self._calls),
                                   "tools": sorted(self._tool_breakpoints)})

    def toggle_breakpoint(self, row: int) -> None:
        self.set_breakpoint(row, row not in self._breakpoints)

    def set_breakpoint(self, row: int, enabled: bool, condition: str | None = None) -> None:
        """Set (with an optional condition: a `†` expression that must be truthy) or clear the breakpoint of `row`."""
        if not 0 <= row < self.rowCount():
            return
        if enabled:
            self._breakpoints[row] = condition.strip() if condition and condition.strip() else None
        else:
            self._breakpoints.pop(row, None)
        self._answers.pop(row, None)
        self.dataChanged.emit(self.index(row, GUTTER), self.index(row, GUTTER))
        self._keep()
        self.breakpointsChanged.emit()

    def toggle_tool_breakpoint(self, tool: str) -> None:
        """Stop at every call of `tool` (the engine's breakpoints by tool name), or no longer."""
        self._tool_breakpoints ^= {tool}
        self._answers.clear()
        if self.rowCount():
            self.dataChanged.emit(self.index(0, GUTTER), self.index(self.rowCount() - 1, GUTTER))
        self._keep()
        self.breakpointsChanged.emit()

    @property
    def breakpoints(self) -> frozenset[int]:
        return frozenset(self._breakpoints)

    @property
    def conditions(self) -> dict[int, str]:
        """The conditions of conditional breakpoints, by row."""
        return {row: condition for row, condition in self._breakpoints.items() if condition is not None}

    @property
    def tool_breakpoints(self) -> frozenset[str]:
        return frozenset(self._tool_breakpoints)

    def stops_at(self, row: int) -> bool:
        """Whether a breakpoint holds call `row`: its own, or one on its tool."""
        return row in self._breakpoints or self.plan(row).tool_name in self._tool_breakpoints

    # -- reading ----------------------------------------------------------------------------------

    def plans(self) -> list[CallPlan]:
        return [] if self._execution is None else list(self._execution.plans)

    def getItem(self, row: int) -> CallAnalysis:
        """The engine's analysis of call `row` as it stands now (made when first asked after a change)."""
        found = self._analyses.get(row)
        if found is None:
            assert self._execution is not None
            with slow_patterns().apart() as left:
                found = self._analyses[row] = analyse_call(self._execution, row)
            self._provisional = self._provisional or bool(left)
        return found

    @property
    def graph(self) -> PlanGraph:
        return self._graph

    def plan(self, row: int) -> CallPlan:
        assert self._execution is not None
        return self._execution.plans[row]

    def status(self, row: int) -> Status:
        assert self._execution is not None
        return self._execution.state(row).status

    def statuses(self) -> list[Status]:
        return [] if self._execution is None else [state.status for state in self._execution.states]

    def group_prefix(self, row: int) -> str:
        """`any ▸ ` for a member of an `all`/`any`/`race` group (its members run together), else nothing."""
        if self._execution is None:
            return ""
        units = self._execution.units
        if self._prefixes is None or self._prefixes[0] is not units:  # each row's, once per plan's units
            prefixes: dict[int, str] = {}
            for unit in units:
                for member in unit.members:
                    prefixes.setdefault(member, "" if unit.pattern == "one" else f"{unit.pattern} ▸ ")
            self._prefixes = (units, prefixes)
        return self._prefixes[1].get(row, "")

    def recorded(self, row: int) -> CallRecord | None:
        """What the document's run record says call `row` did (None: it has not run)."""
        return None if self._execution is None else self._execution.record.of(row)

    def stale(self, row: int) -> Stale | None:
        """How a finished call's inputs changed since it ran (None: not stale)."""
        return self._stale.get(row)

    def stale_rows(self) -> list[int]:
        return sorted(self._stale)

    def status_text(self, row: int) -> str:
        return f"{self.status(row)} · stale" if row in self._stale else str(self.status(row))

    def detail(self, row: int) -> str:
        assert self._execution is not None
        assert self._context is not None
        stale = self._stale.get(row)
        if stale is not None:
            what = "the call was edited" if stale.edited else ", ".join(stale.changed) + " changed"
            return f"stale: {what} since it ran"
        if row in self._execution.delegations and self.status(row) is Status.WAITING_FOR_OUTPUT:
            return f"→ {self.plan(row).output_path} · in its delegate session (Step Out writes its output)"
        return detail_of(self._execution.plans[row], self._execution.state(row), self._context)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's names
        return 0 if parent.isValid() or self._execution is None else len(self._execution.plans)

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
        """A cell's answer; what a paint asks (`_PAINTED`) is made for the whole row when first asked and kept until
        the row may change: a paint asks seven roles of each cell, each a call into Python, and made afresh for each
        they were a third of a paint of the calls view."""
        row = index.row()
        answers = self._answers.get(row)
        if answers is None:
            if not index.isValid() or not 0 <= row < self.rowCount():
                return None
            answers = self._answers[row] = self._answers_of(row)
        found = answers.get((index.column(), role), answers)
        if found is not answers:
            return found
        column, plan = index.column(), self.plan(row)
        if role == CALL_ROLE:
            return self.getItem(row)
        if role == STATUS_ROLE:
            return self.status(row)
        if role == BREAKPOINT_ROLE:
            return self.stops_at(row)
        return _CELLS.get((column, role), _nothing)(self, row, plan)

    def _answers_of(self, row: int) -> dict[tuple[int, int], object]:
        plan = self.plan(row)
        return {(column, role): _CELLS.get((column, role), _nothing)(self, row, plan)
                for column in range(len(HEADERS)) for role in _PAINTED}


def _ignore(_resolution: object) -> None:
    """A read's watch only keeps its fold current: the next analysis reads it."""


def _nothing(model: CallsModel, row: int, plan: CallPlan) -> object:
    return None


_Display = Qt.ItemDataRole.DisplayRole
_CELLS: dict[tuple[int, Qt.ItemDataRole | int], Callable[[CallsModel, int, CallPlan], object]] = {
    (GUTTER, Qt.ItemDataRole.DecorationRole): lambda m, r, c: breakpoint_icon(m.stops_at(r)),
    (GUTTER, Qt.ItemDataRole.ToolTipRole): lambda m, r, c: f"Breakpoint when {m.conditions[r]} (click to clear)"
    if r in m.conditions else "Breakpoint (click to toggle)",
    (NUMBER, _Display): lambda m, r, c: str(r),
    (TOOL, _Display): lambda m, r, c: m.group_prefix(r) + (c.tool_name or "(no _tool)")
    + (f" @{c.instance}" if c.instance else ""),
    (TOOL, Qt.ItemDataRole.ToolTipRole): lambda m, r, c: f"{c.mode} call"
    + (f", instance {c.instance}" if c.instance else ""),
    (STATUS, _Display): lambda m, r, c: m.status_text(r),
    (STATUS, Qt.ItemDataRole.DecorationRole): lambda m, r, c: status_icon(m.status(r)),
    (STATUS, Qt.ItemDataRole.ForegroundRole): lambda m, r, c: QColor(WARNING_COLOUR) if m.stale(r)
    else status_colour(m.status(r)),
    (DETAIL, _Display): lambda m, r, c: m.detail(r),
    (DETAIL, Qt.ItemDataRole.ToolTipRole): lambda m, r, c: "\n".join(
        f"{p.where}: {p.message}" for p in m.getItem(r).problems) or m.detail(r),
}

# The roles Qt's item delegate asks of each cell it paints.
_PAINTED = tuple(int(role) for role in (
    _Display, Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.CheckStateRole))


class CallsView(QTableView):
    """The calls table; a click in the gutter column toggles a breakpoint, selecting a row selects the call."""

    callSelected = Signal(int)
    runCallRequested = Signal(int)  # "Run This Call" from the row's menu
    runToRequested = Signal(int)  # "Run to Here"
    conditionRequested = Signal(int)  # "Breakpoint Condition…"

    def __init__(self, model: CallsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        cells_by_fusion(self)
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
        # Measured when the calls change, not at every status change: a run changes statuses many times a
        # second, and measuring a column reads all its rows.
        for column in (NUMBER, TOOL, STATUS):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        model.modelReset.connect(self._fit_columns)
        header.setStretchLastSection(True)
        self.clicked.connect(self._clicked)
        self.selectionModel().currentRowChanged.connect(self._current_changed)
        model.modelReset.connect(self._restore_selection)
        self._selected: int | None = None

    def _fit_columns(self) -> None:
        """The number, tool and status columns as wide as their widest cells (and the number and tool columns as
        their headers), as `resizeColumnToContents` makes them, measuring one cell a column (`_widest`). Kept while
        a big document's calls are judged (`judging`: no rows only until then), and the view laid out at once, its
        scroll bar shown or hidden for the new rows before they are painted: fitted to no rows, or laid out a turn
        later, a reopened document's rows would be painted whole again, once for the tool column fitted back and once
        for the scroll bar come back."""
        if self.calls_model().judging:
            return
        self.executeDelayedItemsLayout()
        header = self.horizontalHeader()
        for column in (NUMBER, TOOL):
            self.setColumnWidth(column, max(self._widest(column), header.sectionSizeHint(column)))
        self.setColumnWidth(STATUS, max(self._widest(STATUS), 150) + 24)

    def _widest(self, column: int) -> int:
        """The size hint of `column`'s widest cell: the one whose text is widest in the view's font (the cells of a
        column differ in their text only: one font, an icon of one size or none). The style measures a cell in
        Python, so measuring every cell of a column costs a turn more than a frame allows. Over as many
        rows as Qt's own measure (the header's `resizeContentsPrecision`)."""
        model = self.calls_model()
        rows = min(model.rowCount(), self.horizontalHeader().resizeContentsPrecision())
        if rows <= 0:
            return 0
        text, metrics = _CELLS[column, _Display], self.fontMetrics()
        widest = max(range(rows), key=lambda row: metrics.horizontalAdvance(str(text(model, row, model.plan(row)))))
        return self.sizeHintForIndex(model.index(widest, column)).width()

    def calls_model(self) -> CallsModel:
        model = self.model()
        assert isinstance(model, CallsModel)
        return model

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """The row's menu: under the mouse, or from the keys (the Menu key, Shift+F10) the current row's, below it.
        From the keys Qt gives the middle of the view as the place, and the menu was the row's there, not the
        selected call's: Run This Call ran another call."""
        index, point = self.indexAt(event.pos()), event.pos()
        if event.reason() == QContextMenuEvent.Reason.Keyboard and self.currentIndex().isValid():
            index = self.currentIndex()
            point = self.visualRect(index).bottomLeft()
        self.tool_menu(index).popup(self.viewport().mapToGlobal(point))

    def tool_menu(self, index: QModelIndex) -> QMenu:
        """The context menu of a row: run this call, run to here, its breakpoint (the gutter's, from the keys), its
        condition, break on every call of its tool."""
        menu = QMenu(self)
        model = self.calls_model()
        if index.isValid():
            row = index.row()
            done = model.status(row) not in OPEN
            menu.addAction("Run This &Call Again" if done else "Run This &Call").triggered.connect(
                lambda _checked=False: self.runCallRequested.emit(row))
            menu.addAction("Run to &Here").triggered.connect(lambda _checked=False: self.runToRequested.emit(row))
            menu.addSeparator()
            here = menu.addAction("&Breakpoint")
            here.setCheckable(True)
            here.setChecked(row in model.breakpoints)
            here.triggered.connect(lambda _checked=False: model.toggle_breakpoint(row))
            menu.addAction("Breakpoint C&ondition…").triggered.connect(
                lambda _checked=False: self.conditionRequested.emit(row))
        tool = model.plan(index.row()).tool_name if index.isValid() else None
        if tool is not None:
            action = menu.addAction(f"Break on &every {tool} call")
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
