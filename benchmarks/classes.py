"""Where the median edit of `benchmarks/run.py` goes: CPU time per class of edit, and, with `--parts`, the
median without each part of the engine's work. What to build next for the 1000× target is read from it
(docs/performance.md, "What is open").

`python benchmarks/classes.py [MESSAGES WATCHES EDITS] [tidy|untidy] [--parts | --answers]`

The same documents, watches and edits as `run.py` (its seeds), at its full size unless told. Each edit is timed
alone, in CPU time, with the collector off inside it and run between edits as the window runs it when idle. An
edit's class is its kind and the layer of the message it adds or takes out: global (no `_instance`), instance, or
text; an append is an insert at the end. The threshold is the one-pass fold from scratch (`run.fold_every_identity`,
timed between the edits as `run.py` times it: `run.time_fold`) divided by 1000: the median edit must be at or under it.

`--parts` times named functions of the engine in every edit (the outermost call only; a wrapper adds about a
microsecond per call, so take the parts of many small calls as upper bounds), prints each class's mean per part,
then the median as it would be with a part's time taken out ("free") or halved. The ratio of such a median to the
measured one is what survives a loaded machine: `run.py`'s ratio to 1000× is the one a change must reach.

`--answers` asks which of that work changes an answer: each track's repair is timed and its results compared
with the ones it had (value, source keys, problems); it prints the median without the repairs that changed no
result, without all the work of the edits whose watches all saw no change (found, value and source messages the
same: their results changed in problems only, or not at all), and without the repairs and the work of each kind
of track (instance or global, lane or whole kind).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import run as bench
from contextdeck._runtime import collect_when_idle, tune_interpreter
from contextdeck.engine import Context, Insert, Remove, Replace

clock = time.process_time
ENGINE = "contextdeck.engine."
# (label, module under contextdeck.engine, attribute path): the parts `--parts` times.
PARTS = (
    ("repairs", "resolve._incremental._watches", "Watchers.refolds"),
    ("under a changed global fold (lane tracks)", "resolve._incremental._tracks", "_same_base"),
    ("whole-kind repair", "resolve._incremental._whole", "repair"),
    ("refold from the layer's start", "resolve._incremental._tracks", "_TrackRepair.fold_until_equivalent"),
    ("one-write splice", "resolve._incremental._tracks", "_TrackRepair.splice_at_the_edit"),
    ("rebases applied at once", "resolve._incremental._tracks", "Marks.settled"),
    ("results", "resolve._incremental._watches", "Watchers._results"),
    ("evaluations", "resolve._incremental._watches", "Watch.evaluate"),
    ("plan", "resolve._incremental._watches", "Watchers.touch"),
    ("order", "resolve._order", "Order.insert"),
    ("order", "resolve._order", "Order.pop"),
    ("layer index", "resolve._incremental._index", "Layer.add"),
    ("layer index", "resolve._incremental._index", "Layer.discard"),
)
INSTANCE_REPAIRS = ("under a changed global fold (lane tracks)", "whole-kind repair", "refold from the layer's start")


def main() -> None:
    args = [a for a in sys.argv[1:] if a not in ("--parts", "--answers")]
    size = tuple(int(a) for a in args[:3]) if len(args) >= 3 else bench.FULL
    only = args[3] if len(args) > 3 else None
    parts: dict[str, float] = {}
    if "--parts" in sys.argv:
        _time_parts(parts)
    if "--answers" in sys.argv:
        _follow_answers(parts)
    timing = "--parts" in sys.argv or "--answers" in sys.argv
    for workload in bench.WORKLOADS:
        if only is None or workload.name == only:
            _measure(workload, size, parts if timing else None)


def _measure(workload: bench.Workload, size: tuple[int, ...], parts: dict[str, float] | None) -> None:
    messages, watches, edits = size
    gc.unfreeze()
    gc.collect()
    rng = random.Random(bench.SEED)
    ctx = Context(json.loads(json.dumps(workload.document(rng, messages))))
    watched = [(workload.expression(rng), rng.choice(bench.INSTANCES)) for _ in range(watches)]
    for expr, instance in watched:
        ctx.watch(expr, lambda _: None, instance=instance)  # (the context holds its watches)
    gc.collect()
    gc.freeze()
    tune_interpreter()
    load = os.getloadavg()[0]
    edit_rng = random.Random(bench.SEED + 1)
    timed: list[tuple[str, float, dict[str, float]]] = []
    folds: list[float] = []
    for number in range(edits):
        change = bench.edit(edit_rng, len(ctx), workload.message)
        name = _class_of(ctx, change)
        if parts is not None:
            parts.clear()
            _EDIT.clear()
        gc.disable()
        start = clock()
        ctx.apply(change)
        elapsed = clock() - start
        gc.enable()
        if _EDIT:
            _answered(parts or {})
        timed.append((name, elapsed, dict(parts or {})))
        collect_when_idle()
        bench.time_fold(ctx, number, edits, folds)
    fold = bench.fold_seconds(ctx, folds)
    threshold = fold / 1000
    every = [elapsed for _, elapsed, _ in timed]
    median = statistics.median(every)
    print(
        f"\n{workload.name}: {messages:,} messages, {watches:,} watches, {edits:,} edits; load average "
        f"{load:.1f} → {os.getloadavg()[0]:.1f}"
    )
    print(
        f"one-pass fold {fold:.3f} s, so 1000× asks for a median ≤ {threshold * 1e3:.3f} ms; the median is "
        f"{median * 1e3:.3f} ms ({fold / median:,.0f}×), {_share(every, threshold)} of the edits at or under it"
    )
    print(f"  {'class':16} {'share':>6} {'median':>9} {'mean':>9} {'≤ 1000×':>8} {'p99':>9}")
    by_class: dict[str, list[float]] = {}
    for name, elapsed, _ in timed:
        by_class.setdefault(name, []).append(elapsed)
    for name, samples in sorted(by_class.items(), key=lambda item: -len(item[1])):
        print(
            f"  {name:16} {len(samples) / len(timed):6.0%} {statistics.median(samples) * 1e3:7.3f} ms "
            f"{statistics.mean(samples) * 1e3:6.3f} ms {_share(samples, threshold):>8} "
            f"{bench.percentile(samples, 0.99) * 1e3:6.3f} ms"
        )
    print(
        f"  {'all':16} {'':6} {median * 1e3:7.3f} ms {statistics.mean(every) * 1e3:6.3f} ms {'':8} "
        f"{bench.percentile(every, 0.99) * 1e3:6.3f} ms"
    )
    if parts is not None and "--answers" in sys.argv:
        _print_answers(timed, median, threshold)
    elif parts is not None:
        _print_parts(timed, median, threshold)


def _class_of(ctx: Context, change: Any) -> str:
    if isinstance(change, Insert):
        return f"{'append' if change.index == len(ctx) else 'insert'} {_layer(change.message)}"
    if isinstance(change, Remove):
        return f"remove {_layer(ctx[change.index])}"
    return "replace" if isinstance(change, Replace) else "move"


def _layer(message: Any) -> str:
    if message.get("type") != "data":
        return "text"
    return "instance" if "_instance" in message else "global"


def _share(samples: list[float], threshold: float) -> str:
    return f"{sum(sample <= threshold for sample in samples) / len(samples):.0%}"


def _time_parts(parts: dict[str, float]) -> None:
    """Wrap each part so that `parts[label]` adds up the CPU time of its outermost calls."""
    for label, module_name, attribute in PARTS:
        owner: Any = importlib.import_module(ENGINE + module_name)
        *path, name = attribute.split(".")
        for step in path:
            owner = getattr(owner, step, None)
        if owner is None or not hasattr(owner, name):
            print(f"(no {module_name}.{attribute}: {label} not timed)")
            continue
        setattr(owner, name, _timer(getattr(owner, name), label, parts))


def _timer(function: Callable[..., Any], label: str, parts: dict[str, float]) -> Callable[..., Any]:
    running = [False]

    def timed(*args: Any, **kwargs: Any) -> Any:
        if running[0]:
            return function(*args, **kwargs)
        running[0] = True
        start = clock()
        try:
            return function(*args, **kwargs)
        finally:
            parts[label] = parts.get(label, 0.0) + clock() - start
            running[0] = False

    return timed


def _print_parts(timed: list[tuple[str, float, dict[str, float]]], median: float, threshold: float) -> None:
    labels = list(dict.fromkeys(label for label, _, _ in PARTS))
    print("\n  mean ms per edit of each class, by part (outermost calls; parts nest inside repairs):")
    classes = dict.fromkeys(name for name, _, _ in timed)
    for name in classes:
        rows = [spent for each, _, spent in timed if each == name]
        means = {label: sum(spent.get(label, 0.0) for spent in rows) / len(rows) for label in labels}
        shown = ", ".join(f"{label} {mean * 1e3:.3f}" for label, mean in means.items() if mean >= 2e-6)
        print(f"  {name:16} {shown}")
    print(
        f"\n  the median without a part (measured {median * 1e3:.3f} ms; 1000× asks for "
        f"{threshold / median:.2f} of it):"
    )

    def median_without(cut: Callable[[str, dict[str, float]], float]) -> str:
        left = [elapsed - cut(name, spent) for name, elapsed, spent in timed]
        return f"{statistics.median(left) / median:.2f} ({_share(left, threshold)} at or under)"

    def instance_repairs(name: str, spent: dict[str, float]) -> float:
        return sum(spent.get(label, 0.0) for label in INSTANCE_REPAIRS) if name == "append global" else 0.0

    def row(title: str, cut: Callable[[str, dict[str, float]], float]) -> None:
        halved = median_without(lambda name, spent: cut(name, spent) / 2)
        print(f"  {title:46} free {median_without(cut)}, halved {halved}")

    row("instance repairs under a global append", instance_repairs)
    for label in labels:
        row(label, lambda _, spent, label=label: spent.get(label, 0.0))  # type: ignore[misc]


# One edit's work as `--answers` follows it: each track's repair time, what its results were and are.
_EDIT: dict[str, Any] = {}
_NEUTRAL = "repairs that changed no result"
_UNSEEN = "all the work of an edit no watcher saw change"
_KINDS = ("instance lane tracks", "instance whole kinds", "global lane tracks", "global whole kinds")
_INSTANCE = "every instance track: repairs"


def _follow_answers(parts: dict[str, float]) -> None:
    """Wrap the watchers' repair, results and evaluations so that `_answered` can say which changed an answer."""
    watches: Any = importlib.import_module(ENGINE + "resolve._incremental._watches")
    refold, results, outcome, evaluate = (
        watches.Watchers._refold, watches.Watchers._results, watches.Watchers._outcome, watches.Watch.evaluate)

    def kind(track: Any) -> str:
        return _KINDS[(track.instance is None) * 2 + (track.lane is None)]

    def timed_refold(self: Any, track: Any, work: Any, folds: Any) -> Any:
        start = clock()
        fold = refold(self, track, work, folds)
        spent = clock() - start
        _EDIT.setdefault("repairs", []).append((track, spent, work.appended is not None))
        return fold

    def timed_results(self: Any, track: Any, *args: Any) -> Any:
        start = clock()
        found = results(self, track, *args)
        parts[kind(track)] = parts.get(kind(track), 0.0) + clock() - start
        return found

    def timed_evaluate(self: Any, *args: Any) -> Any:
        start = clock()
        resolution = evaluate(self, *args)
        label = kind(next(iter(self.tracks.values())))
        parts[label] = parts.get(label, 0.0) + clock() - start
        return resolution

    def followed(self: Any, *args: Any) -> Any:
        start = clock()
        made = outcome(self, *args)
        folds, found, renewals = made
        _EDIT["outcome"] = clock() - start
        _EDIT["results"] = [(track, dict(track.results), found[track]) for track in folds]
        _EDIT["seen"] = any(seen for _, _, seen in renewals)
        return made

    watches.Watchers._refold, watches.Watchers._results = timed_refold, timed_results
    watches.Watchers._outcome, watches.Watch.evaluate = followed, timed_evaluate


def _answered(parts: dict[str, float]) -> None:
    """Add up, into `parts`, the edit's repairs by kind of track and those that changed no result (a global
    track's counts as changing one when an instance track over it did)."""

    def same(old: Any, new: Any) -> bool:
        return old is new or (old is not None and old.value == new.value and tuple(old.keys) == tuple(new.keys)
                              and old.problems.items() == new.problems.items())

    changed = {track: any(not same(old.get(path), new[path]) for path in new)
               for track, old, new in _EDIT.get("results", [])}
    for track, spent, stepped in _EDIT.get("repairs", []):
        label = _KINDS[(track.instance is None) * 2 + (track.lane is None)]
        if not stepped:
            parts[label + ": repairs"] = parts.get(label + ": repairs", 0.0) + spent
            if track.instance is not None:
                parts[_INSTANCE] = parts.get(_INSTANCE, 0.0) + spent
        parts[label] = parts.get(label, 0.0) + spent
        needed = changed.get(track, False) or (track.instance is None and any(
            changed[other] for other in changed
            if other.instance is not None and (other.kind, other.lane) == (track.kind, track.lane)))
        if not needed:
            parts[_NEUTRAL] = parts.get(_NEUTRAL, 0.0) + spent
    if not _EDIT.get("seen", True):
        parts[_UNSEEN] = _EDIT["outcome"]


def _print_answers(timed: list[tuple[str, float, dict[str, float]]], median: float, threshold: float) -> None:
    print(f"\n  the median without (measured {median * 1e3:.3f} ms; 1000× asks for {threshold / median:.2f} of it):")
    for label in (_NEUTRAL, _UNSEEN, _INSTANCE, *(f"{kind}: repairs" for kind in _KINDS), *_KINDS):
        left = [elapsed - spent.get(label, 0.0) for _, elapsed, spent in timed]
        print(f"  {label:50} {statistics.median(left) / median:.2f} ({_share(left, threshold)} at or under)")
    print("\n  edits no watcher saw change, per class: share, their median")
    for name in dict.fromkeys(name for name, _, _ in timed):
        rows = [(elapsed, _UNSEEN in spent) for each, elapsed, spent in timed if each == name]
        unseen = [elapsed for elapsed, flag in rows if flag]
        if unseen:
            print(f"  {name:16} {len(unseen) / len(rows):4.0%} {statistics.median(unseen) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
