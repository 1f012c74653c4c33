"""Where a context's tool and plan messages are, kept current through its edit signals.

Finding the tools and the pending calls then costs O(tool and plan messages) instead of a look at every
message: the calls panel asks after every edit pause, and a document may hold 100,000 messages.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

from ..protocol._messages import Form
from ._context import Context

_TRACKED = (Form.TOOL, Form.PLAN)


class ToolPlanIndex:
    """The ids of one context's tool and plan messages (ids survive moves; positions are looked up)."""

    def __init__(self, context: Context) -> None:
        self._context = weakref.ref(context)
        self._ids: dict[Form, set[int]] = {form: set() for form in _TRACKED}
        for index in range(len(context)):
            self._note(context, index)
        # psygnal holds bound methods weakly: the index goes with the context.
        context.inserted.connect(self._inserted)
        context.removing.connect(self._removing)
        context.replacing.connect(self._removing)
        context.replaced.connect(self._inserted)

    def _note(self, context: Context, index: int) -> None:
        form = context.info(index).form
        if form in self._ids:
            self._ids[form].add(context.id_at(index))

    def _inserted(self, index: int) -> None:
        context = self._context()
        if context is not None:
            self._note(context, index)

    def _removing(self, index: int) -> None:
        context = self._context()
        if context is not None:
            message_id = context.id_at(index)
            for ids in self._ids.values():
                ids.discard(message_id)

    def indices(self, form: Form, at: int | None = None) -> Iterator[int]:
        """The indices of the messages of `form` (tool or plan) among the first `at`, in order."""
        context = self._context()
        if context is None:
            return iter(())
        found = sorted(context.index_of(message_id) for message_id in self._ids[form])
        return iter(found if at is None else [index for index in found if index < at])


_indexes: weakref.WeakKeyDictionary[Context, ToolPlanIndex] = weakref.WeakKeyDictionary()


def tool_plan_index_of(context: Context) -> ToolPlanIndex:
    """The context's index of tool and plan messages, made on first use (one scan) and kept current after."""
    found = _indexes.get(context)
    if found is None:
        found = _indexes[context] = ToolPlanIndex(context)
    return found
