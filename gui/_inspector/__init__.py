"""The call inspector and stepping debugger: calls panel, inspector, output audit, plan graph, debugger."""

from ._analysis import CallAnalysis, Mode, Status, analyse_calls
from ._call_inspector import CallInspector
from ._calls import CallsModel, CallsView, RunState

__all__ = ["CallAnalysis", "CallInspector", "CallsModel", "CallsView", "Mode", "RunState", "Status", "analyse_calls"]
