"""The protocol's language (SPEC 2–4, 6.10): messages, `†` expressions, output methods, values, plan entries.

Pure definitions with no state: every other folder of the engine stands on these.
"""

from ._errors import DocumentError, ExpressionError
from ._expressions import Expression, Reference, parse_expression
from ._groups import flatten, group_of
from ._messages import MISSING, Form, MessageInfo, Write, classify
from ._methods import WRITE_METHODS, Conflict, Method, write_at

__all__ = [
    "MISSING",
    "WRITE_METHODS",
    "Conflict",
    "DocumentError",
    "Expression",
    "ExpressionError",
    "Form",
    "MessageInfo",
    "Method",
    "Reference",
    "Write",
    "classify",
    "flatten",
    "group_of",
    "parse_expression",
    "write_at",
]
