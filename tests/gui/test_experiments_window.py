"""Run → Experiments…: the open document over a dataset in the window, two experiments compared with a watch
column, the outputs' structural diff and the request diff, and a case's run opened in the debugger."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton, QWidget

from adder_agent import ACTIVITIES, FIRST, adder, write_agent
from contextdeck._cli import main
from contextdeck.engine import Document, DocumentError
from contextdeck.engine.experiments import _experiment as running_cases
from contextdeck.gui import _experiments as experiments_ui
from contextdeck.gui._experiments import DIVERGED, OUTPUT, PASSED, STATUS, ExperimentsPane
from contextdeck.gui._inspector._async import release
from contextdeck.gui._models import ModelConfig


def agent(path: Path, system: str) -> Path:
    return write_agent(path, system)


def experiment(tmp_path: Path, fake_llm: Any, doc: Path, data: Path, name: str) -> Path:
    out = tmp_path / f"{name}.jsonl"
    assert main(["eval", str(doc), "--inputs", str(data), "--out", str(out), "--runs", str(tmp_path / name),
                 "--activities", str(tmp_path / "acts.py"), "--llm", fake_llm.url, "--model", "fake-small",
                 "--llm-retries", "0"]) in (0, 1)
    return out


def before_and_after(tmp_path: Path, fake_llm: Any) -> tuple[Path, Path, Path]:
    """The adder agent over one case, then with its system text changed so that the case fails: the document
    (as after) and the two results files."""
    fake_llm.answer = adder
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}, "expect": {"total": 3}}) + "\n")
    doc = tmp_path / "agent.json"
    before = experiment(tmp_path, fake_llm, agent(doc, "Add the numbers."), data, "before")
    after = experiment(tmp_path, fake_llm, agent(doc, "Multiply the sum by ten."), data, "after")
    return doc, before, after


def threads_of(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[bool]:
    """Replace `owner.name` by a wrapper that notes, at each call, whether it ran on the main thread."""
    on_main: list[bool] = []
    function = getattr(owner, name)

    def noting(*args: Any, **kwargs: Any) -> Any:
        on_main.append(threading.current_thread() is threading.main_thread())
        return function(*args, **kwargs)

    monkeypatch.setattr(owner, name, noting)
    return on_main


def shown(pane: ExperimentsPane, after: Path, before: Path | None = None) -> None:
    """`pane.show_results`, and the files read (on the pane's reader) and shown."""
    pane.show_results(after, before)
    pane.reader.flush()


def test_a_case_that_failed_or_missed_says_why_on_its_status_and_verdict(qtbot: Any, tmp_path: Path) -> None:
    """The table's status and verdict cells of a case that failed or missed its expectation say why in their
    tooltip, as `eval` prints it (the endpoint's error first); a case that passed says nothing more."""
    parent = QWidget()
    qtbot.addWidget(parent)
    model = experiments_ui.ResultsModel(experiments_ui.RunDocuments(), parent)
    results = [
        {"id": "down", "line": 1, "status": "failed", "passed": None, "errors": ["the model is down"],
         "failures": []},
        {"id": "wrong", "line": 2, "status": "finished", "passed": False, "output": {"total": 4},
         "failures": ["the output is not the expected value"], "errors": []},
        {"id": "fine", "line": 3, "status": "finished", "passed": True, "output": {"total": 2},
         "failures": [], "errors": ["call 0 (add) failed once"]},
    ]
    model.show(experiments_ui.Loaded(tmp_path / "r.jsonl", results))
    tip = Qt.ItemDataRole.ToolTipRole
    status, verdict = STATUS, PASSED
    assert model.index(0, status).data(tip) == "failed\nthe model is down"
    assert model.index(1, verdict).data(tip) == "fail\nthe output is not the expected value"
    assert model.index(2, verdict).data(tip) == "pass"


def test_a_case_only_one_experiment_has_reads_empty_on_the_other_side_in_every_column(
        qtbot: Any, tmp_path: Path) -> None:
    """Compared with an experiment that lacks a case, that case's cells read `∅ → after`, a watch column's too (it
    read "→ 89.5", its left side blank)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    run = tmp_path / "new.json"
    run.write_text(json.dumps({"context": [{"type": "state", "total": 3}]}))
    model = experiments_ui.ResultsModel(experiments_ui.RunDocuments(), parent)
    model.set_watches(["†state.total"])
    after = [{"id": "new", "line": 1, "status": "finished", "passed": None, "output": {"total": 3}, "run": str(run)}]
    model.show(experiments_ui.Loaded(tmp_path / "after.jsonl", after),
               experiments_ui.Loaded(tmp_path / "before.jsonl", []))
    assert model.text(0, STATUS) == "∅ → finished"
    assert model.text(0, len(experiments_ui.HEADERS)) == "∅ → 3"


def test_the_details_of_a_case_that_failed_or_missed_say_why_for_the_keys(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """Selected from the keys, a case that failed or missed says why above its output in the details (the status
    cell's tooltip, the only other place, is out of the keys' reach); a case that passed shows its output alone."""
    results = tmp_path / "after.jsonl"
    lines = [{"id": "bad", "line": 1, "status": "failed", "passed": None, "output": None,
              "errors": ["the input (line 1) breaks the document's input schema"]},
             {"id": "wrong", "line": 2, "status": "finished", "passed": False, "output": {"total": 4},
              "failures": ["the output is not the expected value"], "errors": []},
             {"id": "fine", "line": 3, "status": "finished", "passed": True, "output": {"total": 2}}]
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))
    window = open_window(agent(tmp_path / "agent.json", "Add the numbers."))
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    window.menu("Run").actions()[-1].trigger()
    shown(pane, results)
    pane.table.setFocus()
    assert pane.table.currentIndex().row() == 0  # the first case is shown in the details at once
    said = [pane.output_diff.toPlainText()]
    for _ in lines[1:]:
        qtbot.keyClick(pane.table, Qt.Key.Key_Down)
        said.append(pane.output_diff.toPlainText())
    assert said[0] == "Why it failed:\nthe input (line 1) breaks the document's input schema\n\nnull"
    assert said[1].startswith("Why it missed its expectation:\nthe output is not the expected value\n\n{")
    assert said[2] == json.dumps({"total": 2}, indent=2)


def test_two_experiments_compared_with_a_watch_column_and_a_request_diff(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before and after a system-text edit that changes one case's output: the changed row is marked with its
    status, verdict and output as before → after, the watch column shows †state.sum in both, the output diff
    is a JSON patch, the request diff of turn 1 shows the edited system line (composed off the GUI thread), and
    Enter on a row opens its run."""
    composed = threads_of(monkeypatch, experiments_ui, "turn_requests")
    doc, before, after = before_and_after(tmp_path, fake_llm)

    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    assert not window.watch_dock.visibleRegion().isEmpty()  # the hidden pane leaves Watches in front
    window.menu("Run").actions()[-1].trigger()
    assert pane.dock.isVisible()  # type: ignore[attr-defined]
    shown(pane, after)
    pane.compare_with(before)
    pane.reader.flush()
    model = pane.model
    assert model.rowCount() == 1
    assert model.text(0, STATUS) == "finished"
    assert model.text(0, PASSED) == "pass → fail"
    assert model.text(0, OUTPUT) == '{"total":3} → {"total":30}'
    assert model.changed(0)
    assert model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole) is not None  # the changed row is marked
    assert "before.jsonl" in pane.summary.text()
    assert "100% passed (1 of 1)" in pane.summary.text()
    assert "0% passed (0 of 1)" in pane.summary.text()

    pane.watch_edit.setText("†state.sum")
    pane.add_watch_from_edit()
    assert model.headerData(7, Qt.Orientation.Horizontal) == "†state.sum"
    assert model.text(0, 7) == "3"  # the same in both runs

    pane.table.selectRow(0)
    why, patch = pane.output_diff.toPlainText().split("\n\n")  # the case missed now: why, then the patch
    assert why.startswith("Why it missed its expectation:\n")
    assert json.loads(patch) == [{"op": "replace", "path": "/total", "value": 30}]
    qtbot.waitUntil(lambda: pane.turn.maximum() == 2)  # composed on the composer's thread
    pane.against.setCurrentIndex(1)  # against the other experiment
    pane.turn.setValue(1)
    qtbot.waitUntil(lambda: "-Add the numbers." in pane.request_text.toPlainText())
    assert "+Multiply the sum by ten." in pane.request_text.toPlainText()
    pane.against.setCurrentIndex(0)  # turn 2 against turn 1 of the same run: the sum came in
    pane.turn.setValue(2)
    qtbot.waitUntil(lambda: '+  "sum": 3' in pane.request_text.toPlainText())
    assert composed
    assert not any(composed)
    assert model.text(0, DIVERGED) == ""

    pane.open_run(0)
    qtbot.waitUntil(lambda: window.session.path == tmp_path / "after" / "one.json", timeout=10000)
    release()


def test_the_results_table_shows_several_rows_beside_the_details(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """The pane docks along the bottom edge, wide and low: the table and the details side by side, a row a line,
    so eight results show at least four rows at the window's usual size (stacked, a row and a half)."""
    fake_llm.answer = adder
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"case{n}", "input": {"a": n, "b": 2}, "expect": {"total": n + 2}})
                            + "\n" for n in range(8)))
    doc = tmp_path / "agent.json"
    results = experiment(tmp_path, fake_llm, agent(doc, "Add the numbers."), data, "eight")
    window = open_window(doc)
    window.resize(1440, 880)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    window.menu("Run").actions()[-1].trigger()
    shown(pane, results)
    table = pane.table
    last_seen = table.rowAt(table.viewport().height() - 1)
    assert last_seen == -1 or last_seen >= 3, last_seen
    assert table.geometry().top() == pane.details.geometry().top()
    dock = pane.dock  # type: ignore[attr-defined]
    dock.setFloating(True)  # as narrow as the pane is at 1280×800 beside the timeline and the state
    dock.resize(600, 320)
    qtbot.waitUntil(lambda: pane.width() <= 600)
    assert table.width() > pane.details.width(), "the table, three parts to the details' two"
    output_at = table.columnViewportPosition(OUTPUT)
    assert 0 < output_at < table.viewport().width() * 2 // 3, "the short columns leave the output in sight"


def test_at_1280_by_800_the_request_diff_shows_ten_lines_beside_the_rows(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """A first start at 1280×800: Run → Experiments… gives the pane half the window's height (at the bottom dock's
    first height the request diff showed four lines), and the Request Diff three parts of its width to the table's
    two: ten lines or more, beside all eight rows and their verdicts, the editor above keeping its room. The Output
    gives the table its width back; a handle dragged by hand is left where it is."""
    fake_llm.answer = adder
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"case{n}", "input": {"a": n, "b": 2}}) + "\n" for n in range(8)))
    doc = tmp_path / "agent.json"
    results = experiment(tmp_path, fake_llm, agent(doc, "Add the numbers."), data, "eight")
    window = open_window(doc)
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.height() == 800)
    window.reset_layout()  # the first start's docks, sized for this size
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    window.menu("Run").actions()[-1].trigger()
    shown(pane, results)
    pane.details.setCurrentIndex(1)
    text = pane.request_text
    qtbot.waitUntil(lambda: pane.request_text.viewport().height() // text.fontMetrics().lineSpacing() >= 10)
    assert pane.table.rowAt(pane.table.viewport().height() - 1) in (-1, 7), "every row in sight"
    assert pane.table.rowViewportPosition(7) >= 0
    assert pane.details.width() > pane.table.width()
    verdict_at = pane.table.columnViewportPosition(PASSED)
    assert verdict_at + pane.table.fontMetrics().horizontalAdvance("pass") < pane.table.viewport().width()
    narrow = pane.table.width()
    pane.details.setCurrentIndex(0)
    assert pane.table.width() > narrow
    pane.splitter.splitterMoved.emit(150, 1)  # (as a drag of the handle says it)
    sizes = pane.splitter.sizes()
    pane.details.setCurrentIndex(1)
    assert pane.splitter.sizes() == sizes
    editor_height = window.centralWidget().height()
    assert editor_height > 250, "the editor above keeps its room"
    dock = pane.dock  # type: ignore[attr-defined]
    window.resizeDocks([dock], [500], Qt.Orientation.Vertical)  # made taller by hand: the menu leaves it so
    taller = dock.height()
    window.menu("Run").actions()[-1].trigger()
    assert dock.height() == taller


def test_two_experiments_compared_leave_the_panes_beside_their_width(
        open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """Compared, the summary is two long lines; unwrapped, they set the pane's least width and so widened the
    Experiments dock over the timeline and the state beside it."""
    doc, before, after = before_and_after(tmp_path, fake_llm)
    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    window.menu("Run").actions()[-1].trigger()
    least = pane.minimumSizeHint().width()
    shown(pane, after, before)
    assert "before:" in pane.summary.text()
    assert pane.minimumSizeHint().width() == least, "the summary wraps, the dock is no wider for it"


def test_two_experiments_compared_take_two_short_lines_and_the_buttons_two_rows(
        open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """At 1280×800 the compared summary wrapped to four lines (two table rows) and the pane's one row of buttons
    held the middle column wide: each experiment is now one short line (the inputs and finished counts, while all
    finished, in the tooltip), and running and the results shown have a row of buttons each."""
    doc, before, after = before_and_after(tmp_path, fake_llm)
    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    window.menu("Run").actions()[-1].trigger()
    shown(pane, after, before)
    assert pane.summary.text().count("<br>") == 1
    assert "inputs" not in pane.summary.text()
    assert "finished" not in pane.summary.text()
    assert "after: <b>after.jsonl</b>: 1 inputs, 1 finished, 0% passed (0 of 1)" in pane.summary.toolTip()
    one_line = pane.summary.fontMetrics().lineSpacing()
    assert pane.summary.heightForWidth(540) < 3 * one_line, "two lines in the pane as wide as at 1280×800"
    buttons = (pane.choose, pane.run_button, pane.cancel_button, pane.open_button, pane.compare_button)
    assert pane.minimumSizeHint().width() < sum(button.sizeHint().width() for button in buttons)


def test_compare_with_waits_for_an_experiment_and_the_dialogs_start_beside_the_files(
        open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare With… with nothing shown let a file be chosen and then did nothing: it is off until an experiment
    is shown. The pane's file dialogs started in the folder the program was started from: they start beside the
    document, then beside the dataset or the results shown."""
    doc, _, after = before_and_after(tmp_path, fake_llm)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    folders: list[str] = []
    monkeypatch.setattr(experiments_ui.QFileDialog, "getOpenFileName",
                        lambda parent, title, folder, filters: (folders.append(folder), ("", ""))[1])
    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    assert not pane.compare_button.isEnabled()
    pane.open_button.click()
    pane.choose.click()
    results = tmp_path / "results"
    results.mkdir()
    moved = after.rename(results / after.name)
    shown(pane, moved)
    assert pane.compare_button.isEnabled()
    pane.compare_button.click()
    assert folders == [str(tmp_path), str(tmp_path), str(results)]


def test_results_naming_their_runs_relatively_find_them_beside_the_results_file(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Results written before runs were named absolutely name them relative to the folder eval ran in: opened
    from another folder, a run not found there is read from the results file's own folder (the watch column)
    and opened from there."""
    fake_llm.answer = adder
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n")
    doc = agent(tmp_path / "agent.json", "Add the numbers.")
    results = experiment(tmp_path, fake_llm, doc, data, "runs")
    older = [{**line, "run": str(Path(line["run"]).relative_to(tmp_path))}
             for line in map(json.loads, results.read_text().splitlines())]
    results.write_text("".join(json.dumps(line) + "\n" for line in older))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    shown(pane, results)
    pane.watch_edit.setText("†state.sum")
    pane.add_watch_from_edit()
    assert pane.model.text(0, 7) == "3"
    pane.open_run(0)
    qtbot.waitUntil(lambda: window.session.path == tmp_path / "runs" / "one.json", timeout=10000)
    release()


def ready_to_run(open_window: Any, tmp_path: Path, fake_llm: Any) -> tuple[Any, ExperimentsPane]:
    """The window on the adder agent with its activities loaded and the fake model set up: its pane."""
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    window = open_window(agent(tmp_path / "agent.json", "Add the numbers."))
    window.inspector.panel.confirm = lambda parent, file: True
    assert window.inspector.panel.load_activities(str(tmp_path / "acts.py"))
    window.models.models.set_config(ModelConfig(fake_llm.url, "fake-small", timeout=5))
    return window, window.experiments


def test_the_keys_stay_on_run_and_cancel_while_a_run_starts_and_ends(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset chosen, the focus is on Run (it stayed on Dataset…). Space on Run disabled it with the focus on it:
    Qt gave the focus to the next control, the watch box, and the next Space went there. The focus goes to Cancel
    while the run goes on, and back to Run when it ends."""
    fake_llm.answer = lambda body: adder(body, delay=0.2)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": 1, "input": {"a": 1, "b": 1}}) + "\n")
    window, pane = ready_to_run(open_window, tmp_path, fake_llm)
    window.menu("Run").actions()[-1].trigger()
    monkeypatch.setattr(experiments_ui.QFileDialog, "getOpenFileName", lambda *args: (str(data), ""))
    pane.choose.setFocus()
    qtbot.keyClick(pane.choose, Qt.Key.Key_Space)  # Dataset…: once chosen, the keys are on Run
    qtbot.waitUntil(pane.run_button.hasFocus)
    with qtbot.waitSignal(pane.finished, timeout=30000):
        qtbot.keyClick(pane.run_button, Qt.Key.Key_Space)
        qtbot.waitUntil(pane.cancel_button.isEnabled)
        assert pane.cancel_button.hasFocus()
    assert pane.run_button.hasFocus()
    release()


def test_results_that_cannot_be_written_are_said_and_the_pane_is_ready_again(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dataset's folder removed while its cases ran: the results cannot be written there. The banner and the
    status bar say so, naming the file and why; Run and Dataset… are on again, Cancel off (the pane stayed running
    for good, Cancel doing nothing, and nothing was said)."""
    fake_llm.answer = adder
    folder = tmp_path / "cases"
    folder.mkdir()
    data = folder / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n")
    window, pane = ready_to_run(open_window, tmp_path, fake_llm)
    pane.set_dataset(data)
    written = experiments_ui.write_results

    def folder_gone(path: Path, results: list[Any]) -> int:
        shutil.rmtree(folder)
        return written(path, results)

    monkeypatch.setattr(experiments_ui, "write_results", folder_gone)
    with qtbot.waitSignal(pane.finished, timeout=30000):
        pane.run()
    said = window.banner.label.text()
    assert "results were not written" in said
    assert f"cannot write {folder}" in said
    assert "No such file or directory" in said
    assert "not written" in window.statusBar().currentMessage()
    assert pane.run_button.isEnabled()
    assert pane.choose.isEnabled()
    assert not pane.cancel_button.isEnabled()
    assert pane.task is None
    release()


def test_a_runs_folder_that_cannot_be_made_fails_the_experiment_in_words(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file stands where the run documents' folder is to be made: the experiment fails, the status bar naming the
    folder and why, and the pane is ready again."""
    fake_llm.answer = adder
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n")
    window, pane = ready_to_run(open_window, tmp_path, fake_llm)
    pane.set_dataset(data)
    (tmp_path / "a-file").write_text("")
    runs = tmp_path / "a-file" / "data.runs"
    monkeypatch.setattr(experiments_ui, "_new_run", lambda dataset, stamp: (tmp_path / "data.results.jsonl", runs))
    with qtbot.waitSignal(pane.finished, timeout=30000):
        pane.run()
    assert window.statusBar().currentMessage().startswith(f"Experiment failed: cannot write {runs}: Not a directory")
    assert pane.run_button.isEnabled()
    assert not pane.cancel_button.isEnabled()
    release()


def test_run_in_the_window_runs_the_open_document_over_the_dataset_and_compares_with_the_last(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run uses the document as it stands and the window's model; a second run is compared with the first. The
    progress bar is shown from the first run on (before it, an empty bar said nothing) and keeps its count, until
    another document is opened. Each
    case (its document parsed, its loop run, each turn's request composed) runs off the GUI thread."""
    parsed = threads_of(monkeypatch, running_cases, "parse_document")
    serialised = threads_of(monkeypatch, Document, "pieces")
    fake_llm.answer = adder
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": n, "input": {"a": n, "b": 1}, "expect": {"total": n + 1}}) + "\n"
                            for n in range(3)))
    _, pane = ready_to_run(open_window, tmp_path, fake_llm)
    pane.set_dataset(data)
    assert pane.run_button.isEnabled()
    assert pane.progress.isHidden()  # no empty bar before a run
    one_second = SimpleNamespace(strftime=lambda form: "20261129-153000")  # both runs begin in one second
    monkeypatch.setattr(experiments_ui, "time", one_second)
    with qtbot.waitSignal(pane.finished, timeout=30000):
        pane.run()
    assert pane.model.rowCount() == 3
    assert not pane.progress.isHidden()
    qtbot.waitUntil(lambda: pane.progress.text() == "3 of 3")
    assert [pane.model.text(row, PASSED) for row in range(3)] == ["pass"] * 3
    asked = len(fake_llm.completions)
    assert asked == 6
    with qtbot.waitSignal(pane.finished, timeout=30000):
        pane.run()
    assert len(fake_llm.completions) == asked  # unchanged: every question replayed from the cassette
    assert pane.model.before is not None
    assert pane.model.before.path == tmp_path / "data.20261129-153000.results.jsonl"
    assert pane.model.after is not None
    assert pane.model.after.path == tmp_path / "data.20261129-153000-2.results.jsonl"  # never over the first
    assert not any(pane.model.changed(row) for row in range(3))
    assert "0 asked, 6 replayed" in pane.summary.text()
    assert len(parsed) == 3 * 2 + 2  # each case's, and each run's request, its solution checked once before them
    assert not any(parsed)
    assert serialised
    assert not any(serialised)  # the document (and each case's) is serialised off the GUI thread
    other = agent(tmp_path / "other.json", "Add the numbers.")
    pane.main.files.open_path(other)
    qtbot.waitUntil(lambda: pane.main.session.path == other)
    assert pane.progress.isHidden()  # "3 of 3" was left over another document's empty pane
    release()


def test_a_run_is_compared_with_the_latest_earlier_experiment_over_its_dataset(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run is compared with the experiment shown only when that one is over the same dataset; otherwise with the
    latest of the pane's earlier runs over it, or with nothing, said in the pane. Compared with a run over another
    dataset, every row read as changed."""
    fake_llm.answer = adder
    data, other = tmp_path / "data.jsonl", tmp_path / "other.jsonl"
    data.write_text("".join(json.dumps({"a": n, "b": 1}) + "\n" for n in range(3)))  # line-1, line-2, line-3
    other.write_text("".join(json.dumps({"a": n, "b": 5}) + "\n" for n in range(3)))
    monkeypatch.setattr(experiments_ui, "time", SimpleNamespace(strftime=lambda form: "20261129-153000"))
    _, pane = ready_to_run(open_window, tmp_path, fake_llm)

    def run(dataset: Path) -> None:
        pane.set_dataset(dataset)
        with qtbot.waitSignal(pane.finished, timeout=30000):
            pane.run()

    run(other)
    run(data)  # the experiment shown is over another dataset
    assert pane.model.before is None
    assert not any(pane.model.changed(row) for row in range(3))
    assert "Compared with nothing: no earlier experiment over data.jsonl" in pane.summary.text()
    first = pane.model.after
    assert first is not None
    run(data)
    assert pane.model.before is not None
    assert pane.model.before.path == first.path
    assert "Compared with nothing" not in pane.summary.text()
    second = pane.model.after
    assert second is not None
    shown(pane, tmp_path / "other.20261129-153000.results.jsonl")
    run(data)  # the latest earlier run over data.jsonl, not the one shown
    assert pane.model.before is not None
    assert pane.model.before.path == second.path
    assert not any(pane.model.changed(row) for row in range(3))
    release()


def test_compare_with_an_experiment_over_another_dataset_says_so_and_pairs_only_ids(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """Compare With… an experiment over another dataset: the pane says the datasets differ, and only the cases whose
    ids both have are compared (line 2 of one file is not line 2 of the other)."""
    fake_llm.answer = adder
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    doc = agent(tmp_path / "agent.json", "Add the numbers.")
    data, other = tmp_path / "data.jsonl", tmp_path / "other.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n" + json.dumps({"a": 4, "b": 4}) + "\n")
    other.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n" + json.dumps({"a": 9, "b": 9}) + "\n")
    before = experiment(tmp_path, fake_llm, doc, other, "before")
    after = experiment(tmp_path, fake_llm, doc, data, "after")
    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    shown(pane, after, before)
    assert "before.jsonl is over another dataset (other.jsonl, not data.jsonl): only the 1 case(s) whose ids both " \
        "have are compared" in pane.summary.text()
    assert pane.model.names == ["one", "line-2"]
    assert pane.model.pair(1)[0] is None  # not compared with the other file's line 2
    assert pane.model.text(1, OUTPUT) == '{"total":8}'
    assert not pane.model.changed(0)


def test_the_dataset_and_the_results_shown_follow_the_document(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """The pane kept the last document's dataset and results when another was opened: Run ran the new document over
    the old dataset, under the old results. They are the document's: another shows its own (none: Run is off), and
    opened again, a document shows its dataset, its experiments and its watch columns; the pane names the document."""
    first = agent(tmp_path / "first.json", "Add the numbers.")
    (tmp_path / "second").mkdir()
    second = agent(tmp_path / "second" / "second.json", "Add the numbers.")
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n")
    results = tmp_path / "data.results.jsonl"
    results.write_text(json.dumps({"id": "one", "status": "finished", "passed": True, "output": {"total": 3}}) + "\n")
    window = open_window(first)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    assert pane.dataset_label.text() == "first.json: no dataset"
    pane.set_dataset(data)
    shown(pane, results)
    pane.add_watch("†state.sum")
    assert pane.dataset_label.text() == "first.json over data.jsonl"

    window.files.open_path(second)
    qtbot.waitUntil(lambda: window.session.path == second)
    assert pane.dataset is None
    assert not pane.run_button.isEnabled()
    assert pane.model.rowCount() == 0
    assert pane.model.watches == []
    assert pane.summary.text() == ""
    assert pane.dataset_label.text() == "second.json: no dataset"

    window.files.open_path(first)
    qtbot.waitUntil(lambda: window.session.path == first)
    assert pane.dataset == data
    assert pane.run_button.isEnabled()
    qtbot.waitUntil(lambda: pane.model.after is not None)  # read on the pane's reader
    assert pane.model.after is not None
    assert pane.model.after.path == results
    assert pane.model.watches == ["†state.sum"]
    assert pane.dataset_label.text() == "first.json over data.jsonl"


def results_kept_and_left(qtbot: Any, open_window: Any, tmp_path: Path) -> tuple[Any, ExperimentsPane, Path, Path]:
    """A document with its results shown, left for another: the window, the pane, the document and the results."""
    doc = agent(tmp_path / "agent.json", "Add the numbers.")
    other = agent(tmp_path / "other.json", "Add the numbers.")
    results = tmp_path / "data.results.jsonl"
    results.write_text(json.dumps({"id": "one", "status": "finished", "passed": True, "output": {"total": 3}}) + "\n")
    window = open_window(doc)
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    shown(pane, results)
    window.files.open_path(other)
    qtbot.waitUntil(lambda: window.session.path == other)
    return window, pane, doc, results


def test_opening_a_document_reads_its_results_off_the_gui_thread_and_says_so_meanwhile(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The results a document kept were read on the GUI thread as it opened: a big file held the window. They are
    read on the pane's reader: the document is open and the pane says it is reading them (no rows yet, none of
    the document before) until they come. Their summary (a pass over every result) is made there too, once."""
    window, pane, doc, _ = results_kept_and_left(qtbot, open_window, tmp_path)
    read = threading.Event()
    on_main = threads_of(monkeypatch, experiments_ui, "read_results")
    summarised = threads_of(monkeypatch, experiments_ui, "summarise")  # a pass over every result, as the reading
    wait = experiments_ui.read_results
    monkeypatch.setattr(experiments_ui, "read_results", lambda path: (read.wait(10), wait(path))[1])

    window.files.open_path(doc)
    qtbot.waitUntil(lambda: window.session.path == doc)
    assert len(window.session.document.context) > 0  # the document itself is open
    assert pane.summary.text() == "Reading data.results.jsonl…"
    assert pane.model.rowCount() == 0
    read.set()
    qtbot.waitUntil(lambda: pane.model.rowCount() == 1)
    assert "100% passed" in pane.summary.text()
    assert on_main == [False]
    assert summarised == [False]


def test_a_watch_added_while_the_results_are_read_keeps_them_with_the_document(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """None are shown while a document's results are read: a watch added meanwhile kept "no results" for the
    document, and they were lost if the read then failed. The results being read are kept with the watch."""
    window, pane, doc, results = results_kept_and_left(qtbot, open_window, tmp_path)
    read = threading.Event()
    monkeypatch.setattr(experiments_ui, "read_results", lambda path: (read.wait(10), 1 / 0)[1])  # fails, held

    window.files.open_path(doc)
    qtbot.waitUntil(lambda: window.session.path == doc)
    assert pane.model.after is None  # still being read
    pane.add_watch("†state.sum")
    read.set()
    qtbot.waitUntil(lambda: pane.summary.text() != "Reading data.results.jsonl…")
    kept = window.session.sidecar.value(experiments_ui.KEPT, {})
    assert kept["watches"] == ["†state.sum"]
    assert kept["results"] == str(results)


def test_a_big_results_file_is_named_on_the_reader_and_fitted_over_the_rows_in_sight(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Showing 300,000 results held the GUI thread for a long turn: the table's rows were named there (compared,
    each case of the older file looked for in a set made anew for each), and the columns were fitted over a
    thousand rows, each cell measured in Python. The rows are named on the reader; the columns are fitted over
    the rows in sight, as wide as the widest of those."""
    after, before = tmp_path / "after.jsonl", tmp_path / "before.jsonl"
    long_name = "case1-named-at-length"
    lines = [{"id": long_name if case == 1 else f"case{case}", "status": "finished", "passed": True,
              "output": {"total": case}} for case in range(3000)]
    after.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before.write_text("".join(json.dumps(line) + "\n" for line in [*lines[:-1], {**lines[0], "id": "gone"}]))
    window = open_window(agent(tmp_path / "agent.json", "Add the numbers."))
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    named = threads_of(monkeypatch, experiments_ui, "case_name")

    pane.show_results(after, before)
    qtbot.waitUntil(lambda: pane.model.rowCount() == 3001)
    assert named
    assert not any(named)  # every case named on the reader
    assert pane.model.names[1] == long_name
    assert pane.model.names[-1] == "gone"
    assert pane.table.columnWidth(0) >= pane.table.fontMetrics().horizontalAdvance(long_name)

    texts: list[int] = []
    text = experiments_ui.ResultsModel.text
    monkeypatch.setattr(experiments_ui.ResultsModel, "text",
                        lambda model, row, column: (texts.append(row), text(model, row, column))[1])
    pane._fit_columns()
    table = pane.table
    in_sight = max(table.viewport().height() // table.rowHeight(0) + 1, experiments_ui.FIT_ROWS)
    assert 0 < len(texts) <= 6 * (in_sight + 2)  # each column's rows in sight, and its widest cell's hint
    assert max(texts) < in_sight


def test_a_cell_wider_than_its_column_is_cut_with_a_marker_and_whole_in_its_tooltip(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """The columns are fitted to the rows in sight: a longer name further down is cut. It is cut with an ellipsis
    (not mid-glyph), and the cell's tooltip is the whole name."""
    results = tmp_path / "after.jsonl"
    long_name = "case-2500-" + "named-at-great-length-" * 6
    lines = [{"id": long_name if case == 2500 else f"case{case}", "status": "finished", "passed": True,
              "output": {"total": case}} for case in range(3000)]
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))
    window = open_window(agent(tmp_path / "agent.json", "Add the numbers."))
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    pane.show_results(results)
    qtbot.waitUntil(lambda: pane.model.rowCount() == 3000)
    table = pane.table
    assert table.columnWidth(0) < table.fontMetrics().horizontalAdvance(long_name)
    assert table.textElideMode() == Qt.TextElideMode.ElideRight
    assert table.wordWrap() is False  # one line a row: elided, not wrapped out of sight
    assert pane.model.index(2500, 0).data(Qt.ItemDataRole.ToolTipRole) == long_name


def test_save_as_renames_the_document_the_pane_names(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """After Save As the pane still said "first.json over data.jsonl" of a document now called other.json (its
    dataset and results go with it, as its settings do)."""
    window = open_window(agent(tmp_path / "first.json", "Add the numbers."))
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}}) + "\n")
    pane.set_dataset(data)
    window.files.ask_save_path = lambda *args, **kwargs: str(tmp_path / "other.json")
    assert window.files.save_as_dialog()
    assert pane.dataset_label.text() == "other.json over data.jsonl"
    assert pane.dataset == data


def test_the_watch_box_placeholder_is_read_whole_at_1280_by_800(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """At 1280×800 the watch box read "†state.order.status as a colu…" (the box there is about as wide as the Add
    Watch Column button beside it, whatever the font; less with the timeline dock widened): the placeholder is no
    wider than two thirds of that button, and the tooltip says what the box is for."""
    window = open_window(agent(tmp_path / "agent.json", "Add the numbers."))
    pane: ExperimentsPane = window.experiments  # type: ignore[attr-defined]
    window.menu("Run").actions()[-1].trigger()
    qtbot.waitUntil(pane.watch_edit.isVisible)
    edit = pane.watch_edit
    (button,) = [button for button in pane.findChildren(QPushButton) if button.text() == "Add Watch Column"]
    assert edit.fontMetrics().horizontalAdvance(edit.placeholderText()) <= button.sizeHint().width() * 2 // 3
    assert "column" in edit.toolTip()


def test_a_run_that_ends_after_its_document_was_left_keeps_its_results_with_that_document(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """A run still going when another document was opened wrote its results, but the document it ran for showed the
    experiment from before the run when opened again. The results are kept in that document's settings (not the open
    one's): opened again, it shows them, compared with what it showed before."""
    fake_llm.answer = lambda body: adder(body, delay=0.3)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}, "expect": {"total": 3}}) + "\n")
    earlier = tmp_path / "earlier.results.jsonl"
    earlier.write_text(json.dumps({"id": "one", "status": "finished", "passed": True, "output": {"total": 3}}) + "\n")
    window, pane = ready_to_run(open_window, tmp_path, fake_llm)
    first = window.session.path
    pane.set_dataset(data)
    shown(pane, earlier)
    (tmp_path / "other").mkdir()
    second = agent(tmp_path / "other" / "second.json", "Add the numbers.")
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
        qtbot.waitUntil(pane.cancel_button.isEnabled)
        window.files.open_path(second)
        qtbot.waitUntil(lambda: window.session.path == second)
    assert "(kept with agent.json, no longer open)" in window.statusBar().currentMessage()
    assert pane.model.after is None  # the open document's (none) stay shown
    assert pane.dataset is None

    window.files.open_path(first)
    qtbot.waitUntil(lambda: window.session.path == first)
    qtbot.waitUntil(lambda: pane.model.after is not None)  # read on the pane's reader
    assert pane.model.after is not None
    assert pane.model.after.path.name.startswith("data.")
    assert pane.model.after.path.suffix == ".jsonl"
    assert pane.model.before is not None
    assert pane.model.before.path == earlier
    assert pane.dataset == data
    window.files.open_path(second)
    qtbot.waitUntil(lambda: window.session.path == second)
    assert pane.model.after is None  # the other document's settings took nothing of it
    release()


def saved_with(qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any,
               solution: Any) -> tuple[Any, ExperimentsPane]:
    """The adder agent saved with `solution`, opened in the window ready to run (`ready_to_run`) over a dataset of
    one case (1 + 2, expecting 3): the window and its pane."""
    fake_llm.answer = adder
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}, "expect": {"total": 3}}) + "\n")
    window, pane = ready_to_run(open_window, tmp_path, fake_llm)
    doc = agent(tmp_path / "saved.json", "Add the numbers.")
    saved = json.loads(doc.read_text())
    saved["solution"] = solution
    doc.write_text(json.dumps(saved))
    window.files.open_path(doc)
    qtbot.waitUntil(lambda: window.session.path == doc)
    pane.set_dataset(data)
    return window, pane


def test_a_document_that_already_ends_with_its_output_is_run_only_when_asked_to(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """Before running a document ending with a final output no run made, the pane asks, naming the output; Cancel
    runs nothing, Run Anyway runs every case."""
    # as Run with Model leaves it
    window, pane = saved_with(qtbot, open_window, tmp_path, fake_llm, {"meta": {}, "calls": [], "output": {"total": 0}})
    assert "Loop: finished" in window.turns.label.text()  # type: ignore[attr-defined]
    asked: list[str] = []
    pane.ask_run_finished = lambda output: asked.append(output) or False  # type: ignore[method-assign]
    assert pane.run() is None
    assert asked == ['{"total":0}']
    # Opened with that output, nothing to undo: the question says nothing of Undo, which would take nothing back.
    assert "Undo" not in pane.run_finished_text('{"total":0}')
    window.commands.insert(0, {"type": "text", "role": "user", "text": "typed"})
    assert pane.run_finished_text('{"total":0}').endswith("Undo (Ctrl+Z) takes the document back to before that turn.")
    window.commands.undo()
    assert pane.task is None
    assert pane.model.after is None
    pane.ask_run_finished = lambda output: True  # type: ignore[method-assign]
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert pane.model.text(0, OUTPUT) == '{"total":0}'
    release()


def test_a_document_a_models_run_ended_is_run_from_its_request_without_a_question(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """After Run with Model (its final output given by the model, `_model`), each case runs from the request that
    run started from (docs/experiments.md): no question, and the case's own answer, not that run's output."""
    _, pane = saved_with(qtbot, open_window, tmp_path, fake_llm,
                         {"meta": {}, "calls": [], "output": {"total": 0}, "_model": {"model": "fake-small"}})
    pane.ask_run_finished = lambda output: pytest.fail("asked")  # type: ignore[method-assign]
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert pane.model.text(0, OUTPUT) == '{"total":3}'
    assert pane.model.text(0, PASSED) == "pass"
    release()


def test_a_turn_typed_with_calls_and_an_output_runs_its_calls_without_a_question(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """A solution typed by hand with calls and a final output does not end the cases at once: its calls run first
    (eval says nothing ran only of a turn without calls). Run asks nothing and every case runs the call."""
    _, pane = saved_with(qtbot, open_window, tmp_path, fake_llm, {**FIRST, "output": {"total": 0}})
    pane.ask_run_finished = lambda output: pytest.fail("asked")  # type: ignore[method-assign]
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    [results] = tmp_path.glob("data.*.results.jsonl")
    [line] = map(json.loads, results.read_text().splitlines())
    assert (line["calls"], line["tools"], line["output"]) == (1, ["add"], {"total": 0})
    release()


def test_a_document_still_to_run_is_run_without_a_question(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """The adder agent as written (no output yet) runs at once."""
    fake_llm.answer = adder
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}, "expect": {"total": 3}}) + "\n")
    _, pane = ready_to_run(open_window, tmp_path, fake_llm)
    pane.set_dataset(data)
    pane.ask_run_finished = lambda output: pytest.fail("asked")  # type: ignore[method-assign]
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert pane.model.text(0, PASSED) == "pass"
    release()


def test_a_solution_run_refuses_is_said_once_and_no_case_runs(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any) -> None:
    """A document whose own solution `contextdeck run` refuses (advice naming no advisor, 017) would refuse every
    case alike: Run says so once on the status bar, in run's words, as `eval` does; nothing is asked of the model,
    no results file is written, and the document is unchanged."""
    window, pane = saved_with(qtbot, open_window, tmp_path, fake_llm,
                              {"calls": [], "output": None, "advisors": [{"id": "nobody"}]})
    before = list(window.context().messages)
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert window.statusBar().currentMessage() == "Experiment not run: contextdeck run refuses this solution: " \
                                                  "solution.advisors[0]: no advisor has the id 'nobody'"
    assert fake_llm.completions == []
    assert not list(tmp_path.glob("*.results.jsonl"))
    assert pane.model.after is None
    assert window.context().messages == before
    release()


def test_a_jsonl_document_runs_and_one_that_cannot_be_read_back_leaves_run_ready(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent kept as JSON Lines runs over the dataset as one kept as JSON does. A request that cannot be read
    back is said on the status bar, and Run stays ready for the next try (the task had died with it, Run
    doing nothing until the window closed)."""
    fake_llm.answer = adder
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "input": {"a": 1, "b": 2}, "expect": {"total": 3}}) + "\n")
    window, pane = ready_to_run(open_window, tmp_path, fake_llm)
    messages = json.loads(agent(tmp_path / "lines.json", "Add the numbers.").read_text())["context"]
    doc = tmp_path / "agent.jsonl"
    doc.write_text("".join(json.dumps(message) + "\n" for message in messages))
    window.files.open_path(doc)
    qtbot.waitUntil(lambda: window.session.path == doc)
    pane.set_dataset(data)
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert pane.model.text(0, PASSED) == "pass"

    def unreadable(settings: Any) -> Any:
        raise DocumentError(str(settings.path), "not a document")

    monkeypatch.setattr(running_cases.Settings, "request", unreadable)
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert window.statusBar().currentMessage() == f"Experiment not run: {doc}: not a document"
    assert pane.task is None
    monkeypatch.undo()
    with qtbot.waitSignal(pane.finished, timeout=30000):
        assert pane.run() is not None
    assert pane.model.text(0, PASSED) == "pass"
    release()
