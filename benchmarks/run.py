"""`make bench`: the incremental context against the issue's targets, on two workloads, in one run.

`tidy`: 100,000 messages (four kinds, global and two instances, plain data and outputs with all five
methods at explicit and derived paths), 1,000 watched expressions (single references, `||`, `&&`).
`untidy`: the same size, but the way agent documents go wrong: one bad write per kind (a string where
an array belongs) followed by thousands of conflicting pushes, keys written under arrays, values nested
four deep, and whole-kind watches such as `†state`. Each: a random sequence of appends, inserts,
replaces, moves and removes. Every figure is CPU time of this process (`time.process_time`): the machine
is shared, and wall time would count the others' work. Prints a table per workload and writes
benchmarks/latest.json (at full size only; a run of one workload replaces only that workload's figures
there, and each workload's figures say which commit, when and at what load average they were measured).
Not part of the test suite: timings are never asserted in tests.

`python benchmarks/run.py MESSAGES WATCHES EDITS [tidy|untidy|first-folds]` runs a smaller size (or one workload).
Last, `first_folds`: a whole kind's first fold over 10,000 and 100,000 distinct keys, edits in the middle of such
a lane (`keyed_edits`), and sixty edits in the middle of a chat log (`log_edits`).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextdeck._runtime import GC_THRESHOLDS, IDLE_YOUNG, collect_when_idle, tune_interpreter
from contextdeck.engine import Context, Insert, Move, Remove, Replace, Watch, classify, parse_expression
from contextdeck.engine.protocol import MISSING
from contextdeck.engine.resolve._fold import fold
from contextdeck.engine.resolve._incremental._index import State, fold_lane

FULL = (100_000, 1_000, 2_000)
_ARGS = sys.argv if __name__ == "__main__" else []  # imported (gui_bench reads its workloads): the full size
MESSAGES, WATCHES, EDITS = (int(a) for a in _ARGS[1:4]) if len(_ARGS) > 3 else FULL
ONLY = _ARGS[4] if len(_ARGS) > 4 else None
SEED = 20261122
KINDS = ("state", "user", "order", "memory")
INSTANCES = (None, "①", "②")
OBJECTS = tuple(f"k{n}" for n in range(30))  # object-valued keys: set, merge, assign below them
LISTS = tuple(f"log{n}" for n in range(6))  # array-valued keys: push and concat
FIELDS = ("name", "status", "count", "flag", "note")
NESTED = ("a", "b", "c")  # the untidy workload's deeper levels: kN.a.b.c
RESOLVES = 400  # single references resolved one by one for the `resolve` figure
HERE = Path(__file__).resolve().parent
clock = time.process_time  # CPU time: what other processes do on a shared machine does not count


def opening(rng: random.Random, texts: float) -> tuple[float, dict[str, Any]]:
    """A roll of the dice and a message begun with it: a text message (a share `texts` of them), or a
    data message of a random kind and layer, to be filled in."""
    roll = rng.random()
    if roll < texts:
        return roll, {"type": "text", "role": "user", "text": f"turn {rng.randrange(10**6)}"}
    base: dict[str, Any] = {"type": "data", "kind": rng.choice(KINDS)}
    instance = rng.choice(INSTANCES)
    if instance is not None:
        base["_instance"] = instance
    return roll, base


def message(rng: random.Random) -> dict[str, Any]:
    """One message of the tidy workload."""
    roll, base = opening(rng, 0.1)
    if roll < 0.1:
        return base
    if roll < 0.35:  # plain data: a deep merge at the root
        base["data"] = {rng.choice(OBJECTS): {rng.choice(FIELDS): rng.randrange(100)} for _ in range(rng.randint(1, 3))}
        return base
    method = rng.choice(("set", "set", "merge", "assign", "push", "concat"))
    if method in ("push", "concat"):
        path: tuple[str, ...] = (rng.choice(LISTS),)
        value: Any = {"n": rng.randrange(100)} if method == "push" else [rng.randrange(100)]
    elif method == "set":
        path = (rng.choice(OBJECTS), rng.choice(FIELDS))
        value = rng.choice((rng.randrange(100), f"v{rng.randrange(100)}", True, None))
    else:
        path = (rng.choice(OBJECTS),)
        value = {rng.choice(FIELDS): rng.randrange(100)}
    return output(base, method, path, value, rng)


def expression(rng: random.Random) -> str:
    def ref() -> str:
        kind = rng.choice(KINDS)
        if rng.random() < 0.2:
            return f"†{kind}.{rng.choice(LISTS)}"
        key = rng.choice(OBJECTS)
        return f"†{kind}.{key}" if rng.random() < 0.3 else f"†{kind}.{key}.{rng.choice(FIELDS)}"

    roll = rng.random()
    if roll < 0.5:
        return ref()
    return f"{ref()} || {ref()}" if roll < 0.75 else f"{ref()} && {ref()}"


def edit(rng: random.Random, size: int, new: Callable[[random.Random], dict[str, Any]]) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return Insert(size, new(rng))
    if roll < 0.65:
        return Insert(rng.randrange(size + 1), new(rng))
    if roll < 0.8:
        return Replace(rng.randrange(size), new(rng))
    if roll < 0.9:
        return Move(rng.randrange(size), rng.randrange(size))
    return Remove(rng.randrange(size))


def reference_resolution(infos: list[Any], expr: str, instance: str | None) -> Any:
    """What the engine did before indexes: scan every message, fold the writes of each reference."""
    for gate in parse_expression(expr).alternatives:
        values = []
        for ref in gate:
            writes = [(i, w.write) for i, w in enumerate(infos) if w.kind == ref.kind and w.instance is None]
            writes += [(i, w.write) for i, w in enumerate(infos) if w.kind == ref.kind and w.instance == instance]
            values.append(fold(writes, ref.path, str(ref))[1])
        if all(v.found for v in values):
            return values[-1].value
    return None


def fold_every_identity(ctx: Context) -> dict[tuple[str, str | None], Any]:
    """Every identity's whole value in one pass over the built indexes, with the engine's own fold
    (`fold_lane`): each write folded once. A kind's global layer is folded once and each of its instance
    layers continues from that fold (resolving `†kind` per identity would fold the global layer again for
    every instance: a third of the writes three times over)."""
    store = ctx._store
    key = store.order.key.__getitem__
    values: dict[tuple[str, str | None], Any] = {}
    for kind, instance in sorted(ctx.identities(), key=lambda identity: identity[1] is not None):
        state = State([], values.get((kind, None), MISSING))  # an instance: from its kind's global fold
        fold_lane(state, store.layers[kind, instance], None, store.writes, key)
        values[kind, instance] = state.root
    return values


# How many times the one-pass fold is timed, spread evenly over the timed edits: their median is the fold compared with.
FOLD_SAMPLES = 9


def time_fold(ctx: Context, number: int, count: int, folds: list[float]) -> None:
    """After edit `number` of `count`, time the one-pass fold of `ctx` into `folds` when it is one of the
    `FOLD_SAMPLES` spread evenly over them, with the collector off as the edits are timed: on a shared machine the
    neighbours slow both, so the two are measured in the same minutes, with the same neighbours."""
    every = max(1, count // FOLD_SAMPLES)
    if number % every == every // 2 and len(folds) < FOLD_SAMPLES:
        enabled = gc.isenabled()
        gc.disable()
        try:
            folds.append(seconds(lambda: fold_every_identity(ctx)))
        finally:
            if enabled:
                gc.enable()


def fold_seconds(ctx: Context, folds: list[float]) -> float:
    """The one-pass fold the edits are compared with: the median of those `time_fold` took, or one timed now when
    there were no edits to take them between."""
    return statistics.median(folds or [seconds(lambda: fold_every_identity(ctx))])


def seconds(work: Callable[[], Any]) -> float:
    """The CPU time `work` takes."""
    start = clock()
    work()
    return clock() - start


def resolve_times(ctx: Context, references: list[tuple[str, str | None]]) -> list[float]:
    """The seconds of CPU time `ctx.resolve` takes for each reference."""
    times = []
    for expr, instance in references:
        start = time.process_time()
        ctx.resolve(expr, instance)
        times.append(time.process_time() - start)
    return times


def logs_memory(messages: list[Any], references: list[tuple[str, str | None]]) -> tuple[int, int, float]:
    """The path logs a fresh context keeps after resolving `references`: steps, logs and bytes (traced)."""
    ctx = Context(messages)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for expr, instance in references:
        ctx.resolve(expr, instance)
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return ctx._lanes._steps, len(ctx._lanes._logs), kept


def split_by_lane(references: list[tuple[str, str | None]], times: list[float]) -> tuple[list[float], list[float]]:
    """The times of the references that were the first of their lane in their view (kind, instance, first
    segment: no earlier resolve folded any of the lane's writes), and of the others (an earlier one read the
    lane: the same path's log, or another path's, which folds its own writes)."""
    seen: set[tuple[str, str | None, str | None]] = set()
    first, later = [], []
    for (expr, instance), elapsed in zip(references, times, strict=True):
        ref = parse_expression(expr).references[0]
        lane = (ref.kind, instance, ref.path[0] if ref.path else None)
        (later if lane in seen else first).append(elapsed)
        seen.add(lane)
    return first, later


def under_1ms(samples: list[float]) -> float:
    """The share of `samples` (seconds) at or under 1 ms."""
    return sum(sample <= 1e-3 for sample in samples) / len(samples)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def untidy_message(rng: random.Random) -> dict[str, Any]:
    """One message of the untidy workload: a quarter of the outputs push onto `log0`, which a bad write
    made a string (each such push is a conflict), some write a key under an array, the rest write at
    paths four deep with all five methods."""
    roll, base = opening(rng, 0.08)
    if roll < 0.08:
        return base
    if roll < 0.25:  # plain data, nested: a deep merge at the root
        base["data"] = {rng.choice(OBJECTS): nested(rng, rng.randint(1, 3)) for _ in range(rng.randint(1, 2))}
        return base
    shape = rng.random()
    if shape < 0.25:  # onto the string the bad write left: a conflict
        method, path, value = "push", ("log0",), {"n": rng.randrange(100)}
    elif shape < 0.33:  # a key under an array: a conflict, or an element's field
        lane = rng.choice(LISTS[1:])
        path = (lane, rng.choice(FIELDS)) if rng.random() < 0.6 else (lane, "0", "n")
        method, value = "set", rng.randrange(100)
    elif shape < 0.5:
        method = rng.choice(("push", "concat"))
        path = (rng.choice(LISTS[1:]),)
        value = {"n": rng.randrange(100)} if method == "push" else [rng.randrange(100)]
    else:
        method = rng.choice(("set", "set", "merge", "assign"))
        depth = rng.randint(1, len(NESTED))
        path = (rng.choice(OBJECTS), *NESTED[: depth - 1])
        if method == "set":
            path = (*path, rng.choice(FIELDS))
            value = rng.choice((rng.randrange(100), f"v{rng.randrange(100)}", True, None, nested(rng, 1)))
        else:
            value = nested(rng, len(NESTED) - depth + 1)
    return output(base, method, path, value, rng)


def nested(rng: random.Random, depth: int) -> Any:
    """An object `depth` levels deep along NESTED, with a field or two at each level."""
    value: dict[str, Any] = {rng.choice(FIELDS): rng.randrange(100)}
    if depth > 1:
        value[NESTED[len(NESTED) - depth + 1]] = nested(rng, depth - 1)
    return value


def output(base: dict[str, Any], method: str, path: tuple[str, ...], value: Any, rng: random.Random) -> dict[str, Any]:
    """`base` as an output message writing `value` at `path` with `method` (explicit path or derived)."""
    data: Any = value
    for segment in reversed(path):
        data = {segment: data}
    base["data"] = data
    if method != "set":
        base["_outputMethod"] = method
    destination = "†" + ".".join((base["kind"], *path))
    base["_call"] = {"_tool": "update", "_outputPath": destination, "id": rng.randrange(1000)}
    base["_date"] = "2026-11-22T00:00:00Z"
    if rng.random() < 0.5:  # explicit path; otherwise derived from the call
        base["_outputPath"] = destination
    return base


def untidy_document(rng: random.Random, size: int) -> list[dict[str, Any]]:
    """Random untidy messages, and near the start of each kind one bad write: `log0` set to a string."""
    document = [untidy_message(rng) for _ in range(size)]
    for number, kind in enumerate(KINDS):
        bad = {"type": "data", "kind": kind, "data": {"log0": "not an array"}, "_outputPath": f"†{kind}.log0"}
        document.insert(min(len(document), 3 + number), bad)
    return document[:size]


def untidy_expression(rng: random.Random) -> str:
    def ref() -> str:
        kind = rng.choice(KINDS)
        roll = rng.random()
        if roll < 0.15:  # the lanes with conflicts
            return rng.choice((f"†{kind}.log0", f"†{kind}.log0.0", f"†{kind}.{rng.choice(LISTS[1:])}.name",
                               f"†{kind}.{rng.choice(LISTS[1:])}"))
        depth = rng.randint(0, len(NESTED))
        return "†" + ".".join((kind, rng.choice(OBJECTS), *NESTED[:depth], *([rng.choice(FIELDS)] * (depth > 0))))

    roll = rng.random()
    if roll < 0.05:  # a whole kind
        return f"†{rng.choice(KINDS)}"
    if roll < 0.55:
        return ref()
    return f"{ref()} || {ref()}" if roll < 0.8 else f"{ref()} && {ref()}"


@dataclass(frozen=True)
class Workload:
    name: str
    document: Callable[[random.Random, int], list[dict[str, Any]]]
    message: Callable[[random.Random], dict[str, Any]]
    expression: Callable[[random.Random], str]


WORKLOADS = (
    Workload("tidy", lambda rng, size: [message(rng) for _ in range(size)], message, expression),
    Workload("untidy", untidy_document, untidy_message, untidy_expression),
)



def main() -> None:
    results: dict[str, Any] = {
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": 2,
                    "gc_thresholds": list(GC_THRESHOLDS), "idle_young": IDLE_YOUNG},
    }
    tables = []
    for workload in WORKLOADS:
        if ONLY is not None and workload.name != ONLY:
            continue
        gc.unfreeze()
        gc.set_threshold(700, 10, 10)
        gc.collect()
        started, load = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()[0]
        results[workload.name] = measure(workload)
        results[workload.name]["run"] = {"commit": _commit(), "started": started,
                                         "load_average": [round(load, 2), round(os.getloadavg()[0], 2)]}
        tables.append((workload.name, table(results[workload.name])))
        print(f"\n{workload.name}\n{tables[-1][1]}", flush=True)
        if (MESSAGES, WATCHES, EDITS) == FULL:  # after each workload: a long run leaves what it measured
            _keep(results)
    if (MESSAGES, WATCHES, EDITS) == FULL and ONLY is None:
        publish(tables, results)
    if ONLY in (None, "first-folds"):
        first_folds()


def first_folds() -> None:
    """A whole kind's first fold over n data messages that each write a distinct key (`{kN: N}`, or nested:
    `{items: {kN: N}}`): CPU µs a write of a `†state` watch's, of `fold_ahead`'s slices then `resolve` (the
    window's first fold) and of the state view's (`CursorState.at`). Folds write their own containers in place, so
    a write costs about the same at 10k and 100k, but for the copies after a checkpoint or lane mark (k²/512 and,
    nested, k²/32: docs/performance.md "Writes in place"); a write copying the whole object would grow with n."""
    from contextdeck.engine import CursorState

    print(f"\nwhole kind's first fold, µs a write (load {os.getloadavg()[0]:.2f})")
    for nested in (False, True):
        for size in (10_000, 100_000):
            messages = [{"type": "data", "kind": "state", "data": {"items": {f"k{n}": n}} if nested else {f"k{n}": n}}
                        for n in range(size)]
            folds: dict[str, Callable[[Context], Any]] = {
                "watch": lambda ctx: ctx.watch("†state", lambda _: None).current,
                "fold_ahead": _sliced,
                "state view": lambda ctx: CursorState(ctx).at(),
            }
            figures = []
            for name, first_fold in folds.items():
                ctx = Context(messages)
                gc.collect()
                figures.append(f"{name} {seconds(lambda: first_fold(ctx)) / size * 1e6:.1f}")  # noqa: B023
            print(f"  {'items.kN' if nested else 'kN'}, {size:,} writes: {', '.join(figures)}", flush=True)
    keyed_edits()
    log_edits()


def log_edits() -> None:
    """Sixty edits spread over the middle half of a chat log (`messages`: a push at nine writes in ten, a `set` of
    another lane at the tenth), a replace, an insert and a remove in turn, with one watch of the log
    (`†state.messages`), of one of its entries or of the whole kind; CPU ms of each edit: p50, p90 and the largest.
    Each splice past an edit leaves the log's marks after it to patch, and every few edits they are patched at once
    (`Marks.settled`): the largest is such an edit. Two edits of one document show none of that (`keyed_edits`)."""
    print(f"\nsixty edits in the middle of a chat log, CPU ms each (load {os.getloadavg()[0]:.2f})")
    tune_interpreter()

    def message(n: int) -> dict[str, Any]:
        if n % 10 == 0:
            return {"type": "data", "kind": "state", "data": {"turn": n}, "_outputPath": "†state.turn"}
        return {"type": "data", "kind": "state", "data": {"messages": {"role": "user", "content": f"m{n}"}},
                "_outputPath": "†state.messages", "_outputMethod": "push"}

    for size in (10_000, 100_000):
        messages = [{"type": "data", "kind": "state", "data": {"messages": [], "turn": 0}}]
        messages += [message(n + 1) for n in range(size)]
        for expression in ("†state.messages", "†state.messages.3", "†state"):
            ctx = Context(messages)
            ctx.watch(expression, lambda _: None)
            gc.collect()
            gc.freeze()
            rng, times = random.Random(7), []
            for number in range(60):
                at = rng.randrange(size // 4, 3 * size // 4)
                edits = (lambda: ctx.replace(at, message(-number)), lambda: ctx.insert(at, message(-number)),  # noqa: B023
                         lambda: ctx.remove(at))  # noqa: B023
                times.append(seconds(edits[number % 3]) * 1e3)
            figures = f"p50 {percentile(times, 0.5):.1f}, p90 {percentile(times, 0.9):.1f}, largest {max(times):.1f}"
            print(f"  {size:,} writes, {expression}: {figures}", flush=True)
            gc.unfreeze()


def keyed_edits() -> None:
    """Edits in the middle of a lane that grows one object key by key (`{items: {kN: N}}`, results kept by id): an
    entry inserted, taken out again, and a replace that renames one; CPU ms of each, with one watch of the object
    (`†state.items`), of one entry (`†state.items.k5`) or of the whole kind (`†state`). Then the same object nested
    under objects of one key each (`{runs: {r1: {steps: {kN: N}}}}`: results kept by run and step), watched at the
    lane (`†state.runs`), at the object and as the whole kind; a run's outputs written there (`_outputPath`
    `†state.runs.r1.steps.kN`, the data holding that path); outputs whose every write fails (the same `_outputPath`
    over data that holds no such path: a problem at each, so each is a gap of the lane); and a run's log below the run
    (pushes at `†state.runs.r1.log`, whose edits shift the array past them); a to-do list (`items`: an item pushed
    at every other write, any earlier one marked done at the others, `†state.items.N.status`), and the same list kept by
    a run (`run items`: `†state.runs.r1.items`, each edit folds the rest of the run). Each edit is made twice,
    a little apart: the first edit of a document may file the keys of a node it needs (`Layer.below`), the second
    finds them filed. The collector runs as in the window, which holds the document it opened frozen
    (`tune_interpreter`, `gc.freeze`)."""
    print(f"\nedits in the middle of a keyed object or a log, CPU ms each (load {os.getloadavg()[0]:.2f})")
    tune_interpreter()

    def data(value: Any) -> dict[str, Any]:
        return {"type": "data", "kind": "state", "data": value}

    def item(key: str, n: int, below: tuple[str, ...] = ()) -> dict[str, Any]:
        def at(value: Any) -> Any:
            for name in reversed(below):
                value = {name: value}
            return value

        where = ".".join(("†state", *below, "items"))
        if n % 2 == 0 or not key.startswith("k"):  # (the edits' own messages push an item)
            pushed = {"status": "new", "n": n}
            return {**data(at({"items": pushed})), "_outputPath": where, "_outputMethod": "push"}
        done = str(n * 7919 % (n // 2 + 1))  # any item pushed before, spread over them
        return {**data(at({"items": {done: {"status": "done"}}})), "_outputPath": f"{where}.{done}.status"}

    shapes = {
        "flat": (lambda key, n: data({"items": {key: n}}), ("†state.items", "†state.items.k5", "†state")),
        "nested": (lambda key, n: data({"runs": {"r1": {"steps": {key: n}}}}),
                   ("†state.runs", "†state.runs.r1.steps", "†state")),
        "outputs": (lambda key, n: {**data({"runs": {"r1": {"steps": {key: n}}}}),
                                    "_outputPath": f"†state.runs.r1.steps.{key}", "_outputMethod": "set"},
                    ("†state.runs", "†state.runs.r1.steps.k5", "†state")),
        "log": (lambda key, n: {**data({"runs": {"r1": {"log": n}}}), "_outputPath": "†state.runs.r1.log",
                                "_outputMethod": "push"}, ("†state.runs.r1.log", "†state.runs", "†state")),
        "failing": (lambda key, n: {**data(n), "_outputPath": f"†state.runs.r1.steps.{key}", "_outputMethod": "set"},
                    ("†state.runs", "†state.runs.r1.steps.k5", "†state")),
        "items": (item, ("†state.items", "†state.items.3.status", "†state")),
        "run items": (lambda key, n: item(key, n, ("runs", "r1")), ("†state.runs.r1.items", "†state.runs", "†state")),
    }
    for shape, (message, expressions) in shapes.items():
        entry, renamed = message("added", 1), message("renamed", 1)
        for size in (10_000, 100_000):
            messages = [message(f"k{n}", n) for n in range(size)]
            middle = size // 2
            for expression in expressions:
                ctx = Context(messages)
                ctx.watch(expression, lambda _: None)
                gc.collect()
                gc.freeze()
                figures = []
                for at in (middle, middle + 7):
                    edits = {
                        "insert": lambda: ctx.insert(at, entry),  # noqa: B023
                        "remove": lambda: ctx.remove(at),  # noqa: B023
                        "replace": lambda: ctx.replace(at, renamed),  # noqa: B023
                    }
                    figures.append(", ".join(f"{name} {seconds(edit) * 1e3:.1f}" for name, edit in edits.items()))
                print(f"  {shape}, {size:,} writes, {expression}: {'; again: '.join(figures)}", flush=True)
                gc.unfreeze()


def _sliced(ctx: Context) -> Any:
    """The window's first fold: `fold_ahead`'s slices until nothing is left, then `resolve`."""
    while not ctx.fold_ahead("†state"):
        pass
    return ctx.resolve("†state")


def _commit() -> str:
    try:
        found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    except OSError:
        return "unknown"
    return found.stdout.strip() or "unknown"


def _keep(results: dict[str, Any]) -> None:
    """Write latest.json; a run of one workload keeps the other workload's figures from an earlier run."""
    path = HERE / "latest.json"
    kept = json.loads(path.read_text()) if ONLY is not None and path.exists() else {}
    path.write_text(json.dumps(kept | results, indent=2) + "\n")


def measure(workload: Workload) -> dict[str, Any]:
    """Every figure of one workload."""
    rng = random.Random(SEED)
    document = workload.document(rng, MESSAGES)
    text = json.dumps(document, ensure_ascii=False)
    gc.collect()

    start = clock()
    messages = json.loads(text)
    loads = clock() - start
    start = clock()
    ctx = Context(messages)
    build = clock() - start

    tracemalloc.start()
    parsed = json.loads(text)
    json_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    measured = Context(parsed)
    context_bytes = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del measured, parsed
    gc.collect()

    watched = [(workload.expression(rng), rng.choice(INSTANCES)) for _ in range(WATCHES)]
    calls = [0]

    def count(_: Any) -> None:
        calls[0] += 1

    start = clock()
    handles = [ctx.watch(expr, count, instance=instance) for expr, instance in watched]
    watch_setup = clock() - start
    mean_sources = statistics.mean(len(handle.current.sources) for handle in handles)
    mean_diagnostics = statistics.mean(len(handle.current.diagnostics) for handle in handles)

    # The long-lived objects (messages, indexes) go to the permanent generation, as an application
    # does after loading a document, so that collections during edits only walk what edits allocate.
    gc.collect()
    gc.freeze()
    tune_interpreter()  # the collector settings the window runs with (contextdeck/_runtime.py)
    folds: list[float] = []  # the one-pass fold, timed between these edits (`time_fold`)
    latencies, idle, collected_inside = run_edits(ctx, workload, random.Random(SEED + 1), EDITS, True, folds=folds)
    every = [t for samples in latencies.values() for t in samples]
    # The very same edits on a twin of the starting context, the collector left to run inside them.
    twin = Context(json.loads(text))
    twin_handles = [twin.watch(expr, lambda _: None, instance=instance) for expr, instance in watched]
    gc.collect()
    gc.freeze()
    unscheduled, _, unscheduled_inside = run_edits(twin, workload, random.Random(SEED + 1), EDITS, between=False)
    inside = [t for samples in unscheduled.values() for t in samples]
    del twin, twin_handles
    # Once more, each edit followed by reading every watch's `current.sources` (ranked when read): apart,
    # since what reading leaves behind (a thousand tuples of sources per edit) slows the edits after it.
    twin = Context(json.loads(text))
    twin_handles = [twin.watch(expr, lambda _: None, instance=instance) for expr, instance in watched]
    gc.collect()
    gc.freeze()
    read = run_edits(twin, workload, random.Random(SEED + 1), EDITS, between=True, read=twin_handles)[0]["read"]
    del twin, twin_handles

    references = [(str(ref), instance) for expr, instance in watched for ref in parse_expression(expr).references]
    sample_references = random.Random(SEED + 2).sample(references, min(RESOLVES, len(references)))
    resolves = resolve_times(ctx, sample_references)  # watched: read from the watches' folds

    infos = [classify(m) for m in ctx.messages]
    sample = watched[:: max(1, WATCHES // 20)]
    start = clock()
    for expr, instance in sample:
        reference_resolution(infos, expr, instance)
    per_watch = (clock() - start) / len(sample)
    naive_all_watches = per_watch * WATCHES
    one_fold_per_identity = fold_seconds(ctx, folds)
    # From the messages: what a non-incremental engine does after each edit (read every message, fold
    # every identity), with the same code and the indexes it builds.
    from_messages = seconds(lambda: fold_every_identity(Context(ctx.messages)))
    # The definition: a Context rebuilt from the messages and every watch resolved in it.
    start = clock()
    fresh = Context(ctx.messages)
    for expr, instance in watched:
        fresh.resolve(expr, instance)
    rebuilt = clock() - start
    # No watch: the first resolve of a path (in its view) folds its writes into a log, later ones read it.
    unwatched_context = Context(ctx.messages)
    unwatched = resolve_times(unwatched_context, sample_references)
    again = resolve_times(unwatched_context, sample_references)
    first, later = split_by_lane(sample_references, unwatched)
    del fresh, unwatched_context
    log_steps, log_count, log_bytes = logs_memory(ctx.messages, sample_references)

    median, p99 = statistics.median(every), percentile(every, 0.99)
    return {
        "workload": {"name": workload.name, "messages": MESSAGES, "watches": WATCHES, "edits": EDITS, "seed": SEED,
                     "callbacks": calls[0], "mean_sources_per_watch": mean_sources,
                     "mean_diagnostics_per_watch": mean_diagnostics},
        "edit_latency_ms": {
            "median": median * 1e3,
            "p99": p99 * 1e3,
            "max": max(every) * 1e3,
            "collector_inside_edits_median": statistics.median(inside) * 1e3,
            "collector_inside_edits_p99": percentile(inside, 0.99) * 1e3,
            "and_every_watch_read_median": statistics.median(read) * 1e3,
            "and_every_watch_read_p99": percentile(read, 0.99) * 1e3,
            **{f"{name}_median": statistics.median(s) * 1e3 for name, s in sorted(latencies.items())},
            **{f"{name}_p99": percentile(s, 0.99) * 1e3 for name, s in sorted(latencies.items())},
            # The median is at most 1 ms when at least half of all edits are: the share of each kind that is.
            "share_under_1ms": under_1ms(every),
            **{f"{name}_share_under_1ms": under_1ms(s) for name, s in sorted(latencies.items())},
        },
        "resolve_one_reference_ms": {
            "median": statistics.median(resolves) * 1e3,
            "p99": percentile(resolves, 0.99) * 1e3,
            "max": max(resolves) * 1e3,
            "unwatched_median": statistics.median(unwatched) * 1e3,
            "unwatched_p99": percentile(unwatched, 0.99) * 1e3,
            "unwatched_first_in_lane_count": len(first),
            "unwatched_first_in_lane_median": statistics.median(first) * 1e3,
            "unwatched_first_in_lane_p99": percentile(first, 0.99) * 1e3,
            "unwatched_lane_folded_count": len(later),
            "unwatched_lane_folded_median": statistics.median(later) * 1e3 if later else 0.0,
            "unwatched_lane_folded_p99": percentile(later, 0.99) * 1e3 if later else 0.0,
            "unwatched_again_median": statistics.median(again) * 1e3,
            "unwatched_again_p99": percentile(again, 0.99) * 1e3,
            "unwatched_first_over_again": sum(unwatched) / sum(again),
            "unwatched_logs_kept": {"steps": log_steps, "logs": log_count, "mb": log_bytes / 2**20},
        },
        # Collections that ran inside the timed edits, by generation: the only way the collector's thresholds
        # enter the edit latencies (between edits, the older generations are empty: everything is frozen).
        "collections_inside_edits": {
            "timed": {f"generation_{n}": runs for n, runs in collected_inside.items()},
            "collector_inside_them": {f"generation_{n}": runs for n, runs in unscheduled_inside.items()},
        },
        "collector_between_edits_ms": {
            f"generation_{generation}": {
                "runs": len(pauses),
                "median": statistics.median(pauses) * 1e3 if pauses else 0.0,
                "max": max(pauses, default=0.0) * 1e3,
            }
            for generation, pauses in sorted(idle.items())
        },
        "from_scratch_s": {
            "every_watch_refolded": naive_all_watches,
            "rebuilt_and_every_watch_resolved": rebuilt,
            "from_the_messages": from_messages,
            "one_fold_per_identity": one_fold_per_identity,
        },
        "speedup": {
            "vs_every_watch_refolded": naive_all_watches / median,
            "vs_rebuilt_and_every_watch_resolved": rebuilt / median,
            "vs_from_the_messages": from_messages / median,
            "vs_one_fold_per_identity": one_fold_per_identity / median,
        },
        "build_s": {"json_loads": loads, "context": build, "ratio": build / loads, "watches_setup": watch_setup},
        "memory_mb": {
            "parsed_json": json_bytes / 2**20,
            "context_indexes": context_bytes / 2**20,
            "ratio": context_bytes / json_bytes,
        },
    }


def run_edits(
    ctx: Context, workload: Workload, rng: random.Random, count: int, between: bool, read: Sequence[Watch] = (),
    folds: list[float] | None = None,
) -> tuple[dict[str, list[float]], dict[int, list[float]], dict[int, int]]:
    """Apply `count` random edits; the seconds each took (by kind), and, with `between`, the pauses of
    the collections run between edits as the window runs them when idle (by generation); and how many
    collections of each generation ran inside the timed edits (what the collector's thresholds can change in
    the latencies). With `read`, also the seconds of each edit together with reading every one of those
    watches' `current.sources` right after it (kind "read"): an edit that only renumbers a watch leaves that
    to the read. With `folds`, the one-pass fold timed between some of them (`time_fold`)."""
    latencies: dict[str, list[float]] = {}
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    inside = {0: 0, 1: 0, 2: 0}
    applying = False

    def seen(phase: str, info: dict[str, int]) -> None:
        if applying and phase == "start":
            inside[info["generation"]] += 1

    gc.callbacks.append(seen)
    for number in range(count):
        change = edit(rng, len(ctx), workload.message)
        applying = True
        start = clock()
        ctx.apply(change)
        elapsed = clock() - start
        applying = False
        for handle in read:
            handle.current.sources  # noqa: B018  # ranked when read
        if read:
            latencies.setdefault("read", []).append(clock() - start)
        name = type(change).__name__.lower()
        if isinstance(change, Insert) and change.index == len(ctx) - 1:
            name = "append"
        latencies.setdefault(name, []).append(elapsed)
        if between:
            start = clock()
            generation = collect_when_idle()
            if generation is not None:
                pauses[generation].append(clock() - start)
        if folds is not None:
            time_fold(ctx, number, count, folds)
    gc.callbacks.remove(seen)
    return latencies, pauses, inside


def publish(tables: list[tuple[str, str]], results: dict[str, Any]) -> None:
    """Put the tables of a full run into docs/performance.md, between its bench-table markers."""
    doc = HERE.parent / "docs" / "performance.md"
    if not doc.exists():
        return
    start, end = "<!-- bench-table: written by benchmarks/run.py -->", "<!-- /bench-table -->"
    page = doc.read_text()
    if start in page and end in page:
        head, rest = page.split(start, 1)
        note = ""
        for name, text in tables:
            workload = results[name]["workload"]
            note += (
                f"\n**{name}**\n\n{text}\n\nMean sources per watch: {workload['mean_sources_per_watch']:.0f}; "
                f"mean diagnostics per watch: {workload['mean_diagnostics_per_watch']:.0f}; "
                f"callbacks during the edits: {workload['callbacks']:,}.\n"
            )
        doc.write_text(head + start + note + end + rest.split(end, 1)[1])


def table(results: dict[str, Any]) -> str:
    lat, scratch, speed = results["edit_latency_ms"], results["from_scratch_s"], results["speedup"]
    resolve = results["resolve_one_reference_ms"]
    idle = results["collector_between_edits_ms"]
    build, memory = results["build_s"], results["memory_mb"]
    rows = [
        ("after one edit, all watches current: median", f"{lat['median']:.3f} ms", "≤ 1 ms"),
        ("after one edit, all watches current: p99", f"{lat['p99']:.3f} ms", "≤ 16 ms"),
        ("after one edit, all watches current: max", f"{lat['max']:.3f} ms", ""),
        *[
            (f"  {name}: median / p99", f"{lat[name + '_median']:.3f} / {lat[name + '_p99']:.3f} ms", "")
            for name in ("append", "insert", "replace", "move", "remove")
            if name + "_median" in lat
        ],
        ("  edits at or under 1 ms: all; append / insert / replace / move / remove",
         f"{lat['share_under_1ms']:.0%}; " + " / ".join(
             f"{lat[name + '_share_under_1ms']:.0%}" for name in ("append", "insert", "replace", "move", "remove")
             if name + "_share_under_1ms" in lat), ""),
        *[
            (f"  collector between edits, generation {n}: runs, median / max",
             f"{idle[f'generation_{n}']['runs']}, {idle[f'generation_{n}']['median']:.1f} / "
             f"{idle[f'generation_{n}']['max']:.1f} ms", "")
            for n in range(3)
            if idle[f"generation_{n}"]["runs"]
        ],
        ("  the same edits, collector inside them: median / p99",
         f"{lat['collector_inside_edits_median']:.3f} / {lat['collector_inside_edits_p99']:.3f} ms", ""),
        ("  collections inside the edits, gen. 0 / 1 / 2: timed; collector inside",
         "; ".join(" / ".join(str(runs[f"generation_{n}"]) for n in range(3))
                   for runs in results["collections_inside_edits"].values()), ""),
        ("after one edit, every watch's current read (sources ranked): median / p99",
         f"{lat['and_every_watch_read_median']:.3f} / {lat['and_every_watch_read_p99']:.3f} ms", ""),
        ("resolve of one watched reference: median / p99", f"{resolve['median']:.3f} / {resolve['p99']:.3f} ms",
         "≤ 1 ms"),
        ("first resolve of one reference nobody watches (CPU): median / p99",
         f"{resolve['unwatched_median']:.3f} / {resolve['unwatched_p99']:.3f} ms", "≤ 1 ms"),
        (f"  the first in its lane ({resolve['unwatched_first_in_lane_count']}): median / p99",
         f"{resolve['unwatched_first_in_lane_median']:.3f} / {resolve['unwatched_first_in_lane_p99']:.3f} ms", ""),
        (f"  the others, their lane read before ({resolve['unwatched_lane_folded_count']}): median / p99",
         f"{resolve['unwatched_lane_folded_median']:.3f} / {resolve['unwatched_lane_folded_p99']:.3f} ms", ""),
        ("  the same references again: median / p99; all of the first pass / all again",
         f"{resolve['unwatched_again_median']:.3f} / {resolve['unwatched_again_p99']:.3f} ms; "
         f"{resolve['unwatched_first_over_again']:,.0f}×", "much faster"),
        ("  path logs kept after them: steps, logs, memory",
         f"{resolve['unwatched_logs_kept']['steps']:,}, {resolve['unwatched_logs_kept']['logs']}, "
         f"{resolve['unwatched_logs_kept']['mb']:.1f} MB", ""),
        ("from scratch: every watch refolded (old engine)", f"{scratch['every_watch_refolded']:.2f} s", ""),
        ("from scratch: a Context rebuilt, every watch resolved",
         f"{scratch['rebuilt_and_every_watch_resolved']:.3f} s", ""),
        ("from scratch: from the messages, every identity folded", f"{scratch['from_the_messages']:.3f} s", ""),
        ("from scratch: every identity folded over built indexes", f"{scratch['one_fold_per_identity']:.3f} s", ""),
        ("speed-up vs every watch refolded", f"{speed['vs_every_watch_refolded']:,.0f}×", "≥ 1000×"),
        ("speed-up vs a Context rebuilt, every watch resolved",
         f"{speed['vs_rebuilt_and_every_watch_resolved']:,.0f}×", "≥ 1000×"),
        ("speed-up vs from the messages, every identity folded", f"{speed['vs_from_the_messages']:,.0f}×", "≥ 1000×"),
        ("speed-up vs the one-pass fold from scratch (every identity, built indexes)",
         f"{speed['vs_one_fold_per_identity']:,.0f}×", "≥ 1000×"),
        ("build Context / json.loads", f"{build['context']:.2f} s / {build['json_loads']:.2f} s = "
         f"{build['ratio']:.2f}×", "≤ 3×"),
        ("memory: indexes / parsed JSON", f"{memory['context_indexes']:.0f} MB / {memory['parsed_json']:.0f} MB = "
         f"{memory['ratio']:.2f}×", "≤ 4×"),
    ]
    rows.insert(0, ("measure", "result", "target"))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (width + 2) for width in widths) + "|")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
