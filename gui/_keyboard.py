"""A keyboard-first window: a shortcut to each pane, Tab that leaves tables, Ctrl+Z that reaches the
document's undo from inside a form field once the field has nothing left to undo, and a focus frame that
stays in sight while the keys are in use (docs/workbench.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QMouseEvent, QPainter, QPaintEvent, QPalette, QRegion
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from ._message_editor._focus import show
from ._unheard import listen

if TYPE_CHECKING:
    from ._inspector import Inspector
    from ._window import MainWindow


@dataclass(frozen=True)
class Pane:
    """A pane the keyboard can go to: its name, its keys, its dock, and the widget that takes the focus."""

    name: str
    keys: str
    dock: QDockWidget | None
    target: Callable[[], QWidget]


def panes(window: MainWindow, inspector: Inspector) -> list[Pane]:
    """The window's panes and the inspector's, in the order of their keys (Alt+1 … Alt+9), then the delegate
    sessions' (by their letter in View → Go to Pane only: a pane tabbed behind another has no other way in)."""
    watches = window.watches
    audit = inspector.audit
    tabbed_behind = [Pane(name, "", dock, partial(_inside, dock))
                for name in ("Delegate session", "Call stack") if (dock := inspector.docks.get(name)) is not None]
    return [
        Pane("Timeline", "Alt+1", window.timeline_dock, lambda: window.timeline.table),
        Pane("Editor", "Alt+2", None, lambda: window.editor.first_field() or window.editor),
        Pane("State", "Alt+3", window.state_dock, lambda: window.state_view),
        Pane("Watches", "Alt+4", window.watch_dock,
             lambda: watches.table if watches.model.rowCount() else watches.entry),
        Pane("Calls", "Alt+5", inspector.docks["Calls"], lambda: inspector.panel.view),
        Pane("Call inspector", "Alt+6", inspector.docks["Call inspector"], lambda: inspector.inspector),
        Pane("LLM view", "Alt+7", window.llm_dock, lambda: window.llm_view.text_in_front()),
        Pane("Plan graph", "Alt+8", inspector.docks["Plan graph"], lambda: inspector.graph),
        # the call as written (Shift+Tab: the link to the call)
        Pane("Output audit", "Alt+9", inspector.docks["Output audit"], lambda: audit.call_json),
        *tabbed_behind,
    ]


def _inside(dock: QDockWidget) -> QWidget:
    return dock.widget() or dock


def install_keyboard(window: MainWindow, inspector: Inspector) -> dict[str, QAction]:
    """View → Go to Pane (one shortcut per pane), Tab out of every table, field undo handing over to the
    document's. Returns the pane actions by name."""
    menu = window.menu("View").addMenu("&Go to Pane")
    actions = {}
    taken: set[str] = set()
    for pane in panes(window, inspector):
        action = QAction(with_letter(pane.name, taken), window)
        action.setObjectName(f"focus_{pane.name.lower().replace(' ', '_')}")
        action.setShortcut(QKeySequence(pane.keys))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setToolTip(f"Go to the {pane.name} pane" + (f" ({pane.keys})" if pane.keys else ""))
        action.triggered.connect(lambda _checked=False, p=pane: focus_pane(window, p))
        menu.addAction(action)
        actions[pane.name] = action
    for view in window.findChildren(QAbstractItemView):
        # Tab goes on to the next control; the arrows move in the table (and so the time cursor).
        view.setTabKeyNavigation(False)
    FieldUndo(window)  # a child of the window: lives as long as it
    MenuFocus(window)
    FocusFrames.install()
    return actions


class MenuFocus(QObject):
    """After a menu's entry, the keys go back where they were, never to the menu bar.

    A menu opened by its letter while the menu bar already had the keys (Alt+R, Escape, Alt+R) takes the menu bar
    for the widget to give the focus back to: once its entry has run, the menu bar kept the focus, with no menu
    open, and the arrows, Delete and Enter did nothing anywhere. The last widget outside the menu bar that had the
    focus gets it back."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._bar = window.menuBar()
        self._last: QWidget | None = None
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.focusChanged.connect(self._focus_changed)
        self._bar.triggered.connect(lambda _action: QTimer.singleShot(0, self, self._give_back))

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is not None and new is not self._bar and new.window() is self._bar.window():
            self._last = new

    def _give_back(self) -> None:
        last = self._last
        if (QApplication.focusWidget() is self._bar and self._bar.activeAction() is None and last is not None
                and shiboken6.isValid(last) and last.isVisible() and last.isEnabled()):
            last.setFocus(Qt.FocusReason.OtherFocusReason)


def focus_pane(window: MainWindow, pane: Pane) -> None:
    """Show the pane's dock (in front of its tab group) and put the focus in it."""
    if pane.dock is not None:
        pane.dock.show()
        window.bring_to_front(pane.dock)
    target = pane.target()
    focusable = target if target.focusPolicy() & Qt.FocusPolicy.TabFocus else _first_focusable(target)
    (focusable or target).setFocus(Qt.FocusReason.ShortcutFocusReason)
    show(focusable or target)  # a form scrolled down: its first field is above the sight of its scroll area


def _first_focusable(widget: QWidget) -> QWidget | None:
    return next((child for child in widget.findChildren(QWidget)
                 if child.isVisible() and child.isEnabled() and child.focusPolicy() & Qt.FocusPolicy.TabFocus), None)


class FocusFrames(QObject):
    """The focus frame drawn wherever the focus goes while the keyboard is in use.

    Qt draws it only after Tab, and any focus the program moves (Alt+N to a pane, a dialog's first field, a
    row just added) hides it again until the next Tab: a keyboard user loses sight of where the keys go. A
    key press puts the keyboard in use until the next mouse press; while it is, the focused widget's window
    keeps `WA_KeyboardFocusChange` and the focused widget wears a `FocusRing`: the style's own frame shows
    on a line edit only, not on a combo box, a button or a view whose current row is selected. One per
    application."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.keys_in_use = False
        self.ring: FocusRing | None = None
        listen(app, self)
        app.focusChanged.connect(self._focus_changed)

    @classmethod
    def install(cls) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication) and app.findChild(cls) is None:
            cls(app)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Every event of the application passes here: the class test first, since `type()` makes an enum member
        # per call (it was most of this filter's cost, on every paint, layout and timer event).
        if isinstance(event, QKeyEvent):
            if not self.keys_in_use and event.type() == QEvent.Type.KeyPress:
                self.keys_in_use = True
                self.frame(QApplication.focusWidget())  # the first key: where the keys go now, before any move
        elif isinstance(event, QMouseEvent) and self.keys_in_use and event.type() == QEvent.Type.MouseButtonPress:
            self.keys_in_use = False
            self.frame(None)
        return False

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        self.frame(new if self.keys_in_use else None)

    def frame(self, widget: QWidget | None) -> None:
        """Put the ring on `widget` (and its window in keyboard use), or take it off with None."""
        ring = self.ring if self.ring is not None and shiboken6.isValid(self.ring) else None
        if widget is None or isinstance(widget, FocusRing):
            if ring is not None:
                ring.hide()
            return
        window = widget.window()
        if not window.testAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange):
            window.setAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange)
            widget.update()
        if ring is None:
            ring = self.ring = FocusRing()
        ring.wear(widget)


class FocusRing(QWidget):
    """A ring in the palette's highlight over the edge of the widget that has the focus. A child of that
    widget, so that it moves, clips and hides with it, and lets the mouse through; only the ring is painted
    (a mask), the widget is left as it draws itself."""

    WIDTH = 2

    def __init__(self) -> None:
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def wear(self, widget: QWidget) -> None:
        old = self.parentWidget()
        if old is not widget:
            if old is not None:
                old.removeEventFilter(self)
            self.setParent(widget)
            widget.installEventFilter(self)
        self._fit()
        self.raise_()
        self.show()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.parentWidget():
            self._fit()
        return False

    def _fit(self) -> None:
        parent = self.parentWidget()
        if parent is not None:
            rect = parent.rect()
            self.setGeometry(rect)
            inner = rect.adjusted(self.WIDTH, self.WIDTH, -self.WIDTH, -self.WIDTH)
            self.setMask(QRegion(rect).subtracted(QRegion(inner)))

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Highlight))


TEXT_FIELDS = (QLineEdit, QPlainTextEdit, QTextEdit, QAbstractSpinBox, QComboBox)


def _can(widget: QObject, redo: bool) -> bool:
    """Whether a text field has typing of its own to undo (or redo)."""
    if isinstance(widget, QAbstractSpinBox | QComboBox):
        inner = widget.lineEdit()
        return inner is not None and _can(inner, redo)
    if isinstance(widget, QLineEdit):
        return widget.isRedoAvailable() if redo else widget.isUndoAvailable()
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        document = widget.document()
        return document.isRedoAvailable() if redo else document.isUndoAvailable()
    return True


class FieldUndo(QObject):
    """Ctrl+Z in a field of the editor undoes the field's own typing first; once the field has nothing
    left, the key is not taken by the field and the window's Undo (the document's history) runs. Redo
    likewise. Installed on each field of the editor as it gets the focus."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if isinstance(new, TEXT_FIELDS) and self._window.editor.isAncestorOf(new):
            new.installEventFilter(self)  # once: installing the same filter again only moves it first

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            for key, redo in ((QKeySequence.StandardKey.Undo, False), (QKeySequence.StandardKey.Redo, True)):
                if event.matches(key) and not _can(watched, redo):
                    event.ignore()  # not the field's: the shortcut (the window's Undo or Redo) takes it
                    return True
        return False


def with_letter(text: str, taken: set[str]) -> str:
    """`text` with its first letter not in `taken` underlined (and taken): a submenu opened from the keys is gone
    through by letters; the shortcut beside an entry is no use there."""
    for place, letter in enumerate(text):
        if letter.isalnum() and letter.lower() not in taken:
            taken.add(letter.lower())
            return f"{text[:place]}&{text[place:]}"
    return text
