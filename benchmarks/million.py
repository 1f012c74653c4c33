"""`make bench-million`: the engine at a million messages, against issue 30's targets.

For each workload of benchmarks/run.py (`tidy`, `untidy`), at 1,000,000 messages, in a process of its own (so
that its peak resident size is its own):

- **build**: CPU time of `Context(messages)` against `json.loads` of the same file (target ≤ 2×), with the
  collector as Python runs it; and both again with the collector off, the intrinsic work of each;
- **memory**: the resident size the parsed JSON takes, what the context adds, what 1,000 watches (run.py's
  expressions) add, and the peak over the interpreter's own size before the file was read (target: peak ≤ 3×
  the parsed JSON);
- **edits**: CPU time of `EDITS` random edits (run.py's mix) with every watch kept current: median and p99.

The documents are written once to a cache folder (`tempfile.gettempdir()/contextdeck-bench`); making a million
messages takes longer than the measurements. Figures are CPU time (`time.process_time`), with the load average.
Writes benchmarks/million.json. `python benchmarks/million.py [--messages N] [--workloads tidy,untidy]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from contextdeck.engine import Context, Insert  # noqa: E402
from run import INSTANCES, SEED, WORKLOADS, Workload, edit, percentile  # noqa: E402  # benchmarks/run.py

WATCHES = 1_000
EDITS = 200
CACHE = Path(tempfile.gettempdir()) / "contextdeck-bench"
ROWS = "million rows: "  # a child's last line: its figures, as JSON


def document_file(workload: Workload, messages: int) -> Path:
    """The workload's document of `messages` messages, as run.py makes it (seed `SEED`), written once."""
    path = CACHE / f"{workload.name}-{messages}-{SEED}.json"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        document = workload.document(random.Random(SEED), messages)
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        partial.replace(path)
    return path


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(workload: Workload, messages: int) -> dict[str, Any]:
    """Every figure of one workload (in this process: its peak is the workload's)."""
    path = document_file(workload, messages)
    gc.collect()
    baseline = resident_mb()
    text = path.read_text(encoding="utf-8")
    start = time.process_time()
    parsed = json.loads(text)
    loads = time.process_time() - start
    del text
    gc.collect()
    parsed_mb = resident_mb() - baseline  # (the text is gone: what is left is the parsed JSON)
    start = time.process_time()
    context = Context(parsed)
    build = time.process_time() - start
    gc.collect()
    context_mb = resident_mb() - baseline - parsed_mb
    # Expressions drawn as run.py draws its watches (from another seed: run.py's follow its document's draws).
    rng = random.Random(SEED + 3)
    watched = [(workload.expression(rng), rng.choice(INSTANCES)) for _ in range(WATCHES)]
    before_watches = resident_mb()
    start = time.process_time()
    handles = [context.watch(expr, lambda _: None, instance=instance) for expr, instance in watched]
    watch_setup = time.process_time() - start
    gc.collect()
    watches_mb = resident_mb() - before_watches
    peak = peak_mb() - baseline
    gc.freeze()
    latencies: dict[str, list[float]] = {}
    edits_rng = random.Random(SEED + 1)
    for _ in range(EDITS):
        change = edit(edits_rng, len(context), workload.message)
        start = time.process_time()
        context.apply(change)
        elapsed = time.process_time() - start
        name = type(change).__name__.lower()
        if isinstance(change, Insert) and change.index == len(context) - 1:
            name = "append"
        latencies.setdefault(name, []).append(elapsed)
    every = [t for samples in latencies.values() for t in samples]
    del handles, context, parsed
    gc.unfreeze()
    gc.collect()
    # The intrinsic work of each, with the collector off for both.
    text = path.read_text(encoding="utf-8")
    gc.disable()
    start = time.process_time()
    parsed = json.loads(text)
    loads_off = time.process_time() - start
    del text
    start = time.process_time()
    Context(parsed)
    build_off = time.process_time() - start
    gc.enable()
    return {
        "messages": messages,
        "file_mb": path.stat().st_size / 2**20,
        "build_s": {"json_loads": loads, "context": build, "ratio": build / loads,
                    "json_loads_collector_off": loads_off, "context_collector_off": build_off,
                    "ratio_collector_off": build_off / loads_off, "watches_setup": watch_setup},
        "memory_mb": {"parsed_json": parsed_mb, "context": context_mb, "watches": watches_mb, "peak": peak,
                      "peak_ratio": peak / parsed_mb},
        "edit_ms": {"edits": EDITS, "median": statistics.median(every) * 1e3, "p99": percentile(every, 0.99) * 1e3,
                    "max": max(every) * 1e3,
                    **{f"{name}_median": statistics.median(s) * 1e3 for name, s in sorted(latencies.items())}},
    }


def table(name: str, figures: dict[str, Any], load: tuple[float, float]) -> str:
    build, memory, edits = figures["build_s"], figures["memory_mb"], figures["edit_ms"]
    rows = [
        ("measure", "result", "target"),
        ("build Context / json.loads (collector on, as Python runs)",
         f"{build['context']:.2f} s / {build['json_loads']:.2f} s = {build['ratio']:.2f}×", "≤ 2×"),
        ("  the same, collector off for both",
         f"{build['context_collector_off']:.2f} s / {build['json_loads_collector_off']:.2f} s = "
         f"{build['ratio_collector_off']:.2f}×", ""),
        ("memory: parsed JSON / context / 1,000 watches",
         f"{memory['parsed_json']:,.0f} / {memory['context']:,.0f} / {memory['watches']:,.0f} MB", ""),
        ("peak memory over the interpreter's / parsed JSON",
         f"{memory['peak']:,.0f} MB / {memory['parsed_json']:,.0f} MB = {memory['peak_ratio']:.2f}×", "≤ 3×"),
        ("1,000 watches made", f"{build['watches_setup']:.1f} s", ""),
        (f"edit, every watch current ({edits['edits']} edits): median / p99 / max",
         f"{edits['median']:.1f} / {edits['p99']:.1f} / {edits['max']:.1f} ms", ""),
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (width + 2) for width in widths) + "|")
    return (f"**{name}**, {figures['messages']:,} messages ({figures['file_mb']:.0f} MB file), load average "
            f"{load[0]:.2f} → {load[1]:.2f}\n\n" + "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--workloads", default="tidy,untidy")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    by_name = {workload.name: workload for workload in WORKLOADS}
    if args.child:
        print(ROWS + json.dumps(measure(by_name[args.child], args.messages)), flush=True)
        return
    results: dict[str, Any] = {}
    for name in args.workloads.split(","):
        document_file(by_name[name], args.messages)  # made before the child: its peak is the measurement's
        load = os.getloadavg()[0]
        found = subprocess.run([sys.executable, __file__, "--child", name, "--messages", str(args.messages)],
                               capture_output=True, text=True, check=False)
        lines = [line for line in found.stdout.splitlines() if line.startswith(ROWS)]
        if not lines:
            print(f"{name}: the measurement failed: {found.stderr.strip().splitlines()[-3:]}", flush=True)
            continue
        figures = json.loads(lines[-1][len(ROWS):])
        figures["load_average"] = [round(load, 2), round(os.getloadavg()[0], 2)]
        results[name] = figures
        print("\n" + table(name, figures, (load, os.getloadavg()[0])), flush=True)
    if args.messages == 1_000_000 and results:
        (HERE / "million.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
