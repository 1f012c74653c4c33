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

A document opens in two steps: `documentReplaced` (every view drops the old document and takes the new one,
nothing selected), then, in a turn after the window's repaint of that (`open_after`), its last message is
selected (the editor makes its form) and `documentShown` says the document is shown with its selection in
place. Each step with its repaint is a frame's work at a million messages; both in one turn were not. An empty
document is shown at once (nothing to select). Whatever needs the selection waits for `documentShown` (or
reads `is_shown`). Nothing the user does lands in between: the first input event (a key, a click, a drop, a
close) finishes the opening before it is delivered, so it acts on the document as shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from contextdeck.engine import Context, Document

from ._engine_signals import connect_all
from ._first_input import FirstInput
from ._slices import slices

if TYPE_CHECKING:  # the session imports the inspector, which imports the commands, which read this model
    from ._session import DocumentSession

REFRESH_MS = 40  # the views that recompute wait this long after an edit: typing stays cheap
# While a run appends its outputs, the views that recompute follow at most this often: a recompute inside a short
# run costs as much as a third of the run, and a long run's views still move on a few times a second.
REFRESH_WHILE_RUNNING_MS = 500
# A new document's selection waits for `open_after` at most this long: for a loop that does not say when its turns
# begin. (A window repaints a few milliseconds after it is asked to, later on a loaded machine.)
OPEN_WAIT_S = 1.0


class DocumentModel(QObject):
    """The open document, the selection and the time cursor, with a signal for each change."""

    documentReplaced = Signal()  # another document is open (new, opened, recovered, imported); nothing selected yet
    documentShown = Signal()  # the document `documentReplaced` told of is shown, its selection in place
    changed = Signal()  # an edit, an undo or a redo (the undo stack moved)
    messageSelected = Signal(int)  # the selected message's index
    selectionCleared = Signal()  # no row is current any more (the last message deleted or its insert undone)
    cursorChanged = Signal(object)  # the message the views show the context as of (int), or None: the latest
    selectRequested = Signal(int)  # a component asks for message `index` to be selected (the timeline does it)
    messageReplaced = Signal(int)  # message `index` was replaced (an edit, an undo, a redo, a run)
    viewsDue = Signal()  # the views that recompute read the document and the cursor again now (paced)

    def __init__(self, session: DocumentSession, parent: QObject | None = None, *,
                 input_targets: Callable[[], list[QObject]] | None = None) -> None:
        """`input_targets()` (read at each opening) are where the first input event that finishes a pending opening
        is watched for (`FirstInput`); by default, the application: every event."""
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
        self._opening = QTimer(self, singleShot=True, interval=0)  # a new document's selection: on a coming turn
        self._opening.timeout.connect(self._opening_due)
        self._ready: Callable[[], bool] = lambda: True
        self._open_by = 0.0
        self._due = False  # the new document's selection waits for its slice (`_opening_due`)
        self._opened = True  # the document is shown with its selection in place
        self._chosen = False  # a selection was made since the document was replaced: the opening keeps it
        self._input = FirstInput(self.finish_opening, self, targets=input_targets)
        if len(self.context()):  # a session that has a document already opens it as a replaced one does
            self._open()
            self._input.start()
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
        self._chosen = self._chosen or index is not None
        self._selected_id = None if index is None else self.context().id_at(index)
        if index is not None:
            self.messageSelected.emit(index)
        if not self._follow:
            self.cursorChanged.emit(self.time_cursor())
        self._soon.start()

    def clear_selection(self) -> None:
        """No row is current: nothing is selected, and the views that show the selection show nothing."""
        self.set_selected(None)
        self.selectionCleared.emit()

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
        """A new document's selection, or a selection's or an edit's `viewsDue`, is still to come."""
        return not self._opened or self._soon.isActive() or self._later.isActive()

    # -- opening a document ----------------------------------------------------------------------------

    def open_after(self, ready: Callable[[], bool]) -> None:
        """A new document's selection waits until `ready()` (the window has repainted the document's views),
        `OPEN_WAIT_S` at most."""
        self._ready = ready

    def is_shown(self) -> bool:
        """The document is shown with its selection in place (`documentShown` has been sent for it)."""
        return self._opened

    def finish_opening(self) -> None:
        """Select the last message of the document just opened (unless something was selected since), then
        `documentShown`; nothing when it is shown already. In a turn after the window's repaint of the new
        document (`open_after`), or before the first input event that comes sooner."""
        if self._input.watching:
            self._input.stop()
        if self._opened:
            return
        self._opened = True
        self._due = False
        self._opening.stop()
        if not self._chosen:
            self.select_message(len(self.context()) - 1)  # every view opens on the whole context, as of its latest
        self.documentShown.emit()

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
        self._open()  # before the views are told: a message one of them selects is kept
        self.documentReplaced.emit()
        if not len(self.context()):
            self.finish_opening()  # nothing to select: shown as it is
        elif not self._opened:
            self._input.start()  # after the views' own events: no input reaches them within this call
        self._later.start()

    def _opening_due(self) -> None:
        if not self._ready() and time.perf_counter() < self._open_by:
            self._opening.start()
            return
        # The selection (the editor's form of the last message) as a slice of the window's turns: never in the
        # turn of another slice (a view's, the calls panel's analysis) or one that began busy.
        self._due = True
        slices().start(self._open_in_a_slice)

    def _open_in_a_slice(self) -> None:
        if self._due:
            self.finish_opening()

    def _open(self) -> None:
        self._opened = False
        self._due = False  # (a slice still due for the document before does nothing)
        self._open_by = time.perf_counter() + OPEN_WAIT_S
        self._opening.start()
        self._chosen = False

    def _follow_context(self) -> None:
        context = self.context()
        if context is not self._context:
            if self._context is not None:
                self._context.replaced.disconnect(self._message_replaced)
            self._context = context
            connect_all([(context.replaced, self._message_replaced)])

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
