"""The loop in the window (010, 012): a tick ends, the model's next turn is typed (or asked for) and taken.

`install_turns(window)` adds Run → Next Turn… (F8) and Approve Plan, a loop status in the status bar, and
Next Turn on the debugger's toolbar. The turn is checked with the engine's `turn_problems` and applied
with `turn_change` (what `contextdeck run --turn` uses), as one step of the undo stack; a tick ends with
the engine's `conclude`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFontDatabase, QKeySequence, QPicture, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import (
    MISSING,
    SECOND_CALL,
    Diagnostic,
    Document,
    Insert,
    JSONSyntaxError,
    Messages,
    ModelError,
    Request,
    Status,
    as_turn,
    compose_request,
    conclude,
    current_turn,
    json_dumps,
    json_parse,
    json_path_parts,
    request_prompt,
    turn_change,
    turn_problems,
    utc_now,
)

from ._background import BackgroundRunner
from ._first_input import FirstInput, input_targets
from ._inspector import Inspector
from ._inspector._async import spawn
from ._inspector._sessions import Frame
from ._inspector._style import MISSING_COLOUR, WARNING_COLOUR
from ._lines import LinesView, line_starts, role_style
from ._llm import BACKGROUND_FROM, ROLE_COLOURS
from ._slices import slices
from ._summary import clipped, counted
from ._unheard import unheard

if TYPE_CHECKING:
    from ._workbench import Workbench

CHECK_DELAY_MS = 150  # the turn is checked once typing pauses this long
TEMPLATE = '{\n  "calls": [],\n  "output": null\n}\n'
# A call in one of these states can still run in this tick: the tick has not ended.
UNDER_WAY = frozenset({Status.READY, Status.RUNNING, Status.WAITING_FOR_OUTPUT})
Lines = tuple[str, Sequence[int]]  # a text and where its lines start


def _taken(document: Document, turn: Any) -> str:
    """What a turn just taken leaves to do: run its calls, nothing (its output ended the loop), or the next turn."""
    if as_turn(turn)["calls"]:
        return "Turn taken: Continue (F5) runs its calls."
    if conclude(document, turn, "").finished:
        return "Turn taken: its output ends the loop."
    return "Turn taken: it has no calls to run; Run → Next Turn… (F8) gives the next."


class TurnHost(Protocol):
    """What the Next Turn dialog asks of the loop it takes a turn for: the window's (`LoopUI`), or a
    delegate session's (gui/_inspector/_sessions.py)."""

    def document(self) -> Document: ...
    def activities(self) -> Any: ...
    def tools(self) -> Any: ...
    def models(self) -> Any: ...
    def intro(self) -> str: ...
    def take_turn(self, turn: Any, audit: dict[str, Any] | None = None) -> str | None: ...
    def check_turn(self, turn: Any, request: Any = None) -> list[Diagnostic]: ...


class TurnDialog(QDialog):
    """Next Turn: the model's turn as JSON, checked live against the composed request schema; Ask Model
    lets the configured model write it. Take Turn is enabled only for a turn the engine would take."""

    @unheard()  # its widgets' making is a burst of events, none of them a key or a click
    def __init__(self, loop: TurnHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Next Turn")
        self.loop = loop
        document = loop.document()
        self.request: Request | None = None  # composed in the background for a big document
        self.intro = QLabel(loop.intro())
        self.intro.setWordWrap(True)
        self.editor = QPlainTextEdit(TEMPLATE)
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setTabChangesFocus(True)
        self.editor.setPlaceholderText('{"calls": [{"_tool": "…"}], "output": null}')
        self.problems = QListWidget()
        self.problems.setMaximumHeight(110)
        self.problems.setToolTip("A problem chosen (a click, or the arrow keys) selects its place in the turn; a "
                                 "click goes there to correct it")
        # The keys choose as the mouse does; the focus stays in the list, so that the next arrow goes on and Enter
        # reaches the dialog's default button. Only the user's choice: a list filled again while typing selects nothing.
        self.problems.currentItemChanged.connect(self._problem_chosen)
        self.problems.itemClicked.connect(self.show_place)
        self.schema = LinesView("Composing the request…")
        self.messages = LinesView("Composing the request…")
        self.messages.styles = role_style(ROLE_COLOURS)
        tabs = QTabWidget()
        tabs.addTab(self.schema, "Request schema")
        tabs.addTab(self.messages, "Messages")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("The model's turn (JSON):"))
        left_layout.addWidget(self.editor, 1)
        left_layout.addWidget(self.problems)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(tabs)
        split.setSizes([480, 420])
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ask_button = QPushButton("&Ask Model")
        self.ask_button.setToolTip("The configured model (Run → Models…) writes the turn; review it, then take it")
        self.cancel_button = QPushButton("Cancel As&king")
        self.cancel_button.setEnabled(False)
        self.take_button = QPushButton("&Take Turn")
        self.take_button.setDefault(True)
        close = QPushButton("Close")
        self.ask_button.clicked.connect(self.ask)
        self.cancel_button.clicked.connect(self.cancel)
        self.take_button.clicked.connect(self.take)
        self.take_button.setToolTip("Ctrl+Enter, from the text too (where Enter starts a line)")
        for keys in ("Ctrl+Return", "Ctrl+Enter"):  # the button's, while it is enabled
            QShortcut(QKeySequence(keys), self, self.take_button.click)
        close.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.ask_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.take_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.resize(960, 620)
        self.turn: Any = MISSING  # the parsed turn, when the text is JSON
        self.audit: dict[str, Any] | None = None  # the model's exchange, while the text is its answer
        self.answer_text: str | None = None
        self.task: asyncio.Task[Any] | None = None
        self.asking = False  # Take Turn waits while the model writes
        self.received = 0  # characters of the model's answer streamed so far
        self.refused = ""  # the engine's sentence once the answer streamed is known to be refused
        self.timer = QTimer(self, singleShot=True, interval=CHECK_DELAY_MS)
        self.timer.timeout.connect(self.check)
        self.editor.textChanged.connect(self.timer.start)
        models = loop.models()
        if models is None or not models.config.ready:
            self.ask_button.setEnabled(False)
            self.ask_button.setToolTip("No model is set up: Run → Models…")
        self._opening: FirstInput | None = None  # `open_soon`: the input guard until the dialog is open
        self.composer = BackgroundRunner(0, self)
        self.composer.finished.connect(self._composed)
        context, schema, activities, tools = document.context, document.schema, loop.activities(), loop.tools()
        if len(context) < BACKGROUND_FROM:
            self._composed(_composed(context, schema, activities, tools))
        else:  # seconds at 100,000 messages: on a frozen copy, off the GUI thread
            self.composer.request_view(context, lambda view: _composed(view, schema, activities, tools))
            self.check()

    def open_soon(self) -> None:
        """`open()` on the next turn of the event loop that may run a slice of the window's turns (not one begun busy),
        before any other: made and opened in one turn, the dialog was more than a frame. Until then the
        first input that reaches the window under it opens it first and is refused, as the window-modal dialog
        refuses it: a key or a click in between never acts on the window, nor on a dialog half made."""
        under = self.parentWidget()
        window = under.window() if under is not None else None
        self._opening = FirstInput(self._open_now, self, targets=lambda: input_targets(window), refuse=True)
        self._opening.start()
        slices().start(self._lay_out, first=True)  # before the composer's copy of the messages

    def _lay_out(self) -> None:
        """Lay the dialog out (each widget's size hint, its text measured) in a turn of its own, unseen, so that the
        show's turn (`_show_unseen`) does not do it too."""
        if self._opening is None:
            return
        layout = self.layout()
        assert layout is not None  # (made with the dialog)
        with unheard():
            layout.activate()
        slices().start(self._show_unseen, first=True)

    def _show_unseen(self) -> None:
        """Show the dialog once, unseen: its window made and its views sized in a turn of their own; it is painted
        unseen in the next (`_paint_unseen`) and opened in a later one."""
        if self._opening is None:
            return
        with unheard():
            self.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            self.show()
            self.hide()
            self.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, False)
        slices().start(self._paint_unseen, first=True)

    def _paint_unseen(self) -> None:
        """Paint the dialog once into an image: its widgets' first paint (their text laid out, the style's first
        drawing of each) was most of the turn that opened it; the open's paint then finds them painted before."""
        if self._opening is None:
            return
        with unheard():
            self.render(QPicture())
        slices().start(self._open_now, first=True)

    def _open_now(self) -> None:
        if self._opening is None:  # open already, or closed before it opened
            return
        self._opening.stop()
        self._opening = None
        with unheard():  # (every widget of the window under it is told it is blocked)
            self.open()

    def _composed(self, result: object) -> None:
        if isinstance(result, Exception):
            self.status.setText(f"Could not compose the request: {result}")
            return
        if not isinstance(result, tuple):
            return
        self.request, schema_text, messages_text = result
        self.schema.show_text(*schema_text)
        self.messages.show_text(*messages_text)
        self.check()

    # -- the live check -------------------------------------------------------------------------------

    def check(self) -> list[Diagnostic]:
        """Parse and check the text now: the problems are listed; Take Turn follows whether there are errors."""
        self.timer.stop()
        if self.request is None:
            self.take_button.setEnabled(False)
            self.status.setText("Composing the request…")
            return []
        text = self.editor.toPlainText()
        try:
            self.turn = json_parse(text)
        except JSONSyntaxError as error:
            self.turn = MISSING
            found = [Diagnostic(None, f"line {error.line}, column {error.column}", f"not JSON: {error.reason}")]
        else:
            found = self.loop.check_turn(self.turn, self.request)
        self.problems.clear()
        for problem in found:
            item = QListWidgetItem(f"{problem.path}: {problem.reason}")
            item.setData(Qt.ItemDataRole.UserRole, problem.path)
            item.setForeground(QColor(WARNING_COLOUR if problem.severity == "warning" else MISSING_COLOUR))
            self.problems.addItem(item)
        # Empty, the list is a Tab stop that shows nothing.
        self.problems.setFocusPolicy(Qt.FocusPolicy.StrongFocus if found else Qt.FocusPolicy.NoFocus)
        errors = [problem for problem in found if problem.severity == "error"]
        self.take_button.setEnabled(not errors and self.turn is not MISSING and not self.asking)
        if errors:
            self.status.setText(f"Not a turn the request accepts: {counted(len(errors), 'problem')} (listed above).")
        elif self.turn is not MISSING:
            self.status.setText("The turn meets the request schema" + (
                f" ({counted(len(found), 'warning')})." if found else "."))
        return found

    def _problem_chosen(self, item: QListWidgetItem | None, _before: QListWidgetItem | None) -> None:
        if item is not None and self.problems.hasFocus():
            item.setSelected(True)  # (Tab made it current only, drawn as any other)
            self.select_place(item)

    def select_place(self, item: QListWidgetItem) -> bool:
        """Select in the text the value a problem is about (its JSON path), or go to its line and column; False
        when the text no longer has it."""
        span = place_of(self.editor.toPlainText(), str(item.data(Qt.ItemDataRole.UserRole)))
        if span is None:
            return False
        cursor = self.editor.textCursor()
        cursor.setPosition(span[0])
        cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        return True

    def show_place(self, item: QListWidgetItem) -> None:
        """A problem clicked: its place selected, and the text's caret there to correct it."""
        if self.select_place(item):
            self.editor.setFocus()

    # -- taking it -------------------------------------------------------------------------------------

    def take(self) -> bool:
        """Take the turn (checked again first); on a problem nothing changes and the text stays."""
        if self.check() and not self.take_button.isEnabled():
            return False
        audit = self.audit if self.editor.toPlainText() == self.answer_text else None
        problem = self.loop.take_turn(self.turn, audit)
        if problem is not None:
            self.status.setText(problem)
            return False
        self.accept()
        return True

    # -- the model --------------------------------------------------------------------------------------

    def ask(self) -> asyncio.Task[Any] | None:
        models = self.loop.models()
        if models is None or not models.config.ready:
            self.status.setText("No model is set up: Run → Models…")
            return None
        self.asking = True
        self.received, self.refused = 0, ""
        self.ask_button.setEnabled(False)
        self.take_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Asking {models.config.endpoint().label}…")
        self.task = spawn(self._ask(models))
        return self.task

    async def _ask(self, models: Any) -> None:
        document = self.loop.document()
        prompt = request_prompt(document.context, document.schema, activities=self.loop.activities(),
                                tools=self.loop.tools())
        asker = models.asker()
        try:
            await asker.provider.prepare()
            answer = await asker.ask(prompt, self._receiving)
        except asyncio.CancelledError:
            self._asked("Cancelled: the text is as it was.")
            raise
        except ModelError as error:
            if error.reply:  # the model's words are kept, to read and correct
                self._show_text(error.reply, None)
            self._asked(f"The model's answer was not taken: {error}")
            return
        finally:
            await asker.provider.close()
        self._show_text(json.dumps(answer.value, indent=2, ensure_ascii=False) + "\n", answer.summary)
        usage = answer.exchange.get("usage") or {}
        how = "replayed from the recording" if answer.replayed else f"{answer.exchange.get('latency_ms')} ms"
        self._asked(f"The turn from {answer.exchange.get('model')} ({how}, {usage.get('total_tokens', '?')} "
                    "tokens): review it, then Take Turn.")

    def _asked(self, text: str) -> None:
        """The model has answered (or not): the text is checked again, and `text` says what happened."""
        self.asking = False
        self.cancel_button.setEnabled(False)
        self.ask_button.setEnabled(True)
        found = self.check()
        errors = sum(problem.severity == "error" for problem in found)
        self.status.setText(text + (f" {counted(errors, 'problem')} listed above." if errors else ""))

    def _receiving(self, piece: str) -> None:
        if piece == SECOND_CALL:  # the engine's words, not the model's: said, not counted
            self.refused = SECOND_CALL.strip()
        else:
            self.received += len(piece)
        said = f" {self.refused}" if self.refused else ""
        self.status.setText(f"Receiving the model's turn… {self.received} characters{said}")

    def _show_text(self, text: str, audit: dict[str, Any] | None) -> None:
        self.editor.setPlainText(text)
        self.answer_text, self.audit = text, audit

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def done(self, result: int) -> None:
        if self._opening is not None:  # closed before it opened (`open_soon`): it never will
            self._opening.stop()
            self._opening = None
        self.cancel()
        self.composer.stop()  # a request nobody will read: its worker stops at its next message
        super().done(result)

    def delete_when_done(self) -> None:
        """Delete the closed dialog, or each would keep its request's text (megabytes in a big document) for
        good; once its worker and a cancelled question to the model have ended, which still touch it."""

        def delete() -> None:
            if self.task is not None and not self.task.done():
                self.task.add_done_callback(lambda _task: self.deleteLater())
            else:
                self.deleteLater()

        self.composer.when_idle(delete)


_LINE_COLUMN = re.compile(r"line (\d+), column (\d+)")
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, position: int) -> int:
    """Past the white space at `position`."""
    found = _SPACE.match(text, position)
    return found.end() if found is not None else position


def place_of(text: str, where: str) -> tuple[int, int] | None:
    """The span of `text` that a problem's place names: `$.calls[0].text` (a JSON path into the text as
    typed), or `line L, column C` (an empty span there); None when the text does not hold it."""
    found = _LINE_COLUMN.match(where)
    if found:
        lines = text.split("\n")
        line, column = int(found.group(1)), int(found.group(2))
        if line > len(lines):
            return None
        offset = sum(len(before) + 1 for before in lines[: line - 1]) + column - 1
        return offset, offset
    parts = json_path_parts(where)
    if parts is None:
        return None
    decoder = json.JSONDecoder()
    try:
        position = _skip(text, 0)
        if parts[:1] == ("calls",) and text[position:position + 1] == "[":  # a turn typed as its calls alone
            parts = parts[1:]
        for part in parts:
            position = _member(text, position, part, decoder)
        _value, end = decoder.raw_decode(text, position)
    except (ValueError, LookupError):
        return None
    return position, end


def _member(text: str, position: int, part: str | int, decoder: json.JSONDecoder) -> int:
    """Where the member `part` of the object or array at `position` starts; LookupError when it has none."""
    opening = text[position]
    if (opening, isinstance(part, int)) not in (("{", False), ("[", True)):
        raise LookupError(part)
    index = 0
    position = _skip(text, position + 1)
    while text[position] not in "}]":
        if opening == "{":
            key, position = decoder.raw_decode(text, position)
            position = _skip(text, _skip(text, position) + 1)  # past the ':'
            if key == part:
                return position
        elif index == part:
            return position
        _value, position = decoder.raw_decode(text, position)
        position = _skip(text, position)
        if text[position] == ",":
            position = _skip(text, position + 1)
        index += 1
    raise LookupError(part)


def _composed(context: Messages, schema: Any, activities: Any, tools: Any) -> tuple[Request, Lines, Lines]:
    """The request as the model receives it, and its schema's and messages' texts with their line starts
    (megabytes for a big document: made where the request is, on a worker for one)."""
    request = compose_request(context, schema, activities=activities, tools=tools)
    schema_text, messages_text = request.schema_text(), request.messages_text()
    return request, (schema_text, line_starts(schema_text)), (messages_text, line_starts(messages_text))


class LoopUI(QObject):
    """The loop's state in the window (`window.turns`): when a tick ends, how it concludes, the next turn."""

    def __init__(self, window: Workbench, inspector: Inspector, tools: Callable[[], Any]) -> None:
        super().__init__(window.window())
        self.window, self.inspector, self._tools = window, inspector, tools
        self.debugger, self.panel, self.calls = inspector.debugger, inspector.panel, inspector.model
        self.dialog: TurnDialog | None = None
        self.next_turn = QAction("Next &Turn…", window.window())
        self.next_turn.setShortcut(QKeySequence("F8"))
        self.next_turn.setToolTip("The model's next turn: typed (checked against the request schema), or asked for")
        self.next_turn.triggered.connect(lambda _checked=False: self.open_dialog())
        self.approve = QAction("Approve Pla&n", window.window())
        self.approve.setToolTip("Let the lazy plan (012) run: Step and Continue then run its calls")
        self.approve.triggered.connect(lambda _checked=False: self.approve_plan())
        run = window.menu("Run")
        run.addSeparator()
        run.addAction(self.next_turn)
        run.addAction(self.approve)
        toolbar = self.panel.findChild(QToolBar)
        if toolbar is not None:
            toolbar.addSeparator()
            toolbar.addAction(self.next_turn)
        self.label = QLabel()
        window.statusBar().addPermanentWidget(self.label)
        self._was_running = False
        self.debugger.stateChanged.connect(self._debugger_changed)
        self.calls.refreshed.connect(self.update)
        window.document.changed.connect(self.update)
        window.document.documentReplaced.connect(self._document_replaced)
        window.commands.turnChanged.connect(self.turn_changed)
        self.sessions = inspector.sessions
        if self.sessions is not None:
            self.sessions.changed.connect(self.update)
        self.models_source: Callable[[], Any] = lambda: None  # the window's model set-up, wired by the window
        self.update()

    # -- what the window knows ------------------------------------------------------------------------

    def document(self) -> Document:
        return self.window.document.document

    def activities(self) -> Any:
        return self.debugger.activities

    def tools(self) -> Any:
        return self._tools()

    def models(self) -> Any:
        return self.models_source()

    def check_turn(self, turn: Any, request: Any = None) -> list[Diagnostic]:
        """The turn check of the window's document (its delegate files next to it)."""
        return turn_problems(self.document(), turn, activities=self.activities(), tools=self.tools(), request=request)

    def statuses(self) -> list[Status]:
        execution = self.debugger.execution
        if execution is not None:
            return [state.status for state in execution.states]
        return list(self.calls.statuses())

    def lazy(self) -> bool:
        """The calls are a lazy plan (012) not approved yet (as the debugger's, else the panel's, execution
        read it: no scan of the context on every edit)."""
        return _waits_for_approval(self.debugger.execution or self.calls.execution, self.debugger)

    def lazy_session(self) -> Frame | None:
        """The delegate session the call stack has current, when its plan is lazy and not approved yet."""
        if self.sessions is None or self.sessions.current == 0:
            return None
        frame: Frame = self.sessions.frame
        execution = frame.debugger.execution or (frame.loop.execution if frame.loop is not None else None)
        return frame if _waits_for_approval(execution, frame.debugger) else None

    def tick_over(self) -> bool:
        """Nothing of the current turn can run in this tick any more (010's "no more calls are unblocked")."""
        return not self.debugger.running and not self.lazy() and not UNDER_WAY.intersection(self.statuses())

    def finished(self) -> Any:
        """The final output when the loop has finished (the tick is over and its output valid), else MISSING."""
        if not self.tick_over():
            return MISSING
        ending = conclude(self.document(), current_turn(self.document()), "")
        return ending.output if ending.finished else MISSING

    def intro(self) -> str:
        """What the dialog asks for: a document with no turn yet (empty, or no plan and no solution) is asked for
        the first one (it said "The tick has ended"); else, after a tick, the next one."""
        document = self.document()
        where = "The document is empty. Type the model's first turn" if not len(document.context) else \
            "No turn has been taken yet. Type the model's first turn" if current_turn(document) is None else \
            "The tick has ended without a final output. Type the model's next turn"
        return (f"{where}, a solution with <code>calls</code> (they become the plan and run on Continue) and/or "
                "<code>output</code> (one that meets the request schema ends the loop). The request as the model "
                "receives it is on the right.")

    # -- following the debugger -------------------------------------------------------------------------

    def _debugger_changed(self) -> None:
        running = self.debugger.running
        if running and not self._was_running:
            self.plan_solution()
        elif self._was_running and not running:
            self.conclude_tick()
        self._was_running = running
        self.update()

    def plan_solution(self) -> None:
        """A saved request's own solution becomes a plan message when its first call is about to run, as
        `Loop` does when it starts (`turn_change`): the next request sees the plan, and the calls' run record
        follows it. A solution already planned, or whose calls have run, is left as it is."""
        document = self.document()
        execution = self.debugger.execution or self.calls.execution
        if document.solution is None or execution is None or any(
                execution.record.of(index) is not None for index in range(len(execution.plans))):
            return
        change = turn_change(document, document.solution)
        appended = [message for message in (change.meta, change.plan) if message is not None]
        if appended:  # one undo step: the turn's meta (016) and its plan, as the engine's loop appends them
            end = len(document.context)
            self.window.commands.apply_all("Plan the turn", [Insert(end + n, message)
                                                             for n, message in enumerate(appended)])

    def conclude_tick(self) -> None:
        """After a run: when the tick is over, its output ends the loop or, refused, is said in an error message."""
        if not self.tick_over():
            return
        document = self.document()
        ending = conclude(document, current_turn(document), utc_now())
        if ending.error is not None:
            self.window.commands.insert(len(document.context), ending.error, "End of tick: output refused")
        if ending.finished:
            self.panel.message.setText(f"Finished: the final output is {json_dumps(ending.output, indent=False)}")
        elif ending.problem is not None:
            self.panel.message.setText(f"The output was refused ({ending.problem}): Run → Next Turn… (F8)")
        else:  # the calls panel keeps the debugger's own words; the offer is in the status bar
            self.window.statusBar().showMessage("The tick has ended without a final output: Run → Next Turn… (F8)")

    def update(self, *_: object) -> None:
        output = self.finished()
        lazy, session = self.lazy(), self.lazy_session()
        running, asking = self.debugger.running, self.debugger.awaiting_turn
        self.next_turn.setEnabled(output is MISSING and self.tick_over() and not asking)
        self.approve.setEnabled((lazy or session is not None) and not running)
        if session is not None:
            text = f"Loop: {session.title}: the delegate's plan is lazy · Run → Approve Plan"
        elif output is not MISSING:
            text = f"Loop: finished · output {json_dumps(output, indent=False)}"
        elif running:
            text = "Loop: running"
        elif asking:
            text = "Loop: Run with Model asks the model for the next turn"
        elif lazy:
            text = "Loop: the plan is lazy · Run → Approve Plan"
        elif self.tick_over() and not len(self.document().context):
            text = "Loop: an empty document · insert messages, or Next Turn (F8) for the model's first"
        elif self.tick_over():
            text = "Loop: waiting for the next turn (F8)"
        else:
            text = "Loop: in a tick"
        self.label.setText(clipped(text, 89))
        self.label.setToolTip(text)

    def _document_replaced(self) -> None:
        self.debugger.plan_approved = False
        self.update()

    # -- commands -----------------------------------------------------------------------------------------

    def open_dialog(self) -> TurnDialog | None:
        if not self.next_turn.isEnabled():
            return None
        self.dialog = TurnDialog(self, self.window.window())
        self.dialog.finished.connect(self._dialog_closed)
        self.dialog.open_soon()
        return self.dialog

    def _dialog_closed(self, _result: int) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.delete_when_done()

    def take_turn(self, turn: Any, audit: dict[str, Any] | None = None) -> str | None:
        """Append the turn as the engine's `turn_change` says, as one undo step; None, else why not."""
        document = self.document()
        # The open dialog composed the request (window-modal: the document has not changed since).
        request = self.dialog.request if self.dialog is not None else None
        errors = [p for p in self.check_turn(turn, request) if p.severity == "error"]
        if errors:
            return "Not taken: " + "; ".join(str(problem) for problem in errors)
        change = turn_change(document, turn, audit)  # the exchange in short, as `run --llm` keeps it
        if change.plan is None and change.meta is None and change.solution is MISSING:
            return "Not taken: this turn is already the current plan."
        self.window.commands.take_turn(change, "Take the next turn")
        self.window.statusBar().showMessage(_taken(document, turn), 10_000)
        return None

    def turn_changed(self) -> None:
        """The turn changed (taken, undone): the calls panel shows the new calls, the debugger starts afresh."""
        self.debugger.plan_approved = False
        self.inspector.wiring.document_replaced()
        self.panel.message.setText("")
        self.update()

    def approve_plan(self) -> None:
        """Run → Approve Plan: the lazy plan's calls run on Step and Continue (012's checkpoint, passed) —
        the current delegate session's plan when it is the lazy one, else the document's."""
        session = self.lazy_session()
        if session is not None:
            assert session.loop is not None
            session.debugger.plan_approved = True
            session.loop.approve_plan()
            session.model.refresh()
            session.debugger.stopped.emit("The delegate's plan is approved: Step, Continue or Step Out runs it.")
            self.update()
            return
        self.debugger.plan_approved = True
        if self.debugger.execution is not None:
            self.debugger.execution.approve_plan()
            self.debugger.execution.refresh()
        self.calls.refresh()
        self.panel.message.setText("The plan is approved: Continue (F5) runs it.")
        self.update()


def _waits_for_approval(execution: Any, debugger: Any) -> bool:
    """Whether `execution` is a lazy plan (012) its debugger has not been told to run yet."""
    return execution is not None and bool(execution.lazy) and not debugger.plan_approved


def install_turns(window: Workbench, inspector: Inspector, tools: Callable[[], Any]) -> LoopUI:
    """Run → Next Turn… and Approve Plan, the loop's status in the status bar (`window.turns`)."""
    return LoopUI(window, inspector, tools)
