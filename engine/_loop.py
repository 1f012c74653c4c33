"""The loop (010, 012): turn after turn, a solution's calls run, then become the plan of the next request.

A *turn* is a solution (`{"calls": [...], "output": ...}`, or an array of calls) from whoever produces
the next turn: a person typing it, or a model provider (`turns`). A *tick* runs the turn's calls with an
`Execution` until nothing is ready, then concludes: a non-null `output` valid against the request schema
ends the loop; an invalid one is an error message and the loop goes on; a null one carries the turn's
calls stay in the context as the plan message they became when the turn was taken (012: "becomes the
new Plan for the next step").
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from psygnal import Signal

from ._context import Context
from ._document import Document, Shape
from ._errors import DocumentError
from ._execution import Execution
from ._json import JSONSyntaxError, parse
from ._messages import MISSING
from ._outputs import utc_now
from ._request import is_solution_schema
from ._status import TickReport
from ._tools import pending_calls, plan_mode
from ._validate import json_path

# Who produces the next turn: given the document as the request stands, a solution (or an awaitable of
# one), or None when it has none to give. A model provider plugs in here.
TurnSource = Callable[[Document], Any]


class LoopStatus(StrEnum):
    READY = "ready"  # a turn (or the document's plan) is there to run
    STOPPED = "stopped at a breakpoint"  # or at a failure, with `break_on_failure`
    LAZY = "waiting for plan approval"
    WAITING_FOR_TURN = "waiting for the next turn"
    FINISHED = "finished"


@dataclass(frozen=True)
class Tick:
    """One concluded tick: its number (from 1), what ran, the turn's output and why it was refused."""

    number: int
    report: TickReport
    output: Any = None
    output_problem: str | None = None


def output_schema(schema: Any) -> Any:
    """The schema the final output must meet: `properties.output` of a solution schema, else the schema.

    A solution schema (002's composed schema, 012's examples) has `output` beside `calls` or `meta`.
    """
    return schema["properties"]["output"] if is_solution_schema(schema) else schema


def output_problem(schema: Any, output: Any) -> str | None:
    """Why `output` does not meet the request schema, or None (no schema accepts anything)."""
    target = output_schema(schema)
    if not isinstance(target, dict):
        return None
    try:
        validator = jsonschema.validators.validator_for(target)
        validator.check_schema(target)
    except SchemaError as error:
        return f"the request's output schema is invalid: {error.message}"
    errors = sorted(validator(target).iter_errors(output), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    return "the output does not meet the request schema: " + "; ".join(
        f"{json_path(error.absolute_path)}: {error.message}" for error in errors)


def turn_problem(solution: Any) -> str | None:
    """Why a turn is not a solution (an object with `calls` and/or `output`, or an array of calls)."""
    if isinstance(solution, list):
        return None
    if not isinstance(solution, dict):
        return "a turn is a solution: an object with 'calls' and 'output', or an array of calls"
    if "calls" in solution and not isinstance(solution["calls"], list):
        return "the turn's 'calls' must be an array of calls"
    return None


def load_turn(path: str | Path) -> Any:
    """A turn typed by hand, from a JSON file; a `DocumentError` naming the file and place otherwise."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise DocumentError(str(file), error.strerror or str(error)) from None
    try:
        return parse(raw)
    except JSONSyntaxError as error:
        raise DocumentError(str(file), error.reason, error.line, error.column) from None


def _calls_of(solution: Any) -> list[Any]:
    return pending_calls(Context(), solution)[0] if solution is not None else []


def _output_of(solution: Any) -> Any:
    return solution.get("output") if isinstance(solution, dict) else None


class Loop:
    """A request run turn by turn. `execution` is the current tick's (the same object for every tick).

    Signals: `tick_finished(Tick)`, `status_changed(LoopStatus)`.
    """

    tick_finished = Signal(object)
    status_changed = Signal(object)

    def __init__(self, document: Document, *, turns: TurnSource | None = None, **options: Any) -> None:
        self.document = document
        self.turns = turns
        self.clock = options.get("clock", utc_now)
        self.solution = document.solution
        self._plan_turn()
        path = document.path
        base = options.pop("base", None) or (path.parent if path is not None else None)
        chain = (*options.pop("chain", ()), *((path.resolve(),) if path is not None else ()))
        self.execution = Execution(document.context, self.solution, turns=turns, base=base, chain=chain, **options)
        self.ticks: list[Tick] = []
        self.output: Any = MISSING  # the final output, once the loop has finished
        # Nothing to run: a fresh request, or a document saved while it waited for its next turn (its plan's
        # calls all have their record).
        record = self.execution.record
        plan_ran = all(record.of(index) is not None for index in range(len(self.execution.plans)))
        waiting = self.solution is None and plan_ran
        self.status = LoopStatus.WAITING_FOR_TURN if waiting else LoopStatus.READY

    def _become(self, status: LoopStatus) -> None:
        if status is not self.status:
            self.status = status
            self.status_changed.emit(status)

    async def tick(self) -> LoopStatus:
        """Run the current turn's calls until nothing is ready, then conclude the tick."""
        if self.status in (LoopStatus.FINISHED, LoopStatus.WAITING_FOR_TURN):
            raise RuntimeError(f"the loop is {self.status}: nothing to run")
        report = await self.execution.run()
        await self.execution.drain()
        if report.lazy:
            self._become(LoopStatus.LAZY)
        elif report.stopped_at is not None or report.failed_at is not None:
            self._become(LoopStatus.STOPPED)
        else:
            self._conclude(report)
        return self.status

    def approve_plan(self) -> None:
        """Let a lazy plan run at the next `tick()`."""
        self.execution.approve_plan()
        if self.status is LoopStatus.LAZY:
            self._become(LoopStatus.READY)

    def _conclude(self, report: TickReport) -> None:
        output = _output_of(self.solution)
        problem = None if output is None else output_problem(self.document.schema, output)
        if output is not None and problem is None:
            self.output = output
        elif problem is not None:  # not silently accepted: the next turn sees why (010's self-correction)
            self.document.context.append({"type": "error", "data": {
                "output": output, "error": {"type": "output", "message": problem}}, "_date": self.clock()})
        tick = Tick(len(self.ticks) + 1, report, output, problem)
        self.ticks.append(tick)
        if self.output is MISSING:  # the turn is spent: its calls are the plan in the context
            self.solution = None
            if self.document.shape is Shape.REQUEST:
                self.document.solution = None
        self.tick_finished.emit(tick)
        self._become(LoopStatus.FINISHED if self.output is not MISSING else LoopStatus.WAITING_FOR_TURN)

    def _plan_turn(self) -> None:
        """The turn's calls become a plan message (012/203), with the current plan's mode, before they run.

        So the context the next request sees holds the plan, and the run record of these calls follows
        their plan (format.md §9). A document reopened with the same solution gets no second plan.
        """
        calls = _calls_of(self.solution)
        entries, index = pending_calls(self.document.context)
        if not calls or (index is not None and entries == calls):
            return
        plan: dict[str, Any] = {"type": "plan", "plan": copy.deepcopy(calls)}
        if plan_mode(self.document.context) == "lazy":
            plan["mode"] = "lazy"
        self.document.context.append(plan)

    def take_turn(self, solution: Any) -> None:
        """The next turn (typed by hand, or from the model provider): its calls run at the next `tick()`."""
        if self.status is not LoopStatus.WAITING_FOR_TURN:
            raise RuntimeError(f"the loop is {self.status}, not waiting for a turn")
        problem = turn_problem(solution)
        if problem is not None:
            raise ValueError(problem)
        self.solution = solution
        if self.document.shape is Shape.REQUEST:
            self.document.solution = solution
        self._plan_turn()
        self.execution.solution = solution
        self.execution.reset()
        self._become(LoopStatus.READY)

    async def run(self, max_ticks: int = 25) -> LoopStatus:
        """Tick, and ask `turns` for each next turn, until finished, stopped, lazy, out of turns or ticks.

        Run again after a breakpoint to continue the tick; after `approve_plan()` to run a lazy plan.
        """
        while True:
            if self.status is LoopStatus.WAITING_FOR_TURN:
                if self.turns is None or len(self.ticks) >= max_ticks:
                    return self.status
                solution = self.turns(self.document)
                if inspect.isawaitable(solution):
                    solution = await solution
                if solution is None:
                    return self.status
                self.take_turn(solution)
            if self.status is LoopStatus.FINISHED:
                return self.status
            if await self.tick() in (LoopStatus.STOPPED, LoopStatus.LAZY):
                return self.status
