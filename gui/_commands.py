"""The command API: the one way the open document changes, and its undo history.

Every change to the document is an engine edit (Insert, Remove, Replace, Move) or a change of the saved
request's solution or schema, wrapped in a thin `QUndoCommand` (undo is data) and pushed by `Commands` on
the session's undo stack. Views never call the document's mutators: the editor sends `message_edited`, the
timeline `moveRequested`, and the window or an installed component turns them into a command here.
`tests/gui/test_one_command_api.py` checks that nothing else in `gui/` writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QUndoCommand, QUndoStack

from contextdeck.engine import (
    MISSING,
    Context,
    Document,
    Edit,
    Insert,
    Move,
    Remove,
    Replace,
    Shape,
    TurnChange,
    content_problem,
)

if TYPE_CHECKING:
    from ._document_model import DocumentModel

# Commands with the same id, the same message and the same field merge (consecutive typing in one field).
TYPING_ID = 1
_ABSENT = object()


class Commands(QObject):
    """Insert, delete, move, replace and edit messages, set the request's solution or schema, take a turn,
    record what a run wrote; undo and redo. Each is one step of the undo stack; an edit the document
    refuses (content that could not be saved) changes nothing and is said by `refused`."""

    refused = Signal(str)  # why an edit was refused, for the status bar
    turnChanged = Signal()  # the calls the document asks to run were replaced (a turn or solution, or its undo)
    # A run's step (or Restart, or a planned turn: `record`, `apply_all`) undone or redone: "Undone: Run call #0 (…)".
    replayed = Signal(str)

    def __init__(self, document: DocumentModel, stack: QUndoStack, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document = document
        self._stack = stack

    # -- messages -----------------------------------------------------------------------------------

    def apply(self, edit: Edit, text: str | None = None) -> bool:
        """Apply an engine edit as one undo step, then select what it touched; False when refused."""
        if isinstance(edit, Insert | Replace) and self._refused(edit.message, edit.index):
            return False
        command = EditCommand(self._context(), edit, text or describe(edit))
        self._stack.push(command)
        target, count = command.edit, len(self._context())
        if isinstance(target, Move):
            self._document.select_message(target.dst)
        elif isinstance(target, Insert | Replace | Remove) and count:
            self._document.select_message(min(target.index, count - 1))
        return True

    def insert(self, index: int, message: dict[str, Any], text: str | None = None) -> bool:
        return self.apply(Insert(index, message), text)

    def delete(self, index: int) -> bool:
        return self.apply(Remove(index))

    def move(self, src: int, dst: int) -> bool:
        return self.apply(Move(src, dst))

    def replace(self, index: int, message: dict[str, Any], text: str | None = None) -> bool:
        return self.apply(Replace(index, message), text)

    def edit_message(self, index: int, before: dict[str, Any], after: dict[str, Any]) -> bool:
        """The editor's edit of message `index`, made from `before`: written only while `before` is still the
        document's message (else it would overwrite what the user did not edit), and merged with the typing
        before it in the same field. False when refused (the editor shows the document's message again)."""
        current = self._context()[index]
        if before is not current and before != current:
            return False
        if self._refused(after, index):
            return False
        self._stack.push(TypingCommand(self._context(), index, after, f"Edit message {index}"))
        return True

    def apply_all(self, text: str, edits: list[Edit]) -> None:
        """Several engine edits as one undo step (Restart's removal of a run's outputs)."""
        self._stack.push(AppliedEdits(self._context(), edits, text, applied=False, told=self.replayed.emit))

    def record(self, text: str, edits: list[Edit]) -> None:
        """Messages a run has appended already, recorded as one undo step (its undo removes them)."""
        self._stack.push(AppliedEdits(self._context(), edits, text, applied=True, told=self.replayed.emit))

    # -- the saved request --------------------------------------------------------------------------------

    def set_solution(self, solution: Any, text: str) -> None:
        """The request's solution replaced (the model's answer to the whole request)."""
        self._stack.push(TurnCommand(self, self._document.document, TurnChange(None, solution), text))

    def take_turn(self, change: TurnChange, text: str = "Take the next turn") -> None:
        """A turn taken: its plan message appended and (a saved request) its solution set, as one step."""
        self._stack.push(TurnCommand(self, self._document.document, change, text))

    def set_request_schema(self, schema: Any) -> None:
        """The document's request schema (None removes it); a bare context becomes a saved request."""
        self._stack.push(RequestSchemaCommand(self._document.document, schema))

    # -- history ------------------------------------------------------------------------------------------

    def undo(self) -> None:
        self._stack.undo()

    def redo(self) -> None:
        self._stack.redo()

    def undo_action(self, parent: QObject, text: str) -> QAction:
        return self._stack.createUndoAction(parent, text)

    def redo_action(self, parent: QObject, text: str) -> QAction:
        return self._stack.createRedoAction(parent, text)

    def _context(self) -> Context:
        return self._document.context()

    def _refused(self, message: dict[str, Any], index: int) -> bool:
        problem = content_problem(message, index)
        if problem is not None:
            self.refused.emit(f"Edit refused: {problem}")
        return problem is not None


def apply_unrecorded(context: Context, edits: list[Edit]) -> None:
    """Edits of a context that is not the open document (a delegate session's own): no undo step."""
    for edit in edits:
        context.apply(edit)


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
        # Typed back to where it began (the field's own undo, a word typed and erased): the step would change nothing,
        # and Ctrl+Z once the field had nothing left said "Undone: Edit message 5" for nothing. Qt drops it.
        if isinstance(self._inverse, Replace) and isinstance(self._edit, Replace) \
                and same_json_text(self._inverse.message, self._edit.message):
            self.setObsolete(True)
        return True


class AppliedEdits(QUndoCommand):
    """Several edits as one step. Already applied ones (the engine appended a step's outputs): the first redo
    does nothing. Undo applies the inverses in reverse order; a later redo applies the edits again. `told` hears
    each undo and each later redo ("Undone: …", "Redone: …"), not the push."""

    def __init__(self, context: Context, edits: list[Edit], text: str, applied: bool = True,
                 told: Callable[[str], object] | None = None) -> None:
        super().__init__(text)
        self._context = context
        self._edits = list(edits)
        self._inverses: list[Edit] = []
        self._skip = applied
        self._pushed = False
        self._told = told or (lambda _note: None)
        if applied:
            self._inverses = _inverses_of_appended(edits)

    def redo(self) -> None:
        pushed, self._pushed = self._pushed, True
        if self._skip:
            self._skip = False
            return
        self._inverses = [self._context.apply(edit) for edit in self._edits]
        if pushed:
            self._told(f"Redone: {self.text()}")

    def undo(self) -> None:
        self._edits = [self._context.apply(inverse) for inverse in reversed(self._inverses)][::-1]
        self._told(f"Undone: {self.text()}")


def _inverses_of_appended(edits: list[Edit]) -> list[Edit]:
    """The inverse of each already applied Insert is the Remove of where it landed."""
    inverses: list[Edit] = []
    for edit in edits:
        if not isinstance(edit, Insert):
            raise TypeError("only appended messages can be recorded after the fact")
        inverses.append(Remove(edit.index))
    return inverses


class TurnCommand(QUndoCommand):
    """A turn taken: its meta message (016) and its plan message appended (when it has them) and (a saved
    request) its solution set; undo takes them back. The commands' `turnChanged` follows each way."""

    def __init__(self, commands: Commands, document: Document, change: TurnChange, text: str) -> None:
        super().__init__(text)
        self._commands, self._document, self._change = commands, document, change
        self._old_solution = document.solution
        self._inverses: list[Edit] = []

    def redo(self) -> None:
        context = self._document.context
        appended = [message for message in (self._change.meta, self._change.plan) if message is not None]
        self._inverses = [context.apply(Insert(len(context), message)) for message in appended]
        if self._change.solution is not MISSING:
            self._document.solution = self._change.solution
        self._commands.turnChanged.emit()

    def undo(self) -> None:
        for inverse in reversed(self._inverses):
            self._document.context.apply(inverse)
        self._document.solution = self._old_solution
        self._commands.turnChanged.emit()


class RequestSchemaCommand(QUndoCommand):
    """Sets the document's request schema (None removes it); a bare context becomes a saved request."""

    def __init__(self, document: Document, schema: Any) -> None:
        super().__init__("Edit request schema")
        self._document = document
        self._after = (schema, Shape.REQUEST)
        self._before = (document.schema, document.shape)

    def redo(self) -> None:
        self._document.schema, self._document.shape = self._after

    def undo(self) -> None:
        self._document.schema, self._document.shape = self._before


def changed_field(old: Any, new: Any) -> tuple[str | int, ...] | None:
    """Where one edit changed a message: the path down to the one value that differs (a scalar typed into,
    a key added or removed, or the container of several changes or of items added or removed); None when
    nothing differs. Values differ as the document writes them: typing `75.` makes 75 the number 75.0."""
    if same_json_text(old, new):
        return None
    path: list[str | int] = []
    while True:
        if isinstance(old, dict) and isinstance(new, dict):
            # A key added or removed is a change at that key: the first keystroke into an empty
            # description adds it, and merges with the typing after it.
            differing = [key for key in old.keys() | new.keys()
                         if not same_json_text(old.get(key, _ABSENT), new.get(key, _ABSENT))]
            if len(differing) == 1 and (differing[0] not in old or differing[0] not in new):
                return (*path, differing[0])
        elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            differing = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if not same_json_text(a, b)]
        else:
            return tuple(path)
        if len(differing) != 1:
            return tuple(path)
        path.append(differing[0])
        old, new = old[differing[0]], new[differing[0]]


def same_json_text(a: Any, b: Any) -> bool:
    """Whether two values are written alike: Python's `==` takes 75 for 75.0 and 1 for true, which the document
    writes apart. Key order does not count."""
    if a is b:
        return True
    if a != b:
        return False
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def describe(edit: Edit) -> str:
    """The undo menu's text for an edit."""
    if isinstance(edit, Insert):
        return f"Insert message {edit.index}"
    if isinstance(edit, Remove):
        return f"Delete message {edit.index}"
    if isinstance(edit, Move):
        return f"Move message {edit.src} to {edit.dst}"
    return f"Edit message {edit.index}"
