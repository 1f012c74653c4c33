"""The `contextdeck` command. Headless subcommands import only the engine, never Qt."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextdeck.engine import (
    Activities,
    ActivityLoadError,
    Document,
    DocumentError,
    Execution,
    ExpressionError,
    Status,
    ToolLoadError,
    analyse_call,
    compose_request,
    fixed_clock,
    json_dumps,
    load_activities,
    load_document,
    load_tools,
    parse_expression,
    utc_now,
    validate,
    write_atomically,
)

EXIT_OK, EXIT_DOCUMENT, EXIT_EXPRESSION, EXIT_NOT_FOUND = 0, 1, 2, 3


def _load(path: str) -> Document:
    return load_document(path)


def _resolve(args: argparse.Namespace) -> int:
    try:
        expression = parse_expression(args.expr)
    except ExpressionError as error:
        print(f"contextdeck: malformed expression: {error}", file=sys.stderr)
        return EXIT_EXPRESSION
    document = _load(args.doc)
    result = document.context.resolve(expression, instance=args.instance, at=args.at)
    for diagnostic in result.diagnostics:
        print(f"contextdeck: warning: {diagnostic}", file=sys.stderr)
    if not result.found:
        print(f"contextdeck: not found: {', '.join(result.missing)}", file=sys.stderr)
        return EXIT_NOT_FOUND
    print(json_dumps(result.value))
    return EXIT_OK


def _render(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    request = compose_request(document.context, document.schema, at=args.at,
                              activities=_activities(args.activities), tools=_tools(args.tools))
    for problem in request.problems:
        print(f"contextdeck: warning: {problem}", file=sys.stderr)
    print(json_dumps(request.to_json()) if args.json else request.text())
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    activities = _activities(args.activities) if args.activities else None
    problems = validate(document.context, document.solution, activities=activities, tools=_tools(args.tools))
    for problem in problems:
        print(f"{args.doc}: {problem}")
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return EXIT_DOCUMENT
    print(f"{args.doc}: ok ({len(document.context)} messages)")
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


def _run(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    execution = Execution(document, activities=_activities(args.activities), tools=_tools(args.tools),
                          clock=fixed_clock(args.now) if args.now else utc_now, timeout=args.timeout)
    ran = asyncio.run(_drive(execution, args.steps))
    text = document.dumps()
    if args.out is not None:
        write_atomically(Path(args.out), text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    _report(execution, ran)
    return EXIT_OK


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


def _report(execution: Execution, ran: int) -> None:
    """Errors, refused cycles, and calls left blocked, awaiting approval or waiting for an output, on stderr."""
    def say(text: str) -> None:
        print(f"contextdeck: {text}", file=sys.stderr)

    for cycle in execution.refused:
        say("refused: " + execution.describe_cycle(cycle))
    for index in range(len(execution.plans)):
        call = analyse_call(execution, index)  # the same analysis the window's calls panel shows
        label, error, waits = call.label, call.state.error, ", ".join(call.waiting_for)
        if call.status is Status.FAILED and error is not None and error["type"] != "cycle":
            say(f"{label} failed: {error['type']}: {error['message']}")
        elif call.status is Status.FIRE_AND_FORGET and error is not None:
            say(f"{label} (fire-and-forget) failed: {error['type']}: {error['message']}")
        elif call.status is Status.AWAITING_APPROVAL:
            say(f"{label} is awaiting approval: {waits}")
        elif call.status is Status.BLOCKED:
            failed = ", ".join(f"call {writer}" for writer in call.state.failed_writers)
            say(f"{label} is blocked, waiting for {waits}" + (f" (its writer {failed} failed)" if failed else ""))
        elif call.status is Status.WAITING_FOR_OUTPUT:
            say(f"{label} is latent and waits for an output (give it `_output`)")
    say(f"{ran} call(s) run")


def _moment(text: str) -> str:
    try:
        fixed_clock(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date and time: {text!r}") from None
    return text


def _gui(args: argparse.Namespace) -> int:
    from contextdeck.gui import main as gui_main  # Qt is loaded only for this subcommand

    return gui_main(args.doc, screenshot=args.screenshot, tools=args.tools)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _code_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--activities", metavar="FILE.py", action="extend", nargs="+", default=[],
                         help="a Python file of activities (repeatable); the only code that ever runs")
    command.add_argument("--tools", metavar="PATH", action="extend", nargs="+", default=[],
                         help="a tool registry: a folder of tool JSON files or a Python file with TOOLS "
                              "(repeatable); `{\"type\": \"tool\", \"tool\": \"Tool.name\"}` names its tools")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="contextdeck", description=__doc__)
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
    run.set_defaults(run=_run)

    gui = commands.add_parser("gui", help="open the workbench")
    gui.add_argument("doc", nargs="?", default=None)
    gui.add_argument("--screenshot", metavar="PNG", default=None, help="render the window to PNG and exit")
    gui.add_argument("--tools", metavar="PATH", action="extend", nargs="+", default=[],
                     help="a tool registry to load first: a folder of tool JSON files or a Python file with TOOLS")
    gui.set_defaults(run=_gui)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_streams()
    args = build_parser().parse_args(argv)
    run: Any = args.run
    try:
        return int(run(args))
    except (DocumentError, _CannotLoad) as error:
        print(f"contextdeck: {error}", file=sys.stderr)
        return EXIT_DOCUMENT
    except BrokenPipeError:
        # `contextdeck render doc | head`: the reader left; exit quietly instead of a traceback.
        _silence_stdout()
        return EXIT_OK


def _tolerant_streams() -> None:
    """A terminal that cannot show † or ¶ gets escapes instead of a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
