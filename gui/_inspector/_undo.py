"""Undo for what the debugger does: a run's appended outputs, and Restart, as steps of the window's undo stack."""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from contextdeck.engine import Context, Edit, Insert, Remove


class AppliedEdits(QUndoCommand):
    """Edits that are already applied (the engine appended a step's outputs): the first redo does nothing.

    Undo applies the inverses in reverse order; a later redo applies the edits again.
    """

    def __init__(self, context: Context, edits: list[Edit], text: str, applied: bool = True) -> None:
        super().__init__(text)
        self._context = context
        self._edits = list(edits)
        self._inverses: list[Edit] = []
        self._skip = applied
        if applied:
            self._inverses = _inverses_of_appended(context, edits)

    def redo(self) -> None:
        if self._skip:
            self._skip = False
            return
        self._inverses = [self._context.apply(edit) for edit in self._edits]

    def undo(self) -> None:
        self._edits = [self._context.apply(inverse) for inverse in reversed(self._inverses)][::-1]


def _inverses_of_appended(context: Context, edits: list[Edit]) -> list[Edit]:
    """The inverse of each already applied Insert is the Remove of where it landed."""
    inverses: list[Edit] = []
    for edit in edits:
        if not isinstance(edit, Insert):
            raise TypeError("only appended messages can be recorded after the fact")
        inverses.append(Remove(edit.index))
    return inverses
