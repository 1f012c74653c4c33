"""A read-only view of a context's messages at one moment: what rendering and validation read.

`Context` is not thread-safe and building another one indexes every message again; a view is two sequences
copied from it (milliseconds at 100,000 messages; `Context.view_steps` copies a step at a time), safe to hand to
a worker thread while the context goes on changing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..protocol._messages import MessageInfo

Message = dict[str, Any]


class Messages(Protocol):
    """What `render`, `validate` and the tool lookups read: a `Context` or a `ContextView`."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Message: ...

    def info(self, index: int) -> MessageInfo: ...


@dataclass(frozen=True)
class ContextView:
    """The messages and their parsed views, frozen as they were when `Context.view()` was called."""

    messages: Sequence[Message]  # never changed once the view is made
    infos: Sequence[MessageInfo]

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    def info(self, index: int) -> MessageInfo:
        return self.infos[index]
