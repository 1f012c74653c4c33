"""What a context's incremental machinery reads: its messages by id, their order, parsed views and writes.

`Context` owns one `Store` and keeps it current through every edit; watches, tracks and blame read it
(never `Context` itself), so the engine's modules import in one direction: `_context` on top.
"""

from __future__ import annotations

from typing import Any

from ...protocol._messages import Form, MessageInfo, Write, classify
from .._graveyard import let_go
from .._order import Order
from ._index import Layer

Message = dict[str, Any]
Identity = tuple[str, str | None]
# What `Store.infos` holds under an id no message has (an id removed, and 0, which no message is given).
GONE = MessageInfo(Form.TEXT)
# What `Store.writes` holds under an id whose message writes nothing now (not a data message, or gone).
NO_WRITE = Write((), "set", None)


class Store:
    """The messages in order (`listed`, parallel to `order.ids`), where each message's stable id is
    (`order`), what each is (`infos`), the writes of the data messages (`writes`), and those writes
    per identity and lane (`layers`), and the ids of the tool, plan and advisor messages (`forms`: finding the
    tools, the pending calls and the advisors costs O(those messages), not a look at every message)."""

    __slots__ = ("forms", "infos", "layers", "listed", "order", "writes")

    def __init__(self) -> None:
        self.order = Order()
        # A copy of this is a copy of pointers (the window's autosave snapshot and `Context.messages` copy
        # it on the GUI thread); a message by id is `listed[order.index_of(id)]`.
        self.listed: list[Message] = []
        # What each message is, by id (ids count up from 1 and are never reused): a list, 8 bytes a message where
        # a dict's table is 52 at 100,000. `GONE` under an id no message has now (`info_of` says None there).
        self.infos: list[MessageInfo] = [GONE]
        # The write of each data message by id, parallel to `infos` (`NO_WRITE` where there is none); what the
        # folds read in their inner loops, without asking `infos` for its attribute each time.
        self.writes: list[Write] = [NO_WRITE]
        self.layers: dict[Identity, Layer] = {}
        self.forms: dict[Form, set[int]] = {Form.TOOL: set(), Form.PLAN: set(), Form.ADVISOR: set()}

    def __del__(self) -> None:
        # Freed a slice at a time where the graveyard is on (`let_go`), not all at once by its last holder; a layer's
        # lists buried before the dicts that hold them (the last buried is freed first), to be alone when freed.
        order, layers = self.order, self.layers.values()
        let_go(*(ids for layer in layers for ids in (layer.all, layer.universal, *layer.lanes.values(),
                                                       *layer.wide.values())),
               *(held for layer in layers for held in (layer.lanes, layer.wide, layer.branches, layer.answers)),
               self.layers, order.key, order.keys, order.ids, self.infos, self.writes, self.listed)

    def put(self, message_id: int, message: Message) -> MessageInfo:
        """Parse `message`, under `message_id` (a new id, or in place of the message it had); `listed` is the
        caller's."""
        infos = self.infos
        info = classify(message)
        if message_id == len(infos):  # a new message (every message while a context is built or a run appends)
            infos.append(info)
            self.writes.append(NO_WRITE)
            before = GONE
        else:
            before, infos[message_id] = infos[message_id], info
        if before is not GONE and before.form is not info.form and before.form in self.forms:
            self.forms[before.form].discard(message_id)
        if info.form in self.forms:
            self.forms[info.form].add(message_id)
        return info

    def take(self, message_id: int) -> None:
        """Forget what is known of the message under `message_id`."""
        self.infos[message_id] = GONE
        for ids in self.forms.values():
            ids.discard(message_id)

    def info_of(self, message_id: int) -> MessageInfo | None:
        """What the message with `message_id` is; None when no message has that id now."""
        info = self.infos[message_id] if 0 < message_id < len(self.infos) else GONE
        return None if info is GONE else info

    def layer(self, identity: Identity) -> Layer:
        """The writes of one identity (made empty on first use)."""
        layer = self.layers.get(identity)
        if layer is None:
            layer = self.layers[identity] = Layer()
        return layer
