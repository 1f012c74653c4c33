"""Running a plan (SPEC 6.8–6.11, 010–015): the scheduler, patterns, delegates, instances, turns and the loop.
"""

from ._execution import Execution
from ._loop import Loop
from ._turns import Conclusion

__all__ = [
    "Conclusion",
    "Execution",
    "Loop",
]
