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


def write_atomic_many(files: list[tuple[Path, bytes]]) -> None:
    """:func:`write_atomic` (durable) for many files at once: each is written to its temp
    file, the temp files fsynced, renamed onto their names, and their folders fsynced, as
    one by one, but the fsyncs of each step run together (the filesystem's journal commits
    concurrent fsyncs as one: a burst's thousand files cost a few disk flushes, not two
    thousand)."""
    for start in range(0, len(files), _MANY_AT_ONCE):  # bounded: open descriptors
        _write_durably(files[start : start + _MANY_AT_ONCE])


#: Files :func:`write_atomic_many` holds open at once, and its fsync threads.
_MANY_AT_ONCE = 128
_FSYNC_THREADS = 16


def _write_durably(files: list[tuple[Path, bytes]]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    temps: list[tuple[str, Path]] = []
    fds: list[int] = []
    try:
        try:
            for path, data in files:
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
                fds.append(fd)
                temps.append((tmp, path))
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            with ThreadPoolExecutor(min(_FSYNC_THREADS, len(fds))) as pool:
                list(pool.map(os.fsync, fds))
        finally:
            for fd in fds:
                os.close(fd)
        for tmp, path in temps:
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o7777)
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise
    folders = list(dict.fromkeys(path.parent for _, path in temps))
    with ThreadPoolExecutor(min(_FSYNC_THREADS, len(folders))) as pool:
        list(pool.map(fsync_dir, folders))


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
