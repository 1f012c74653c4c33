"""What a command writes for the user (`--out`, stdout): written atomically and whole, or the reason it cannot be in
words."""

from __future__ import annotations

import errno
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextdeck.engine import check_replaceable, os_reason, write_atomically, writes_in_place


class CannotWrite(Exception):
    """A file the command was to write could not be (a full disk, a folder that does not exist): exit 1."""


@contextmanager
def writing(out: str) -> Iterator[None]:
    """An OSError inside is `CannotWrite`: `cannot write OUT: reason`, the file named as the user named it (never
    the temporary file beside it), which is as it was."""
    try:
        yield
    except OSError as error:
        raise CannotWrite(f"cannot write {out}: {os_reason(error)}") from None


def write_out(out: str, data: bytes) -> None:
    with writing(out):
        write_atomically(Path(out), data)


def check_writable(out: str) -> None:
    """`CannotWrite` now when `out` could not be written at the end (a folder that does not exist, a folder
    named as the file, a read-only file or folder): a command that runs calls or asks a model first must not
    make their side effects, or pay for the answer, and then lose what they gave."""
    with writing(out):
        path = Path(out)
        _refuse_folder(path)
        target, _ = check_replaceable(path)
        if writes_in_place(target):
            return  # a device or a FIFO is written into, as it is (opening a FIFO would wait for its reader)
        _check_takes_a_file(target.parent)  # beside the real file, as the atomic write will make one


def check_appendable(out: str) -> None:
    """`CannotWrite` now when lines could not be appended to `out` at the end (a cassette a model's answers are
    recorded in): a command must not pay for an answer and then lose it. A file that is not there yet is not made:
    its folder must take one."""
    with writing(out):
        path = Path(out)
        _refuse_folder(path)
        if path.exists():
            with path.open("ab"):
                pass
        else:
            _check_takes_a_file(path.parent)


def _refuse_folder(path: Path) -> None:
    """IsADirectoryError when `path`, to be written as a file, is a folder."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))


def _check_takes_a_file(folder: Path) -> None:
    """OSError unless a file can be made in `folder`."""
    with tempfile.TemporaryFile(dir=folder):
        pass


class SwappedHandlers:
    """`handlers` take their signals while the `with` block runs; after it, or once `restore` is called, the handlers
    that were in place do again. Only the main thread may set handlers: on another, nothing changes. A handler set
    outside Python (`signal.getsignal` says None) stays."""

    def __init__(self, handlers: dict[int, Callable[[int, Any], None]]) -> None:
        self._handlers = handlers
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SwappedHandlers:
        if threading.current_thread() is threading.main_thread():
            for signum, handler in self._handlers.items():
                if signal.getsignal(signum) is not None:
                    self._previous[signum] = signal.signal(signum, handler)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.restore()

    def restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


@contextmanager
def holding_interrupts() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM wait while the block runs: the list yielded holds the first that came, for the caller to
    take effect when the block is done. A write cut midway would leave half a JSON on stdout, or no `--out` at all
    for outputs whose calls have run. A second one does not wait (a FIFO nobody reads, a reader that stopped
    reading): the handlers in place take it at once."""
    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if held:
            swapped.restore()
            signal.raise_signal(signum)
        held.append(signum)

    swapped = SwappedHandlers(dict.fromkeys((signal.SIGINT, signal.SIGTERM), hold))
    with swapped:
        yield held
