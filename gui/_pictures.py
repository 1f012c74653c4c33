"""`Pictures`: what a delegate painted, kept as pixmaps to be copied on the next repaint.

Drawing a string costs 15-45 µs on a slow machine (Qt lays out and rasterises the glyphs each time), copying a
row's picture about 2 µs; views repaint the same rows over and over (an edit shifts them, the time cursor shades
them, a selection moves). A picture is keyed by everything that is drawn in it, so a changed row is drawn anew.
Our own cache rather than `QPixmapCache`: that one is shared with the style's own pictures, which rows would evict.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPixmap

KEPT_BYTES = 16 << 20  # a few screens of wide rows


class Pictures:
    """Pixmaps by key, the least recently used dropped beyond `kept_bytes`."""

    def __init__(self, kept_bytes: int = KEPT_BYTES) -> None:
        self._kept = kept_bytes
        self._bytes = 0
        self._pictures: OrderedDict[Hashable, QPixmap] = OrderedDict()

    def get(self, key: Hashable, size: QSize, ratio: float, draw: Callable[[QPainter], None]) -> QPixmap:
        """The picture of `key`: `draw` paints it once, on a transparent pixmap of `size` (logical pixels)."""
        picture = self._pictures.get(key)
        if picture is not None:
            self._pictures.move_to_end(key)
            return picture
        picture = QPixmap(size * ratio)
        picture.setDevicePixelRatio(ratio)
        picture.fill(Qt.GlobalColor.transparent)
        painter = QPainter(picture)
        draw(painter)
        painter.end()
        self._pictures[key] = picture
        self._bytes += _bytes(picture)
        while self._bytes > self._kept and len(self._pictures) > 1:
            _key, old = self._pictures.popitem(last=False)
            self._bytes -= _bytes(old)
        return picture

    def clear(self) -> None:
        self._pictures.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._pictures)


def _bytes(picture: QPixmap) -> int:
    return picture.width() * picture.height() * 4
