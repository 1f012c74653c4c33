"""The state view's partial update at many identities: GUI-thread CPU of the first part of `show_in_parts` when a
cursor move changes one identity (`StateModel._changed_rows`). Offscreen:

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/state_partial.py [IDENTITIES]
"""

from __future__ import annotations

import sys
import time

from PySide6.QtWidgets import QApplication

from contextdeck.engine import Context, CursorState
from contextdeck.gui._state import StateModel

MOVES = 20


def main() -> None:
    app = QApplication.instance() or QApplication([])
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    # one state message per identity, then MOVES messages each changing one of them: each move changes one root
    messages = [{"type": "state", "_instance": f"i{n}", "data": {"v": n}} for n in range(count)]
    messages += [{"type": "state", "_instance": f"i{n}", "data": {"v": -n}} for n in range(MOVES)]
    source = CursorState(Context(messages))
    states = [source.at(count + move) for move in range(MOVES)]
    model = StateModel()
    model.set_state(None, states[0], source, count)
    times = []
    for move in range(1, MOVES):
        parts = model.show_in_parts(None, states[move], source, count + move)
        began = time.thread_time()
        next(parts, None)
        times.append((time.thread_time() - began) * 1000)
        for _ in parts:
            pass
    times.sort()
    print(f"{count:,} identities, one changed a move: the update's first part median {times[len(times) // 2]:.1f} ms "
          f"(min {times[0]:.1f}, max {times[-1]:.1f}) of GUI-thread CPU")
    del app


if __name__ == "__main__":
    main()
