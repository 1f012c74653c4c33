"""`contextdeck import FILE --out DOC` and `contextdeck export DOC --format otlp-json|openai` (format.md §10)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from contextdeck._cli import main
from fake_llm import Reply
from otlp_files import bad_spans, bad_spans_said, three_traces

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
REQUEST = {"model": "fake-small", "tools": [WEATHER], "messages": [
    {"role": "system", "content": "You are a weather bot. Contact: ops@example.com"},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_p", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_p", "content": "{\"sky\": \"sunny\"}"},
]}


def call(capsys: Any, *argv: Any) -> tuple[int, str, str]:
    code = main([*map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def import_and_run_on(capsys: Any, tmp_path: Path, source: Path, fake_llm: Any) -> Path:
    """Import `source`, then `run --llm`: the model calls the tool for Rome, answers that latent call, and
    gives the final output. The run document."""
    doc = tmp_path / "doc.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    rome = {"_tool": "get_weather", "city": "Rome", "_outputPath": "†rome"}
    fake_llm.push(Reply.json({"meta": {}, "calls": [rome], "output": None}),
                  Reply.json({"result": {"sky": "rain"}}),
                  Reply.json({"meta": {}, "calls": [], "output": "Sunny in Paris, rain in Rome."}))
    ran = tmp_path / "ran.json"
    code, _, err = call(capsys, "run", doc, "--llm", fake_llm.url, "--model", "fake-small", "--out", ran,
                        "--llm-retries", "0")
    assert code == 0, err
    return ran


def test_import_writes_the_document_and_says_what_it_found(capsys: Any, tmp_path: Path) -> None:
    source = write(tmp_path, "exchange.json", REQUEST)
    out = tmp_path / "doc.json"
    code, stdout, err = call(capsys, "import", source, "--out", out)
    assert code == 0, err
    assert stdout == ""
    assert err == (f"contextdeck: imported exchange.json (openai): 1 model turn(s), 1 call(s), 6 messages "
                   f"into {out}\n")
    document = json.loads(out.read_text())
    assert document["context"][-1]["data"] == {"sky": "sunny"}
    code, _, err = call(capsys, "validate", out)
    assert code == 0, err


def test_import_warns_of_a_tool_call_id_repeated_in_one_turn_naming_file_and_message(capsys: Any,
                                                                                     tmp_path: Path) -> None:
    """Two calls of one turn with one id: a warning names the file, the message and both calls."""
    request = copy.deepcopy(REQUEST)
    calls = request["messages"][2]["tool_calls"]
    calls.append({**calls[0], "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}})
    request["messages"].append({"role": "tool", "tool_call_id": "call_p", "content": "rain"})
    source = write(tmp_path, "exchange.json", request)
    code, _, err = call(capsys, "import", source, "--out", tmp_path / "doc.json")
    assert code == 0, err
    assert err.startswith(f"contextdeck: warning: {source}: message 2: tool calls 0 and 1 (get_weather) share the "
                          "id 'call_p': the results answering it are taken in the calls' order\n")


def test_import_redacts_before_writing(capsys: Any, tmp_path: Path) -> None:
    """Nothing matching a rule reaches the file; the count is said."""
    source = write(tmp_path, "exchange.json", REQUEST)
    code, stdout, err = call(capsys, "import", source, "--redact", "emails", "--redact", "city")
    assert code == 0, err
    assert "ops@example.com" not in stdout
    assert '"city": "Paris"' not in stdout
    assert "[redacted]" in stdout
    assert "3 value(s) redacted" in err


def test_a_bad_input_is_a_located_message_and_writes_nothing(capsys: Any, tmp_path: Path) -> None:
    """A tool message answering no call: exit 1, the file and message named, no document written."""
    broken = json.loads(json.dumps(REQUEST))
    broken["messages"][3]["tool_call_id"] = "call_x"
    source = write(tmp_path, "exchange.json", broken)
    out = tmp_path / "doc.json"
    code, _, err = call(capsys, "import", source, "--out", out)
    assert code == 1
    assert err == (f"contextdeck: {source}: message 3: a tool message answers call 'call_x', which no earlier "
                   "assistant message made (the calls waiting for a result: 'call_p' (get_weather))\n")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [source]


def test_a_truncated_log_is_named_with_its_line(capsys: Any, tmp_path: Path) -> None:
    line = json.dumps({"request": REQUEST})
    source = write(tmp_path, "run.jsonl", line + "\n" + line[:70])
    code, _, err = call(capsys, "import", source, "--out", tmp_path / "doc.json")
    assert code == 1
    assert err.startswith(f"contextdeck: {source}:2:68: Unterminated string starting at ")
    assert "truncated?" in err
    document = write(tmp_path, "doc.json", "[\n" + line[:70])
    assert call(capsys, "validate", document)[2].startswith(f"contextdeck: {document}:2:")  # one way to say a place


def test_several_traces_need_a_choice(capsys: Any, tmp_path: Path) -> None:
    """An OTLP file with two traces: without --trace, the traces are listed; with it, that one is written.
    One trace whose two agents each had a conversation is two contexts, said as such."""
    spans = [{"traceId": trace, "spanId": trace[:16], "name": "chat", "attributes": [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": f"hello {trace[0]}"}]}])}}]}
        for trace in ("a" * 32, "b" * 32)]
    source = write(tmp_path, "trace.json", {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    code, _, err = call(capsys, "import", source)
    assert code == 1
    assert err == (f"contextdeck: {source}: the file holds 2 traces, one context each: choose one with --trace ID "
                   f"({'a' * 32} (0 model turn(s)); {'b' * 32} (0 model turn(s)))\n")
    code, _, err = call(capsys, "import", source, "--trace", "ff")
    assert (code, err) == (1, f"contextdeck: {source}: --trace 'ff' matches no context; the file holds: {'a' * 32}, "
                              f"{'b' * 32}\n")
    code, stdout, err = call(capsys, "import", source, "--trace", "bbb")
    assert code == 0, err
    assert "hello b" in stdout
    assert f"trace {'b' * 32} (otlp)" in err
    for span, agent in zip(list(spans), ("1" * 16, "2" * 16), strict=True):  # one trace, two agents apart
        span.update(traceId="a" * 32, parentSpanId=agent)
        spans.append({"traceId": "a" * 32, "spanId": agent, "name": f"invoke_agent {agent[0]}", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]})
    source = write(tmp_path, "agents.json", {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    code, _, err = call(capsys, "import", source)
    assert code == 1
    assert err.startswith(f"contextdeck: {source}: the file holds 2 contexts from 1 trace, one per agent with a "
                          f"conversation of its own: choose one with --trace ID ({'a' * 32}/invoke_agent 1 ")
    code, stdout, err = call(capsys, "import", source, "--trace", "aaa/INVOKE_AGENT 2")  # each part's start, any case
    assert code == 0, err
    assert "hello b" in stdout


def test_export_writes_otlp_json_and_the_openai_body(capsys: Any, tmp_path: Path) -> None:
    source = write(tmp_path, "exchange.json", REQUEST)
    doc = tmp_path / "doc.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    code, _, err = call(capsys, "export", doc, "--format", "otlp-json", "--out", tmp_path / "trace.json")
    assert code == 0
    assert err == f"contextdeck: wrote {tmp_path / 'trace.json'} (3 spans)\n"
    spans = json.loads((tmp_path / "trace.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [span["name"] for span in spans] == ["invoke_agent doc", "chat fake-small", "execute_tool get_weather"]
    code, stdout, err = call(capsys, "export", doc, "--format", "openai")
    assert code == 0, err
    body = json.loads(stdout)
    assert body["model"] == "fake-small"
    assert body["response_format"]["type"] == "json_schema"
    rendered = json.loads(call(capsys, "render", doc, "--json")[1])
    assert body["messages"] == rendered["messages"]
    assert body["response_format"]["json_schema"]["schema"] == rendered["schema"]


def test_export_openai_of_a_request_with_no_message_is_refused(capsys: Any, tmp_path: Path) -> None:
    """`--at 0` (or a document with no text for the model) gives a body the API refuses: exit 1, the reason,
    nothing written; `--at 1` writes the first message."""
    doc = write(tmp_path, "doc.json", [{"role": "user", "content": "Hi"}])
    out = tmp_path / "body.json"
    code, stdout, err = call(capsys, "export", doc, "--format", "openai", "--at", "0", "--out", out)
    assert (code, stdout) == (1, "")
    assert err == (f"contextdeck: {doc}: the request as of its first 0 message(s) holds no message for the model, "
                   "and a chat completions body needs at least one: nothing written (give --at past the first "
                   "text)\n")
    assert not out.exists()
    code, stdout, err = call(capsys, "export", write(tmp_path, "empty.json", []), "--format", "openai")
    assert code == 1
    assert "the request of the document holds no message for the model" in err
    code, stdout, err = call(capsys, "export", write(tmp_path, "empty.json", []), "--format", "openai", "--at", "0")
    assert code == 1
    assert err.endswith("nothing written\n")  # no cut of a document without text gives one: no hint to cut later
    code, stdout, err = call(capsys, "export", doc, "--format", "openai", "--at", "1")
    assert code == 0, err
    assert json.loads(stdout)["messages"] == [{"role": "user", "content": "Hi"}]


def test_an_exported_trace_imports_back_as_the_document(capsys: Any, tmp_path: Path) -> None:
    """import, export --format otlp-json, import again: the same document, with no warning."""
    reply = {"role": "assistant", "content": "Sunny."}
    response = {"id": "r1", "created": 1764320000, "model": "fake-small",
                "choices": [{"index": 0, "finish_reason": "stop", "message": reply}]}
    source = write(tmp_path, "exchange.json", {"request": REQUEST, "response": response})
    doc, trace, again = tmp_path / "doc.json", tmp_path / "trace.json", tmp_path / "again.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    assert call(capsys, "export", doc, "--format", "otlp-json", "--out", trace)[0] == 0
    code, _, err = call(capsys, "import", trace, "--out", again)
    assert code == 0, err
    assert "warning" not in err
    assert json.loads(again.read_text()) == json.loads(doc.read_text())


def test_an_export_without_the_document_is_read_back_from_its_spans(capsys: Any, tmp_path: Path) -> None:
    """--without-document: the root span carries no copy; the import reads the run from the spans alone."""
    source = write(tmp_path, "exchange.json", REQUEST)
    doc, trace, again = tmp_path / "doc.json", tmp_path / "trace.json", tmp_path / "again.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    assert call(capsys, "export", doc, "--format", "otlp-json", "--without-document", "--out", trace)[0] == 0
    assert "contextdeck.document" not in trace.read_text()
    code, _, err = call(capsys, "import", trace, "--out", again)
    assert code == 0, err
    assert [m.get("role") for m in json.loads(again.read_text())["context"] if "role" in m] == \
        [m.get("role") for m in json.loads(doc.read_text())["context"] if "role" in m]
    code, _, err = call(capsys, "export", doc, "--format", "openai", "--without-document")
    assert (code, err) == (2, "contextdeck: --without-document applies to --format otlp-json: an OpenAI body "
                              "carries no document\n")


def test_a_message_of_parts_exported_without_the_document_comes_back_as_its_parts(capsys: Any,
                                                                                   tmp_path: Path) -> None:
    """A user's text and image, exported --without-document and imported again: the same parts, not their JSON."""
    looked = {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {
        "type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}]}
    reply = {"role": "assistant", "content": "A dot."}
    response = {"id": "r1", "created": 1764320000, "model": "fake-small",
                "choices": [{"index": 0, "finish_reason": "stop", "message": reply}]}
    source = write(tmp_path, "exchange.json", {"request": {"model": "fake-small", "messages": [looked]},
                                               "response": response})
    doc, trace, again = tmp_path / "doc.json", tmp_path / "trace.json", tmp_path / "again.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    assert call(capsys, "export", doc, "--format", "otlp-json", "--without-document", "--out", trace)[0] == 0
    assert "llm.input_messages.0.message.contents.1.message_content.image.image.url" in trace.read_text()
    assert call(capsys, "import", trace, "--out", again)[0] == 0
    assert [m for m in json.loads(again.read_text())["context"] if "role" in m] == [looked]


def test_an_export_too_big_for_a_collector_says_so(capsys: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the collector's default request size, a warning names the size and the way to leave the copy out."""
    from contextdeck.engine.traces import _export

    monkeypatch.setattr(_export, "COLLECTOR_LIMIT", 2**20)
    big = {**REQUEST, "messages": [*REQUEST["messages"], {"role": "user", "content": "x" * 2**20}]}
    doc = tmp_path / "doc.json"
    assert call(capsys, "import", write(tmp_path, "exchange.json", big), "--out", doc)[0] == 0
    code, _, err = call(capsys, "export", doc, "--format", "otlp-json", "--out", tmp_path / "trace.json")
    assert code == 0
    assert "warning: the export is " in err
    assert "an OTLP collector refuses a request over 1 MiB" in err
    assert "--without-document" in err
    code, _, err = call(capsys, "export", doc, "--format", "otlp-json", "--without-document",
                        "--out", tmp_path / "lean.json")
    assert code == 0
    assert (tmp_path / "lean.json").stat().st_size < (tmp_path / "trace.json").stat().st_size


def test_export_of_an_unreadable_document_says_where(capsys: Any, tmp_path: Path) -> None:
    doc = write(tmp_path, "doc.json", "[{")
    code, _, err = call(capsys, "export", doc, "--format", "otlp-json")
    assert code == 1
    assert err.startswith(f"contextdeck: {doc}:1:")


def test_round_trip_import_ask_the_model_export(capsys: Any, tmp_path: Path, fake_llm: Any) -> None:
    """Import a log that stops where the model is to answer, ask the model for that turn, export: the spans
    hold the imported turn, its tool call, and the new turn."""
    response = {"id": "r1", "created": 1764320000, "model": "fake-small",
                "usage": {"prompt_tokens": 9, "completion_tokens": 3},
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": REQUEST["messages"][2]}]}
    lines = [{"request": {**REQUEST, "messages": REQUEST["messages"][:2]}, "response": response}, {"request": REQUEST}]
    source = write(tmp_path, "run.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    doc = tmp_path / "doc.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    fake_llm.push(Reply.json({"meta": {"version": "1"}, "calls": [], "output": "Sunny in Paris."},
                             usage={"prompt_tokens": 30, "completion_tokens": 6}))
    asked = tmp_path / "asked.json"
    code, _, err = call(capsys, "ask", doc, "--llm", fake_llm.url, "--model", "fake-small", "--out", asked,
                        "--llm-retries", "0")
    assert code == 0, err
    sent = fake_llm.completions[-1]["messages"]
    assert sent == json.loads(call(capsys, "export", doc, "--format", "openai")[1])["messages"]
    trace = tmp_path / "trace.json"
    assert call(capsys, "export", asked, "--format", "otlp-json", "--out", trace)[0] == 0
    spans = json.loads(trace.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [span["name"] for span in spans] == [
        "invoke_agent asked", "chat fake-small", "execute_tool get_weather", "chat fake-small"]

    def attributes(span: dict[str, Any]) -> dict[str, Any]:
        return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}

    first, tool, new = map(attributes, spans[1:])
    assert first["gen_ai.response.id"] == "r1"
    assert json.loads(first["gen_ai.output.messages"])[0]["parts"][0]["name"] == "get_weather"
    assert json.loads(tool["gen_ai.tool.call.result"]) == {"sky": "sunny"}
    assert json.loads(new["gen_ai.output.messages"])[0]["parts"] == [{"type": "text", "content": "Sunny in Paris."}]
    assert new["gen_ai.usage.input_tokens"] == "30"
    assert new["gen_ai.response.model"] == "fake-small"
    assert "Weather in Paris?" in new["gen_ai.input.messages"]
    assert "sunny" in new["gen_ai.input.messages"]


def test_round_trip_import_run_with_the_model_export(capsys: Any, tmp_path: Path, fake_llm: Any) -> None:
    """Import a log, run it on with `run --llm` (the model takes a turn that calls the tool, answers that
    latent call, then gives the final output), export: the spans hold the imported turn and both new ones."""
    response = {"id": "r1", "created": 1764320000, "model": "fake-small",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": REQUEST["messages"][2]}]}
    lines = [{"request": {**REQUEST, "messages": REQUEST["messages"][:2]}, "response": response}, {"request": REQUEST}]
    source = write(tmp_path, "run.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    ran = import_and_run_on(capsys, tmp_path, source, fake_llm)
    trace = tmp_path / "trace.json"
    assert call(capsys, "export", ran, "--format", "otlp-json", "--out", trace)[0] == 0
    spans = json.loads(trace.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [span["name"] for span in spans] == [
        "invoke_agent ran", "chat fake-small", "execute_tool get_weather", "chat fake-small",
        "execute_tool get_weather", "chat fake-small"]
    results = [json.loads(next(a["value"]["stringValue"] for a in span["attributes"]
                               if a["key"] == "gen_ai.tool.call.result"))
               for span in spans if span["name"].startswith("execute_tool")]
    assert results == [{"sky": "sunny"}, {"sky": "rain"}]
    final = next(a["value"]["stringValue"] for a in spans[-1]["attributes"] if a["key"] == "gen_ai.output.messages")
    assert json.loads(final)[0]["parts"] == [{"type": "text", "content": "Sunny in Paris, rain in Rome."}]


def test_import_refuses_to_write_json_lines(capsys: Any, tmp_path: Path) -> None:
    """A saved request cannot be JSON Lines (the loader would read it as messages): refused before reading."""
    source = write(tmp_path, "exchange.json", REQUEST)
    code, _, err = call(capsys, "import", source, "--out", tmp_path / "doc.jsonl")
    assert code == 2
    assert "write it to a .json file" in err
    assert not (tmp_path / "doc.jsonl").exists()


def test_an_out_that_cannot_be_written_is_named_as_given(capsys: Any, tmp_path: Path) -> None:
    """`--out` in a folder that does not exist, for import and for export: exit 1 and `cannot write OUT: reason`,
    the file as the user named it, never the temporary file beside it, and nothing left behind."""
    source = write(tmp_path, "exchange.json", REQUEST)
    document = tmp_path / "doc.json"
    assert call(capsys, "import", source, "--out", document)[0] == 0
    missing = tmp_path / "missing"
    for argv in (("import", source), ("export", document, "--format", "otlp-json"),
                 ("export", document, "--format", "openai")):
        out = missing / "out.json"
        code, stdout, err = call(capsys, *argv, "--out", out)
        assert (code, stdout, err) == (1, "", f"contextdeck: cannot write {out}: No such file or directory\n")
    assert not missing.exists()


def test_a_strict_function_imported_can_be_called_on_by_the_model(capsys: Any, tmp_path: Path,
                                                                   fake_llm: Any) -> None:
    """OpenAI's strict functions close their parameters (`additionalProperties: false`); imported, the model
    driving the agent on can still say where a call's result goes, and reads it in the next turn."""
    strict = copy.deepcopy(WEATHER)
    strict["function"]["strict"] = True
    strict["function"]["parameters"]["additionalProperties"] = False
    source = write(tmp_path, "exchange.json", {**REQUEST, "tools": [strict]})
    import_and_run_on(capsys, tmp_path, source, fake_llm)
    assert "## Data: ¶rome" in fake_llm.requests[-1].body["messages"][-1]["content"]


def test_import_reads_a_traces_spans_and_its_log_records_from_two_files(capsys: Any, tmp_path: Path) -> None:
    """`contextdeck import spans.json logs.jsonl`: a logs exporter's file read with the spans' file (format.md §10)."""
    trace, span_id = "ab" * 16, "11" * 8

    def record(name: str, at: int, body: dict[str, Any]) -> dict[str, Any]:
        values = [{"key": key, "value": {"stringValue": value} if isinstance(value, str) else
                   {"kvlistValue": {"values": [{"key": k, "value": {"stringValue": v}} for k, v in value.items()]}}}
                  for key, value in body.items()]
        return {"timeUnixNano": str(at), "traceId": trace, "spanId": span_id, "eventName": name,
                "body": {"kvlistValue": {"values": values}}}

    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        record("gen_ai.user.message", 1, {"content": "Hi"}),
        record("gen_ai.choice", 2, {"finish_reason": "stop", "message": {"content": "Hello!"}})]}]}]}
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": span_id, "name": "chat m", "startTimeUnixNano": "0", "endTimeUnixNano": "10",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}
    source, out = write(tmp_path, "spans.json", spans), tmp_path / "doc.json"
    code, _, err = call(capsys, "import", source, write(tmp_path, "logs.jsonl", logs), "--out", out)
    assert code == 0, err
    assert json.loads(out.read_text())["solution"]["output"] == "Hello!"
    code, _, err = call(capsys, "import", source)
    assert code == 1
    assert "give their file with it" in err
    bad_span = {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "zz", "name": "chat m"}]}]}]}
    logs_file = write(tmp_path, "logs2.jsonl", json.dumps(logs) + "\n" + json.dumps(bad_span) + "\n")
    code, _, err = call(capsys, "import", source, logs_file, "--out", out)
    assert code == 0, err
    assert err.startswith(f'contextdeck: warning: {logs_file}:2: span "zz" (chat m): the span has no valid span id: '
                          "left out\n")  # its own file, once
    code, _, err = call(capsys, "import", source, logs_file, "--from", "openai")
    assert (code, err) == (1, "contextdeck: --from: openai: only OTLP files are read together (a trace's spans and "
                              "the log records of them): import each openai file on its own\n")


def test_a_spans_warning_names_its_file_and_line_in_one_form_alone_or_with_others(capsys: Any,
                                                                                   tmp_path: Path) -> None:
    """A span left out on line 2 of a JSON Lines trace is said `FILE:2: span "zz" (NAME) of trace T: ...`, whether
    the file is imported alone or with another (format.md §10)."""
    trace = "5b8efff798038103d269b633813fc60c"
    said = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}])}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Hello!"}]}])}}]
    good = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": trace, "spanId": "1111111111111111", "name": "chat m", "attributes": said}]}]}]}
    bad = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": trace, "spanId": "zz", "name": "chat m"}]}]}]}
    source = write(tmp_path, "trace.jsonl", json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    other = write(tmp_path, "logs.jsonl", '{"resourceLogs": []}\n')
    expected = (f'contextdeck: warning: {source}:2: span "zz" (chat m) of trace {trace}: the span has no valid span '
                f'id: '
                "left out\n")
    for more in ([], [other]):
        code, _, err = call(capsys, "import", source, *more, "--out", tmp_path / "doc.json")
        assert code == 0, err
        assert err.startswith(expected)


def test_trace_agent_given_in_full_wins_over_an_agent_it_starts(capsys: Any, tmp_path: Path) -> None:
    """Agents `research` and `researcher` in one trace: `--trace T/research` names the first (an agent named in full
    wins), `T/res` names both and is refused; `import --help` tells of the TRACE/AGENT form."""
    spans: list[dict[str, Any]] = []
    for agent, word in (("1" * 16, "research"), ("2" * 16, "researcher")):
        spans.append({"traceId": "a" * 32, "spanId": agent, "name": f"invoke_agent {word}", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": word}}]})
        spans.append({"traceId": "a" * 32, "spanId": agent[:8] + "3" * 8, "parentSpanId": agent, "name": "chat",
                      "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                                     {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                                         [{"role": "user", "parts": [{"type": "text", "content": f"hi {word}"}]}])}}]})
    source = write(tmp_path, "agents.json", {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    code, stdout, err = call(capsys, "import", source, "--trace", "aaaa/Research")
    assert code == 0, err
    assert "hi research\"" in stdout
    assert "hi researcher" not in stdout
    code, stdout, err = call(capsys, "import", source, "--trace", "aaaa/researcher")
    assert code == 0, err
    assert "hi researcher" in stdout
    code, _, err = call(capsys, "import", source, "--trace", "aaaa/res")
    assert code == 1
    assert "matches several contexts" in err
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "TRACE/AGENT" in capsys.readouterr().out


def test_trace_chosen_names_the_files_other_traces_as_the_window_does(capsys: Any, tmp_path: Path) -> None:
    """`--trace` reads only the trace it names, yet says what else the file holds: a warning names the other traces,
    one with no model span among them, in the words the window's import dialog shows (format.md §10)."""
    source = write(tmp_path, "trace.json", three_traces())
    code, _, err = call(capsys, "import", source, "--trace", "aaa", "--out", tmp_path / "doc.json")
    assert code == 0, err
    assert err.splitlines()[0] == (
        f"contextdeck: warning: {source}: the file holds 2 other trace(s), not imported with this context: "
        f"{'b' * 32} (1 model turn(s)), {'c' * 32} (no GenAI or OpenInference model spans: nothing to import)")


def test_trace_chosen_without_model_spans_names_the_traces_that_have_them(capsys: Any, tmp_path: Path) -> None:
    """`--trace` naming the file's one trace of no model span: the refusal says that trace holds none and which do,
    not that no trace of the file does (other traces hold model spans); nothing is written."""
    source = write(tmp_path, "trace.json", three_traces())
    code, _, err = call(capsys, "import", source, "--trace", "ccc", "--out", tmp_path / "doc.json")
    assert code == 1
    assert err.strip() == (
        f"contextdeck: {source}: --trace ccc: trace {'c' * 32}: no model spans (neither GenAI nor OpenInference): "
        f"left out; the file's traces with model turns: {'a' * 32} (1 model turn(s)), {'b' * 32} (1 model turn(s)): "
        "choose one with --trace")
    assert not (tmp_path / "doc.json").exists()


def test_thousands_of_bad_spans_are_one_warning(capsys: Any, tmp_path: Path) -> None:
    """Spans alike but for their ids are said once, with a count and the first few ids, as the window lists them."""
    source = write(tmp_path, "trace.json", bad_spans(2000))
    code, _, err = call(capsys, "import", source, "--out", tmp_path / "doc.json")
    assert code == 0, err
    assert err.splitlines()[:-1] == [f"contextdeck: warning: {bad_spans_said(source, 2000)}"]


def test_a_schema_and_a_message_of_odd_parts_exported_without_the_document_come_back(capsys: Any,
                                                                                      tmp_path: Path) -> None:
    """An exchange that asked for a JSON schema, with a user's part the trace's words have no field for, exported
    --without-document and imported again: the same schema, the same message (its JSON text marked, read back as
    the value) and the same output."""
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    looked = {"role": "user", "content": [{"type": "text", "text": "What is this?", "lang": "en"}, {
        "type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}
    reply = {"role": "assistant", "content": "{\"answer\": \"A dot.\"}"}
    response = {"id": "r1", "created": 1764320000, "model": "fake-small",
                "choices": [{"index": 0, "finish_reason": "stop", "message": reply}]}
    asked = {"model": "fake-small", "messages": [looked], "response_format": {
        "type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}}
    source = write(tmp_path, "exchange.json", {"request": asked, "response": response})
    doc, trace, again = tmp_path / "doc.json", tmp_path / "trace.json", tmp_path / "again.json"
    assert call(capsys, "import", source, "--out", doc)[0] == 0
    assert call(capsys, "export", doc, "--format", "otlp-json", "--without-document", "--out", trace)[0] == 0
    assert "contextdeck.schema" in trace.read_text()
    code, _, err = call(capsys, "import", trace, "--out", again)
    assert code == 0, err
    first, second = json.loads(doc.read_text()), json.loads(again.read_text())
    assert second["schema"] == first["schema"] == schema
    assert [m for m in second["context"] if "role" in m] == [looked]
    assert second["solution"]["output"] == first["solution"]["output"] == {"answer": "A dot."}
