"""The question at start about unsaved work crashed sessions left: every piece in one list, so several
crashes ask once, not once a piece."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from ._recovery import RecoveryCandidate


@dataclass(frozen=True)
class RecoveryChoice:
    """What to do with the pieces offered: one to open (or none), the ones to delete; the rest wait."""

    recover: RecoveryCandidate | None = None
    discard: tuple[RecoveryCandidate, ...] = ()


def describe(candidate: RecoveryCandidate) -> str:
    """A row: the file's name and when the work was last written aside, in local time."""
    name = candidate.original_path.name if candidate.original_path is not None else "Untitled"
    return f"{name} — {candidate.time.astimezone():%Y-%m-%d %H:%M}"


class RecoveryDialog(QDialog):
    """Recover the selected piece (Enter, or a double click), Discard the selected ones (Delete), or Later
    (Escape): what is neither recovered nor discarded is offered again at the next start."""

    def __init__(self, candidates: list[RecoveryCandidate], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Recover unsaved work")
        self._discarded: list[RecoveryCandidate] = []
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.list = QListWidget()
        self.list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        for candidate in candidates:
            item = QListWidgetItem(describe(candidate))
            item.setToolTip(candidate.title)
            item.setData(Qt.ItemDataRole.UserRole, candidate)
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self._count_pieces()
        rows = min(len(candidates), 8)  # a row or two need no room for eight; more scroll
        self.list.setFixedHeight(rows * self.list.sizeHintForRow(0) + 2 * self.list.frameWidth() + 4)
        heading = QLabel("&Unsaved work, newest first:")
        heading.setBuddy(self.list)
        buttons = QDialogButtonBox()
        self.recover_button = buttons.addButton("&Recover", QDialogButtonBox.ButtonRole.AcceptRole)
        self.discard_button = buttons.addButton("&Discard", QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton("&Later", QDialogButtonBox.ButtonRole.RejectRole)
        self.recover_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.discard_button.clicked.connect(self.discard_selected)
        self.list.itemActivated.connect(lambda _item: self.accept())
        self.list.itemSelectionChanged.connect(self._selection_changed)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.list, self.discard_selected,
                  context=Qt.ShortcutContext.WidgetShortcut)
        layout = QVBoxLayout(self)
        for widget in (self.intro, heading, self.list, buttons):
            layout.addWidget(widget)
        self.list.setFocus()
        self.resize(max(self.sizeHint().width(), 460), self.sizeHint().height())

    def accept(self) -> None:
        if self.recover_button.isEnabled():  # Enter or a double click with several rows selected opens none
            super().accept()

    def selected(self) -> list[RecoveryCandidate]:
        return [item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()]

    def discard_selected(self) -> None:
        """Take the selected pieces out of the list; they are deleted when the dialog closes, whatever the
        answer. With none left there is nothing to ask; else the row after the first taken is the current
        one, where the keys were."""
        rows = [self.list.row(item) for item in self.list.selectedItems()]
        for item in self.list.selectedItems():
            self._discarded.append(item.data(Qt.ItemDataRole.UserRole))
            self.list.takeItem(self.list.row(item))
        if self.list.count() == 0:
            self.reject()
            return
        self._count_pieces()
        self.list.setCurrentRow(min(min(rows, default=0), self.list.count() - 1))

    def _count_pieces(self) -> None:
        """The intro counts the documents in the list, so that it stays true as pieces are discarded."""
        count = self.list.count()
        self.intro.setText("ContextDeck closed unexpectedly with unsaved work"
                           + (f" in {count} documents." if count > 1 else ".")
                           + " Recover it, discard what you no longer need, or decide at the next start.")

    def choice(self) -> RecoveryChoice:
        chosen = self.selected() if self.result() == QDialog.DialogCode.Accepted else []
        return RecoveryChoice(chosen[0] if len(chosen) == 1 else None, tuple(self._discarded))

    def _selection_changed(self) -> None:
        count = len(self.list.selectedItems())
        self.recover_button.setEnabled(count == 1)  # one document opens at a time
        self.discard_button.setEnabled(count > 0)
