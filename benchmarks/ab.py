"""Engines of different commits side by side in one process: which one makes `run.py`'s edits cheaper.

`python benchmarks/ab.py REV REV [REV ...] [tidy|untidy] [--edits N] [--messages N]`

Each REV (a commit or branch; `.` is the working tree) has its `engine/` exported into a package of its own in a
temporary folder and imported beside the others. Every engine gets the same document, watches and edits as
`classes.py` (`run.py`'s seeds), and each edit is applied to every engine in turn, each timed alone in CPU time with
the collector off. The order rotates, so that each engine goes first as often as every other: an engine that makes
an edit right after another made the same one finds the code and the interpreter's caches warm, and with the order
only reversed every other edit, the engines between the first and the last always did, a few per cent cheaper.
Separate runs on a shared machine move by a tenth or more with the load; edit by edit, the engines share it: a
commit against itself (an A/A run) comes out within a few per cent, so a difference beyond that is the code's.
The place in the list matters too, beyond the order: in an A/A run of four copies of one commit, the later places
read a few per cent dearer than the first whichever engine holds them. So name each revision in balanced places
(`A B B A`, or a second run `B A A B`): a revision named more than once is pooled, each edit's time the geometric
mean over its places. Prints, per class of edit, each revision's median and p99 and the median of its per-edit
ratio to the first revision.

With `--resolves`, the first resolves nobody watches instead of the edits: `run.py`'s 400 references, resolved once
each on a `Context` per engine with no watch (built from the document before any edit, so the figures are near, not
equal, to `run.py`'s, which resolves after its edits), reference by reference in rotating order; three such passes,
each on new contexts. Prints each revision's median, p99 and sum per pass, and the median of its per-reference ratio.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import classes
import run as bench
from contextdeck._runtime import collect_when_idle, tune_interpreter
from contextdeck.engine import parse_expression

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revisions", nargs="+", metavar="REV", help="commits or branches; `.` is the working tree")
    parser.add_argument("--workload", choices=("tidy", "untidy"), default="tidy")
    parser.add_argument("--edits", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=bench.FULL[0])
    parser.add_argument("--resolves", action="store_true", help="the first resolves nobody watches, not the edits")
    argv = sys.argv[1:]  # a bare `tidy` or `untidy` names the workload too
    args = parser.parse_args([f"--workload={a}" if a in ("tidy", "untidy") and argv[:i][-1:] != ["--workload"] else a
                              for i, a in enumerate(argv)])
    if len(args.revisions) < 2:
        parser.error("name at least two revisions (the first is the one the others are compared with)")
    workload = next(w for w in bench.WORKLOADS if w.name == args.workload)
    with tempfile.TemporaryDirectory() as folder:
        engines = [_engine(revision, Path(folder), number) for number, revision in enumerate(args.revisions)]
        if args.resolves:
            _resolves(workload, args.revisions, engines, args.messages)
        else:
            _compare(workload, args.revisions, engines, args.messages, args.edits)


def _engine(revision: str, folder: Path, number: int) -> Any:
    """`revision`'s engine, imported as the package `ab<number>.engine`."""
    package = folder / f"ab{number}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    if revision == ".":
        shutil.copytree(ROOT / "engine", package / "engine")
    else:
        command = ["git", "-C", str(ROOT), "archive", revision, "engine"]
        archive = subprocess.run(command, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(package)], input=archive.stdout, check=True)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(f"ab{number}.engine")


def _compare(workload: bench.Workload, revisions: list[str], engines: list[Any], messages: int, edits: int) -> None:
    rng = random.Random(bench.SEED)
    document = json.dumps(workload.document(rng, messages))
    watched = [(workload.expression(rng), rng.choice(bench.INSTANCES)) for _ in range(bench.FULL[1])]
    contexts = []
    for engine in engines:
        ctx = engine.Context(json.loads(document))
        for expr, instance in watched:
            ctx.watch(expr, lambda _: None, instance=instance)
        contexts.append(ctx)
    gc.collect()
    gc.freeze()
    tune_interpreter()
    load = os.getloadavg()[0]
    edit_rng = random.Random(bench.SEED + 1)
    timed: list[tuple[str, list[float]]] = []
    for number in range(edits):
        change = bench.edit(edit_rng, len(contexts[0]), workload.message)
        name = classes._class_of(contexts[0], change)
        spent = [0.0] * len(engines)
        turn = [(number + k) % len(engines) for k in range(len(engines))]
        for which in turn:
            fields = {field: getattr(change, field) for field in change.__dataclass_fields__}
            if "message" in fields:  # each context its own copy
                fields["message"] = json.loads(json.dumps(fields["message"]))
            made = getattr(engines[which], type(change).__name__)(**fields)
            gc.disable()
            start = time.process_time()
            contexts[which].apply(made)
            spent[which] = time.process_time() - start
            gc.enable()
        timed.append((name, spent))
        collect_when_idle()
    print(
        f"\n{workload.name}: {messages:,} messages, {len(watched):,} watches, {edits:,} edits; load average "
        f"{load:.1f} → {os.getloadavg()[0]:.1f}; engines: {', '.join(revisions)}"
    )
    names = list(dict.fromkeys(revisions))  # a revision named in several places is one engine, its places pooled
    places = [[k for k, revision in enumerate(revisions) if revision == name] for name in names]
    print(f"  {'class':16} {'share':>5}  median ms per revision; ratio to the first (median of the edits'); p99 ms")
    by_class: dict[str, list[list[float]]] = {}
    for name, spent in timed:
        by_class.setdefault(name, []).append([_pooled(spent, where) for where in places])
    rows = sorted(by_class.items(), key=lambda item: -len(item[1]))
    every = [sample for samples in by_class.values() for sample in samples]
    for name, samples in [*rows, ("all", every)]:
        medians = " ".join(f"{statistics.median(s[k] for s in samples) * 1e3:7.3f}" for k in range(len(names)))
        ratios = " ".join(
            f"{statistics.median(s[k] / s[0] for s in samples if s[0] > 0):.3f}" for k in range(1, len(names))
        )
        p99 = " ".join(f"{bench.percentile([s[k] for s in samples], 0.99) * 1e3:.2f}" for k in range(len(names)))
        print(f"  {name:16} {len(samples) / len(timed):5.0%}  {medians};  {ratios};  {p99}")


def _resolves(workload: bench.Workload, revisions: list[str], engines: list[Any], messages: int, passes: int = 3
              ) -> None:
    rng = random.Random(bench.SEED)
    document = json.dumps(workload.document(rng, messages))
    watched = [(workload.expression(rng), rng.choice(bench.INSTANCES)) for _ in range(bench.FULL[1])]
    references = [(str(ref), instance) for expr, instance in watched for ref in parse_expression(expr).references]
    sample = random.Random(bench.SEED + 2).sample(references, min(bench.RESOLVES, len(references)))
    gc.collect()
    gc.freeze()
    tune_interpreter()
    load = os.getloadavg()[0]
    timed: list[list[float]] = []  # per pass and reference, each engine's seconds
    for number in range(passes):
        contexts = [engine.Context(json.loads(document)) for engine in engines]
        for index, (expr, instance) in enumerate(sample):
            spent = [0.0] * len(engines)
            for which in [(index + number + k) % len(engines) for k in range(len(engines))]:
                gc.disable()
                start = time.process_time()
                contexts[which].resolve(expr, instance)
                spent[which] = time.process_time() - start
                gc.enable()
            timed.append(spent)
        del contexts
    print(f"\n{workload.name}: {messages:,} messages, {len(sample)} first resolves nobody watches, {passes} passes; "
          f"load average {load:.1f} → {os.getloadavg()[0]:.1f}; engines: {', '.join(revisions)}")
    names = list(dict.fromkeys(revisions))
    places = [[k for k, revision in enumerate(revisions) if revision == name] for name in names]
    pooled = [[_pooled(spent, where) for where in places] for spent in timed]
    print("  revision      median ms    p99 ms  sum ms a pass  ratio to the first (median of the references')")
    for k, name in enumerate(names):
        samples = [spent[k] for spent in pooled]
        ratio = statistics.median(spent[k] / spent[0] for spent in pooled if spent[0] > 0)
        print(f"  {name:12} {statistics.median(samples) * 1e3:9.3f} {bench.percentile(samples, 0.99) * 1e3:9.2f} "
              f"{sum(samples) / passes * 1e3:14.0f}  {ratio:.3f}")


def _pooled(spent: list[float], where: list[int]) -> float:
    """One revision's time for an edit over the places it holds: their geometric mean."""
    return math.exp(statistics.fmean(math.log(max(spent[k], 1e-7)) for k in where))


if __name__ == "__main__":
    main()
