"""Continue in the window against `contextdeck run` on a 500-call plan (issue 12: within 2x the CLI's time).

Run: `QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/continue_bench.py [--calls N]`. Both run the same
document from nothing to the end through the engine's tick; the window also draws each output in the
timeline, re-judges the calls panel (statuses, stale) and keeps the plan graph's statuses (hidden: not drawn).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from contextdeck.engine import Execution, fixed_clock, load_document
from contextdeck.gui._app import create_window
from contextdeck.gui._inspector._async import spawn

NOW = "2026-01-01T00:00:00Z"


def make_document(calls: int) -> dict[str, Any]:
    """A plan of latent calls; every other one reads what the one before it wrote."""
    plan = []
    for index in range(calls):
        call: dict[str, Any] = {"_tool": f"step{index % 7}", "_outputPath": f"†state.s{index}", "_output": {"n": index}}
        if index % 2 and index:
            call["_output"] = {"n": index, "after": f"†state.s{index - 1}"}
        plan.append(call)
    return {"context": [{"type": "input", "input": {"q": 1}}, {"type": "state", "data": {}},
                        {"type": "plan", "plan": plan}]}


def cli_seconds(path: Path) -> float:
    document = load_document(path)
    start = time.perf_counter()
    asyncio.run(Execution(document, clock=fixed_clock(NOW)).run())
    return time.perf_counter() - start


def window_seconds(path: Path, directory: Path) -> tuple[float, int]:
    app = QApplication.instance() or QApplication(sys.argv)
    window = create_window(QSettings(str(directory / "settings.ini"), QSettings.Format.IniFormat),
                           directory / "recovery")
    window.show()
    window.session.open(path)
    while window.session.is_loading():
        app.processEvents()
    app.processEvents()
    inspector = window.inspector  # type: ignore[attr-defined]
    inspector.debugger.clock = fixed_clock(NOW)
    before = len(window.context())
    start = time.perf_counter()
    task = spawn(inspector.debugger.continue_())
    while not task.done():
        app.processEvents()
    elapsed = time.perf_counter() - start
    appended = len(window.context()) - before
    window.session.close()
    return elapsed, appended


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        path = directory / "plan.json"
        path.write_text(json.dumps(make_document(args.calls)), encoding="utf-8")
        cli = cli_seconds(path)
        window, appended = window_seconds(path, directory)
    ratio = window / cli if cli else float("inf")
    print(f"continue {args.calls} calls: contextdeck run {cli * 1000:.0f} ms, window Continue {window * 1000:.0f} ms "
          f"({appended} messages), {ratio:.2f}x (target <= 2x) {'OK' if ratio <= 2 else 'OVER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
