"""A call as the engine sees it before (or between) runs: one frozen value for every view (SPEC 6.1–6.9).

`analyse_call(execution, index)` joins what the call says (`CallPlan`: tool, mode, destinations, structural
problems), how its parameters resolve now (each expression with its sources), and where the `Execution`
has it (status, what it waits for, problems found before running: groups and cycles included). The calls
panel, the call inspector, the dialogs and the command line all read this: none of them judges a call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..calls._calls import CallPlan, Mode, Problem, parameter_problems
from ..calls._status import CallState, Status
from ..calls._tools import ToolDefinition
from ..protocol._errors import ExpressionError
from ..protocol._expressions import Reference, find_expressions, unescape
from ..protocol._messages import MISSING
from ..resolve._resolution import Resolution

if TYPE_CHECKING:
    from ..run._execution import Execution

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Lookup:
    """One expression inside a parameter: where it sits in the parameter, its text, how it resolved (None
    with `error` when it is malformed)."""

    where: JsonPath
    expression: str
    resolution: Resolution | None
    error: str | None = None

    @property
    def found(self) -> bool:
        return self.resolution is not None and self.resolution.found


@dataclass(frozen=True)
class Parameter:
    """A parameter (or a latent call's `_output`): as written, and resolved (MISSING while a lookup is not found)."""

    name: str
    written: Any
    resolved: Any
    lookups: tuple[Lookup, ...] = ()

    @property
    def sources(self) -> tuple[int, ...]:
        """The messages its value came from, in order."""
        return tuple(sorted({i for lookup in self.lookups if lookup.resolution for i in lookup.resolution.sources}))

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(path for lookup in self.lookups if lookup.resolution and not lookup.found
                     for path in lookup.resolution.missing)

    @property
    def error(self) -> str | None:
        return next((lookup.error for lookup in self.lookups if lookup.error), None)


@dataclass(frozen=True)
class CallAnalysis:
    """One call: `plan` (what it says), `state` (the Execution's status), `parameters` as resolved now.

    `problems` keep it from running (structure, literal parameters, groups, cycles: `state` is then failed);
    `warnings` judge parameters with the values resolved now, which an earlier call may still change.
    """

    plan: CallPlan
    state: CallState
    parameters: tuple[Parameter, ...]
    problems: tuple[Problem, ...]
    warnings: tuple[Problem, ...]

    @property
    def index(self) -> int:
        return self.plan.index

    @property
    def call(self) -> Any:
        return self.plan.call

    @property
    def tool_name(self) -> str | None:
        return self.plan.tool_name

    @property
    def tool(self) -> ToolDefinition | None:
        return self.plan.tool

    @property
    def mode(self) -> Mode:
        return self.plan.mode

    @property
    def instance(self) -> str | None:
        return self.plan.instance

    @property
    def status(self) -> Status:
        return self.state.status

    @property
    def waiting_for(self) -> tuple[str, ...]:
        return self.state.waiting_for

    @property
    def branches(self) -> tuple[tuple[Reference, ...], ...]:
        """The destinations, one tuple of references per alternative of `_outputPath`."""
        return () if self.plan.destinations is None else self.plan.destinations.alternatives

    @property
    def fire_and_forget(self) -> bool:
        return self.plan.mode is Mode.EXPLICIT and self.plan.output_path is None

    @property
    def ephemeral(self) -> bool:
        """A latent call with nowhere to write: a thought."""
        return self.plan.mode is Mode.LATENT and self.plan.output_path is None

    @property
    def needs_output(self) -> bool:
        """A latent call with a destination and no `_output` waits for a result given from outside."""
        return self.plan.mode is Mode.LATENT and self.plan.destinations is not None and not self.plan.has_output

    @property
    def resolved_call(self) -> dict[str, Any]:
        """The call with its parameters resolved (those still missing left as written)."""
        call = dict(self.call) if isinstance(self.call, dict) else {}
        call.update({p.name: p.resolved for p in self.parameters if p.resolved is not MISSING})
        return call

    @property
    def label(self) -> str:
        return self.plan.label


def analyse_call(execution: Execution, index: int) -> CallAnalysis:
    """Call `index` of `execution` as it stands now, its parameters resolved against the execution's context."""
    plan, state = execution.plans[index], execution.state(index)
    call = plan.call if isinstance(plan.call, dict) else {}
    context = execution.context
    parameters = []
    for name, written in call.items():
        if name.startswith("_") and name != "_output":
            continue
        lookups = []
        for where, text in find_expressions(written):
            try:
                lookups.append(Lookup(where, text, context.resolve(text, instance=plan.instance)))
            except ExpressionError as error:
                lookups.append(Lookup(where, text, None, f"{error.reason} at position {error.position}"))
        found = {lookup.where: lookup.resolution.value for lookup in lookups if lookup.resolution and lookup.found}
        resolved = _substitute(written, (), found) if len(found) == len(lookups) else MISSING
        parameters.append(Parameter(name, written, resolved, tuple(lookups)))
    unresolved = frozenset(p.name for p in parameters if p.resolved is MISSING)
    judged = {p.name: p.resolved for p in parameters if p.name != "_output" and p.resolved is not MISSING}
    problems = execution.problems(index)
    warnings = () if problems else tuple(parameter_problems(plan, judged, unresolved))
    return CallAnalysis(plan, state, tuple(parameters), problems, warnings)


def _substitute(value: Any, where: JsonPath, found: dict[JsonPath, Any]) -> Any:
    """`value` with each expression replaced by its value and each `††` escape undone."""
    if where in found:
        return found[where]
    if isinstance(value, str):
        return unescape(value)
    if isinstance(value, dict):
        return {key: _substitute(item, (*where, key), found) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, (*where, i), found) for i, item in enumerate(value)]
    return value


__all__ = ["CallAnalysis", "Lookup", "Parameter", "analyse_call"]
