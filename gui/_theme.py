"""The message types' icons and colours, and the light and dark palettes (following the system unless
overridden)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget

from ._icons import icon
from ._slices import slices
from ._touches import Touches
from ._unheard import unheard

THEMES = ("system", "light", "dark")
AFTER_PAINT_S = 0.1  # in a loop that does not say when its turns begin, the next part this long after a paint
STUCK_MS = 1000  # a part comes back after this long without a paint of its window, whatever else
ALL_ROLES = 2**64 - 1  # a palette's resolve mask with every colour of every group set
_LATER = (Qt.WindowType.Popup, Qt.WindowType.Dialog, Qt.WindowType.ToolTip)  # windows that take a palette when shown
_DUE = "contextdeck_palette_due"  # a window's property: it takes the application's palette when next shown

# Message types that have their own icon; any other kind of data uses the generic data icon.
_TYPE_ICONS = {"text": "msg-text", "system": "msg-text", "input": "msg-input", "state": "msg-state",
               "tool": "msg-tool", "plan": "msg-plan", "error": "msg-error", "data": "msg-data"}


def message_icon(message_type: str, is_output: bool = False) -> QIcon:
    """The icon for a message of `type` (outputs of calls get the output icon)."""
    if is_output and message_type not in ("text", "system", "tool", "plan", "error"):
        return icon("msg-output")
    return icon(_TYPE_ICONS.get(message_type, "msg-data"))


# Accent colours per message type (badges and the timeline's stripe); readable on light and dark.
TYPE_COLORS = {"text": "#3b82f6", "system": "#d97706", "input": "#10b981", "state": "#8b5cf6", "tool": "#f59e0b",
               "plan": "#ec4899", "error": "#ef4444", "data": "#0ea5e9", "output": "#14b8a6",
               "advisor": "#0d9488", "preset": "#64748b"}


def type_color(message_type: str) -> QColor:
    return QColor(TYPE_COLORS.get(message_type, TYPE_COLORS["data"]))


def palette_of(dark: bool) -> QPalette:
    """The light or the dark theme's palette."""
    colors = {
        QPalette.ColorRole.Window: ("#f5f6f8", "#1f2228"),
        QPalette.ColorRole.WindowText: ("#1f2328", "#e6e8eb"),
        QPalette.ColorRole.Base: ("#ffffff", "#17191d"),
        QPalette.ColorRole.AlternateBase: ("#f7f8fa", "#1c1f24"),
        QPalette.ColorRole.ToolTipBase: ("#ffffff", "#2a2e35"),
        QPalette.ColorRole.ToolTipText: ("#1f2328", "#e6e8eb"),
        QPalette.ColorRole.PlaceholderText: ("#8a929c", "#7d8590"),
        QPalette.ColorRole.Text: ("#1f2328", "#e6e8eb"),
        QPalette.ColorRole.Button: ("#eef0f3", "#2a2e35"),
        QPalette.ColorRole.ButtonText: ("#1f2328", "#e6e8eb"),
        QPalette.ColorRole.BrightText: ("#d1242f", "#ff7b72"),
        QPalette.ColorRole.Highlight: ("#4f6bed", "#3d5afe"),
        QPalette.ColorRole.HighlightedText: ("#ffffff", "#ffffff"),
        QPalette.ColorRole.Link: ("#2f5bd8", "#79a6ff"),
        QPalette.ColorRole.Mid: ("#c9ced6", "#3a3f47"),
        QPalette.ColorRole.Midlight: ("#e3e6ea", "#30343b"),
        QPalette.ColorRole.Dark: ("#9aa1ab", "#121417"),
        QPalette.ColorRole.Light: ("#ffffff", "#3a3f47"),
    }
    palette = QPalette()
    for role, (light, night) in colors.items():
        palette.setColor(role, QColor(night if dark else light))
    disabled = QColor("#8a929c" if not dark else "#6b7280")
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return bool(hints.colorScheme() == Qt.ColorScheme.Dark)


def is_dark(theme: str) -> bool:
    """Whether `theme` ("system", "light", "dark") means the dark palette right now."""
    return theme == "dark" or (theme == "system" and system_is_dark())


def apply_theme(theme: str, parts: Sequence[QWidget] = ()) -> bool:
    """Set the application's palette for `theme`; returns whether it is dark.

    The window's touches over Fusion are a style (`Touches`) set once, that paints in the palette's colours: a
    switch changes the palette only, and no widget is polished again. Taking the new palette and repainting in
    it is a frame and more of the GUI thread for the whole window, so the work is split: `parts` (a window's
    centre and its docks) keep the palette they have and paint nothing until the rest of the window has repainted,
    then each takes the new palette and repaints, one a repaint of the window (`_OneARepaint`); a window not on
    screen (a menu, a dialog, a combo box's list) takes it when it is next shown (`_WhenShown`)."""
    held = [part for part in parts if not part.testAttribute(Qt.WidgetAttribute.WA_SetPalette)]
    for part in parts:
        part.setUpdatesEnabled(False)
    with unheard():  # (each a walk over its widgets)
        for part in held:
            part.setPalette(_all_set(part.palette()))
    app = QGuiApplication.instance()
    dark = is_dark(theme)
    if isinstance(app, QApplication):
        if not isinstance(app.style(), Touches):
            app.setStyle(Touches())
        _WhenShown.of(app).defer(window for window in QApplication.topLevelWidgets()
                                 if window.windowType() in _LATER and not window.isVisible())
        with unheard():  # (every widget is told of it)
            QApplication.setPalette(palette_of(dark))
        # A native dialog (GTK's, a portal's, Windows') is drawn in the desktop's colours, not in the palette: under a
        # theme chosen over the desktop's, Save As came up light in the dark window. Qt's own dialogs take the palette.
        QApplication.setAttribute(Qt.ApplicationAttribute.AA_DontUseNativeDialogs, theme != "system")
    elif isinstance(app, QGuiApplication):
        QGuiApplication.setPalette(palette_of(dark))
    if parts:
        _OneARepaint(parts[0].window(), list(parts), held)
    return dark


def _all_set(palette: QPalette) -> QPalette:
    """`palette` with every colour set on the widget it is given to: a change of the palette it would inherit
    neither changes it nor goes on to its children."""
    held = QPalette(palette)
    held.setResolveMask(ALL_ROLES)
    return held


class _WhenShown(QObject):
    """Menus, dialogs and tooltips not on screen take the application's new palette when they are next shown:
    each is a window of its own (a combo box's list too), and taking a palette is a walk over all its widgets."""

    @classmethod
    def of(cls, app: QApplication) -> _WhenShown:
        found = app.findChild(_WhenShown)
        return found if isinstance(found, _WhenShown) else cls(app)

    def defer(self, windows: Iterable[QWidget]) -> None:
        for window in windows:
            window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ApplicationPaletteChange and isinstance(watched, QWidget):
            if not watched.isVisible():
                watched.setProperty(_DUE, True)
                return True
        elif kind == QEvent.Type.Show and isinstance(watched, QWidget):
            watched.removeEventFilter(self)
            if watched.property(_DUE):
                watched.setProperty(_DUE, None)
                QApplication.sendEvent(watched, QEvent(QEvent.Type.ApplicationPaletteChange))
        return False


class _OneARepaint(QObject):
    """Lets `parts` (of one window) take the new palette (those `held` at the old one) and repaint again, each
    whole, one a repaint of the window: the first after the window's own repaint in the new colours, each next
    after the one before has painted. A part takes the palette in one turn of the event loop and repaints in a
    later one: taking it is a walk over the part's widgets and its repaint as long again, more than a frame in
    one turn at a million messages. (A window repaints some milliseconds after it is asked to, not in the next
    turn of the event loop: a part let go of every turn joined the repaint of the rest.) A part's repaint is a slice
    of the window's turns (`slices()`) and is made at once (`repaint`), so that no other slice shares its turn: asked
    for, it came in a later turn, after whatever slice that turn ran. What the part's scroll areas show (a view's
    rows, a form) is held out of that repaint and repainted after it, each in a slice of its own (`_contents`): a
    dock with its view's rows was a frame in one slice at a million messages. A window not on screen has them back
    at once; one that paints nothing for `STUCK_MS`, one at a time then."""

    def __init__(self, window: QWidget, parts: list[QWidget], held: list[QWidget]) -> None:
        super().__init__(window)
        self._parts, self._held = parts, held
        self._stuck = QTimer(self, interval=STUCK_MS)
        self._stuck.timeout.connect(self._next)
        self._stuck.start()
        self._painted = QTimer(self, interval=1, singleShot=True)  # once, however many paints a turn had
        self._painted.timeout.connect(self._after_paint)
        self._painted_in, self._painted_at = -1, 0.0  # the turn of the last paint, and when
        self._taken: QWidget | None = None  # the part that took the palette, to repaint in a later turn
        self._pieces: list[QWidget] = []  # what its scroll areas show, held out of its repaint (`_contents`)
        self._taken_in, self._taken_at = -1, 0.0
        window.installEventFilter(self)
        if not window.isVisible() or window.isMinimized():
            while self._parts:
                self._next()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self._note_paint()
        return False

    def _note_paint(self) -> None:
        self._painted_in, self._painted_at = slices().turns, time.perf_counter()
        self._painted.start()
        self._stuck.start()  # (it is not stuck)

    def _after_paint(self) -> None:
        """The next part, in a turn after the repaint's (a timer may fire in the repaint's turn); in a loop that
        does not say when its turns begin, `AFTER_PAINT_S` after it. Not while the last part has yet to repaint.
        Taking the palette is a slice of the window's turns: never in the turn of another slice."""
        if self._taken is not None or self._pieces:
            return
        if slices().turns == self._painted_in and time.perf_counter() - self._painted_at < AFTER_PAINT_S:
            self._painted.start()
            return
        slices().start(self._take_next)

    def _take_next(self) -> None:
        if self._taken is None and not self._pieces:  # (not stuck and let go of meanwhile)
            self._next()

    def _next(self) -> None:
        self._release()  # (stuck: the part waiting to repaint goes first)
        while self._parts:
            part = self._parts.pop(0)
            if shiboken6.isValid(part):
                if part in self._held:
                    with unheard():  # (a walk over its widgets)
                        part.setPalette(QPalette())  # (inherited again: the new one)
                if not part.visibleRegion().isEmpty():  # (one not on screen paints nothing: the next goes on)
                    self._taken, self._taken_in, self._taken_at = part, slices().turns, time.perf_counter()
                    slices().start(self._let_repaint)
                    break
                part.setUpdatesEnabled(True)
        self._stuck.start()
        self._end_when_done()

    def _let_repaint(self) -> None:
        """The part that took the palette repaints, in a turn after that (as `_after_paint` waits), now."""
        part = self._taken
        if part is None:  # (let go of already: stuck)
            return
        if slices().turns == self._taken_in and time.perf_counter() - self._taken_at < AFTER_PAINT_S:
            slices().start(self._let_repaint)
            return
        if shiboken6.isValid(part):
            self._pieces = _contents(part)
            for piece in self._pieces:
                piece.setUpdatesEnabled(False)  # (held when the part is let go of: set on the piece itself)
        self._release(pieces=False)
        if shiboken6.isValid(part):
            with unheard():  # (a paint event for each of its widgets)
                part.repaint()
        if self._pieces:
            slices().start(self._repaint_a_piece)
        self._end_when_done()

    def _repaint_a_piece(self) -> None:
        """What one of the part's scroll areas shows repaints, now: a slice of its own."""
        while self._pieces:
            piece = self._pieces.pop(0)
            if shiboken6.isValid(piece) and not _held_by_its_view(piece):
                piece.setUpdatesEnabled(True)
                with unheard():
                    piece.repaint()
                self._note_paint()  # (the window itself paints nothing: the next part goes on after this)
                break
        if self._pieces:
            slices().start(self._repaint_a_piece)
        self._end_when_done()

    def _release(self, pieces: bool = True) -> None:
        part, self._taken = self._taken, None
        if part is not None and shiboken6.isValid(part):
            part.setUpdatesEnabled(True)
        if pieces:  # (stuck: all of them at once)
            for piece in self._pieces:
                if shiboken6.isValid(piece) and not _held_by_its_view(piece):
                    piece.setUpdatesEnabled(True)
            self._pieces = []

    def _end_when_done(self) -> None:
        if not self._parts and self._taken is None and not self._pieces:
            self._stuck.stop()
            self.deleteLater()


def _contents(part: QWidget) -> list[QWidget]:
    """The viewports on screen of the scroll areas inside `part` (not those inside another's), in the order of
    the widget tree: what a part shows in its views and forms, most of what its repaint costs. (Shown, not
    `visibleRegion`: a form's viewport is covered whole by the widget it scrolls, and has none.) Not one its view
    holds itself (the timeline's rows before a new document's selection, or while a far jump's are drawn): its
    view shows it when it lets it go, and letting it go here would paint what it holds back."""
    found: list[QWidget] = []
    for area in part.findChildren(QAbstractScrollArea):
        viewport = area.viewport()
        if viewport is None or not viewport.isVisible() or viewport.rect().isEmpty():
            continue
        if viewport.testAttribute(Qt.WidgetAttribute.WA_ForceUpdatesDisabled):  # (held by its own view)
            continue
        if not any(outer.isAncestorOf(viewport) for outer in found):
            found.append(viewport)
    return found


def _held_by_its_view(viewport: QWidget) -> bool:
    """The view of `viewport` has held it since it was taken (`holds_viewport`: the timeline's rows of a document
    handed over meanwhile, or a scroll's not drawn yet): the view lets it go, and it repaints then."""
    holds = getattr(viewport.parentWidget(), "holds_viewport", None)
    return holds is not None and bool(holds())
