"""Experiments: a document's agent loop run over a dataset of inputs, each result checked and compared."""

from ._compare import Comparison, Over, compared, over_cases, over_results, same_dataset
from ._dataset import Case, Trajectory, is_schema, load_cases, parse_cases
from ._expect import failures
from ._experiment import (
    Experiment,
    Settings,
    ends_at_once,
    input_position,
    request_of,
    run_case,
    run_start,
    with_input,
)
from ._results import Summary, baselines, case_name, read_results, reasons, summarise, write_results
from ._steps import Baseline, Recorded, Step, Steps, diverged, read_steps

__all__ = [
    "Baseline",
    "Case",
    "Comparison",
    "Experiment",
    "Over",
    "Recorded",
    "Settings",
    "Step",
    "Steps",
    "Summary",
    "Trajectory",
    "baselines",
    "case_name",
    "compared",
    "diverged",
    "ends_at_once",
    "failures",
    "input_position",
    "is_schema",
    "load_cases",
    "over_cases",
    "over_results",
    "parse_cases",
    "read_results",
    "read_steps",
    "reasons",
    "request_of",
    "run_case",
    "run_start",
    "same_dataset",
    "summarise",
    "with_input",
    "write_results",
]
