"""The self-test `make bundle` runs inside the bundle works from a checkout too (so a failure there is the bundle's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtGui import QImage

from contextdeck.gui import _smoke


def test_the_smoke_test_validates_a_field_and_renders(qtbot: Any, tmp_path: Path,
                                                      capsys: Any) -> None:
    """It opens the refund example, the pattern's error shows at orderId, and the window is rendered."""
    shot = tmp_path / "shot.png"
    assert _smoke.main([str(shot)]) == 0
    assert "does not match '^[A-Z]-[0-9]{4}$'" in capsys.readouterr().out
    assert QImage(str(shot)).width() == 1440


def test_the_child_option_passes_the_arguments_on() -> None:
    """`contextdeck --child-module MODULE ARGS...` gives the module its own arguments: without the PNG it says how
    to call it (exit 2)."""
    done = subprocess.run([sys.executable, "-m", "contextdeck", "--child-module", "contextdeck.gui._smoke"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert "usage: contextdeck --child-module contextdeck.gui._smoke SHOT.png" in done.stderr
