"""`DockWindow`: the main window's docks and their layout: each panel's dock listed in View, the first start's
place and sizes, the layout saved for the next start, restored and reset (View → Reset Layout).

`MainWindow` (gui/_window.py) is one; it makes the docks this lays out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QByteArray, QChildEvent, QRect, QSettings, QSize, Qt
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMenu, QTabBar, QWidget

from ._slices import slices

if TYPE_CHECKING:
    from ._document_settings import DocumentSettings

DEFAULT_SIZE = QSize(1400, 860)  # a first start's size, on a screen with room for it
# View's entries for the docks, each with a letter of its own in that menu (a dock's title has none).
DOCK_ENTRIES = {"Timeline": "Timeli&ne", "State": "&State", "LLM view": "&LLM view", "Watches": "&Watches",
                "Calls": "&Calls", "Call inspector": "Call &inspector", "Output audit": "&Output audit",
                "Plan graph": "&Plan graph", "Delegate session": "&Delegate session", "Call stack": "Call stac&k",
                "Experiments": "E&xperiments"}
FRAME = QSize(16, 48)  # what a window manager's frame and title bar add around it (resize() leaves them out)


class DockWindow(QMainWindow):
    """A main window whose panels are docks, with the layout kept in `settings` and the open document's own."""

    settings: QSettings
    document_settings: DocumentSettings
    timeline_dock: QDockWidget
    state_dock: QDockWidget
    watch_dock: QDockWidget
    _menus: dict[str, QMenu]
    _default_layout: QByteArray

    def add_dock(self, widget: QWidget, title: str, area: Qt.DockWidgetArea) -> QDockWidget:
        """Add a panel as a dock (listed in View, its place saved with the layout)."""
        dock = QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "") + "Dock")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        dock.toggleViewAction().setText(DOCK_ENTRIES.get(title, title))
        view = self._menus["View"]
        if view.actions():
            view.insertAction(view.actions()[0], dock.toggleViewAction())
        else:
            view.addAction(dock.toggleViewAction())
        return dock

    def bring_to_front(self, dock: QDockWidget) -> None:
        """`dock` in front of its tab group (a closed one stays closed): its tab chosen, as a click on it chooses it.
        `raise_()` also put the dock above the central widget among the window's children, and at the next change
        of a dock tab Qt raised the central widget back over them, which repaints the whole editor in that turn."""
        if not dock.isFloating() and dock.isVisible():
            address = shiboken6.getCppPointer(dock)[0]
            for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
                # Qt's dock tab strips name each tab's dock by its address. A strip Qt no longer uses may still
                # hold the same tabs (a layout restored): what a choice of its tab leaves out of sight is not it.
                found = [index for index in range(bar.count()) if bar.tabData(index) == address]
                if found and not bar.isHidden():
                    bar.setCurrentIndex(found[0])
                    if not dock.visibleRegion().isEmpty():
                        return
        dock.raise_()  # floating, alone in its place, or the window not on screen: nothing to choose

    def childEvent(self, event: QChildEvent) -> None:
        """Keeps the central widget last among the window's children: Qt raises it over the docks at every change
        of a dock tab, which repaints the whole editor unless it is last already (`bring_to_front`). While the
        window is not on screen moving it costs nothing; on screen it repaints the editor, so it is moved in a
        slice of the window's idle turns (a dialog made ahead), not in the turn of the next tab change; not while
        only a modal dialog open over the window follows it (`_centre_last`)."""
        super().childEvent(event)
        centre = self.centralWidget()
        if event.added() and centre is not None and event.child() is not centre:
            if self.isVisible():
                slices().start(self._centre_last)
            else:
                centre.raise_()

    def _centre_last(self) -> None:
        centre = self.centralWidget()
        if centre is None:
            return
        # Only a modal dialog open over the window came after it (Next Turn): no dock tab changes while it is open,
        # and it is deleted when done; raised now, the whole editor would be painted again as the dialog opens.
        children = self.children()
        after = children[children.index(centre) + 1:]
        if after and all(isinstance(child, QWidget) and child.isWindow() and child.isModal() and child.isVisible()
                         for child in after):
            return
        centre.raise_()

    def _restore_layout(self) -> None:
        self._default_layout = self.saveState()  # every panel is in its first place: View → Reset Layout's target
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if not isinstance(geometry, QByteArray) or not self.restoreGeometry(geometry):
            self.setGeometry(first_geometry(self.screen().availableGeometry(), self.minimumSizeHint()))
            self._default_dock_sizes()
        if isinstance(state, QByteArray):
            self.restoreState(state)

    def _default_dock_sizes(self) -> None:
        self.resizeDocks([self.timeline_dock, self.state_dock], [420, 440], Qt.Orientation.Horizontal)
        self.resizeDocks([self.watch_dock], [210], Qt.Orientation.Vertical)
        right = Qt.DockWidgetArea.RightDockWidgetArea
        below = [dock for dock in self.findChildren(QDockWidget) if self.dockWidgetArea(dock) == right and
                 dock is not self.state_dock and dock not in self.tabifiedDockWidgets(self.state_dock)]
        if below:  # a second group under the state's (the run's docks): the call inspector has more parts to show
            self.resizeDocks([self.state_dock, below[0]], [self.height() * 2 // 5, self.height() * 3 // 5],
                             Qt.Orientation.Vertical)

    def restoreState(self, state: QByteArray | bytes | bytearray | memoryview, version: int | None = 0) -> bool:
        """Qt's, with the keys left where they were (or, where their dock is closed in `state`, on the first
        control): each dock laid out anew is hidden a moment, and Qt would move the focus on down its chain,
        selecting what it passes (the first call, in the calls table)."""
        focused = QApplication.focusWidget()
        if focused is None or not self.isAncestorOf(focused):
            return super().restoreState(state, version or 0)
        # The window holds the keys while the docks are laid out anew, so nothing hidden has them to pass on; taken
        # as a popup takes them, which a line edit keeps its selection through.
        self.setFocus(Qt.FocusReason.PopupFocusReason)
        restored = super().restoreState(state, version or 0)
        if focused.isVisible():
            focused.setFocus(Qt.FocusReason.OtherFocusReason)
        else:  # its dock is closed in this layout: the first control, as Qt would have chosen
            self.focusNextPrevChild(True)
        return restored

    def reset_layout(self) -> None:
        """Every dock and the toolbar back in its first place, shown, docked and sized as on a first start
        (View → Reset Layout): the way back from a dock closed, floated or dragged somewhere unhelpful.
        The window's size and place on the screen stay as they are."""
        self.restoreState(self._default_layout)
        self._default_dock_sizes()
        self.bring_to_front(self.state_dock)
        self.hide_stale_tab_strips()

    def save_layout(self) -> None:
        """The window's place on the screen and the dock layout of the next start (also the open document's own)."""
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()
        self.document_settings.keep_layout()

    def hide_stale_tab_strips(self) -> None:
        """Hides the dock tab strips that no group of docks uses any more.

        Tabbing the docks one by one (State and LLM view, then the inspector's…) leaves Qt's strips of the
        groups on the way shown where they were made, over the timeline and the calls panel, until a layout is
        restored; a strip is in use when its titles are those of a group of docks tabbed together now."""
        groups = set()
        for dock in self.findChildren(QDockWidget):
            together = self.tabifiedDockWidgets(dock)
            if together:
                groups.add(frozenset(d.windowTitle() for d in (dock, *together)))
        for bar in self.findChildren(QTabBar):
            if bar.parentWidget() is self and not bar.isHidden() and \
                    frozenset(bar.tabText(i) for i in range(bar.count())) not in groups:
                bar.hide()


def first_geometry(room: QRect, least: QSize) -> QRect:
    """A first start's place: `DEFAULT_SIZE`, smaller where the screen's free area `room` (without panels or
    docks) has less, frame included, and centred in it (a 1280×800 screen gets the whole of its height); never
    under `least`, the window's minimum (smaller, Qt lays the whole window out again at every edit)."""
    size = DEFAULT_SIZE.boundedTo(room.size() - FRAME).expandedTo(least)
    place = QRect(0, 0, size.width(), size.height())
    place.moveCenter(room.center())
    return place


def show_whole_titles(tabs: QTabBar) -> None:
    """Qt elides every tab of a dock area to fit ("St…", "LLM vi…"); whole titles, with scroll arrows when
    they do not fit, read better."""
    tabs.setElideMode(Qt.TextElideMode.ElideNone)
    tabs.setUsesScrollButtons(True)
    tabs.setExpanding(False)
