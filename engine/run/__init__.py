"""Running a plan (SPEC 6.8–6.11, 010–015): the scheduler, patterns, delegates, instances, turns and the loop.
"""

from ._delegation import LoopSessions
from ._execution import Execution
from ._loop import Loop
from ._turns import Conclusion

# A delegated call runs as a nested `Loop`: the session layer plugs itself into `Execution`, which is below it.
Execution.sessions = LoopSessions()

__all__ = [
    "Conclusion",
    "Execution",
    "Loop",
]
