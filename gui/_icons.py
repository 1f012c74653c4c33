"""Icons from resources/icons: SVG files, their neutral strokes drawn in the palette's shade.

Each pixmap drawn in one shade is drawn in the other too, in a later slice of the window's turns (`_Ahead`): a
theme switch's repaint of the window's frame (its tool bar) drew every icon there anew, in the turn that repainted
it, the longest turn of the first switch at a million messages."""

from __future__ import annotations

from collections import deque
from functools import cache

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QStyleOption

from contextdeck import resources

from ._slices import slices

ICONS = resources.path("icons")
# The icons' neutral stroke, drawn as is on a light palette and lighter on a dark one (as the slate of the light
# palette it was against the dark background, hard to tell from a disabled icon).
NEUTRAL, NEUTRAL_ON_DARK = "#64748b", "#b4bcc8"


@cache
def icon(name: str) -> QIcon:
    """The SVG icon `resources/icons/<name>.svg` (an empty icon when there is none); its neutral strokes follow the
    palette as it is when painted (`PaletteIcon`)."""
    path = ICONS / f"{name}.svg"
    if not path.exists():
        return QIcon()
    svg = path.read_bytes()
    return QIcon(PaletteIcon(svg)) if NEUTRAL.encode() in svg else QIcon(str(path))


def dark(palette: QPalette) -> bool:
    """Whether `palette` is a dark one (its window dark)."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


class PaletteIcon(QIconEngine):
    """An SVG icon drawn with its neutral stroke in the palette's shade (light or dark, read at each paint: a theme
    switch needs nothing more); disabled, as the style makes any icon disabled."""

    def __init__(self, svg: bytes) -> None:
        super().__init__()
        self.svg = svg
        self._drawn: dict[tuple[bool, int, int, float, QIcon.Mode], QPixmap] = {}

    def clone(self) -> QIconEngine:
        return PaletteIcon(self.svg)

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float) -> QPixmap:
        palette = QGuiApplication.palette()
        on_dark = dark(palette)
        key = (on_dark, size.width(), size.height(), scale, mode)
        drawn = self._drawn.get(key)
        if drawn is None:
            drawn = self._drawn[key] = self._draw(size, scale, on_dark, mode, palette)
            if (not on_dark, *key[1:]) not in self._drawn:
                _Ahead.of().ask(self, size, scale, not on_dark, mode)
        return drawn

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        scale = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, scale))

    def _draw(self, size: QSize, scale: float, dark: bool, mode: QIcon.Mode, palette: QPalette) -> QPixmap:
        svg = self.svg.replace(NEUTRAL.encode(), NEUTRAL_ON_DARK.encode()) if dark else self.svg
        pixmap = QPixmap(size * scale)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        QSvgRenderer(svg).render(painter)
        painter.end()
        pixmap.setDevicePixelRatio(scale)
        style = QApplication.style() if isinstance(QGuiApplication.instance(), QApplication) else None
        if mode == QIcon.Mode.Disabled and style is not None:
            option = QStyleOption()
            option.palette = palette
            pixmap = style.generatedIconPixmap(mode, pixmap, option)
        return pixmap


class _Ahead(QObject):
    """The other shade's pixmaps of the icons drawn, drawn one a slice of the window's turns."""

    def __init__(self, parent: QObject | None) -> None:
        super().__init__(parent)
        self._due: deque[tuple[PaletteIcon, QSize, float, bool, QIcon.Mode]] = deque()

    @classmethod
    def of(cls) -> _Ahead:
        app = QCoreApplication.instance()
        found = app.findChild(_Ahead, options=Qt.FindChildOption.FindDirectChildrenOnly) if app is not None else None
        return found if isinstance(found, _Ahead) and shiboken6.isValid(found) else cls(app)

    def ask(self, engine: PaletteIcon, size: QSize, scale: float, dark: bool, mode: QIcon.Mode) -> None:
        self._due.append((engine, QSize(size), scale, dark, mode))
        slices().start(self._draw_some)

    def _draw_some(self) -> None:
        """One pixmap (an SVG drawn and maybe made disabled): a slice's share of its turn."""
        while self._due:
            engine, size, scale, on_dark, mode = self._due.popleft()
            key = (on_dark, size.width(), size.height(), scale, mode)
            if key not in engine._drawn:
                palette = _shade(on_dark)
                engine._drawn[key] = engine._draw(size, scale, on_dark, mode, palette)
                break
        if self._due:
            slices().start(self._draw_some)


def _shade(dark: bool) -> QPalette:
    """The theme's palette of that shade (a disabled icon is drawn from it)."""
    from ._theme import palette_of  # (the theme's module draws its message icons with this one)

    return palette_of(dark)
