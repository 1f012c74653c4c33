"""Thin QUndoCommands around the engine's edits (Insert, Remove, Replace, Move): undo is data."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QUndoCommand

from contextdeck.engine import Context, Edit, Insert, Move, Remove, Replace

# Commands with the same id, the same message and the same field merge (consecutive typing in one field).
TYPING_ID = 1
_ABSENT = object()


class EditCommand(QUndoCommand):
    """Apply one engine edit on redo, its inverse on undo."""

    def __init__(self, context: Context, edit: Edit, text: str) -> None:
        super().__init__(text)
        self._context = context
        self._edit = edit
        self._inverse: Edit | None = None

    @property
    def edit(self) -> Edit:
        return self._edit

    def redo(self) -> None:
        self._inverse = self._context.apply(self._edit)

    def undo(self) -> None:
        assert self._inverse is not None
        self._edit = self._context.apply(self._inverse)


class TypingCommand(EditCommand):
    """A Replace from the message editor; consecutive ones in the same field of the same message merge into
    one step, as typing does in a text editor. Another field (or adding and removing keys) starts a new
    step, so undo takes back one field's edit at a time."""

    def __init__(self, context: Context, index: int, message: dict[str, Any], text: str) -> None:
        super().__init__(context, Replace(index, message), text)
        self._message_id = context.id_at(index)
        self._field = changed_field(context[index], message)

    def id(self) -> int:
        return TYPING_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        # Keep our inverse (the message before the first keystroke), take the newest message forward.
        if not isinstance(other, TypingCommand) or (other._message_id, other._field) != (self._message_id, self._field):
            return False
        self._edit = other._edit
        return True


def changed_field(old: Any, new: Any) -> tuple[str | int, ...] | None:
    """Where one edit changed a message: the path down to the one value that differs (a scalar typed into,
    a key added or removed, or the container of several changes or of items added or removed); None when
    nothing differs."""
    if old == new:
        return None
    path: list[str | int] = []
    while True:
        if isinstance(old, dict) and isinstance(new, dict):
            # A key added or removed is a change at that key: the first keystroke into an empty
            # description adds it, and merges with the typing after it.
            differing = [key for key in old.keys() | new.keys() if old.get(key, _ABSENT) != new.get(key, _ABSENT)]
            if len(differing) == 1 and (differing[0] not in old or differing[0] not in new):
                return (*path, differing[0])
        elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            differing = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        else:
            return tuple(path)
        if len(differing) != 1:
            return tuple(path)
        path.append(differing[0])
        old, new = old[differing[0]], new[differing[0]]


def describe(edit: Edit) -> str:
    """The undo menu's text for an edit."""
    if isinstance(edit, Insert):
        return f"Insert message {edit.index}"
    if isinstance(edit, Remove):
        return f"Delete message {edit.index}"
    if isinstance(edit, Move):
        return f"Move message {edit.src} to {edit.dst}"
    return f"Edit message {edit.index}"
