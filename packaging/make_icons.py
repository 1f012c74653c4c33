"""Render the application icon (resources/icons/app.svg, the one the window shows) as the PNGs desktops want, at
the hicolor theme's sizes: `make icons` (they are committed, so building needs no SVG renderer; run this after
editing the SVG)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "resources" / "icons" / "app.svg"
ICONS = HERE / "icons" / "hicolor"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
APP_ID = "io.github.contextdeck.ContextDeck"


def render(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    QSvgRenderer(str(SOURCE)).render(painter)
    painter.end()
    return image


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QGuiApplication(sys.argv[:1])  # text in the SVG needs the font database
    for size in SIZES:
        target = ICONS / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not render(size).save(str(target)):
            print(f"make_icons: cannot write {target}", file=sys.stderr)
            return 1
        print(target.relative_to(HERE.parent))
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
