"""Traces in and runs out: OpenAI chat completions exchanges and logs, OpenTelemetry GenAI traces (OTLP JSON).

`import_trace(path)` reads a file into one saved request per context (docs/format.md §10); a `Redaction`
replaces secrets before anything is written; `export_otlp` and `export_openai` send a document back out.
"""

from ._export import collector_warning, empty_request, export_openai, export_otlp
from ._problems import TraceError
from ._read import FORMATS, Imported, contexts_held, import_bytes, import_trace, named_contexts, none_named
from ._redact import REDACTED, Redaction, redact_document

__all__ = ["FORMATS", "REDACTED", "Imported", "Redaction", "TraceError", "collector_warning", "contexts_held",
           "empty_request", "export_openai", "export_otlp", "import_bytes", "import_trace", "named_contexts",
           "none_named", "redact_document"]
