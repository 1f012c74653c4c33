"""Tab through the message editor in visual order: top to bottom, and left to right within a row.

Qt's focus chain is the order the widgets were made in, and the editor makes its forms after the rest of the
window (and again for each message): the default Tab left the header for the tab bar and then for the next
pane, reaching the body's fields only after every other control of the window. The editor asks this module
instead, over the controls a user can see and use.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QPoint, Qt
from PySide6.QtWidgets import QScrollArea, QWidget

from .._seen import behind_a_tab


def controls(root: QWidget) -> list[QWidget]:
    """The controls under `root` that Tab stops at (shown, enabled, taking Tab focus), in visual order."""
    # Places are read once the layouts asked for are done (a form just made is laid out on the next turn).
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    found: list[QWidget] = []
    for widget in root.findChildren(QWidget):
        stop = _stop(widget, root)
        if stop is not None and stop not in found:
            found.append(stop)
    placed = [(_laid_out(widget, root), widget) for widget in found]
    placed.sort(key=lambda item: (item[0].y() + item[1].height() // 2, item[0].x()))
    ordered: list[QWidget] = []
    row: list[tuple[QPoint, QWidget]] = []
    for where, widget in placed:
        # One row: the widgets whose middles lie within the height of the row's first widget.
        if row and where.y() + widget.height() // 2 > row[0][0].y() + row[0][1].height():
            ordered.extend(w for _, w in sorted(row, key=lambda item: item[0].x()))
            row = []
        row.append((where, widget))
    ordered.extend(w for _, w in sorted(row, key=lambda item: item[0].x()))
    return ordered


def _laid_out(widget: QWidget, root: QWidget) -> QPoint:
    """Where `widget` is in `root` with every scroll area between them scrolled to its start: a control scrolled out
    of sight above keeps its place after the controls above the scroll area (the header, the tab bar)."""
    where = widget.mapTo(root, QPoint(0, 0))
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, QScrollArea):
            where += QPoint(parent.horizontalScrollBar().value(), parent.verticalScrollBar().value())
        parent = parent.parentWidget()
    return where


def _stop(widget: QWidget, root: QWidget) -> QWidget | None:
    """The control that Tab gives the focus to for `widget` (its focus proxy, if any), when it is a stop."""
    if widget.focusPolicy() & Qt.FocusPolicy.TabFocus != Qt.FocusPolicy.TabFocus or isinstance(widget, QScrollArea):
        return None  # a scroll area's stops are its controls
    proxy = widget.focusProxy()
    while proxy is not None:
        widget, proxy = proxy, proxy.focusProxy()
    shown = widget.window() is root.window() and widget.isVisibleTo(root.window()) and widget.isEnabled() and \
        not behind_a_tab(widget)
    return widget if shown and root.isAncestorOf(widget) else None


def control_of(root: QWidget, widget: QWidget | None, chain: list[QWidget]) -> int | None:
    """The place in `chain` of `widget` (or of the control it is part of), None when it is not in `root`."""
    while widget is not None and widget is not root:
        if widget in chain:
            return chain.index(widget)
        widget = widget.parentWidget()
    return None


def holding(widget: QWidget | None, chain: list[QWidget]) -> int | None:
    """The place in `chain` of the first control inside `widget`, None when it holds none."""
    if widget is None:
        return None
    return next((place for place, control in enumerate(chain) if widget.isAncestorOf(control)), None)


def move_focus(root: QWidget, current: QWidget | None, forward: bool) -> bool:
    """Puts the focus on the control after (or before) `current`; False past the last (or the first), where
    Tab leaves `root` for the window's next control."""
    chain = controls(root)
    place = control_of(root, current, chain)
    if place is None:
        inside = holding(current, chain)
        if inside is None:
            return False
        # The focus is on what holds controls (a tab's page, put there by Ctrl+Tab): Tab goes to the first of
        # them, Shift+Tab to the control before it.
        place = inside - 1 if forward else inside
    target = place + (1 if forward else -1)
    if not 0 <= target < len(chain):
        return False
    show(chain[target])
    chain[target].setFocus(Qt.FocusReason.TabFocusReason if forward else Qt.FocusReason.BacktabFocusReason)
    return True


def show(widget: QWidget) -> None:
    """Scrolls every scroll area around `widget` so that it is in sight (once the layouts asked for are done: a
    control just made has its place only then)."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea):
            parent.ensureWidgetVisible(widget)
        parent = parent.parentWidget()


def leave(root: QWidget, forward: bool) -> bool:
    """Puts the focus on the window's next (or previous) control outside `root`, in the window's focus chain."""
    widget = root.nextInFocusChain() if forward else root.previousInFocusChain()
    while widget is not None and widget is not root:
        if not root.isAncestorOf(widget) and _stop(widget, widget.window()) is widget:
            widget.setFocus(Qt.FocusReason.TabFocusReason if forward else Qt.FocusReason.BacktabFocusReason)
            return True
        widget = widget.nextInFocusChain() if forward else widget.previousInFocusChain()
    return False
