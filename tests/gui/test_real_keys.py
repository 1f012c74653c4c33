"""The keyboard paths with real key events: the window in its own process under Xvfb with a window manager
(openbox), keys typed by xdotool — focus bugs that QTest's events, sent straight to a widget, hide.

Needs Xvfb, openbox and xdotool (`apt-get install -y xvfb openbox xdotool libxcb-icccm4 libxcb-keysyms1`;
.ci/run installs them when it can): without them the test is skipped, and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TOOLS = ("Xvfb", "openbox", "xdotool")
pytestmark = pytest.mark.skipif(not all(shutil.which(tool) for tool in TOOLS),
                                reason="real keys need Xvfb, openbox and xdotool")
APP = Path(__file__).with_name("real_keys_app.py")


def _wait(condition: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def display() -> Iterator[dict[str, str]]:
    """An X server of our own and a window manager on it; the environment that reaches them."""
    # Xvfb picks a free display itself and writes its number to the pipe: two tests starting servers at once
    # (the suite runs on several workers) never race for the same number.
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1600x1000x24",
                               "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_end,))
    os.close(write_end)
    with os.fdopen(read_end) as told:
        number = told.readline().strip()  # empty when the server failed to start
    env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
    manager = None
    try:
        if not number:
            raise AssertionError("Xvfb did not start")
        manager = subprocess.Popen(["openbox"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        yield env
    finally:
        for process in (manager, server):
            if process is not None:
                process.terminate()
                process.wait(10)


class App:
    """The window in its own process; keys go to it through the X server."""

    def __init__(self, env: dict[str, str], doc: Path, folder: Path) -> None:
        self.env, self.doc = env, doc
        self.process = subprocess.Popen([sys.executable, str(APP), str(doc), str(folder)], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []  # what the window said (real_keys_app.py), as it says it
        self.listener = threading.Thread(target=self._listen, daemon=True)
        self.listener.start()
        try:
            _wait(lambda: "ready" in self.lines or self.process.poll() is not None, 120, "the window")
        except AssertionError:
            self.close()
            raise
        if "ready" not in self.lines:
            self.close()
            raise AssertionError("the window did not start")

    def _listen(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def keys(self, *keys: str, until: str = "") -> None:
        """Types `keys`; with `until`, then waits until the window says a line that starts with it (a key meant for
        a menu, or for a form, goes once that is on screen)."""
        start = len(self.lines)
        subprocess.run(["xdotool", "key", "--delay", "60", *keys], env=self.env, check=True)
        if until:
            _wait(lambda: any(line.startswith(until) for line in self.lines[start:]), 30, f"{until!r} after {keys}")

    def type(self, text: str) -> None:
        subprocess.run(["xdotool", "type", "--delay", "60", text], env=self.env, check=True)

    def saved(self) -> list[Any]:
        """Ctrl+S, then the document's messages as written."""
        before = self.doc.stat().st_mtime_ns
        self.keys("ctrl+s")
        _wait(lambda: self.doc.stat().st_mtime_ns != before, 30, "the save")
        return json.loads(self.doc.read_text(encoding="utf-8"))["context"]  # type: ignore[no-any-return]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(20)
        listener = getattr(self, "listener", None)
        if listener is not None:
            listener.join(20)  # it has read stdout to its end
        _out, errors = self.process.communicate(timeout=20)  # its pipes drained and closed
        print(*getattr(self, "lines", ()), errors, sep="\n")  # what the window said (shown when the test fails)


@pytest.fixture
def app(display: dict[str, str], tmp_path: Path, examples: Path) -> Iterator[App]:
    doc = tmp_path / "refund.json"
    shutil.copy(examples / "refund_workflow.json", doc)
    running = App(display, doc, tmp_path)
    yield running
    running.close()


def test_real_keys_insert_type_tab_and_switch_themes(app: App, examples: Path) -> None:
    """With real keys: Alt+1, Home, Insert Text Message, type — the text is the new message's; Tab leaves the
    body (no tab typed) and Ctrl+Tab types one; Alt+2 then typing edits the body, not the Type; the theme
    keys (Ctrl+Alt+3, Ctrl+Alt+2) change nothing; Ctrl+S writes exactly that."""
    original = json.loads((examples / "refund_workflow.json").read_text(encoding="utf-8"))["context"]
    app.keys("alt+1", "ctrl+Home", "ctrl+shift+t")
    app.type("hello")
    app.keys("Tab", "x", "alt+2", "End", "ctrl+Tab")
    app.type("there")
    app.keys("ctrl+alt+3", "ctrl+alt+2", "ctrl+alt+3")
    context = app.saved()
    assert context[1] == {"type": "text", "role": "user", "text": "hello\tthere"}
    assert context[:1] + context[2:] == original



def test_real_keys_tab_passes_the_forms_item_buttons_and_keys_remove_and_move(app: App, examples: Path) -> None:
    """With real keys, on the state's form (every field optional, each with a ✕): Alt+2 puts the focus on `order`'s
    null box and Tab on `policy.maxDays` (no ✕ in between); Ctrl+Shift+Delete removes that field and puts the focus
    on the next, so a second one removes `autoApproveBelow` too. Then in the log: Space on "+ Add item", "a", Tab
    goes past the item's ▲ ▼ ✕ straight to "+ Add item" again, Space, "b", and Ctrl+Shift+Up moves "b" first."""
    original = json.loads((examples / "refund_workflow.json").read_text(encoding="utf-8"))["context"]
    app.keys("alt+1", "ctrl+Home", "Down", "Down", until="selected: 2")
    app.keys("alt+2", until="focus: QCheckBox")
    app.keys("Tab", until="focus: NumberBox")  # the next field's box, no ✕ between (a ✕ would stop the wait)
    app.keys("ctrl+shift+Delete", until="undo: ")
    app.keys("ctrl+shift+Delete", until="undo: ")
    for _ in range(12):  # on to the log's "+ Add item"
        if [line for line in app.lines if line.startswith("focus: ")][-1] == "focus: QToolButton add-item":
            break
        app.keys("Tab", until="focus: ")
    app.keys("space", until="focus: QLineEdit")  # a new item, its box
    app.type("a")
    app.keys("Tab", until="focus: QToolButton add-item")  # past the item's ▲ ▼ ✕: no stops
    app.keys("space", until="focus: QLineEdit")
    app.type("b")
    app.keys("ctrl+shift+Up", until="undo: ")
    context = app.saved()
    assert context[2]["data"] == {**original[2]["data"], "policy": {}, "log": ["b", "a"]}
    assert context[:2] + context[3:] == original[:2] + original[3:]


def test_real_keys_insert_plan_after_a_plan_then_space_adds_a_call(app: App, examples: Path) -> None:
    """With real keys: the refund plan shown, then the tool message above it, Insert Plan Message (Alt+Shift+P),
    Space — the focus is on the new plan's "+ call", so the new plan gets a call (the focus was on the old plan's
    Tool box, deleted a turn later: the Space was lost)."""
    original = json.loads((examples / "refund_workflow.json").read_text(encoding="utf-8"))["context"]
    app.keys("alt+1", "ctrl+End", "Up", until="selected: 3")  # the tool message, in the editor
    app.keys("alt+shift+p", until="focus: QPushButton")  # the new plan's "+ call"
    app.keys("space")
    context = app.saved()
    assert context[4]["type"] == "plan"
    assert len(context[4]["plan"]) == 1
    assert context[:4] + context[5:] == original


def test_real_keys_a_menu_entry_gives_the_keys_back_not_to_the_menu_bar(app: App, examples: Path) -> None:
    """With real keys: a timeline row, then Alt+R, Escape, Alt+R, V (Approve each call, a menu opened by its letter
    while the menu bar had the keys) — the keys go back to the timeline, so Down moves to the next row and Delete
    deletes it (they stayed on the menu bar, where Down did nothing)."""
    original = json.loads((examples / "refund_workflow.json").read_text(encoding="utf-8"))["context"]
    app.keys("alt+1", "ctrl+Home", "Down", until="selected: 1")
    app.keys("alt+r", until="menu shown: Run")
    app.keys("Escape", until="menu hidden: Run")  # the menu bar keeps the keys
    app.keys("alt+r", until="menu shown: Run")
    app.keys("v", until="focus: TimelineTable")  # the keys back in the timeline, where the next ones go
    app.keys("Down", "Delete", until="undo: ")
    context = app.saved()
    assert context == original[:2] + original[3:]  # the row below the one chosen before the menu


@pytest.mark.skipif(not shutil.which("import"), reason="grabbing the dialog needs ImageMagick's import")
def test_real_keys_save_as_after_dark_is_dark_on_a_gtk_desktop(display: dict[str, str], tmp_path: Path,
                                                              examples: Path) -> None:
    """On a desktop whose file dialogs are GTK's (the gtk3 platform theme, a light one), Ctrl+Alt+3 (Dark) then
    Ctrl+Shift+S: the Save As dialog is dark like the window (GTK's own came up light, in the desktop's colours)."""
    doc = tmp_path / "refund.json"
    shutil.copy(examples / "refund_workflow.json", doc)
    app = App({**display, "QT_QPA_PLATFORMTHEME": "gtk3"}, doc, tmp_path)
    try:
        app.keys("ctrl+alt+3", "ctrl+shift+s")
        found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^Save context as$"],
                               env=display, check=True, timeout=60, capture_output=True, text=True)
        dialog = found.stdout.split()[0]
        grey: list[float] = []  # its mean and spread of grey, 0 to 1

        def drawn() -> bool:  # mapped, it is one colour until drawn
            grab = subprocess.run(["import", "-window", dialog, "-colorspace", "Gray", "-format",
                                   "%[fx:mean] %[fx:standard_deviation]", "info:"],
                                  env=display, check=True, timeout=60, capture_output=True, text=True)
            grey[:] = [float(number) for number in grab.stdout.split()]
            return grey[1] > 0.05

        _wait(drawn, 30, "the dialog drawn")
        assert grey[0] < 0.4  # the light dialog: about 0.9; the dark one: about 0.15
        app.keys("Escape")
    finally:
        app.close()


class Started(App):
    """`contextdeck gui DOC` as a user starts it (its own settings, recovery and log folders under `folder`):
    the document opens after the window is shown, so the focus is wherever the window's start leaves it."""

    def __init__(self, env: dict[str, str], doc: Path, folder: Path) -> None:
        self.env, self.doc = env, doc
        self.lines = []  # says nothing to wait for: it is the program itself
        homes = {name: str(folder / name) for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}
        self.process = subprocess.Popen([sys.executable, "-m", "contextdeck", "gui", str(doc)],
                                        env={**env, **homes}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        title = f"{doc.name} — ContextDeck"  # once the document is open
        subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", title], env=env, check=True,
                       timeout=60, stdout=subprocess.DEVNULL)
        time.sleep(1.5)  # the views fill in over turns of their own; the window manager activates the window


def test_real_keys_at_start_never_retype_a_message(display: dict[str, str], tmp_path: Path, examples: Path) -> None:
    """Started as a user starts it, the window has the focus on the timeline: keys typed at once and Tab change
    nothing (the focus was in the editor's Type box, and "zz", Tab re-typed the plan as a data message
    "planzz", its five calls gone)."""
    doc = tmp_path / "refund.json"
    shutil.copy(examples / "refund_workflow.json", doc)
    original = json.loads(doc.read_text(encoding="utf-8"))["context"]
    started = Started(display, doc, tmp_path)
    try:
        started.type("zz")
        started.keys("Tab")
        assert started.saved() == original
    finally:
        started.close()
