"""A small drawing of an output path: the call on the left, its destinations on the right.

`a || b` are branches (dashed, "or": one of them is written), `a && b` is a fan-out (solid, "and": all are
written with the same value). The drawing is read from the parsed expression, never from the raw string.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from contextdeck.engine import Reference

_ROW = 30
_GAP = 8
_BOX_H = 24


class DestinationsView(QWidget):
    """Paints the branches and fan-outs of one output path."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tool = ""
        self._branches: tuple[tuple[Reference, ...], ...] = ()
        self._note = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_output(self, tool: str, branches: tuple[tuple[Reference, ...], ...], note: str = "") -> None:
        """Show `branches` (alternatives of gates); `note` replaces the drawing when there are none."""
        self._tool, self._branches, self._note = tool, branches, note
        self.updateGeometry()
        self.setFixedHeight(self.sizeHint().height())
        self.update()

    def destinations(self) -> list[tuple[int, int, str]]:
        """(branch, position in the fan-out, reference) for every destination drawn, for tests and tooltips."""
        return [(b, f, str(ref)) for b, gate in enumerate(self._branches) for f, ref in enumerate(gate)]

    def sizeHint(self) -> QSize:
        rows = sum(len(g) for g in self._branches) + max(0, len(self._branches) - 1)
        return QSize(360, max(1, rows) * _ROW + 2 * _GAP)

    def paintEvent(self, _event: object) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text = palette.text().color()
        if not self._branches:
            painter.setPen(palette.placeholderText().color())
            painter.drawText(self.rect().adjusted(_GAP, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, self._note)
            painter.end()
            return
        font = QFont(self.font())
        bold = QFont(font)
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        source = QRectF(_GAP, 0, metrics.horizontalAdvance(self._tool) + 24, _BOX_H)
        source.moveCenter(QPointF(source.center().x(), self.height() / 2))
        accent = QColor("#2f7fd1")
        self._box(painter, source, self._tool, accent, bold, filled=True)
        x_split = source.right() + 46
        x_box = x_split + 50
        y = float(_GAP)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono_metrics = QFontMetrics(mono)
        for number, gate in enumerate(self._branches):
            top = y
            for ref in gate:
                label = str(ref)
                box = QRectF(x_box, y + (_ROW - _BOX_H) / 2, mono_metrics.horizontalAdvance(label) + 20, _BOX_H)
                self._box(painter, box, label, text, mono, filled=False)
                self._arrow(painter, QPointF(x_split, box.center().y()), QPointF(box.left(), box.center().y()), accent)
                y += _ROW
            middle = (top + y) / 2
            dashed = len(self._branches) > 1
            pen = QPen(accent, 1.6, Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
            painter.setPen(pen)
            curve = QPainterPath(QPointF(source.right(), source.center().y()))
            curve.cubicTo(QPointF(source.right() + 24, source.center().y()), QPointF(x_split - 24, middle),
                          QPointF(x_split, middle))
            painter.drawPath(curve)
            if len(gate) > 1:  # fan-out: a bracket joining the destinations written together
                painter.setPen(QPen(accent, 1.6))
                painter.drawLine(QPointF(x_split, top + _ROW / 2), QPointF(x_split, y - _ROW / 2))
                self._tag(painter, QPointF(x_split + 4, middle), "and", accent)
            if dashed:
                self._tag(painter, QPointF(source.right() + 6, middle - 2), "1st" if number == 0 else "else",
                          QColor("#8a55c9"))
            y += _ROW if number < len(self._branches) - 1 else 0
        painter.end()

    def _box(self, painter: QPainter, rect: QRectF, label: str, colour: QColor, font: QFont, filled: bool) -> None:
        painter.setPen(QPen(colour, 1.2))
        fill = QColor(colour)
        fill.setAlpha(40 if filled else 14)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, 5, 5)
        painter.setFont(font)
        painter.setPen(self.palette().text().color())
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)

    def _arrow(self, painter: QPainter, start: QPointF, end: QPointF, colour: QColor) -> None:
        painter.setPen(QPen(colour, 1.6))
        painter.drawLine(start, end)
        painter.setBrush(colour)
        head = QPainterPath(end)
        head.lineTo(end + QPointF(-7, -4))
        head.lineTo(end + QPointF(-7, 4))
        head.closeSubpath()
        painter.drawPath(head)

    def _tag(self, painter: QPainter, at: QPointF, text: str, colour: QColor) -> None:
        font = QFont(self.font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        painter.setFont(font)
        painter.setPen(colour)
        painter.drawText(at, text)
