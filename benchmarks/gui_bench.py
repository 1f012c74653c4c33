"""GUI benchmark (offscreen): the workbench on a 100,000-message document.

Run: `QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_bench.py [--messages N] [--views]`.
Prints one line per measurement (milliseconds on the GUI thread) and the targets of issue 5:
window ready <= 3 s after parse; no single operation blocks > 16 ms; selection updates editor and state <= 50 ms.
`--views` also times QTreeView, QTableView and QListView over the timeline model (docs/workbench.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings
from PySide6.QtWidgets import QApplication, QHeaderView, QListView, QTableView, QTreeView

from contextdeck.engine import Context, Insert, Move, Remove
from contextdeck.gui._app import create_window
from contextdeck.gui._timeline_model import TimelineModel


def make_messages(count: int) -> list[dict[str, Any]]:
    """A long agent run: text turns, per-instance state, outputs of calls, a tool and a plan."""
    messages: list[dict[str, Any]] = [
        {"type": "text", "role": "system", "text": "You moderate posts."},
        {"type": "tool", "tool": {"classify": {"type": "object", "properties": {"text": {"type": "string"}}}}},
        {"type": "state", "data": {"policy": {"strict": True}, "counts": {}},
         "schema": {"type": "object", "properties": {"policy": {"type": "object"}}}},
    ]
    index = 0
    while len(messages) < count - 1:
        instance = f"p{index % 50}"
        kind = index % 4
        if kind == 0:
            messages.append({"type": "text", "role": "user", "text": f"Post {index}: is this fine?"})
        elif kind == 1:
            messages.append({"type": "input", "_instance": instance, "input": {"post": index, "text": "hello"}})
        elif kind == 2:
            messages.append({"type": "state", "_instance": instance, "data": {"label": "ok", "n": index}})
        else:
            messages.append({"type": "data", "kind": "state", "_instance": instance, "data": {"verdict": "ok"},
                             "_call": {"_tool": "classify", "_outputPath": "†state.verdict"},
                             "_outputPath": "†state.verdict", "_date": "2026-01-01T00:00:00Z"})
        index += 1
    messages.append({"type": "plan", "plan": [{"_tool": "classify", "text": "†input.text",
                                               "_outputPath": "†state.verdict"}]})
    return messages


class Bench:
    def __init__(self, app: QApplication) -> None:
        self.app = app
        self.results: dict[str, list[float]] = {}

    def time(self, name: str, run: Callable[[], object], settle: bool = True) -> float:
        """Milliseconds `run` holds the GUI thread, plus (settle) the events it posted (repaints)."""
        start = time.perf_counter()
        run()
        if settle:
            self.app.processEvents()
        elapsed = (time.perf_counter() - start) * 1000
        self.results.setdefault(name, []).append(elapsed)
        return elapsed

    def report(self) -> None:
        for name, values in self.results.items():
            print(f"{name:<44} max {max(values):8.1f} ms   median {statistics.median(values):8.1f} ms   n={len(values)}")


def wait_state(app: QApplication, window: Any) -> None:
    while window.state_view.is_busy():
        app.processEvents()


def run_window(count: int) -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    bench = Bench(app)
    folder = Path(tempfile.mkdtemp(prefix="contextdeck-bench-"))
    path = folder / "big.json"
    path.write_text(json.dumps(make_messages(count)), encoding="utf-8")
    settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, folder / "recovery")
    window.resize(1440, 900)
    window.show()
    app.processEvents()
    marks: dict[str, float] = {}
    loop = QEventLoop()

    def mark(name: str) -> Callable[..., None]:
        def record(*_args: object) -> None:  # slots return None: PySide mishandles returned values
            marks.setdefault(name, time.perf_counter())
            if name == "parsed":
                loop.quit()
        return record

    window.session.loadStarted.connect(mark("start"))
    window.session.documentReplaced.connect(mark("replaced"))
    window.session.loadFinished.connect(mark("parsed"))
    window.session.open(path)
    loop.exec()
    app.processEvents()
    ready = time.perf_counter()
    parse = marks["replaced"] - marks["start"]
    print(f"document: {count} messages, {path.stat().st_size / 1e6:.1f} MB")
    print(f"{'parse (worker thread, incl. hand-over)':<44} {parse * 1000:8.1f} ms")
    print(f"{'window ready after parse':<44} {(ready - marks['replaced']) * 1000:8.1f} ms   (target <= 3000)")
    context = window.context()
    table = window.timeline.table
    bar = table.verticalScrollBar()
    for step in range(20):
        bench.time("scroll (page)", lambda s=step: bar.setValue(bar.maximum() * s // 20))
    bench.time("scroll (to end)", lambda: bar.setValue(bar.maximum()))
    targets = [5, count // 2, count - 10, 100, count // 3, 2]
    for target in targets:
        bench.time("select: editor (and a first slice of state)", lambda t=target: window.select_message(t))
        bench.time("select → state view shown (wall clock)", lambda: wait_state(app, window))
    for target in targets:
        window.select_message(target)
        app.processEvents()
        bench.time("insert a row (undoable)", window.duplicate_selected)
        bench.time("move a row (undoable)", lambda: window.move_selected(-1))
        bench.time("delete a row (undoable)", window.delete_selected)
        bench.time("undo", window.session.undo_stack.undo)
    # A form edit on a state message near the end: the edit itself, then the debounced refresh of views.
    window.set_follow_latest(True)
    window.watches.model.add("†state.verdict || †state.label")
    window.watches.model.add("†state.policy.strict")
    edit_target = next(i for i in range(count - 1, 0, -1) if context[i].get("type") == "state")
    window.select_message(edit_target)
    app.processEvents()
    for n in range(10):
        bench.time("form edit (replace + watches)", lambda n=n: window.editor.value_edited.emit(
            {"label": f"edited {n}", "n": n}), settle=False)
        bench.time("debounced refresh (state, LLM, watches)", window._refresh_views)
    window.llm_dock.show()
    window.llm_dock.raise_()
    bench.time("LLM view render (when shown)", window.llm_view.render_now)
    bench.report()
    window.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    window.close()


def run_views(count: int) -> None:
    """The timeline's view class: the same model under QTreeView, QTableView and QListView."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    bench = Bench(app)
    messages = make_messages(count)
    for cls in (QTableView, QTreeView, QListView):
        context = Context(list(messages))
        model = TimelineModel(context)
        view = cls()
        if isinstance(view, QTreeView):
            view.setUniformRowHeights(True)
        if isinstance(view, QListView):
            view.setUniformItemSizes(True)
        if isinstance(view, QTableView):
            view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
            view.verticalHeader().setDefaultSectionSize(24)
        view.resize(400, 800)
        view.show()
        name = cls.__name__
        bench.time(f"{name}: set model and show", lambda v=view, m=model: v.setModel(m))
        bench.time(f"{name}: insert a row", lambda c=context: c.apply(Insert(count // 2, {"type": "text", "text": "x"})))
        bench.time(f"{name}: move a row", lambda c=context: c.apply(Move(10, 20)))
        bench.time(f"{name}: delete a row", lambda c=context: c.apply(Remove(5)))
        view.close()
    bench.report()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--views", action="store_true", help="also compare the view classes")
    args = parser.parse_args()
    run_window(args.messages)
    if args.views:
        run_views(args.messages)


if __name__ == "__main__":
    main()
