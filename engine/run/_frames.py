"""Length-prefixed frames over a pipe: what the application and its activity workers say to each other."""

from __future__ import annotations

import struct
from typing import IO

_HEADER = struct.Struct("!Q")
# The environment variable that tells an activity worker which descriptor its stdout's capture file has.
CAPTURE_VARIABLE = "CONTEXTDECK_WORKER_STDOUT"


class FrameTooLarge(Exception):
    """A frame longer than the reader accepts; the stream is left mid-frame (the worker is ended)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size:,} bytes")
        self.size = size


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def _exactly(stream: IO[bytes], size: int) -> bytes | None:
    parts: list[bytes] = []
    left = size
    while left:
        part = stream.read(left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def read_frame(stream: IO[bytes], limit: int | None = None) -> bytes | None:
    """The next frame, or None at the end of the stream (also when it ends mid-frame)."""
    header = _exactly(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if limit is not None and size > limit:
        raise FrameTooLarge(size)
    return _exactly(stream, size) if size else b""
