"""Where `Execution.run()` stops before starting a unit: breakpoints by call or tool, and their conditions."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from ..calls._calls import CallPlan
from ..document._context import Context
from ..protocol._errors import ExpressionError
from ..protocol._groups import Unit


def breakpoint_set(breakpoints: Iterable[Any], calls: int) -> set[int | str]:
    """`Execution(breakpoints=...)` as a set, refused when an item could never stop a run: a breakpoint is a call's
    index (an int from 0 to `calls` - 1) or a tool's name; 1.5, True or 7 of 3 calls would be accepted and never hit."""
    if isinstance(breakpoints, str | bytes) or not isinstance(breakpoints, Iterable):
        raise TypeError(f"breakpoints must be a collection of call indices and tool names, got "
                        f"{type(breakpoints).__name__} {breakpoints!r}")
    kept: set[int | str] = set()
    for item in breakpoints:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise TypeError(f"breakpoint {item!r} is neither a call's index (int) nor a tool's name (str)")
        if isinstance(item, int) and not 0 <= item < calls:
            raise ValueError(f"breakpoint {item} is not a call of the plan: its calls are 0 to {calls - 1}"
                             if calls else f"breakpoint {item} is not a call: the plan has none")
        kept.add(item)
    return kept


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
