"""A document and its context: messages in order, edits, load and save, views, the state at a cursor.

`Context` is the one object the GUI and the command line edit; everything it answers comes from `resolve`.
"""

from ._context import Context, Watch
from ._cursor import Cursor
from ._document import Document, Shape, load_document
from ._edits import Edit, Insert, Move, Remove, Replace
from ._state import CursorState
from ._view import ContextView, Messages, Pieces

__all__ = [
    "Context",
    "ContextView",
    "Cursor",
    "CursorState",
    "Document",
    "Edit",
    "Insert",
    "Messages",
    "Move",
    "Pieces",
    "Remove",
    "Replace",
    "Shape",
    "Watch",
    "load_document",
]
