"""How much the machine itself moves a thread's CPU time (docs/performance.md, "What is open": a window action's 16 ms
at a million messages is judged by that clock).

Two measures:
- a fixed piece of Python work (a few milliseconds) timed again and again, and its spread;
- with `--idle-memory GB`: memory the process touched, then left alone for `--idle-seconds`, walked again (a byte
  read per page, in 64 MB chunks), against the same walk while it is in use. The window at a million messages holds
  gigabytes of which most is not touched for minutes (a replaced document's objects until they are freed, the marks
  of a fold far from the cursor); a machine that makes such memory slow to touch again without a page fault the
  process can see (a virtual machine's host reclaiming it) charges the time to whichever slice touches it first.

Run: `.venv/bin/python benchmarks/cpu_noise.py [SECONDS] [--idle-memory GB] [--idle-seconds S]` (30 s of the fixed
work by default; no memory measure unless asked), on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

PAGE = 4096
CHUNK = 64 * 2**20


def work() -> int:
    total = 0
    for number in range(60_000):
        total += number * number
    return total


def fixed_work(seconds: float) -> None:
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.thread_time()
        work()
        times.append((time.thread_time() - start) * 1000)
    times.sort()
    median = statistics.median(times)
    print(f"fixed work, {len(times):,} times: median {median:.2f} ms, p99 {times[int(len(times) * 0.99)]:.2f}, "
          f"p99.9 {times[int(len(times) * 0.999)]:.2f}, most {times[-1]:.2f}; "
          f"over 4× the median: {sum(t > 4 * median for t in times)}")


def walk(memory: bytearray, label: str) -> None:
    """Read a byte of every page, timing each chunk by the thread's CPU clock; with the page faults it took."""
    times, before, total = [], resource.getrusage(resource.RUSAGE_SELF), 0
    for start in range(0, len(memory), CHUNK):
        began = time.thread_time()
        for offset in range(start, min(len(memory), start + CHUNK), PAGE):
            total += memory[offset]
        times.append((time.thread_time() - began) * 1000)
    after = resource.getrusage(resource.RUSAGE_SELF)
    faults = after.ru_minflt - before.ru_minflt + after.ru_majflt - before.ru_majflt
    print(f"{label}: {len(times)} chunks of 64 MB, median {statistics.median(times):.2f} ms, most {max(times):.2f}, "
          f"all {sum(times):.0f} ms; page faults {faults}")


def idle_memory(gigabytes: float, idle_s: float) -> None:
    memory = bytearray(int(gigabytes * 2**30))
    for offset in range(0, len(memory), PAGE):  # (mapped now: no walk below takes a page fault of its own)
        memory[offset] = 1
    walk(memory, "in use")
    walk(memory, "in use again")
    time.sleep(idle_s)
    walk(memory, f"after {idle_s:.0f} s untouched")
    walk(memory, "in use again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", nargs="?", type=float, default=30.0, help="how long to time the fixed work")
    parser.add_argument("--idle-memory", type=float, metavar="GB", help="also walk this much memory left untouched")
    parser.add_argument("--idle-seconds", type=float, default=400.0, help="how long it is left untouched")
    args = parser.parse_args()
    fixed_work(args.seconds)
    if args.idle_memory:
        idle_memory(args.idle_memory, args.idle_seconds)


if __name__ == "__main__":
    main()
