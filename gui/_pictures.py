"""`Pictures`: what a delegate painted, kept as images to be copied on the next repaint.

Drawing a string costs an order of magnitude more than copying a row's picture (Qt lays out and rasterises the
glyphs each time); views repaint the same rows over and over (an edit shifts them, the time cursor shades
them, a selection moves). A picture is keyed by everything that is drawn in it, so a changed row is drawn anew.
A row not kept yet is drawn straight away as before, and its picture made while the window waits for input
(`later`): making one costs more than drawing the row. A view about to show a screen of rows never seen (a far
jump) can have their pictures made at once instead (`making_now`), a turn before it shows them.
Our own cache rather than `QPixmapCache`: that one is shared with the style's own pictures, which rows would evict.
Images rather than pixmaps: widgets are painted by Qt's raster engine, which copies either as fast.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QAbstractEventDispatcher, QObject, QSize, QTimer
from PySide6.QtGui import QImage, QPainter

KEPT_BYTES = 16 << 20  # a few screens of wide rows
BUDGET_S = 0.001  # making pictures each time the event loop is about to wait
WAITING = 512  # pictures waiting to be made at most (a long scroll: the last screens)

Draw = Callable[[QPainter], None]


class Pictures(QObject):
    """Images by key, the least recently used dropped beyond `kept_bytes`."""

    def __init__(self, parent: QObject | None = None, kept_bytes: int = KEPT_BYTES) -> None:
        super().__init__(parent)
        self._kept = kept_bytes
        self._bytes = 0
        self._pictures: OrderedDict[Hashable, QImage] = OrderedDict()
        self._waiting: OrderedDict[Hashable, tuple[QSize, float, Draw]] = OrderedDict()
        self._now = False  # `making_now`
        dispatcher = QAbstractEventDispatcher.instance(self.thread())
        if dispatcher is not None:
            dispatcher.aboutToBlock.connect(self._make_some)

    def paint(self, painter: QPainter, x: int, y: int, key: Hashable, size: QSize, ratio: float, draw: Draw) -> None:
        """Paint the picture of `key` at (x, y): copied when it is kept, else drawn by `draw` (from (0, 0), in
        `size`) and kept when the event loop is next about to wait."""
        picture = self.find(key)
        if picture is None and self._now:
            picture = self._make(key, (size, ratio, draw))
        if picture is not None:
            painter.drawImage(x, y, picture)
            return
        painter.save()
        painter.translate(x, y)
        draw(painter)
        painter.restore()
        self.later(key, size, ratio, draw)

    def find(self, key: Hashable) -> QImage | None:
        """The picture of `key`, when it is kept."""
        picture = self._pictures.get(key)
        if picture is not None:
            self._pictures.move_to_end(key)
        return picture

    @contextmanager
    def making_now(self) -> Iterator[None]:
        """Within it, `paint` makes a missing picture at once (and copies it) instead of drawing the row."""
        self._now = True
        try:
            yield
        finally:
            self._now = False

    def later(self, key: Hashable, size: QSize, ratio: float, draw: Draw) -> None:
        """Make the picture of `key` when the event loop is about to wait: `draw` paints it on a transparent image
        of `size` (logical pixels)."""
        self._waiting[key] = (size, ratio, draw)
        self._waiting.move_to_end(key)
        if len(self._waiting) > WAITING:
            self._waiting.popitem(last=False)

    def waiting(self) -> int:
        """How many pictures wait to be made."""
        return len(self._waiting)

    def _make_some(self) -> None:
        if not self._waiting:
            return
        deadline = time.perf_counter() + BUDGET_S
        while self._waiting and time.perf_counter() < deadline:
            self._make(*self._waiting.popitem(last=False))
        if self._waiting:
            QTimer.singleShot(0, self, lambda: None)  # a turn of the loop: it is about to wait again, then more

    def _make(self, key: Hashable, waiting: tuple[QSize, float, Draw]) -> QImage:
        self._waiting.pop(key, None)
        size, ratio, draw = waiting
        picture = QImage(size * ratio, QImage.Format.Format_ARGB32_Premultiplied)
        picture.setDevicePixelRatio(ratio)
        picture.fill(0)  # transparent
        painter = QPainter(picture)
        draw(painter)
        painter.end()
        self._pictures[key] = picture
        self._bytes += picture.sizeInBytes()
        while self._bytes > self._kept and len(self._pictures) > 1:
            _key, old = self._pictures.popitem(last=False)
            self._bytes -= old.sizeInBytes()
        return picture

    def __len__(self) -> int:
        return len(self._pictures)
