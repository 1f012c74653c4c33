"""Traces written by a real instrumentation library around the real `openai` SDK, imported (format.md §10).

An agent loop calls the loopback fake server through `openai.OpenAI`, traced by OpenInference's OpenAI
instrumentation into an OpenTelemetry SDK tracer; its tool runs are spans of their own, as agent frameworks
write them (GenAI `execute_tool`, and OpenInference `TOOL`). The spans are encoded by
opentelemetry-exporter-otlp-proto-common and written as protobuf's JSON, then imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextdeck.engine import (
    Execution,
    Status,
    compose_request,
    export_otlp,
    import_trace,
    validate,
)

pytest.importorskip("openinference.instrumentation.openai")
pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")

from fake_llm import Reply

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
RESULTS = {"Paris": {"sky": "sunny", "celsius": 21}, "Rome": {"sky": "rain", "celsius": 14}}


@pytest.fixture
def tracing() -> Iterator[tuple[Any, Any]]:
    """A tracer provider with an in-memory exporter, and the OpenAI SDK instrumented for the test only."""
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()


def run_agent(fake_llm: Any, provider: Any) -> None:
    """A small agent: ask, run each tool the model calls (a span per run), send the results, until it answers."""
    import openai

    fake_llm.push(Reply(tool=("get_weather", '{"city": "Paris"}'), call_id="call_paris"),
                  Reply(tool=("get_weather", '{"city": "Rome"}'), call_id="call_rome"),
                  Reply(content="Paris is sunny; Rome has rain."))
    client = openai.OpenAI(base_url=fake_llm.url, api_key="sk-test-not-a-real-key")
    tracer = provider.get_tracer("weather-agent")
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a weather bot."},
                                      {"role": "user", "content": "Weather in Paris, then Rome?"}]
    with tracer.start_as_current_span("weather-agent"):
        for turn in range(5):
            reply = client.chat.completions.create(model="fake-small", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                city = json.loads(call.function.arguments)["city"]
                result = json.dumps(RESULTS[city])
                with tracer.start_as_current_span(f"execute_tool {call.function.name}") as span:
                    if turn == 0:  # the GenAI semantic conventions' tool span
                        span.set_attribute("gen_ai.operation.name", "execute_tool")
                        span.set_attribute("gen_ai.tool.name", call.function.name)
                        span.set_attribute("gen_ai.tool.call.id", call.id)
                    else:  # OpenInference's
                        span.set_attribute("openinference.span.kind", "TOOL")
                        span.set_attribute("tool.name", call.function.name)
                        span.set_attribute("tool.parameters", call.function.arguments)
                        span.set_attribute("output.value", result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def otlp_json(exporter: Any) -> str:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return MessageToJson(encode_spans(exporter.get_finished_spans()))


@pytest.fixture
def trace_file(fake_llm: Any, tracing: tuple[Any, Any], tmp_path: Path) -> Path:
    provider, exporter = tracing
    run_agent(fake_llm, provider)
    path = tmp_path / "agent-trace.json"
    path.write_text(otlp_json(exporter))
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
    for seen in ("You are a weather bot.", "Weather in Paris, then Rome?", '"sky": "sunny"', '"sky": "rain"'):
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
    assert all(output["_run"]["seconds"] >= 0 and output["_run"]["started"].endswith("Z") for output in outputs)
    assert [state.status for state in Execution(document.context, document.solution).states] == [Status.DONE]
    assert document.solution["output"] == "Paris is sunny; Rome has rain."


def test_the_api_key_of_the_run_never_reaches_the_document(trace_file: Path) -> None:
    """The SDK's key is not in the trace, so not in the document either."""
    [imported] = import_trace(trace_file)
    assert "sk-test-not-a-real-key" not in imported.document.dumps()


def test_the_imported_run_exports_with_every_turn(trace_file: Path) -> None:
    """Exported again: a chat span per model turn and a tool span per call, parsed by opentelemetry-proto."""
    from test_traces import parse_otlp, span_attributes

    [imported] = import_trace(trace_file)
    spans = list(parse_otlp(export_otlp(imported.document)).resource_spans[0].scope_spans[0].spans)
    assert [span.name for span in spans] == [
        "invoke_agent contextdeck", "chat fake-small", "execute_tool get_weather", "chat fake-small",
        "execute_tool get_weather", "chat fake-small"]
    assert json.loads(span_attributes(spans[4])["gen_ai.tool.call.result"]) == RESULTS["Rome"]
