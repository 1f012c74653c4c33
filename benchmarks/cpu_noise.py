"""How much the machine itself moves a thread's CPU time: a fixed piece of Python work (about 2.4 ms on the 2-core
machine) timed again and again by the thread's CPU clock, and its spread (docs/performance.md, "What is open": a
window action's 16 ms at a million messages is judged by that clock).

Run: `.venv/bin/python benchmarks/cpu_noise.py [SECONDS]` (30 by default), on an otherwise idle machine.
"""

from __future__ import annotations

import statistics
import sys
import time


def work() -> int:
    total = 0
    for number in range(60_000):
        total += number * number
    return total


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.thread_time()
        work()
        times.append((time.thread_time() - start) * 1000)
    times.sort()
    median = statistics.median(times)
    print(f"{len(times):,} times: median {median:.2f} ms, p99 {times[int(len(times) * 0.99)]:.2f}, "
          f"p99.9 {times[int(len(times) * 0.999)]:.2f}, most {times[-1]:.2f}; "
          f"over 4× the median: {sum(t > 4 * median for t in times)}")


if __name__ == "__main__":
    main()
