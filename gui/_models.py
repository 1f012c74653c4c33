"""Models in the window: the Models settings page, the model answering latent calls, and the prompt of a call.

`install_models(window)` adds Run → Models…, Use the Model for Latent Calls, and Prompt for This Call…. The
endpoint is kept in the settings without its key (only the name of the variable that holds it); the
exchanges are recorded beside the document (`DOC.models.jsonl`), or in memory until it is saved.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFontDatabase, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import (
    MODES,
    STRATEGIES,
    Activities,
    Asker,
    Cassette,
    Endpoint,
    Execution,
    Insert,
    ModelError,
    Prompt,
    Provider,
    Shape,
    Status,
    answer_call,
    base_url_problem,
    call_prompt,
    cassette_path,
    content_shown,
    request_prompt,
    solution_messages,
)

from ._inspector import Inspector
from ._inspector._async import spawn
from ._inspector._style import MISSING_COLOUR
from ._slices import slices
from ._summary import counted
from ._unheard import unheard

if TYPE_CHECKING:
    from ._workbench import Workbench

PREFIX = "models/"
DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"
CHARACTERS_PER_TOKEN = 4
TOOL_KEY = '"_tool"'  # counted in a streamed solution: one per call received so far
ESTIMATE = "estimate: about 4 characters a token (no tokenizer offline)"
D = TypeVar("D", bound=QDialog)
AHEAD_MS = 1500  # after the window is made, when the prompt dialog is made ahead (again later while busy)


@dataclass(frozen=True)
class ModelConfig:
    """The endpoint the window asks, as kept in the settings: never the key, only its variable's name."""

    base_url: str = ""
    model: str = ""
    api_key_env: str = DEFAULT_KEY_VARIABLE
    structured: str = "auto"
    mode: str = "record"
    timeout: float = 120.0
    use_for_latent: bool = False

    @property
    def ready(self) -> bool:
        return bool(self.base_url.strip() and self.model.strip())

    def endpoint(self) -> Endpoint:
        return Endpoint(self.base_url.strip(), self.model.strip(), api_key_env=self.api_key_env.strip() or
                        DEFAULT_KEY_VARIABLE, timeout=self.timeout, max_retries=1, structured=self.structured)


def load_config(settings: QSettings) -> ModelConfig:
    defaults = ModelConfig()
    values: dict[str, Any] = {}
    for name in ("base_url", "model", "api_key_env", "structured", "mode"):
        values[name] = str(settings.value(PREFIX + name, getattr(defaults, name)))
    try:
        values["timeout"] = float(settings.value(PREFIX + "timeout", defaults.timeout))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        values["timeout"] = defaults.timeout
    values["use_for_latent"] = str(settings.value(PREFIX + "use_for_latent", "false")).lower() == "true"
    if values["structured"] not in ("auto", *STRATEGIES):
        values["structured"] = "auto"
    if values["mode"] not in MODES:
        values["mode"] = "record"
    return ModelConfig(**values)


def save_config(settings: QSettings, config: ModelConfig) -> None:
    for name, value in config.__dict__.items():
        settings.setValue(PREFIX + name, "true" if value is True else "false" if value is False else value)


def estimate_tokens(text: str) -> int:
    """Tokens of `text`, estimated: no tokenizer of the user's model is available offline."""
    return math.ceil(len(text) / CHARACTERS_PER_TOKEN)


class Models(QObject):
    """The window's model: settings, the asker over the document's cassette, and answers for latent calls."""

    changed = Signal()
    delta = Signal(str)  # a piece of the answer as it streams in

    def __init__(self, settings: QSettings, document_path: Callable[[], Path | None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.document_path = document_path
        self.config = load_config(settings)
        self.memory = Cassette()  # an unsaved document's exchanges

    def set_config(self, config: ModelConfig) -> None:
        self.config = config
        save_config(self.settings, config)
        self.changed.emit()

    def carry(self, old: Path | None, new: Path) -> None:
        """The exchanges recorded for the document at `old` (this session's memory for an unsaved one) go with it
        to `new` (Save As, Fork Here): the questions already answered are replayed there, not asked (and paid for)
        again. A recording `new` has of its own is kept; one that cannot be read or written is left (its questions
        are only asked again)."""
        target = cassette_path(new)
        if target.exists() or (old is not None and old.absolute() == new.absolute()):
            return
        try:
            if old is not None:
                if cassette_path(old).exists():
                    shutil.copyfile(cassette_path(old), target)
                return
            copy = Cassette(target)
            for exchange in self.memory.exchanges.values():
                copy.put(exchange)
        except OSError:
            return

    def asker(self) -> Asker:
        path = self.document_path()
        cassette = Cassette.open(cassette_path(path)) if path is not None else self.memory
        return Asker(Provider(self.config.endpoint()), cassette, self.config.mode)

    async def answer(self, execution: Execution, index: int) -> str | None:
        """Ask for latent call `index`; None once it is answered (written, or failed as `modelOutput`),
        else why nothing was written (the endpoint failed: the call keeps waiting)."""
        if not self.config.ready:
            return "no model is set up: Run → Models…"
        asker = self.asker()
        try:
            await asker.provider.prepare()
            await answer_call(execution, index, asker, self.delta.emit)
        except ModelError as error:
            return str(error)
        finally:
            await asker.provider.close()
        return None

    async def models(self, config: ModelConfig) -> list[str]:
        provider = Provider(config.endpoint())
        try:
            await provider.prepare()
            return await provider.models()
        finally:
            await provider.close()


class ModelsDialog(QDialog):
    """The Models settings page: the endpoint, how to ask, record/replay/live, and a connection test."""

    def __init__(self, models: Models, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.models = models
        config = models.config
        self.base_url = QLineEdit(config.base_url)
        self.base_url.setPlaceholderText("http://localhost:11434/v1")
        self.url_problem = QLabel()  # what `--llm` would say of the URL, before Save or a connection test uses it
        self.url_problem.setObjectName("urlProblem")
        self.url_problem.setWordWrap(True)
        self.url_problem.setStyleSheet(f"color: {MISSING_COLOUR}")
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setEditText(config.model)
        self.key_variable = QLineEdit(config.api_key_env)
        self.key_state = QLabel()
        self.key_variable.textChanged.connect(self._show_key_state)
        self.structured = QComboBox()
        self.structured.addItems(["auto", *STRATEGIES])
        self.structured.setCurrentText(config.structured)
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        self.mode.setCurrentText(config.mode)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(config.timeout)
        self.use_for_latent = QCheckBox("Use the model for latent calls on Step and Continue")
        self.use_for_latent.setChecked(config.use_for_latent)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow("Base URL", self.base_url)
        form.addRow("", self.url_problem)
        form.addRow("Model", self.model)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_variable, 1)
        key_row.addWidget(self.key_state)
        form.addRow("API key variable", key_row)
        form.addRow("Structured output", self.structured)
        form.addRow("Recording", self.mode)
        form.addRow("Timeout", self.timeout)
        note = QLabel("The key is read from the environment variable when a request is made; it is never "
                      "saved. Exchanges are recorded beside the document (<code>DOC.models.jsonl</code>): "
                      "<b>record</b> replays what is recorded and asks the rest, <b>replay</b> never asks, "
                      "<b>live</b> always asks.")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.use_for_latent)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.status, 1)
        layout.addLayout(test_row)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.resize(560, 360)
        self._show_key_state()
        self.test_task: asyncio.Task[Any] | None = None
        self.base_url.textChanged.connect(self._check_url)
        self._check_url()

    def config(self) -> ModelConfig:
        return ModelConfig(self.base_url.text().strip(), self.model.currentText().strip(),
                           self.key_variable.text().strip() or DEFAULT_KEY_VARIABLE, self.structured.currentText(),
                           self.mode.currentText(), self.timeout.value(), self.use_for_latent.isChecked())

    def _check_url(self) -> None:
        """Says, as typed, why the base URL cannot be used; Save keeps none such (an empty one is no model set up)
        and nothing is tested against it."""
        text = self.base_url.text().strip()
        problem = base_url_problem(text) if text else None
        self.url_problem.setText(problem or "")
        self.url_problem.setVisible(problem is not None)
        self.save_button.setEnabled(problem is None)
        self.test_button.setEnabled(bool(text) and problem is None and self.test_task is None)

    def _show_key_state(self) -> None:
        name = self.key_variable.text().strip() or DEFAULT_KEY_VARIABLE
        self.key_state.setText("set" if os.environ.get(name) else "not set")

    def test_connection(self) -> asyncio.Task[Any]:
        """Ask the server for its models; fills the model list, or says what went wrong."""
        config = self.config()
        self.test_button.setEnabled(False)
        self.status.setText(f"Connecting to {config.base_url}…")
        self.test_task = spawn(self._test(config))
        return self.test_task

    async def _test(self, config: ModelConfig) -> None:
        try:
            names = await self.models.models(replace(config, model=config.model or "?"))
        except ModelError as error:
            self.status.setText(f"Cannot use it: {error}")
        else:
            current = self.model.currentText()
            self.model.clear()
            self.model.addItems(names)
            self.model.setEditText(current or (names[0] if names else ""))
            self.status.setText(f"Connected: {counted(len(names), 'model')} offered.")
        finally:
            self.test_task = None
            self._check_url()

    def save(self) -> None:
        if not self.save_button.isEnabled():
            return  # a base URL `_check_url` refuses is never kept
        self.models.set_config(self.config())
        self.accept()


class PromptView(QDialog):
    """A prompt exactly as it will be sent, with token estimates; Ask, the streamed reply, Cancel.

    The widgets are made once and `show_prompt` fills them, so that one dialog serves prompt after prompt.
    Subclasses say what the prompt is for (`_answer`: ask and write; None when written, else why not).
    """

    def __init__(self, models: Models, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models = models
        self.prompt = Prompt("", (), {}, "")
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Role", "Tokens (≈)", "Content"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.content = _text_view()
        self.table.currentCellChanged.connect(self._show_message)
        self.schema = _text_view()
        self.body = _text_view()
        messages = QSplitter(Qt.Orientation.Vertical)
        messages.addWidget(self.table)
        messages.addWidget(self.content)
        tabs = QTabWidget()
        tabs.addTab(messages, "Messages")
        tabs.addTab(self.schema, "Answer schema")
        tabs.addTab(self.body, "Request body")
        self.total = QLabel()
        self.reply = _text_view()
        self.reply.setPlaceholderText("The model's reply streams here.")
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.ask_button = QPushButton("&Ask model")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        close = QPushButton("Close")
        self.ask_button.clicked.connect(self.ask)
        self.cancel_button.clicked.connect(self.cancel)
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        for button in (self.ask_button, self.cancel_button, close):
            buttons.addWidget(button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(tabs)
        split.addWidget(self.reply)
        layout = QVBoxLayout(self)
        layout.addWidget(self.total)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        self.resize(760, 620)
        self.task: asyncio.Task[Any] | None = None
        models.delta.connect(self._delta)

    def show_prompt(self, prompt: Prompt, title: str) -> None:
        """Show `prompt`: the messages (the last one open), the schema, the request body; no reply yet."""
        self.prompt = prompt
        self.setWindowTitle(title)
        self.table.setRowCount(len(prompt.messages))
        for row, message in enumerate(prompt.messages):
            content = content_shown(message)
            first_line = content.splitlines()[0] if content else ""
            for column, text in enumerate((message["role"], str(estimate_tokens(content)), first_line)):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.schema.setPlainText(json.dumps(prompt.schema, indent=2, ensure_ascii=False))
        config = self.models.config
        strategy = config.structured if config.structured != "auto" else STRATEGIES[0]
        self.body.setPlainText(json.dumps({"model": config.model, **prompt.body(strategy)}, indent=2,
                                          ensure_ascii=False))
        total = sum(estimate_tokens(content_shown(message)) for message in prompt.messages)
        total += estimate_tokens(json.dumps(prompt.schema))
        self.total.setText(f"Whole prompt: ≈ {total} tokens ({ESTIMATE}).")
        self.reply.clear()
        self.status.clear()
        self.ask_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.table.setCurrentCell(len(prompt.messages) - 1, 0)
        self._show_message(len(prompt.messages) - 1)  # the current row may not have changed
        if not config.ready:
            self.refuse("No model is set up: Run → Models…")

    def refuse(self, why: str) -> None:
        self.ask_button.setEnabled(False)
        self.status.setText(why)

    def _show_message(self, row: int, *_: object) -> None:
        if 0 <= row < len(self.prompt.messages):
            self.content.setPlainText(content_shown(self.prompt.messages[row]))
        else:
            self.content.clear()

    def _delta(self, piece: str) -> None:
        if self.asking():
            self.reply.moveCursor(QTextCursor.MoveOperation.End)
            self.reply.insertPlainText(piece)
            self.streamed(self.reply.toPlainText())

    def streamed(self, text: str) -> None:
        """The reply so far (a subclass may show what it makes of it)."""

    def ask(self) -> asyncio.Task[Any]:
        self.reply.clear()
        self.ask_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Asking {self.models.config.endpoint().label}…")
        self.task = spawn(self._ask())
        return self.task

    async def _ask(self) -> None:
        try:
            problem = await self._answer()
        except asyncio.CancelledError:
            self.status.setText("Cancelled: nothing was written.")
            self.ask_button.setEnabled(True)
            raise
        finally:
            self.cancel_button.setEnabled(False)
        if problem is not None:
            self.status.setText(problem)
            self.ask_button.setEnabled(True)

    async def _answer(self) -> str | None:
        raise NotImplementedError

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def asking(self) -> bool:
        return self.task is not None and not self.task.done()

    def closeEvent(self, event: Any) -> None:
        self.cancel()
        super().closeEvent(event)


def _text_view(text: str = "") -> QPlainTextEdit:
    view = QPlainTextEdit(text)
    view.setReadOnly(True)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return view


class PromptDialog(PromptView):
    """The prompt of one latent call; what the model answers is written through the debugger (undoable).

    Made once per window (ahead, while it is idle) and shown again for each call asked about (`for_call`)."""

    def __init__(self, models: Models, debugger: Any, parent: QWidget | None = None) -> None:
        super().__init__(models, parent)
        self.debugger = debugger
        self.index = -1

    def for_call(self, index: int) -> None:
        """Show the prompt of latent call `index`."""
        execution: Execution = self.debugger.prepared()
        plan = execution.plans[index]
        self.index = index
        self.show_prompt(call_prompt(execution.context, plan), f"Prompt for {plan.label}")
        state = execution.state(index)
        if self.models.config.ready and state.status is not Status.WAITING_FOR_OUTPUT:
            self.refuse(f"{plan.label} is {state.status}: only a latent call that waits for its output can be asked.")

    async def _answer(self) -> str | None:
        problem: str | None = await self.debugger.ask_model(self.index)
        if problem is not None:
            return problem
        state = self.debugger.prepared().state(self.index)
        if state.status is Status.FAILED and state.error is not None:
            self.status.setText(f"The answer did not validate: {state.error['message']}")
        else:
            self.status.setText(f"Written: {state.status}.")
        return None


class RequestDialog(PromptView):
    """The whole request (the Vessel): the model's calls become the request's solution, or a plan message
    in a bare context; streamed, the calls are counted as they arrive. Undoable."""

    def __init__(self, models: Models, window: Workbench, activities: Activities, tools: Any,
                 parent: QWidget | None = None) -> None:
        self.main = window
        self.activities = activities
        self.tools = tools
        document = window.document.document
        super().__init__(models, parent)
        prompt = request_prompt(document.context, document.schema, activities=self.activities, tools=self.tools)
        self.show_prompt(prompt, "Ask the model for the whole request")

    def streamed(self, text: str) -> None:
        self.status.setText(f"Receiving: {counted(text.count(TOOL_KEY), 'call')} so far…")

    async def _answer(self) -> str | None:
        document = self.main.document.document
        asker = self.models.asker()
        try:
            await asker.provider.prepare()
            answer = await asker.ask(self.prompt, self.models.delta.emit)
        except ModelError as error:
            return str(error)
        finally:
            await asker.provider.close()
        calls = len(answer.value["calls"])
        if document.shape is Shape.REQUEST:
            self.main.commands.set_solution({**answer.value, "_model": answer.summary},
                                            "Ask the model for the whole request")
            where = "the request's solution"
        else:
            appended = solution_messages(document, answer)  # a meta message and the plan: one step
            end = len(document.context)
            self.main.commands.apply_all("Ask the model for a plan",
                                         [Insert(end + n, each) for n, each in enumerate(appended)])
            where = "a plan message"
        self.status.setText(f"Written: {counted(calls, 'call')} from {answer.exchange.get('model')} as {where}.")
        return None


class ModelsUI(QObject):
    """What `install_models` adds to the window (`window.models`): the actions, and the dialogs open now."""

    def __init__(self, window: Workbench, inspector: Inspector, tools: Callable[[], Any]) -> None:
        super().__init__(window.window())
        self.window, self.inspector, self.tools = window, inspector, tools
        self.models = Models(window.settings, lambda: window.document.path, self)
        self.debugger = inspector.debugger
        self.dialogs: list[QDialog] = []
        self._prompt: PromptDialog | None = None  # made ahead, or shown before and closed
        self._ahead = QTimer(self, singleShot=True, interval=AHEAD_MS)
        self._ahead.timeout.connect(self._make_prompt_ahead)
        self._ahead.start()
        settings_action = QAction("&Models…", window.window())
        settings_action.triggered.connect(self.open_settings)
        self.use = QAction("Use the Model for &Latent Calls", window.window(), checkable=True)
        self.use.toggled.connect(self._use_toggled)
        prompt_action = QAction("&Prompt for This Call…", window.window())
        prompt_action.triggered.connect(self.open_prompt)
        request_action = QAction("Ask the Model for the &Whole Request…", window.window())
        request_action.triggered.connect(self.open_request)
        self.actions_by_name = {"models": settings_action, "use_for_latent": self.use, "prompt": prompt_action,
                                "request": request_action}
        run = window.menu("Run")
        run.addSeparator()
        for action in self.actions_by_name.values():
            run.addAction(action)
        self.models.changed.connect(self.follow)
        self.follow()

    def follow(self) -> None:
        """The debugger asks the model when one is set up; on its own only when the user turned that on."""
        config = self.models.config
        self.debugger.model_answer = self.models.answer if config.ready else None
        self.debugger.use_model = config.use_for_latent and config.ready
        self.use.blockSignals(True)
        self.use.setChecked(config.use_for_latent)
        self.use.blockSignals(False)

    def _use_toggled(self, on: bool) -> None:
        self.models.set_config(replace(self.models.config, use_for_latent=on))
        if on and not self.models.config.ready:
            self.open_settings()

    def _made(self, dialog: D) -> D:
        dialog.finished.connect(lambda _code: self._closed(dialog))
        return dialog

    def _keep(self, dialog: QDialog) -> None:
        self.dialogs.append(dialog)
        dialog.show()
        dialog.raise_()

    def _closed(self, dialog: QDialog) -> None:
        if dialog in self.dialogs:
            self.dialogs.remove(dialog)
        if self._prompt is None and isinstance(dialog, PromptDialog):
            self._prompt = dialog  # shown again for the next call asked about
        else:
            dialog.deleteLater()

    def _make_prompt_ahead(self) -> None:
        """Make the prompt dialog while the window is idle: its widgets made, polished and laid out, so that
        Prompt for This Call… only fills and shows it. Each of the three is a slice of the window's turns (all
        three in one turn were most of a frame, more after a big document opened)."""
        if self._prompt is not None:
            return
        if self.window.session.is_loading() or self.window.document.views_pending() or slices().pending:
            self._ahead.start()  # a document loading, a selection's views, the views' slices: they go first
            return
        slices().start(self._prompt_made)

    def _prompt_made(self) -> None:
        if self._prompt is None:
            with unheard():  # (its widgets' making: a burst of events, no key or click among them)
                self._prompt = self._made(PromptDialog(self.models, self.debugger, self.window.window()))
            slices().start(self._prompt_polished)

    def _prompt_polished(self) -> None:
        if self._prompt is not None and not self._prompt.isVisible():  # (not taken and shown meanwhile)
            with unheard():
                self._prompt.ensurePolished()
            slices().start(self._prompt_laid_out)

    def _prompt_laid_out(self) -> None:
        layout = self._prompt.layout() if self._prompt is not None and not self._prompt.isVisible() else None
        if layout is not None:
            with unheard():
                layout.activate()

    def open_settings(self) -> ModelsDialog:
        dialog = self._made(ModelsDialog(self.models, self.window.window()))
        self._keep(dialog)
        return dialog

    def open_prompt(self) -> PromptDialog | None:
        """The prompt of the call selected in the Calls panel (else the next to run), in the dialog made
        ahead (or one more, when it is open already)."""
        current = self.inspector.panel.view.currentIndex()
        row = current.row() if current.isValid() else self.debugger.next_call()
        if row is None:
            self.window.statusBar().showMessage("Select a call in the Calls panel first.", 10_000)
            return None
        dialog, self._prompt = self._prompt, None
        if dialog is None or dialog.asking():  # a cancelled answer not over yet would write into it
            if dialog is not None:
                dialog.deleteLater()
            dialog = self._made(PromptDialog(self.models, self.debugger, self.window.window()))
        dialog.for_call(row)
        self._keep(dialog)
        return dialog

    def open_request(self) -> RequestDialog:
        dialog = self._made(RequestDialog(self.models, self.window, self.debugger.activities, self.tools(),
                                          self.window.window()))
        self._keep(dialog)
        return dialog


def install_models(window: Workbench, inspector: Inspector, tools: Callable[[], Any]) -> ModelsUI:
    """Run → Models…, Use the Model for Latent Calls, Prompt for This Call…; the debugger asks the model."""
    return ModelsUI(window, inspector, tools)
