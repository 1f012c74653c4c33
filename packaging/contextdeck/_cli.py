"""The `contextdeck` command. Headless subcommands import only the engine, never Qt."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from contextdeck.engine import (
    Document,
    DocumentError,
    ExpressionError,
    load_document,
    parse_expression,
    render_text,
    validate,
)
from contextdeck.engine._json import dumps

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
    print(dumps(result.value))
    return EXIT_OK


def _render(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    print(render_text(document.context, at=args.at))
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    document = _load(args.doc)
    problems = validate(document.context, document.solution)
    for problem in problems:
        print(f"{args.doc}: {problem}")
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return EXIT_DOCUMENT
    print(f"{args.doc}: ok ({len(document.context)} messages)")
    return EXIT_OK


def _gui(args: argparse.Namespace) -> int:
    from contextdeck.gui import main as gui_main  # Qt is loaded only for this subcommand

    return gui_main(args.doc, screenshot=args.screenshot)


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="contextdeck", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    resolve = commands.add_parser("resolve", help="print the value of an expression as JSON")
    resolve.add_argument("doc")
    resolve.add_argument("expr", help="for example '†state.user.name || †input.name'")
    resolve.add_argument("--instance", default=None, help="resolve for this _instance")
    resolve.add_argument("--at", type=_non_negative, default=None, help="as of the first N messages")
    resolve.set_defaults(run=_resolve)

    render = commands.add_parser("render", help="print what the LLM sees")
    render.add_argument("doc")
    render.add_argument("--at", type=_non_negative, default=None, help="as of the first N messages")
    render.set_defaults(run=_render)

    check = commands.add_parser("validate", help="check data against schemas, references and conflicts")
    check.add_argument("doc")
    check.set_defaults(run=_validate)

    gui = commands.add_parser("gui", help="open the workbench")
    gui.add_argument("doc", nargs="?", default=None)
    gui.add_argument("--screenshot", metavar="PNG", default=None, help="render the window to PNG and exit")
    gui.set_defaults(run=_gui)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_streams()
    args = build_parser().parse_args(argv)
    run: Any = args.run
    try:
        return int(run(args))
    except DocumentError as error:
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
