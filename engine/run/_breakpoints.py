"""Where `Execution.run()` stops before starting a unit: breakpoints by call or tool, and their conditions."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ..calls._calls import CallPlan
from ..document._context import Context
from ..protocol._errors import ExpressionError
from ..protocol._groups import Unit


def hits_breakpoint(unit: Unit, plans: Sequence[CallPlan], breakpoints: Collection[int | str],
                    conditions: Mapping[int, str], context: Context) -> bool:
    """Whether a member of `unit` has a breakpoint (on its index or its tool's name) whose condition holds."""
    if not breakpoints:  # (a run without any reads no plan here)
        return False
    return any((i in breakpoints or plans[i].tool_name in breakpoints)
               and condition_holds(context, conditions.get(i), plans[i]) for i in unit.members)


def condition_holds(context: Context, condition: str | None, plan: CallPlan) -> bool:
    """A conditional breakpoint holds when its expression is found, for the call's instance, and truthy.

    A malformed condition always stops (better a stop too many than a side effect run past unseen).
    """
    if condition is None:
        return True
    try:
        found = context.resolve(condition, instance=plan.instance)
    except ExpressionError:
        return True
    return found.found and bool(found.value)
