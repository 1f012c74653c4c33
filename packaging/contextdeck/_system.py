"""The system libraries Qt needs on Linux, checked before Qt is loaded: a missing one otherwise aborts the
process ("no Qt platform plugin could be initialized", naming the wrong library), here it is a message with
the exact command that installs it."""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping
from typing import NamedTuple


class Library(NamedTuple):
    soname: str
    debian: str  # the package on Debian and Ubuntu
    fedora: str  # the package on Fedora and RHEL


# What Qt's own libraries (Core, Gui, Widgets, Svg) load, on any platform, offscreen too.
QT = (
    Library("libGL.so.1", "libgl1", "libglvnd-glx"),
    Library("libEGL.so.1", "libegl1", "libglvnd-egl"),
    Library("libfontconfig.so.1", "libfontconfig1", "fontconfig"),
    Library("libfreetype.so.6", "libfreetype6", "freetype"),
    Library("libglib-2.0.so.0", "libglib2.0-0", "glib2"),
    Library("libdbus-1.so.3", "libdbus-1-3", "dbus-libs"),
    Library("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    Library("libX11.so.6", "libx11-6", "libX11"),
)

# What the X11 platform plugin (libqxcb.so and libQt6XcbQpa) loads besides: `ldd` on them, PySide6 6.11.
XCB = (
    Library("libxcb.so.1", "libxcb1", "libxcb"),
    Library("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    Library("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    Library("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    Library("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    Library("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    Library("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    Library("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    Library("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    Library("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    Library("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    Library("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    Library("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    Library("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    Library("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    Library("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
)


def _loads(soname: str) -> bool:
    """Whether the dynamic loader finds `soname` the way Qt will (LD_LIBRARY_PATH, the cache, a bundle's)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def needed(environ: Mapping[str, str]) -> tuple[Library, ...]:
    """The libraries the window needs here: none off Linux; Qt's own, and the X11 plugin's when Qt will use
    it (`uses_x11`). Without any display the window says so itself."""
    if not sys.platform.startswith("linux"):
        return ()
    return QT + XCB if uses_x11(environ) else QT


def uses_x11(environ: Mapping[str, str]) -> bool:
    """Whether Qt will load its X11 plugin on Linux: chosen by `QT_QPA_PLATFORM`, or by default on an X display
    outside a Wayland session (there Qt prefers its Wayland plugin)."""
    platform = environ.get("QT_QPA_PLATFORM", "")
    wayland = environ.get("XDG_SESSION_TYPE") == "wayland" and bool(environ.get("WAYLAND_DISPLAY"))
    return platform.startswith("xcb") or (not platform and not wayland and bool(environ.get("DISPLAY")))


def _x11_connects(display: str) -> bool:
    """Whether an X connection to `display` can be made (libxcb, as Qt's plugin makes it): then closed."""
    xcb = ctypes.CDLL("libxcb.so.1")
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)  # never NULL: an error object on failure
    try:
        return bool(xcb.xcb_connection_has_error(connection) == 0)
    finally:
        xcb.xcb_disconnect(connection)


def display_problem(environ: Mapping[str, str] = os.environ,
                    connects: Callable[[str], bool] | None = None) -> str | None:
    """Why the window cannot open on the X display Qt will use, None when it can (or Qt will use another platform).
    Qt would abort the process instead (a core dump, exit 134), blaming a library that is installed."""
    if not sys.platform.startswith("linux") or not uses_x11(environ):
        return None
    display = environ.get("DISPLAY", "")
    if (connects or _x11_connects)(display):
        return None
    return (f"contextdeck: cannot connect to the X display {display!r} (DISPLAY): is its X server running, and may "
            "you use it? Use --screenshot PNG to render offscreen, or run under Xvfb\n")


def missing(environ: Mapping[str, str] = os.environ, loads: Callable[[str], bool] | None = None) -> list[Library]:
    """The libraries `needed` that the dynamic loader (or `loads`) cannot find."""
    loads = loads or _loads
    return [library for library in needed(environ) if not loads(library.soname)]


def install_advice(libraries: list[Library]) -> str:
    """What to tell the user: the missing libraries and the one command per distribution that installs them."""
    debian = " ".join(dict.fromkeys(library.debian for library in libraries))
    fedora = " ".join(dict.fromkeys(library.fedora for library in libraries))
    names = ", ".join(library.soname for library in libraries)
    return (f"contextdeck: the window needs system libraries that are not installed: {names}\n"
            f"  Debian, Ubuntu:  sudo apt-get install {debian}\n"
            f"  Fedora, RHEL:    sudo dnf install {fedora}\n")
