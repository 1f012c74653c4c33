"""The loop (010, 012): turn after turn, a solution's calls run, then become the plan of the next request.

A *turn* is a solution (`{"calls": [...], "output": ...}`, or an array of calls) from whoever produces
the next turn: a person typing it, or a model provider (`turns`); it is checked against the composed
request schema before it is taken (`_turns.turn_problems`). A *tick* runs the turn's calls with an
`Execution` until nothing is ready, then concludes: a non-null `output` valid against the request schema
ends the loop; an invalid one is an error message and the loop goes on; with a null one the turn's
calls stay in the context as the plan message they became when the turn was taken (012: "becomes the
new Plan for the next step"). A bare context has no solution slot: its turn is its last plan message,
whose output it concludes with (`current_turn`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from psygnal import Signal

from ..calls._calls import copied
from ..calls._outputs import utc_now
from ..calls._status import TickReport
from ..document._document import Document, Shape, parsed_file
from ..protocol._errors import DocumentError
from ..protocol._messages import MISSING
from ..request._advice import solution_refusals
from ..request._request import Request
from ..resolve._resolution import Diagnostic
from ._execution import Execution
from ._turns import conclude, current_turn, turn_change, turn_output, turn_problems

# Who produces the next turn: given the document as the request stands, a solution or a `Turn` (or an
# awaitable of one), or None when it has none to give. A model provider plugs in here (`model_turns`).
TurnSource = Callable[[Document], Any]
# Who answers a latent call that waits for its output (`Execution`, call index): writes it (or fails the
# call) and returns once it is written. A model provider plugs in here too (`answer_call`).
OutputSource = Callable[[Execution, int], Awaitable[Any]]


@dataclass(frozen=True)
class Turn:
    """A turn with its audit: the model's exchange in short (`Answer.summary`), kept as `_model` on the plan
    message the turn becomes (and on a saved request's solution)."""

    solution: Any
    audit: dict[str, Any] | None = None


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


def load_turn(path: str | Path) -> Any:
    """A turn typed by hand, from a JSON file; a `DocumentError` naming the file and place otherwise."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise DocumentError(str(file), error.strerror or str(error)) from None
    return parsed_file(raw, str(file))


class TurnRefused(ValueError):
    """A turn the loop does not take: its problems (each with its JSON path), nothing changed."""

    def __init__(self, problems: list[Diagnostic]) -> None:
        super().__init__("; ".join(str(problem) for problem in problems))
        self.problems = tuple(problems)


def tick_limit(value: object) -> int:
    """`max_ticks`: an integer, else a TypeError saying what it got (before the loop takes a turn)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_ticks must be an integer, got {type(value).__name__} {value!r}")
    return value


def seam(value: Any, name: str) -> Any:
    """A loop's `turns` or `outputs`: a function or None, else a TypeError saying what it got (a list of turns is
    not taken for one: a turn may itself be a list of calls)."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a function of the document, or None; got {type(value).__name__}")
    return value


class Loop:
    """A request run turn by turn. `execution` is the current tick's (the same object for every tick).

    Signals: `tick_finished(Tick)`, `status_changed(LoopStatus)`.
    """

    tick_finished = Signal(object)
    status_changed = Signal(object)

    def __init__(self, document: Document, *, turns: TurnSource | None = None, outputs: OutputSource | None = None,
                 **options: Any) -> None:
        seam(turns, "turns"), seam(outputs, "outputs")
        self.document = document
        self.turns = turns
        self.outputs = outputs
        self.clock = options.get("clock", utc_now)
        self.solution = document.solution
        self._plan_turn()
        path = document.path
        base = options.pop("base", None) or (path.parent if path is not None else None)
        chain = (*options.pop("chain", ()), *((path.resolve(),) if path is not None else ()))
        self.execution = Execution(document.context, self.solution, turns=turns, outputs=outputs, base=base,
                                   chain=chain, **options)
        self.ticks: list[Tick] = []
        self.output: Any = MISSING  # the final output, once the loop has finished
        # Nothing to run: a fresh request, or a document saved while it waited for its next turn (its plan's
        # calls all have their record, and its plan holds no output to conclude with).
        record = self.execution.record
        plan_ran = all(record.of(index) is not None for index in range(len(self.execution.plans)))
        waiting = self.solution is None and plan_ran and turn_output(self._turn()) is None
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
        if self.outputs is not None:
            report = await self._answer_outputs(report)
        await self.execution.drain()
        if report.lazy:
            self._become(LoopStatus.LAZY)
        elif report.stopped_at is not None or report.failed_at is not None:
            self._become(LoopStatus.STOPPED)
        else:
            self._conclude(report)
        return self.status

    async def _answer_outputs(self, report: TickReport) -> TickReport:
        """Latent calls left waiting for their output are answered (`outputs`), one at a time, and the tick
        goes on with what each answer unblocks. A delegated call's session asks for its own turns."""
        assert self.outputs is not None
        ran, errors = list(report.ran), list(report.errors)
        answered: set[int] = set()  # asked once a tick: an answer that leaves a call waiting is not asked again
        while report.stopped_at is None and report.failed_at is None and not report.lazy:
            waiting = [i for i in report.waiting_for_output if i not in self.execution.delegates and i not in answered]
            if not waiting:
                break
            answered.add(waiting[0])
            await self.outputs(self.execution, waiting[0])
            ran.append(waiting[0])
            report = await self.execution.run()
            ran.extend(report.ran)
            errors.extend(report.errors)
        return replace(report, ran=tuple(dict.fromkeys(ran)), errors=tuple(errors))  # a group's answered calls run too

    def approve_plan(self) -> None:
        """Let a lazy plan run at the next `tick()`."""
        self.execution.approve_plan()
        if self.status is LoopStatus.LAZY:
            self._become(LoopStatus.READY)

    def _turn(self) -> Any:
        """The turn this tick concludes: the one taken, else the document's own (a bare context's last plan
        message, its output with it: the final output `run` or `ask` wrote there ends the loop again)."""
        return self.solution if self.solution is not None else current_turn(self.document)

    def _conclude(self, report: TickReport) -> None:
        ending = conclude(self.document, self._turn(), self.clock())
        if ending.finished:
            self.output = ending.output
        elif ending.error is not None:  # not silently accepted: the next turn sees why (010's self-correction)
            self.document.context.append(ending.error)
        tick = Tick(len(self.ticks) + 1, report, ending.output, ending.problem)
        self.ticks.append(tick)
        if self.output is MISSING:  # the turn is spent: its calls are the plan in the context
            self.solution = None
            if self.document.shape is Shape.REQUEST:
                self.document.solution = None
        self.tick_finished.emit(tick)
        self._become(LoopStatus.FINISHED if self.output is not MISSING else LoopStatus.WAITING_FOR_TURN)

    def _plan_turn(self) -> None:
        """The document's own turn's calls become a plan message before they run (`turn_change`)."""
        if self.solution is None:
            return
        problems = solution_refusals(self.document.context, self.solution)
        if problems:  # nothing to take (said as a refused turn, never a TypeError midway), or advice `validate` refuses
            raise TurnRefused(problems)
        change = turn_change(self.document, self.solution)
        if change.meta is not None:
            self.document.context.append(change.meta)
        if change.plan is not None:
            self.document.context.append(change.plan)

    def check_turn(self, solution: Any, request: Request | None = None) -> list[Diagnostic]:
        """`turn_problems` of `solution` as this loop's run would judge its calls: its activities, its tools, and
        its folder for delegate files (a delegate session's is its request file's). `request`: composed already."""
        execution = self.execution
        return turn_problems(self.document, solution, activities=execution.activities, tools=execution.code_tools,
                             request=request, base=execution.base, chain=execution.chain)

    def take_turn(self, solution: Any, audit: dict[str, Any] | None = None) -> None:
        """The next turn (typed by hand, or from the model provider): its calls run at the next `tick()`.

        A turn that breaks the request's composed schema is refused (`TurnRefused`), and nothing changes.
        `audit`: the model's exchange in short, kept as `_model` (see `Turn`).
        """
        if self.status is not LoopStatus.WAITING_FOR_TURN:
            raise RuntimeError(f"the loop is {self.status}, not waiting for a turn")
        errors = [problem for problem in self.check_turn(solution) if problem.severity == "error"]
        if errors:
            raise TurnRefused(errors)
        solution = copied(solution)  # the document's own: the caller may change theirs after (its audit is copied
        # where `turn_change` keeps it)
        change = turn_change(self.document, solution, audit)
        self.solution = solution
        if change.solution is not MISSING:
            self.document.solution = change.solution
        if change.meta is not None:
            self.document.context.append(change.meta)
        if change.plan is not None:
            self.document.context.append(change.plan)
        self.execution.solution = solution
        self.execution.reset()
        self._become(LoopStatus.READY)

    async def run(self, max_ticks: int = 25) -> LoopStatus:
        """Tick, and ask `turns` for each next turn, until finished, stopped, lazy, out of turns or ticks.

        Run again after a breakpoint to continue the tick; after `approve_plan()` to run a lazy plan.
        """
        tick_limit(max_ticks)
        while True:
            if self.status is LoopStatus.WAITING_FOR_TURN:
                if self.turns is None or len(self.ticks) >= max_ticks:
                    return self.status
                solution = self.turns(self.document)
                if inspect.isawaitable(solution):
                    solution = await solution
                if solution is None:
                    return self.status
                if isinstance(solution, Turn):
                    self.take_turn(solution.solution, solution.audit)
                else:
                    self.take_turn(solution)
            if self.status is LoopStatus.FINISHED:
                return self.status
            if await self.tick() in (LoopStatus.STOPPED, LoopStatus.LAZY):
                return self.status
