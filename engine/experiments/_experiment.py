"""An experiment: the document's agent loop run to its end once per case of a dataset (docs/experiments.md).

Each case gets a fresh copy of the document with its input message's value replaced by the case's input, and
runs through `run_agent`, the loop the command line runs. One cassette serves the whole dataset, so an
unchanged re-run asks the model nothing and an edit re-asks exactly the questions whose request changed.
Against a baseline (an earlier experiment's results) each result says where the case first diverged, and
`replay_activities` gives an unchanged call its recorded result instead of running the activity again.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..calls._record import canonical
from ..document._context import Context
from ..document._document import Document, parse_document
from ..document._files import write_atomically
from ..document._validate import schema_problems_of
from ..document._view import Messages
from ..models._agent import AgentRun, Ending, run_agent
from ..models._ask import Asker
from ..models._prompt import Prompt
from ..models._provider import ModelError
from ..protocol._errors import DocumentError
from ..protocol._messages import MISSING, body_of, kind_of, payload_key
from ..resolve._resolution import same_json
from ..run._running import Replay, Replayed, Withheld
from ..run._turns import as_turn, conclude, plan_turn, turn_problem
from ._dataset import Case
from ._expect import failures
from ._steps import Baseline, Recorded, Steps, diverged, read_steps

CHARS_PER_TOKEN = 4  # a dry run's estimate of a question never asked: its prompt's JSON text over this


def input_position(document: Document) -> int:
    """The index of the input message a case replaces: the one input message the user wrote (006)."""
    found = [index for index, message in enumerate(map(body_of, document.context.messages))
             if kind_of(message) == "input" and "_call" not in message and "_outputPath" not in message]
    name = str(document.path or "<document>")
    if not found:
        raise DocumentError(name, "the document has no input message for the cases' inputs to replace")
    if len(found) > 1:
        where = ", ".join(str(index) for index in found)
        raise DocumentError(name, f"the document has {len(found)} input messages (at {where}): an experiment "
                                  "replaces one; keep one", message_index=found[1])
    return found[0]


def run_start(context: Messages) -> int | None:
    """Where the run a document holds starts, None when it holds none: its first message that a run wrote, a
    call's record (an output, an error or a run record: each carries `_run`, format.md §9) or a model's turn (a plan
    message, or the meta message of the identity it gave back, carrying `_model`: format.md "Ticks and turns").
    A model's plan says whether the meta just before it is its turn's (`_turnMeta`); in a document written before
    that mark, with no marked meta either (no meta message carries `_model`), a meta message just before the first
    model plan is read as that turn's."""
    for index in range(len(context)):
        message = body_of(context[index])
        if "_run" in message:
            return index
        if "_model" in message and kind_of(message) == "meta":
            return index
        if message.get("type") == "plan" and "_model" in message:
            own = message.get("_turnMeta", not _marks_metas(context))  # unmarked: read as before the mark
            return index - 1 if own and index and kind_of(body_of(context[index - 1])) == "meta" else index
    return None


def _marks_metas(context: Messages) -> bool:
    """Whether a model's turn marked a meta message of the document as its own (`_model`)."""
    return any(kind_of(message) == "meta" and "_model" in message
               for message in (body_of(context[index]) for index in range(len(context))))


def _given_by_model(solution: Any) -> bool:
    return isinstance(solution, dict) and "_model" in solution


def ends_at_once(document: Document) -> Any:
    """The final output every case of an experiment over `document` ends with at once, nothing run and the model
    not asked; None when the cases run. A case runs from the request (`request_of`): it ends at once when that
    request's turn has a final output that meets the request schema and no calls. A turn's calls run before its
    output concludes the tick, and none has run in the request: a call's record is its run's, left out with it."""
    start = run_start(document.context)
    solution = None if _given_by_model(document.solution) else document.solution
    turn = solution if solution is not None \
        else plan_turn(document.context, len(document.context) if start is None else start)
    if turn_problem(turn) is not None or as_turn(turn)["calls"]:
        return None
    ending = conclude(document, turn, "")
    return ending.output if ending.finished else None


def request_of(document: Document) -> Document:
    """The request a document's run started from, which each case of an experiment runs with its own input
    (docs/experiments.md): the messages before the run's first (`run_start`), and the solution unless a model gave
    it (it carries `_model`). The document itself when it holds no run."""
    start = run_start(document.context)
    solution = document.solution
    given = _given_by_model(solution)
    if start is None and not given:
        return document
    messages = document.context.messages if start is None else document.context.messages[:start]
    return Document(Context(messages), document.shape, document.schema, None if given else solution,
                    document.path, document.envelope)


def with_input(message: dict[str, Any], value: Any) -> dict[str, Any]:
    """The input message carrying `value`, in the same form (`input`/`data` key; loose keys become `data`; a
    custom content type's content object carries it)."""
    body = body_of(message)
    if body is not message:
        return {**message, "content": with_input(body, value)}
    key = payload_key(message)
    if key is not None:
        return {**message, key: value}
    kept = {k: v for k, v in message.items() if k in ("type", "schema") or k.startswith("_")}
    return {**kept, "data": value}


@dataclass
class Settings:
    """How every case of an experiment runs. `asker` makes the model's asker for one case (None: no model);
    `options` are `run_agent`'s (activities, tools, clock, timeout, turns, max_ticks, approve_plan)."""

    document: bytes
    path: Path
    asker: Callable[[], Asker] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    runs: Path | None = None  # where each case's final document is written
    baseline: dict[str, Baseline] | None = None  # each case's run in the baseline experiment, by case name
    replay_activities: bool = False
    dry_run: bool = False
    dataset: Path | None = None  # the cases' file: each result names it, so a later experiment knows what it ran over

    def request(self) -> Document:
        """A fresh copy of the request every case runs from (`request_of` the document): a caller checks what would
        refuse every case (its solution) on it once, before any runs."""
        jsonl = self.path.suffix.lower() == ".jsonl"  # as `load_document` reads the file
        return request_of(parse_document(self.document, str(self.path), jsonl=jsonl, path=self.path))


class _Estimator(Asker):
    """A dry run's asker: a question the cassette holds is replayed; one it does not is counted, with its
    estimated tokens, and ends the case there (what the model would answer is unknown)."""

    def __init__(self, asker: Asker, stopped: list[str]) -> None:
        super().__init__(asker.provider, asker.cassette, "replay")
        self.stopped = stopped  # activities withheld: what follows them is unknown, never counted
        self.would_ask = 0
        self.estimated = 0

    async def ask(self, prompt: Prompt, on_delta: Any = None) -> Any:
        if self.stopped:
            raise ModelError(self.endpoint_label, prompt.subject, "replay", "a dry run stops at an activity")
        if self.cassette.get(self.key(prompt)) is None:
            self.would_ask += 1
            self.estimated += math.ceil(len(canonical(prompt.as_json())) / CHARS_PER_TOKEN)
            raise ModelError(self.endpoint_label, prompt.subject, "replay", "a dry run asks nothing")
        return await super().ask(prompt, on_delta)


def _replayer(recorded: Recorded, dry_run: bool, stopped: list[str]) -> Replay:
    """Give a call its recorded result; in a dry run, withhold every activity nothing is recorded for."""

    def replay(tool: str, inputs: str) -> Replayed | Withheld | None:
        found, value = recorded.take(tool, inputs)
        if found:
            return Replayed(value)
        if dry_run:
            stopped.append(tool)
            return Withheld(f"a dry run does not run activity {tool!r}")
        return None

    return replay


def _status(run: AgentRun) -> str:
    if run.ending is Ending.FINISHED:
        return "finished"
    return "waiting" if run.ending is Ending.WAITING else "failed"


async def run_case(case: Case, settings: Settings) -> dict[str, Any]:
    """Run one case to its end and say how it went, as its result line (docs/experiments.md)."""
    started = time.perf_counter()
    result: dict[str, Any] = {"id": case.id, "line": case.line}
    # An earlier run's messages record its own input's execution (006): each case runs from the request.
    document = settings.request()
    position = input_position(document)
    document.context.replace(position, with_input(document.context.messages[position], case.input))
    broken = schema_problems_of(document.context, "input")
    if broken:  # the loop would run on an input the agent never promised to take
        return _not_run(case, [f"the input (line {case.line}) breaks the document's input schema: {problem}"
                               for problem in broken])
    options = dict(settings.options)
    baseline = settings.baseline.get(case.name) if settings.baseline is not None else None
    stopped: list[str] = []
    recorded = Recorded(baseline.steps) if baseline is not None and (settings.replay_activities or settings.dry_run) \
        else None
    if recorded is not None:
        options["replay"] = _replayer(recorded, settings.dry_run, stopped)
    elif settings.dry_run:  # nothing recorded to give: a dry run runs no activity
        options["replay"] = _replayer(Recorded(Steps(0, ())), True, stopped)
    asker = settings.asker() if settings.asker is not None else None
    if settings.dry_run and asker is not None:
        asker = _Estimator(asker, stopped)
    before = len(document.context)
    run = await run_agent(document, asker, **options)
    steps = replace(read_steps(document.context.messages[before:]), turns=run.ticks)
    errors = [str(problem) for problem in (run.failure, run.refused) if problem is not None]
    errors += [f"call {index}: the model's answer was refused" for index in run.refused_outputs]
    output = None if run.output is MISSING else run.output
    status = _status(run)
    if isinstance(asker, _Estimator):
        errors = []
        status = "would ask" if asker.would_ask else ("would run" if stopped else status)
    missed = failures(case, status == "finished", run.output, steps)
    result.update({
        "status": status, "output": output,
        "expect": None if case.expect is MISSING else case.expect,
        "passed": None if missed is None else not missed,
        "ticks": run.ticks, "calls": run.calls, "tools": list(steps.tools()),
        "asked": run.tally.asked, "replayed": run.tally.replayed, "tokens": run.tally.tokens,
        "activities_replayed": recorded.replayed if recorded is not None else 0,
    })
    if missed:
        result["failures"] = missed
    if isinstance(asker, _Estimator):
        result.update({"would_ask": asker.would_ask, "estimated_tokens": asker.estimated,
                       "stopped_at_activity": stopped[0] if stopped else None})
    if baseline is not None:
        result["diverged"] = diverged(baseline.steps, steps, same_json(baseline.output, output))
    result["start"] = before
    result["errors"] = errors
    result["seconds"] = round(time.perf_counter() - started, 3)
    if settings.runs is not None and not settings.dry_run:
        target = settings.runs / f"{_file_name(case.name)}.json"
        write_atomically(target, document.dumps().encode("utf-8"))
        result["run"] = str(target)
    return result


def _not_run(case: Case, errors: list[str]) -> dict[str, Any]:
    """The result line of a case that failed without running."""
    expect = None if case.expect is MISSING else case.expect
    return {"id": case.id, "line": case.line, "status": "failed", "output": None, "expect": expect,
            "passed": None if expect is None and case.trajectory is None else False, "errors": errors}


def _file_name(name: str) -> str:
    """The run document's name for case `name`: the name itself when it is one a file can have; else its safe
    characters and a digest of the name, so that two cases never share a run (`a/b` and `a_b`, `..` and `...`)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".")
    if safe == name:
        return name
    return f"{safe or 'case'}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:10]}"


Progress = Callable[[int, dict[str, Any]], None]  # (cases done, the result just made)


class Experiment:
    """Every case of a dataset run under one `Settings`, at most `concurrency` at once. `results` holds each
    case's result line in the cases' order as it comes (None until then), so a cancelled experiment (Ctrl+C,
    a Cancel button) still has every result it made."""

    def __init__(self, cases: list[Case], settings: Settings, concurrency: int = 4,
                 progress: Progress | None = None) -> None:
        self.cases = cases
        self.settings = settings
        self.concurrency = max(1, concurrency)
        self.progress = progress
        self.results: list[dict[str, Any] | None] = [None] * len(cases)
        self.done = 0

    async def _one(self, gate: asyncio.Semaphore, index: int, case: Case) -> None:
        async with gate:
            try:
                result = await run_case(case, self.settings)
            except DocumentError:
                raise
            except Exception as error:  # one case's crash is that case's failure, not the experiment's end
                result = _not_run(case, [f"{type(error).__name__}: {error}"])
        if self.settings.dataset is not None:  # (beside the case's id and line: what it is a case of)
            result = {"id": result["id"], "line": result["line"], "dataset": str(self.settings.dataset.resolve()),
                      **result}
        self.results[index] = result
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, result)

    async def run(self) -> list[dict[str, Any] | None]:
        """Run every case; cancelled, the cases still running are cancelled too and the error propagates."""
        if self.settings.runs is not None and not self.settings.dry_run:
            self.settings.runs.mkdir(parents=True, exist_ok=True)
        gate = asyncio.Semaphore(self.concurrency)
        tasks = [asyncio.ensure_future(self._one(gate, index, case)) for index, case in enumerate(self.cases)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return self.results
