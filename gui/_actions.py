"""The window's actions, menus and toolbar: one table, with a shortcut for every action."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QLineEdit, QToolBar

from ._help import show_about, show_help
from ._icons import icon
from ._request_schema import edit_request_schema
from ._theme import THEMES

if TYPE_CHECKING:
    from ._window import MainWindow

Key = QKeySequence.StandardKey
Shortcut = QKeySequence.StandardKey | str


def build_actions(window: MainWindow) -> dict[str, QAction]:
    """Create every action, put it in its menu (and the main ones in the toolbar); returns them by name."""
    files, stack = window.files, window.session.undo_stack
    actions: dict[str, QAction] = {}

    def add(name: str, menu: str, text: str, run: Callable[[], object], shortcut: Shortcut | None = None,
            icon_name: str | None = None) -> QAction:
        action = QAction(text, window)
        action.setObjectName(name)
        if icon_name:
            action.setIcon(icon(icon_name))
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: run())
        window.menu(menu).addAction(action)
        actions[name] = action
        return action

    add("new", "File", "&New", files.new, Key.New, "new")
    add("open", "File", "&Open…", files.open_dialog, Key.Open, "open")
    recent = window.menu("File").addMenu("Open &Recent")
    recent.aboutToShow.connect(lambda: files.fill_recent_menu(recent))
    files.fill_recent_menu(recent)
    add("save", "File", "&Save", files.save, Key.Save, "save")
    add("save_as", "File", "Save &As…", files.save_as_dialog, Key.SaveAs if not QKeySequence(Key.SaveAs).isEmpty()
        else "Ctrl+Shift+S", "save-as")
    window.menu("File").addSeparator()
    add("quit", "File", "&Quit", window.close, Key.Quit if not QKeySequence(Key.Quit).isEmpty() else "Ctrl+Q")

    undo = stack.createUndoAction(window, "&Undo")
    undo.setObjectName("undo")
    undo.setShortcut(QKeySequence(Key.Undo))
    undo.setIcon(icon("undo"))
    redo = stack.createRedoAction(window, "&Redo")
    redo.setObjectName("redo")
    redo.setShortcut(QKeySequence(Key.Redo))
    redo.setIcon(icon("redo"))
    # Said in the status bar: what was undone, in place of a message about it (a turn undone left "Turn taken: its
    # output ends the loop." in sight while the loop waited for that turn again). Once a step is undone, its text is
    # the stack's redo text, and a step redone its undo text.
    undo.triggered.connect(lambda: window.statusBar().showMessage(f"Undone: {stack.redoText()}", 5000))
    redo.triggered.connect(lambda: window.statusBar().showMessage(f"Redone: {stack.undoText()}", 5000))
    window.menu("Edit").addActions([undo, redo])
    actions["undo"], actions["redo"] = undo, redo
    window.menu("Edit").addSeparator()
    add("insert_text", "Edit", "Insert &Text Message", lambda: window.insert_message("Text"), "Ctrl+Shift+T",
        "insert")
    add("insert_data", "Edit", "&Insert Data Message", lambda: window.insert_message("Data"), "Ctrl+Shift+N",
        "insert")
    # Every message type, each from a starting value (Alt+Shift and the type's letter).
    for kind, key in (("Input", "I"), ("State", "S"), ("Tool", "O"), ("Plan", "P"), ("Error", "E")):
        add(f"insert_{kind.lower()}", "Edit", f"Insert {kind} Message", partial(window.insert_message, kind),
            f"Alt+Shift+{key}", "insert")
    add("request_schema", "Edit", "Request &Schema…", partial(edit_request_schema, window), "Ctrl+Alt+R", "insert")
    add("duplicate", "Edit", "Dupli&cate Message", window.duplicate_selected, "Ctrl+D", "duplicate")
    add("delete", "Edit", "&Delete Message", window.delete_selected, Key.Delete, "delete")
    add("move_up", "Edit", "Mo&ve Up", lambda: window.move_selected(-1), "Alt+Up", "up")
    add("move_down", "Edit", "Move Do&wn", lambda: window.move_selected(1), "Alt+Down", "down")
    for name in ("delete", "move_up", "move_down"):
        # Keys that text fields use too: only while the timeline has the focus.
        actions[name].setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    window.menu("Edit").addSeparator()
    add("find", "Edit", "&Filter Messages", _focus(window, window.timeline.filter_box), Key.Find, "filter")
    add("goto", "Edit", "&Go to Message…", window.go_to_dialog, "Ctrl+G")
    add("watch", "Edit", "&Pin Watch…", _focus(window, window.watches.entry), "Ctrl+Shift+W", "watch")

    view = window.menu("View")
    view.addSeparator()
    follow = add("follow", "View", "&Follow Latest", lambda: window.set_follow_latest(follow.isChecked()), "Ctrl+L",
                 "follow")
    follow.setCheckable(True)
    follow.setToolTip("Show the state, LLM view and watches as of the latest message, not the selected one")
    add("reset_layout", "View", "&Reset Layout", window.reset_layout, "Ctrl+Alt+0")
    themes = view.addMenu(icon("theme"), "&Theme")
    group = QActionGroup(window)
    current = str(window.settings.value("view/theme", "system"))
    for number, theme in enumerate(THEMES, start=1):
        action = QAction(f"&{theme.capitalize()}", window, checkable=True)
        action.setObjectName(f"theme_{theme}")
        action.setShortcut(QKeySequence(f"Ctrl+Alt+{number}"))
        action.setChecked(theme == current)
        action.triggered.connect(lambda _checked=False, t=theme: window.set_theme(t))
        group.addAction(action)
        themes.addAction(action)
        actions[f"theme_{theme}"] = action

    add("check", "Run", "&Check Document", lambda: window.diagnostics.check(window.session.document), "F7")

    add("help", "Help", "ContextDeck &Help", lambda: show_help(window), Key.HelpContents)
    add("about", "Help", "&About ContextDeck", lambda: show_about(window), "Ctrl+F1")
    add("about_qt", "Help", "About &Qt", QApplication.aboutQt, "Ctrl+Shift+F1")  # (Ctrl+Alt+F1: X11's console)

    for action in actions.values():  # shortcuts in tooltips, so they can be learnt
        if not action.shortcut().isEmpty():
            text = action.text().replace("&", "").rstrip("…")
            action.setToolTip(f"{text} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("MainToolBar")
    toolbar.setIconSize(QSize(18, 18))
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
    for entry in ("new", "open", "save", None, "undo", "redo", None, "insert_data", "duplicate", "delete", "move_up",
                  "move_down", None, "follow"):
        if entry is None:
            toolbar.addSeparator()
        elif entry in ("undo", "redo"):
            toolbar.addAction(_steady(actions[entry], window))
        else:
            toolbar.addAction(actions[entry])
    window.addToolBar(toolbar)
    return actions


def _steady(action: QAction, window: MainWindow) -> QAction:
    """The toolbar's twin of `action`, which triggers it and follows whether it is enabled, but keeps its text.

    Every edit renames Undo and Redo ("Undo Edit message 12", for the Edit menu), and a toolbar lays itself out again
    whenever one of its actions changes, and then the whole main window, in every edit's turns. Its button shows
    only the icon anyway."""
    twin = QAction(action.icon(), action.text(), window)
    twin.setObjectName(f"{action.objectName()}_button")
    twin.setToolTip(action.toolTip())
    twin.setEnabled(action.isEnabled())
    action.enabledChanged.connect(twin.setEnabled)
    twin.triggered.connect(action.trigger)
    return twin


def _focus(window: MainWindow, widget: QLineEdit) -> Callable[[], None]:
    """Put the keys in `widget`, its dock shown in front first: behind another tab (the Watches behind the
    Experiments) or closed, the focus went nowhere and the keys typed after it were lost."""
    def run() -> None:
        dock = widget.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is not None:
            dock.show()
            window.bring_to_front(dock)
        widget.setFocus(Qt.FocusReason.ShortcutFocusReason)
        widget.selectAll()

    return run
