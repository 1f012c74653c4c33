"""What a file on disk holds (size, time, hash) and writing one atomically."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from contextdeck.engine import os_reason, write_atomically


@dataclass(frozen=True)
class Fingerprint:
    """A file's content as last seen: size and time decide quickly, the hash decides for sure."""

    size: int
    mtime_ns: int
    digest: str

    @classmethod
    def of(cls, path: Path, data: bytes) -> Fingerprint:
        """The fingerprint of `path`, known to hold `data` (raises OSError when it is gone)."""
        status = path.stat()
        return cls(status.st_size, status.st_mtime_ns, digest(data))

    def to_json(self) -> dict[str, object]:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "digest": self.digest}

    @classmethod
    def from_json(cls, value: object) -> Fingerprint | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(int(value["size"]), int(value["mtime_ns"]), str(value["digest"]))
        except (KeyError, TypeError, ValueError):
            return None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def current(path: Path, known: Fingerprint | None, *, thorough: bool = True) -> Fingerprint | None:
    """What `path` holds now (None when missing or unreadable).

    Not `thorough`: trust an unchanged size and time. File times tick coarsely (a few ms), so a
    same-size rewrite within one tick keeps both: when it matters (before a save, after a change
    the watcher saw in the file itself) we read and hash.
    """
    try:
        status = path.stat()
    except OSError:
        return None
    if not thorough and known is not None and (status.st_size, status.st_mtime_ns) == (known.size, known.mtime_ns):
        return known
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return Fingerprint(len(data), status.st_mtime_ns, digest(data))


def differs(path: Path, known: Fingerprint | None) -> bool:
    """Whether writing `path` now would overwrite content we do not know (read and hashed now; a missing file
    replaces nothing)."""
    now = current(path, known)
    return now is not None and (known is None or now.digest != known.digest)


def write_file(path: Path, data: bytes) -> str | None:
    """Replace `path` with `data` atomically (the engine's `write_atomically`); None on success, else the
    operating system's reason in words ("No space left on device", "Read-only file system")."""
    try:
        write_atomically(path, data)
    except OSError as error:
        return os_reason(error)
    return None


def folder_of(*paths: Path | None) -> str:
    """Where a file dialog starts: the folder of the first of `paths` known (the document, the file last used),
    else "" (Qt's: the folder the program was started from)."""
    return next((str(path.parent) for path in paths if path is not None), "")
