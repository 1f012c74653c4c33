"""Where an import's warnings are said, and of which context: spans left out for a bad id, their children, several
traces in one file, several files read as one (format.md §10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_traces import TRACE, genai_trace, jsonl, sub_agents_trace

from contextdeck.engine import TraceError, import_bytes, import_trace

OTHER = "cd" * 16


def spans_of(trace: dict[str, Any]) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return spans


def with_step(step_id: Any, **more: Any) -> dict[str, Any]:
    """The sub-agents trace with a span `step` between the researcher and its chat span, which names it as its
    parent by `step_id` as written."""
    trace = sub_agents_trace()
    spans = spans_of(trace)
    step = {"traceId": TRACE, "spanId": step_id, "parentSpanId": "2222222222222222", "name": "step", **more}
    spans[3]["parentSpanId"] = step_id
    spans.insert(3, step)
    return trace


@pytest.mark.parametrize("step", [{"step_id": "zz"}, {"step_id": "5555555555555555", "traceId": None}])
def test_a_span_left_out_keeps_its_children_under_the_nearest_span_kept(step: dict[str, Any]) -> None:
    """A span left out (no valid span id, or no trace id) does not make its children top-level: they stay under its
    parent (the researcher agent: its own context), and the warning says where they went."""
    trace = with_step(**step)
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert [item.label for item in imported] == [f"{TRACE}/orchestrator", f"{TRACE}/researcher"]
    said = [warning for warning in imported[1].warnings if "left out" in warning]
    assert len(said) == 1
    assert said[0].startswith("t.json: span ")
    assert said[0].endswith("left out; the span(s) under it (bbbbbbbbbbbbbbbb) are read under span 2222222222222222, "
                            "the nearest span above it that is kept")


def test_a_span_left_out_takes_no_children_from_another_trace() -> None:
    """Span ids are a trace's own: a span of another trace naming the same (invalid) parent id as one left out is
    not read under that one's parent, but as a top-level span of its own trace, said."""
    trace = with_step("zz")
    other = genai_trace()
    for span in spans_of(other):
        span["traceId"] = OTHER
    spans_of(other)[0]["parentSpanId"] = "zz"
    spans_of(trace).extend(spans_of(other))
    imported = import_bytes(json.dumps(trace).encode(), "t.json", trace="cdcd")
    [item] = imported
    assert item.label == OTHER
    assert any(f"of trace {OTHER}: its parent span id \"zz\" is not valid: read as a top-level span" in warning
               for warning in item.warnings)


def test_a_retried_batch_says_a_span_left_out_once_with_each_child_once() -> None:
    """An exporter's retry delivers a batch twice: its span left out is said once, its child named once."""
    trace = with_step("zz")
    imported = import_bytes(jsonl([trace, trace]), "t.jsonl", trace=f"{TRACE}/researcher")
    said = [warning for warning in imported[0].warnings if "left out" in warning]
    assert len(said) == 1
    assert said[0].endswith("left out; the span(s) under it (bbbbbbbbbbbbbbbb) are read under span 2222222222222222, "
                            "the nearest span above it that is kept")


def test_a_trace_chosen_carries_the_files_warnings_as_when_all_are_read() -> None:
    """A span left out of a trace none of whose spans is kept is the file's to say: the context `trace=` chooses
    carries it, as the same context does when every trace is read (the window)."""
    trace = genai_trace()
    spans_of(trace).append({"traceId": OTHER, "spanId": "zz", "name": "lonely"})
    raw = json.dumps(trace).encode()
    [every] = import_bytes(raw, "t.json")
    [chosen] = import_bytes(raw, "t.json", trace=TRACE[:4])
    assert any("(lonely)" in warning for warning in every.warnings)
    assert chosen.warnings == every.warnings


def test_a_span_left_out_under_an_id_a_kept_span_has_takes_no_children_from_it() -> None:
    """A copy of the researcher's span without a trace id is left out; the spans under that id stay the kept
    researcher's, and the copy's warning says nothing of them."""
    trace = sub_agents_trace()
    copied = {**spans_of(trace)[1]}
    del copied["traceId"]
    spans_of(trace).append(copied)
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert [item.label for item in imported] == [f"{TRACE}/orchestrator", f"{TRACE}/researcher"]
    assert ("t.json: span 2222222222222222 (invoke_agent researcher): the span has no trace id: it belongs to no "
            "trace: left out") in imported[1].warnings


def test_spans_left_out_in_a_chain_or_a_loop_end_where_a_kept_span_or_none_is_above() -> None:
    """Left-out spans above left-out spans: the children go up past all of them; parent ids that loop among spans
    left out end at the top, said."""
    trace = with_step("zz")
    spans = spans_of(trace)
    spans.insert(3, {"traceId": TRACE, "spanId": "yy", "parentSpanId": "2222222222222222", "name": "outer"})
    spans[4]["parentSpanId"] = "yy"
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert [item.label for item in imported] == [f"{TRACE}/orchestrator", f"{TRACE}/researcher"]
    spans[3]["parentSpanId"] = "zz"  # yy under zz under yy
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert [item.label for item in imported] == [f"{TRACE}/orchestrator", f"{TRACE}/outside any agent"]
    assert any(warning.endswith("the span(s) under it (bbbbbbbbbbbbbbbb) are read as top-level spans: no span "
                                "above it is kept") for warning in imported[1].warnings)


def test_a_parent_id_that_is_no_id_is_said_where_the_span_is_read_as_top_level() -> None:
    """A kept span whose parent id is not valid and names no span left out is read at the top, with a warning naming
    the file, the span and its trace."""
    trace = sub_agents_trace()
    spans_of(trace)[3]["parentSpanId"] = "not an id"
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert imported[1].label == f"{TRACE}/outside any agent"
    assert (f't.json: span bbbbbbbbbbbbbbbb (chat m) of trace {TRACE}: its parent span id "not an id" is not valid: '
            "read as a top-level span") in imported[1].warnings
    spans_of(trace)[0]["parentSpanId"] = "0000000000000000"  # OTLP's way to say none: no warning
    assert not any("0000" in warning for item in import_bytes(json.dumps(trace).encode(), "t.json")
                   for warning in item.warnings)


def two_traces() -> dict[str, Any]:
    """genai_trace twice, as traces TRACE and OTHER, each with a tool span of a bad id; and a span of no trace."""
    trace = genai_trace()
    second = genai_trace()
    for item in spans_of(second):
        item["traceId"] = OTHER
    spans_of(trace)[4]["spanId"] = "zz"
    spans_of(second)[4]["spanId"] = "yy"
    spans_of(trace).extend(spans_of(second))
    spans_of(trace).append({"spanId": "6666666666666666", "name": "lost"})
    return trace


def test_each_context_carries_its_own_traces_warnings_and_the_files_once() -> None:
    """Several traces in one file: each context says the spans left out of its own trace, not another's; what is
    the file's (a span of no trace) each says once."""
    first, second = import_bytes(json.dumps(two_traces()).encode(), "t.json")
    assert (first.label, second.label) == (TRACE, OTHER)
    lost = "t.json: span 6666666666666666 (lost): the span has no trace id: it belongs to no trace: left out"
    for item, own, other in ((first, '"zz"', '"yy"'), (second, '"yy"', '"zz"')):
        assert item.warnings.count(lost) == 1
        assert any(own in warning for warning in item.warnings)
        assert not any(other in warning for warning in item.warnings)
    [chosen] = import_bytes(json.dumps(two_traces()).encode(), "t.json", trace=OTHER[:4])
    assert chosen.warnings == second.warnings


def test_a_spans_warning_is_said_in_one_form_with_one_file_or_several(tmp_path: Path) -> None:
    """What and where, one form: `FILE:LINE: span ID (NAME) of trace T: what`, whether the file is read alone or
    with others; every warning names its file first."""
    bad = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": TRACE, "spanId": "zz", "name": "chat m"}]}]}]}
    path = tmp_path / "trace.jsonl"
    path.write_bytes(jsonl([genai_trace(), bad]))
    expected = f'{path}:2: span "zz" (chat m) of trace {TRACE}: the span has no valid span id: left out'
    [alone] = import_trace(path)
    assert expected in alone.warnings
    assert all(warning.startswith(f"{path}") for warning in alone.warnings)
    logs = tmp_path / "logs.jsonl"
    logs.write_text('{"resourceLogs": []}\n')
    [together] = import_trace(path, more=[logs])
    assert together.warnings == alone.warnings


def test_the_format_of_each_file_read_together_is_found_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several OTLP files: each file's format is found once, the first's too."""
    from contextdeck.engine.traces import _read

    seen: list[str] = []
    found = _read.detect

    def counted(values: Any) -> str:
        seen.append(values.name)
        return found(values)

    monkeypatch.setattr(_read, "detect", counted)
    raw = json.dumps(genai_trace()).encode()
    import_bytes(raw, "spans.json", more=[(b'{"resourceLogs": []}', "logs.json")])
    assert seen == ["spans.json", "logs.json"]


BAD_IDS = ["zz", "", 7, None, "0" * 16, "not hex at all!!"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["kept", "bad id", "no trace"]), st.sampled_from(BAD_IDS)),
                min_size=1, max_size=6))
def test_children_stay_under_the_nearest_span_kept_past_any_chain_left_out(chain: list[tuple[str, Any]]) -> None:
    """Between the researcher agent and its chat span, a chain of spans some of which are left out (a bad span id,
    no trace id): the chat span stays the researcher's, whatever the chain, and every warning names the file."""
    trace = sub_agents_trace()
    spans = spans_of(trace)
    parent: Any = "2222222222222222"
    for n, (how, bad) in enumerate(chain):
        step: dict[str, Any] = {"traceId": TRACE, "spanId": f"{n + 1:016x}", "parentSpanId": parent, "name": "step"}
        if how == "bad id":
            step["spanId"] = f"bad {n}" if bad in ("", None, "0" * 16) else f"{bad} {n}"
        elif how == "no trace":
            del step["traceId"]
        spans.append(step)
        parent = step["spanId"]
    spans[3]["parentSpanId"] = parent
    imported = import_bytes(json.dumps(trace).encode(), "t.json")
    assert [item.label for item in imported] == [f"{TRACE}/orchestrator", f"{TRACE}/researcher"]
    assert all(warning.startswith("t.json: ") for item in imported for warning in item.warnings)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["chat", "tool", "agent", "other"]), st.integers(0, 7),
                          st.sampled_from(["ok", "ok", "ok", "bad id", "no trace", "other trace", "same id"]),
                          st.booleans()), min_size=1, max_size=8))
def test_a_forest_of_spans_with_bad_ids_loops_and_repeats_imports_or_says_where(
        shape: list[tuple[str, int, str, bool]]) -> None:
    """Spans whose parent ids loop, repeat an id, name spans left out or none: the import gives contexts whose
    warnings each name the file first, or a TraceError naming it; never another exception or a hang."""
    made = genai_trace()
    chat, tool = spans_of(made)[0], spans_of(made)[1]
    agent = {"traceId": TRACE, "name": "invoke_agent a",
             "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}
    spans: list[dict[str, Any]] = []
    for n, (kind, parent, how, loose) in enumerate(shape):
        model = {"chat": chat, "tool": tool, "agent": agent}.get(kind, {"traceId": TRACE, "name": "step"})
        item = {**json.loads(json.dumps(model)), "spanId": f"{n + 1:016x}", "parentSpanId": f"{parent + 1:016x}"}
        if how == "bad id":
            item["spanId"] = f"bad {n}"
        elif how == "no trace":
            item.pop("traceId", None)
        elif how == "other trace":
            item["traceId"] = OTHER
        elif how == "same id":
            item["spanId"] = f"{1:016x}"
        if loose:
            item["parentSpanId"] = f"bad {parent}"
        spans.append(item)
    raw = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    try:
        said = [warning for item in import_bytes(raw, "t.json") for warning in item.warnings]
    except TraceError as error:
        said = [str(error)]
    assert all(words.startswith("t.json: ") for words in said)


def genai_twice_and_a_cron_job() -> bytes:
    """genai_trace as TRACE and as OTHER, and a trace of one span that is no model span."""
    trace, second = genai_trace(), genai_trace()
    for item in spans_of(second):
        item["traceId"] = OTHER
    spans_of(trace).extend(spans_of(second))
    spans_of(trace).append({"traceId": "ef" * 16, "spanId": "7777777777777777", "name": "cron job"})
    return json.dumps(trace).encode()


def test_each_context_names_the_files_other_traces_chosen_or_not() -> None:
    """A file of several traces: each context names the others (with their model turns, or none), in the same words
    whether every trace is read (the window) or only the one `trace=` names (the command line)."""
    every = import_bytes(genai_twice_and_a_cron_job(), "t.json")
    assert [item.label for item in every] == [TRACE, OTHER]
    assert every[0].warnings[0] == (f"t.json: the file holds 2 other trace(s), not imported with this context: "
                                    f"{OTHER} (2 model turn(s)), {'ef' * 16} (no GenAI or OpenInference model spans: "
                                    "nothing to import)")
    assert not any("cron" in warning or "no model spans" in warning for warning in every[0].warnings)
    for item in every:
        [chosen] = import_bytes(genai_twice_and_a_cron_job(), "t.json", trace=item.label[:4])
        assert chosen.warnings == item.warnings
    [alone] = import_bytes(json.dumps(genai_trace()).encode(), "t.json")
    assert not any("other trace" in warning for warning in alone.warnings)


def test_a_file_of_traces_none_of_which_holds_a_model_span_says_each() -> None:
    """No trace holds a model span: the file is refused, naming each trace."""
    spans = [{"traceId": trace, "spanId": "7777777777777777", "name": "cron job"} for trace in (TRACE, OTHER)]
    with pytest.raises(TraceError) as refused:
        import_bytes(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), "t.json")
    assert str(refused.value) == (f"t.json: no trace holds a model span: trace {TRACE}: no model spans (neither "
                                  f"GenAI nor OpenInference): left out; trace {OTHER}: no model spans (neither GenAI "
                                  "nor OpenInference): left out")


def test_a_file_of_many_traces_names_a_few_others_and_counts_the_rest() -> None:
    """Eight traces: each context's note names five of the seven others and counts the two it does not name."""
    made = spans_of(genai_trace())
    spans = [{**item, "traceId": f"{n + 1:032x}"} for n in range(8) for item in made]
    imported = import_bytes(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), "t.json")
    note = imported[0].warnings[0]
    assert note.startswith(f"t.json: the file holds 7 other trace(s), not imported with this context: {2:032x} (2 "
                           "model turn(s)), ")
    assert note.endswith(f"{6:032x} (2 model turn(s)), and 2 more")


def test_spans_alike_but_for_their_ids_are_said_once_with_a_count_and_the_first_few() -> None:
    """Thousands of bad spans, on several lines of a JSON Lines trace: each problem is said once, at its first span,
    with how many more spans it is and the first few of their ids; a problem in other words stays apart."""
    bad = [{"traceId": TRACE, "spanId": f"bad {n}", "name": "step"} for n in range(3000)]
    lost = [{"spanId": f"{n + 1:016x}", "name": "step"} for n in range(2)]
    batches = [{"resourceSpans": [{"scopeSpans": [{"spans": part}]}]} for part in (bad[:1000], bad[1000:], lost)]
    trace = genai_trace()  # its tool span 5555… that no turn asked for, and a copy of it
    spans_of(trace).append({**spans_of(trace)[-1], "spanId": "6" * 16})
    [imported] = import_bytes(jsonl([trace, *batches]), "t.jsonl")
    assert [warning for warning in imported.warnings if "left out" in warning] == [
        f't.jsonl:2: span "bad 0" (step) of trace {TRACE}: the span has no valid span id: left out (and 2999 more '
        'span(s) alike: "bad 1", "bad 2", "bad 3", ...)',
        "t.jsonl:4: span 0000000000000001 (step): the span has no trace id: it belongs to no trace: left out (and 1 "
        "more span(s) alike: 0000000000000002)",
        "t.jsonl:1: span 5555555555555555: tool get_weather ran (call without an id), but no model turn asked for it: "
        "left out (and 1 more span(s) alike: 6666666666666666)"]


def in_two_lines(trace: dict[str, Any]) -> bytes:
    """The trace as a collector's file exporter writes it in two batches: its first two spans on line 1, the second
    turn and its tool spans on line 2."""
    spans = spans_of(trace)
    batches = [{"resourceSpans": [{"scopeSpans": [{"spans": part}]}]} for part in (spans[:2], spans[2:])]
    return jsonl(batches)


def second_turn(trace: dict[str, Any], key: str, change: Any) -> dict[str, Any]:
    """The trace with the second chat span's attribute `key` changed by `change` (None: left out)."""
    spans_of(trace)[2]["attributes"] = [
        {**a, "value": {"stringValue": json.dumps(change(json.loads(a["value"]["stringValue"])))}}
        if a["key"] == key and change is not None else a
        for a in spans_of(trace)[2]["attributes"] if a["key"] != key or change is not None]
    return trace


def test_a_spans_warning_in_a_json_lines_trace_names_its_line() -> None:
    """A warning an exchange of a span gives (a response of several choices) is said at the span's own line, and in
    its own file when the trace is read from several."""
    trace = second_turn(genai_trace(), "gen_ai.output.messages", lambda messages: messages * 2)
    said = "span 3333333333333333: the response holds 2 choices: the first is the reply, the others are left out"
    [imported] = import_bytes(in_two_lines(trace), "t.jsonl")
    assert f"t.jsonl:2: {said}" in imported.warnings
    first, second = in_two_lines(trace).splitlines()
    [imported] = import_bytes(first, "spans.json", more=[(second, "more.json")])
    assert f"more.json: {said}" in imported.warnings


@pytest.mark.parametrize(("key", "change", "fault"), [
    ("gen_ai.input.messages", None, "the model span records no messages"),
    ("gen_ai.input.messages", lambda messages: messages[1:], "message 1 does not repeat the conversation so far"),
])
def test_a_spans_fault_in_a_json_lines_trace_names_its_line(key: str, change: Any, fault: str) -> None:
    """A fault of a span's exchange, read from the span or found lining the turns up, is said at its own line."""
    trace = second_turn(genai_trace(), key, change)
    with pytest.raises(TraceError) as caught:
        import_bytes(in_two_lines(trace), "t.jsonl")
    assert str(caught.value).startswith(f"t.jsonl:2: span 3333333333333333: {fault}")
