"""File → Import Trace… and File → Export… in the real window (docs/format.md §10)."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDir, Qt
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QFileDialog, QLabel, QLineEdit, QPushButton

from contextdeck.engine import Redaction, import_bytes, import_trace
from contextdeck.gui import _files_ui as files_ui
from contextdeck.gui import _traces_ui as traces_ui
from contextdeck.gui._background import Stopped
from contextdeck.gui._inspector._calls import DETAIL, STATUS, TOOL
from contextdeck.gui._traces_ui import ImportChoice, ImportDialog
from otlp_files import bad_spans, bad_spans_said, three_traces

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
SYSTEM = {"role": "system", "content": "You are a weather bot. Write to ops@example.com."}
USER = {"role": "user", "content": "Weather in Paris and Rome?"}


def tool_call(call_id: str, city: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "r", "created": 1764320000, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}


ASKED = {"role": "assistant", "content": None,
         "tool_calls": [tool_call("call_a", "Paris"), tool_call("call_b", "Rome")]}
RESULTS = [{"role": "tool", "tool_call_id": "call_a", "content": "{\"sky\": \"sunny\", \"password\": \"hunter2\"}"},
           {"role": "tool", "tool_call_id": "call_b", "content": "rainy"}]
EXCHANGE = {"request": {"model": "gpt-4o-mini", "tools": [WEATHER], "messages": [SYSTEM, USER, ASKED, *RESULTS]},
            "response": completion({"role": "assistant", "content": "Sunny and rainy."})}


def exchange_file(tmp_path: Path, fake_llm: Any) -> tuple[Path, list[str], list[Any]]:
    path = tmp_path / "exchange.json"
    path.write_text(json.dumps(EXCHANGE))
    return path, [SYSTEM["content"], USER["content"], '"sky": "sunny"', "rainy"], [
        {"sky": "sunny", "password": "[redacted]"}, "rainy"]


def log_file(tmp_path: Path, fake_llm: Any) -> tuple[Path, list[str], list[Any]]:
    lines = [{"request": {"model": "m", "tools": [WEATHER], "messages": [SYSTEM, USER]}, "response": completion(ASKED)},
             {"request": {"model": "m", "tools": [WEATHER], "messages": [SYSTEM, USER, ASKED, *RESULTS]},
              "response": completion({"role": "assistant", "content": "Sunny and rainy."})}]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, [SYSTEM["content"], USER["content"], '"sky": "sunny"', "rainy"], [
        {"sky": "sunny", "password": "[redacted]"}, "rainy"]


def trace_file(tmp_path: Path, fake_llm: Any) -> tuple[Path, list[str], list[Any]]:
    pytest.importorskip("openinference.instrumentation.openai")
    from instrumented_agent import QUESTION, RESULTS, SYSTEM, record_agent_trace

    path = tmp_path / "agent-trace.json"
    path.write_text(record_agent_trace(fake_llm))
    return path, [SYSTEM, QUESTION, '"sky": "sunny"', '"sky": "rain"'], [RESULTS["Rome"]]


Source = Callable[[Path, Any], tuple[Path, list[str], list[Any]]]


def imported(qtbot: Any, task: Any) -> bool:
    """Whether the import opened a document, once it has read the file (on a worker thread) and ended."""
    qtbot.waitUntil(task.done, timeout=20000)
    return bool(task.result())


@pytest.mark.parametrize("source", [exchange_file, log_file, trace_file], ids=["exchange", "log", "otlp"])
def test_an_import_opens_unsaved_with_its_calls_and_outputs(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, source: Source) -> None:
    """Import through the dialog (redacting e-mails and a named field): the document opens untitled and
    unsaved, the Calls panel lists the last turn's tool calls as done with the outputs they wrote, the LLM
    view reads every system and user text and tool result, and the tool is offered."""
    path, texts, outputs = source(tmp_path, fake_llm)
    window = open_window(None)
    traces = window.traces  # type: ignore[attr-defined]
    assert [(a.text(), a.shortcut().toString()) for a in window.menu("File").actions()][3:5] == [
        ("&Import Trace…", "Ctrl+Shift+I"), ("E&xport…", "Ctrl+Shift+E")]
    shown: list[ImportDialog] = []

    def choose(name: str, imported: list[Any]) -> ImportChoice:
        dialog = ImportDialog(name, imported, window)
        qtbot.addWidget(dialog)
        shown.append(dialog)
        dialog.rules.setText("password")
        return dialog.choice()

    traces.ask_import_choice = choose
    assert imported(qtbot, traces.import_path(str(path)))
    assert shown[0].contexts.count() == 1
    assert shown[0].emails.isChecked()
    assert window.session.path is None
    assert window.session.is_dirty()
    text = window.session.document.dumps()
    assert "ops@example.com" not in text
    assert "hunter2" not in text
    model = window.inspector.model  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: model.rowCount() == len(outputs))
    context = window.session.document.context
    for row, output in enumerate(outputs):
        assert model.index(row, TOOL).data() == "get_weather"
        assert model.index(row, STATUS).data() == "done"
        written = model.index(row, DETAIL).data()
        assert written.startswith("wrote #")
        assert context[int(written.removeprefix("wrote #"))]["data"] == output
    llm = window.llm_view
    window.llm_dock.show()
    window.llm_dock.raise_()
    llm.render_now()
    qtbot.waitUntil(lambda: texts[-1] in llm.text())
    for seen in texts:
        assert seen.replace("ops@example.com", "[redacted]") in llm.text()
    assert "Tools offered: get_weather (latent)" in llm.schema.full_text


def test_a_broken_trace_is_reported_and_the_open_document_stays(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    source = tmp_path / "exchange.json"
    broken = json.loads(json.dumps(EXCHANGE))
    broken["request"]["messages"][4]["tool_call_id"] = "call_zzz"
    source.write_text(json.dumps(broken))
    window = open_window(None)
    before = window.session.document
    assert not imported(qtbot, window.traces.import_path(str(source)))  # type: ignore[attr-defined]
    assert window.session.document is before
    assert "message 4: a tool message answers call 'call_zzz'" in window.banner.label.text()


def test_a_failed_imports_banner_goes_when_another_document_opens(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """A failed import's banner ("the open document was left as it was") goes once another document is shown: a
    good import, or New; it stayed above the imported document, speaking of one no longer open."""
    truncated = tmp_path / "cut.json"
    truncated.write_text(json.dumps(EXCHANGE)[:200])
    good = tmp_path / "exchange.json"
    good.write_text(json.dumps(EXCHANGE))
    window = open_window(None)
    traces = window.traces  # type: ignore[attr-defined]
    traces.ask_import_choice = lambda name, found: ImportChoice(found[0], Redaction())
    for opening in (lambda: imported(qtbot, traces.import_path(str(good))), window.files.new):
        assert not imported(qtbot, traces.import_path(str(truncated)))
        assert "cut.json:1:198: Unterminated string" in window.banner.label.text()
        assert window.banner.isVisibleTo(window)
        opening()
        assert not window.banner.isVisibleTo(window)


def test_a_trace_opened_with_open_says_import_trace_reads_it_and_the_work_stays(
        qtbot: Any, open_window: Any, tmp_path: Path, examples: Path) -> None:
    """File → Open on an OpenAI exchange over edited work: the banner says it is a trace that File → Import Trace…
    reads (it said only that a saved request needs a 'context'), and the edited document stays as it was."""
    source = tmp_path / "exchange.json"
    source.write_text(json.dumps(EXCHANGE))
    window = open_window(examples / "refund_workflow.json")
    window.commands.insert(0, {"type": "text", "role": "user", "text": "unsaved work"})
    before = window.session.document.dumps()
    with qtbot.waitSignal(window.session.loadFailed, timeout=10000):
        window.files.open_path(source)
    said = window.banner.label.text()
    assert f"{source}: a saved request needs a 'context' array of messages; this is an OpenAI exchange" in said
    assert "File → Import Trace…" in said
    assert window.session.document.dumps() == before
    assert window.session.is_dirty()


def test_the_file_is_named_as_written(qtbot: Any) -> None:
    """A file name that looks like markup heads the dialog as written, not read as rich text."""
    name = "<i>run</i>&co.json"
    dialog = ImportDialog(name, import_bytes(json.dumps(EXCHANGE).encode(), name))
    qtbot.addWidget(dialog)
    heads = [QTextDocumentFragment.fromHtml(label.text()).toPlainText() for label in dialog.findChildren(QLabel)]
    assert any(head.startswith(f"{name}: ") for head in heads)


def test_the_dialog_says_an_openai_exchange_whichever_api_wrote_it(qtbot: Any) -> None:
    """One exchange is said as an OpenAI exchange, a Responses API one as a chat completions one."""
    body = {"request": {"model": "m", "input": "Hi?"}, "response": {"status": "completed", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi."}]}]}}
    for name, raw in (("r.json", body), ("x.json", EXCHANGE)):
        dialog = ImportDialog(name, import_bytes(json.dumps(raw).encode(), name))
        qtbot.addWidget(dialog)
        heads = [QTextDocumentFragment.fromHtml(label.text()).toPlainText() for label in dialog.findChildren(QLabel)]
        assert any(head.startswith(f"{name}: an OpenAI exchange, ") for head in heads)


def test_the_rules_box_says_what_it_takes_whole(qtbot: Any) -> None:
    """The redaction rules box shows its placeholder whole (it was cut at "/regular expressi…")."""
    dialog = ImportDialog("x.json", import_bytes(json.dumps(EXCHANGE).encode(), "x.json"))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    box = dialog.rules
    assert box.fontMetrics().horizontalAdvance(box.placeholderText()) <= box.width() - 12


def test_a_bad_redaction_rule_keeps_open_disabled(qtbot: Any) -> None:
    dialog = ImportDialog("x.json", import_bytes(json.dumps(EXCHANGE).encode(), "x.json"))
    qtbot.addWidget(dialog)
    dialog.rules.setText("/(unclosed/")
    button = dialog.buttons.button(dialog.buttons.StandardButton.Open)
    assert not button.isEnabled()
    assert "not a regular expression" in dialog.problem.text()
    dialog.rules.setText("password")
    assert button.isEnabled()
    assert dialog.problem.text() == ""


def test_a_traces_line_in_the_import_dialog_is_shown_whole(qtbot: Any) -> None:
    """An OTLP trace's line (its 32-digit id, turns and messages) fits the list: it was cut behind a horizontal
    scroll bar."""
    said = {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}])}}
    answer = {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}])}}
    chat = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "aaaaaaaaaaaaaaa2", "name": "chat m",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}, said, answer]}
    trace = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "a"}, "spans": [chat]}]}]}
    dialog = ImportDialog("trace.json", import_bytes(json.dumps(trace).encode(), "trace.json"))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.contexts.item(0).text().startswith("trace 5b8efff798038103d269b633813fc60c: 1 model turn, ")
    assert dialog.contexts.viewport().width() >= dialog.contexts.sizeHintForColumn(0)
    assert not dialog.contexts.horizontalScrollBar().isVisible()


def test_the_import_dialog_shows_each_contexts_own_warnings(qtbot: Any) -> None:
    """Two traces in one file, each with a span left out: each context's row shows its own trace's warning, not the
    other's (format.md §10)."""
    said = {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}])}}
    answer = {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}])}}
    spans = []
    for trace_id, bad in (("ab" * 16, "zz"), ("cd" * 16, "yy")):
        spans += [{"traceId": trace_id, "spanId": "aaaaaaaaaaaaaaa2", "name": "chat m",
                   "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}, said, answer]},
                  {"traceId": trace_id, "spanId": bad, "name": "step"}]
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    dialog = ImportDialog("trace.json", import_bytes(json.dumps(trace).encode(), "trace.json"))
    qtbot.addWidget(dialog)
    shown = []
    for row in (0, 1):
        dialog.contexts.setCurrentRow(row)
        shown.append(dialog.warnings.toPlainText())
    assert ['"zz"' in text for text in shown] == [True, False]
    assert ['"yy"' in text for text in shown] == [False, True]


def test_the_import_dialog_names_the_files_other_traces_as_the_command_line_does(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """A file of three traces, one with no model span: the dialog's warnings for a context name the other traces,
    the one no context holds among them, in the words `contextdeck import --trace` says (format.md §10)."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(three_traces()))
    window = open_window(None)
    traces = window.traces  # type: ignore[attr-defined]
    shown: list[str] = []

    def choose(name: str, found: list[Any]) -> None:
        dialog = ImportDialog(name, found, window)
        qtbot.addWidget(dialog)
        dialog.contexts.setCurrentRow(1)
        shown.append(dialog.warnings.toPlainText())

    traces.ask_import_choice = choose
    assert not imported(qtbot, traces.import_path(str(path)))
    [chosen] = import_trace(path, trace="bbb")  # what the command line reads and says
    assert shown == ["\n".join(chosen.warnings)]
    assert shown[0].startswith(f"{path}: the file holds 2 other trace(s), not imported with this context: "
                               f"{'a' * 32} (1 model turn(s)), {'c' * 32} (no GenAI or OpenInference model spans")


def test_the_import_dialog_lists_thousands_of_bad_spans_as_one_warning(qtbot: Any, tmp_path: Path) -> None:
    """Spans alike but for their ids are one line of the dialog's warnings, with a count and the first few ids, as
    `contextdeck import` says them."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(bad_spans(2000)))
    dialog = ImportDialog("trace.json", import_trace(path))
    qtbot.addWidget(dialog)
    assert dialog.warnings.toPlainText() == bad_spans_said(path, 2000)


def exporting(open_window: Any, tmp_path: Path) -> tuple[Any, Any]:
    """The window on EXCHANGE imported and saved as weather.json, its export going to trace.json as OTLP JSON."""
    doc = tmp_path / "weather.json"
    source = tmp_path / "exchange.json"
    source.write_text(json.dumps(EXCHANGE))
    import_trace(source)[0].document.save(doc)
    window = open_window(doc)
    traces = window.traces
    traces.ask_export_target = lambda: ("otlp-json", str(tmp_path / "trace.json"))
    return window, traces


def test_export_writes_the_run_and_the_request_at_the_cursor(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """File → Export… writes OTLP JSON spans of the open document, or the request at the cursor."""
    window, traces = exporting(open_window, tmp_path)
    assert traces.export_dialog()
    spans = json.loads((tmp_path / "trace.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [span["name"] for span in spans] == [
        "invoke_agent weather", "chat gpt-4o-mini", "execute_tool get_weather", "execute_tool get_weather",
        "chat gpt-4o-mini"]
    window.set_follow_latest(False)
    window.go_to(3)
    qtbot.waitUntil(lambda: window.at() == 4)
    traces.ask_export_target = lambda: ("openai", str(tmp_path / "request.json"))
    assert traces.export_dialog()
    body = json.loads((tmp_path / "request.json").read_text())
    assert [message["content"] for message in body["messages"]] == [SYSTEM["content"], USER["content"]]
    assert "Exported the request at the cursor" in window.statusBar().currentMessage()


def test_an_export_is_made_and_written_off_the_gui_thread(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spans (and the request body) are made and written on a worker, from the document as it was asked for:
    an export of a long run is hundreds of megabytes, and made on the window's thread it held the window for
    seconds, unpainted."""
    _window, traces = exporting(open_window, tmp_path)
    on_main: list[bool] = []
    for name in ("export_otlp", "export_openai", "write_atomically"):
        function = getattr(traces_ui, name)
        monkeypatch.setattr(traces_ui, name, lambda *args, function=function, **kwargs: (
            on_main.append(threading.current_thread() is threading.main_thread()), function(*args, **kwargs))[1])
    assert traces.export_dialog()
    assert json.loads((tmp_path / "trace.json").read_text())["resourceSpans"]
    assert traces.export("openai", str(tmp_path / "request.json"))
    assert json.loads((tmp_path / "request.json").read_text())["messages"]
    assert on_main == [False] * 4


def test_an_export_that_cannot_be_written_names_the_file_chosen_in_words(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """An export to a folder that is not there says it cannot write the file chosen, and why in words, as the
    command line does; it said "[Errno 2] No such file or directory: '.../.trace.json.123-ab12.tmp'", the name of
    the save's temporary file. The document is left as it was."""
    window, traces = exporting(open_window, tmp_path)
    before = window.session.document.dumps()
    target = tmp_path / "gone" / "trace.json"
    traces.ask_export_target = lambda: ("otlp-json", str(target))
    assert not traces.export_dialog()
    said = window.banner.label.text()
    assert f"cannot write {target}: No such file or directory" in said
    assert ".tmp" not in said
    assert "Errno" not in said
    assert window.session.document.dumps() == before


def test_an_openai_export_of_a_request_with_no_message_is_refused_in_a_message_box(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cursor on a tool message before the first text: the body would hold no message, which the API
    refuses. Refused in a message box in the command's words (`export --format openai --at 1`), nothing written."""
    doc = tmp_path / "a.json"
    tool = {"type": "tool", "tool": {"note": {"type": "object"}}}
    doc.write_text(json.dumps([tool, {"type": "text", "role": "user", "text": "hi"}]))
    window = open_window(doc)
    told: list[tuple[str, str]] = []
    monkeypatch.setattr(traces_ui.QMessageBox, "warning", lambda parent, title, text: told.append((title, text)))
    window.set_follow_latest(False)
    window.go_to(0)
    qtbot.waitUntil(lambda: window.at() == 1)
    target = tmp_path / "request.json"
    assert not window.traces.export("openai", str(target))
    assert told == [("Nothing exported", "the request as of its first 1 message(s) holds no message for the model, "
                     "and a chat completions body needs at least one: nothing written (move the cursor past the "
                     "first text)")]
    assert not target.exists()
    window.go_to(1)
    qtbot.waitUntil(lambda: window.at() == 2)
    assert window.traces.export("openai", str(target))
    assert json.loads(target.read_text())["messages"] == [{"role": "user", "content": "hi"}]
    assert len(told) == 1


def test_an_export_of_one_span_says_one_span(open_window: Any, tmp_path: Path) -> None:
    """A document with no model turn is one span, said "Exported 1 spans" (driven by keys on the adder agent)."""
    doc = tmp_path / "a.json"
    doc.write_text(json.dumps([{"type": "text", "role": "system", "text": "hi"}]))
    window = open_window(doc)
    assert window.traces.export("otlp-json", str(tmp_path / "one.json"))  # type: ignore[attr-defined]
    assert window.statusBar().currentMessage() == f"Exported 1 span to {tmp_path / 'one.json'}"


def test_an_export_too_big_for_a_collector_says_so(open_window: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The size a collector would refuse is said in the banner (the status bar's line cut the advice off and
    went in ten seconds), with a button that exports again without the root span's copy of the document."""
    from contextdeck.engine.traces import _export

    window, traces = exporting(open_window, tmp_path)
    assert traces.export_dialog()
    assert "MiB" not in window.statusBar().currentMessage()
    assert not window.banner.isVisibleTo(window)
    monkeypatch.setattr(_export, "COLLECTOR_LIMIT", 1_000)
    assert traces.export_dialog()
    assert "too big for a collector" in window.statusBar().currentMessage()
    said = window.banner.label.text()
    assert window.banner.isVisibleTo(window)
    assert "an OTLP collector refuses a request over 1 KiB" in said
    assert "the export is " in said
    root = json.loads((tmp_path / "trace.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert _export.DOCUMENT in [attribute["key"] for attribute in root["attributes"]]
    [again] = window.banner.buttons()
    assert again.text() == "Export Without the Document"
    again.click()
    root = json.loads((tmp_path / "trace.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert _export.DOCUMENT not in [attribute["key"] for attribute in root["attributes"]]
    assert "without the document's copy" in window.statusBar().currentMessage()


def test_the_import_shortcut_asks_for_a_file(qtbot: Any, open_window: Any) -> None:
    """Ctrl+Shift+I reaches File → Import Trace… from the keyboard (a cancelled file dialog opens nothing)."""
    window = open_window(None)
    asked: list[bool] = []
    window.traces.ask_import_paths = lambda: asked.append(True) or []  # type: ignore[attr-defined]
    qtbot.keyClick(window, "I", Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: asked == [True])
    # The click leaves Shift down in the application's modifier state: a later test's Delete would be Shift+Delete
    # (test_window.py's watch table ignored it when run after this file).
    qtbot.keyRelease(window, Qt.Key.Key_Shift)
    assert QApplication.keyboardModifiers() == Qt.KeyboardModifier.NoModifier


def test_the_import_dialog_lists_the_files_the_import_reads(tmp_path: Path) -> None:
    """The file dialog's first filter shows each kind of file the import reads: a rotated log gzipped, JSON Lines
    named .ndjson, the spans a console printed, as well as .json and .jsonl."""
    untidy = Path(__file__).parent.parent / "cli" / "untidy_traces"
    files = {"run.jsonl.gz": gzip.compress((untidy / "failed_then_retried.jsonl").read_bytes()),
             "run.ndjson": (untidy / "failed_then_retried.jsonl").read_bytes(),
             "spans.txt": (untidy / "console_spans.txt").read_bytes(),
             "spans.log": (untidy / "console_spans.txt").read_bytes(),
             "stream.json": (untidy / "streamed_chunks.json").read_bytes(),
             "run.jsonl": (untidy / "responses_chained.jsonl").read_bytes()}
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
        assert import_trace(tmp_path / name)
    first = traces_ui.IMPORT_FILTERS.split(";;")[0]
    patterns = first[first.index("(") + 1:first.index(")")].split()
    assert sorted(QDir(str(tmp_path)).entryList(patterns, QDir.Filter.Files)) == sorted(files)


def test_an_import_reads_the_file_off_the_gui_thread_and_can_be_cancelled(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is parsed on a worker thread while a "Reading…" dialog offers Cancel; cancelled, nothing opens,
    the open document stays and the status bar says so."""
    source = tmp_path / "exchange.json"
    source.write_text(json.dumps(EXCHANGE))
    window = open_window(None)
    before = window.session.document
    traces = window.traces  # type: ignore[attr-defined]
    release_read = threading.Event()
    on_main: list[bool] = []
    read = traces_ui.import_trace

    def slow_read(path: str, **options: Any) -> Any:
        on_main.append(threading.current_thread() is threading.main_thread())
        release_read.wait(10)
        return read(path, **options)

    monkeypatch.setattr(traces_ui, "import_trace", slow_read)
    task = traces.import_path(str(source))
    qtbot.waitUntil(lambda: on_main == [False])
    assert traces.reading is not None
    assert traces.reading.isVisible()
    assert traces.reading.labelText() == "Reading exchange.json…"
    traces.reading.findChild(QPushButton).click()  # its Cancel
    assert not imported(qtbot, task)
    release_read.set()
    assert window.session.document is before
    assert window.statusBar().currentMessage() == "Import of exchange.json cancelled."


def long_log(path: Path, turns: int) -> Path:
    """A JSON Lines log of `turns` exchanges, each asking for one more tool call and repeating the run so far."""
    messages: list[Any] = [SYSTEM, USER]
    lines = []
    for n in range(turns):
        asked = {"role": "assistant", "content": None, "tool_calls": [tool_call(f"call_{n}", f"city {n}")]}
        lines.append({"request": {"model": "m", "tools": [WEATHER], "messages": list(messages)},
                      "response": completion(asked)})
        messages += [asked, {"role": "tool", "tool_call_id": f"call_{n}", "content": "sunny"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


class HeldRead:
    """`import_trace` as the window calls it, counting its units (whether each was read on the main thread) and
    holding the first until `release` is set; what ended the read goes in `ended`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.steps: list[bool] = []
        self.ended: list[BaseException] = []
        self.release = threading.Event()
        read = traces_ui.import_trace

        def held_read(path: str, *, step: Callable[[], None], **options: Any) -> Any:
            def counted() -> None:
                self.steps.append(threading.current_thread() is threading.main_thread())
                if len(self.steps) == 1:  # the first unit waits until the test has stopped the import
                    self.release.wait(10)
                step()
            try:
                return read(path, step=counted, **options)
            except BaseException as error:
                self.ended.append(error)
                raise

        monkeypatch.setattr(traces_ui, "import_trace", held_read)


def test_a_cancelled_import_stops_reading_and_the_next_one_opens(
        qtbot: Any, open_window: Any, tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cancel stops the worker's read at its next unit (it read one of the log's many lines and exchanges, not the
    rest), with `Stopped`, which nothing reports; the edited document and its undo history stay as they were, and
    an import after it reads the file whole and opens it."""
    source = long_log(tmp_path / "run.jsonl", 40)
    window = open_window(examples / "refund_workflow.json")
    window.commands.insert(0, {"type": "text", "role": "user", "text": "unsaved work"})
    stack = window.session.undo_stack
    before = (window.session.document, window.session.document.dumps(), stack.count(), stack.index())
    traces = window.traces  # type: ignore[attr-defined]
    held = HeldRead(monkeypatch)
    steps, ended, release = held.steps, held.ended, held.release
    task = traces.import_path(str(source))
    qtbot.waitUntil(lambda: steps == [False])
    traces.reading.findChild(QPushButton).click()  # its Cancel
    assert not imported(qtbot, task)
    release.set()
    qtbot.waitUntil(lambda: bool(ended), timeout=10000)
    assert isinstance(ended[0], Stopped)
    assert steps == [False]  # stopped at the unit it was reading: no other line or exchange was read
    assert (window.session.document, window.session.document.dumps(), stack.count(), stack.index()) == before
    assert window.statusBar().currentMessage() == "Import of run.jsonl cancelled."
    assert not window.banner.isVisibleTo(window)
    traces.ask_import_choice = lambda name, found: ImportChoice(found[0], Redaction())
    assert imported(qtbot, traces.import_path(str(source)))
    assert len(ended) == 1
    assert len(steps) > 40  # (every line and exchange, this time)
    assert window.session.path is None
    assert window.session.document.dumps() == import_trace(source)[0].document.dumps()


def test_closing_the_window_stops_an_import_under_way(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window closed while a trace is read stops the read at its next unit, as Cancel does."""
    source = long_log(tmp_path / "run.jsonl", 40)
    window = open_window(None)
    held = HeldRead(monkeypatch)
    task = window.traces.import_path(str(source))  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: held.steps == [False])
    window.close()
    qtbot.waitUntil(task.done)
    held.release.set()
    qtbot.waitUntil(lambda: bool(held.ended), timeout=10000)
    assert isinstance(held.ended[0], Stopped)
    assert held.steps == [False]


def test_an_export_named_without_a_suffix_is_a_json_file(open_window: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """File → Export… with a bare name wrote a file without a suffix; both formats are JSON: `.json` is added."""
    window = open_window(None)

    def typed(dialog: QFileDialog) -> QDialog.DialogCode:
        dialog.selectFile(str(tmp_path / "trace"))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(traces_ui.QFileDialog, "exec", typed)
    assert window.traces.ask_export_target() == ("otlp-json", str(tmp_path / "trace.json"))  # type: ignore[attr-defined]


@pytest.mark.parametrize(("answer", "exported"), [("add", "trace.py.json"), ("keep", "trace.py"), ("cancel", None)])
def test_an_export_named_with_another_suffix_is_asked_about_as_save_as_asks(
        open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, exported: str | None) -> None:
    """Export took a typed `trace.py` as it was (Save As asks): the same question now, by the same piece — Add .json,
    Keep trace.py, or Cancel, which shows the dialog again with the name and the format as chosen."""
    window = open_window(None)
    shown: list[tuple[str, str]] = []
    typed = iter([(str(tmp_path / "trace.py"), True), ("", False)])

    def typing(dialog: QFileDialog) -> QDialog.DialogCode:
        shown.append((Path(dialog.selectedFiles()[0]).name, dialog.selectedNameFilter()))
        name, accepted = next(typed)
        dialog.selectNameFilter(traces_ui.OPENAI)
        if name:
            dialog.selectFile(name)
        return QDialog.DialogCode.Accepted if accepted else QDialog.DialogCode.Rejected

    monkeypatch.setattr(traces_ui.QFileDialog, "exec", typing)
    asked: list[tuple[str, str, tuple[str, ...], str]] = []
    window.files.ask_suffix = lambda *question: (asked.append((Path(question[0]).name, Path(question[1]).name,
                                                               *question[2:])), answer)[1]
    target = window.traces.ask_export_target()  # type: ignore[attr-defined]
    assert target == (None if exported is None else ("openai", str(tmp_path / exported)))
    assert asked == [("trace.py", "trace.py.json", (".json",), "Export")]
    assert shown[1:] == ([("trace.py", traces_ui.OPENAI)] if exported is None else [])
    box = window.files.suffix_question(str(tmp_path / "trace.py"), str(tmp_path / "trace.py.json"), (".json",),
                                       "Export")
    assert "<b>trace.py</b> does not end in .json. Save it as <b>trace.py.json</b>?" in box.text()
    assert box.windowTitle() == "Export"


def test_export_suggests_a_name_beside_the_document_for_the_format_chosen(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """File → Export…'s name box started empty: it suggests `<stem>.otlp.json` beside the document, and
    `<stem>.openai.json` once the other format is chosen by keys; a name the user typed stays as typed."""
    _, traces = exporting(open_window, tmp_path)
    dialog = traces.export_file_dialog()
    qtbot.addWidget(dialog)
    assert dialog.selectedFiles() == [str(tmp_path / "weather.otlp.json")]
    formats = dialog.findChild(QComboBox, "fileTypeCombo")
    qtbot.keyClick(formats, Qt.Key.Key_Down)
    assert dialog.selectedNameFilter() == traces_ui.OPENAI
    assert dialog.selectedFiles() == [str(tmp_path / "weather.openai.json")]
    name = dialog.findChild(QLineEdit, "fileNameEdit")
    name.setText("mine.json")
    qtbot.keyClick(formats, Qt.Key.Key_Up)
    assert dialog.selectedNameFilter() == traces_ui.OTLP
    assert dialog.selectedFiles() == [str(tmp_path / "mine.json")]


def test_an_imported_document_is_called_by_its_trace_until_it_is_saved(
        qtbot: Any, open_window: Any, tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An imported, unsaved document exported as `untitled.otlp.json` with its root span `invoke_agent untitled`:
    it is called by the file it came from (or the agent its trace names) in the window's title, the export's
    suggested name and root span, and Save As's suggested name, and those dialogs start beside the trace, not in
    the folder the program was started from; once saved, it is called by its file."""
    path, _, _ = exchange_file(tmp_path, fake_llm)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    window = open_window(None)
    traces = window.traces  # type: ignore[attr-defined]
    traces.ask_import_choice = lambda name, imported: ImportDialog(name, imported, window).choice()
    assert imported(qtbot, traces.import_path(str(path)))
    assert window.windowTitle() == "exchange[*] — ContextDeck"
    dialog = traces.export_file_dialog()
    qtbot.addWidget(dialog)
    assert dialog.selectedFiles()[0] == str(tmp_path / "exchange.otlp.json")  # beside the trace, not the cwd
    assert traces.export("otlp-json", str(tmp_path / "out.json"))
    spans = json.loads((tmp_path / "out.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert spans[0]["name"] == "invoke_agent exchange"
    suggested: list[str] = []
    monkeypatch.setattr(files_ui.QFileDialog, "getSaveFileName",
                        lambda parent, title, start, filters: (suggested.append(start), ("", ""))[1])
    window.files.save_as_dialog()
    assert suggested[0] == str(tmp_path / "exchange.json")
    assert window.session.save_as(tmp_path / "kept.json")
    assert window.session.name == "kept"
    window.session.new()
    assert window.session.name == "untitled"
    assert window.windowTitle().startswith("Untitled")


def test_an_imported_trace_leaves_the_window_as_narrow_as_before(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """Driven at 1280×800 with the Experiments pane shown, an import widened the window past the screen: the Calls
    panel's heading ("Turn 1's calls · then turn 2, the answer: gpt-4o-mini · tokens unknown") and the pane's first
    line ("exchange (unsaved): no dataset"), a line each, set the docks' least widths. Both wrap: the window's least
    width is what it was before the import."""
    doc = tmp_path / "a.json"
    doc.write_text(json.dumps([{"type": "text", "role": "system", "text": "hi"}]))
    window = open_window(doc)
    window.menu("Run").actions()[-1].trigger()  # Run → Experiments…
    least = window.minimumSizeHint().width()
    path = tmp_path / "exchange.json"
    path.write_text(json.dumps(EXCHANGE))
    (trace,) = import_trace(path)
    window.session.open_document(trace.document, trace.name or None, path)
    qtbot.waitUntil(lambda: "then turn 2" in window.agent_run.turn_label.text())  # type: ignore[attr-defined]
    assert "(unsaved)" in window.experiments.dataset_label.text()  # type: ignore[attr-defined]
    assert window.minimumSizeHint().width() <= least


def test_several_otlp_files_chosen_are_imported_as_one(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """File → Import Trace… takes several files: a trace's spans and, in a file of their own, their log records are
    read as one (format.md §10); the progress, the choice and the status name both."""
    trace, span_id = "ab" * 16, "11" * 8
    body = {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "Hi"}}]}}
    said = {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "Hello!"}}]}}
    choice = {"kvlistValue": {"values": [{"key": "finish_reason", "value": {"stringValue": "stop"}},
                                         {"key": "message", "value": said}]}}
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"timeUnixNano": "1", "traceId": trace, "spanId": span_id, "eventName": "gen_ai.user.message", "body": body},
        {"timeUnixNano": "2", "traceId": trace, "spanId": span_id, "eventName": "gen_ai.choice", "body": choice}]}]}]}
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": span_id, "name": "chat m", "startTimeUnixNano": "0", "endTimeUnixNano": "10",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}
    (tmp_path / "spans.json").write_text(json.dumps(spans))
    (tmp_path / "logs.json").write_text(json.dumps(logs))
    window = open_window(None)
    traces = window.traces  # type: ignore[attr-defined]
    traces.ask_import_paths = lambda: [str(tmp_path / "spans.json"), str(tmp_path / "logs.json")]
    names: list[str] = []

    def choose(name: str, found: list[Any]) -> ImportChoice:
        names.append(name)
        return ImportChoice(found[0], Redaction.parse([]))

    traces.ask_import_choice = choose
    task = traces.import_dialog()
    assert traces.reading.labelText() == "Reading spans.json and logs.json…"
    assert imported(qtbot, task)
    assert window.session.document.solution["output"] == "Hello!"
    assert names == ["spans.json and logs.json"]
    assert window.statusBar().currentMessage().startswith("Imported spans.json and logs.json: ")
