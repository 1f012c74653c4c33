"""contextdeck.engine: documents, messages, `†` expressions and their resolution, in plain Python.

Never imports Qt: the GUI and the command line stand on this package, not the other way round.
"""

from ._blame import Blame, BlameEntry
from ._context import Context, Watch
from ._document import Document, Shape, load_document, parse_document, write_atomically
from ._edits import Edit, Insert, Move, Remove, Replace
from ._errors import DocumentError, ExpressionError
from ._expressions import Expression, Reference, find_expressions, is_expression, parse_expression, unescape
from ._messages import AUDIT_KEYS, MISSING, Form, MessageInfo, Write, classify, get_path, kind_of, payload_of
from ._methods import deep_merge
from ._render import LLMMessage, render, render_text
from ._resolution import Diagnostic, Indices, Resolution
from ._tools import ToolDefinition, pending_calls, tool_definitions
from ._validate import validate

__all__ = [
    "AUDIT_KEYS",
    "MISSING",
    "Blame",
    "BlameEntry",
    "Context",
    "Diagnostic",
    "Document",
    "DocumentError",
    "Edit",
    "Expression",
    "ExpressionError",
    "Form",
    "Indices",
    "Insert",
    "LLMMessage",
    "MessageInfo",
    "Move",
    "Reference",
    "Remove",
    "Replace",
    "Resolution",
    "Shape",
    "ToolDefinition",
    "Watch",
    "Write",
    "classify",
    "deep_merge",
    "find_expressions",
    "get_path",
    "is_expression",
    "kind_of",
    "load_document",
    "parse_document",
    "parse_expression",
    "payload_of",
    "pending_calls",
    "render",
    "render_text",
    "tool_definitions",
    "unescape",
    "validate",
    "write_atomically",
]
