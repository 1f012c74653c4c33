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


@pytest.fixture
def shot_main(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """`_app.main` as `contextdeck gui DOC --screenshot PNG` runs it, with the test process's collector and the
    user's settings folder left alone; the windows it made are deleted after the test."""
    made: list[MainWindow] = []
    init = MainWindow.__init__

    def keep(window: MainWindow, *args: Any) -> None:
        init(window, *args)
        made.append(window)

    monkeypatch.setattr(MainWindow, "__init__", keep)
    monkeypatch.setattr(_app, "tune_interpreter", lambda: None)
    monkeypatch.setattr(_app, "collect_while_idle", lambda app: None)
    ini, user = QSettings.Format.IniFormat, QSettings.Scope.UserScope
    config = Path(QSettings(ini, user, "ContextDeck", "Screenshot").fileName()).parent.parent
    QSettings.setPath(ini, user, str(tmp_path / "config"))
    yield lambda doc, shot: _app.main(str(doc), str(shot), size=(1280, 800))
    QSettings.setPath(ini, user, str(config))
    for window in made:
        window.deleteLater()


def test_a_screenshot_that_cannot_be_written_says_why_and_exits_1(
        shot_main: Any, tmp_path: Path, examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder that does not exist: exit 1 and `cannot write PATH: reason` (the picture was dropped without a word,
    exit 0). A suffix Qt writes no image format for is written as PNG."""
    shot = tmp_path / "missing" / "shot.png"
    assert shot_main(examples / "refund_workflow.json", shot) == 1
    assert f"contextdeck: cannot write {shot}: No such file or directory" in capsys.readouterr().err
    odd = tmp_path / "shot.picture"
    assert shot_main(examples / "refund_workflow.json", odd) == 0
    assert odd.read_bytes().startswith(b"\x89PNG")
    assert QImage(str(odd), "PNG").size() == QSize(1280, 800)


def test_a_document_that_cannot_be_opened_for_a_screenshot_says_where(
        shot_main: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed document: exit 1 with the load's own message (the file, line and column), not only the file's
    name; no picture."""
    doc = tmp_path / "broken.json"
    doc.write_text('[{"type": "text",\n  "text": }]')
    shot = tmp_path / "shot.png"
    assert shot_main(doc, shot) == 1
    err = capsys.readouterr().err
    assert f"contextdeck: could not open {doc}:2:11:" in err
    assert not shot.exists()


def test_a_size_smaller_than_the_window_can_be_is_said(shot_main: Any, tmp_path: Path, examples: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """`--size 800x600` is smaller than the window's panes let it be: the picture is the size the window took, and
    stderr says so (it was a larger picture than asked for, without a word)."""
    shot = tmp_path / "small.png"
    assert _app.main(str(examples / "refund_workflow.json"), str(shot), size=(800, 600)) == 0
    taken = QImage(str(shot)).size()
    assert taken != QSize(800, 600)
    assert f"contextdeck: the window cannot be 800x600: the picture is {taken.width()}x{taken.height()}" in \
        capsys.readouterr().err


def test_a_tool_registry_that_cannot_be_loaded_is_said_with_its_reason(
        shot_main: Any, tmp_path: Path, examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`gui --tools MISSING` says why the registry was not loaded (it said only its name); the window goes on."""
    missing = tmp_path / "nowhere"
    assert _app.main(str(examples / "refund_workflow.json"), str(tmp_path / "shot.png"), tools=[str(missing)],
                     size=(1280, 800)) == 0
    assert f"contextdeck: Tools not loaded: {missing}: no such file or folder" in capsys.readouterr().err
