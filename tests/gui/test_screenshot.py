"""`contextdeck gui DOC --screenshot PNG [--size WxH]`: the picture shows the window, at that size, once its views
have filled in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, QSize
from PySide6.QtGui import QImage, QPixmap

from contextdeck.gui import _app
from contextdeck.gui._window import MainWindow


def test_the_screenshot_waits_for_the_views_to_fill_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, examples: Path
) -> None:
    """The state view and the watches fill in over turns of their own after a document opens; the picture is
    taken when they are done, not a few events after opening (it showed an empty state view)."""
    seen: dict[str, Any] = {}
    grab = MainWindow.grab

    def grab_and_look(window: MainWindow, *args: Any) -> QPixmap:
        model = window.state_view.state_model
        seen["identities"] = [model.index(row, 0).data() for row in range(model.rowCount())]
        seen["watches"] = window.watches.model.rowCount()
        seen["window"] = window
        return grab(window, *args)

    monkeypatch.setattr(MainWindow, "grab", grab_and_look)
    monkeypatch.setattr(_app, "tune_interpreter", lambda: None)  # the test process keeps its own collector
    monkeypatch.setattr(_app, "collect_while_idle", lambda app: None)
    ini, user = QSettings.Format.IniFormat, QSettings.Scope.UserScope
    config = Path(QSettings(ini, user, "ContextDeck", "Screenshot").fileName()).parent.parent
    QSettings.setPath(ini, user, str(tmp_path / "config"))  # where the user's settings would be written
    shot = tmp_path / "shot.png"
    try:
        assert _app.main(str(examples / "refund_workflow.json"), str(shot), size=(1280, 800)) == 0
    finally:
        QSettings.setPath(ini, user, str(config))
    assert seen["identities"] == ["¶input", "¶state"]
    assert QImage(str(shot)).size() == QSize(1280, 800)  # --size 1280x800
    seen["window"].settings.sync()
    assert not list((tmp_path / "config").rglob("*")), "a screenshot writes no settings of the user's"
    seen["window"].deleteLater()


@pytest.mark.parametrize("size", ["1280", "1280x", "x800", "12x800", "1280×800", "1280x800x2"])
def test_a_size_that_is_not_one_is_refused_by_name(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--size` takes WIDTHxHEIGHT in pixels; anything else stops before a window is made, saying what."""
    from contextdeck._cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["gui", "--screenshot", "never.png", "--size", size])
    assert stopped.value.code == 2
    assert f"{size!r} is not a size such as 1280x800" in capsys.readouterr().err
