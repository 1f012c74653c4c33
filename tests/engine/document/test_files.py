"""Writing files: the mode and a symbolic link are kept, a read-only file is refused, what killed saves left
is swept, and a full disk is said in the OS's words with the old file whole."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from contextdeck.engine import os_reason, sweep_temporaries, write_atomically


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("bits", [0o644, 0o640, 0o600, 0o664])
def test_a_save_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path, bits: int) -> None:
    """The new content gets the old file's permission bits (a temporary file's 0600 made 0644 files private)."""
    target = tmp_path / "doc.json"
    target.write_text("old")
    target.chmod(bits)
    write_atomically(target, b"new")
    assert (target.read_text(), mode(target)) == ("new", bits)


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    """A file that did not exist is created as any program creates one: 0666 less the umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    write_atomically(tmp_path / "new.json", b"{}")
    assert mode(tmp_path / "new.json") == 0o666 & ~umask


def test_a_save_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    """Saving to a link replaces the file it points to, and the link stays a link."""
    real = tmp_path / "real" / "doc.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomically(link, b"new")
    assert link.is_symlink()
    assert real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real"]


def test_a_read_only_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """A file without write permission is not replaced (a rename over it would succeed): EACCES, in words."""
    target = tmp_path / "doc.json"
    target.write_text("old")
    target.chmod(0o444)
    with pytest.raises(PermissionError) as caught:
        write_atomically(target, b"new")
    assert caught.value.errno == errno.EACCES
    assert os_reason(caught.value) == "the file is read-only"
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"]


def test_the_temporary_files_of_killed_saves_are_swept(tmp_path: Path) -> None:
    """A save removes what saves of the same file by ended processes left; a live writer's stays."""
    target = tmp_path / "doc.json"
    left = tmp_path / f".doc.json.{dead_pid()}-0123abcd.tmp"
    live = tmp_path / f".doc.json.{os.getppid()}-89abcdef.tmp"
    other = tmp_path / f".other.json.{dead_pid()}-0123abcd.tmp"
    for path in (left, live, other):
        path.write_bytes(b"half")
    write_atomically(target, b"new")
    assert not left.exists()
    assert live.exists()
    assert other.exists()  # another file's: swept when that file is saved, or by a sweep of the folder
    assert sweep_temporaries(tmp_path) == [other]


def test_a_full_disk_fails_in_words_and_leaves_the_old_file(full_disk: Path) -> None:
    """ENOSPC midway: the OS's reason, the old file whole, no temporary file left."""
    target = full_disk / "doc.json"
    old = target.read_bytes()
    with pytest.raises(OSError, match="No space left on device") as caught:
        write_atomically(target, b"x" * 200_000)
    assert os_reason(caught.value) == "No space left on device"
    assert target.read_bytes() == old
    assert [p.name for p in full_disk.iterdir()] == ["doc.json"]


def test_a_read_only_file_system_fails_in_words(read_only_disk: Path) -> None:
    """EROFS: "Read-only file system", the file as it was."""
    with pytest.raises(OSError, match="Read-only file system") as caught:
        write_atomically(read_only_disk / "doc.json", b"[]")
    assert os_reason(caught.value) == "Read-only file system"


def test_a_device_is_written_into_not_replaced(full_device: Path) -> None:
    """A character device stays one: its own write fails (ENOSPC, in words), never a regular file made in its
    place that would take the data and succeed."""
    with pytest.raises(OSError, match="No space left on device") as caught:
        write_atomically(full_device, b"x" * 200_000)
    assert os_reason(caught.value) == "No space left on device"
    assert stat.S_ISCHR(full_device.stat().st_mode)
    assert [p.name for p in full_device.parent.iterdir()] == ["full"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("through_a_link", [False, True])
def test_a_fifo_reader_gets_what_is_written(tmp_path: Path, through_a_link: bool) -> None:
    """A FIFO, named or linked to (as /dev/stdout links to a pipe), is opened and written, and stays a FIFO:
    its reader gets the whole data, where a file put in its place would leave the reader nothing."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    named = fifo
    if through_a_link:
        named = tmp_path / "link"
        named.symlink_to(fifo)
    reader = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stdout.write(open({str(fifo)!r}).read())"],
                              stdout=subprocess.PIPE)
    data = b"[" + b"1," * 100_000 + b"1]"
    try:
        write_atomically(named, (data[:1000], data[1000:]))
        read, _ = reader.communicate(timeout=30)
    finally:
        reader.kill()
    assert read == data
    assert stat.S_ISFIFO(fifo.stat().st_mode)
