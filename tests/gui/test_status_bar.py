"""The status bar at 1280×800: a long message stops short of the labels, and the labels keep apart."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from contextdeck.gui._window import MainWindow

LONG = ("Edit refused: message 4 at $.data.amount: an integer of more than 4,300 digits cannot be written; "
        "the edit changes nothing and the message stays as it was. ") * 3


def labels_shown(window: MainWindow) -> list[QWidget]:
    """The status bar's widgets on screen, left to right (the size grip aside)."""
    bar = window.statusBar()
    children = bar.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
    return sorted((c for c in children if c.isVisible() and isinstance(c, QLabel)), key=lambda c: c.x())


def settled(qtbot: Any, window: MainWindow) -> None:
    """The window at 1280×800 with the labels' texts in: the diagnostics' count comes from a worker thread, and
    a label's new text is laid out a turn after it is set (measured in between, the count's label overlaps the
    next by its width)."""
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=20000)
    qtbot.waitUntil(lambda: not window.is_refreshing(), timeout=20000)
    qtbot.waitUntil(lambda: window.diagnostics_label.text() != "", timeout=20000)
    qtbot.waitUntil(lambda: all(label.width() >= label.sizeHint().width() for label in labels_shown(window)),
                    timeout=20000)


def test_a_long_message_ends_before_the_labels(qtbot: Any, refund_window: MainWindow) -> None:
    """A message too long for the space is cut with an ellipsis a gap before the first label: nothing of it is
    drawn in the 12 pixels before "As of message #…" (Qt cut it mid-glyph 2 pixels before, so it read as two
    messages drawn over each other)."""
    window = refund_window
    settled(qtbot, window)
    window.statusBar().showMessage(LONG)
    QApplication.processEvents()
    first = labels_shown(window)[0]
    image = window.statusBar().grab().toImage()
    ratio = image.devicePixelRatio()
    ys = range(int(3 * ratio), int((image.height() / ratio - 3) * ratio))
    gap = {image.pixel(int(x * ratio), y) for x in range(first.x() - 12, first.x()) for y in ys}
    assert len(gap) == 1  # only the background
    inked = {image.pixel(int(x * ratio), y) for x in range(6, 60) for y in ys}
    assert len(inked) > 1  # the message is drawn


def test_the_labels_keep_apart(qtbot: Any, refund_window: MainWindow) -> None:
    """Between two labels' texts ("As of message #4", "No problems", "Loop: …") there are 16 pixels at least
    (6 before: they read as one line)."""
    window = refund_window
    settled(qtbot, window)
    shown = labels_shown(window)
    assert len(shown) >= 3
    for left, right in pairwise(shown):
        text_end = left.x() + left.contentsRect().x() + left.fontMetrics().horizontalAdvance(left.text())
        text_start = right.x() + right.contentsRect().x()
        assert text_start - text_end >= 16, (left.text(), right.text(), text_start - text_end)
