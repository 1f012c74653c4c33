"""What a context's incremental machinery reads: its messages by id, their order, parsed views and writes.

`Context` owns one `Store` and keeps it current through every edit; watches, tracks and blame read it
(never `Context` itself), so the engine's modules import in one direction: `_context` on top.
"""

from __future__ import annotations

from typing import Any

from ...protocol._messages import Form, MessageInfo, Write, classify
from .._order import Order
from ._index import Layer

Message = dict[str, Any]
Identity = tuple[str, str | None]


class Store:
    """The messages in order (`listed`, parallel to `order.ids`), where each message's stable id is
    (`order`), what each is (`infos`), the writes of the data messages (`writes`), and those writes
    per identity and lane (`layers`), and the ids of the tool and plan messages (`forms`: finding the tools
    and the pending calls costs O(tools and plans), not a look at every message)."""

    __slots__ = ("forms", "infos", "layers", "listed", "order", "writes")

    def __init__(self) -> None:
        self.order = Order()
        # A copy of this is a copy of pointers (the window's autosave snapshot and `Context.messages` copy
        # it on the GUI thread); a message by id is `listed[order.index_of(id)]`.
        self.listed: list[Message] = []
        self.infos: dict[int, MessageInfo] = {}
        self.writes: dict[int, Write] = {}
        self.layers: dict[Identity, Layer] = {}
        self.forms: dict[Form, set[int]] = {Form.TOOL: set(), Form.PLAN: set()}

    def put(self, message_id: int, message: Message) -> MessageInfo:
        """Parse `message`, under `message_id` (a new id, or in place of the message it had); `listed` is the
        caller's."""
        before = self.infos.get(message_id)
        info = self.infos[message_id] = classify(message)
        if before is not None and before.form is not info.form and before.form in self.forms:
            self.forms[before.form].discard(message_id)
        if info.form in self.forms:
            self.forms[info.form].add(message_id)
        return info

    def take(self, message_id: int) -> None:
        """Forget what is known of the message under `message_id`."""
        del self.infos[message_id]
        for ids in self.forms.values():
            ids.discard(message_id)

    def layer(self, identity: Identity) -> Layer:
        """The writes of one identity (made empty on first use)."""
        layer = self.layers.get(identity)
        if layer is None:
            layer = self.layers[identity] = Layer()
        return layer
