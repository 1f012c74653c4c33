"""Writing a file so that a crash leaves the old content or the new, never a mix, and nothing behind.

`write_atomically` writes a temporary sibling named after the target and the writing process
(`.NAME.PID-RANDOM.tmp`), flushes it to disk, renames it over the target and flushes the folder. A process
killed mid-save leaves its temporary file; `sweep_temporaries` removes those whose process is gone, and
every save sweeps its own target's. The permission bits of the file it replaces are kept, a symbolic link
stays a link (its target is replaced), and a file nobody may write is refused rather than replaced. A device
or a FIFO is written into, never replaced (`writes_in_place`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

_TEMPORARY = ".tmp"


def writes_in_place(path: Path) -> bool:
    """Whether `path` is (or links to) a file that is not a regular file nor a folder: a device or a FIFO, which
    `write_atomically` opens and writes into as a shell's `>` does. Replacing it with a regular file would
    change what it is (`/dev/full` would no longer fail, a FIFO's reader would get nothing), and a name such
    as `/dev/stdout` links to a pipe that no folder holds."""
    try:
        kind = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(kind) and not stat.S_ISDIR(kind)


def check_replaceable(path: Path) -> tuple[Path, int | None]:
    """The file `write_atomically` would replace (a symbolic link's target; a device or a FIFO itself, which is
    written in place) and its permission bits (None when there is none yet); raise OSError when it may not be
    replaced (a read-only file, one the OS will not let this process write)."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) and not writes_in_place(path) else path
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    if mode is not None and not mode & 0o222:
        # Renaming over it would succeed; a read-only file is the user's "do not change this".
        raise PermissionError(errno.EACCES, "the file is read-only", str(path))
    if mode is not None and not os.access(target, os.W_OK):
        os.close(os.open(target, os.O_WRONLY))  # raises the OS's own reason (EACCES, EROFS)
    return target, mode


def write_atomically(path: Path, data: bytes | Iterable[bytes], *, new_mode: int = 0o666) -> None:
    """Replace the file at `path` with `data`; raise OSError when it cannot be (`os_reason` says
    why in words).

    `data` may come in pieces, so that a large document is never joined into one buffer. A new file gets
    `new_mode` less the umask; an existing one keeps its permission bits. A device or a FIFO is written in
    place, as it is: it has no old content to keep.
    """
    target, mode = check_replaceable(path)
    if writes_in_place(target):
        _write_in_place(target, data)
        return
    directory = target.parent
    sweep_temporaries(directory, target.name)
    temporary = directory / f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}{_TEMPORARY}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    handle = os.open(temporary, flags, new_mode if mode is None else 0o600)
    try:
        if mode is not None:
            os.chmod(temporary, mode)
        with os.fdopen(handle, "wb") as stream:
            for piece in (data,) if isinstance(data, bytes) else data:
                stream.write(piece)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    sync_directory(directory)


def _write_in_place(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Open `path` for writing, as it is (a FIFO's open waits for its reader), and write `data` into it; its
    flush and close say a failure (`/dev/full`: ENOSPC). A device or a pipe has nothing to sync to disk."""
    with open(os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0)), "wb") as stream:
        for piece in (data,) if isinstance(data, bytes) else data:
            stream.write(piece)


def sweep_temporaries(directory: Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files of saves whose process is gone (of file `name`, or of every file in
    `directory`); returns those removed. Best effort: an unreadable folder removes nothing."""
    pattern = f".{name}.*{_TEMPORARY}" if name is not None else f".*{_TEMPORARY}"
    removed = []
    try:
        found = list(directory.glob(pattern))
    except OSError:
        return []
    for temporary in found:
        writer = _writer(temporary.name)
        if writer is None or writer == os.getpid() or process_alive(writer):
            continue
        with contextlib.suppress(OSError):
            temporary.unlink()
            removed.append(temporary)
    return removed


def _writer(name: str) -> int | None:
    """The process id in a temporary file's name (`.NAME.PID-RANDOM.tmp`), None when it has none."""
    stem = name.removesuffix(_TEMPORARY)
    pid, dash, token = stem.rpartition(".")[2].partition("-")
    if not (dash and pid.isdigit() and len(token) == 8):
        return None
    return int(pid)


def process_start(pid: int) -> str | None:
    """The start time of process `pid` (Linux /proc), None where unknown; tells a reused pid apart."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = status[status.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, started: str | None = None) -> bool:
    """Whether process `pid` runs (and, when `started` is given, is the one that started then)."""
    if pid == os.getpid():
        return True
    if sys.platform == "win32":
        return _windows_process_alive(pid)  # os.kill(pid, 0) would terminate it there
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    except OSError:
        return False
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc here: trust the pid
    if status[status.rfind(")") + 2 :].startswith("Z"):
        return False  # a zombie has already died
    return started is None or process_start(pid) in (None, started)


def _windows_process_alive(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    code = ctypes.c_ulong()
    try:
        return not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)) or code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def sync_directory(directory: Path) -> None:
    """Make a rename in `directory` durable (POSIX); a no-op where directories cannot be opened."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def os_reason(error: OSError) -> str:
    """An OSError's reason in words, as the operating system gives it ("No space left on device"), never
    "Unknown error"; the caller names the file."""
    return error.strerror or (os.strerror(error.errno) if error.errno else "") or str(error) or type(error).__name__
