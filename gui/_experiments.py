"""The Experiments pane: the open document run over a dataset, its results, and two experiments compared.

Run → Experiments… shows the pane. *Dataset…* picks a JSON Lines file of cases and *Run* runs the document as
it stands in the window (unsaved edits included) once per case, with the activities and the model the window
has (docs/experiments.md); each run writes its results and run documents beside the dataset. The results fill
the table, a row a case; double-clicking a row opens that case's run document in the debugger.

A new run is compared with the latest earlier experiment over the same dataset (the one shown, else the pane's
latest earlier run beside the dataset; none, said), or *Compare With…* loads one (over another dataset, only the
cases whose ids both have are compared: `compared`, which `eval --baseline` uses too): the table
shows each case's status, verdict, output and tokens as `before → after` where they changed, with the changed
rows marked, the pass rates and token totals side by side, the outputs' structural diff (RFC 6902, jsonpatch)
and the request the model received at a turn diffed against the turn before or the same turn of the other
experiment. Watch columns pin a `†` expression and show its value at the end of every run, in both experiments.

The dataset, the experiments shown and the watch columns are the open document's: kept in its settings
(`window.session.sidecar`, key "experiments") and shown again when it is opened; another document shows its own,
so Run never runs one document over the dataset chosen for another. The pane's first line names the document. A
run still going when another document is opened goes on and keeps its results in the settings of the document it was
started for (`DocumentSidecar.update`), not the open one's.
"""

from __future__ import annotations

import asyncio
import difflib
import html
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import jsonpatch
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import (
    Activities,
    Asker,
    Cassette,
    Document,
    DocumentError,
    Experiment,
    ExpressionError,
    Over,
    Provider,
    Settings,
    Summary,
    body_of,
    case_name,
    cassette_path,
    compared,
    ends_at_once,
    json_dumps,
    load_cases,
    load_document,
    os_reason,
    over_cases,
    over_results,
    read_results,
    reasons,
    render_text,
    same_dataset,
    summarise,
    write_results,
)

from ._autosave import serialise, snapshot
from ._background import BackgroundRunner
from ._disk import folder_of
from ._inspector import refused_solution
from ._inspector._async import spawn
from ._lines import LinesView, line_starts
from ._questions import Question
from ._timeline_delegate import row_height

if TYPE_CHECKING:
    from ._models import Models
    from ._workbench import Workbench

ResultKey = str
NAME, STATUS, PASSED, OUTPUT, TOKENS, SECONDS, DIVERGED = range(7)
HEADERS = ("Input", "Status", "Passed", "Output", "Tokens", "Time", "Diverged")
CHANGED = QColor(255, 200, 60, 70)  # a case whose status, verdict or output changed between the experiments
FIT_ROWS = 40  # the rows a column is fitted over at least, while the table is not laid out (its pane hidden)
# Of the window's height, what Run → Experiments… gives the pane at least: the table's rows beside ten lines of a
# request diff at 1280×800 (at the bottom dock's first height, the diff showed four).
ROOM = 0.5
KEPT = "experiments"  # the document's settings key: {"dataset", "results", "compared", "watches"}, paths as text


@dataclass
class Loaded:
    """One experiment as the pane holds it: where its results came from and the result lines by case."""

    path: Path
    results: list[dict[str, Any]]
    names: list[str] = field(init=False)  # each result's case, in order
    by_name: dict[str, dict[str, Any]] = field(init=False)
    summary: Summary = field(init=False)

    def __post_init__(self) -> None:
        # Made where it is read (the pane's reader), once: the table's rows and the summary line ask for them.
        self.names = [case_name(result) for result in self.results]
        self.by_name = dict(zip(self.names, self.results, strict=True))
        self.summary = summarise(self.results)


def row_names(after: Loaded | None, before: Loaded | None) -> list[str]:
    """The table's rows: the cases of `after`, then those only `before` has."""
    if after is None:
        return []
    if before is None:
        return after.names
    return after.names + [name for name in before.names if name not in after.by_name]


def _compact(value: Any) -> str:
    return "—" if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _verdict(result: dict[str, Any] | None) -> str:
    if result is None:
        return ""
    passed = result.get("passed")
    return "pass" if passed is True else "fail" if passed is False else "—"


def _seconds(result: dict[str, Any] | None) -> str:
    seconds = None if result is None else result.get("seconds")
    return f"{seconds:.2f} s" if isinstance(seconds, int | float) else ""


def _diverged(result: dict[str, Any] | None) -> str:
    where = None if result is None else result.get("diverged")
    if not isinstance(where, dict):
        return ""
    call = f", call {where['call']}" if where.get("call") is not None else ""
    return f"turn {where.get('turn')}{call}: {where.get('reason', '')}"


def _changed(was: str, now: str) -> str:
    """A cell of two experiments: the one value, or `before → after`; ∅ for a case one of them lacks (a watch
    column's read "→ 89.5", its left side blank)."""
    return now if was == now else f"{was or '∅'} → {now or '∅'}"


def why(result: dict[str, Any] | None) -> list[str]:
    """Why a case failed or missed its expectation, as `eval` prints it; nothing for one that did neither."""
    missed = result is not None and (result.get("status") == "failed" or result.get("passed") is False)
    return reasons(result) if result is not None and missed else []


CELLS: dict[int, Callable[[dict[str, Any] | None], str]] = {
    STATUS: lambda result: "" if result is None else str(result.get("status", "")),
    PASSED: _verdict,
    OUTPUT: lambda result: "" if result is None else _compact(result.get("output")),
    TOKENS: lambda result: "" if result is None else str(result.get("tokens", 0)),
    SECONDS: _seconds,
    DIVERGED: _diverged,
}


class RunDocuments:
    """The run documents results name, read once each (a watch column asks every row)."""

    def __init__(self) -> None:
        self._read: dict[Path, Document | None] = {}

    def of(self, result: dict[str, Any] | None) -> Document | None:
        run = None if result is None else result.get("run")
        if not isinstance(run, str):
            return None
        path = Path(run)
        if path not in self._read:
            try:
                self._read[path] = load_document(path)
            except DocumentError:
                self._read[path] = None
        return self._read[path]

    def watch(self, result: dict[str, Any] | None, expression: str) -> str:
        """The expression's value at the end of the run, as compact JSON; why not, in words."""
        document = self.of(result)
        if document is None:
            return "" if result is None else "(no run document)"
        try:
            resolution = document.context.resolve(expression)
        except ExpressionError as error:
            return f"(bad expression: {error})"
        return _compact(resolution.value) if resolution.found else "(not set)"


class ResultsModel(QAbstractTableModel):
    """One row per case of the shown experiment (`after`), each compared with `before` when there is one."""

    def __init__(self, documents: RunDocuments, parent: QWidget) -> None:
        super().__init__(parent)  # owned by the pane: deleted with it by Qt, never by the collector
        self.documents = documents
        self.before: Loaded | None = None
        self.after: Loaded | None = None
        self.names: list[str] = []
        self.watches: list[str] = []
        self.partial = False  # `before` is over another dataset: a case it lacks is not compared, not new

    def show(self, after: Loaded | None, before: Loaded | None = None, names: list[str] | None = None,
             partial: bool = False) -> None:
        """Show `after` compared with `before`; `names`, their `row_names` when made already (on the reader)."""
        self.beginResetModel()
        self.after, self.before, self.partial = after, before, partial
        self.names = row_names(after, before) if names is None else names
        self.endResetModel()

    def set_watches(self, expressions: list[str]) -> None:
        self.beginResetModel()
        self.watches = list(expressions)
        self.endResetModel()

    def add_watch(self, expression: str) -> None:
        column = len(HEADERS) + len(self.watches)
        self.beginInsertColumns(QModelIndex(), column, column)
        self.watches.append(expression)
        self.endInsertColumns()

    def pair(self, row: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(before, after) of a row's case; before is None when nothing is compared."""
        name = self.names[row]
        after = self.after.by_name.get(name) if self.after is not None else None
        before = self.before.by_name.get(name) if self.before is not None else None
        return before, after

    def compares(self, row: int) -> bool:
        """Whether the row's case is compared: there is an experiment to compare with, and over the same dataset
        or the case's id is in both."""
        return self.before is not None and not (self.partial and self.pair(row)[0] is None)

    def changed(self, row: int) -> bool:
        before, after = self.pair(row)
        if not self.compares(row):
            return False
        if before is None or after is None:
            return True
        return any(CELLS[column](before) != CELLS[column](after) for column in (STATUS, PASSED, OUTPUT))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.names)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS) + len(self.watches)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        return HEADERS[section] if section < len(HEADERS) else self.watches[section - len(HEADERS)]

    def text(self, row: int, column: int) -> str:
        if column == NAME:
            return self.names[row]
        before, after = self.pair(row)
        if column < len(HEADERS):
            cell = CELLS[column]
            now = cell(after)
            if not self.compares(row) or column in (SECONDS, DIVERGED):  # a time always differs: the latest
                return now
            return _changed(cell(before), now)
        expression = self.watches[column - len(HEADERS)]
        now = self.documents.watch(after, expression)
        if not self.compares(row):
            return now
        return _changed(self.documents.watch(before, expression), now)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.ToolTipRole and index.column() in (STATUS, PASSED):
            _, after = self.pair(index.row())  # a case that failed or missed says why, as `eval` prints it
            return "\n".join([self.text(index.row(), index.column()), *why(after)])
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.text(index.row(), index.column())
        if role == Qt.ItemDataRole.BackgroundRole and self.changed(index.row()):
            return QBrush(CHANGED)
        if role == Qt.ItemDataRole.FontRole and index.column() == PASSED:
            font = QFont()
            font.setBold(self.text(index.row(), PASSED).endswith("fail"))
            return font
        return None


def turn_requests(document: Document, start: int) -> list[str]:
    """The request the model received at each turn of a run, as text: turn 1 read the context as the run
    found it, each later turn the context up to the plan message that turn became (the last, all of it)."""
    messages = document.context.messages
    plans = [index for index in range(start, len(messages)) if body_of(messages[index]).get("type") == "plan"]
    cuts = [start, *plans[1:], len(messages)] if plans else [start]
    return [render_text(document.context, at) for at in cuts]


def request_diff(first: str, second: str, first_name: str, second_name: str) -> str:
    lines = difflib.unified_diff(first.splitlines(), second.splitlines(), first_name, second_name, lineterm="", n=2)
    return "\n".join(lines) or "(the same request)"


async def run_apart(run: Callable[[], Awaitable[Any]], providers: list[Provider]) -> None:
    """`run()` on a thread of its own, in an event loop of its own: each case parses the document, runs its
    loop and composes every turn's request there, not on the GUI thread. Cancelled, it is cancelled there too
    and waited for (the results so far stay); the model clients it made are closed on its loop."""
    running: Future[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = Future()

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        running.set_result((asyncio.get_running_loop(), task))
        try:
            await run()
        finally:
            for provider in providers:
                await provider.close()

    done = asyncio.get_running_loop().run_in_executor(None, asyncio.run, main())
    try:
        await asyncio.shield(done)
    except asyncio.CancelledError:  # cancel it there: now, or as soon as it has started
        running.add_done_callback(lambda started: started.result()[0].call_soon_threadsafe(started.result()[1].cancel))
        await asyncio.gather(done, return_exceptions=True)
        raise


class ExperimentsPane(QWidget):
    """The pane itself; `window.experiments`. Every button has a method a test (or a script) can call."""

    finished = Signal()  # a run of the pane ended (finished, failed or cancelled)
    progressed = Signal(int)  # cases done (said on the experiment's thread)

    def __init__(self, window: Workbench, activities: Callable[[], Activities], tools: Callable[[], Any],
                 models: Models) -> None:
        super().__init__()
        self.main = window  # `window()` is QWidget's own: the main window is `main`
        self.activities, self.tools, self.models = activities, tools, models
        self.dataset: Path | None = None
        self.documents = RunDocuments()
        self.model = ResultsModel(self.documents, self)
        self.task: asyncio.Future[Any] | None = None
        self.experiment: Experiment | None = None
        self.composer = BackgroundRunner(0, self)  # the request diff (`show_request_diff`)
        self.composer.finished.connect(self._request_diff_composed)
        self.reader = BackgroundRunner(0, self)  # results files (`show_results`): a big one would hold the window
        self.reader.finished.connect(self._results_read)
        self._reading: tuple[Path, Path | None] | None = None  # the results being read: kept while none are shown
        self.compared_note: str | None = None  # what the comparison shown leaves out, and why (`compared`)

        self.dataset_label = QLabel()  # the document the pane's dataset and results are for, and the dataset
        self.dataset_label.setTextFormat(Qt.TextFormat.PlainText)
        self.dataset_label.setWordWrap(True)  # one line, a long name ("untitled (unsaved)") widened the window
        self._opened = 0  # documents opened so far: a run that ends in another document's time shows nothing
        self._restoring = False
        self.choose = QPushButton("Dataset…")
        self.choose.setToolTip("Choose a JSON Lines file of cases: {\"id\", \"input\", \"expect\"} a line")
        self.choose.clicked.connect(self.choose_dataset)
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the document as it stands over every case of the dataset")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the cases still running; the results so far are kept")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m")
        self.progressed.connect(self.progress.setValue)
        self.progress.hide()  # shown from the first run: before it an empty bar would say nothing
        self.open_button = QPushButton("Open Results…")
        self.open_button.setToolTip("Show an experiment's results file")
        self.open_button.clicked.connect(self.open_results_dialog)
        self.compare_button = QPushButton("Compare With…")
        self.compare_button.setToolTip("Compare the shown experiment with an earlier one (its results file); open or "
                                       "run one first")
        self.compare_button.clicked.connect(self.compare_dialog)
        self.compare_button.setEnabled(False)  # with no experiment shown there is nothing to compare
        # Running on one row, the results shown (opened, compared, watched) on the next: on one row the buttons set a
        # least width that held the middle column wide at 1280×800.
        bar = QHBoxLayout()
        for widget in (self.choose, self.dataset_label, self.run_button, self.cancel_button, self.progress):
            bar.addWidget(widget)
        bar.setStretch(1, 1)
        self.summary = QLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)  # one line of it, two compared, would widen the dock over the panes beside

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(False)  # a row a line: an output whole is in the Output tab beside the table
        self.table.verticalHeader().setDefaultSectionSize(row_height(self.table.fontMetrics()))
        self.table.activated.connect(lambda index: self.open_run(index.row()))
        self.table.selectionModel().currentRowChanged.connect(lambda current, _: self.show_details(current.row()))

        self.watch_edit = QLineEdit()
        # Short enough to be read whole in the pane at 1280×800, with the timeline dock widened too (the button beside
        # it says what it is for; the tooltip gives an example).
        self.watch_edit.setPlaceholderText("†expression")
        self.watch_edit.setToolTip("A † expression (†state.order.status): its value at the end of every case's run "
                                   "becomes a column")
        self.watch_edit.returnPressed.connect(self.add_watch_from_edit)
        watch_button = QPushButton("Add Watch Column")
        watch_button.clicked.connect(self.add_watch_from_edit)
        watch_row = QHBoxLayout()
        watch_row.addWidget(self.watch_edit, 1)
        for widget in (watch_button, self.open_button, self.compare_button):
            watch_row.addWidget(widget)

        self.output_diff = QPlainTextEdit(readOnly=True)
        self.turn = QSpinBox()
        self.turn.setPrefix("turn ")
        self.turn.setMinimum(1)
        self.turn.valueChanged.connect(lambda _: self.show_request_diff())
        self.against = QComboBox()
        self.against.addItems(["against the turn before", "against the other experiment"])
        # Narrower than its longest choice when the pane is: its width held the details, and so the table, wide.
        self.against.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.against.setMinimumContentsLength(12)
        self.against.currentIndexChanged.connect(lambda _: self.show_request_diff())
        self.request_text = LinesView()  # a whole request can be megabytes: only the lines in sight are laid out
        self.request_page = request_page = QWidget()
        request_layout = QVBoxLayout(request_page)
        request_layout.setContentsMargins(0, 4, 0, 0)  # the tab's frame is margin enough: its lines are the room
        request_controls = QHBoxLayout()
        request_controls.addWidget(self.turn)
        request_controls.addWidget(self.against, 1)  # the rest of the row: its choice read whole where there is room
        request_layout.addLayout(request_controls)
        request_layout.addWidget(self.request_text)
        self.details = QTabWidget()
        self.details.addTab(self.output_diff, "Output")
        self.details.addTab(request_page, "Request Diff")

        # Side by side: the pane is a dock along the bottom edge, wide and low; stacked, the details' tabs left
        # the table a row or two.
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        self._sized_by_hand = False  # the handle dragged: the person's sizes stay (`_favour`)
        splitter.splitterMoved.connect(lambda *_: setattr(self, "_sized_by_hand", True))
        self.details.currentChanged.connect(self._favour)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)  # the dock's frame is margin enough: the rows are the room
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addLayout(watch_row)
        layout.addWidget(splitter, 1)
        window.session.documentReplaced.connect(self.restore)
        window.session.pathChanged.connect(lambda _path: self._show_dataset())  # Save As: the line names the new name
        self.restore()

    # -- the document's own ------------------------------------------------------------------------

    def restore(self) -> None:
        """Show the open document's dataset, experiments and watch columns (none kept: an empty pane). A file that
        is gone since is left out; what cannot be read says so in the status bar."""
        self._opened += 1
        if self.task is None:  # the last run's count is not this document's ("8 of 8" over another's empty pane)
            self.progress.hide()
        kept = self.main.session.sidecar.value(KEPT, {})
        kept = kept if isinstance(kept, dict) else {}

        def path(key: str) -> Path | None:
            value = kept.get(key)
            return Path(value) if isinstance(value, str) and Path(value).is_file() else None

        watches = kept.get("watches")
        self._restoring = True
        try:
            self.dataset = path("dataset")
            self.model.set_watches([item for item in watches if isinstance(item, str)]
                                   if isinstance(watches, list) else [])
            self._clear_results()  # (another document's stay shown no longer, even while this one's are read)
            results = path("results")
            if results is None:
                self.reader.stop()  # (the results of a document opened before, being read)
                self._reading = None
            else:
                self.show_results(results, path("compared"))
        finally:
            self._restoring = False
        self._show_dataset()

    def _clear_results(self) -> None:
        self.model.show(None)
        self.compared_note = None
        self.compare_button.setEnabled(False)
        self._show_summary()
        self.show_details(-1)

    def _keep(self) -> None:
        """Keep the dataset, the experiments shown and the watch columns as the open document's."""
        if self._restoring:
            return
        paths: tuple[Path | None, Path | None] = (None, None)
        if self.model.after is not None:
            before = self.model.before
            paths = (self.model.after.path, None if before is None else before.path)
        elif self._reading is not None:  # (a watch added while the document's results are read keeps them)
            paths = self._reading
        self.main.session.sidecar.set_value(KEPT, _kept({"watches": list(self.model.watches)}, self.dataset, *paths))

    def _show_dataset(self) -> None:
        path = self.main.session.path
        document = path.name if path is not None else f"{self.main.session.name} (unsaved)"
        self.dataset_label.setText(f"{document} over {self.dataset.name}" if self.dataset is not None
                                   else f"{document}: no dataset")
        self.dataset_label.setToolTip(f"The dataset and the results shown are {document}'s"
                                      + (f"\nDataset: {self.dataset}" if self.dataset is not None else ""))
        self._set_running(self.task is not None)

    # -- experiments shown ---------------------------------------------------------------------------

    def show_results(self, after: Path, before: Path | None = None) -> None:
        """Show the results in `after`, compared with `before` when given, once read on the reader's thread (a
        results file can be big); meanwhile the summary line says they are being read, and what was shown stays.
        What cannot be read is said in the status bar."""
        self.summary.setText(f"Reading {html.escape(after.name)}…")
        self.summary.setToolTip(str(after))
        self._reading = (after, before)
        self.reader.request(lambda: _read(after, before))

    def _results_read(self, result: object) -> None:
        self._reading = None
        if isinstance(result, Exception):  # (a DocumentError says where; anything else, what it was)
            why = result if isinstance(result, DocumentError) else f"{type(result).__name__}: {result}"
            self.main.statusBar().showMessage(f"Cannot show the experiment: {why}", 10_000)
            self._show_summary()
            return
        shown, compared_with, names, note = cast(tuple[Loaded, Loaded | None, list[str], str | None], result)
        self._show(shown, compared_with, names, note)

    def _show(self, shown: Loaded, compared_with: Loaded | None, names: list[str] | None = None,
              note: str | None = None) -> None:
        """Show `shown` compared with `compared_with` (only the cases compared: `compared`), and `note`, what the
        comparison leaves out or that there is none."""
        self.reader.stop()  # (a read asked for before is older than what is shown now)
        self._reading = None
        self.compared_note = note
        self.model.show(shown, compared_with, names, partial=compared_with is not None and note is not None)
        self._keep()
        self.compare_button.setEnabled(True)
        self._show_summary()
        self._fit_columns()
        if self.model.names:
            self.table.selectRow(0)

    def _fit_columns(self) -> None:
        """The short columns as wide as what the rows in sight hold (a name at most a third of the table), so that
        the output is in sight beside them in a pane a third of the window wide. Over the rows in sight only, and
        one cell measured by the style a column (`resizeColumnToContents` measures a thousand rows' cells, each in
        Python): a results file has hundreds of thousands of rows."""
        table = self.table
        rows = range(min(self.model.rowCount(),
                         max(table.viewport().height() // max(table.rowHeight(0), 1) + 1, FIT_ROWS)))
        for column in (NAME, STATUS, PASSED, TOKENS, SECONDS, DIVERGED):
            table.setColumnWidth(column, max(table.horizontalHeader().sectionSizeHint(column),
                                             self._widest(column, rows)))
        widest = max(self.table.viewport().width() // 3, 80)
        self.table.setColumnWidth(NAME, min(self.table.columnWidth(NAME), widest))

    def _widest(self, column: int, rows: range) -> int:
        """The size hint of the widest of `column`'s cells in `rows`: the one whose text is widest in the table's
        font (the cells of a column differ in their text only, the verdict's bold aside: "fail" or "pass")."""
        if not rows:
            return 0
        metrics = self.table.fontMetrics()
        widest = max(rows, key=lambda row: metrics.horizontalAdvance(self.model.text(row, column)))
        return self.table.sizeHintForIndex(self.model.index(widest, column)).width()

    def compare_with(self, before: Path) -> None:
        """Compare the shown experiment with the one in `before`."""
        if self.model.after is not None:
            self.show_results(self.model.after.path, before)

    def open_results_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open an experiment's results", self._folder(), "Results (*.jsonl)")
        if path:
            self.show_results(Path(path))

    def compare_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with an experiment", self._folder(), "Results (*.jsonl)")
        if path:
            self.compare_with(Path(path))

    def _folder(self) -> str:
        """Where the file dialogs start: beside the results shown, else the dataset (a run writes its results there),
        else the document; not the folder the program was started from."""
        shown = self.model.after.path if self.model.after is not None else None
        return folder_of(shown, self.dataset, self.main.session.path)

    def _show_summary(self) -> None:
        """A line an experiment, short enough that two compared take two lines of a narrow pane, not four (and two
        rows of the table): the count of inputs and finished ones only in the tooltip while every input finished."""
        def words(loaded: Loaded, whole: bool) -> str:
            summary = loaded.summary
            rate = "no expectations" if summary.pass_rate is None else \
                f"{summary.pass_rate:.0%} passed ({summary.passed} of {summary.passed + summary.failed})"
            finished = (f"{summary.cases} inputs, {summary.finished} finished, " if whole else ""
                        if summary.finished == summary.cases else f"{summary.finished} of {summary.cases} finished, ")
            return (f"<b>{html.escape(loaded.path.name)}</b>: {finished}{rate}, "
                    f"{summary.tokens:,} tokens ({summary.asked} asked, {summary.replayed} replayed)")

        def text(after: Loaded, before: Loaded | None, whole: bool) -> str:
            shown = words(after, whole)
            return shown if before is None else f"before: {words(before, whole)}<br>after: {shown}"

        after, before = self.model.after, self.model.before
        if after is None:
            self.summary.clear()
            self.summary.setToolTip("")
            return
        note = "" if self.compared_note is None else f"<br><i>{html.escape(self.compared_note)}</i>"
        self.summary.setText(text(after, before, False) + note)
        self.summary.setToolTip(text(after, before, True) + note)

    def add_watch(self, expression: str) -> None:
        if expression.strip():
            self.model.add_watch(expression.strip())
            self._keep()

    def add_watch_from_edit(self) -> None:
        self.add_watch(self.watch_edit.text())
        self.watch_edit.clear()

    # -- one case --------------------------------------------------------------------------------------

    def _favour(self, tab: int) -> None:
        """A request's lines are long: on the Request Diff the details get three parts of the width to the table's
        two (its names and verdicts stay in sight to choose a case by); on the Output, the table its three."""
        if self._sized_by_hand:
            return
        whole = sum(self.splitter.sizes())
        table = whole * (2 if self.details.widget(tab) is self.request_page else 3) // 5
        self.splitter.setSizes([table, whole - table])

    def show_details(self, row: int) -> None:
        if not 0 <= row < len(self.model.names):
            self.output_diff.clear()
            self.request_text.show_text("")
            return
        before, after = self.model.pair(row)
        if self.model.before is None or before is None or after is None:
            shown = after or before or {}
            text = json.dumps(shown.get("output"), indent=2, ensure_ascii=False)
        else:
            patch = jsonpatch.make_patch(before.get("output"), after.get("output")).patch
            text = "(the same output)" if not patch else json.dumps(patch, indent=2, ensure_ascii=False)
        # The why is said here too: the status cell's tooltip is out of reach of the keys.
        said = why(after)
        failed = after is not None and after.get("status") == "failed"
        heading = "Why it failed:" if failed else "Why it missed its expectation:"
        self.output_diff.setPlainText("\n".join([heading, *said, "", text]) if said else text)
        self.show_request_diff()

    def show_request_diff(self) -> None:
        """The request diff of the selected case, composed on a worker thread (each turn's request is rendered
        from its run document, which a big context makes slow): "Composing…" until it comes."""
        row = self.table.currentIndex().row()
        if not 0 <= row < len(self.model.names):
            return
        before, after = self.model.pair(row)
        turn, against = self.turn.value(), self.against.currentIndex()
        self.request_text.show_text("Composing the requests…")
        self.composer.request(lambda: self._request_diff(before, after, turn, against))

    def _request_diff(self, before: dict[str, Any] | None, after: dict[str, Any] | None, k: int,
                      against: int) -> tuple[int, str, Sequence[int]]:
        """(On the composer's thread.) How many turns the case took, the diff of turn `k`'s request and where its
        lines start."""
        turns, text = self._request_diff_text(before, after, k, against)
        return turns, text, line_starts(text)

    def _request_diff_text(self, before: dict[str, Any] | None, after: dict[str, Any] | None, k: int,
                           against: int) -> tuple[int, str]:
        requests = self._requests(after)
        if not requests:
            return 0, "(no run document to read the requests from)"
        k = min(k, len(requests))
        if against == 0:
            text = requests[0] if k == 1 else request_diff(requests[k - 2], requests[k - 1],
                                                           f"turn {k - 1}", f"turn {k}")
        else:
            other = self._requests(before)
            if k > len(other):
                text = "(the other experiment has no such turn for this input)"
            else:
                text = request_diff(other[k - 1], requests[k - 1], f"before, turn {k}", f"after, turn {k}")
        return len(requests), text

    def _request_diff_composed(self, result: object) -> None:
        if isinstance(result, Exception):
            self.request_text.show_text(f"Could not compose the requests: {type(result).__name__}: {result}")
            return
        turns, text, starts = cast(tuple[int, str, Sequence[int]], result)
        if turns:
            self.turn.blockSignals(True)
            self.turn.setMaximum(turns)
            self.turn.blockSignals(False)
        self.request_text.show_text(text, starts)

    def _requests(self, result: dict[str, Any] | None) -> list[str]:
        document = self.documents.of(result)
        if document is None or result is None:
            return []
        start = result.get("start")
        return turn_requests(document, start if isinstance(start, int) else 0)

    def open_run(self, row: int) -> None:
        """Open the case's run document (the shown experiment's) in the debugger."""
        before, after = self.model.pair(row)
        run = (after or before or {}).get("run")
        if isinstance(run, str):
            self.main.files.open_path(run)

    # -- running -----------------------------------------------------------------------------------

    def choose_dataset(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a dataset", self._folder(),
                                              "Cases (*.jsonl);;All files (*)")
        if path:
            self.set_dataset(Path(path))
            if self.run_button.isEnabled():
                self.run_button.setFocus(Qt.FocusReason.OtherFocusReason)  # the next key after a dataset: Run

    def set_dataset(self, path: Path) -> None:
        self.dataset = path
        self._keep()
        self._show_dataset()

    def _set_running(self, running: bool) -> None:
        """Run and Cancel change places as the run starts and ends; the keys go with them (disabled, the button with
        the focus gave it to the next control, the watch box, where the next Space was typed)."""
        had = next((button for button in (self.run_button, self.cancel_button, self.choose) if button.hasFocus()), None)
        self.cancel_button.setEnabled(running)
        self.run_button.setEnabled(not running and self.dataset is not None)
        self.choose.setEnabled(not running)
        if had is not None and not had.isEnabled():
            (self.cancel_button if running else self.run_button).setFocus(Qt.FocusReason.OtherFocusReason)

    def run(self) -> asyncio.Future[Any] | None:
        """Run the open document over the dataset (a task; `finished` says when it ended). Each case runs from the
        request a run the document holds started from (Run with Model's); a request that ends every case at once
        with its own final output (a turn typed by hand, without calls: `ends_at_once`, as `eval` says it) is run
        only if the person says so."""
        if self.dataset is None or self.task is not None:
            return None
        output = ends_at_once(self.main.session.document)
        if output is not None and not self.ask_run_finished(json_dumps(output, indent=False)):
            return None
        try:
            cases = load_cases(self.dataset)
        except DocumentError as error:
            self.main.statusBar().showMessage(f"Cannot read the dataset: {error}", 10_000)
            return None
        out, runs = _new_run(self.dataset, time.strftime("%Y%m%d-%H%M%S"))
        self.task = spawn(self._run(cases, out, runs))
        return self.task

    async def _run(self, cases: list[Any], out: Path, runs: Path) -> None:
        window = self.main
        session = window.session
        path = session.path if session.path is not None else Path.cwd() / "untitled.json"
        models = self.models
        config = models.config
        cassette = Cassette.open(cassette_path(path)) if session.path is not None else models.memory
        options: dict[str, Any] = {"activities": self.activities(), "tools": self.tools(), "close_provider": False}
        providers: list[Provider] = []  # made on the experiment's thread, for its event loop

        def asker() -> Asker:
            if not providers:
                providers.append(Provider(config.endpoint()))
            return Asker(providers[0], cassette, config.mode)

        # The document as it is now, serialised on a worker: the window's thread only copies the list of messages.
        taken = snapshot(session.document)
        data = await asyncio.get_running_loop().run_in_executor(None, lambda: b"".join(serialise(taken)))
        settings = Settings(data, Path(path), asker if config.ready else None, options, runs, dataset=self.dataset)
        # A solution `contextdeck run` refuses would refuse every case alike: said once, as `eval` says it. Judged
        # on the worker too: its advice is checked against the whole document.
        def judged() -> str | None:
            request = settings.request()
            return refused_solution(request.context, request.solution)

        try:
            refused = await asyncio.get_running_loop().run_in_executor(None, judged)
        except DocumentError as error:
            refused = str(error)  # the document as the window holds it did not parse back
        if refused is not None:
            self.task = None
            window.statusBar().showMessage(f"Experiment not run: {refused}", 10_000)
            self.finished.emit()
            return
        self.progress.setRange(0, len(cases))
        self.progress.setValue(0)
        self.progress.show()  # then kept: the last run's count, until another document opens
        self.experiment = Experiment(cases, settings, 4, lambda done, _: self.progressed.emit(done))
        self._set_running(True)
        shown = self.model.after
        opened, dataset, document = self._opened, self.dataset, session.sidecar.document
        ended, unwritten = "finished", None
        try:
            await run_apart(self.experiment.run, providers)
        except asyncio.CancelledError:
            ended = "cancelled"
        except DocumentError as error:
            ended = f"failed: {error}"
        except OSError as error:  # its runs folder could not be made
            ended = f"failed: cannot write {error.filename or runs}: {os_reason(error)}"
        finally:
            try:
                written = write_results(out, self.experiment.results)
            except OSError as error:  # the dataset's folder gone, a full disk: said, and the pane ready again
                written, unwritten = 0, f"cannot write {out}: {os_reason(error)}"
            self.task = None
            self._set_running(False)
        here = opened == self._opened or (document is not None and session.sidecar.holds(document))
        left = "" if here else f" (kept with {path.name}, no longer open)" if document is not None \
            else f" (for {path.name}, closed unsaved: kept nowhere else)"
        if unwritten is not None:
            made = sum(result is not None for result in self.experiment.results)
            said = f"Experiment {ended}, but its results were not written: {unwritten}"
            window.statusBar().showMessage(said, 10_000)
            window.banner.show_message(f"<b>Experiment {html.escape(ended)}, but its results were not written.</b> "
                                       f"{html.escape(unwritten)} ({made} of {len(cases)} inputs run)")
        else:
            window.statusBar().showMessage(
                f"Experiment {ended}: {written} of {len(cases)} inputs in {out.name}{left}", 10_000)
        before, note = None, None
        if written and dataset is not None:  # (read on a worker: earlier results files can be big)
            later = over_cases(dataset, cases)
            before, note = await asyncio.get_running_loop().run_in_executor(
                None, lambda: _baseline(dataset, out, later, shown))
        if written and here:  # (what was written, not read back)
            self._show(Loaded(out, [result for result in self.experiment.results if result is not None]), before,
                       note=note)
        elif written and document is not None:  # the document it ran for shows them when opened again
            compared = None if before is None else before.path
            session.sidecar.update(document, KEPT, lambda kept: _kept(kept, dataset, out, compared))
        self.finished.emit()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def run_finished_text(self, output: str) -> str:
        """What the Run Anyway question says; Undo only when there is something to undo (a turn the file was opened
        with is none: there, Undo did nothing)."""
        undo = "\n\nUndo (Ctrl+Z) takes the document back to before that turn." \
            if self.main.session.undo_stack.canUndo() else ""
        return (f"The document already ends with its final output {output}. Each case starts from the document as it "
                f"stands, so every case would end there at once, without running.{undo}")

    def ask_run_finished(self, output: str) -> bool:
        """Whether to run a document that already ends with its final output `output` (Cancel is the default)."""
        box = Question(QMessageBox.Icon.Question, "Run the experiment?", self.run_finished_text(output), parent=self)
        run = box.addButton("&Run Anyway", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is run


def _read(after: Path, before: Path | None) -> tuple[Loaded, Loaded | None, list[str], str | None]:
    """(On the reader's thread.) The experiment in `after`, the one in `before` (the cases compared with it), the
    table's rows, and what the comparison leaves out (`before` over another dataset)."""
    shown = Loaded(after, read_results(after))
    if before is None:
        return shown, None, row_names(shown, None), None
    comparison = compared(before.name, read_results(before), over_results(shown.results))
    earlier = Loaded(before, comparison.results)
    return shown, earlier, row_names(shown, earlier), comparison.differs


def _baseline(dataset: Path, out: Path, later: Over, shown: Loaded | None) -> tuple[Loaded | None, str | None]:
    """(On a worker.) What a new run over `dataset` (its results in `out`) is compared with: the experiment shown
    when it is over the same dataset, else the latest of the pane's earlier runs over it; none, said."""
    if shown is not None and same_dataset(over_results(shown.results), later):
        return shown, None
    for path in _earlier_runs(dataset, out):
        try:
            results = read_results(path)
        except DocumentError:  # (a file cut short, not a result file after all: not a baseline)
            continue
        if same_dataset(over_results(results), later):
            return Loaded(path, results), None
    return None, f"Compared with nothing: no earlier experiment over {dataset.name}"


def _earlier_runs(dataset: Path, out: Path) -> list[Path]:
    """The results files of the pane's runs over `dataset` beside it (`_new_run`'s names), latest first."""
    name = re.compile(re.escape(dataset.stem) + r"\.(\d{8}-\d{6})(?:-(\d+))?\.results\.jsonl")
    found = []
    for path in dataset.parent.glob("*.results.jsonl"):
        match = name.fullmatch(path.name)
        if match is not None and path != out:
            found.append(((match[1], int(match[2] or 1)), path))
    return [path for _, path in sorted(found, reverse=True)]


def _kept(kept: Any, dataset: Path | None, results: Path | None, compared: Path | None) -> dict[str, Any]:
    """A document's kept experiments (`kept`, its watch columns) with this dataset and these results shown."""
    kept = kept if isinstance(kept, dict) else {}
    paths = {"dataset": dataset, "results": results, "compared": compared}
    return {**kept, **{key: None if path is None else str(path) for key, path in paths.items()}}


def _new_run(dataset: Path, stamp: str) -> tuple[Path, Path]:
    """A run's results file and runs folder beside the dataset, named by the time: `-2`, `-3`... after it for a run
    begun in the same second as one before (a dataset replayed from the cassette runs in less)."""
    n = 1
    while True:
        name = f"{dataset.stem}.{stamp}{'' if n == 1 else f'-{n}'}"
        out, runs = dataset.with_name(f"{name}.results.jsonl"), dataset.with_name(f"{name}.runs")
        if not out.exists() and not runs.exists():
            return out, runs
        n += 1


def install_experiments(window: Workbench, activities: Callable[[], Activities], tools: Callable[[], Any],
                        models: Models) -> ExperimentsPane:
    """The Experiments pane as a dock (hidden until asked for) and Run → Experiments… (`window.experiments`)."""
    pane = ExperimentsPane(window, activities, tools, models)
    dock = window.add_dock(pane, "Experiments", Qt.DockWidgetArea.BottomDockWidgetArea)
    window.tabifyDockWidget(window.watch_dock, dock)  # the whole bottom edge: a wide table
    dock.hide()
    window.bring_to_front(window.watch_dock)  # hiding the tab just added must not leave another one in front
    action = QAction("E&xperiments…", window.window())
    action.setObjectName("experiments")
    action.setStatusTip("Run the document over a dataset of inputs and compare experiments")

    def show() -> None:
        dock.show()
        window.bring_to_front(dock)
        roomy = int(window.height() * ROOM)
        if not dock.isFloating() and dock.height() < roomy:  # (a dock made taller by hand stays as it is)
            window.resizeDocks([dock], [roomy], Qt.Orientation.Vertical)
        pane.choose.setFocus()

    action.triggered.connect(show)
    window.menu("Run").addSeparator()
    window.menu("Run").addAction(action)
    pane.dock = dock  # type: ignore[attr-defined]
    return pane
