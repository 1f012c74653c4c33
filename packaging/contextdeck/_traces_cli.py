"""`contextdeck import` and `contextdeck export`: agents' traces in, runs out (docs/format.md §10)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from contextdeck._out import write_out
from contextdeck.engine import (
    TRACE_FORMATS,
    Imported,
    Redaction,
    ToolLoadError,
    TraceError,
    body_of,
    collector_warning,
    contexts_held,
    empty_request,
    export_openai,
    export_otlp,
    import_trace,
    json_dumps,
    load_document,
    load_tools,
    named_contexts,
    none_named,
    redact_document,
)

EXPORTS = ("otlp-json", "openai")


def say(text: str) -> None:
    print(f"contextdeck: {text}", file=sys.stderr)


EXIT_USAGE = 2  # as argparse exits for a bad option


def refuse_past_the_end(doc: str, at: int | None, length: int) -> int | None:
    """`EXIT_USAGE`, with the reason said, when `--at` is past the end of the document; else None. `--at` past the
    end is refused rather than taken as all (as the engine's `at` is): a number past the end names another
    document or another cut than the one given, and the output would not show it (docs/format.md §10)."""
    if at is None or at <= length:
        return None
    say(f"--at {at} is past the end of {doc}, which holds {length} message(s): give 0 to {length}, "
        "or leave --at out for all of it")
    return EXIT_USAGE


def choose(imported: list[Imported], trace: str | None, file: str) -> Imported:
    """The context to write: the only one, or the one the user named (`named_contexts`); refused naming the `file`
    read, as every fault of an import is."""
    if trace is not None:
        labels = [item.label for item in imported]
        found = named_contexts(trace, labels)
        if not found:
            raise TraceError(file, none_named(trace, labels))
        if len(found) > 1:
            raise TraceError(file, f"--trace {trace!r} matches several contexts; the file holds: {', '.join(labels)}")
        return next(item for item in imported if item.label == found[0])
    if len(imported) > 1:
        listing = "; ".join(f"{item.label} ({item.turns} model turn(s))" for item in imported)
        raise TraceError(file, f"the file holds {contexts_held(imported)}: choose one with --trace ID "
                         f"({listing})")
    return imported[0]


def _import(args: argparse.Namespace) -> int:
    try:
        redaction = Redaction.parse(args.redact)
    except ValueError as error:
        say(str(error))
        return 2
    if args.out is not None and Path(args.out).suffix.lower() == ".jsonl":
        say(f"--out {args.out}: an import is a saved request (its messages, schema and final output), which "
            "JSON Lines cannot hold: write it to a .json file")
        return 2
    try:
        first, *more = args.file
        chosen = choose(import_trace(first, args.source, args.trace, more=more), args.trace, first)
    except TraceError as error:
        say(str(error))
        return 1
    document, count = redact_document(chosen.document, redaction) if redaction else (chosen.document, 0)
    for warning in chosen.warnings:  # each names its own file first, then the line, the record (format.md §10)
        say(f"warning: {warning}")
    text = document.dumps()
    if args.out is not None:
        write_out(args.out, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    plans = [body_of(message) for message in document.context.messages]
    calls = sum(len(plan.get("plan", [])) for plan in plans if plan.get("type") == "plan")
    what = f"trace {chosen.label}" if chosen.format == "otlp" else chosen.label
    redacted = f", {count} value(s) redacted" if redaction else ""
    say(f"imported {what} ({chosen.format}): {chosen.turns} model turn(s), {calls} call(s), "
        f"{len(document.context)} messages{redacted}" + (f" into {args.out}" if args.out else ""))
    return 0


def _export(args: argparse.Namespace) -> int:
    document = load_document(args.doc)
    tools: dict[str, Any] | None = None
    if args.tools:
        tools = {}
        for place in args.tools:
            try:
                tools.update(load_tools(place))
            except ToolLoadError as error:
                say(f"cannot load tools from {error}")
                return 1
    if args.format == "openai" and args.without_document:
        say("--without-document applies to --format otlp-json: an OpenAI body carries no document")
        return 2
    if args.format == "openai":
        refused = refuse_past_the_end(args.doc, args.at, len(document.context))
        if refused is not None:
            return refused
        value = export_openai(document, at=args.at, model=args.model, tools=tools)
        empty = empty_request(value, args.at, len(document.context), "give --at")
        if empty is not None:
            say(f"{args.doc}: {empty}")
            return 1
    else:
        if args.at is not None:
            say("--at applies to --format openai: a trace holds every turn")
            return 2
        value = export_otlp(document, tools=tools, carry_document=not args.without_document)
    text = json_dumps(value) + "\n"
    too_big = collector_warning(len(text)) if args.format == "otlp-json" else None
    if too_big is not None:
        say(f"warning: {too_big}" + ("" if args.without_document else "; --without-document leaves out the copy "
                                     "of the document the root span carries"))
    if args.out is not None:
        write_out(args.out, text.encode("utf-8"))
        count = len(value["resourceSpans"][0]["scopeSpans"][0]["spans"]) if args.format == "otlp-json" else None
        say(f"wrote {args.out}" + (f" ({count} spans)" if count is not None else ""))
    else:
        sys.stdout.write(text)
    return 0


def add_commands(commands: Any, non_negative: Any) -> None:
    """The two subcommands, on the parser's subcommands."""
    importer = commands.add_parser(
        "import", help="turn an agent's trace (OpenAI exchange or log, OTLP JSON) into a document")
    importer.add_argument("file", nargs="+", metavar="FILE",
                          help="an OpenAI chat completions or Responses API request (or {request, response}), a JSON "
                               "Lines log of them, or an OTLP JSON trace; several OTLP files are read as one (a "
                               "trace's spans and, in a file of their own, their log records)")
    importer.add_argument("--out", metavar="DOC.json", default=None, help="write here (atomically) instead of stdout")
    importer.add_argument("--from", dest="source", choices=TRACE_FORMATS, default=None,
                          help="the input's format (detected when not given)")
    importer.add_argument("--trace", metavar="ID[/AGENT]", default=None,
                          help="the context to import when an OTLP file holds several: a trace (its id or the id's "
                               "start), or TRACE/AGENT for one agent's conversation in a trace of several (each "
                               "part or its start, in any case; an agent named in full wins over longer names it "
                               "starts)")
    importer.add_argument("--redact", metavar="RULES", action="append", default=[],
                          help="replace matching values before writing: emails, api-keys, /REGEX/, or a key name "
                               "(wildcards * ?); comma-separated, repeatable")
    importer.set_defaults(run=_import)

    exporter = commands.add_parser("export", help="write a document's run as OTLP JSON spans, or its request as an "
                                                  "OpenAI chat completions body")
    exporter.add_argument("doc")
    exporter.add_argument("--format", choices=EXPORTS, required=True)
    exporter.add_argument("--out", metavar="FILE", default=None, help="write here (atomically) instead of stdout")
    exporter.add_argument("--at", type=non_negative, default=None,
                          help="openai: the request as of the first N messages (default: all, the next request)")
    exporter.add_argument("--model", default=None, help="openai: the model to name in the body")
    exporter.add_argument("--tools", metavar="PATH", action="extend", nargs="+", default=[],
                          help="a tool registry that `Tool.x` references name")
    exporter.add_argument("--without-document", action="store_true",
                          help="otlp-json: leave out the copy of the document the root span carries (the import "
                               "then reads the run from the spans)")
    exporter.set_defaults(run=_export)
