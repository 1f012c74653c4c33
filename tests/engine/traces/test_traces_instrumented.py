"""Traces written by a real instrumentation library around the real `openai` SDK, imported (format.md §10).

The trace is made by tests/instrumented_agent.py: OpenInference's OpenAI instrumentation, an OpenTelemetry
SDK tracer, opentelemetry-exporter-otlp-proto-common's encoding, against the loopback fake server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextdeck.engine import Execution, Status, compose_request, export_otlp, import_trace, validate

pytest.importorskip("openinference.instrumentation.openai")
pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")

from instrumented_agent import ANSWER, API_KEY, QUESTION, RESULTS, SYSTEM, record_agent_trace


@pytest.fixture
def trace_file(fake_llm: Any, tmp_path: Path) -> Path:
    path = tmp_path / "agent-trace.json"
    path.write_text(record_agent_trace(fake_llm))
    return path


def test_an_instrumented_agent_run_imports_as_one_context(trace_file: Path) -> None:
    """The OpenInference trace of a real SDK run: it validates, the model reads every text and tool result,
    the tool is offered, each call is done with its output, and the final answer is the output."""
    [imported] = import_trace(trace_file)
    document = imported.document
    assert imported.format == "otlp"
    assert imported.turns == 3
    assert imported.warnings == ()
    assert [str(p) for p in validate(document.context, document.solution, schema=document.schema)
            if p.severity == "error"] == []
    request = compose_request(document.context, document.schema)
    text = request.text()
    for seen in (SYSTEM, QUESTION, '"sky": "sunny"', '"sky": "rain"'):
        assert seen in text
    assert [tool.name for tool in request.tools] == ["get_weather"]
    plans = [m for m in document.context.messages if m.get("type") == "plan"]
    assert [plan["plan"] for plan in plans] == [
        [{"_tool": "get_weather", "city": "Paris", "_outputPath": "†call_paris"}],
        [{"_tool": "get_weather", "city": "Rome", "_outputPath": "†call_rome"}]]
    assert plans[0]["_model"]["model"] == "fake-small"
    assert plans[0]["_model"]["usage"]["total_tokens"] == 18
    outputs = [m for m in document.context.messages if m.get("type") == "data"]
    assert [output["data"] for output in outputs] == [RESULTS["Paris"], RESULTS["Rome"]]
    assert all(output["_run"]["seconds"] >= 0 for output in outputs)
    assert all(output["_run"]["started"].endswith("Z") for output in outputs)
    assert [state.status for state in Execution(document.context, document.solution).states] == [Status.DONE]
    assert document.solution["output"] == ANSWER


def test_the_api_key_of_the_run_never_reaches_the_document(trace_file: Path) -> None:
    """The SDK's key is not in the trace, so not in the document either."""
    [imported] = import_trace(trace_file)
    assert API_KEY not in imported.document.dumps()


def test_the_imported_run_exports_with_every_turn(trace_file: Path) -> None:
    """Exported again: a chat span per model turn and a tool span per call, parsed by opentelemetry-proto."""
    from test_traces import parse_otlp, span_attributes

    [imported] = import_trace(trace_file)
    spans = list(parse_otlp(export_otlp(imported.document)).resource_spans[0].scope_spans[0].spans)
    assert [span.name for span in spans] == [
        "invoke_agent contextdeck", "chat fake-small", "execute_tool get_weather", "chat fake-small",
        "execute_tool get_weather", "chat fake-small"]
    assert json.loads(span_attributes(spans[4])["gen_ai.tool.call.result"]) == RESULTS["Rome"]
