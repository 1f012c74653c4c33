"""The agent loop driven by a model (010): the model gives each next turn and answers the latent calls.

`run_agent(document, asker)` is the one way to run it, for the command line (`contextdeck run --llm`) and
anything built on it (an evaluation over many documents): the document is changed in place into the final
document, and the returned `AgentRun` says how the loop ended and what it cost.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..calls._activities import Activities, as_activities
from ..calls._registry import Registry
from ..calls._status import Status
from ..document._document import Document
from ..protocol._messages import MISSING
from ..run._execution import Execution
from ..run._loop import Loop, LoopStatus, OutputSource, Tick, Turn, TurnRefused, TurnSource, seam, tick_limit
from ._ask import Asker, Tally, answer_call, ask_request
from ._provider import ModelError

MODEL_OUTPUT_ERROR = "modelOutput"  # the error type of a latent call whose answer did not validate


class Ending(StrEnum):
    """How a run of the loop ended, in the words of the command line's exit codes."""

    FINISHED = "finished"  # a final output that meets the request schema
    WAITING = "waiting"  # no final output yet: out of turns or ticks, a lazy plan, a breakpoint
    REFUSED = "refused"  # the model's answer broke its schema (a turn; or a latent call's, left unanswered)
    FAILED = "failed"  # the endpoint failed: nothing more could be asked


@dataclass(frozen=True)
class AgentRun:
    """What `run_agent` did: the loop's status and output, ticks and calls run, and the model's tally."""

    status: LoopStatus
    output: Any  # the final output; MISSING unless finished
    ticks: int
    calls: int
    tally: Tally  # questions sent to the endpoint, answers replayed, tokens
    refused_outputs: tuple[int, ...] = ()  # latent calls whose answer did not validate (each is an error message)
    failure: ModelError | None = None  # the endpoint failed
    refused: ModelError | TurnRefused | None = None  # the next turn was refused; nothing of it was taken
    loop: Loop | None = field(default=None, repr=False, compare=False)  # the loop itself, to read on

    @property
    def ending(self) -> Ending:
        if self.status is LoopStatus.FINISHED:
            return Ending.FINISHED
        if self.failure is not None:
            return Ending.FAILED
        if self.refused is not None or self.refused_outputs:
            return Ending.REFUSED
        return Ending.WAITING


def model_turns(asker: Asker, *, activities: Activities | None = None, tools: Registry | None = None) -> TurnSource:
    """A turn source that asks the model for the whole request as composed (`ask_request`): its validated
    answer is the turn, with the exchange in short as its audit. A refused answer raises `ModelError`."""

    async def turn(document: Document) -> Turn:
        answer = await ask_request(document, asker, activities=activities, tools=tools)
        return Turn(answer.value, answer.summary)

    return turn


def model_outputs(asker: Asker, refused: Callable[[int], None] | None = None) -> OutputSource:
    """An output source that asks the model for a latent call's result (`answer_call`); `refused(index)` is
    told of each answer that did not validate (the call then fails with a `modelOutput` error message)."""

    async def answer(execution: Execution, index: int) -> None:
        state = await answer_call(execution, index, asker)
        if state.status is Status.FAILED and (state.error or {}).get("type") == MODEL_OUTPUT_ERROR and refused:
            refused(index)

    return answer


async def _awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def run_agent(
    document: Document,
    asker: Asker | None = None,
    *,
    turns: TurnSource | None = None,
    model_gives_turns: bool = True,
    max_ticks: int = 25,
    approve_plan: bool = False,
    on_tick: Callable[[Loop, Tick], None] | None = None,
    close_provider: bool = True,
    **options: Any,
) -> AgentRun:
    """Run the document's loop to its end: tick after tick, each next turn from `turns` (typed by hand) and
    then, with `model_gives_turns`, from the model; the model answers latent calls that wait for an output.

    Stops at a valid final output, when no turn comes, after `max_ticks`, or when the endpoint fails or the
    model's turn is refused (what ran is kept in the document either way). `options` are `Loop`'s (and so
    `Execution`'s): activities, tools, clock, timeout, ... The provider's connection is closed at the end,
    unless `close_provider` is false (one provider shared by many runs, an experiment's, is closed once).
    """
    refused_outputs: list[int] = []
    tick_limit(max_ticks), seam(turns, "turns")  # (refused before the loop makes the document's turn a plan message)
    if "activities" in options:  # the model's turns are judged with the activities the run has
        options["activities"] = as_activities(options["activities"])
    source = turns
    outputs = None
    if asker is not None:
        outputs = model_outputs(asker, refused_outputs.append)
        if model_gives_turns:
            source = _first_then(turns, model_turns(asker, activities=options.get("activities"),
                                                    tools=options.get("tools")))
    before = asker.tally if asker is not None else Tally()
    try:
        loop = Loop(document, turns=source, outputs=outputs, **options)
    except TurnRefused as error:  # the document's own turn (its advice, 017): refused before anything runs
        if asker is not None and close_provider:
            await asker.provider.close()
        return AgentRun(LoopStatus.READY, MISSING, 0, 0, Tally(), refused=error)
    if on_tick is not None:
        loop.tick_finished.connect(lambda tick: on_tick(loop, tick))
    failure: ModelError | None = None
    refused: ModelError | TurnRefused | None = None
    try:
        status = await loop.run(max_ticks)
        while status is LoopStatus.LAZY and approve_plan:
            loop.approve_plan()
            status = await loop.run(max_ticks)
    except ModelError as error:
        if error.kind == "invalid":
            refused = error
        else:
            failure = error
    except TurnRefused as error:
        refused = error
    finally:
        await loop.execution.drain()
        if asker is not None and close_provider:
            await asker.provider.close()
    tally = asker.tally - before if asker is not None else Tally()
    output = loop.output if loop.status is LoopStatus.FINISHED else MISSING
    return AgentRun(loop.status, output, len(loop.ticks), sum(len(tick.report.ran) for tick in loop.ticks), tally,
                    tuple(refused_outputs), failure, refused, loop)


def _first_then(first: TurnSource | None, second: TurnSource) -> TurnSource:
    """Turns from `first` while it gives them, then from `second`: once `first` has none for a document,
    it is not asked again for that document."""
    if first is None:
        return second
    spent: list[Document] = []

    async def turn(document: Document) -> Any:
        if not any(seen is document for seen in spent):
            given = await _awaited(first(document))
            if given is not None:
                return given
            spent.append(document)
        return await _awaited(second(document))

    return turn
