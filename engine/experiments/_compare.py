"""Which cases of an earlier experiment a later one is compared with (docs/experiments.md, "Compared with").

Cases of different datasets pair by their names alone, and `line-3` of one dataset is not `line-3` of another:
compared, every row would read as changed. Two experiments are over the same dataset when their results name
the same dataset file (`dataset`, absolute; results written before they named it say nothing) and they have
cases in common (a case added to the file since is new, one removed is gone; a file rewritten with other cases
is another dataset). Otherwise only the cases whose ids both have are compared, and the comparison says so.
`eval --baseline` and the window's Experiments pane both decide here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._dataset import Case
from ._results import case_name


@dataclass(frozen=True)
class Over:
    """What an experiment ran over: its dataset's path (None when its results were written before they named it)
    and its cases, by name (`case_name`) and by id (those that have one, as text)."""

    dataset: str | None
    names: frozenset[str]
    ids: frozenset[str]


def over_cases(dataset: str | Path, cases: Iterable[Case]) -> Over:
    """The dataset file `dataset` and its `cases`, as an experiment over them is described."""
    listed = list(cases)
    return Over(str(Path(dataset).resolve()), frozenset(case.name for case in listed),
                frozenset(str(case.id) for case in listed if case.id is not None))


def over_results(results: list[dict[str, Any]]) -> Over:
    """What the experiment whose `results` these are ran over."""
    dataset = next((value for result in results if isinstance(value := result.get("dataset"), str)), None)
    return Over(dataset, frozenset(map(case_name, results)),
                frozenset(str(result["id"]) for result in results if result.get("id") is not None))


def same_dataset(first: Over, second: Over) -> bool:
    """Whether two experiments ran over one dataset: the same file (where both say) and cases in common."""
    if first.dataset is not None and second.dataset is not None and first.dataset != second.dataset:
        return False
    return not first.names or not second.names or not first.names.isdisjoint(second.names)


@dataclass(frozen=True)
class Comparison:
    """An earlier experiment as a later one is compared with it: the results compared and, when the two are not over
    one dataset, a sentence saying so (`differs`)."""

    results: list[dict[str, Any]]
    differs: str | None = None


def compared(name: str, baseline: list[dict[str, Any]], later: Over) -> Comparison:
    """The results of `baseline` (its file's `name`) a later experiment over `later` is compared with: all of them
    over the same dataset; else only the cases whose ids both have, with why."""
    earlier = over_results(baseline)
    if same_dataset(earlier, later):
        return Comparison(baseline)
    kept = [result for result in baseline if result.get("id") is not None and str(result["id"]) in later.ids]
    said = f"only the {len(kept)} case(s) whose ids both have are compared"
    return Comparison(kept, f"{name} is over {_other(earlier.dataset, later.dataset)}: {said}")


def _other(earlier: str | None, later: str | None) -> str:
    """What the earlier experiment ran over, said against the later's dataset."""
    if earlier is None or later is None or earlier == later:  # the same file, its cases changed since; or unsaid
        return "other cases" if later is None else f"other cases than {Path(later).name} holds"
    first, second = Path(earlier), Path(later)
    if first.name == second.name:  # two files of one name: their folders tell them apart
        return f"another dataset ({first}, not {second})"
    return f"another dataset ({first.name}, not {second.name})"
