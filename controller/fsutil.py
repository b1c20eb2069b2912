"""Durable file writes: never a half-written file, even if the process dies mid-write."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from controller.errors import UnsafePath


def write_atomic(path: Path, text: str | bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same folder + rename)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_regular(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file, never following a symlink and never
    opening a FIFO or device for reading (O_NOFOLLOW | O_NONBLOCK, then fstat): a working tree
    an agent writes may hold either where a plan file was. At most ``max_bytes + 1`` bytes.
    FileNotFoundError when missing, E_UNSAFE_PATH for a symlink or a non-regular file."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == 40 or os.path.islink(path):  # ELOOP: the last part is a symlink
            raise UnsafePath(f"{path} is a symbolic link; plangate never follows one") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePath(f"{path} is not a regular file; plangate never reads one")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    finally:
        os.close(fd)
