"""Continue in the window against `contextdeck run` on a 500-call plan (issue 31: the window within 1.5x).

Run: `QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/continue_bench.py [--calls N]`. This file holds the
document and the command line's side; the window's side is `gui_bench.py`'s Continue part, which `make bench` runs
in its freeze run and which this script runs alone (one way to measure it, in a process of its own).

What is compared: the window's Continue, from the command to the debugger stopped, on the application's own event
loop (as a user runs it: it waits when idle, repaints, runs the views' slices), against the engine's tick as
`contextdeck run` runs it (`Execution.run` under `asyncio.run`, the document already loaded, best of three). Each
as wall time and as the CPU time of its thread: only the window runs on the GUI thread, so on a shared machine the
CPU ratio is the steady one.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from contextdeck.engine import Execution, fixed_clock, load_document

NOW = "2026-01-01T00:00:00Z"
CLI_RUNS = 3


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


def cli_times(path: Path) -> tuple[float, float]:
    """The command line's tick over the document at `path`: (wall, CPU of this thread) seconds, each the best of
    `CLI_RUNS` runs on a freshly loaded document."""
    walls, cpus = [], []
    for _ in range(CLI_RUNS):
        document = load_document(path)
        start, started = time.perf_counter(), time.thread_time()
        asyncio.run(Execution(document, clock=fixed_clock(NOW)).run())
        walls.append(time.perf_counter() - start)
        cpus.append(time.thread_time() - started)
    return min(walls), min(cpus)


def main() -> int:
    import gui_bench  # beside this file: the window's side

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    gui_bench.run_freezes(0, 0, args.calls, [], turns=False, profile=False, actions={"continue"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
