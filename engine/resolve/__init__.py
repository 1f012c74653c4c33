"""Resolution (SPEC 4): the reference fold of one identity's writes, and what a resolution returns.

`fold` is the definition; `_incremental` keeps the same answers current after every edit (indexes, tracks,
watches, path logs, blame) and is private to this folder: `document.Context` is its one user.
"""

from ._fold import fold
from ._order import Order
from ._resolution import Diagnostic, Indices, Resolution

__all__ = [
    "Diagnostic",
    "Indices",
    "Order",
    "Resolution",
    "fold",
]
