"""The window's size: a first start fits the screen's free area; a later start restores the saved place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QSettings, QSize

from contextdeck.gui._app import create_window
from contextdeck.gui._window import DEFAULT_SIZE, FRAME, first_geometry


def test_a_first_start_fits_a_small_screen_and_keeps_its_size_on_a_big_one() -> None:
    """1280×800: the window and its frame fit, centred; 2560×1440: the default size, centred; a screen's
    free area that does not start at 0 (a panel on the left or top) is respected."""
    least = QSize(820, 600)
    small = first_geometry(QRect(0, 0, 1280, 800), least)
    assert small.size() == QSize(1280, 800) - FRAME
    assert small.center() == QRect(0, 0, 1280, 800).center()
    big = first_geometry(QRect(0, 0, 2560, 1440), least)
    assert big.size() == DEFAULT_SIZE
    assert big.center() == QRect(0, 0, 2560, 1440).center()
    panel = QRect(64, 32, 1216, 768)
    beside = first_geometry(panel, least)
    assert panel.contains(beside.adjusted(-FRAME.width() // 2, -FRAME.height() // 2, 0, 0))
    assert first_geometry(QRect(0, 0, 800, 600), least).size() == least  # never less


def test_the_window_opens_inside_the_screen_then_where_it_was_left(qtbot: Any, tmp_path: Path) -> None:
    """No saved geometry: the window fits the screen it opens on (the offscreen screen is 800×800, smaller than
    the default), or is as narrow as the window can be. Saved on closing, the next window opens with that
    size again."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    first = create_window(settings, tmp_path / "recovery")
    qtbot.addWidget(first)
    room, least = first.screen().availableGeometry(), first.minimumSizeHint()
    assert first.width() <= max(room.width() - FRAME.width(), least.width())
    assert first.height() <= max(room.height() - FRAME.height(), least.height())
    assert first.width() < DEFAULT_SIZE.width()
    first.resize(760, 700)
    first.save_layout()
    first.session.close()
    second = create_window(settings, tmp_path / "recovery")
    qtbot.addWidget(second)
    assert second.size() == QSize(760, 700)
    second.session.close()
