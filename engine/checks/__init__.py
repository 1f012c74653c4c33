"""Everything that can be known without running: `validate`, plan calls checked, one call's analysis.
"""

from ._analysis import analyse_call
from ._call_checks import call_problems
from ._checks import validate

__all__ = [
    "analyse_call",
    "call_problems",
    "validate",
]
