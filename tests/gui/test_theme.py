"""Switching the theme: a palette change only, that no widget is polished again for."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QAbstractEventDispatcher, QEvent, QEventLoop, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPaintEvent, QPalette, QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QLineEdit,
    QMainWindow,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from contextdeck.gui import _document_model, _icons, _theme
from contextdeck.gui._app import settle
from contextdeck.gui._banner import Banner
from contextdeck.gui._slices import slices
from contextdeck.gui._touches import Touches


class StyleChanges(QObject):
    """Counts the StyleChange events a widget receives (each is a re-polish of it)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.StyleChange:
            self.count += 1
        return False


def test_a_theme_switch_polishes_no_widget_and_recolours_every_one(qtbot: Any,
                                                                   theme: Callable[[str], None]) -> None:
    """A switch is a palette change only: the editor's forms nest widgets a dozen deep, and the deepest is
    polished again by no switch (an application style sheet polished it twice a switch, or once per ancestor
    when replaced) while it takes the new theme's colours."""
    top = QWidget()
    qtbot.addWidget(top)
    parent = top
    for _ in range(12):
        child = QWidget(parent)
        QVBoxLayout(parent).addWidget(child)
        parent = child
    deepest = QLineEdit(parent)
    top.show()
    changes = StyleChanges()
    deepest.installEventFilter(changes)
    light = deepest.palette().color(QPalette.ColorRole.Base)
    theme("dark")
    dark = deepest.palette().color(QPalette.ColorRole.Base)
    theme("light")
    assert changes.count == 0
    assert dark.lightness() < 64 < 192 < light.lightness()
    assert deepest.palette().color(QPalette.ColorRole.Base) == light
    assert isinstance(QApplication.style(), Touches)
    assert not QApplication.instance().styleSheet()  # type: ignore[union-attr]


def test_the_banner_reads_in_either_theme(qtbot: Any, theme: Callable[[str], None]) -> None:
    """The error banner paints its own colours: dark red on pale red in the light theme, and the reverse."""
    banner = Banner()
    qtbot.addWidget(banner)
    banner.resize(300, 40)
    banner.show_message("<b>Could not open the file.</b>")
    texts = []
    for name in ("light", "dark"):
        theme(name)
        image = banner.grab().toImage()
        fill = image.pixelColor(image.width() // 2, image.height() - 3)
        text = banner.label.palette().color(QPalette.ColorRole.WindowText)
        texts.append((fill.lightness(), text.lightness()))
    (light_fill, light_text), (dark_fill, dark_text) = texts
    assert light_fill > light_text
    assert dark_fill < dark_text


def contrast(pixmap: QPixmap, background: QColor) -> float:
    """How far an icon's pixels, drawn over `background`, stand out from it: the mean lightness difference."""
    image = QImage(pixmap.size(), QImage.Format.Format_ARGB32)
    image.fill(background)
    painter = QPainter(image)
    painter.drawPixmap(0, 0, pixmap)
    painter.end()
    lightness = [abs(image.pixelColor(x, y).lightness() - background.lightness())
                 for x in range(image.width()) for y in range(image.height())]
    return sum(lightness) / len(lightness)


@pytest.mark.parametrize("name", ["light", "dark"])
def test_a_disabled_toolbar_icon_stands_out_less_than_an_enabled_one(qtbot: Any, theme: Callable[[str], None],
                                                                      name: str) -> None:
    """On either theme's window, a disabled icon (Undo with nothing to undo) has less contrast than the same icon
    enabled: on the dark one Fusion drew it lighter than the enabled icons, so Undo and Redo looked the live ones."""
    theme(name)
    undo = _icons.icon("undo")
    background = QApplication.palette().color(QPalette.ColorRole.Window)
    enabled, disabled = (undo.pixmap(QSize(24, 24), mode) for mode in (QIcon.Mode.Normal, QIcon.Mode.Disabled))
    assert contrast(disabled, background) < 0.6 * contrast(enabled, background)


def test_an_icon_drawn_in_one_shade_is_drawn_in_the_other_ahead(qtbot: Any, theme: Callable[[str], None]) -> None:
    """A theme switch's repaint of the tool bar drew each of its icons anew in the new shade, in one turn: each
    pixmap drawn is drawn in the other shade too, in a later slice, and the switch finds it drawn."""
    theme("light")
    engine = _icons.PaletteIcon((_icons.ICONS / "save.svg").read_bytes())  # (nothing drawn yet)
    light = engine.pixmap(QSize(21, 21), QIcon.Mode.Disabled, QIcon.State.Off)
    assert (True, 21, 21, 1.0, QIcon.Mode.Disabled) not in engine._drawn
    qtbot.waitUntil(lambda: (True, 21, 21, 1.0, QIcon.Mode.Disabled) in engine._drawn)
    ahead = engine._drawn[True, 21, 21, 1.0, QIcon.Mode.Disabled]
    theme("dark")
    assert engine.pixmap(QSize(21, 21), QIcon.Mode.Disabled, QIcon.State.Off) is ahead
    assert ahead.toImage() != light.toImage(), "drawn in the dark shade"


def test_an_enabled_toolbar_icon_stands_out_on_the_dark_window_as_on_the_light_one(
        qtbot: Any, theme: Callable[[str], None]) -> None:
    """The icons' slate stroke was dim on the dark theme's window (a third less contrast than on the light one, near a
    disabled icon's), and Fusion's More tools chevrons fainter still: both are drawn lighter there, the same icon
    following a switch either way."""
    stood_out = {}
    for name in ("light", "dark", "light"):
        theme(name)
        background = QApplication.palette().color(QPalette.ColorRole.Window)
        more = QApplication.style().standardIcon(QStyle.StandardPixmap.SP_ToolBarHorizontalExtensionButton)
        stood_out[name] = [contrast(icon.pixmap(QSize(24, 24)), background)
                           for icon in (*map(_icons.icon, ("save", "insert", "undo")), more)]
    assert all(dark >= light for dark, light in zip(stood_out["dark"], stood_out["light"], strict=True))


def test_a_theme_switch_repaints_the_windows_docks_a_turn_at_a_time(qtbot: Any, refund_window: Any,
                                                                    theme: Callable[[str], None]) -> None:
    """Repainting the whole window is more than a frame of the GUI thread: after a switch the docks on screen are
    repainted after the rest of the window, one a turn of the event loop, each in the new theme's colours."""
    window = refund_window
    docks = [dock for dock in window.findChildren(QDockWidget) if dock.isVisible()]
    shown = [dock for dock in docks if not dock.visibleRegion().isEmpty()]
    assert len(shown) > 3
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    assert not any(dock.updatesEnabled() for dock in docks)
    counts: list[int] = []
    heart = QTimer(interval=0)
    heart.timeout.connect(lambda: counts.append(sum(dock.updatesEnabled() for dock in shown)))
    heart.start()
    qtbot.waitUntil(lambda: all(dock.updatesEnabled() for dock in docks))
    heart.stop()
    assert set(range(1, len(shown))) <= set(counts)  # one more on screen at a time
    window_colour = QApplication.palette().color(QPalette.ColorRole.Window)
    assert window_colour.lightness() < 64
    assert all(dock.palette().color(QPalette.ColorRole.Window) == window_colour for dock in docks)


class Paints(QObject):
    """Notes each paint of a widget with the turn of the event loop it falls in and the part of the window it is in:
    a dock's name, "centre" (the editor) or "menu bar"; not the window itself, which repaints behind any of them."""

    def __init__(self, window: QMainWindow, docks: list[QDockWidget]) -> None:
        super().__init__()
        self.centre, self.menu_bar, self.docks, self.turn = window.centralWidget(), window.menuBar(), docks, 0
        self.seen: dict[int, set[str]] = {}
        dispatcher = QAbstractEventDispatcher.instance()
        assert dispatcher is not None
        dispatcher.aboutToBlock.connect(self._turn_begins)

    def _turn_begins(self) -> None:
        self.turn += 1

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget):
            part = next((dock.objectName() for dock in self.docks if dock.isAncestorOf(watched) or dock is watched),
                        "centre" if self.centre.isAncestorOf(watched) else
                        "menu bar" if self.menu_bar is watched or self.menu_bar.isAncestorOf(watched) else None)
            if part is not None:
                self.seen.setdefault(self.turn, set()).add(part)
        return False


def test_after_a_theme_switch_the_window_and_each_dock_repaint_in_turns_of_their_own(
        qtbot: Any, refund_window: Any, theme: Callable[[str], None]) -> None:
    """A window repaints a few milliseconds after it is asked to: a dock let go of a turn after the switch joined
    the repaint of the rest (at a million messages the timeline's paint with the editor's, 17-20 ms in one turn).
    The window's frame (menu bar, tool bar, status bar) repaints first, then the centre (the editor) and each dock,
    each in a repaint of its own."""
    window = refund_window
    docks = [dock for dock in window.findChildren(QDockWidget) if not dock.visibleRegion().isEmpty()]
    assert len(docks) > 3
    paints = Paints(window, docks)
    QApplication.instance().installEventFilter(paints)
    try:
        window.set_theme("dark")
        loop = QEventLoop()
        QTimer.singleShot(1500, loop.quit)
        loop.exec()
    finally:
        QApplication.instance().removeEventFilter(paints)
    assert all(dock.updatesEnabled() for dock in docks)
    first: dict[str, int] = {}  # each part's first repaint: the turn
    for turn, painted in sorted(paints.seen.items()):
        for part in painted:
            first.setdefault(part, turn)
    assert set(first) == {"menu bar", "centre"} | {dock.objectName() for dock in docks}
    assert min(first.values()) == first["menu bar"]  # the frame first
    assert sorted(first.values())[1] == first["centre"]  # then the editor
    assert len(set(first.values())) == len(first), first  # then each dock, all in turns of their own


def test_the_call_inspectors_problems_box_follows_a_theme_switch(qtbot: Any, refund_window: Any,
                                                                 theme: Callable[[str], None]) -> None:
    """The problems box of the call inspector is drawn in the theme's colours after a switch, both ways: its
    own style sheet kept it light in the dark theme (with the dark theme's light text on it)."""
    inspector = refund_window.inspector
    inspector.docks["Call inspector"].raise_()
    inspector.panel.view.select_call(2)  # checkEligibility: its order resolves to null
    problems = inspector.inspector.problems
    qtbot.waitUntil(lambda: problems.isVisible() and "$.order" in problems.text())

    def fill() -> QColor:  # inside the box's padding, right of its text
        return problems.grab().toImage().pixelColor(problems.width() - 4, problems.height() // 2)

    text = problems.palette().color(QPalette.ColorRole.WindowText)
    assert fill().lightness() > 200 > 100 > text.lightness()
    theme("dark")
    text = problems.palette().color(QPalette.ColorRole.WindowText)
    assert fill().lightness() < 100 < 200 < text.lightness()
    theme("light")
    assert fill().lightness() > 200


def test_the_settings_file_is_written_on_a_worker_not_the_gui_thread(qtbot: Any, refund_window: Any,
                                                                      theme: Callable[[str], None],
                                                                      monkeypatch: Any) -> None:
    """A theme switch is remembered in the settings file by a worker (its write waits for the disk): with the
    worker held, the GUI thread's turns leave the file as it was; let go, the worker writes it."""
    from concurrent.futures import Future
    from threading import Event

    from PySide6.QtCore import QSettings

    from contextdeck.gui import _settings

    held = Event()
    submitted: list[Future[None]] = []
    submit = _settings._SYNCER.submit
    submit(lambda: None).result(10)  # what opening the window asked for is written (one worker: in order),
    qtbot.wait(1)  # and the settings have synced after it

    def holding(function: Any, *args: Any) -> Future[None]:
        future = submit(lambda: (held.wait(10), function(*args))[1])
        submitted.append(future)
        return future

    monkeypatch.setattr(_settings._SYNCER, "submit", holding)
    file = refund_window.settings.fileName()

    def on_disk() -> object:
        return QSettings(file, QSettings.Format.IniFormat).value("view/theme")

    refund_window.set_theme("dark")
    qtbot.waitUntil(lambda: bool(submitted))
    qtbot.wait(100)  # turns of the event loop: QSettings would have written itself in the first
    assert not Path(file).exists() or "dark" not in Path(file).read_text()
    held.set()
    submitted[-1].result(10)
    assert on_disk() == "dark"


def test_the_settings_writer_s_thread_is_started_with_the_window_not_by_the_first_write(
        qtbot: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """A window's settings writer has its worker thread running before anything is written: the first write (a
    document opened, remembered in the recent files) does not start a thread on the GUI thread."""
    from concurrent.futures import ThreadPoolExecutor

    from PySide6.QtCore import QSettings

    from contextdeck.gui import _settings

    fresh = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextdeck-qsettings-test")
    monkeypatch.setattr(_settings, "_SYNCER", fresh)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    _settings.SyncApart(settings)
    assert len(fresh._threads) == 1
    fresh.shutdown(wait=True)


def test_a_change_while_the_worker_writes_is_written_by_the_worker_too(qtbot: Any, refund_window: Any,
                                                                        theme: Callable[[str], None],
                                                                        monkeypatch: Any) -> None:
    """A theme switch that comes while the worker is writing the one before (its answer not yet back) is not
    written by the GUI thread when that answer comes: the worker writes it too."""
    from concurrent.futures import Future
    from threading import Event

    from contextdeck.gui import _settings

    submit = _settings._SYNCER.submit
    submit(lambda: None).result(10)
    qtbot.wait(1)
    gates: list[Event] = []
    submitted: list[Future[None]] = []

    def holding(function: Any, *args: Any) -> Future[None]:
        gate = Event()
        gates.append(gate)
        future = submit(lambda: (gate.wait(10), function(*args))[1])
        submitted.append(future)
        return future

    monkeypatch.setattr(_settings._SYNCER, "submit", holding)
    file = refund_window.settings.fileName()

    def on_disk() -> str:  # (not through a QSettings: those of one file in one process share unwritten changes)
        return next(line for line in Path(file).read_text().splitlines() if line.startswith("theme="))

    refund_window.set_theme("dark")
    qtbot.waitUntil(lambda: bool(submitted))
    gates[0].set()
    submitted[0].result(10)  # written; its answer to the GUI thread is queued
    refund_window.set_theme("light")  # before that answer is read
    qtbot.waitUntil(lambda: len(submitted) == 2)  # the answer saw the change: written again on the worker
    assert on_disk() == "theme=dark"  # the GUI thread wrote nothing
    gates[1].set()
    submitted[1].result(10)
    assert on_disk() == "theme=light"


def test_a_dialog_over_the_window_repaints_none_of_its_views(qtbot: Any, refund_window: Any) -> None:
    """A dialog opened over the window and closed again deactivates and activates it: no item view of it (calls,
    state, watches...) repaints whole but the one with the focus (Qt repaints each on both, for colours ours do
    not change)."""
    from PySide6.QtWidgets import QAbstractItemView, QDialog

    window = refund_window
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    views = [view for view in window.findChildren(QAbstractItemView) if view.isVisible()]
    assert len(views) > 4

    whole: list[str] = []  # the views whose viewport was painted whole

    class Paints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and isinstance(event, QPaintEvent) and isinstance(watched, QWidget) \
                    and event.rect() == watched.rect():
                whole.append(type(watched.parent()).__name__)
            return False

    settle(window)  # what opening the document set off is drawn, however long a loaded machine takes
    paints = Paints()
    for view in views:
        view.viewport().installEventFilter(paints)
    dialog = QDialog(window)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    qtbot.wait(100)
    dialog.close()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.wait(100)
    # The view with the focus repaints as the focus goes and comes back; no other.
    focus = QApplication.focusWidget()
    assert focus is window.timeline.table
    assert set(whole) <= {type(focus).__name__}, whole


def dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Window).lightness() < 64


def test_each_part_of_the_window_takes_the_new_palette_in_its_own_turn(qtbot: Any, refund_window: Any,
                                                                       theme: Callable[[str], None]) -> None:
    """Taking a palette is a walk over every widget it reaches, the whole window's a frame of the GUI thread at a
    million messages: the window's frame takes the new one in the switch's turn, the centre and each dock on screen
    one at a time, each after the one before repainted, and each repaints in a turn after the one it took the
    palette in (the two in one turn were more than a frame), never in the old palette."""
    window = refund_window
    parts = [window.centralWidget(), *(dock for dock in window.findChildren(QDockWidget) if dock.isVisible())]
    insides = [part.findChildren(QWidget)[-1] for part in parts]  # a widget deep inside each
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    shown = [part for part in parts if not part.visibleRegion().isEmpty()]  # (the others come back with the next)
    seen: list[tuple[int, int]] = []  # each turn: how many of the parts on screen took the palette, and repaint
    broken: list[str] = []

    def look() -> None:
        if dark(window.menuBar()):
            for part, inside in zip(parts, insides, strict=True):
                if part.updatesEnabled() and not dark(inside):
                    broken.append(f"{part.objectName() or 'centre'} repaints in the old palette")
            took = sum(dark(inside) for part, inside in zip(parts, insides, strict=True) if part in shown)
            seen.append((took, sum(part.updatesEnabled() for part in shown)))

    heart = QTimer(interval=0)
    heart.timeout.connect(look)
    heart.start()
    qtbot.waitUntil(lambda: all(part.updatesEnabled() for part in parts))
    heart.stop()
    look()
    assert not broken, broken
    assert len(shown) > 3
    assert all(repaint <= took <= repaint + 1 for took, repaint in seen), seen  # one at a time
    assert {repaint for _, repaint in seen} >= set(range(len(shown) + 1))  # none, then one more at a time
    # each part on screen took the palette in a turn before the one it repaints in
    assert {(n + 1, n) for n in range(len(shown))} <= set(seen), seen
    assert all(dark(inside) for inside in insides)


def test_a_menu_or_dialog_not_on_screen_takes_the_new_theme_when_it_is_shown(qtbot: Any, refund_window: Any,
                                                                             theme: Callable[[str], None]) -> None:
    """Each menu and dialog is a window of its own, and taking a palette walks over all its widgets (a few
    milliseconds a menu in the switch's turn): one not on screen takes the new palette when it is next shown, and
    a menu or dialog opened after a switch is in the new theme's colours."""
    window = refund_window
    menu = window.menu("File")
    dialog = QDialog(window)
    field = QLineEdit(dialog)
    QVBoxLayout(dialog).addWidget(field)
    dialog.show()
    dialog.hide()

    class Changes(QObject):
        count = 0

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            self.count += event.type() == QEvent.Type.PaletteChange
            return False

    changes = Changes()
    for widget in (menu, field):
        widget.installEventFilter(changes)
    window.set_theme("dark")
    qtbot.waitUntil(lambda: dark(window.menuBar()))
    qtbot.wait(50)
    assert changes.count == 0  # neither took it while hidden
    menu.popup(window.mapToGlobal(window.rect().center()))
    qtbot.waitUntil(menu.isVisible)
    assert dark(menu)
    menu.hide()
    dialog.show()
    assert dark(dialog)
    assert dark(field)
    assert field.palette().color(QPalette.ColorRole.Base).lightness() < 64
    dialog.hide()
    window.set_theme("light")
    qtbot.waitUntil(lambda: not dark(window.menuBar()))
    dialog.show()
    assert not dark(field)
    dialog.close()


def test_a_theme_chosen_over_the_desktops_gives_file_dialogs_of_its_colours(refund_window: Any,
                                                                           theme: Callable[[str], None]) -> None:
    """Under Light or Dark the file dialogs and message boxes are Qt's own, which take the palette; under System,
    the desktop's native ones (GTK's Save As came up light in the dark window: it takes the desktop's colours;
    test_real_keys.py shows it on a GTK desktop)."""
    native_off = Qt.ApplicationAttribute.AA_DontUseNativeDialogs
    for chosen, own in (("dark", True), ("system", False), ("light", True), ("system", False)):
        refund_window.set_theme(chosen)
        assert QApplication.testAttribute(native_off) is own, chosen


class EveryTurn(QObject):
    """A job of the window's slices that asks for a slice every turn (as the watches' folding ahead does while it
    has work), noting each turn it runs in."""

    def __init__(self) -> None:
        super().__init__()
        self.ran: set[int] = set()
        self.going = True
        slices().start(self.slice)

    def slice(self) -> None:
        self.ran.add(slices().turns)
        if self.going:
            slices().start(self.slice)


def test_a_part_repaints_in_a_turn_of_its_own_with_no_other_slice(qtbot: Any, refund_window: Any,
                                                                   theme: Callable[[str], None]) -> None:
    """A part's repaint is a slice of the window's turns, painted at once: asked for, it came some milliseconds
    later in a turn that had run another slice first (at a million messages a slice of 2-5 ms and the calls view's
    repaint of 7-18 ms in one turn)."""
    window = refund_window
    docks = [dock for dock in window.findChildren(QDockWidget) if not dock.visibleRegion().isEmpty()]
    assert len(docks) > 3
    first: dict[str, int] = {}

    class FirstPaints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget):
                for dock in docks:
                    if dock is watched or dock.isAncestorOf(watched):
                        first.setdefault(dock.objectName(), slices().turns)
            return False

    paints = FirstPaints()
    job = EveryTurn()
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    QApplication.instance().installEventFilter(paints)
    try:
        qtbot.waitUntil(lambda: all(dock.updatesEnabled() for dock in docks) and len(first) == len(docks))
    finally:
        QApplication.instance().removeEventFilter(paints)
        job.going = False
    assert len(job.ran) > len(docks)  # it ran all along
    shared = {name: turn for name, turn in first.items() if turn in job.ran}
    assert not shared, (shared, first)


def test_what_a_parts_views_show_repaints_after_the_part_each_in_a_turn_of_its_own(
        qtbot: Any, refund_window: Any, theme: Callable[[str], None]) -> None:
    """What the scroll areas of a part show (the timeline's rows, the watches, the calls, the editor's form) is
    held out of the part's repaint and repainted after it, each in a turn of its own and in the new palette: a dock
    with its view's rows was more than a frame in one turn at a million messages."""
    from PySide6.QtWidgets import QAbstractScrollArea

    window = refund_window
    parts = [window.centralWidget(), *(dock for dock in window.findChildren(QDockWidget)
                                       if not dock.visibleRegion().isEmpty())]
    shown = [area.viewport() for part in parts for area in part.findChildren(QAbstractScrollArea)
             if area.viewport().isVisible()]
    contents = [viewport for viewport in shown
                if not any(outer is not viewport and outer.isAncestorOf(viewport) for outer in shown)]
    timeline = window.timeline.table.viewport()
    assert timeline in contents
    body = window.editor.body()  # the editor's form: a scroll area whose viewport the form covers whole
    assert body.viewport() in contents
    first: dict[QWidget, tuple[int, bool]] = {}  # each widget's first paint: the turn, and in the new palette

    class FirstPaints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget) and watched not in first:
                first[watched] = (slices().turns, dark(watched))
            return False

    paints = FirstPaints()
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    QApplication.instance().installEventFilter(paints)
    try:
        qtbot.waitUntil(lambda: all(part.updatesEnabled() for part in parts) and all(
            viewport.updatesEnabled() for viewport in contents) and timeline in first)
    finally:
        QApplication.instance().removeEventFilter(paints)
    dock = window.timeline_dock
    part_turn = min(turn for widget, (turn, _) in first.items() if widget is dock or (
        dock.isAncestorOf(widget) and not any(v is widget or v.isAncestorOf(widget) for v in contents)))
    assert first[timeline] == (first[timeline][0], True)  # in the new palette
    assert first[timeline][0] > part_turn  # after the rest of its dock
    form = body.widget()  # what the form's viewport shows paints with it, after the rest of the centre
    centre_turn = min(turn for widget, (turn, _) in first.items() if window.centralWidget().isAncestorOf(widget)
                      and not body.viewport().isAncestorOf(widget) and widget is not body.viewport())
    assert first[form][0] > centre_turn
    turns = [first[viewport][0] for viewport in contents if viewport in first]
    assert len(turns) > 2
    assert len(set(turns)) == len(turns), turns  # each in a turn of its own


def test_a_switch_while_a_document_opens_leaves_its_rows_held_until_it_is_shown(
        qtbot: Any, open_window: Any, tmp_path: Path, theme: Callable[[str], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The timeline holds a new document's rows until its last message is selected (painted before, they would
    jump to it); a switch in between repaints what the other views show, and leaves the rows held: they are
    painted once the document is shown."""
    monkeypatch.setattr(_document_model, "OPEN_WAIT_S", 600.0)
    path = tmp_path / "many.json"
    path.write_text(json.dumps([{"type": "text", "role": "user", "text": f"m {n}"} for n in range(200)]),
                    encoding="utf-8")
    window = open_window(None)
    model = window.document
    model.open_after(lambda: False)  # (the selection held back)
    with qtbot.waitSignal(model.documentReplaced, timeout=10_000):
        window.session.open(path)
    rows = window.timeline.table.viewport()
    assert not rows.updatesEnabled()
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    qtbot.waitUntil(lambda: not window.findChildren(_theme._OneARepaint), timeout=10_000)
    assert window.centralWidget().updatesEnabled()
    assert not rows.updatesEnabled()
    assert not model.is_shown()
    model.open_after(lambda: True)
    qtbot.waitUntil(lambda: model.is_shown() and rows.updatesEnabled(), timeout=10_000)
    assert window.selected_message() == 199


def test_each_part_takes_the_new_palette_in_a_slice_of_the_windows_turns(
        qtbot: Any, refund_window: Any, theme: Callable[[str], None]) -> None:
    """After the switch, each part taking the new palette (a walk over its widgets) is a slice of the window's
    turns, never work of a timer that could share a turn with another slice (or with the watches' folding ahead,
    which waits while slices are due)."""
    import inspect

    from contextdeck.gui._slices import Slices

    window = refund_window
    parts = [window.centralWidget(), *(dock for dock in window.findChildren(QDockWidget)
                                       if not dock.visibleRegion().isEmpty())]
    taken: list[tuple[str, bool]] = []  # each part as it takes the palette: its name, and inside a slice
    switched = [False]

    class Taking(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if switched[0] and event.type() == QEvent.Type.PaletteChange and watched in parts:
                inside = any(frame.function == "_run" and isinstance(frame.frame.f_locals.get("self"), Slices)
                             for frame in inspect.stack())
                taken.append((watched.objectName() or "centre", inside))
            return False

    taking = Taking()
    for part in parts:
        part.installEventFilter(taking)
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    switched[0] = True
    qtbot.waitUntil(lambda: all(part.updatesEnabled() for part in parts) and len(taken) >= len(parts))
    for part in parts:
        part.removeEventFilter(taking)
    assert sorted(name for name, _inside in taken) == sorted(part.objectName() or "centre" for part in parts)
    assert all(inside for _name, inside in taken), taken


def test_rows_held_after_a_switch_took_them_stay_held_until_the_document_is_shown(
        qtbot: Any, refund_window: Any, theme: Callable[[str], None], monkeypatch: pytest.MonkeyPatch) -> None:
    """A document handed over while a switch repaints what the views show, once it has taken the timeline's rows
    to repaint in a later slice: the timeline holds them until the document is shown, and that slice leaves them
    held."""
    window = refund_window
    table = window.timeline.table
    contents = _theme._contents

    def handed_over_after(part: QWidget) -> list[QWidget]:
        found = contents(part)
        if table.viewport() in found:
            table.hold()  # as a document's hand-over does
        return found

    monkeypatch.setattr(_theme, "_contents", handed_over_after)
    window.set_theme("dark")  # the `theme` fixture brings the light theme back
    qtbot.waitUntil(lambda: not window.findChildren(_theme._OneARepaint), timeout=10_000)
    assert window.timeline_dock.updatesEnabled()
    assert not table.viewport().updatesEnabled()
    table.release()  # as the document shown does
    qtbot.waitUntil(table.viewport().updatesEnabled, timeout=10_000)


@pytest.mark.parametrize("shade", ["light", "dark"])
def test_the_calls_and_watches_cells_look_as_the_window_s_style_draws_them(qtbot: Any, refund_window: Any,
                                                                            theme: Callable[[str], None],
                                                                            shade: str) -> None:
    """The calls view and the watches table draw their cells with Fusion itself, not through `Touches` (a call into
    Python for each element of each cell): a breakpoint, the selection, the status icons and colours, the header
    and the scroll bars look as the window's style draws them, in either theme."""
    theme(shade)
    window = refund_window
    window.watches.model.add("†state.approvals")
    window.watch_dock.raise_()
    calls = window.inspector.panel.view  # type: ignore[attr-defined]
    calls.calls_model().set_breakpoint(1, True)
    calls.select_call(2)
    window.watches.table.selectRow(0)
    qtbot.waitUntil(lambda: not window._busy() and not window.watches.model.is_busy())
    for view in (calls, window.watches.table):
        view.resize(380, 90)  # (scroll bars too)
        assert view.style() is not QApplication.style()
        own = view.grab().toImage()
        view.setStyle(QApplication.style())
        assert isinstance(view.style(), Touches)
        assert view.grab().toImage() == own
