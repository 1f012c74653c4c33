"""What a command writes for the user (`--out`, stdout): written atomically and whole, or the reason it cannot be in
words."""

from __future__ import annotations

import errno
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
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
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        target, _ = check_replaceable(path)
        if writes_in_place(target):
            return  # a device or a FIFO is written into, as it is (opening a FIFO would wait for its reader)
        with tempfile.TemporaryFile(dir=target.parent):
            pass  # a file can be made beside the real file, as the atomic write will


def check_appendable(out: str) -> None:
    """`CannotWrite` now when lines could not be appended to `out` at the end (a cassette a model's answers are
    recorded in): a command must not pay for an answer and then lose it. A file that is not there yet is not made:
    its folder must take one."""
    with writing(out):
        path = Path(out)
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if path.exists():
            with path.open("ab"):
                pass
        else:
            with tempfile.TemporaryFile(dir=path.parent):
                pass


@contextmanager
def holding_interrupts() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM wait while the block runs: the list yielded holds the first that came, for the caller to
    take effect when the block is done. A write cut midway would leave half a JSON on stdout, or no `--out` at all
    for outputs whose calls have run. A second one does not wait (a FIFO nobody reads, a reader that stopped
    reading): the handlers in place take it at once."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield held
        return
    previous: dict[int, Any] = {}

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def hold(signum: int, frame: Any) -> None:
        if held:
            restore()
            signal.raise_signal(signum)
        held.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not None:  # None: a handler set outside Python, which stays
            previous[signum] = signal.signal(signum, hold)
    try:
        yield held
    finally:
        restore()
