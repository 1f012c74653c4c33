"""Trivial activity calls per second: in worker processes (the default) and in-process (`in_process=True`).

Run: `.venv/bin/python benchmarks/activities_bench.py [--calls N] [--long M] [--shaped S,...]` (`make bench`:
100,000 in-process calls, the target: ≥ 10,000 calls per CPU-second and ≤ 2 KB of memory per call; then a chain
and a fan-in of 10,000 dependent in-process calls (`plan_of`); then 10,000 calls each way).
The plan is N independent calls of one activity loaded from a file that returns 1, run as one tick of an
`Execution` (so the figures include the scheduler and the writing of N outputs). CPU time is this process's
and, for the isolated run, its workers' (they are let go and waited for before it is read); the load
(`os.getloadavg`) is printed beside it, since the machine may be shared.

The long run comes first in a fresh process, and its figures cover everything a run of a plan costs: the
plan's calls, the `Execution` set up over them (planning every call, reading the record) and the tick. Its
CPU is the set-up and the tick together (each is printed too); its memory is the growth of the process's peak
resident size (the most the run ever held) and its resident size after the run with garbage collected (what
the finished run keeps: the context with every output, the record, the execution), each divided by the calls.
`--where` then says where that memory is, by tracemalloc.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

from contextdeck.engine import Context, Execution, fixed_clock, load_activities
from contextdeck.engine.run._pool import shared_pool

ACTIVITY = "def noop(call, tool, context):\n    return 1\nACTIVITIES = {'noop': noop}\n"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plan_of(calls: int, shape: str = "independent") -> list[dict[str, str]]:
    """`calls` calls of the trivial activity, each writing its own key: independent, a chain (each reads what the
    one before wrote: one ready at a time), a fan-in (all but the last independent, the last reads them all), or
    instances (after one global call, each in an instance of its own reads and writes the same key there)."""
    plan = [{"_tool": "noop", "_outputPath": f"†state.c{index}"} for index in range(calls)]
    if shape == "chain":
        for index in range(1, calls):
            plan[index]["in"] = f"†state.c{index - 1}"
    elif shape == "fan-in" and calls:
        plan[-1] = {"_tool": "noop", "in": "†state", "_outputPath": "†total.all"}
    elif shape == "instances":
        plan = [{"_tool": "noop", "_outputPath": "†state.r", **({"_instance": f"i{index}", "in": "†state.r"}
                                                               if index else {})} for index in range(calls)]
    return plan


def execution_of(plan: list[dict[str, str]], file: Path, in_process: bool) -> tuple[Context, Execution]:
    context = Context([{"type": "state", "data": {}}])
    return context, Execution(context, {"calls": plan}, activities=load_activities(file),
                              clock=fixed_clock("2026-01-01T00:00:00Z"), in_process=in_process)


def measure(calls: int, in_process: bool, file: Path, kept: list[object] | None = None,
            shape: str = "independent") -> dict[str, float]:
    """Run `calls` trivial calls; `kept` receives the context and the execution (to measure what they hold)."""
    start = time.process_time()
    context, execution = execution_of(plan_of(calls, shape), file, in_process)
    setup = time.process_time() - start
    threads = threading.active_count()
    wall, cpu, child = time.perf_counter(), time.process_time(), children_cpu()
    report = asyncio.run(execution.run())
    if not in_process:
        shared_pool().shutdown()  # the workers' CPU time counts once they are waited for
    wall, cpu, child = time.perf_counter() - wall, time.process_time() - cpu, children_cpu() - child
    if len(report.ran) != calls or len(context) != calls + 1:
        raise SystemExit("every call must have run and written its output")
    if kept is not None:
        kept.extend((context, execution))
    return {"wall": wall, "setup": setup, "cpu": cpu, "workers_cpu": child,
            "threads_after": threading.active_count() - threads}


def where(calls: int, file: Path) -> None:
    """Where a long in-process run's memory is, a call's share: Python's own allocations (tracemalloc, without
    the allocator's), so slower and without CPU figures."""
    tracemalloc.start()

    def held() -> float:
        return tracemalloc.get_traced_memory()[0]

    start = held()
    plan = plan_of(calls)
    planned = held()
    context, execution = execution_of(plan, file, True)
    set_up = held()
    tracemalloc.reset_peak()
    asyncio.run(execution.run())
    ran, peak = tracemalloc.get_traced_memory()
    del execution
    gc.collect()
    finished = held()
    text = json.dumps(context.messages)
    del context
    gc.collect()
    empty = held()
    read = Context(json.loads(text))
    reread = held() - empty
    del read
    tracemalloc.stop()
    share = {name: value / calls / 1024 for name, value in (
        ("plan", planned - start), ("set-up", set_up - planned), ("after", ran - start), ("peak", peak - start),
        ("execution", ran - finished), ("context", finished - planned), ("read", reread))}
    print(f"  where a call's memory is (tracemalloc): its plan entry {share['plan']:.2f} KB, the context with its "
          f"output {share['context']:.2f} KB, the execution {share['execution']:.2f} KB (of which set-up "
          f"{share['set-up']:.2f}); {share['after']:.2f} KB after the run, {share['peak']:.2f} KB at the peak. "
          f"The finished document read from its JSON ({len(text) / calls:.0f} bytes a call): {share['read']:.2f} KB")


def peak_kb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux


def resident_kb() -> float:
    """The resident size now (Linux: the second field of /proc/self/statm, in pages)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--long", type=int, default=100_000, help="in-process calls of the long run (0: none)")
    parser.add_argument("--where", action="store_true", help="then where the long run's memory is (tracemalloc)")
    parser.add_argument("--shaped", default="10000", help="sizes of the in-process chain and fan-in runs, comma "
                        "separated (0: none)")
    parser.add_argument("--shapes", default="chain,fan-in", help="which of them (comma separated; "
                        "also: instances)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "noop.py"
        file.write_text(ACTIVITY)
        if args.long:  # first, so that the peak resident size is this run's
            gc.collect()
            before, resident = peak_kb(), resident_kb()
            kept: list[object] = []
            found = measure(args.long, True, file, kept)
            gc.collect()
            peak, after = (peak_kb() - before) / args.long, (resident_kb() - resident) / args.long
            total = found["setup"] + found["cpu"]
            print(f"{args.long:,} trivial in-process calls, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}: "
                  f"{args.long / total:,.0f} calls per CPU-second ({total / args.long * 1e6:.0f} µs a call: "
                  f"set-up {found['setup'] / args.long * 1e6:.0f}, tick {found['cpu'] / args.long * 1e6:.0f}); "
                  f"memory a call: peak +{peak:.2f} KB, kept after the run +{after:.2f} KB")
            del kept
            if args.where:
                where(args.long, file)
        for size in (int(text) for text in args.shaped.split(",") if int(text)):
            print(f"{size:,} dependent in-process calls, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            for shape in args.shapes.split(","):
                found = measure(size, True, file, shape=shape)
                total = found["setup"] + found["cpu"]
                print(f"  {shape:<10} {size / total:8,.0f} calls per CPU-second (set-up {found['setup']:.2f} s, "
                      f"tick {found['cpu']:.2f} s)")
        if args.calls:
            print(f"{args.calls:,} trivial calls, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            for name, in_process in (("in-process", True), ("isolated", False)):
                found = measure(args.calls, in_process, file)
                total = found["cpu"] + found["workers_cpu"]
                print(f"  {name:<10} {args.calls / total:8,.0f} calls/s of CPU ({found['cpu']:.2f} s here + "
                      f"{found['workers_cpu']:.2f} s in workers), {args.calls / found['wall']:8,.0f} calls/s wall "
                      f"({found['wall']:.2f} s), {found['threads_after']:+d} threads")
        print(f"  load after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
