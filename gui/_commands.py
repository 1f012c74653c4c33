"""Thin QUndoCommands around the engine's edits (Insert, Remove, Replace, Move): undo is data."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QUndoCommand

from contextdeck.engine import Context, Edit, Insert, Move, Remove, Replace

# Commands with the same id and the same message merge (consecutive typing in one message).
TYPING_ID = 1


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
    """A Replace from the data editor; consecutive ones on the same message merge into one step."""

    def __init__(self, context: Context, index: int, message: dict[str, Any], text: str) -> None:
        super().__init__(context, Replace(index, message), text)
        self._message_id = context.id_at(index)

    def id(self) -> int:
        return TYPING_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        # Keep our inverse (the message before the first keystroke), take the newest message forward.
        if not isinstance(other, TypingCommand) or other._message_id != self._message_id:
            return False
        self._edit = other._edit
        return True


def describe(edit: Edit) -> str:
    """The undo menu's text for an edit."""
    if isinstance(edit, Insert):
        return f"Insert message {edit.index}"
    if isinstance(edit, Remove):
        return f"Delete message {edit.index}"
    if isinstance(edit, Move):
        return f"Move message {edit.src} to {edit.dst}"
    return f"Edit message {edit.index}"
