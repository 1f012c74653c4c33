"""The `contextdeck` command. Headless subcommands import only the engine, never Qt."""

from __future__ import annotations

import sys

try:  # Ctrl-C while the command loads ends it as it would later (exit 130), not in a traceback
    import argparse
    import asyncio
    import contextlib
    import gc
    import math
    import os
    import signal
    import unicodedata
    from collections.abc import Callable, Coroutine, Iterator, Sequence
    from typing import Any, TypeVar

    from contextdeck import __version__
    from contextdeck._out import (
        CannotWrite,
        SwappedHandlers,
        check_appendable,
        check_writable,
        holding_interrupts,
        write_out,
    )
    from contextdeck._traces_cli import add_commands as add_trace_commands
    from contextdeck._traces_cli import refuse_past_the_end
    from contextdeck.engine import (
        STRATEGIES,
        Activities,
        ActivityLoadError,
        AgentRun,
        Asker,
        Cassette,
        Document,
        DocumentError,
        Ending,
        Endpoint,
        Execution,
        ExpressionError,
        Loop,
        LoopStatus,
        ModelError,
        Provider,
        Status,
        Tick,
        ToolLoadError,
        TurnRefused,
        analyse_call,
        apply_solution,
        ask_request,
        base_url_problem,
        batch_collector,
        blocked_because,
        cassette_path,
        compose_request,
        conflicts_since,
        describe_exception,
        fixed_clock,
        json_building,
        json_dumps,
        load_activities,
        load_document,
        load_tools,
        load_turn,
        never_found,
        os_reason,
        parse_expression,
        run_agent,
        run_with_model,
        schema_problems_of,
        solution_refusals,
        telling_large_schemas,
        turn_problem,
        turn_problems,
        utc_now,
        validate,
    )
except KeyboardInterrupt:
    sys.stderr.write("contextdeck: interrupted\n")
    raise SystemExit(130) from None

T = TypeVar("T")
# One table of exit codes for every command (README, "Command line").
EXIT_OK, EXIT_DOCUMENT, EXIT_EXPRESSION, EXIT_NOT_FOUND, EXIT_MODEL = 0, 1, 2, 3, 4
# EXIT_USAGE (2, as argparse exits for a bad option; in _traces_cli) is shared with EXIT_EXPRESSION
EXIT_REFUSED = 5  # the model's answer was refused (it broke the schema it was asked for)
EXIT_WAITING = 6  # the model drove the loop and it stopped without a final output
EXIT_INTERNAL = 70  # an error of ContextDeck's own (sysexits' EX_SOFTWARE); never a traceback
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports it (SIGTERM: 143, see `_stopping`)


def _load(path: str) -> Document:
    return load_document(path)


@contextlib.contextmanager
def _held(document: Document) -> Iterator[Document]:
    """The loaded document set aside from the cyclic collector while one pass reads all of it (`validate`,
    `render`), and given back after: it lives until the pass ends and holds no garbage, yet each collection of
    the older generations would walk all of it again (the load made it with the collector paused, so the
    first collections after it walk every one of its objects). `gc.freeze` is O(1); nothing is frozen if
    something else froze the heap already (its owner collects it). The collector is paused while the pass
    runs, as while the document was loaded (`json_building`): a pass over 100,000 calls makes millions of
    objects that live until it ends, and the collections of them were a tenth of `validate`."""
    with json_building():
        if gc.get_freeze_count():
            yield document
            return
        gc.freeze()
        try:
            yield document
        finally:
            gc.unfreeze()


def _resolve(args: argparse.Namespace) -> int:
    try:
        expression = parse_expression(args.expr)
    except ExpressionError as error:
        column = _columns(error.expression[: error.position], sys.stderr)
        print(f"contextdeck: malformed expression: {error.with_caret_at(column)}", file=sys.stderr)
        return EXIT_EXPRESSION
    document = _load(args.doc)
    refused = refuse_past_the_end(args.doc, args.at, len(document.context))
    if refused is not None:
        return refused
    result = document.context.resolve(expression, instance=args.instance, at=args.at)
    for diagnostic in result.diagnostics:
        print(f"contextdeck: warning: {diagnostic}", file=sys.stderr)
    if not result.found:
        print(f"contextdeck: not found: {', '.join(result.missing)}", file=sys.stderr)
        return EXIT_NOT_FOUND
    print(json_dumps(result.value))
    return EXIT_OK


def _render(args: argparse.Namespace) -> int:
    with _held(_load(args.doc)) as document:
        refused = refuse_past_the_end(args.doc, args.at, len(document.context))
        if refused is not None:
            return refused
        request = compose_request(document.context, document.schema, at=args.at,
                                  activities=_activities(args.activities), tools=_tools(args.tools))
    for problem in request.problems:
        print(f"contextdeck: warning: {problem}", file=sys.stderr)
    print(json_dumps(request.to_json()) if args.json else request.text())
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    with _held(_load(args.doc)) as document:
        activities = _activities(args.activities) if args.activities else None
        problems = validate(document.context, document.solution, activities=activities, tools=_tools(args.tools),
                            schema=document.schema, path=document.path)
    errors = [problem for problem in problems if problem.severity == "error"]
    for problem in problems:
        print(f"{args.doc}: {'warning: ' * (problem.severity == 'warning')}{problem}")
    warnings = len(problems) - len(errors)
    noted = f", {warnings} warning(s)" if warnings else ""
    if errors:  # warnings alone (a call to a tool nothing defines runs latent, SPEC 6.7) do not fail
        print(f"{len(errors)} problem(s){noted}", file=sys.stderr)
        return EXIT_DOCUMENT
    print(f"{args.doc}: ok ({len(document.context)} messages{noted})")
    return EXIT_OK


class _CannotLoad(Exception):
    """Activities or tools the user named that cannot be loaded: the command stops with exit 1."""


def _activities(files: list[str]) -> Activities:
    activities = Activities()
    for file in files:
        try:
            activities.update(load_activities(file))
        except ActivityLoadError as error:
            raise _CannotLoad(f"cannot load activities from {error}") from None
    return activities


def _tools(places: list[str]) -> dict[str, Any] | None:
    """The tool registry the user pointed at (folders of JSON files or Python files), None when none."""
    if not places:
        return None
    registry: dict[str, Any] = {}
    for place in places:
        try:
            registry.update(load_tools(place))
        except ToolLoadError as error:
            raise _CannotLoad(f"cannot load tools from {error}") from None
    return registry


def _asker(args: argparse.Namespace) -> Asker | None:
    """The model the command asks, through the document's cassette (`DOC.models.jsonl`), or None."""
    if args.llm is None:
        return None
    endpoint = Endpoint(args.llm, args.model, api_key_env=args.api_key_env, timeout=args.llm_timeout,
                        max_retries=args.llm_retries, structured=args.structured)
    return Asker(Provider(endpoint), open_cassette(args, args.doc), args.mode)


def open_cassette(args: argparse.Namespace, doc: str | os.PathLike[str]) -> Cassette:
    """`--cassette`, or the document's (`DOC.models.jsonl`); one a recording could not be appended to is refused
    before any question is asked (`--replay` writes nothing)."""
    path = args.cassette or str(cassette_path(doc))
    if args.mode != "replay":
        check_appendable(path)
    return Cassette.open(path)


def refuse_solution(where: str, document: Document) -> None:
    """Stop, each refusal said at `where`, when the document's own solution is one `run` refuses: nothing of it could
    run, and no plan may run in its place; advice `validate` calls an error refuses it as it refuses a turn typed with
    it (017). `eval` asks it once for all its cases."""
    refusals = solution_refusals(document.context, document.solution)
    if refusals:
        for refusal in refusals[:-1]:
            say(f"{where}: {refusal}")
        raise _CannotLoad(f"{where}: {refusals[-1]}")


def _run(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    if args.out is not None:
        check_writable(args.out)
    refuse_solution(args.doc, document)
    broken = schema_problems_of(document.context, "input")
    if broken:  # 006: the input is the prompt the agent promised to take (`eval` runs no such case either)
        for violation in broken:
            say(f"{args.doc}: {violation}")
        raise _CannotLoad(f"{args.doc}: the input breaks its schema (006): nothing was run")
    asker = _asker(args)
    options: dict[str, Any] = {"activities": _activities(args.activities), "tools": _tools(args.tools),
                               "clock": fixed_clock(args.now) if args.now else utc_now, "timeout": args.timeout,
                               "in_process": args.in_process}
    turns = []
    for file in args.turn:
        turn = load_turn(file)
        problem = turn_problem(turn)
        if problem is not None:
            raise _CannotLoad(f"{file}: {problem}")
        turns.append(turn)
    start = len(document.context)  # what the run appends from here on is its own
    if args.steps is None:
        return _run_loop(args, document, turns, options, asker, start)
    execution = Execution(document, **options)
    if args.approve_plan:
        execution.approve_plan()
    elif execution.lazy:  # 012: nothing steps before the plan is approved, as the loop says without --steps
        waiting = _unrun(execution)
        if waiting:
            _write(document, args.out)
            say(_lazy(waiting))
            return EXIT_OK
        execution.approve_plan()  # every call has run (it was approved then): nothing is left to step
    failure: ModelError | None = None
    refused: tuple[int, ...] = ()
    if asker is None:
        ran = _keeping(document, args.out, lambda: _running(_drive(execution, args.steps)))
    else:
        ran, failure, refused = _keeping(
            document, args.out, lambda: _running(_drive_with_model(execution, asker, args.steps)))
    _write(document, args.out)
    _report(execution, ran)
    _say_conflicts(document, start)
    if failure is not None:
        print(f"contextdeck: the model failed: {failure}", file=sys.stderr)
        return EXIT_MODEL
    if refused:  # each is an error message in the document; a script must not take the run for a success
        say(_refused(refused))
        return EXIT_REFUSED
    return EXIT_OK


def _run_loop(args: argparse.Namespace, document: Document, turns: list[Any], options: dict[str, Any],
              asker: Asker | None, start: int) -> int:
    """Tick after tick until the final output (010): each `--turn` the model's next turn typed by hand, then,
    with `--llm` (and not `--turns wait`), the model's, which also answers latent calls."""
    given = iter(zip(args.turn, turns, strict=True))
    taking: list[str] = []  # the file of the turn being taken, to name it when it is refused
    lines: list[str] = []

    def next_turn(request: Document) -> Any:
        # The turns typed for the document are its own: a delegate's session (014) waits for its turns instead.
        if request is not document:
            return None
        file, turn = next(given, (None, None))
        taking[:] = [file] if file is not None else []
        if turn is not None:  # the loop refuses a turn with errors; its warnings are said here
            problems = turn_problems(document, turn, activities=options["activities"], tools=options["tools"])
            lines.extend(f"{file}: warning: {p}" for p in problems if p.severity == "warning")
        return turn

    model_turns = asker is not None and args.turns == "model"
    run = _keeping(document, args.out, lambda: _running(
        run_agent(document, asker, turns=next_turn, model_gives_turns=model_turns, max_ticks=args.max_ticks,
                  approve_plan=args.approve_plan, on_tick=lambda loop, tick: lines.extend(_tick_lines(loop, tick)),
                  **options)))
    _write(document, args.out)
    for line in lines:
        say(line)
    if isinstance(run.refused, TurnRefused) and taking:  # a turn typed by hand: its file and each problem
        for problem in run.refused.problems:
            say(f"{taking[0]}: turn refused: {problem}")
        return EXIT_DOCUMENT
    if run.failure is not None:
        say(f"the model failed: {run.failure}")
    elif run.refused is not None:
        say(f"the model's turn was refused: {run.refused}")
        reply = getattr(run.refused, "reply", None)
        if reply is not None:
            say(f"the model's reply was: {reply}")
    else:
        # A turn the loop never asked for is the user's work: name it rather than drop it in silence (010: a
        # final output ends the loop, whatever turns are left). With turns left, only the tick limit stops it.
        left = [file for file, _turn in given]
        ending = _ending(run, bool(turns), model_turns or bool(left))
        say(ending)
        why = "final output" if run.ending is Ending.FINISHED else ending
        for file in left:
            say(f"{file}: warning: turn not taken: the loop ended before it ({why})")
    say(f"{run.calls} call(s) run in {run.ticks} tick(s)")
    _say_conflicts(document, start)
    if asker is not None:
        tally = run.tally
        say(f"the model: {tally.asked} request(s) asked, {tally.replayed} replayed, {tally.tokens} tokens")
    return _exit_code(run, model_turns)


def _say_conflicts(document: Document, start: int) -> None:
    """The conflicts the run's own outputs made (messages from `start` on), once, as `validate` says them: a
    `push` onto a number is appended like any output, and the fold then skips it."""
    with _held(document):  # one pass over what the run wrote: as `validate`'s, apart from the collector
        conflicts = conflicts_since(document.context, start)
    for conflict in conflicts:
        say(f"{conflict} (an output of this run: the fold skips it)")


def _exit_code(run: AgentRun, model_turns: bool) -> int:
    """`run`'s exit code (README's table): a loop the model drives that does not finish is not a success;
    one that stops where it was asked to stop (no model, `--turns wait`) is."""
    ending = run.ending
    if ending is Ending.FAILED:
        return EXIT_MODEL
    if ending is Ending.REFUSED:
        return EXIT_REFUSED
    if ending is Ending.WAITING and model_turns:
        return EXIT_WAITING
    return EXIT_OK


def _running(work: Coroutine[Any, Any, T]) -> T:
    """Run the calls. What activities running here print (`--in-process`) goes to stderr: mixed into a
    document written to stdout it would corrupt it (in workers, it goes to each call's record)."""
    with _descriptor_1_to_stderr(), contextlib.redirect_stdout(sys.stderr):
        return asyncio.run(work)


@contextlib.contextmanager
def _descriptor_1_to_stderr() -> Iterator[None]:
    """File descriptor 1 onto stderr's meanwhile: what bypasses `sys.stdout` (`os.write(1, ...)`, a program an
    activity starts without capturing its output) goes to stderr too."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no descriptor 1 (closed, or a stream without one)
        yield
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        yield
        return
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _tick_lines(loop: Loop, tick: Tick) -> list[str]:
    lines = [f"tick {tick.number}: {len(tick.report.ran)} call(s) run", *_call_lines(loop.execution)]
    if tick.output_problem is not None:
        lines.append(f"tick {tick.number}: output refused: {tick.output_problem}")
    return lines


def _lazy(waiting: int) -> str:
    """A lazy plan's calls waiting (012), as `run` says it with --steps and without."""
    return f"the plan is lazy: {waiting} call(s) wait for approval (--approve-plan runs them)"


def _unrun(execution: Execution) -> int:
    """A lazy plan's calls that wait for approval: those without a record (one that has run waits for nothing)."""
    return sum(not execution.record.has(index) for index in range(len(execution.states)))


def _ending(run: AgentRun, had_turns: bool, more_turns: bool) -> str:
    """How the loop ended; `more_turns`: a next turn was there to take (the model's, or one typed), so a run that
    is not finished, lazy or refused stopped at its tick limit."""
    if run.status is LoopStatus.FINISHED:
        return f"final output: {json_dumps(run.output, indent=False)}"
    if run.status is LoopStatus.LAZY:
        return _lazy(_unrun(run.loop.execution) if run.loop is not None else 0)
    if run.refused_outputs:
        return _refused(run.refused_outputs)
    if more_turns:
        return f"no final output after {run.ticks} tick(s) (--max-ticks)"
    more = "another" if had_turns else "one"
    return f"waiting for the model's next turn (give {more} with --turn FILE.json)"


def _refused(calls: tuple[int, ...]) -> str:
    return f"the model's answer was refused for {', '.join(f'call {index}' for index in calls)}"


def say(text: str) -> None:
    print(f"contextdeck: {text}", file=sys.stderr)


class _RunStopped(Exception):
    """The run ended in an error that is no call's own, or was `interrupted` (Ctrl-C): the outputs it had made
    were written first."""

    def __init__(self, text: str, interrupted: bool = False) -> None:
        super().__init__(text)
        self.interrupted = interrupted


def _write(document: Document, out: str | None) -> None:
    """Write the document to `out` (atomically) or stdout, whole; `CannotWrite` says why not. Ctrl-C or SIGTERM
    while it is written stops the command once it is (a second one at once): the run's outputs are kept."""
    with holding_interrupts() as held:
        try:
            text = document.dumps()
        except ValueError as error:
            raise CannotWrite(f"cannot write the document: {describe_exception(error)}") from None
        if out is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            write_out(out, text.encode("utf-8"))
    if held:
        try:
            signal.raise_signal(held[0])  # through the command's own handlers: SIGTERM is counted for exit 143
        except KeyboardInterrupt:
            where = out if out is not None else "stdout"
            raise _RunStopped(f"interrupted (what it had made is written to {where})", interrupted=True) from None


def _keeping(document: Document, out: str | None, work: Callable[[], T]) -> T:
    """`work()`; when it fails or is interrupted, the document as far as it got is written before the run stops, so
    that no output the run made is lost (run again, it would repeat the calls that made them)."""
    try:
        return work()
    except (Exception, KeyboardInterrupt) as error:
        interrupted = isinstance(error, KeyboardInterrupt)
        reason = ("interrupted" if interrupted
                  else f"the run stopped: {type(error).__name__}: {describe_exception(error)}")
        try:
            _write(document, out)
        except CannotWrite as unwritten:
            raise _RunStopped(f"{reason}; and {unwritten}", interrupted) from None
        where = out if out is not None else "stdout"
        raise _RunStopped(f"{reason} (what it had made is written to {where})", interrupted) from None


async def _drive(execution: Execution, steps: int | None) -> int:
    """Run to the end (or `steps` steps), then wait for fire-and-forget activities; returns calls started."""
    ran = 0
    if steps is None:
        ran = len((await execution.run()).ran)
    else:
        for _ in range(steps):
            report = await execution.step()
            if not report.ran and not report.errors:
                break
            ran += len(report.ran)
    await execution.drain()
    return ran


async def _drive_with_model(execution: Execution, asker: Asker,
                            steps: int | None) -> tuple[int, ModelError | None, tuple[int, ...]]:
    """Run with the model answering latent calls; an endpoint failure stops asking (what ran is kept)."""
    try:
        progress = await run_with_model(execution, asker, steps)
    finally:
        await execution.drain()
        await asker.provider.close()
    return progress.ran, progress.failure, progress.refused


def _ask(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    if args.out is not None:
        check_writable(args.out)
    activities, tools = _activities(args.activities), _tools(args.tools)
    asker = _asker(args)
    assert asker is not None  # --llm is required for ask

    async def ask() -> Any:
        try:
            return await ask_request(document, asker, activities=activities, tools=tools)
        finally:
            await asker.provider.close()

    try:
        answer = asyncio.run(ask())
    except ModelError as error:
        print(f"contextdeck: the model failed: {error}", file=sys.stderr)
        if error.reply is not None:
            print(f"contextdeck: the model's reply was: {error.reply}", file=sys.stderr)
        return EXIT_MODEL
    where = apply_solution(document, answer)
    _write(document, args.out)
    usage = answer.exchange.get("usage") or {}
    how = "replayed from the cassette" if answer.replayed else f"in {answer.exchange.get('latency_ms')} ms"
    print(f"contextdeck: {len(answer.value['calls'])} call(s) from {answer.exchange.get('model')} ({how}, "
          f"{usage.get('total_tokens', '?')} tokens) written as {where}", file=sys.stderr)
    return EXIT_OK


def _report(execution: Execution, ran: int) -> None:
    """Errors, refused cycles, and calls left blocked, awaiting approval or waiting for an output, on stderr."""
    for line in _call_lines(execution):
        say(line)
    say(f"{ran} call(s) run")


def _call_lines(execution: Execution) -> list[str]:
    """Errors, refused cycles, and calls left blocked, awaiting approval or waiting for an output."""
    lines = [f"refused: {execution.describe_cycle(cycle)}" for cycle in execution.refused]
    blocked = [state.index for state in execution.states if state.status is Status.BLOCKED]
    never = never_found(execution, blocked) if blocked else {}  # what an instance waits for in vain (013)
    for index in range(len(execution.plans)):
        call = analyse_call(execution, index)  # the same analysis the window's calls panel shows
        label, error, waits = execution.written_label(index), call.state.error, ", ".join(call.waiting_for)
        if call.status is Status.FAILED and error is not None and error["type"] != "cycle":
            branch = " (written to its error branch)" if call.state.outputs else ""
            lines.append(f"{label} failed: {error['type']}: {error['message']}{branch}")
        elif call.status is Status.FIRE_AND_FORGET and error is not None:
            lines.append(f"{label} (fire-and-forget) failed: {error['type']}: {error['message']}")
        elif call.status is Status.AWAITING_APPROVAL:
            lines.append(f"{label} is awaiting approval: {waits}")
        elif call.status is Status.BLOCKED:
            failed = ", ".join(execution.written_label(writer, tool=False) for writer in call.state.failed_writers)
            because = blocked_because(call.state, failed)
            why = f": {never[index]}" if index in never else ""
            lines.append(f"{label} is blocked, waiting for {waits}{because}{why}")
        elif call.status is Status.WAITING_FOR_OUTPUT and index in execution.delegates:
            lines += _delegate_lines(label, execution.delegates[index].name, execution.delegations.get(index))
        elif call.status is Status.WAITING_FOR_OUTPUT:
            lines.append(f"{label} is latent and waits for an output (give it `_output`)")
    return lines + _held_back(execution)


def _delegate_lines(label: str, name: str, session: Loop | None) -> list[str]:
    """A delegated call waiting for its session's output: what that session is waiting for, then what went
    wrong inside it (its calls' lines, a refused output), each prefixed with the delegate's name."""
    status = session.status if session is not None else "not started"
    lines = [f"{label} waits for the output of its delegate {name!r}, whose session is {status}"]
    if session is None:
        return lines
    inside = _call_lines(session.execution)
    refused = session.ticks[-1].output_problem if session.ticks else None
    if refused is not None:
        inside.append(f"output refused: {refused}")
    return lines + [f"{name}: {line}" for line in inside]


def _held_back(execution: Execution) -> list[str]:
    """The ready members of a pattern group that another member keeps from starting (SPEC 6.10: a group starts
    when all its members are ready), each with the members it waits for, named as written."""
    states = execution.states
    lines: list[str] = []
    waiting = (Status.BLOCKED, Status.AWAITING_APPROVAL, Status.WAITING_FOR_OUTPUT)
    for unit in execution.units:
        held = [member for member in unit.members if states[member].status in waiting]
        if held and len(unit.members) > 1:
            names = ", ".join(execution.written_label(member, tool=False) for member in held)
            lines += [f"{execution.written_label(member)} is ready, but its group starts together: it waits for "
                      f"{names}" for member in unit.members if states[member].status is Status.READY]
    return lines


def _moment(text: str) -> str:
    try:
        fixed_clock(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date and time: {text!r}") from None
    return text


def _tools_command(args: argparse.Namespace) -> int:
    """The tool messages of typed activities (or of any tool registry), as a JSON array to paste into a context."""
    messages: list[dict[str, Any]] = []
    for place in args.files:
        registry = _tools([place]) or {}
        messages += [{"type": "tool", "tool": {name: schema}} for name, schema in registry.items()]
        say(f"{place}: {len(registry)} tool(s): {', '.join(registry)}")
    print(json_dumps(messages))
    return EXIT_OK


def _gui(args: argparse.Namespace) -> int:
    from contextdeck import _system

    environ = dict(os.environ)
    if args.screenshot:
        environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # as the window will choose
    missing = _system.missing(environ)
    if missing:  # said before Qt is loaded: Qt would abort the process, naming the wrong library
        print(_system.install_advice(missing), end="", file=sys.stderr)
        return EXIT_DOCUMENT
    unreachable = _system.display_problem(environ)
    if unreachable is not None:  # the same: an X display that refuses the connection aborts Qt
        print(unreachable, end="", file=sys.stderr)
        return EXIT_DOCUMENT
    from contextdeck.gui import main as gui_main  # Qt is loaded only for this subcommand

    return gui_main(args.doc, screenshot=args.screenshot, tools=args.tools, size=args.size)


def _window_size(text: str) -> tuple[int, int]:
    """`1280x800` → (1280, 800): the screenshot's window size."""
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit() or not (200 <= int(width) <= 10_000) or \
            not (200 <= int(height) <= 10_000):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 1280x800 (200 to 10000 pixels each)")
    return int(width), int(height)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return value


def _base_url(text: str) -> str:
    """`--llm`: an http or https URL naming a host; anything else fails only when the model is first asked,
    after the tick's calls have run and the document is written."""
    problem = base_url_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _non_negative(text: str) -> int:
    return _at_least(0, text)


def _positive(text: str) -> int:
    return _at_least(1, text)


def _at_least(low: int, text: str) -> int:
    refused = argparse.ArgumentTypeError(f"not a whole number of {low} or more: {text!r}")
    try:
        value = int(text)
    except ValueError:
        raise refused from None
    if value < low:
        raise refused
    return value


def _code_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--activities", metavar="FILE.py", action="extend", nargs="+", default=[],
                         help="a Python file of activities (repeatable); the only code that ever runs")
    command.add_argument("--tools", metavar="PATH", action="extend", nargs="+", default=[],
                         help="a tool registry: a folder of tool JSON files or a Python file with TOOLS "
                              "(repeatable); `{\"type\": \"tool\", \"tool\": \"Tool.name\"}` names its tools")


def _model_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_argument_group("model", "an OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp, vLLM, ...)")
    group.add_argument("--llm", metavar="BASE_URL", type=_base_url, required=required, default=None,
                       help="for example http://localhost:11434/v1" + ("" if required else "; latent calls ask it"))
    group.add_argument("--model", metavar="NAME", default=None, help="the model name the endpoint knows")
    group.add_argument("--api-key-env", metavar="VAR", default="OPENAI_API_KEY",
                       help="the environment variable holding the API key (default OPENAI_API_KEY; "
                            "a local server needs none)")
    group.add_argument("--llm-timeout", type=_seconds, default=120.0, metavar="SECONDS",
                       help="how long to wait for the model's answer (default 120)")
    group.add_argument("--llm-retries", type=_non_negative, default=2, metavar="N",
                       help="retries of a request that failed to connect or got HTTP 429/5xx (default 2)")
    group.add_argument("--structured", choices=["auto", *STRATEGIES], default="auto",
                       help="how to ask for the result's schema (auto: the first the server accepts)")
    group.add_argument("--cassette", metavar="FILE", default=None,
                       help="where exchanges are recorded (default DOC.models.jsonl)")
    modes = group.add_mutually_exclusive_group()
    modes.add_argument("--record", dest="mode", action="store_const", const="record",
                       help="replay what is recorded, ask and record the rest (the default)")
    modes.add_argument("--replay", dest="mode", action="store_const", const="replay",
                       help="never ask: a question not recorded is an error")
    modes.add_argument("--live", dest="mode", action="store_const", const="live",
                       help="always ask, and record the new answers")
    parser.set_defaults(mode="record")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="contextdeck", description=__doc__)
    parser.add_argument("--version", action="version", version=f"contextdeck {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    resolve = commands.add_parser("resolve", help="print the value of an expression as JSON")
    resolve.add_argument("doc")
    resolve.add_argument("expr", help="for example '†state.user.name || †input.name'")
    resolve.add_argument("--instance", default=None, help="resolve for this _instance")
    resolve.add_argument("--at", type=_non_negative, default=None, help="as of the first N messages")
    resolve.set_defaults(run=_resolve)

    render = commands.add_parser("render", help="print the request as the model receives it: messages and schema")
    render.add_argument("doc")
    render.add_argument("--at", type=_non_negative, default=None, help="as of the first N messages")
    render.add_argument("--json", action="store_true",
                        help="print the exact request as JSON: {messages: [{role, content}], schema, config}")
    _code_options(render)
    render.set_defaults(run=_render)

    check = commands.add_parser("validate", help="check everything run checks before it starts, and the data")
    check.add_argument("doc")
    _code_options(check)
    check.set_defaults(run=_validate)

    run = commands.add_parser("run", help="run the plan's calls and write the resulting document")
    run.add_argument("doc")
    _code_options(run)
    run.add_argument("--out", metavar="FILE", default=None, help="write here (atomically) instead of stdout")
    run.add_argument("--steps", type=_non_negative, default=None, help="run at most N steps, one call at a time")
    run.add_argument("--now", type=_moment, default=None, help="the _date of every message written (ISO 8601)")
    run.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                     help="how long an activity may run before it fails (default 60; an activity's own wins)")
    run.add_argument("--in-process", action="store_true",
                     help="run activities in this process, not in worker processes: faster, but a crash, a hang "
                          "or a busy loop in one is the whole run's, and a timeout cannot stop it")
    _model_options(run, required=False)
    run.add_argument("--turn", metavar="SOLUTION.json", action="append", default=[],
                     help="the model's next turn typed by hand (repeatable: one file per turn, in order)")
    run.add_argument("--approve-plan", action="store_true", help="run a lazy plan (012) instead of waiting")
    run.add_argument("--max-ticks", type=_non_negative, default=25, help="stop after N ticks (default 25)")
    run.add_argument("--turns", choices=["model", "wait"], default="model",
                     help="with --llm: the model gives each next turn (model, the default), or the run stops and "
                          "waits for one after the turns it has (wait)")
    run.set_defaults(run=_run)

    ask = commands.add_parser("ask", help="ask the model for the whole request; write the document with its calls")
    ask.add_argument("doc")
    _code_options(ask)
    ask.add_argument("--out", metavar="FILE", default=None, help="write here (atomically) instead of stdout")
    _model_options(ask, required=True)
    ask.set_defaults(run=_ask)

    add_trace_commands(commands, _non_negative)
    from contextdeck import _eval

    _eval.configure(commands, _code_options, _model_options)

    tools = commands.add_parser("tools", help="print the tool messages of typed activities (or a tool registry)")
    tools.add_argument("files", nargs="+", metavar="ACTIVITIES.py",
                       help="a Python file of typed activities (annotated parameters and return type), a file "
                            "with TOOLS, a tool JSON file or a folder of them")
    tools.set_defaults(run=_tools_command)

    gui = commands.add_parser("gui", help="open the workbench")
    gui.add_argument("doc", nargs="?", default=None)
    # `contextdeck-gui --version` (the desktop entry's program) is `gui --version`
    gui.add_argument("--version", action="version", version=f"contextdeck {__version__}")
    gui.add_argument("--screenshot", metavar="PNG", default=None, help="render the window to PNG and exit")
    gui.add_argument("--size", metavar="WxH", type=_window_size, default=None,
                     help="with --screenshot: the window's size in pixels, e.g. 1280x800 (default 1440x880)")
    gui.add_argument("--tools", metavar="PATH", action="extend", nargs="+", default=[],
                     help="a tool registry to load first: a folder of tool JSON files or a Python file with TOOLS")
    gui.set_defaults(run=_gui)

    examples = commands.add_parser("examples", help="print the paths of the bundled example documents")
    examples.set_defaults(run=_examples)
    for command in commands.choices.values():
        command.set_defaults(usage=command)
    return parser


def _examples(args: argparse.Namespace) -> int:
    from contextdeck import resources

    for example in resources.examples():
        print(example)
    return EXIT_OK


def gui_main() -> int:
    """`contextdeck-gui [DOC] [options]`: the `gui` subcommand as an executable of its own (the menu entry's)."""
    return main(["gui", *sys.argv[1:]])


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    usage = args.usage  # the subcommand's: its usage line, not the whole command's, heads a usage error
    if getattr(args, "llm", None) is not None and not args.model:
        usage.error("--llm needs --model NAME")
    if getattr(args, "model", None) and hasattr(args, "llm") and args.llm is None:  # (export's --model names one)
        usage.error("--model needs --llm BASE_URL")
    run: Any = args.run
    if run is _gui:  # the window handles its own signals
        return _main(run, args)
    with _stopping() as stopped_by:
        code = _main(run, args)
    return 128 + stopped_by[-1] if code == EXIT_INTERRUPTED and stopped_by else code


@contextlib.contextmanager
def _stopping() -> Iterator[list[int]]:
    """SIGTERM (a supervisor, `timeout`, `docker stop`) stops a command as Ctrl-C does, so that a run writes what
    it had made first; the list it yields then holds the signal, for the exit code (143). It goes through the
    SIGINT handler in place: inside `asyncio.run` that one cancels the run at its next await, never mid-write."""
    stopped_by: list[int] = []

    def terminated(signum: int, frame: Any) -> None:
        stopped_by.append(signum)
        interrupt = signal.getsignal(signal.SIGINT)
        if not callable(interrupt):  # SIGINT ignored (a shell's background job)
            raise KeyboardInterrupt
        interrupt(signal.SIGINT, frame)

    with SwappedHandlers({signal.SIGTERM: terminated}):
        yield stopped_by


def _main(run: Any, args: argparse.Namespace) -> int:
    try:
        with batch_collector(), telling_large_schemas(say):  # a wait of seconds is told, not silent
            return int(run(args))
    except (DocumentError, _CannotLoad, CannotWrite, _RunStopped) as error:
        print(f"contextdeck: {error}", file=sys.stderr)
        return EXIT_INTERRUPTED if isinstance(error, _RunStopped) and error.interrupted else EXIT_DOCUMENT
    except BrokenPipeError:
        # `contextdeck render doc | head`: the reader left; exit quietly instead of a traceback.
        _silence_stdout()
        return EXIT_OK
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"contextdeck: {where}{os_reason(error)}", file=sys.stderr)
        return EXIT_DOCUMENT
    except KeyboardInterrupt:
        print("contextdeck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # a bug of ours: said in one line, the traceback only when asked for
        if os.environ.get("CONTEXTDECK_TRACEBACK"):
            raise
        print(f"contextdeck: internal error: {type(error).__name__}: {describe_exception(error)} "
              "(set CONTEXTDECK_TRACEBACK=1 to see where)", file=sys.stderr)
        return EXIT_INTERNAL


def _tolerant_streams() -> None:
    """A terminal that cannot show † or ¶ gets escapes instead of a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _columns(text: str, stream: Any) -> int:
    """The columns `text` takes printed on `stream`: a character its encoding lacks as its escape
    (`_tolerant_streams`), a wide one (名) as two, a combining mark as none."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    shown = text.encode(encoding, "backslashreplace").decode(encoding)
    return sum(0 if unicodedata.combining(character) else 2 if unicodedata.east_asian_width(character) in ("W", "F")
               else 1 for character in shown)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
