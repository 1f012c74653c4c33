"""`validate` and `render` of 100,000 messages against building the `Context` (issue 30: each ≤ 1.5×).

Run: `.venv/bin/python benchmarks/checks_bench.py [MESSAGES]` (`make bench`: 100,000). Four documents:
- `tidy` and `untidy` are benchmarks/run.py's workloads;
- `run` is what a long run leaves: one plan of MESSAGES calls of one tool with literal parameters, and each
  call's output, with its `_call` and `_run` audit as the engine writes them;
- `run-untidy` is a run as runs go: calls run once per instance, `all` groups, calls that read what another
  wrote, calls delegated anonymously and to a request file next to the document; some failed (their error
  messages), some were edited after they ran, some ran with inputs that changed since (stale), and the last
  ones have not run. What it holds is printed, counted from the engine's own reading of it.
Each document is measured in a process of its own (`--document`), as the command line reads one: a heap left
by the documents before it slows the checks more than the build. Each figure is the median of three CPU times
(`time.process_time`; the least and the most beside it), each of a fresh `Context` let go of whole after its
checks, of: building the `Context` from the parsed messages,
`validate` (every check the command line's `validate` makes, the document's file known), `render` (the
messages the model receives) and `compose_request` (the command line's `render`: the messages, the tools'
schema and the settings), each also as a multiple of the build, all under the command line's collector
setting: young collections in batches (`batch_collector`), the document set aside from the collector while a
check reads it (`gc.freeze`) and the collector paused meanwhile (`json_building`), as `contextdeck validate` and
`render` hold the document they loaded. The load
(`os.getloadavg`) is printed beside them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import run as workloads
from contextdeck.engine import (
    Activities,
    Context,
    Execution,
    batch_collector,
    compose_request,
    digest,
    expand_instances,
    flatten,
    json_building,
    render,
    validate,
)

REPEATS = 3
TARGET = 1.5  # validate and render: at most this many times the build
DATE = "2026-01-01T00:00:00Z"
INSTANCES = ("①", "②", "③", "④")
DELEGATE = "reviewer.json"  # the request file `run-untidy`'s delegated calls name, written next to the document
ANSWER = {"found": 0}  # what the activity `lookup` gives when the bench asks the engine to read a run


def tidy_document(size: int) -> list[dict[str, Any]]:
    """benchmarks/run.py's tidy workload."""
    rng = random.Random(workloads.SEED)
    return [workloads.message(rng) for _ in range(size)]


def run_document(size: int) -> list[dict[str, Any]]:
    """A plan of `size - 2` calls of one tool, and the output each call wrote, as the engine writes them."""
    calls = [{"_tool": "lookup", "key": f"k{index}", "_outputPath": f"†state.c{index}"} for index in range(size - 2)]
    tool = {"type": "tool", "tool": {"lookup": {
        "type": "object", "_activity": "lookup", "properties": {"key": {"type": "string"}}, "required": ["key"]}}}
    outputs = [{"type": "state", "data": {f"c{index}": {"found": index}}, "_outputPath": call["_outputPath"],
                "_call": call, "_date": DATE,
                "_run": {"call": index, "started": DATE, "digest": digest({"key": call["key"]}),
                         "inputs": {"key": call["key"]}, "seconds": 0.0, "result": {"found": index}}}
               for index, call in enumerate(calls)]
    return [tool, {"type": "plan", "plan": calls}, *outputs]


def _untidy_header() -> list[dict[str, Any]]:
    key = {"type": ["string", "integer"]}
    return [
        {"type": "tool", "tool": {
            "lookup": {"type": "object", "_activity": "lookup", "properties": {"key": key}, "required": ["key"]},
            "review": {"type": "object", "_delegate": "anonymous", "properties": {"text": key}},
            "ask": {"type": "object", "properties": {"text": key}},
        }},
        {"type": "state", "data": {"round": 0},
         "schema": {"type": "object", "properties": {"round": {"type": "integer"}}}},
        *({"type": "input", "_instance": name, "data": {"user": f"user {name}"}} for name in INSTANCES),
    ]


def _untidy_entry(k: int) -> Any:
    """The k-th entry of `run-untidy`'s plan."""
    shape = k % 10
    if shape == 0:  # run once per instance
        return {"_tool": "lookup", "key": "†input.user", "_outputPath": f"†verdict.u{k}"}
    if shape == 1:
        return {"all": [{"_tool": "lookup", "key": f"a{k}", "_outputPath": f"†state.a{k}"},
                        {"_tool": "lookup", "key": f"b{k}", "_outputPath": f"†state.b{k}"}]}
    if shape == 2:  # reads what the group wrote
        return {"_tool": "lookup", "key": f"†state.a{k - 1}.found", "_outputPath": f"†state.c{k}"}
    if shape == 3:  # delegated anonymously (its tool says so)
        return {"_tool": "review", "text": f"†state.c{k - 1}.found", "_outputPath": f"†state.v{k}"}
    if shape == 5:  # delegated to a request file
        return {"_tool": "ask", "_delegate": DELEGATE, "text": f"t{k}", "_outputPath": f"†state.d{k}"}
    return {"_tool": "lookup", "key": f"k{k}", "_outputPath": f"†state.c{k}"}


def _inputs(call: dict[str, Any], found: dict[str, int]) -> dict[str, Any]:
    """What a call received when it ran: its references resolved as the run left them."""
    inputs: dict[str, Any] = {}
    for name, value in call.items():
        if name.startswith("_"):
            continue
        if value == "†input.user":
            value = f"user {call['_instance']}"
        elif isinstance(value, str) and value.startswith("†state."):
            value = found.get(value.removeprefix("†state.").removesuffix(".found"))
        inputs[name] = value
    return inputs


def untidy_run_document(size: int) -> list[dict[str, Any]]:
    """A run of about `size` messages (see the module's docstring): one call in 50 failed, one in 50 was
    edited after it ran, one in 50 ran with inputs since changed, the last 5 % have not run."""
    header = _untidy_header()
    entries = [_untidy_entry(k) for k in range(max(10, (size - len(header)) * 10 // 15))]
    calls = flatten(expand_instances(entries, Context(header)))[0]
    found: dict[str, int] = {}
    outputs: list[dict[str, Any]] = []
    for index, call in enumerate(calls[: len(calls) * 95 // 100]):
        inputs = _inputs(call, found)
        run = {"call": index, "started": DATE, "digest": digest(inputs), "inputs": inputs, "seconds": 0.0}
        if index % 50 == 7:
            error = {"type": "activity", "message": f"KeyError: {inputs!r}"}
            outputs.append({"type": "error", "data": {"call": call, "error": error}, "_date": DATE, "_run": run})
            continue
        written = call
        if index % 50 == 13 and "key" in call:  # edited after it ran
            written = {**call, "key": "an earlier key"}
        elif index % 50 == 21:  # its inputs changed since
            run = {**run, "digest": digest({"was": index})}
        kind, name = call["_outputPath"][1:].split(".")
        found[name] = index
        layer = {"_instance": call["_instance"]} if "_instance" in call else {}
        outputs.append({"type": kind, **layer, "data": {name: {"found": index}}, "_call": written, "_date": DATE,
                        "_outputPath": call["_outputPath"], "_run": {**run, "result": {"found": index}}})
    return [*header, {"type": "plan", "plan": entries}, *outputs]


def delegate_file() -> dict[str, Any]:
    """The request `run-untidy`'s file-delegated calls run in: it answers with one latent call."""
    return {"context": [{"type": "input", "data": {"text": ""}},
                        {"type": "plan", "plan": [{"_tool": "answer", "_output": "†input.text"}]}]}


def what_it_holds(messages: list[dict[str, Any]], folder: Path) -> str:
    """The calls of a run document and their statuses as the engine reads them (an `Execution`)."""
    activities = Activities()
    activities.add(lambda call, tool, context: ANSWER, "lookup")
    execution = Execution(Context(messages), activities=activities, path=folder / "run.json")
    statuses = Counter(str(state.status) for state in execution.states)
    stale = execution.stale()
    edited = sum(1 for found in stale if found.edited)
    grouped = sum(len(unit.members) for unit in execution.units if unit.pattern != "one")
    instanced = sum(1 for plan in execution.plans if plan.instance is not None)
    by_file = sum(1 for delegate in execution.delegates.values() if delegate.path is not None)
    shown = ", ".join(f"{count:,} {status}" for status, count in statuses.most_common())
    return (f"{len(execution.plans):,} calls ({instanced:,} of {len(INSTANCES)} instances, {grouped:,} in groups, "
            f"{sum(1 for f in execution.graph.feeders.values() if f):,} reading another's output, "
            f"{len(execution.delegates) - by_file:,} delegated anonymously, {by_file:,} to a request file); "
            f"{shown}; {len(stale) - edited:,} stale, {edited:,} edited after they ran")


def cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def spread(seconds: list[float]) -> str:
    """The least and the most of a figure's samples, beside their median."""
    return f"[{min(seconds):.2f}–{max(seconds):.2f}]"


# The documents measured, each made just before it is (`--document`).
DOCUMENTS: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "tidy": tidy_document,
    "untidy": lambda count: workloads.untidy_document(random.Random(workloads.SEED), count),
    "run": run_document,
    "run-untidy": untidy_run_document,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("messages", nargs="?", type=int, default=100_000, help="messages a document holds")
    parser.add_argument("--document", choices=DOCUMENTS, help="measure this one document only, in this process")
    arguments = parser.parse_args()
    size = arguments.messages
    if arguments.document is None:  # each document in a process of its own, as the command line reads one
        print(f"validate and render of {size:,} messages, CPU seconds and × the Context build (target ≤ {TARGET}×)",
              flush=True)
        for name in DOCUMENTS:
            subprocess.run([sys.executable, __file__, str(size), "--document", name], check=True)
        return
    with batch_collector(), tempfile.TemporaryDirectory() as folder:  # as the command line's validate and render run
        measure(Path(folder), size, arguments.document)


def measure(folder: Path, size: int, name: str) -> None:
    (folder / DELEGATE).write_text(json.dumps(delegate_file()), encoding="utf-8")
    document = folder / "run.json"  # where the documents are taken to be: the delegate is found next to it
    checks: dict[str, Callable[[Context], object]] = {
        "validate": partial(validate, path=document), "render": render, "compose_request": compose_request,
    }
    messages = DOCUMENTS[name](size)
    builds: list[float] = []
    samples: dict[str, list[float]] = {what: [] for what in checks}
    for _ in range(REPEATS):  # each time a fresh Context, as the command line builds one per run
        start = time.process_time()
        context = Context(messages)
        builds.append(time.process_time() - start)
        gc.freeze()  # the command line's `_held`: no collection walks the document while a check reads it,
        with json_building():  # and the collector is paused, as while the document was loaded
            for what, check in checks.items():
                samples[what].append(cpu(partial(check, context)))
        gc.unfreeze()
        del context
        gc.collect()  # the Context let go of whole, as when the command line's process ends
    if name == "run-untidy":  # read after the checks: the engine's run of it leaves its heap behind
        print(f"  run-untidy holds {what_it_holds(messages, folder)}")
    built = statistics.median(builds)
    figures = {what: statistics.median(seconds) for what, seconds in samples.items()}
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    shown = ", ".join(f"{what} {seconds:.2f} s {spread(samples[what])} ({seconds / built:.2f}×)"
                      for what, seconds in figures.items())
    print(f"  {name:<10} build {built:.2f} s {spread(builds)}, {shown}; load {load}", flush=True)


if __name__ == "__main__":
    main()
