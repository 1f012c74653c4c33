"""`DocumentModel`: the open document and where the user is in it, the one thing every view reads.

It holds what the window shows and nothing it draws: the session's document, the selected message (by its
stable id, so an edit above it does not move the selection), and the time cursor (the selected message, or
the latest when following). Every view subscribes to its signals itself (each view's `follow(document)`)
and reads it; the window pushes nothing into a view. Views never write through it: the document changes
only through `Commands` (gui/_commands.py), and the selection only from the timeline, which the window
keeps in step (`selectRequested`).

`viewsDue` paces the views that recompute (state, LLM view, watches): on the next turn after a selection
(once the timeline has drawn a far jump's rows: `wait_while`), `REFRESH_MS` after the last edit (typing
stays cheap), at once when Follow Latest is switched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from contextdeck.engine import Context, Document

if TYPE_CHECKING:  # the session imports the inspector, which imports the commands, which read this model
    from ._session import DocumentSession

REFRESH_MS = 40  # the views that recompute wait this long after an edit: typing stays cheap
# While a run appends its outputs, the views that recompute follow at most this often: a recompute inside a short
# run costs as much as a third of the run, and a long run's views still move on a few times a second.
REFRESH_WHILE_RUNNING_MS = 500


class DocumentModel(QObject):
    """The open document, the selection and the time cursor, with a signal for each change."""

    documentReplaced = Signal()  # another document is open (new, opened, recovered, imported)
    changed = Signal()  # an edit, an undo or a redo (the undo stack moved)
    messageSelected = Signal(int)  # the selected message's index
    cursorChanged = Signal(object)  # the message the views show the context as of (int), or None: the latest
    selectRequested = Signal(int)  # a component asks for message `index` to be selected (the timeline does it)
    messageReplaced = Signal(int)  # message `index` was replaced (an edit, an undo, a redo, a run)
    viewsDue = Signal()  # the views that recompute read the document and the cursor again now (paced)

    def __init__(self, session: DocumentSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._selected_id: int | None = None
        self._follow = False
        self._soon = QTimer(self, singleShot=True, interval=0)  # a selection's: on the next turn
        self._soon.timeout.connect(self._selection_shown)
        self._later = QTimer(self, singleShot=True, interval=REFRESH_MS)  # an edit's
        self._later.timeout.connect(self.show_views)
        self._running = False  # a run appends its outputs (`pace_for_a_run`)
        self._wait: Callable[[], bool] = lambda: False
        self._context: Context | None = None
        # Bound methods, never lambdas: Qt drops these connections when the model is destroyed.
        session.documentReplaced.connect(self._replaced)
        session.undo_stack.indexChanged.connect(self._changed)
        self._follow_context()

    # -- reading ------------------------------------------------------------------------------------

    @property
    def document(self) -> Document:
        return self._session.document

    @property
    def path(self) -> Path | None:
        return self._session.path

    def context(self) -> Context:
        """The open document's context (the engine's own object: read it, never edit it)."""
        return self._session.document.context

    def selected_message(self) -> int | None:
        """The index of the selected message, or None."""
        if self._selected_id is None:
            return None
        try:
            return int(self.context().index_of(self._selected_id))
        except KeyError:
            return None

    def follows_latest(self) -> bool:
        return self._follow

    def time_cursor(self) -> int | None:
        """The message the views show the context as of, or None when they follow the latest."""
        return None if self._follow else self.selected_message()

    def at(self) -> int | None:
        """The cursor as the engine's `at` (a count of messages), None for all."""
        cursor = self.time_cursor()
        return None if cursor is None else cursor + 1

    # -- where the user is (never the document) --------------------------------------------------------

    def select_message(self, index: int) -> None:
        """Ask for message `index` to be selected; the timeline selects it, and `set_selected` follows."""
        if 0 <= index < len(self.context()):
            self.selectRequested.emit(index)

    def set_selected(self, index: int | None) -> None:
        """The timeline's current row changed to message `index` (None: a call, the solution or nothing)."""
        self._selected_id = None if index is None else self.context().id_at(index)
        if index is not None:
            self.messageSelected.emit(index)
        if not self._follow:
            self.cursorChanged.emit(self.time_cursor())
        self._soon.start()

    def set_follow_latest(self, follow: bool) -> bool:
        """Follow the latest message (or the selection again); True when that changed the cursor."""
        if follow == self._follow:
            return False
        self._follow = follow
        self.cursorChanged.emit(self.time_cursor())
        self.show_views()
        return True

    # -- pacing the views --------------------------------------------------------------------------

    def wait_while(self, busy: Callable[[], bool]) -> None:
        """A selection's `viewsDue` waits while `busy()` (the timeline drawing a far jump's rows first)."""
        self._wait = busy

    def selection_pending(self) -> bool:
        """A selection's `viewsDue` is still to come."""
        return self._soon.isActive()

    def views_pending(self) -> bool:
        """A selection's or an edit's `viewsDue` is still to come."""
        return self._soon.isActive() or self._later.isActive()

    def show_views(self) -> None:
        """`viewsDue` now (and not again for what was pending)."""
        self._soon.stop()
        self._later.stop()
        self.viewsDue.emit()

    def _selection_shown(self) -> None:
        if self._wait():
            self._soon.start()  # a far jump's rows take their turns first; the views' slices follow
            return
        self.show_views()

    def _replaced(self) -> None:
        self._selected_id = None
        self._follow_context()
        self.documentReplaced.emit()
        self._later.start()

    def _follow_context(self) -> None:
        context = self.context()
        if context is not self._context:
            if self._context is not None:
                self._context.replaced.disconnect(self._message_replaced)
            self._context = context
            context.replaced.connect(self._message_replaced)

    def _message_replaced(self, index: int) -> None:
        self.messageReplaced.emit(index)

    def pace_for_a_run(self, running: bool) -> None:
        """While a run appends (`running`), an edit's `viewsDue` comes `REFRESH_WHILE_RUNNING_MS` after the first
        edit not yet shown, however many follow; after it, `REFRESH_MS` after the last edit again."""
        self._running = running
        self._later.setInterval(REFRESH_WHILE_RUNNING_MS if running else REFRESH_MS)
        if not running and self._later.isActive():
            self._later.start()

    def _changed(self, _index: int) -> None:
        self.changed.emit()
        if not (self._running and self._later.isActive()):
            self._later.start()
