"""What a call is before it runs (SPEC 6.1–6.7): tools, activities, registries, scopes, plans, outputs, the run record.
"""

from ._activities import Activities, Activity
from ._calls import CallPlan, Mode, Problem, plan_call
from ._record import Record, read_record
from ._status import CallState, Status
from ._tools import ToolDefinition, tool_definitions

__all__ = [
    "Activities",
    "Activity",
    "CallPlan",
    "CallState",
    "Mode",
    "Problem",
    "Record",
    "Status",
    "ToolDefinition",
    "plan_call",
    "read_record",
    "tool_definitions",
]
