"""The LLM view shows the request as the model receives it: messages under their roles, and the schema."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPointF, QSettings, Qt

from contextdeck.engine import Context, compose_request, load_document
from contextdeck.gui import _background, _lines
from contextdeck.gui import _llm as llm
from contextdeck.gui._app import create_window
from contextdeck.gui._window import MainWindow

DOCUMENT = {
    "schema": {"type": "object", "properties": {"summary": {"type": "string"}}},
    "context": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"type": "tool", "tool": "Tool.detectLanguage"},
        {"type": "tool", "tool": {"greetUser": {"type": "object", "properties": {"userName": {"type": "string"}}}}},
        {"type": "error", "data": {"call": {"_tool": "a", "_outputPath": "†state.x"}, "error": "first"}},
        {"type": "error", "data": {"call": {"_tool": "b"}, "error": "second"}},
        {"role": "user", "content": "Summarise."},
    ],
}


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> MainWindow:
    """The real window on a document with roles, a tool reference, two errors and an output schema."""
    win = opened_window(qtbot, tmp_path, "request.json", DOCUMENT)
    win.llm_dock.raise_()
    yield win
    win.session.close()


def test_the_messages_tab_shows_each_message_under_its_role(qtbot: Any, window: MainWindow) -> None:
    """System and user messages print differently; each error is its own block; it is `render`'s text."""
    document = window.session.document
    expected = compose_request(document.context, document.schema).messages_text()
    qtbot.waitUntil(lambda: window.llm_view.messages.toPlainText() == expected)
    text = window.llm_view.messages.toPlainText()
    assert text.startswith("--- system ---\nYou are a helpful assistant.\n\n--- user ---\n## Data: ¶error")
    assert text.count("## Data: ¶error") == 2
    assert text.endswith("--- user ---\nSummarise.")


def test_the_schema_tab_shows_the_composed_schema_and_the_tools(qtbot: Any, window: MainWindow) -> None:
    """The Schema tab holds the composed schema: meta, nullable output, calls of the tools offered."""
    window.llm_view.tabs.setCurrentWidget(window.llm_view.schema)
    qtbot.waitUntil(lambda: "Tools offered: greetUser (latent)" in window.llm_view.schema.toPlainText())
    text = window.llm_view.schema.toPlainText()
    schema = json.loads(text[text.index("\n\n") + 2 :])
    assert list(schema["properties"]) == ["meta", "output", "calls"]
    assert schema["properties"]["output"]["type"] == ["object", "null"]
    assert schema["properties"]["calls"]["items"]["properties"]["_tool"] == {"const": "greetUser"}


def test_the_schema_tab_shows_embedded_defs_at_the_top_of_the_composed_schema(qtbot: Any, tmp_path: Path) -> None:
    """A tool's and the output schema's `$defs` are the composed schema's, their `$ref`s pointing there."""
    name = {"$ref": "#/$defs/name"}
    greet = {"type": "object", "$defs": {"name": {"type": "string"}}, "properties": {"userName": name}}
    output = {"type": "object", "$defs": {"name": {"enum": ["done"]}}, "properties": {"summary": name}}
    win = opened_window(qtbot, tmp_path, "defs.json", {"schema": output, "context": [
        {"type": "tool", "tool": {"greetUser": greet}}, {"role": "user", "content": "Hi."}]})
    try:
        win.llm_dock.raise_()
        win.llm_view.tabs.setCurrentWidget(win.llm_view.schema)
        qtbot.waitUntil(lambda: "Tools offered: greetUser (latent)" in win.llm_view.schema.toPlainText())
        text = win.llm_view.schema.toPlainText()
        schema = json.loads(text[text.index("\n\n") + 2 :])
        assert schema["$defs"] == {"output.name": {"enum": ["done"]}, "calls.greetUser.name": {"type": "string"}}
        assert schema["properties"]["output"]["properties"]["summary"] == {"$ref": "#/$defs/output.name"}
    finally:
        win.session.close()


def test_an_unknown_reference_shows_until_a_registry_names_it(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """`Tool.detectLanguage` without a registry is a problem above the tabs; File → Load Tool Folder… loads
    one, and the tool joins the schema while the problem goes."""
    view = window.llm_view
    qtbot.waitUntil(lambda: "unknown tool 'detectLanguage'" in view.problems.text())
    assert view.problems.isVisible()
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "detect.json").write_text(json.dumps(
        {"type": "object", "properties": {"_tool": {"const": "detectLanguage"}, "text": {"type": "string"}}}))
    registry = window.tool_registry
    registry.ask_folder = lambda parent: str(folder)
    action = registry.actions_by_name["load_tool_folder"]
    assert action in window.menu("File").actions()
    action.trigger()
    qtbot.waitUntil(lambda: not view.problems.isVisible())
    view.tabs.setCurrentWidget(view.schema)
    qtbot.waitUntil(lambda: "detectLanguage (latent)" in view.schema.toPlainText())
    assert "Loaded 1 tools from tools: detectLanguage" in window.statusBar().currentMessage()


def test_a_python_registry_asks_first_and_a_broken_one_says_why(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """A Python registry is code: refused when the user says no; a file that defines nothing is reported."""
    registry = window.tool_registry
    module = tmp_path / "tools.py"
    module.write_text("TOOLS = {'detectLanguage': {'type': 'object'}}\n")
    registry.confirm = lambda parent, path: False
    assert registry.load_file(str(module)) is False
    assert registry.tools() is None
    broken = tmp_path / "nothing.py"
    broken.write_text("x = 1\n")
    registry.confirm = lambda parent, path: True
    assert registry.load_file(str(broken)) is False
    assert "defines no TOOLS" in window.statusBar().currentMessage()
    assert registry.load_file(str(module)) is True
    qtbot.waitUntil(lambda: not window.llm_view.problems.isVisible())


def test_the_bundled_translate_example_shows_roles_and_explicit_tools(qtbot: Any, examples: Path, tmp_path: Path,
                                                                       window: MainWindow) -> None:
    """The bundled example: a system role, a meta block, an advisor, and translateText offered without _output."""
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "translate_request.json")
    view = window.llm_view
    qtbot.waitUntil(lambda: view.messages.toPlainText().startswith("--- system ---\nYou translate"))
    assert "## Advisor: qualityReviewer" in view.messages.toPlainText()
    document = load_document(examples / "translate_request.json")
    request = compose_request(document.context, document.schema)
    assert {tool.name: tool.latent for tool in request.tools} == {
        "detectLanguage": True, "isEnglish": True, "translateText": False}
    assert dict(request.config) == {"model": "gpt-4o-mini", "temperature": 0}


def test_double_clicking_a_message_selects_where_it_comes_from(qtbot: Any, window: MainWindow) -> None:
    """A double-click on the second error block selects its error message (4) in the timeline."""
    pane = window.llm_view.messages
    qtbot.waitUntil(lambda: pane.toPlainText().count("## Data: ¶error") == 2)
    text = pane.toPlainText()
    second = text.index("## Data: ¶error", text.index("## Data: ¶error") + 1)
    assert window.llm_view.source_at(second) == 4
    pane.scroll_to(second)
    rect = pane.rect_at(second + 3)
    qtbot.mouseDClick(pane.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.selected_message() == 4)
    assert pane.selected_text() == "Data"  # the word double-clicked


def test_enter_selects_where_the_place_found_or_the_top_line_comes_from(qtbot: Any, window: MainWindow) -> None:
    """Only a double click selected the message a part of the request comes from: from the keys there was no way.
    Enter in the Messages tab selects the message of the place found (Ctrl+F selects it) or, with nothing selected,
    of the line at the top of the view."""
    pane = window.llm_view.messages
    qtbot.waitUntil(lambda: pane.toPlainText().count("## Data: ¶error") == 2)
    text = pane.toPlainText()
    second = text.index("## Data: ¶error", text.index("## Data: ¶error") + 1)
    pane.select(second, second + 4)
    window.select_message(0)
    qtbot.keyClick(pane, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.selected_message() == 4)
    pane.select(0, 0)
    pane.scroll_to(second)
    top = window.llm_view.source_at(pane.position_at(QPointF(pane.viewport().width() / 2, 4)))
    assert top is not None
    window.select_message(0 if top != 0 else 1)
    qtbot.keyClick(pane, Qt.Key.Key_Enter)
    qtbot.waitUntil(lambda: window.selected_message() == top)


def big_window(qtbot: Any, tmp_path: Path, count: int) -> MainWindow:
    """The real window on `count` user messages `turn N`."""
    return opened_window(qtbot, tmp_path, "big.json", [{"role": "user", "content": f"turn {n}"} for n in range(count)])


def opened_window(qtbot: Any, tmp_path: Path, name: str, document: Any) -> MainWindow:
    """The real window, shown, on `document` written to `tmp_path / name`."""
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    win = create_window(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), tmp_path / "recovery")
    qtbot.addWidget(win)
    win.files.ask_unsaved = lambda doing: "discard"  # type: ignore[method-assign]
    win.show()
    with qtbot.waitSignal(win.document.documentShown, timeout=10000):
        win.session.open(path)
    return win


def test_a_big_request_is_laid_out_in_the_worker_and_only_its_lines_in_sight_on_screen(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From 5,000 messages the request is composed, and its texts, message starts and line starts made, off the
    GUI thread; the view takes the whole text at once and lays out only the lines it shows (at a million messages
    the text is ten megabytes and a million lines); scrolling reaches the last message, and the sources map."""
    made_on: list[threading.Thread] = []
    lay_out = llm.Rendered.of

    def recorded(request: Any, **options: Any) -> llm.Rendered:
        if request.messages:  # not the empty document the window starts on
            made_on.append(threading.current_thread())
        return lay_out(request, **options)

    monkeypatch.setattr(llm.Rendered, "of", recorded)
    win = big_window(qtbot, tmp_path, llm.BACKGROUND_FROM)
    pane = win.llm_view.messages
    win.llm_dock.raise_()
    qtbot.waitUntil(lambda: f"turn {llm.BACKGROUND_FROM - 1}" in win.llm_view.text(), timeout=20000)
    assert made_on
    assert threading.main_thread() not in made_on
    text = pane.toPlainText()
    assert text == win.llm_view.text()
    assert pane.line_count() == text.count("\n") + 1
    qtbot.waitUntil(lambda: pane.laid_out() > 0)
    assert pane.laid_out() < 200 < pane.line_count() / 50  # the lines in sight and the last screen's
    assert win.llm_view.source_at(text.index("turn 4321\n")) == 4321
    bar = pane.verticalScrollBar()  # scrolling reaches the last message
    bar.setValue(bar.maximum())
    qtbot.wait(50)
    bottom = pane.position_at(pane.viewport().rect().bottomLeft())
    assert win.llm_view.source_at(bottom) == llm.BACKGROUND_FROM - 1
    assert pane.laid_out() < 200
    win.session.close()


def test_find_in_a_big_request_searches_a_fold_made_on_the_worker(qtbot: Any, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """From `BACKGROUND_FROM` messages what Find searches is made on the worker with the text, not the GUI thread."""
    folded_on: list[threading.Thread] = []
    fold = _lines.searched

    def recorded(text: str) -> str:
        if "turn 4321" in text:  # not the empty document the window starts on
            folded_on.append(threading.current_thread())
        return fold(text)

    monkeypatch.setattr(llm, "searched", recorded)
    monkeypatch.setattr(_lines, "searched", recorded)
    win = big_window(qtbot, tmp_path, llm.BACKGROUND_FROM)
    win.llm_dock.raise_()
    pane = win.llm_view.messages
    qtbot.waitUntil(lambda: f"turn {llm.BACKGROUND_FROM - 1}" in win.llm_view.text(), timeout=20000)
    bar = win.llm_view.find_bar
    bar.open()
    qtbot.keyClicks(bar.field, "TURN 4321")
    place = pane.toPlainText().index("turn 4321\n")
    assert pane.selection() == (place, place + len("turn 4321"))
    assert bar.status.text() == "1 of 1"
    assert folded_on
    assert threading.main_thread() not in folded_on
    win.session.close()


def test_a_small_request_is_folded_for_find_only_when_find_is_used(qtbot: Any, window: MainWindow,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Below `BACKGROUND_FROM` a render makes no copy of the texts for Find; the first find makes it, once."""
    folded: list[str] = []
    fold = _lines.searched

    def recorded(text: str) -> str:
        folded.append(text)
        return fold(text)

    monkeypatch.setattr(llm, "searched", recorded)
    monkeypatch.setattr(_lines, "searched", recorded)
    view = window.llm_view
    pane = view.messages
    qtbot.waitUntil(lambda: "--- user ---" in pane.toPlainText())
    view.refresh()
    qtbot.waitUntil(lambda: not view._stale)
    assert folded == []
    view.find_bar.open()
    qtbot.keyClicks(view.find_bar.field, "SUMMARISE")
    assert pane.selection()[1] - pane.selection()[0] == len("summarise")
    assert folded == [pane.toPlainText()]


def test_the_request_shown_before_is_let_go_of_to_be_freed_in_slices(qtbot: Any, window: MainWindow,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Once another request is shown, the one before is handed to the graveyard (`let_go`): its messages, their
    sources and starts; freed where it is replaced, a million messages were a tenth of a second of that turn."""
    view = window.llm_view
    qtbot.waitUntil(lambda: view.request is not None and not view._stale)
    before, starts = view.request, view._starts
    assert before is not None
    buried: list[list[Any]] = []
    monkeypatch.setattr(llm, "let_go", lambda *things: buried.extend(things))
    view.refresh()
    qtbot.waitUntil(lambda: view.request is not before)
    assert buried[0] == list(before.messages)
    assert buried[1] == [message.sources for message in before.messages]
    assert buried[2] is starts


def test_a_big_request_is_composed_on_a_copy_taken_in_slices_that_follows_edits(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy the worker composes from is taken a step per turn (`Context.view_steps`: at a million messages
    one copy is a tenth of a second of the GUI thread); an edit made while it is taken is in the request shown.
    Without the slices, the copy is made in the turn that shows the view."""
    monkeypatch.setattr(_background, "VIEW_STEP", 1000)
    win = big_window(qtbot, tmp_path, llm.BACKGROUND_FROM + 10)
    win.set_follow_latest(True)  # the request of every message, whichever is selected
    qtbot.waitUntil(lambda: not win._busy(), timeout=10000)
    steps: list[int] = []
    edited: list[bool] = []
    view_steps = Context.view_steps

    def counted(context: Context, step: int | None = None, *, infos: bool = True) -> Any:
        taking = view_steps(context, step, infos=infos)
        while True:
            if len(steps) >= 2 and not edited:  # held part-way (a turn each) until the test has edited
                yield
                continue
            try:
                next(taking)
            except StopIteration as done:
                return done.value
            steps.append(len(context))
            yield

    monkeypatch.setattr(Context, "view_steps", counted)
    win.llm_dock.raise_()
    runner = win.llm_view.runner
    assert runner.busy  # the copy has begun, in a later turn
    qtbot.waitUntil(lambda: len(steps) >= 2, timeout=10000)
    assert runner.busy
    win.commands.replace(0, {"role": "user", "content": "edited while copying"}, "Edit")
    edited.append(True)
    qtbot.waitUntil(lambda: not runner.busy, timeout=20000)
    text = win.llm_view.text()
    assert text.startswith("--- user ---\nedited while copying\n")
    assert f"turn {llm.BACKGROUND_FROM + 9}" in text
    win.session.close()


def test_ctrl_f_in_the_llm_view_finds_in_the_tab_in_front(qtbot: Any, window: MainWindow) -> None:
    view = window.llm_view
    window.llm_dock.raise_()
    pane = view.messages
    qtbot.waitUntil(lambda: "--- user ---" in pane.toPlainText())
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    pane.setFocus()
    qtbot.waitUntil(pane.hasFocus)
    qtbot.keyClick(pane, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = view.find_bar
    assert bar.isVisible()
    assert bar.field.hasFocus()
    qtbot.keyClicks(bar.field, "--- user")  # found as it is typed
    text = pane.toPlainText()
    first = text.index("--- user")
    assert pane.selection() == (first, first + len("--- user"))
    places = text.count("--- user")
    assert bar.status.text() == f"1 of {places}"  # said nothing of how many (driven by keys)
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    second = text.find("--- user", first + 1)
    assert pane.selection()[0] == (second if second >= 0 else first)
    assert bar.status.text() == f"{2 if second >= 0 else 1} of {places}"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert pane.selection()[0] == first
    qtbot.keyClicks(bar.field, " nowhere to be found")
    assert bar.status.text() == "Not found"
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert pane.hasFocus()


def test_the_find_bar_counts_in_the_document_shown(qtbot: Any, examples: Path, window: MainWindow) -> None:
    """The count beside the field is of the text in front: another document opened, or the other tab brought in
    front, clears it (it said `1 of 1` of the document before); Enter then counts in the text now shown."""
    view = window.llm_view
    bar = view.find_bar
    qtbot.waitUntil(lambda: "Summarise." in view.messages.toPlainText())
    bar.open()
    qtbot.keyClicks(bar.field, "summarise.")
    assert bar.status.text() == "1 of 1"
    with qtbot.waitSignal(window.document.documentShown, timeout=10000):
        window.session.open(examples / "refund_workflow.json")
    qtbot.waitUntil(lambda: "Summarise." not in view.messages.toPlainText())
    assert bar.status.text() == ""
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.status.text() == "Not found"
    bar.field.setText("--- ")
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.status.text().endswith(f" of {view.messages.toPlainText().count('--- ')}")
    view.tabs.setCurrentWidget(view.schema)
    assert bar.status.text() == ""
