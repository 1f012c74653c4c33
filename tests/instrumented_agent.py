"""A small agent run traced by a real instrumentation library, for the import tests (docs/format.md §10).

The agent calls the loopback fake server through the real `openai` SDK, instrumented by OpenInference's
OpenAI instrumentation into an OpenTelemetry SDK tracer; its tool runs are spans of their own, as agent
frameworks write them (the first with GenAI `execute_tool` attributes, the second as OpenInference `TOOL`).
The spans are encoded by opentelemetry-exporter-otlp-proto-common and written as protobuf's JSON.
"""

from __future__ import annotations

import json
from typing import Any

from fake_llm import FakeLLM, Reply

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
RESULTS = {"Paris": {"sky": "sunny", "celsius": 21}, "Rome": {"sky": "rain", "celsius": 14}}
SYSTEM, QUESTION, ANSWER = "You are a weather bot.", "Weather in Paris, then Rome?", "Paris is sunny; Rome has rain."
API_KEY = "sk-test-not-a-real-key"


def record_agent_trace(server: FakeLLM) -> str:
    """Run the agent against `server` with the instrumentation on (for this run only); its OTLP JSON."""
    from google.protobuf.json_format import MessageToJson
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        _run_agent(server, provider)
    finally:
        instrumentor.uninstrument()
    return MessageToJson(encode_spans(exporter.get_finished_spans()))


def _run_agent(server: FakeLLM, provider: Any) -> None:
    """Ask, run each tool the model calls (a span per run), send the results, until the model answers."""
    import openai

    server.push(Reply(tool=("get_weather", '{"city": "Paris"}'), call_id="call_paris"),
                Reply(tool=("get_weather", '{"city": "Rome"}'), call_id="call_rome"),
                Reply(content=ANSWER))
    client = openai.OpenAI(base_url=server.url, api_key=API_KEY)
    tracer = provider.get_tracer("weather-agent")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    with tracer.start_as_current_span("weather-agent"):
        for turn in range(5):
            reply = client.chat.completions.create(model="fake-small", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                result = json.dumps(RESULTS[json.loads(call.function.arguments)["city"]])
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
