"""An experiment's results file: JSON Lines, one result a case in the dataset's order (docs/experiments.md),
read back as the baseline of the next experiment or to compare two."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..document._document import jsonl_lines, load_document
from ..document._files import write_atomically
from ..document._json import dumps
from ..protocol._errors import DocumentError
from ._steps import Baseline, read_steps


def write_results(path: str | os.PathLike[str], results: list[dict[str, Any] | None]) -> int:
    """Write the results made (a cancelled experiment's unfinished cases are left out); how many."""
    made = [result for result in results if result is not None]
    write_atomically(Path(path), "".join(dumps(result, indent=False) + "\n" for result in made).encode("utf-8"))
    return len(made)


def read_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The results a file holds, each naming its run document (`run`) where it is found from here
    (`_run_found`)."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise DocumentError(str(file), error.strerror or str(error)) from None
    results: list[dict[str, Any]] = []
    for number, value in zip(*jsonl_lines(raw, str(file)), strict=True):
        if not isinstance(value, dict) or "status" not in value:
            raise DocumentError(str(file), "expected a result object with a 'status'", line=number)
        results.append(_run_found(value, file.parent))
    return results


def _run_found(result: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A result whose `run` is relative was written before runs were named absolutely, relative to the folder
    `eval` ran in: that is the current folder when the run is found there, else most often the results file's
    own `folder` (`eval --out results.jsonl --runs runs`), where it is taken from when it is there."""
    run = result.get("run")
    if not isinstance(run, str) or Path(run).is_absolute() or Path(run).exists():
        return result
    beside = folder / run
    return {**result, "run": str(beside)} if beside.exists() else result


def reasons(result: dict[str, Any]) -> list[str]:
    """Why a case failed or missed its expectation: a failed case's errors (the endpoint, a refused answer) first,
    since they are why there is no output to compare; else what was missed, or its errors."""
    errors, missed = result.get("errors") or [], result.get("failures") or []
    return [*errors, *missed] if result.get("status") == "failed" else missed or errors


def case_name(result: dict[str, Any]) -> str:
    """The name that pairs a result with its case in another experiment: its id, else its line."""
    return f"line-{result.get('line')}" if result.get("id") is None else str(result["id"])


def baselines(results: list[dict[str, Any]], where: Path) -> dict[str, Baseline]:
    """Each case's baseline run, read from the run document its result names (relative to `where`)."""
    found: dict[str, Baseline] = {}
    for result in results:
        run = result.get("run")
        if not isinstance(run, str):
            continue
        path = Path(run) if Path(run).is_absolute() else where / run
        document = load_document(path)
        start, ticks = result.get("start"), result.get("ticks")
        steps = read_steps(document.context.messages[start if isinstance(start, int) else 0:])
        if isinstance(ticks, int):
            steps = replace(steps, turns=ticks)
        found[case_name(result)] = Baseline(steps, result.get("output"))
    return found


@dataclass(frozen=True)
class Summary:
    """An experiment in numbers: cases; how their runs ended (each result's `status`); how many passed and failed
    their expectations; what the model was asked, and tokens."""

    cases: int
    finished: int
    passed: int
    failed: int  # expectations missed (a case may finish and fail them)
    tokens: int
    asked: int
    replayed: int
    waiting: int = 0  # runs that stopped without a final output
    failed_runs: int = 0  # cases that could not run to an end (status `failed`: a broken input, a raised error)

    @property
    def pass_rate(self) -> float | None:
        checked = self.passed + self.failed
        return None if checked == 0 else self.passed / checked


def summarise(results: list[dict[str, Any]]) -> Summary:
    def total(key: str) -> int:
        return sum(value for result in results if isinstance(value := result.get(key), int))

    def ended(status: str) -> int:
        return sum(result.get("status") == status for result in results)

    return Summary(len(results), ended("finished"), sum(result.get("passed") is True for result in results),
                   sum(result.get("passed") is False for result in results),
                   total("tokens"), total("asked"), total("replayed"), ended("waiting"), ended("failed"))
