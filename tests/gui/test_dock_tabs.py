"""Docks stacked in one place show their whole titles as tabs (Qt would elide them to "St…")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QDockWidget, QTabBar

from conftest import Painted
from contextdeck.gui._app import create_window
from contextdeck.gui._models import PromptDialog
from contextdeck.gui._slices import slices
from contextdeck.gui._window import MainWindow


def dock_tabs(window: MainWindow) -> dict[str, QTabBar]:
    """Each visible tab title of the window's dock areas, with its tab bar."""
    return {bar.tabText(i): bar for bar in window.findChildren(QTabBar) if bar.isVisible() for i in range(bar.count())}


def test_the_right_docks_tabs_show_whole_titles(qtbot: Any, refund_window: MainWindow) -> None:
    window = refund_window
    window.resize(1440, 880)
    tabs = dock_tabs(window)
    assert {"State", "LLM view", "Call inspector", "Output audit"} <= tabs.keys()
    bar = tabs["State"]
    assert bar.elideMode() == Qt.TextElideMode.ElideNone
    assert bar.usesScrollButtons()
    # Each tab is as wide as its title: nothing is cut to "St…".
    metrics = bar.fontMetrics()
    for index in range(bar.count()):
        assert bar.tabRect(index).width() >= metrics.horizontalAdvance(bar.tabText(index))


def test_reset_layout_brings_every_dock_back_to_its_first_place(qtbot: Any, refund_window: MainWindow) -> None:
    """View → Reset Layout: a closed dock is shown again, a floating one docked, a moved one put back,
    and the right-hand docks are tabbed together again with the state view in front."""
    window = refund_window
    first = {dock.objectName(): window.dockWidgetArea(dock) for dock in window.findChildren(QDockWidget)
             if dock.isVisible()}
    assert first[window.watch_dock.objectName()] == Qt.DockWidgetArea.BottomDockWidgetArea
    window.watch_dock.close()
    window.state_dock.setFloating(True)
    window.removeDockWidget(window.llm_dock)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.llm_dock)
    window.llm_dock.show()
    window.timeline_dock.hide()
    assert not window.watch_dock.isVisible()
    assert window.state_dock.isFloating()

    window.actions_by_name["reset_layout"].trigger()

    now = {dock.objectName(): window.dockWidgetArea(dock) for dock in window.findChildren(QDockWidget)
           if dock.isVisible()}
    assert now == first
    assert not any(dock.isFloating() for dock in window.findChildren(QDockWidget))
    assert window.state_dock in window.tabifiedDockWidgets(window.llm_dock)
    assert "State" in dock_tabs(window)
    qtbot.waitUntil(lambda: not window.state_dock.visibleRegion().isEmpty())


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_every_dock_tab_strip_fits_at_common_sizes(qtbot: Any, refund_window: MainWindow,
                                                   size: tuple[int, int]) -> None:
    """At 1280×800 and 1600×1000 in the first layout every tab of every dock group is in sight: no strip needs
    its scroll arrows (the right area's five tabs were cut after "Delegate")."""
    window = refund_window
    window.resize(*size)
    qtbot.waitUntil(lambda: window.width() == size[0])
    window.reset_layout()  # the first layout at this size, whatever size the window opened at

    def cut() -> list[tuple[list[str], int, int]]:  # the strips of the layout before go on the next turns
        bars = [bar for bar in window.findChildren(QTabBar) if bar.isVisible() and bar.parentWidget() is window]
        assert bars
        return [([bar.tabText(i) for i in range(bar.count())], bar.sizeHint().width(), bar.width())
                for bar in bars if bar.sizeHint().width() > bar.width()]

    try:
        qtbot.waitUntil(lambda: not cut(), timeout=2000)
    finally:
        assert cut() == []
    assert {"State", "LLM view", "Call inspector", "Output audit", "Delegate session"} <= dock_tabs(window).keys()


def test_no_stale_tab_strip_is_left_over_the_panels(qtbot: Any, tmp_path: Path) -> None:
    """A first start on a new document: every tab strip on screen is a group's of docks tabbed together now (the
    strips of the groups on the way, 'Watches | Plan graph' and 'Call inspector | Output audit', were drawn
    over the calls panel and the timeline)."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, tmp_path / "recovery")
    settings.setParent(window)
    qtbot.addWidget(window)
    window.show()
    QApplication.processEvents()
    groups = {frozenset(d.windowTitle() for d in (dock, *window.tabifiedDockWidgets(dock)))
              for dock in window.findChildren(QDockWidget) if window.tabifiedDockWidgets(dock)}
    shown = [frozenset(bar.tabText(i) for i in range(bar.count())) for bar in window.findChildren(QTabBar)
             if bar.parentWidget() is window and bar.isVisible()]
    assert shown
    assert all(titles in groups for titles in shown), shown
    window.session.close()


def inspector_at_1280(qtbot: Any, window: MainWindow) -> Any:
    """The window at 1280×800 in the first layout, the call inspector's dock raised; its inspector parts."""
    window.reset_layout()
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.width() == 1280)
    parts = window.inspector
    parts.docks["Call inspector"].raise_()
    return parts


def inspect_call(qtbot: Any, parts: Any, row: int) -> None:
    """Select call `row` in the Calls panel, as a user does, and wait until the inspector shows it. Selected,
    the call stays shown through the calls' refreshes a load schedules (shown without a selection, the next
    refresh would clear the inspector)."""
    parts.panel.view.select_call(row)
    inspector = parts.inspector
    qtbot.waitUntil(lambda: inspector.call is not None and inspector.call.index == row)


@pytest.mark.parametrize("ran", [False, True])
def test_the_call_inspectors_tabs_fit_at_1280(qtbot: Any, refund_window: MainWindow, ran: bool) -> None:
    """At 1280×800 in the first layout, the call inspector's own tab strip (will run, ran, schema, context)
    fits its width, before and after the call has run ("Call as it will run … Context it…" was cut)."""
    window = refund_window
    parts = inspector_at_1280(qtbot, window)
    model = parts.model
    if ran:  # call 0's output, as a run writes it: the run record says the call ran
        call = model.getItem(0)
        path = call.plan.output_path
        assert path is not None
        window.commands.insert(len(window.context()), {"type": "data", "kind": "state", "data": {
            path.split(".")[1]: {"id": 1}}, "_call": call.call, "_outputPath": path, "_run": {"call": 0}})
        qtbot.waitUntil(lambda: model.recorded(0) is not None)
    inspect_call(qtbot, parts, 0)
    qtbot.waitUntil(lambda: parts.inspector.tabs.tabText(0) == ("Would run now" if ran else "Will run"))
    QApplication.processEvents()
    bar = parts.inspector.tabs.tabBar()
    assert bar.isVisible()
    assert bar.sizeHint().width() <= bar.width(), [bar.tabText(i) for i in range(bar.count())]
    assert all(bar.tabToolTip(i) for i in range(bar.count()))


def test_the_call_inspectors_parameters_are_all_in_sight_at_1280(qtbot: Any, refund_window: MainWindow) -> None:
    """At 1280×800 in the first layout, every row of a four-parameter call's table is in sight, whole: the
    inspector scrolls as a whole instead of squeezing the table (it showed about two rows)."""
    window = refund_window
    parts = inspector_at_1280(qtbot, window)
    inspect_call(qtbot, parts, 2)
    table = parts.inspector.params
    qtbot.waitUntil(lambda: table.topLevelItemCount() == 4)
    QApplication.processEvents()
    rows = [table.topLevelItem(n) for n in range(table.topLevelItemCount())]
    sight = table.viewport().rect()  # its height (the columns are wider than the dock: they scroll sideways)
    shown = [table.visualItemRect(row) for row in rows]
    assert all(sight.top() <= rect.top() and rect.bottom() <= sight.bottom() for rect in shown), (sight, shown)
    assert parts.inspector.tabs.height() >= 150  # the call as it will run: a few lines, reached by scrolling


def test_going_to_a_tabbed_pane_repaints_no_editor(qtbot: Any, refund_window: MainWindow) -> None:
    """Alt+7 and Alt+3 (Go to Pane) choose the LLM view's and the State's tab as a click would: the editor beside
    them is not painted again (raising the dock itself made Qt raise the central widget over it, which repaints
    the whole editor). A call selected brings the Call inspector's tab in front the same way; a closed one stays
    closed."""
    window = refund_window
    window.select_message(2)  # the state's form: a whole editor of fields
    window.timeline.table.setFocus()
    # Made ahead while the window is on screen: a child after the editor, which is moved back over it while idle.
    qtbot.waitUntil(lambda: window.findChild(PromptDialog) is not None and not slices().pending)
    painted = Painted(window.editor)
    for turn in range(2):
        for pane, shown, hidden in (("LLM view", window.llm_dock, window.state_dock),
                                    ("State", window.state_dock, window.llm_dock)):
            qtbot.wait(200)
            painted.count = 0
            window.pane_actions[pane].trigger()
            qtbot.waitUntil(lambda s=shown, h=hidden: not s.visibleRegion().isEmpty() and h.visibleRegion().isEmpty())
            qtbot.wait(100)
            assert painted.count == 0, (pane, turn)

    docks = {dock.windowTitle(): dock for dock in window.findChildren(QDockWidget)}
    window.bring_to_front(docks["Output audit"])
    qtbot.waitUntil(lambda: docks["Call inspector"].visibleRegion().isEmpty())
    window.inspector.panel.view.select_call(0)
    qtbot.waitUntil(lambda: not docks["Call inspector"].visibleRegion().isEmpty())
    docks["Call inspector"].close()
    window.inspector.panel.view.select_call(1)
    qtbot.wait(100)
    assert not docks["Call inspector"].isVisible()
