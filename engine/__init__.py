"""contextdeck.engine: documents, messages, `†` expressions and their resolution, in plain Python.

Never imports Qt: the GUI and the command line stand on this package, not the other way round.
"""

from .calls._activities import Activities, Activity, ActivityLoadError, activity, load_activities
from .calls._calls import CallPlan, Mode, Problem, plan_call
from .calls._outputs import error_message, fixed_clock, output_messages, utc_now
from .calls._plan import Graph
from .calls._record import CallRecord, Entry, Record, digest, read_record
from .calls._registry import ToolLoadError, load_tools
from .calls._scopes import scoped_indices
from .calls._status import OPEN, SETTLED, CallState, Decision, Stale, Status, TickReport
from .calls._tools import ToolDefinition, merged_tools, pending_calls, plan_mode, tool_definitions, unknown_references
from .checks._analysis import CallAnalysis, Lookup, Parameter, analyse_call
from .checks._call_checks import CallProblem, WrittenPaths, call_problems, reference_problem, written_paths
from .checks._checks import validate
from .document._context import Context, Watch
from .document._cursor import Cursor, CursorWatch
from .document._document import (
    Document,
    Shape,
    checked_messages,
    fork,
    load_document,
    parse_document,
    sync_directory,
    write_atomically,
)
from .document._edits import Edit, Insert, Move, Remove, Replace
from .document._json import DECODER as JSON_DECODER
from .document._json import JSONSyntaxError
from .document._json import dumps as json_dumps
from .document._json import nests_within as json_nests_within
from .document._json import parse as json_parse
from .document._state import CursorState, IdentityState
from .document._validate import json_path_parts
from .document._view import ContextView, Messages
from .models._agent import AgentRun, Ending, model_outputs, model_turns, run_agent
from .models._ask import (
    Answer,
    Asker,
    ModelRun,
    Tally,
    answer_call,
    apply_solution,
    ask_request,
    parse_answer,
    run_with_model,
    waiting_calls,
)
from .models._cassette import MODES, Cassette, cassette_path
from .models._prompt import STRATEGIES, Prompt, call_prompt, context_messages, request_prompt
from .models._provider import Completion, Endpoint, ModelError, Provider
from .protocol._errors import DocumentError, ExpressionError
from .protocol._expressions import Expression, Reference, find_expressions, is_expression, parse_expression, unescape
from .protocol._groups import flatten, group_of
from .protocol._messages import (
    AUDIT_KEYS,
    METHODS,
    MISSING,
    TEXT_KEYS,
    Form,
    MessageInfo,
    Write,
    classify,
    get_path,
    kind_of,
    message_problem,
    payload_key,
    payload_of,
    text_of,
)
from .protocol._methods import Conflict, deep_merge, write_at
from .protocol._schemas import PATTERN_BUDGET_S, SchemaFault, schema_errors
from .request._render import LLMMessage, render, render_text
from .request._request import ComposedTool, Request, compose_request
from .resolve._incremental._blame import Blame, BlameEntry
from .resolve._resolution import Diagnostic, Indices, Resolution
from .run._execution import Execution
from .run._instancing import expand_instances, instances_of
from .run._loop import Loop, LoopStatus, OutputSource, Tick, Turn, TurnRefused, TurnSource, load_turn
from .run._readiness import is_approval
from .run._turns import (
    Conclusion,
    TurnChange,
    as_turn,
    conclude,
    current_turn,
    output_problem,
    output_schema,
    output_violations,
    turn_change,
    turn_problem,
    turn_problems,
)
from .traces import FORMATS as TRACE_FORMATS
from .traces import (
    REDACTED,
    Imported,
    Redaction,
    TraceError,
    export_openai,
    export_otlp,
    import_bytes,
    import_trace,
    redact_document,
)

__all__ = [
    "AUDIT_KEYS",
    "JSON_DECODER",
    "METHODS",
    "MISSING",
    "MODES",
    "OPEN",
    "PATTERN_BUDGET_S",
    "REDACTED",
    "SETTLED",
    "STRATEGIES",
    "TEXT_KEYS",
    "TRACE_FORMATS",
    "Activities",
    "Activity",
    "ActivityLoadError",
    "AgentRun",
    "Answer",
    "Asker",
    "Blame",
    "BlameEntry",
    "CallAnalysis",
    "CallPlan",
    "CallProblem",
    "CallRecord",
    "CallState",
    "Cassette",
    "Completion",
    "ComposedTool",
    "Conclusion",
    "Conflict",
    "Context",
    "ContextView",
    "Cursor",
    "CursorState",
    "CursorWatch",
    "Decision",
    "Diagnostic",
    "Document",
    "DocumentError",
    "Edit",
    "Ending",
    "Endpoint",
    "Entry",
    "Execution",
    "Expression",
    "ExpressionError",
    "Form",
    "Graph",
    "IdentityState",
    "Imported",
    "Indices",
    "Insert",
    "JSONSyntaxError",
    "LLMMessage",
    "Lookup",
    "Loop",
    "LoopStatus",
    "MessageInfo",
    "Messages",
    "Mode",
    "ModelError",
    "ModelRun",
    "Move",
    "OutputSource",
    "Parameter",
    "Problem",
    "Prompt",
    "Provider",
    "Record",
    "Redaction",
    "Reference",
    "Remove",
    "Replace",
    "Request",
    "Resolution",
    "SchemaFault",
    "Shape",
    "Stale",
    "Status",
    "Tally",
    "Tick",
    "TickReport",
    "ToolDefinition",
    "ToolLoadError",
    "TraceError",
    "Turn",
    "TurnChange",
    "TurnRefused",
    "TurnSource",
    "Watch",
    "Write",
    "WrittenPaths",
    "activity",
    "analyse_call",
    "answer_call",
    "apply_solution",
    "as_turn",
    "ask_request",
    "call_problems",
    "call_prompt",
    "cassette_path",
    "checked_messages",
    "classify",
    "compose_request",
    "conclude",
    "context_messages",
    "current_turn",
    "deep_merge",
    "digest",
    "error_message",
    "expand_instances",
    "export_openai",
    "export_otlp",
    "find_expressions",
    "fixed_clock",
    "flatten",
    "fork",
    "get_path",
    "group_of",
    "import_bytes",
    "import_trace",
    "instances_of",
    "is_approval",
    "is_expression",
    "json_dumps",
    "json_nests_within",
    "json_parse",
    "json_path_parts",
    "kind_of",
    "load_activities",
    "load_document",
    "load_tools",
    "load_turn",
    "merged_tools",
    "message_problem",
    "model_outputs",
    "model_turns",
    "output_messages",
    "output_problem",
    "output_schema",
    "output_violations",
    "parse_answer",
    "parse_document",
    "parse_expression",
    "payload_key",
    "payload_of",
    "pending_calls",
    "plan_call",
    "plan_mode",
    "read_record",
    "redact_document",
    "reference_problem",
    "render",
    "render_text",
    "request_prompt",
    "run_agent",
    "run_with_model",
    "schema_errors",
    "scoped_indices",
    "sync_directory",
    "text_of",
    "tool_definitions",
    "turn_change",
    "turn_problem",
    "turn_problems",
    "unescape",
    "unknown_references",
    "utc_now",
    "validate",
    "waiting_calls",
    "write_at",
    "write_atomically",
    "written_paths",
]
