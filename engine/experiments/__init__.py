"""Experiments: a document's agent loop run over a dataset of inputs, each result checked and compared."""

from ._dataset import Case, Trajectory, is_schema, load_cases, parse_cases
from ._expect import failures
from ._experiment import Experiment, Settings, input_position, run_case, with_input
from ._results import Summary, baselines, case_name, read_results, reasons, summarise, write_results
from ._steps import Baseline, Recorded, Step, Steps, diverged, read_steps

__all__ = [
    "Baseline",
    "Case",
    "Experiment",
    "Recorded",
    "Settings",
    "Step",
    "Steps",
    "Summary",
    "Trajectory",
    "baselines",
    "case_name",
    "diverged",
    "failures",
    "input_position",
    "is_schema",
    "load_cases",
    "parse_cases",
    "read_results",
    "read_steps",
    "reasons",
    "run_case",
    "summarise",
    "with_input",
    "write_results",
]
