"""Recovery files: the unsaved document written aside every few seconds, offered back after a crash.

Each open document has a key; `<key>.data` holds the document in its shape and `<key>.json` (the
sidecar) says whose it is: the original path, the time, the shape, the process that wrote it (pid and
start time, so a reused pid is not mistaken for the writer) and the original file's fingerprint.
A sidecar whose process is still running belongs to a live session and is never offered.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from contextdeck.engine import Shape, process_alive, process_start, sweep_temporaries, write_atomically

from ._disk import Fingerprint

DATA_SUFFIX = ".data"
SIDECAR_SUFFIX = ".json"
FORMAT = 1


@dataclass(frozen=True)
class RecoveryCandidate:
    """Unsaved work left behind by a session that is no longer running."""

    original_path: Path | None
    recovery_file: Path
    sidecar: Path
    time: datetime
    shape: Shape
    pid: int
    base: Fingerprint | None = None

    @property
    def key(self) -> str:
        return self.sidecar.name.removesuffix(SIDECAR_SUFFIX)

    @property
    def title(self) -> str:
        """How to name it to a person: the original file, or "Untitled"."""
        return str(self.original_path) if self.original_path is not None else "Untitled"


def new_key() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


class RecoveryStore:
    """The recovery folder: write, claim, remove and list recovery files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def paths(self, key: str) -> tuple[Path, Path]:
        return self.directory / f"{key}{DATA_SUFFIX}", self.directory / f"{key}{SIDECAR_SUFFIX}"

    def write(self, key: str, data: Iterable[bytes], original: Path | None, shape: Shape,
              base: Fingerprint | None) -> Path:
        """Write the document (given in pieces), then its sidecar, both atomically: a listed sidecar
        always has its whole data file."""
        data_path, sidecar = self.paths(key)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # unsaved work is private
        write_atomically(data_path, data, new_mode=0o600)
        self._write_sidecar(sidecar, original, shape, base)
        return data_path

    def claim(self, candidate: RecoveryCandidate) -> str:
        """Make a candidate this process's own (same key), so it is no longer offered elsewhere."""
        self._write_sidecar(candidate.sidecar, candidate.original_path, candidate.shape, candidate.base)
        return candidate.key

    def _write_sidecar(self, sidecar: Path, original: Path | None, shape: Shape, base: Fingerprint | None) -> None:
        meta = {
            "format": FORMAT,
            "original": str(original) if original is not None else None,
            "time": datetime.now(UTC).isoformat(),
            "shape": shape.value,
            "pid": os.getpid(),
            "started": process_start(os.getpid()),
            "base": base.to_json() if base is not None else None,
        }
        write_atomically(sidecar, json.dumps(meta, indent=2).encode("utf-8"), new_mode=0o600)

    def remove(self, key: str) -> None:
        # The sidecar first: without it the data file is never offered.
        # Best effort: an unusable folder (where nothing was written) or a file we may not remove.
        for path in reversed(self.paths(key)):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    def candidates(self) -> list[RecoveryCandidate]:
        """Recovery files whose writer is no longer running, newest first; unreadable sidecars are skipped.

        What a killed writer left unfinished goes first: temporary files, and a data file whose sidecar was
        never written (so it was never offered)."""
        if not self.directory.is_dir():
            return []
        self.sweep()
        found = []
        for sidecar in self.directory.glob(f"*{SIDECAR_SUFFIX}"):
            candidate = self._read(sidecar)
            if candidate is not None:
                found.append(candidate)
        return sorted(found, key=lambda candidate: candidate.time, reverse=True)

    def sweep(self) -> None:
        """Remove the temporary files of writes killed midway and data files left without a sidecar by a
        process that is gone (best effort: what cannot be removed stays)."""
        sweep_temporaries(self.directory)
        for data_path in self.directory.glob(f"*{DATA_SUFFIX}"):
            key = data_path.name.removesuffix(DATA_SUFFIX)
            pid = key.partition("-")[0]
            if self.paths(key)[1].exists() or not pid.isdigit() or process_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                data_path.unlink()

    def _read(self, sidecar: Path) -> RecoveryCandidate | None:
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
            data_path = sidecar.with_name(sidecar.name.removesuffix(SIDECAR_SUFFIX) + DATA_SUFFIX)
            pid = int(meta["pid"])
            original = meta.get("original")
            candidate = RecoveryCandidate(
                original_path=Path(original) if isinstance(original, str) else None,
                recovery_file=data_path,
                sidecar=sidecar,
                time=datetime.fromisoformat(meta["time"]),
                shape=Shape(meta["shape"]),
                pid=pid,
                base=Fingerprint.from_json(meta.get("base")),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not data_path.is_file() or process_alive(pid, meta.get("started")):
            return None
        return candidate


