"""`validate` and `render` of 100,000 messages against building the `Context` (issue 30: each ≤ 1.5×).

Run: `.venv/bin/python benchmarks/checks_bench.py [MESSAGES]` (`make bench`: 100,000). Three documents:
`tidy` and `untidy` are benchmarks/run.py's workloads; `run` is what a long run leaves: one plan of
MESSAGES calls of a tool, each call's output (with its `_call` and `_run` audit, as the engine writes them).
Each figure is CPU time (`time.process_time`) of: building the `Context` from the parsed messages,
`validate` (every check the command line's `validate` makes), `render` (the messages the model receives)
and `compose_request` (the command line's `render`: the messages, the tools' schema and the settings),
each also as a multiple of the build, all under the command line's collector setting (`batch_collector`).
The load (`os.getloadavg`) is printed beside them.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import run as workloads
from contextdeck.engine import Context, batch_collector, compose_request, render, validate

TARGET = 1.5  # validate and render: at most this many times the build
CHECKS: dict[str, Callable[[Context], object]] = {
    "validate": validate, "render": render, "compose_request": compose_request,
}


def run_document(size: int) -> list[dict[str, Any]]:
    """A plan of `size` calls of one tool, and the output each call wrote, as the engine writes them."""
    calls = [{"_tool": "lookup", "key": f"k{index}", "_outputPath": f"†state.c{index}"} for index in range(size - 2)]
    tool = {"type": "tool", "tool": {"name": "lookup", "_activity": "lookup",
                                     "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}}
    outputs = [{"type": "state", "data": {f"c{index}": {"found": index}}, "_outputPath": call["_outputPath"],
                "_call": call, "_date": "2026-01-01T00:00:00Z",
                "_run": {"call": index, "started": "2026-01-01T00:00:00Z", "inputs": {"key": call["key"]},
                         "seconds": 0.0, "result": {"found": index}}}
               for index, call in enumerate(calls)]
    return [tool, {"type": "plan", "plan": calls}, *outputs]


def cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def main() -> None:
    with batch_collector():  # as the command line's validate and render run
        measure()


def measure() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    documents = {
        "tidy": [workloads.message(random.Random(workloads.SEED)) for _ in range(size)],
        "untidy": workloads.untidy_document(random.Random(workloads.SEED), size),
        "run": run_document(size),
    }
    print(f"validate and render of {size:,} messages, CPU seconds and × the Context build (target ≤ {TARGET}×)")
    for name, messages in documents.items():
        start = time.process_time()
        context = Context(messages)
        built = time.process_time() - start
        figures = {what: cpu(partial(check, context)) for what, check in CHECKS.items()}
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        shown = ", ".join(f"{what} {seconds:.2f} s ({seconds / built:.2f}×)" for what, seconds in figures.items())
        print(f"  {name:<7} build {built:.2f} s, {shown}; load {load}")


if __name__ == "__main__":
    main()
