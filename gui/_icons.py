"""Icons from resources/icons: SVG files, their neutral strokes drawn in the palette's shade."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QStyleOption

from contextdeck import resources

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
