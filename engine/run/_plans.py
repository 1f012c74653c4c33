"""`Plans`: each call's plan (`Execution.plans`), a settled call's dropped and planned again when it is read.

A call's plan (`CallPlan`: its tool, mode, parsed output path and reads) is what `plan_call` makes of the call,
the set-up's tools and the activity it runs, and of nothing else. A long run keeps little of a call once it is
done: a tick without a pace (the command line) drops the plan of each call that is done, keeping only its
activity, and whoever reads it gets it planned again, equal to the one dropped. The window paces its ticks and
reads the plans it shows again and again: it keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from ..calls._activities import Activities, Activity
from ..calls._calls import CallPlan, Mode, plan_call
from ..calls._tools import ToolDefinition


class Plans(Sequence[CallPlan]):
    """The calls' plans in call order; a dropped one is kept as its activity (None: it has none)."""

    __slots__ = ("_calls", "_kept", "_tools")

    def __init__(self, plans: list[CallPlan], calls: list[Any], tools: dict[str, ToolDefinition]) -> None:
        self._kept: list[CallPlan | Activity | None] = list(plans)
        self._calls, self._tools = calls, tools

    def __len__(self) -> int:
        return len(self._kept)

    @overload
    def __getitem__(self, index: int) -> CallPlan: ...

    @overload
    def __getitem__(self, index: slice) -> list[CallPlan]: ...

    def __getitem__(self, index: int | slice) -> CallPlan | list[CallPlan]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        kept = self._kept[index]
        if isinstance(kept, CallPlan):
            return kept
        index %= len(self._kept)  # (the plan's own index is never negative)
        activity = Activities(() if kept is None else (kept,))  # the one it was planned with, loaded or not now
        return plan_call(index, self._calls[index], self._tools, activity)

    def __iter__(self) -> Iterator[CallPlan]:
        return map(self.__getitem__, range(len(self._kept)))

    def __setitem__(self, index: int, plan: CallPlan) -> None:
        self._kept[index] = plan

    def drop(self, index: int) -> None:
        """Keep of call `index`'s plan only its activity. A call without a destination is kept whole (whether
        it is fire-and-forget is read of every settled call), as is one planned from an edited call."""
        kept = self._kept[index]
        if type(kept) is CallPlan and kept.destinations is not None and kept.call is self._calls[index]:
            self._kept[index] = kept.activity

    def fire_and_forget(self, index: int) -> bool:
        """Whether call `index` runs an activity and writes nothing (SPEC 6.6), without planning it again."""
        kept = self._kept[index]
        return type(kept) is CallPlan and kept.mode is Mode.EXPLICIT and kept.destinations is None
