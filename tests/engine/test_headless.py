"""The engine stands without Qt."""

import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(not os.environ.get("CONTEXTDECK_BLOCK_QT"), reason="only in the headless run")
def test_qt_cannot_be_imported_here() -> None:
    """In the headless run, importing PySide6 fails, so every engine test ran without Qt."""
    with pytest.raises(ImportError):
        import PySide6  # noqa: F401


def test_engine_import_loads_no_qt() -> None:
    """Importing the engine and the headless CLI pulls in neither PySide6 nor qasync."""
    code = (
        "import sys, contextdeck.engine, contextdeck._cli;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync', 'contextdeck.gui')];"
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
