"""`contextdeck eval` over 200 inputs against the loopback fake model, two turns each (docs/experiments.md).

Run: `.venv/bin/python benchmarks/eval_bench.py [--inputs N]` (`make bench` runs it at 200). Three runs of
the real command, in-process: a first run at concurrency 1 that asks every question, one at concurrency 8
after the system text changed (so it asks every question again), and an unchanged re-run at 8 in which every
question is replayed from the cassette. Each gives inputs per second of wall time and this process's CPU
(activities run in worker processes; their CPU is added). The load is printed beside the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from adder_agent import ACTIVITIES, adder, write_agent
from contextdeck._cli import main
from fake_llm import FakeLLM, Reply

TARGET = 50.0  # inputs per second, replayed


def answer(body: dict) -> Reply:
    """The adder, with the token counts of a small real model's turns (the first plans, the second answers)."""
    first = '"sum":' not in "\n".join(str(message.get("content")) for message in body["messages"])
    return adder(body, usage={"prompt_tokens": 120, "completion_tokens": 30} if first
                 else {"prompt_tokens": 160, "completion_tokens": 12})


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(server: FakeLLM, folder: Path, doc: Path, data: Path, concurrency: int, out: str) -> dict[str, float]:
    argv = ["eval", str(doc), "--inputs", str(data), "--out", str(folder / out), "--activities",
            str(folder / "acts.py"), "--llm", server.url, "--model", "fake-small", "--llm-retries", "0",
            "--concurrency", str(concurrency), "--now", "2026-01-01T00:00:00Z"]
    asked = len(server.completions)
    wall, spent = time.perf_counter(), cpu()
    with contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    wall, spent = time.perf_counter() - wall, cpu() - spent
    lines = (folder / out).read_text().splitlines()
    unfinished = [result for result in map(json.loads, lines) if result["status"] != "finished"]
    if code != 0 or unfinished:
        raise SystemExit(f"eval exited {code}: {len(unfinished)} of {len(lines)} did not finish: {unfinished[:2]}")
    return {"inputs": len(lines), "wall": wall, "cpu": spent, "per_second": len(lines) / wall,
            "asked": len(server.completions) - asked}


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inputs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as server:
        folder = Path(tmp)
        server.answer = answer
        (folder / "acts.py").write_text(ACTIVITIES)
        data = folder / "data.jsonl"
        data.write_text("".join(json.dumps({"id": n, "input": {"a": n, "b": 2 * n}}) + "\n"
                                for n in range(args.inputs)))
        doc = write_agent(folder / "agent.json", "Add the numbers with the tool, then answer.")
        first = run(server, folder, doc, data, 1, "c1.jsonl")
        write_agent(folder / "agent.json", "Add the two numbers with the tool; answer with the total.")
        eight = run(server, folder, doc, data, 8, "c8.jsonl")
        replayed = run(server, folder, doc, data, 8, "again.jsonl")
    load = os.getloadavg()[0]
    print(f"eval of {args.inputs} inputs, two turns each, loopback fake model (load {load:.1f})")
    for name, figures in (("asked, concurrency 1", first), ("asked, concurrency 8", eight),
                          ("unchanged re-run, all replayed, concurrency 8", replayed)):
        print(f"  {name:48} {figures['per_second']:7.1f} inputs/s  wall {figures['wall']:6.2f} s  "
              f"CPU {figures['cpu']:6.2f} s  questions asked {figures['asked']}")
    met = replayed["per_second"] >= TARGET and replayed["asked"] == 0
    print(f"  target: >= {TARGET:g} inputs/s replayed, nothing asked: {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main_bench()
