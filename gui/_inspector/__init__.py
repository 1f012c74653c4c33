"""The call inspector and stepping debugger: calls panel, inspector, output audit, plan graph, debugger.

`install_inspector(window)` adds them to the main window as docks, with a Run menu and File → Load activities.
"""

from ._analysis import CallAnalysis, Mode, Status, analyse_calls
from ._audit import OutputAudit
from ._call_inspector import CallInspector
from ._calls import CallsModel, CallsView, RunState
from ._debugger import Debugger
from ._graph import PlanGraphView
from ._install import Inspector, install_inspector

__all__ = [
    "CallAnalysis",
    "CallInspector",
    "CallsModel",
    "CallsView",
    "Debugger",
    "Inspector",
    "Mode",
    "OutputAudit",
    "PlanGraphView",
    "RunState",
    "Status",
    "analyse_calls",
    "install_inspector",
]
