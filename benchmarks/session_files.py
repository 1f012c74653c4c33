"""Benchmark of the document session with 100,000 messages: load, autosave and save (each on a worker), and how
long the GUI thread is kept waiting meanwhile (the longest gap between 2 ms timer ticks on the GUI thread).

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/session_files.py
(`main()` returns the rows, for a benchmark runner to collect.)
"""

from __future__ import annotations

import gc
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings, QTimer
from PySide6.QtGui import QGuiApplication

from contextdeck.gui._session import DocumentSession

COUNT = 100_000
EXAMPLE = Path(__file__).resolve().parent.parent / "resources" / "examples" / "refund_workflow.json"


def _small(number: int) -> dict[str, object]:
    if number % 3:
        return {"type": "text", "role": "user", "text": f"message {number} " + "lorem ipsum " * 5}
    return {"type": "state", "data": {"step": number, "user": {"name": "A", "tags": ["x", "y"]}}}


def _documents(folder: Path) -> dict[str, Path]:
    base = json.loads(EXAMPLE.read_text())["context"]
    made = {}
    for name, messages in (
        ("small messages", [_small(number) for number in range(COUNT)]),
        ("refund-workflow messages", [base[number % len(base)] for number in range(COUNT)]),
    ):
        path = folder / f"{name.split()[0]}.json"
        path.write_text(json.dumps(messages, indent=2))
        made[name] = path
    gc.collect()
    return made


class _Gaps:
    """The longest wait between ticks of a 2 ms timer on the GUI thread."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer(interval=2)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self._last)
        self._last = now

    def __enter__(self) -> _Gaps:
        self._last = time.perf_counter()
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._timer.stop()


def _until(signal: object, start: Callable[[], object]) -> float:
    loop = QEventLoop()
    signal.connect(loop.quit)  # type: ignore[attr-defined]
    began = time.perf_counter()
    start()
    loop.exec()
    return time.perf_counter() - began


def main() -> list[dict[str, object]]:
    app = QCoreApplication.instance() or QGuiApplication([])
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        for name, path in _documents(folder).items():
            settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
            session = DocumentSession(settings, folder / "recovery", autosave_delay_ms=0)
            with _Gaps() as load_gaps:
                loaded = _until(session.documentReplaced, lambda s=session, p=path: s.open(p))
            session.undo_stack.resetClean()
            with _Gaps() as autosave_gaps:
                autosaved = _until(session.autosaved, session.mark_changed)
            with _Gaps() as save_gaps:
                began = time.perf_counter()
                session.save()
                saved = time.perf_counter() - began
            rows.append({
                "document": f"{COUNT:,} {name}, {path.stat().st_size / 1e6:.0f} MB",
                "open s": round(loaded, 2),
                "open: longest GUI wait ms": round(load_gaps.longest * 1000),
                "autosave s": round(autosaved, 2),
                "autosave: longest GUI wait ms": round(autosave_gaps.longest * 1000),
                "save s": round(saved, 2),
                "save: longest GUI wait ms": round(save_gaps.longest * 1000),
            })
            session.close()
    del app
    return rows


if __name__ == "__main__":
    for row in main():
        print(json.dumps(row, ensure_ascii=False))
