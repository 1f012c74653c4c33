"""Before Qt is loaded, `contextdeck gui` checks the system libraries Qt needs and names the install command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from contextdeck import _cli, _system
from contextdeck._system import QT, XCB, display_problem, install_advice, missing, needed

ICCCM_AND_KEYSYMS = ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")  # what a fresh Debian 12 lacks


@pytest.mark.parametrize(("environ", "expected"), [
    ({"DISPLAY": ":0"}, QT + XCB),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, QT + XCB),
    ({"QT_QPA_PLATFORM": "offscreen"}, QT),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, QT),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, QT),
    ({}, QT),  # no display at all: the window says that itself
])
def test_the_x11_plugin_libraries_are_needed_only_when_qt_will_use_it(
        monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], expected: tuple[_system.Library, ...]) -> None:
    """Qt's own libraries always, on Linux; the X11 plugin's only where Qt will load that plugin."""
    monkeypatch.setattr(_system.sys, "platform", "linux")
    assert needed(environ) == expected


def test_nothing_is_checked_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library names are Linux's: elsewhere nothing is checked."""
    monkeypatch.setattr(_system.sys, "platform", "darwin")
    assert missing({"DISPLAY": ":0"}, loads=lambda name: False) == []


def test_the_advice_is_one_command_per_distribution() -> None:
    """The message names the missing libraries and the exact apt-get and dnf lines that install them."""
    lacking = [library for library in XCB if library.soname in ICCCM_AND_KEYSYMS]
    assert install_advice(lacking) == (
        "contextdeck: the window needs system libraries that are not installed: "
        "libxcb-icccm.so.4, libxcb-keysyms.so.1\n"
        "  Debian, Ubuntu:  sudo apt-get install libxcb-icccm4 libxcb-keysyms1\n"
        "  Fedora, RHEL:    sudo dnf install xcb-util-wm xcb-util-keysyms\n")


def test_a_package_is_named_once() -> None:
    """Several libraries from one package (Fedora's libxcb) give one word on the command line."""
    lacking = [library for library in XCB if library.fedora == "libxcb"]
    assert install_advice(lacking).splitlines()[-1] == "  Fedora, RHEL:    sudo dnf install libxcb"


def test_gui_stops_before_loading_qt(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`contextdeck gui` on an X display without libxcb-icccm4 exits 1 with the advice; Qt is never imported
    (the headless run of this test blocks Qt: importing it would fail)."""
    monkeypatch.setattr(_system.sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    monkeypatch.setattr(_system, "_loads", lambda soname: soname not in ICCCM_AND_KEYSYMS)
    assert _cli.main(["gui"]) == 1
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1\n" in capsys.readouterr().err


def test_the_readme_lists_every_package() -> None:
    """The README's install lines name every package checked here, for Debian and for Fedora."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = {line.split()[1]: set(line.split()[3:]) for line in readme.splitlines()
             if line.startswith(("sudo apt-get install", "sudo dnf install"))}
    assert lines["apt-get"] == {library.debian for library in QT + XCB}
    assert lines["dnf"] == {library.fedora for library in QT + XCB}


@pytest.mark.parametrize(("environ", "asked"), [
    ({"DISPLAY": ":7"}, [":7"]),
    ({"DISPLAY": ":7", "QT_QPA_PLATFORM": "xcb"}, [":7"]),
    ({"DISPLAY": ":7", "QT_QPA_PLATFORM": "offscreen"}, []),
    ({"DISPLAY": ":7", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, []),
])
def test_the_x_display_is_tried_only_when_qt_will_use_it(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str],
                                                         asked: list[str]) -> None:
    """The X display is connected to (and let go) before Qt is loaded only where Qt's X11 plugin will be used."""
    monkeypatch.setattr(_system.sys, "platform", "linux")
    tried: list[str] = []
    assert display_problem(environ, connects=lambda display: tried.append(display) or True) is None
    assert tried == asked


def test_gui_on_an_x_display_that_refuses_says_so_before_loading_qt(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A DISPLAY whose server is gone (a stale one after a reconnect) aborted the process inside Qt (exit 134,
    blaming libxcb-cursor0); it is exit 1 with what is wrong and what to do, and Qt is never imported."""
    monkeypatch.setattr(_system.sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":7")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    monkeypatch.setattr(_system, "_loads", lambda soname: True)
    monkeypatch.setattr(_system, "_x11_connects", lambda display: False)
    assert _cli.main(["gui"]) == 1
    assert capsys.readouterr().err == (
        "contextdeck: cannot connect to the X display ':7' (DISPLAY): is its X server running, and may you use it? "
        "Use --screenshot PNG to render offscreen, or run under Xvfb\n")


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _system._loads("libxcb.so.1")
                    or Path("/tmp/.X11-unix/X9876").exists(), reason="libxcb is Linux's; display :9876 is unserved")
def test_a_display_nobody_serves_does_not_connect() -> None:
    """The real connection, through libxcb: a display number no X server listens on refuses it."""
    assert not _system._x11_connects(":9876")
