"""File → Import… and File → Export…: an agent's trace in as an unsaved document, the open run out.

Import asks for the file (or several OTLP files, read as one), then shows what it holds (its format, one context
per trace, the warnings) with the redaction rules to apply; the chosen context opens as an untitled document,
nothing written until it is saved. Export writes the open document as OTLP JSON spans, or the request at the
cursor as an OpenAI chat completions body (docs/format.md §10).
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPlainTextEdit,
    QProgressDialog,
    QVBoxLayout,
    QWidget,
)

from contextdeck.engine import (
    Context,
    Document,
    Imported,
    Redaction,
    TraceError,
    collector_warning,
    contexts_held,
    empty_request,
    export_openai,
    export_otlp,
    import_trace,
    json_dumps,
    os_reason,
    redact_document,
    write_atomically,
)

from ._background import stoppable, waited
from ._files_ui import until_named
from ._inspector._async import spawn
from ._summary import counted

if TYPE_CHECKING:
    from ._workbench import Workbench

# What the import reads: JSON, JSON Lines (also as .ndjson), a rotated log gzipped, a console's print of spans.
IMPORT_FILTERS = "Traces and exchanges (*.json *.jsonl *.ndjson *.gz *.txt *.log);;All files (*)"
OTLP, OPENAI = "OTLP JSON trace (*.json)", "OpenAI chat completions request (*.json)"
# How the import dialog names a format ("openai": one exchange of either API, chat completions or Responses).
FORMAT_NAMES = {"openai": "an OpenAI exchange", "openai-log": "a log of OpenAI exchanges",
                "otlp": "an OpenTelemetry trace (OTLP JSON)"}


@dataclass(frozen=True)
class ImportChoice:
    """What the dialog decided: the context to open and the rules to apply first."""

    imported: Imported
    redaction: Redaction


class ImportDialog(QDialog):
    """The contexts a file holds (one per trace, or per agent), its warnings, and the redaction rules."""

    def __init__(self, name: str, imported: list[Imported], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import a trace")
        self.imported = imported
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"<b>{html.escape(name)}</b>: {FORMAT_NAMES[imported[0].format]}, "
                                f"{contexts_held(imported)}."))
        self.contexts = QListWidget()
        for item in imported:
            label = f"trace {item.label}" if item.format == "otlp" else item.label
            self.contexts.addItem(f"{label}: {counted(item.turns, 'model turn')}, "
                                  f"{counted(len(item.document.context), 'message')}")
        self.contexts.setCurrentRow(0)
        self.contexts.currentRowChanged.connect(self._show_warnings)
        # Wide enough for each context's line whole (a trace's 32-digit id), not cut behind a scroll bar.
        frame = 2 * self.contexts.frameWidth() + self.contexts.verticalScrollBar().sizeHint().width()
        self.contexts.setMinimumWidth(self.contexts.sizeHintForColumn(0) + frame)
        layout.addWidget(self.contexts)
        self.warnings = QPlainTextEdit()
        self.warnings.setReadOnly(True)
        self.warnings.setMaximumHeight(90)
        layout.addWidget(self.warnings)
        layout.addWidget(QLabel("Redact before anything is written (replaced by [redacted]):"))
        self.emails = QCheckBox("E-mail addresses")
        self.api_keys = QCheckBox("API keys and bearer tokens")
        for box in (self.emails, self.api_keys):
            box.setChecked(True)
            layout.addWidget(box)
        self.rules = QLineEdit()
        self.rules.setPlaceholderText("More: key names (password, *secret*) or /regular expressions/, with commas")
        # Its placeholder whole: it is the only word on what the box takes (a keyboard user sees no tooltip).
        self.rules.setMinimumWidth(self.rules.fontMetrics().horizontalAdvance(self.rules.placeholderText()) + 16)
        self.rules.textChanged.connect(self._check_rules)
        layout.addWidget(self.rules)
        self.problem = QLabel()
        self.problem.setStyleSheet("color: #c0392b")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._show_warnings(0)
        self._check_rules()

    def redaction(self) -> Redaction:
        """The rules as chosen; ValueError for a rule that is not one (a bad regular expression)."""
        rules = [name for box, name in ((self.emails, "emails"), (self.api_keys, "api-keys")) if box.isChecked()]
        return Redaction.parse([*rules, self.rules.text()])

    def choice(self) -> ImportChoice:
        return ImportChoice(self.imported[max(0, self.contexts.currentRow())], self.redaction())

    def _show_warnings(self, row: int) -> None:
        warnings = self.imported[max(0, row)].warnings
        self.warnings.setPlainText("\n".join(warnings) if warnings else "Every request lines up.")

    def _check_rules(self) -> None:
        try:
            self.redaction()
        except ValueError as error:
            self.problem.setText(str(error).removeprefix("--redact "))
            self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(False)
            return
        self.problem.setText("")
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(True)


class TracesUI(QObject):
    """The two File commands; the ask_* methods are the only blocking ones (tests replace them)."""

    def __init__(self, window: Workbench, tools: Callable[[], Any]) -> None:
        super().__init__(window.window())
        self.window, self.tools = window, tools
        self.task: asyncio.Task[bool] | None = None  # an import under way (`import_path`)
        self.reading: QProgressDialog | None = None  # its "Reading…" dialog, with Cancel
        self.actions_by_name = {
            "import_trace": self._action("&Import Trace…", "Open an agent's OpenAI exchange, log or OTLP trace "
                                                          "as a context", self.import_dialog, "Ctrl+Shift+I"),
            "export_trace": self._action("E&xport…", "Write the run as OTLP JSON spans, or the request at the "
                                                    "cursor as an OpenAI chat completions body", self.export_dialog,
                                         "Ctrl+Shift+E"),
        }

    def _action(self, text: str, tip: str, run: object, shortcut: str) -> QAction:
        action = QAction(text, self.window.window())
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setObjectName(text.strip("&.…").replace("&", "").lower().replace(" ", "_"))
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(lambda _checked=False: run())  # type: ignore[operator]
        return action

    # -- prompts -----------------------------------------------------------------------------------

    def ask_import_paths(self) -> list[str]:
        """The files chosen (none: cancelled); several are OTLP files read as one (spans, and their log records)."""
        paths, _ = QFileDialog.getOpenFileNames(self.window.window(), "Import a trace", self.window.files.folder(),
                                                IMPORT_FILTERS)
        return paths

    def ask_import_choice(self, name: str, imported: list[Imported]) -> ImportChoice | None:
        dialog = ImportDialog(name, imported, self.window.window())
        return dialog.choice() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def ask_export_target(self) -> tuple[str, str] | None:
        """("otlp-json" or "openai", the path), or None when cancelled. Both formats are JSON: a bare name takes
        `.json`, another suffix is asked about as Save As asks (`FilesUI.name_to_save`; Cancel: the dialog again)."""
        answer = until_named(self._export_dialog, lambda path, _chosen: self.window.files.name_to_save(
            path, (".json",), ".json", title="Export"))
        return None if answer is None else ("openai" if answer[1] == OPENAI else "otlp-json", answer[0])

    def _export_dialog(self, typed: str | None, chosen: str | None) -> tuple[str, str]:
        """The export dialog shown (`until_named`): the path typed ("" when cancelled) and the format chosen."""
        dialog = self.export_file_dialog(typed, chosen or OTLP)
        accepted = dialog.exec() == QDialog.DialogCode.Accepted
        paths, chosen = dialog.selectedFiles(), dialog.selectedNameFilter()
        dialog.deleteLater()
        return (paths[0] if accepted and paths else ""), chosen

    def export_file_dialog(self, typed: str | None = None, form: str = OTLP) -> QFileDialog:
        """The save dialog, its name suggested beside the document (`<stem>.otlp.json`), or the name `typed` and the
        format `form` chosen before; choosing the other format changes a suggested name to that format's, never a name
        the user typed."""
        stem = self.window.session.name
        suggested = {OTLP: f"{stem}.otlp.json", OPENAI: f"{stem}.openai.json"}
        dialog = QFileDialog(self.window.window(), "Export", self.window.files.folder(), f"{OTLP};;{OPENAI}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.selectNameFilter(form)
        dialog.selectFile(typed if typed is not None else suggested[form])

        def chosen(name_filter: str) -> None:
            typed = dialog.selectedFiles()
            if name_filter in suggested and (not typed or Path(typed[0]).name in suggested.values()):
                dialog.selectFile(suggested[name_filter])

        dialog.filterSelected.connect(chosen)
        return dialog

    # -- commands -----------------------------------------------------------------------------------

    def import_dialog(self) -> asyncio.Task[bool] | None:
        paths = self.ask_import_paths()
        return self.import_path(paths[0], paths[1:]) if paths else None

    def import_path(self, path: str, more: Sequence[str] = ()) -> asyncio.Task[bool]:
        """Read `path` (and `more` OTLP files with it, `import_trace`) on a worker thread ("Reading…" with Cancel),
        then let the user choose and redact, and open the result unsaved. The task's result: whether a document
        opened."""
        self.cancel_import()
        names = " and ".join(Path(each).name for each in (path, *more))
        reading = QProgressDialog(f"Reading {names}…", "Cancel", 0, 0, self.window.window())
        reading.setWindowTitle("Import a trace")
        reading.setMinimumDuration(0)
        reading.setAutoClose(False)
        reading.setAutoReset(False)
        task = spawn(self._import(path, more, names, reading))
        reading.canceled.connect(task.cancel)
        reading.open()
        self.reading, self.task = reading, task
        return task

    def cancel_import(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def _import(self, path: str, more: Sequence[str], names: str, reading: QProgressDialog) -> bool:
        try:
            # Cancelled, the read stops at its next line, span or exchange instead of reading the file to its end.
            imported = await stoppable(lambda check: import_trace(path, more=more, step=check))
        except asyncio.CancelledError:
            self.window.statusBar().showMessage(f"Import of {names} cancelled.", 10_000)
            return False
        except TraceError as error:
            self._fail("Could not import the trace.", str(error))
            return False
        finally:
            reading.canceled.disconnect()
            reading.close()
            reading.deleteLater()
        choice = self.ask_import_choice(names, imported)
        if choice is None or not self.window.files.confirm_discard("importing a trace"):
            return False
        document, count = (redact_document(choice.imported.document, choice.redaction) if choice.redaction
                           else (choice.imported.document, 0))
        self.window.session.open_document(document, choice.imported.name or None, Path(path).absolute())
        redacted = f", {counted(count, 'value')} redacted" if choice.redaction else ""
        warned = f", {counted(len(choice.imported.warnings), 'warning')}" if choice.imported.warnings else ""
        self.window.statusBar().showMessage(
            f"Imported {names}: {counted(choice.imported.turns, 'model turn')}{redacted}{warned}. "
            "Not saved yet.", 15_000)
        return True

    def export_dialog(self) -> bool:
        target = self.ask_export_target()
        return target is not None and self.export(*target)

    def export(self, form: str, path: str, *, carry_document: bool = True) -> bool:
        """Write the open document as `form` ("otlp-json" or "openai") to `path`, atomically; OTLP without the
        root span's copy of the document when `carry_document` is false. Made and written on a worker, the window
        painting meanwhile and the keys waiting, as a save waits: a long run's export is hundreds of megabytes and
        held the window for seconds."""
        document: Document = self.window.document.document
        messages = document.context.messages  # the document as it is now (a copy of the list: edits replace messages)
        parts = (document.shape, document.schema, document.solution, document.path, dict(document.envelope))
        at, name, tools = self.window.document.at(), self.window.session.name, self.tools()

        def made() -> tuple[Any, bytes | None, str | None]:
            """(On a worker.) The value exported, its bytes written, or why nothing was (an empty request)."""
            copy = Document(Context(messages), *parts)
            if form == "openai":
                value = export_openai(copy, at=at, tools=tools)
                empty = empty_request(value, at, len(messages), "move the cursor")
                if empty is not None:  # as the command refuses it: the API would refuse the body
                    return value, None, empty
            else:
                value = export_otlp(copy, name=name, tools=tools, carry_document=carry_document)
            data = (json_dumps(value) + "\n").encode("utf-8")
            write_atomically(Path(path), data)
            return value, data, None

        self.window.statusBar().showMessage(f"Exporting to {path}…")
        try:
            value, data, empty = waited(made)
        except OSError as error:  # its words, at the file chosen: not an errno at the save's temporary file
            self._fail("Could not export.", f"cannot write {path}: {os_reason(error)}")
            return False
        except ValueError as error:
            self._fail("Could not export.", str(error))
            return False
        if data is None:
            self.window.statusBar().clearMessage()
            self.refuse("Nothing exported", empty or "")
            return False
        what = "the request at the cursor" if form == "openai" else (
            counted(len(value["resourceSpans"][0]["scopeSpans"][0]["spans"]), "span"))
        left_out = "" if carry_document else " without the document's copy"
        too_big = collector_warning(len(data)) if form != "openai" else None
        self.window.statusBar().showMessage(f"Exported {what}{left_out} to {path}"
                                            + ("; too big for a collector as it comes" if too_big else ""), 10_000)
        if too_big:
            # Too long for the status bar's line and its ten seconds: said where it stays until dismissed.
            said = f"<b>Exported, but {html.escape(too_big, quote=False)}.</b>"
            if carry_document:
                self.window.banner.show_message(
                    f"{said} The root span's copy of the document is often most of it.",
                    {"Export Without the Document": lambda: self.export(form, path, carry_document=False)})
            else:
                self.window.banner.show_message(said)
        return True

    def refuse(self, title: str, message: str) -> None:
        """Say in a message box why nothing was done (replaced in tests)."""
        QMessageBox.warning(self.window.window(), title, message)

    def _fail(self, title: str, message: str) -> None:
        self.window.statusBar().showMessage(f"{title} {message}", 10_000)
        self.window.banner.show_message(f"<b>{title}</b> {html.escape(message, quote=False)}<br>"
                                        "The open document was left as it was.")


def install_traces(window: Workbench, tools: Callable[[], Any]) -> TracesUI:
    """File → Import Trace… and Export…, after Open Recent (`window.traces`)."""
    traces = TracesUI(window, tools)
    menu = window.menu("File")
    actions = menu.actions()
    before = next((action for action in actions if action.objectName() == "save"), None)
    for action in traces.actions_by_name.values():
        if before is None:
            menu.addAction(action)
        else:
            menu.insertAction(before, action)
    if before is not None:
        menu.insertSeparator(before)
    return traces
