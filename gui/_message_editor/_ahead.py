"""`FormsAhead`: while the window is idle, the message editor makes the forms the next selections will need.

Without this, the first message of each shape a user selects (the first state, input or data message of a kind)
would make its form inside the selection's call: widgets made, polished under the application's style sheet,
shown and laid out for the first time. Here the
messages either side of the selection and a few spread over the document are shown to the editor's `prepare`
while nothing else is happening: a form is made in one turn and shown once (out of sight) in the next. A
selection that comes first makes its form itself, complete, in its own call, as before: what the user sees and
types into never depends on this.

A document that opens makes the form of the message it opens on before that message is selected (`opening`):
its pieces (the body's page, a payload's form, a plan's call boxes), then each shown once, a slice of the
window's turns each, between the hand-over of the document and its selection (which waits for them,
`opening_pending`); the last piece has the editor show the message, so that the selection finds it shown and
its turn has the timeline's and the other views' share only. At a million messages a plan's boxes made in the
selection's turn, with its repaint, were more than a frame, and so were the editor's parts shown and painted
with the rest of the selection.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from contextdeck.engine import Context

from .._slices import Budget, slices
from ._editor import MessageEditor

IDLE_MS = 250  # quiet this long after a selection (the views have caught up) before the first form is made
NEXT_MS = 30  # between two forms made ahead, each in a turn of its own
NEAR = 3  # messages either side of the selection: stepping through the timeline selects them next
SPREAD = 32  # messages evenly spread over the document: its common shapes
LOOK_S = 0.003  # the share of its turn of a slice looking at messages whose forms are there already (`Budget`)


class FormsAhead(QObject):
    """Shows the editor the messages around the selection, then across the document, when the window is idle.

    `messages()` is the document; `busy()` says the window still has work of its own queued
    (a selection's views, a far jump's rows, a modal dialog open over it), which always goes first."""

    def __init__(self, editor: MessageEditor, messages: Callable[[], Context], busy: Callable[[], bool],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._messages = messages
        self._busy = busy
        self._document: Context | None = None
        self._spread: list[int] = []  # the document's messages not looked at yet
        self._next: deque[tuple[int, bool]] = deque()  # (message, may push out a form seen before)
        self._timer = QTimer(self, singleShot=True, interval=IDLE_MS)
        self._timer.timeout.connect(self._due)
        self._queued = False  # the timer fired: `_work` waits for its slice
        self._opening: tuple[Context, int] | None = None  # the document opening, and the message it opens on
        self._showing = False  # the opening's pieces are made: each is shown once
        self._show_message = False  # the last piece has the editor show the opening's message (`shown`)

    def opening(self, index: int) -> None:
        """The document is opening on message `index`: make its form now, a piece a slice (`opening_pending`)."""
        self._opening, self._showing, self._show_message = (self._messages(), index), False, True
        slices().start(self._open_a_piece)

    def shown(self, selected: int | None) -> None:
        """The document opened is shown, message `selected` selected (None: none, a timeline filter hides the one
        it opens on): the pieces still to come no longer show the opening's message, and with nothing selected
        the editor shows none either (the window edits the selected message: an edit there would be lost)."""
        self._show_message = False
        if selected is None and self._editor.message() is not None:
            self._editor.set_message(None, None)

    def opening_pending(self) -> bool:
        """Whether pieces of the opening's form are still to be made or shown."""
        return self._opening is not None

    def _open_a_piece(self) -> None:
        if self._opening is None:
            return
        document, index = self._opening
        if document is not self._messages() or not 0 <= index < len(document):
            self._opening = None  # another document opened meanwhile: it has its own opening
            return
        if self._showing:
            more = self._editor.show_prepared()
        elif not self._editor.prepare(document[index], push_out=True):
            self._showing = True
            more = self._editor.show_prepared()
        else:
            more = True
        if more:  # (this slice made or showed a piece: the next piece, or the message shown, in a later one)
            slices().start(self._open_a_piece)
            return
        self._opening = None
        if self._show_message and self._editor.value() is None:  # (a selection made meanwhile stays)
            self._editor.show_apart(index, document[index])  # (its repaint in a turn of its own)

    def selected(self, index: int) -> None:
        """Message `index` was selected: its neighbours come first, once the window has been idle for a while."""
        document = self._messages()
        if document is not self._document:
            self._document = document
            count = len(document)
            self._spread = sorted({count * n // SPREAD for n in range(SPREAD)} | {count - 1}) if count else []
        # The neighbours' forms may push out forms seen before (the user steps through the timeline), those of the
        # spread only fill free room (a document of many shapes would otherwise replace them all).
        near = [(index + step * sign, True) for step in range(1, NEAR + 1) for sign in (1, -1)]
        self._next = deque([*near, *((spread, False) for spread in self._spread)])
        self._timer.start(IDLE_MS)

    def pending(self) -> bool:
        """Whether work is still to come (messages to look at, a form to show once)."""
        return self._timer.isActive() or self._queued

    def _due(self) -> None:
        """A form made or shown ahead is a slice of the window's turns: never in the turn of another slice (the
        views', a part of a theme switch), which with a form was more than a frame at a million messages."""
        self._queued = True
        slices().start(self._work)

    def _work(self) -> None:
        self._queued = False
        if self._busy():
            self._timer.start(NEXT_MS)
            return
        if self._editor.show_prepared():  # the form made in the last turn is shown once in this one
            self._timer.start(NEXT_MS)
            return
        document = self._document
        budget, made = Budget(LOOK_S), False
        while self._next and document is not None and not made and budget.more():
            index, push_out = self._next.popleft()
            if index in self._spread:
                self._spread.remove(index)
            made = 0 <= index < len(document) and self._editor.prepare(document[index], push_out=push_out)
        if self._next or made:
            self._timer.start(NEXT_MS)
