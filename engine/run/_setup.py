"""A plan before anything runs: its calls as the executor numbers them, each one planned, who feeds whom, and
what keeps a call from ever running (SPEC 6.7). `Execution.reset` starts from it and `validate` reports it:
one function, so that what `validate` says and what `run` refuses can never disagree.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..calls._activities import Activities
from ..calls._calls import (
    CallPlan,
    Mode,
    Problem,
    ToolChecks,
    ToolReading,
    in_parameters,
    parameters_refusal,
    plan_call,
    plan_copy,
    resolve_call,
    resolve_parameters,
    tool_schema_problem,
)
from ..calls._plan import Graph, Origins, link_problems
from ..calls._tools import ToolDefinition, pending_calls
from ..document._context import Context
from ..protocol._expressions import OUTPUT_PATH, Expression, Occurrence, occurrences, parsed_or_error
from ..protocol._groups import PlanReading, Unit, read_plan
from ..protocol._schemas import SchemaCheck
from ..request._tools import merged_tools
from ._delegate import Delegate, delegate_for, prescribed_delegate
from ._instancing import copies
from ._running import conclude


@dataclass(frozen=True)
class Setup:
    """A plan's calls before anything runs: nothing here depends on the run record."""

    plan_index: int | None  # the plan message the calls are from (None: the solution's)
    calls: list[Any]  # as written, flattened out of their groups and expanded per instance
    units: list[Unit]  # the groups the calls run in (a call alone is a unit of its own)
    tools: dict[str, ToolDefinition]
    plans: list[CallPlan]
    graph: Graph
    structural: dict[int, list[Problem]]  # call index -> what keeps it from running, found before running
    delegates: dict[int, Delegate]
    refused: tuple[tuple[int, ...], ...]  # the cycles that refuse the whole plan
    origins: Origins | None  # each call's number as written and the instance of a copy (None: no call is copied)


def set_up(
    context: Context,
    solution: Any,
    activities: Activities,
    code_tools: dict[str, dict[str, Any]],
    base: Path | None = None,
    chain: tuple[Path, ...] = (),
    reading: PlanReading | None = None,
    merged: dict[str, ToolDefinition] | None = None,
    *,
    literals: bool = True,
) -> Setup:
    """The pending calls (the solution's, else the last plan's) planned against `context`'s tools and
    `code_tools`, with each call's structural problems: its own, its literal parameters (unless `literals` is
    off: the turn check leaves them to the tool's schema, which says them at the field), its delegate, its group, a
    cycle. `reading`: the pending calls read already (`read_plan`; `validate` reads every plan once); `merged`: the
    two merged already (`merged_tools`)."""
    entries, plan_index = pending_calls(context, solution)
    written = read_plan(entries) if reading is None else reading
    read, origins = copies(written, context)
    calls, units, expressions, unlisted = read.calls, read.units, read.expressions, read.unlisted
    tools = merged_tools(context, code_tools) if merged is None else merged
    tools_read: dict[str, ToolReading] = {}  # each tool read once
    checks = ToolChecks()  # each tool's parameter schema made into its check once
    finder = DelegateFinder(base, chain, code_tools)
    plans: list[CallPlan] = []
    structural: dict[int, list[Problem]] = {}
    delegates: dict[int, Delegate] = {}
    # A copy the run makes of a call per instance (013) is planned from its call's first copy's plan (`plan_copy`),
    # and its literal parameters are its call's (a reference in them is no literal): judged once for them all.
    firsts: dict[int, tuple[CallPlan, tuple[Problem, ...] | None]] = {}  # by the number of the call as written
    # One pass over the calls, each planned and judged in turn (a run's set-up plans 100,000).
    for unit in units:
        # Each call's index is its unit's int object (`flatten`), shared by its plan and state: a large plan holds many.
        for i in unit.members:
            number = origins[i][0] if origins is not None and origins[i][1] is not None else None
            first, judged = firsts.get(number, _UNPLANNED) if number is not None else _UNPLANNED
            plan = plan_copy(first, i, calls[i], tools_read) if first is not None else None
            if plan is None:
                plan = plan_call(i, calls[i], tools, activities, expressions[i], tools_read,
                                 unlisted.get(i) if unlisted else None)
            plans.append(plan)
            if plan.problems or not literals:
                problems = list(plan.problems)
            elif judged is not None:
                problems = list(judged)
            else:
                problems = literal_problems(context, plan, expressions[i], checks)
                judged = tuple(problems)
            if number is not None:
                firsts[number] = (plan if first is None else first, judged)
            problems, delegate = finder.refusals(context, plan, expressions[i], problems)
            if delegate is not None:
                delegates[i] = delegate
            if problems:
                structural[i] = problems
    graph = Graph.of(plans)
    refused = link_problems(units, plans, graph, structural, origins)
    return Setup(plan_index, calls, units, tools, plans, graph, structural, delegates, refused, origins)


_UNPLANNED: tuple[None, None] = (None, None)  # a call no copy of which is planned yet
_LATENT = Mode.LATENT  # looked up once: an enum's member is looked up in Python, and every call is asked


# 012: a lazy plan's model "will not perform latent execution": a latent call's `_output` given under one is.
LAZY_OUTPUT = ("a lazy plan (012) asks for no latent execution: this latent call's _output is its result, given "
               "before the plan is approved (it is taken as the result when it runs)")
# 014: a delegated call's result is what its delegate's session gives; an `_output` beside it is not taken.
DELEGATED_OUTPUT = ("a delegated call's result is its delegate's final output (014): this _output is not taken as "
                    "its result (a reference in it is still waited for)")
# 002, 003: an explicit call's result is what its activity returns; the model is offered no `_output` for it.
EXPLICIT_OUTPUT = ("an explicit call's result is what its activity returns (002: its tool offers no _output): this "
                   "_output is not taken as its result (a reference in it is still waited for)")
# 012: in eager execution the model collapses a branching output path to one concrete path when it gives the result.
EAGER_BRANCH = ("a latent call given its _output has chosen its outcome (012: eager execution collapses a branching "
                "_outputPath to one concrete path), but this _outputPath still branches: the output is written to "
                "its first alternative, {first}")


def given_outputs(plans: Sequence[CallPlan], delegated: Container[int], origins: Origins | None, lazy: bool,
                  written: Sequence[Any]) -> dict[int, tuple[str, str]]:
    """What is said of each call given an `_output` that is not taken as given, by its number as written (a copy's
    is its call's), in order: the field and why. A delegated or explicit call's result is its delegate's or its
    activity's (014, 002); a latent call's is the `_output`: under a lazy plan it should not be given (012), and in
    eager execution its output path is one concrete path. `delegated`: the calls a delegate runs (a refused one's
    call is refused, not delegated); `written`: the calls as written. `validate` and the turn check both say it."""
    said: dict[int, tuple[str, str]] = {}
    for plan in plans:
        if not plan.has_output:
            continue
        number = plan.index if origins is None else origins[plan.index][0]
        if plan.index in delegated:
            said[number] = ("_output", DELEGATED_OUTPUT)
        elif plan.mode is not Mode.LATENT:
            said.setdefault(number, ("_output", EXPLICIT_OUTPUT))
        elif lazy:
            said.setdefault(number, ("_output", LAZY_OUTPUT))
        elif isinstance(call := written[number], dict) and (first := branching(call.get("_outputPath"))) is not None:
            said.setdefault(number, ("_outputPath", EAGER_BRANCH.format(first=first)))
    return dict(sorted(said.items()))


def branching(output_path: Any) -> str | None:
    """The first alternative of an output path that branches (`a || b`), else None (malformed: said elsewhere)."""
    parsed = parsed_or_error(output_path) if isinstance(output_path, str) else None
    if not isinstance(parsed, Expression) or len(parsed.alternatives) < 2:
        return None
    return " && ".join(str(ref) for ref in parsed.alternatives[0])


class DelegateFinder:
    """What refuses a planned call beyond its own problems and its parameters', as a run's set-up finds it: its
    delegate (014), then a latent call's typed `_output` (002). Each delegate file is read once, and what
    each tool prescribes is read once."""

    def __init__(self, base: Path | None, chain: tuple[Path, ...], code_tools: dict[str, dict[str, Any]]) -> None:
        self.base, self.chain, self.code_tools = base, chain, code_tools
        self.loaded: dict[str, tuple[Delegate | None, str | None]] = {}
        self.prescribing: dict[str | None, bool] = {}  # by tool name: whether the tool names a delegate

    def refusals(self, context: Context, plan: CallPlan, found: list[Occurrence],
                 problems: list[Problem]) -> tuple[list[Problem], Delegate | None]:
        """`problems` with the delegate's refusal added, or, for a call that has none and runs latent here, its
        typed `_output`'s; and the delegate the call runs in (None: none, or refused). `found`: the call's
        expressions."""
        delegate = None
        if self._may_delegate(plan):
            delegate, refusal = delegate_for(plan, self.base, self.chain, self.code_tools, self.loaded)
            if refusal is not None:
                problems.append(refusal)
        if not problems and delegate is None and plan.mode is _LATENT:
            problems = _typed_output_problems(context, plan, found)
        return problems, delegate

    def _may_delegate(self, plan: CallPlan) -> bool:
        """Whether the call names a delegate (`_delegate`) or its tool does."""
        if isinstance(plan.call, dict) and plan.call.get("_delegate") is not None:
            return True
        known = self.prescribing.get(plan.tool_name)
        if known is None:
            known = self.prescribing[plan.tool_name] = prescribed_delegate(plan.tool) is not None
        return known


def literal_problems(context: Context, plan: CallPlan, found: list[Occurrence] | None = None,
                     checks: ToolChecks | None = None) -> list[Problem]:
    """A tool schema that cannot be used, and parameters without references, are found before anything
    runs (SPEC 6.7): `validate` reports them, and the window shows them, without running the call. `found`:
    the call's expressions (`occurrences` of it), when read already; `checks`: the tools' checks made already."""
    if plan.tool is None:
        return []
    # A parameter that holds a reference is among the call's reads, or its problems when malformed: a call with
    # neither (its output path its one expression: most calls of a run) is not searched for one.
    for where, _, _ in (occurrences(plan.call) if found is None else found) if plan.reads or plan.problems else ():
        # A parameter holds a reference: only the schema is judged now.
        if where is not OUTPUT_PATH and in_parameters(where):
            broken = tool_schema_problem(plan, checks)
            return [] if broken is None else [broken]
    parameters = resolve_parameters(context, plan)
    made = checks.of(plan) if checks is not None else None
    if isinstance(made, SchemaCheck) and made.valid is not None and made.valid(parameters):
        return []  # valid at a glance: most calls of a run, judged without `parameters_refusal`'s layers
    problem = parameters_refusal(plan, parameters, checks)  # an unusable schema included
    return [] if problem is None else [problem]


def _typed_output_problems(context: Context, plan: CallPlan, found: list[Occurrence]) -> list[Problem]:
    """A latent call's `_output` typed into the plan without references (null too) is its result, known before
    it runs: one the run would refuse (it breaks the tool's `_output` schema, 002, or cannot be written) is
    refused up front, by the run's own `conclude`, so `validate` and the turn check say so too."""
    if not plan.has_output or any(where[0] == "_output" for where, _, _ in found):
        return []  # none, or it holds a reference: its value is known only when the call runs
    outcome = conclude(plan, resolve_call(context, plan)["_output"], _no_clock)  # `††` unescaped, as written
    return [] if outcome.error is None else [Problem(*outcome.error, "$._output")]


def _no_clock() -> str:
    return ""  # the messages `conclude` makes up front are never kept


