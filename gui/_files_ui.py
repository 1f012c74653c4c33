"""The file side of the window: new, open, save, recent files, the unsaved-changes guard, load progress,
external changes, recovery at start, and errors shown without blocking (status bar and banner)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QAbstractButton, QFileDialog, QMenu, QMessageBox, QProgressBar, QProgressDialog

from ._disk import folder_of
from ._questions import Question
from ._recovery import RecoveryCandidate
from ._recovery_dialog import RecoveryChoice, RecoveryDialog
from ._slices import slices
from ._unheard import unheard

if TYPE_CHECKING:
    from ._window import MainWindow

FILTERS = "Contexts (*.json *.jsonl);;JSON (*.json);;JSON Lines (*.jsonl);;All files (*)"
SAVE, DISCARD, CANCEL = "save", "discard", "cancel"
ADD, KEEP = "add", "keep"  # a name with another suffix than a context's: add the filter's, or keep it
SUFFIXES = (".json", ".jsonl")
# What the "Not saved" and "Changed outside ContextDeck" banners are about: a save that works answers them.
THE_FILE = "the file"


def until_named(show: Callable[[str | None, str | None], tuple[str, str]],
                name: Callable[[str, str], str | None]) -> tuple[str, str] | None:
    """A save dialog shown until it gives a name to write (Save As, Export): `show(typed, chosen)` shows it with the
    name typed and the filter chosen before (None at first) and gives the path typed ("" when cancelled) and the
    filter chosen; `name(path, chosen)` is the name it is written under, None to show the dialog again. (That name,
    the filter chosen), or None when cancelled."""
    typed: str | None = None
    chosen: str | None = None
    while True:
        typed, chosen = show(typed, chosen)
        if not typed:
            return None
        named = name(typed, chosen)
        if named is not None:
            return named, chosen


class FilesUI(QObject):
    """Dialogs and prompts around `window.session`; the ask_* methods are the only blocking ones (tests
    replace them)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self._progress: QProgressDialog | None = None
        self._bar: QProgressBar | None = None  # the progress dialog's
        self._ended: list[QProgressDialog] = []  # closed a slice later (`_close_progress`)
        # (path, words): said instead of "Ready" when that file (None: an untitled one) has opened
        self._said: tuple[str | None, str] | None = None
        # The model's recorded answers follow a document saved under a new name (the window's: `Models.carry`).
        self.carry_recording: Callable[[Path | None, Path], None] = lambda old, new: None
        session = self.session
        session.loadStarted.connect(self._load_started)
        session.loadProgress.connect(self._load_progress)
        session.loadFinished.connect(self._load_finished)
        session.loadCancelled.connect(self._load_ended)
        session.loadFailed.connect(self._load_failed)
        session.saveFailed.connect(self._save_failed)
        session.externallyModified.connect(self._externally_modified)
        # A banner speaks of the document it was shown for: an import, New or a fork shows another, and a failed
        # import's "the open document was left as it was" stayed above it.
        session.documentReplaced.connect(self.window.banner.hide)

    # -- prompts (blocking dialogs; replaced in tests) -------------------------------------------

    def ask_unsaved(self, doing: str) -> str:
        """SAVE, DISCARD or CANCEL for unsaved changes before `doing`."""
        answer = self.unsaved_question(doing).exec()
        return {QMessageBox.StandardButton.Save: SAVE, QMessageBox.StandardButton.Discard: DISCARD}.get(
            QMessageBox.StandardButton(answer), CANCEL)

    def unsaved_question(self, doing: str) -> QMessageBox:
        """The question itself; Alt+S saves and Alt+D discards (Qt's own Save and Discard have no mnemonic, so
        only Enter, Escape and Tab reached them from the keys)."""
        box = Question(QMessageBox.Icon.Warning, "Unsaved changes",
                       f"The document has unsaved changes. Save them before {doing}?",
                       QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                       | QMessageBox.StandardButton.Cancel, self.window)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.button(QMessageBox.StandardButton.Save).setText("&Save")
        box.button(QMessageBox.StandardButton.Discard).setText("&Discard")
        return box

    def ask_open_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open context", self.folder(), FILTERS)
        return path or None

    def ask_save_path(self, title: str = "Save context as", name: str | None = None) -> str | None:
        """A path to save to, the name box holding `name` (by default the document's own) in its folder."""
        folder, own = self.folder(), self.session.path
        called = self.session.called
        name = name if name is not None else own.name if own is not None else f"{called}.json" if called else ""
        start = str(Path(folder, name)) if folder and name else name or folder
        answer = until_named(lambda typed, _chosen: QFileDialog.getSaveFileName(self.window, title, typed or start,
                                                                               FILTERS), self.save_name)
        return None if answer is None else answer[0]

    def save_name(self, path: str, chosen: str) -> str | None:
        """The name `path` typed in the Save As dialog with the filter `chosen` is saved under (None: ask again): a
        context's suffix, the filter's added (`name_to_save`), or any with All files chosen."""
        return self.name_to_save(path, SUFFIXES, ".jsonl" if chosen.startswith("JSON Lines") else ".json",
                                 as_typed=chosen.startswith("All files"))

    def name_to_save(self, path: str, suffixes: tuple[str, ...], added: str, *, as_typed: bool = False,
                     title: str = "Save as") -> str | None:
        """The name a file typed as `path` in a save dialog (Save As, Export) is written under; None: show the dialog
        again.

        The suffix decides the format and Qt's dialog adds none: a bare name takes `added`; another suffix than
        `suffixes` (`ts.py`, mostly a slip) is asked about unless `as_typed` (All files chosen). Qt asked before
        replacing the name typed, not one made longer here."""
        suffix = Path(path).suffix.lower()
        if suffix in suffixes or (suffix and as_typed):
            return path
        named = path + added
        if suffix:
            answer = self.ask_suffix(path, named, suffixes, title)
            if answer != ADD:
                return path if answer == KEEP else None
        if Path(named).exists() and not self.ask_replace(named, title):
            return None
        return named

    def ask_suffix(self, path: str, named: str, suffixes: tuple[str, ...] = SUFFIXES, title: str = "Save as") -> str:
        """ADD (save as `named`), KEEP (as `path`, written all the same) or CANCEL for a name without a suffix of
        `suffixes`."""
        box = self.suffix_question(path, named, suffixes, title)
        box.exec()
        return self.suffix_answer(box, box.clickedButton())

    def suffix_question(self, path: str, named: str, suffixes: tuple[str, ...] = SUFFIXES,
                        title: str = "Save as") -> QMessageBox:
        name, longer = Path(path).name, Path(named).name
        box = Question(QMessageBox.Icon.Warning, title,
                       f"<p><b>{name}</b> does not end in {' or '.join(suffixes)}. Save it as <b>{longer}</b>?</p>"
                       f"<p>Kept as {name}, it is written as JSON all the same, and the file dialogs list it only "
                       "under All files.</p>", QMessageBox.StandardButton.Cancel, self.window)
        box.setDefaultButton(box.addButton(f"&Add {Path(named).suffix}", QMessageBox.ButtonRole.AcceptRole))
        box.addButton(f"&Keep {name}", QMessageBox.ButtonRole.DestructiveRole)
        return box

    @staticmethod
    def suffix_answer(box: QMessageBox, clicked: QAbstractButton | None) -> str:
        """What the button `clicked` in a `suffix_question` answers (None, the box closed otherwise: CANCEL)."""
        role = box.buttonRole(clicked) if clicked is not None else QMessageBox.ButtonRole.RejectRole
        return {QMessageBox.ButtonRole.AcceptRole: ADD, QMessageBox.ButtonRole.DestructiveRole: KEEP}.get(role, CANCEL)

    def ask_replace(self, path: str, title: str = "Save as") -> bool:
        """Whether to replace the file `path` (the name became it after the save dialog, which asked about another)."""
        box = Question(QMessageBox.Icon.Warning, title, f"<p><b>{Path(path).name}</b> already exists. "
                       "Do you want to replace it?</p>", QMessageBox.StandardButton.Cancel, self.window)
        replace = box.addButton("&Replace", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is replace

    def ask_recover(self, candidates: list[RecoveryCandidate]) -> RecoveryChoice:
        """Which piece of unsaved work previous sessions left to open, and which to delete."""
        dialog = RecoveryDialog(candidates, self.window)
        dialog.exec()
        return dialog.choice()

    def folder(self) -> str:
        """Where the file dialogs start: beside the open document (an unsaved import: beside its trace)."""
        return folder_of(self.session.path, self.session.source)

    # -- commands ---------------------------------------------------------------------------------

    def confirm_discard(self, doing: str) -> bool:
        """Whether the open document may be replaced or closed (asking to save unsaved changes)."""
        if not self.session.is_dirty():
            return True
        answer = self.ask_unsaved(doing)
        if answer == SAVE:
            return self.save()
        return answer == DISCARD

    def new(self) -> None:
        if self.confirm_discard("starting a new document"):
            self.session.new()

    def open_dialog(self) -> None:
        if self.confirm_discard("opening another document"):
            path = self.ask_open_path()
            if path:
                self.session.open(path)

    def open_path(self, path: str | Path) -> None:
        """Open `path` (dropped on the window, from the recent files or the command line)."""
        if self.confirm_discard("opening another document"):
            self.session.open(path)

    def save(self) -> bool:
        if self.session.path is None:
            return self.save_as_dialog()
        return self._saving(self.session.path, lambda: self.session.save())

    def _overwrite(self) -> bool:
        """Save over a file another program changed, deliberately: said as any save is."""
        assert self.session.path is not None  # (offered only for a file changed outside)
        return self._saving(self.session.path, lambda: self.session.save(force=True))

    def save_as_dialog(self) -> bool:
        path = self.ask_save_path()
        if not path:
            return False
        target, before = Path(path), self.session.path
        saved = self._saving(target, lambda: self.session.save_as(target))
        if saved:
            self.carry_recording(before, target)
        return saved

    def _saving(self, path: Path, save: Callable[[], bool]) -> bool:
        """A save says so while its worker writes (the window paints meanwhile) and when it is done."""
        self.window.statusBar().showMessage(f"Saving {path.name}…")
        saved = save()
        if saved:  # else `saveFailed` has said why
            self.window.statusBar().showMessage(f"Saved {path.name}", 3000)
            self.window.banner.withdraw(THE_FILE)
        return saved

    def fill_recent_menu(self, menu: QMenu) -> None:
        menu.clear()
        recent = self.session.recent_files()
        for number, path in enumerate(recent, start=1):
            action = menu.addAction(f"&{number % 10}  {Path(path).name}")
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(p))
        if not recent:
            menu.addAction("No recent files").setEnabled(False)

    def offer_recovery(self) -> bool:
        """At start: offer the unsaved work crashed sessions left, all in one question; True when a piece is
        recovered. What the user leaves for later is offered again at the next start."""
        candidates = self.session.recovery_candidates()
        if not candidates:
            return False
        choice = self.ask_recover(candidates)
        for candidate in choice.discard:
            self.session.discard_recovery(candidate)
        if choice.recover is None:
            return False
        original = choice.recover.original_path
        written = f"{choice.recover.time.astimezone():%H:%M}"
        self._say_once_open(original, f"Recovered the unsaved work of {original.name} (written aside at {written}): "
                            f"Save writes it to {original.name}." if original is not None else
                            f"Recovered unsaved work (written aside at {written}): Save As gives it a name.")
        self.session.recover(choice.recover)
        return True

    # -- reports from the session -------------------------------------------------------------------

    def _load_started(self, path: str) -> None:
        self.window.statusBar().showMessage(f"Opening {path}…")
        dialog = QProgressDialog(f"Opening {Path(path).name}…", "Cancel", 0, 0, self.window)
        dialog.setWindowTitle("Opening")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(400)  # small files open before it would appear
        dialog.canceled.connect(self.session.cancel_load)
        self._close_progress()
        self._bar = QProgressBar(dialog)
        dialog.setBar(self._bar)
        self._progress = dialog

    @unheard()  # the dialog's showing: every widget of the window under it is told it is blocked, no key or click
    def _load_progress(self, done: int, total: int) -> None:
        """Until the dialog is shown, its `setValue` decides when to show it; once shown, the progress goes to its bar:
        the `setValue` of a modal dialog on screen runs the event loop inside this call (the hand-over of the loaded
        document, the window's repaints, all inside one report of progress)."""
        dialog = self._progress
        if dialog is None or self._bar is None or total <= 0:
            return
        dialog.setMaximum(total)
        if dialog.isVisible():
            self._bar.setValue(min(done, total))
        else:
            dialog.setValue(min(done, total))

    def open_saying(self, path: str | Path, words: str) -> None:
        """Open `path` (the caller has asked about unsaved changes) and, once it is open, say `words` in the status
        bar instead of "Ready" (what was done to make it: a fork)."""
        self._say_once_open(Path(path), words)
        self.session.open(path)

    def _say_once_open(self, path: Path | None, words: str) -> None:
        """Say `words` in the status bar instead of "Ready" once `path` (None: an untitled document) has opened."""
        self._said = (None if path is None else str(path.absolute()), words)

    def _load_finished(self) -> None:
        said, self._said = self._said, None
        self._load_ended()
        where = None if self.session.path is None else str(self.session.path.absolute())
        if said is not None and where == said[0]:
            self.window.statusBar().showMessage(said[1], 10_000)

    def _load_ended(self) -> None:
        self._close_progress(later=True)
        self._said = None
        self.window.statusBar().showMessage("Ready", 3000)
        self.window.banner.hide()

    def _close_progress(self, *, later: bool = False) -> None:
        """`later`: hidden in a slice, before those waiting, not in the turn that handed a loaded document over: hiding
        a window-modal dialog unblocks every widget of the window under it, a third of a frame at a million messages."""
        if self._progress is not None:
            dialog, self._progress, self._bar = self._progress, None, None
            dialog.canceled.disconnect(self.session.cancel_load)
            self._ended.append(dialog)
        if later:
            slices().start(self._close_ended, first=True)
        else:
            self._close_ended()

    @unheard()  # (every widget of the window under a dialog hidden is told it is no longer blocked)
    def _close_ended(self) -> None:
        for dialog in self._ended:
            dialog.reset()
            dialog.deleteLater()
        self._ended.clear()

    def _load_failed(self, message: str) -> None:
        self._close_progress()
        self.window.statusBar().showMessage(f"Could not open: {message}", 10000)
        self.window.banner.show_message(f"<b>Could not open the file.</b> {message}<br>"
                                        "The open document was left as it was.")

    def _save_failed(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 10000)
        actions: dict[str, Callable[[], object]] = {}
        if self.session.externally_modified():
            actions = {**self._reload(), "Overwrite": self._overwrite, "Save As…": self.save_as_dialog}
        self.window.banner.show_message(f"<b>Not saved.</b> {message}", actions, about=THE_FILE)

    def _externally_modified(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 10000)
        self.window.banner.show_message(f"<b>Changed outside ContextDeck.</b> {message} "
                                        "Your version is kept until you reload or save.", self._reload(),
                                        about=THE_FILE)

    def _reload(self) -> dict[str, Callable[[], object]]:
        """A banner's Reload action for the file changed outside, when there is a file to read (asking about
        unsaved changes first, as Open does)."""
        path = self.session.path
        return {"Reload": lambda: self.open_path(path)} if path is not None and path.exists() else {}
