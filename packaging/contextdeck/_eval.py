"""`contextdeck eval`: run the document's agent loop once per input of a dataset (docs/experiments.md)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from contextdeck._cli import open_cassette, refuse_solution
from contextdeck._out import check_writable, writing
from contextdeck.engine import (
    Asker,
    Case,
    DocumentError,
    Endpoint,
    Experiment,
    Provider,
    Settings,
    baselines,
    compared,
    ends_at_once,
    fixed_clock,
    load_cases,
    load_turn,
    over_cases,
    read_results,
    reasons,
    summarise,
    turn_problem,
    utc_now,
    write_results,
)

EXIT_PASSED, EXIT_MISSED, EXIT_INTERRUPTED = 0, 1, 130


def configure(commands: Any, code_options: Any, model_options: Any) -> None:
    # `run`'s checks: a bad value is a usage error
    from contextdeck._cli import _moment, _non_negative, _positive, _seconds

    command = commands.add_parser("eval", help="run the agent once per input of a dataset and check each result")
    command.add_argument("doc")
    command.add_argument("--inputs", metavar="DATA.jsonl", required=True,
                         help='one case a line: {"id": ..., "input": {...}, "expect": ...} or a bare input object')
    command.add_argument("--out", metavar="RESULTS.jsonl", default=None,
                         help="where the result lines go (one a case, in the dataset's order)")
    command.add_argument("--runs", metavar="DIR", default=None, help="write each case's final document here")
    command.add_argument("--concurrency", type=_positive, default=4, metavar="N", help="cases at once (default 4)")
    command.add_argument("--baseline", metavar="RESULTS.jsonl", default=None,
                         help="an earlier experiment to compare with (default: --out when it exists)")
    command.add_argument("--replay-activities", action="store_true",
                         help="give a call the baseline's result when it is the same call with the same inputs")
    command.add_argument("--dry-run", action="store_true",
                         help="run nothing: say how many model questions would be asked and how many replay")
    command.add_argument("--turn", metavar="SOLUTION.json", action="append", default=[],
                         help="a turn typed by hand, given to every case (repeatable, in order)")
    command.add_argument("--now", type=_moment, default=None, help="the _date of every message written (ISO 8601)")
    command.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                         help="how long an activity may run (default 60)")
    command.add_argument("--max-ticks", type=_non_negative, default=25, help="stop a case after N ticks (default 25)")
    command.add_argument("--approve-plan", action="store_true", help="run a lazy plan instead of waiting")
    code_options(command)
    model_options(command, required=False)
    command.set_defaults(run=run)


def _settings(args: argparse.Namespace, cases: list[Case]) -> Settings:
    from contextdeck._cli import _activities, _tools

    path = Path(args.doc)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise DocumentError(str(path), error.strerror or str(error)) from None
    turns = []
    for file in args.turn:
        turn = load_turn(file)
        problem = turn_problem(turn)
        if problem is not None:
            raise DocumentError(file, problem)
        turns.append(turn)
    options: dict[str, Any] = {
        "activities": _activities(args.activities), "tools": _tools(args.tools), "timeout": args.timeout,
        "clock": fixed_clock(args.now) if args.now else utc_now, "max_ticks": args.max_ticks,
        "approve_plan": args.approve_plan,
    }
    if turns:
        options["turns"] = _given(turns)
    asker = None
    if args.llm is not None:
        endpoint = Endpoint(args.llm, args.model, api_key_env=args.api_key_env, timeout=args.llm_timeout,
                            max_retries=args.llm_retries, structured=args.structured)
        cassette = open_cassette(args, path)  # one for the whole dataset
        provider = Provider(endpoint)  # one client for every case (each has its own tally); closed at the end
        options["close_provider"] = False
        mode = args.mode

        def asker() -> Asker:
            return Asker(provider, cassette, mode)

    baseline_file = args.baseline or (args.out if args.out and Path(args.out).exists() else None)
    baseline = None
    if baseline_file is not None:
        # A baseline over another dataset is compared only where the ids agree (line-3 of another file is
        # another case): said, as the window says it.
        comparison = compared(baseline_file, read_results(baseline_file), over_cases(args.inputs, cases))
        if comparison.differs is not None:
            print(f"contextdeck: {comparison.differs}", file=sys.stderr)
        baseline = baselines(comparison.results, Path.cwd())
    elif args.replay_activities:
        raise DocumentError("--replay-activities", "needs a baseline: --baseline RESULTS.jsonl (made with --runs)")
    # Absolute: a result names its run for a later `--baseline` and for the window, from wherever they run.
    runs = Path(args.runs).absolute() if args.runs and not args.dry_run else None
    return Settings(raw, path, asker, options, runs,
                    baseline, args.replay_activities, args.dry_run, Path(args.inputs))


def _given(turns: list[Any]) -> Any:
    """Each case gets the same turns typed by hand, in order, then asks the model (when there is one)."""
    from contextdeck.engine import Document

    taken: dict[int, int] = {}

    def turn(document: Document) -> Any:
        count = taken.get(id(document), 0)
        if count >= len(turns):
            return None
        taken[id(document)] = count + 1
        return turns[count]

    return turn


def _bar(total: int) -> Any:
    """A progress bar on stderr (tqdm: small, no dependencies of its own, quiet when stderr is no terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, file=sys.stderr, unit="input", disable=None, dynamic_ncols=True, leave=False)


def run(args: argparse.Namespace) -> int:
    if args.out is None and not args.dry_run:
        args.usage.error("--out RESULTS.jsonl is needed (or --dry-run)")
    if not args.dry_run:
        check_writable(args.out)  # said before any case runs (the model's questions cost)
    cases = load_cases(args.inputs)
    settings = _settings(args, cases)
    request = settings.request()
    refuse_solution(args.doc, request)  # it would refuse every case: said once, nothing run
    bar = _bar(len(cases))
    experiment = Experiment(cases, settings, args.concurrency, lambda done, result: bar.update(1))

    async def main() -> bool:
        try:
            await experiment.run()
        except asyncio.CancelledError:  # Ctrl+C: keep what finished
            return False
        finally:
            if settings.asker is not None:
                await settings.asker().provider.close()
        return True

    try:
        whole = asyncio.run(main())
    except KeyboardInterrupt:
        whole = False
    bar.close()
    results = [result for result in experiment.results if result is not None]
    if args.dry_run:
        return _dry_report(results)
    with writing(args.out):  # unwritable since the check (a full disk)
        written = write_results(args.out, experiment.results)
    summary = summarise(results)
    rate = "" if summary.pass_rate is None else f", pass rate {summary.pass_rate:.0%}"
    # "failed" is a status of the result lines (the case could not finish); a missed expectation is not one.
    print(f"{written} of {len(cases)} input(s) in {args.out}: {summary.finished} finished, {summary.waiting} "
          f"waiting, {summary.failed_runs} failed; expectations: {summary.passed} met, {summary.failed} missed{rate}; "
          f"the model: {summary.asked} asked, {summary.replayed} replayed, {summary.tokens} tokens", file=sys.stderr)
    for result in results:
        if result.get("status") == "failed" or result.get("passed") is False:
            print(f"  {_label(result)}: {'; '.join(reasons(result))}", file=sys.stderr)
    if args.llm is not None and not args.turn and results and ends_at_once(request) is not None:
        print("contextdeck: every input ended at once with the document's own final output (it already ends with "
              "one no run made): nothing ran and the model was not asked; remove that output to run the inputs",
              file=sys.stderr)
    if not whole:
        print("contextdeck: interrupted: the results so far are written", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_MISSED if summary.failed or summary.failed_runs else EXIT_PASSED


def _label(result: dict[str, Any]) -> str:
    return f"line {result.get('line')}" if result.get("id") is None else f"{result['id']!s}"


def _dry_report(results: list[dict[str, Any]]) -> int:
    ask = sum(result.get("would_ask", 0) for result in results)
    estimated = sum(result.get("estimated_tokens", 0) for result in results)
    replayed = sum(result.get("replayed", 0) for result in results)
    recorded = sum(result.get("tokens", 0) for result in results)
    touched = sum(1 for result in results if result.get("would_ask"))
    for result in results:
        line = f"{_label(result)}: {result.get('replayed', 0)} replayed"
        if result.get("would_ask"):
            line += f", asks from turn {result.get('ticks', 0) + 1} on (~{result.get('estimated_tokens')} tokens)"
        elif result.get("stopped_at_activity"):
            line += f", then runs activity {result['stopped_at_activity']}"
        print(line)
    print(f"dry run: {touched} of {len(results)} input(s) touched: at least {ask} question(s) would be asked "
          f"(~{estimated} prompt tokens), {replayed} replay ({recorded} tokens recorded)")
    return EXIT_PASSED
