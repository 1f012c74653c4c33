"""Start the workbench: show the window on a document, or render it to a PNG and exit."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QEventLoop, QIODevice, QSettings, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QImageWriter, QPixmap
from PySide6.QtWidgets import QApplication

from contextdeck import APP_ID, __version__, resources
from contextdeck._runtime import tune_interpreter
from contextdeck.engine import os_reason, write_atomically

from ._crash import ExceptionReporter, start_log
from ._idle import collect_while_idle
from ._session import DocumentSession
from ._settings import SyncApart, default_settings
from ._slices import slices
from ._termination import Termination
from ._theme import apply_theme
from ._window import MainWindow

FIRST_DOCUMENT = resources.path("examples", "refund_workflow.json")
SHOT_SIZE = (1440, 880)  # a screenshot's window (the README's picture), unless --size says otherwise


def create_window(settings: QSettings, recovery_dir: Path | None = None) -> MainWindow:
    """A window with its own session (and the theme from `settings` applied)."""
    apply_theme(str(settings.value("view/theme", "system")))
    SyncApart(settings)
    session = DocumentSession(settings, recovery_dir)
    window = MainWindow(settings, session)
    session.setParent(window)
    return window


def open_and_wait(window: MainWindow, path: Path, timeout_ms: int = 60000) -> str | None:
    """Open `path` and run the event loop until it is shown with its selection in place (or failed); None when
    shown, else why not in words (the load's message: the file, line and column of a malformed one)."""
    loop = QEventLoop()
    result: list[str | None] = []

    def loaded() -> None:
        result.append(None)
        loop.quit()

    def failed(message: str) -> None:
        result.append(message)
        loop.quit()

    session = window.session
    window.document.documentShown.connect(loaded)
    session.loadFailed.connect(failed)
    QTimer.singleShot(timeout_ms, loop.quit)
    session.open(path)
    if not result:
        loop.exec()
    window.document.documentShown.disconnect(loaded)
    session.loadFailed.disconnect(failed)
    return result[0] if result else f"{path}: not shown within {timeout_ms // 1000} s"


def save_picture(picture: QPixmap, path: str) -> str | None:
    """Write `picture` to `path` atomically, in the image format its suffix names (PNG when Qt writes no such
    format); None when written, else why not in words (`cannot write shot.png: No such file or directory`)."""
    suffix = Path(path).suffix.lower().lstrip(".").encode()
    kind = suffix if suffix in {name.data() for name in QImageWriter.supportedImageFormats()} else b"png"
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not picture.save(buffer, kind.decode()):
        return f"cannot write {path}: the picture cannot be encoded as {kind.decode().upper()}"
    try:
        write_atomically(Path(path), bytes(data.data()))
    except OSError as error:
        return f"cannot write {path}: {os_reason(error)}"
    return None


def settle(window: MainWindow, limit_ms: int = 10_000) -> None:
    """Run the event loop until the window's deferred work is done: the views fill in over turns of their
    own (slices, debounces, a far jump's rows), so a picture taken a few events after opening shows them
    half made. Done when, on three polls 20 ms apart, no slice is queued and no single-shot timer of the
    window is waiting (repeating ones, such as the autosave's, never stop); at most `limit_ms`."""
    deadline = time.monotonic() + limit_ms / 1000
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()
        waiting = slices().pending or any(
            timer.isActive() and timer.isSingleShot() for timer in window.findChildren(QTimer))
        quiet = 0 if waiting else quiet + 1


def _has_display() -> bool:
    """Whether Qt can open a window here: a platform chosen explicitly, or (on Linux) an X or Wayland display."""
    if os.environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(doc: str | None = None, screenshot: str | None = None, tools: Sequence[str] = (),
         size: tuple[int, int] | None = None) -> int:
    """`contextdeck gui [DOC] [--screenshot PNG [--size WxH]] [--tools PATH ...]`: the window, or a PNG of it
    rendered offscreen at `size` (a first start's layout at that size); `tools` are tool registries loaded
    first (as File → Load Tool Registry… does)."""
    if screenshot and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
    if not _has_display():
        print("contextdeck: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); "
              "use --screenshot PNG to render offscreen, or run under Xvfb", file=sys.stderr)
        return 1
    tune_interpreter()
    QCoreApplication.setOrganizationName("ContextDeck")
    QCoreApplication.setApplicationName("ContextDeck")
    QCoreApplication.setApplicationVersion(__version__)
    QApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    QGuiApplication.setDesktopFileName(APP_ID)  # the desktop's icon and name for the window (Wayland: app id)
    if not screenshot:  # a screenshot keeps nothing, not even a log
        start_log()
        ExceptionReporter(app).install()
    collect_while_idle(app)
    app.setStyle("Fusion")
    # A screenshot keeps nothing: its settings (empty: the picture shows the default layout, not the user's),
    # recovery files and document settings go to a scratch folder, removed when the process ends.
    scratch = tempfile.TemporaryDirectory(prefix="contextdeck-shot-") if screenshot else None
    if scratch is not None:
        settings = QSettings(str(Path(scratch.name) / "settings.ini"), QSettings.Format.IniFormat)
    else:
        settings = default_settings()
    window = create_window(settings, Path(scratch.name) / "recovery" if scratch is not None else None)
    said: list[str] = []  # the registry says why a load failed in `changed` (the status bar's words)
    hear = said.append
    window.tool_registry.changed.connect(hear)
    for place in tools:
        if not window.tool_registry.load(place):
            print(f"contextdeck: {said[-1] if said else f'cannot load tools from {place}'}", file=sys.stderr)
    window.tool_registry.changed.disconnect(hear)
    first_start = not settings.contains("window/geometry")
    if doc is not None:
        path: Path | None = Path(doc)
    else:
        path = FIRST_DOCUMENT if first_start or screenshot else None
    if screenshot:
        window.resize(*(size or SHOT_SIZE))
        window.reset_layout()  # the first start's docks, sized for this size
        window.show()
        failure = open_and_wait(window, path) if path is not None else None
        if failure is not None:
            print(f"contextdeck: could not open {failure}", file=sys.stderr)
            return 1
        if path == FIRST_DOCUMENT:  # the README's picture: the refund example with a few pinned watches
            window.select_message(2)
            window.watches.model.add("†state.refund.amount || †input.amount")
            window.watches.model.add("†input.customer.name")
            window.watches.model.add("†state.approvals.manager")
        window.diagnostics.check(window.session.document)
        window.diagnostics.flush()
        settle(window)
        if size is not None and (window.width(), window.height()) != size:  # its panes' least sizes win
            print(f"contextdeck: the window cannot be {size[0]}x{size[1]}: the picture is "
                  f"{window.width()}x{window.height()}", file=sys.stderr)
        unsaved = save_picture(window.grab(), screenshot)
        window.session.close()
        if unsaved is not None:
            print(f"contextdeck: {unsaved}", file=sys.stderr)
            return 1
        return 0
    window.session.sidecar.store.prune()  # the settings of documents deleted since
    Termination(window, app.exit)
    window.show()
    if not window.files.offer_recovery() and path is not None:
        window.session.open(path)
    return app.exec()
