"""The call inspector and stepping debugger: calls panel, inspector, output audit, plan graph, debugger.

`install_inspector(window)` adds them to the main window as docks, with a Run menu and File → Load activities.
"""

from ._audit import OutputAudit
from ._call_inspector import CallInspector
from ._calls import CallsModel, CallsView
from ._debugger import Debugger, refused_solution
from ._graph import PlanGraphView
from ._install import Inspector, install_inspector

__all__ = [
    "CallInspector",
    "CallsModel",
    "CallsView",
    "Debugger",
    "Inspector",
    "OutputAudit",
    "PlanGraphView",
    "install_inspector",
    "refused_solution",
]
