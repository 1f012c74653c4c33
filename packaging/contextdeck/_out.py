"""A file the user named for a command to write (`--out`): written atomically, or the reason it cannot be in words."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contextdeck.engine import os_reason, write_atomically


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
