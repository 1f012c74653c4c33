"""The window's size: a first start fits the screen's free area; a later start restores the saved place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QSettings, QSize

from contextdeck.gui._app import create_window
from contextdeck.gui._layout import DEFAULT_SIZE, FRAME, first_geometry


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


SMALL_SCREEN = """
import json, sys
from pathlib import Path
from PySide6.QtCore import QRect, QSettings
from PySide6.QtWidgets import QApplication, QDockWidget
app = QApplication(sys.argv)
from contextdeck.gui._app import create_window

folder = Path(sys.argv[1])
settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
seen = []

def note(window, what):
    for _ in range(30):
        app.processEvents()
    room = window.screen().availableGeometry()
    seen.append([what, window.geometry().bottom(), room.bottom(), window.minimumSizeHint().height()])

first = create_window(settings, folder / "recovery")
first.show()
note(first, "first start")
for dock in first.findChildren(QDockWidget):
    dock.show()
note(first, "every dock shown")
first.setGeometry(QRect(100, 100, 1400, 1000))  # as left on a bigger screen
first.save_layout()
first.session.close()
second = create_window(settings, folder / "recovery")
second.show()
note(second, "restored from a bigger screen")
second.session.close()
print(json.dumps(seen))
"""


def test_on_a_1280_by_800_screen_the_whole_window_with_its_status_bar_is_on_the_screen(tmp_path: Path) -> None:
    """On an 800-pixel-high screen the status bar must not fall below the screen's edge: the real window (not a
    stand-in least size) on an offscreen screen of 1280×800 is inside the screen's free area at its first start,
    with every dock shown (its least height stays under the screen's), and restored from a geometry left on a bigger
    screen."""
    (tmp_path / "screen.json").write_text(json.dumps({"screens": [
        {"name": "small", "x": 0, "y": 0, "width": 1280, "height": 800, "logicalDpi": 96, "logicalBaseDpi": 96,
         "dpr": 1}]}))
    environment = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={tmp_path / 'screen.json'}"}
    done = subprocess.run([sys.executable, "-c", SMALL_SCREEN, str(tmp_path)], env=environment, capture_output=True,
                          text=True, timeout=120, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert [what for what, *_ in seen] == ["first start", "every dock shown", "restored from a bigger screen"]
    for what, bottom, room_bottom, least in seen:
        assert room_bottom == 799, what  # the screen asked for
        assert bottom <= room_bottom, f"{what}: the status bar ends at y={bottom}, the screen at y={room_bottom}"
        assert least <= 800 - FRAME.height(), what
