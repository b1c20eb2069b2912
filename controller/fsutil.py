"""Durable file writes: never a half-written file, even if the process dies mid-write."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from controller.errors import PlanTooLarge, UnsafePath

#: The most bytes of one file (or git blob) plangate reads whole: anything an agent writes
#: may be a file of gigabytes (a few MB once compressed in a push), and reading it to find
#: it too large took the controller's memory with it (round 31). ``limits.max_plan_bytes``
#: may not exceed it; the controller's own files (plans, logs of at most 1 MB) fit.
READ_LIMIT = 4 * 1024 * 1024
#: ``read_regular``'s default: at most READ_LIMIT bytes, a bigger file is E_PLAN_TOO_LARGE.
BOUNDED = -1


def write_atomic(
    path: Path,
    text: str | bytes,
    *,
    durable: bool = True,
    root: Path | None = None,
    executable: bool | None = None,
) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same folder + rename).

    With ``root`` (the working tree ``path`` lies in), no folder between them may be a
    symlink or anything but a folder (E_UNSAFE_PATH): they are opened one by one without
    following links, and the file is written and renamed inside the last one, so a folder
    swapped for a link meanwhile cannot send the write elsewhere (round 14).

    The new file keeps the mode of the regular file it replaces (a new one: 0600);
    ``executable`` True or False sets or clears its executable bits (:func:`_exec_bits`: a
    file git checks out as ``100755`` or ``100644``), None keeps them."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    folder = _folder(path.parent, root)
    try:
        _write_in(folder, path.name, data, durable, executable)
    finally:
        os.close(folder)


def write_atomic_many(
    files: list[tuple[Path, bytes]],
    *,
    root: Path | None = None,
    executable: Mapping[Path, bool] | None = None,
) -> None:
    """:func:`write_atomic` (durable) for many files at once: each is written to its temp
    file, the temp files fsynced, renamed onto their names, and their folders fsynced, as
    one by one, but the fsyncs of each step run together (the filesystem's journal commits
    concurrent fsyncs as one: a burst's thousand files cost a few disk flushes, not two
    thousand). ``executable``: as :func:`write_atomic`'s, per path (a path not in it: kept)."""
    for start in range(0, len(files), _MANY_AT_ONCE):  # bounded: open descriptors
        _write_durably(files[start : start + _MANY_AT_ONCE], root, executable or {})


#: Files :func:`write_atomic_many` holds open at once, and its fsync threads.
_MANY_AT_ONCE = 128
_FSYNC_THREADS = 16
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _write_durably(
    files: list[tuple[Path, bytes]], root: Path | None, executable: Mapping[Path, bool]
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    folders: dict[Path, int] = {}
    made: list[tuple[int, str, str]] = []  # (folder, temp name, name)
    fds: list[int] = []
    try:
        try:
            for path, data in files:
                folder = folders.get(path.parent)
                if folder is None:
                    folder = folders[path.parent] = _folder(path.parent, root)
                tmp = _temp_name(path.name)
                fds.append(os.open(tmp, _CREATE, 0o600, dir_fd=folder))
                made.append((folder, tmp, path.name))
                _keep_mode(fds[-1], folder, path.name, executable.get(path))
                view = memoryview(data)
                while view:
                    view = view[os.write(fds[-1], view) :]
            with ThreadPoolExecutor(min(_FSYNC_THREADS, len(fds))) as pool:
                list(pool.map(os.fsync, fds))
        finally:
            for fd in fds:
                os.close(fd)
        for folder, tmp, name in made:
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        with ThreadPoolExecutor(min(_FSYNC_THREADS, len(folders))) as pool:
            list(pool.map(os.fsync, folders.values()))
    except BaseException:
        for folder, tmp, _ in made:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
        raise
    finally:
        for folder in folders.values():
            os.close(folder)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_regular(path: Path, max_bytes: int | None = BOUNDED, *, root: Path | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file, never following a symlink and never
    opening a FIFO or device for reading (O_NOFOLLOW | O_NONBLOCK, then fstat): a working tree
    an agent writes may hold either where a plan file was. At most ``max_bytes + 1`` bytes.
    With ``root``, no folder between it and ``path`` may be a link either (see
    :func:`write_atomic`). FileNotFoundError when missing, E_UNSAFE_PATH for a symlink or a
    non-regular file. By default (``BOUNDED``) a file over :data:`READ_LIMIT` is
    E_PLAN_TOO_LARGE and never read; ``max_bytes=None`` reads any size (files of the
    controller's own, such as git's index)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    folder = open_folder(root, path.parent) if root is not None else None
    try:
        fd = os.open(path.name if folder is not None else path, flags, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):  # the last part is a symlink
            raise UnsafePath(f"{path} is a symbolic link; plangate never follows one") from None
        raise
    finally:
        if folder is not None:
            os.close(folder)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePath(f"{path} is not a regular file; plangate never reads one")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            if max_bytes is None:
                return handle.read()
            if max_bytes != BOUNDED:
                return handle.read(max_bytes + 1)
            data = handle.read(READ_LIMIT + 1)  # the size may grow after any fstat
            if len(data) > READ_LIMIT:
                raise PlanTooLarge(
                    f"{path.name} is over {READ_LIMIT} bytes, the most plangate reads of one "
                    "file; it is not read",
                    path=str(path),
                )
            return data
    finally:
        os.close(fd)


#: The most plangate reads of an operator's own file (the secrets file, allowed_signers).
OPERATOR_FILE_LIMIT = 4 * 1024 * 1024


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def special_file(path: Path) -> str | None:
    """What ``path`` is when it exists and is not a regular file (following links, never
    opening it: a FIFO would wait for a writer), else None."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) else kind_of(mode)


def read_operator_file(path: Path, limit: int = OPERATOR_FILE_LIMIT) -> bytes:
    """The bytes of a file the operator names in the config (a link to it is followed: a
    mounted secret is one). Opened without waiting and read only when it is a regular file of
    at most ``limit`` bytes (round 114: a FIFO there hung every command; ``/dev/zero`` was
    read until memory ran out); otherwise OSError whose ``strerror`` says what it is."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{kind_of(mode)}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"over {limit} bytes, more than plangate reads of it")
        return data
    finally:
        os.close(fd)


def path_in_repo(path: str, root: Path) -> str | None:
    """The path inside the repository at ``root`` that the absolute ``path`` names, the one
    rule the CLI and MCP read a typed plan path by (round 98: MCP rebased ``<repo>/plans/p``
    as the plan ``plans/<repo>/plans/p``): the first leading folder of ``path`` that is the
    repository (only the way there may pass a link: a work tree reached as ``/link/repo``),
    the rest of ``path`` exactly as written, no link in it read (round 97: a link inside the
    repository names its own path, never its target's), ``""`` for the repository itself.
    None when no leading folder is the repository: the path is outside it."""
    root = root.resolve()
    parts = path.split("/")
    for end in range(1, len(parts) + 1):
        top = Path("/".join(parts[:end]) or "/")
        try:
            if top == root or top.resolve() == root:
                return "/".join(parts[end:])
        except (OSError, RuntimeError):  # a link loop on the way: not the repository
            continue
    return None


def open_folder(root: Path, folder: Path) -> int:
    """A descriptor of ``folder``, opened from ``root`` one folder at a time without following
    a link (``openat`` with O_NOFOLLOW | O_DIRECTORY). E_UNSAFE_PATH when a part is a symlink
    or not a folder, or ``folder`` is not inside ``root``; FileNotFoundError when a part is
    missing. ``root`` itself is the operator's and may be reached through links."""
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        raise UnsafePath(f"{folder} is not inside {root}") from None
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, flags)
    try:
        for index, part in enumerate(parts):
            if part in ("", ".", ".."):
                raise UnsafePath(f"{folder}: the part {part!r} is not a folder name")
            try:
                inner = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = Path(root, *parts[: index + 1])
                    raise UnsafePath(
                        f"{where} is a symbolic link or not a folder; plangate never writes or "
                        "reads through one (remove it)"
                    ) from None
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _folder(folder: Path, root: Path | None) -> int:
    if root is not None:
        return open_folder(root, folder)
    return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(6)}.tmp"


#: What :func:`_temp_name` makes (a crash between its write and its rename leaves one).
TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp", re.DOTALL)


def _keep_mode(fd: int, folder: int, name: str, executable: bool | None = None) -> None:
    """The new file takes the mode of the regular file it replaces (a new one stays 0600),
    its executable bits set or cleared by ``executable`` (None: kept)."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = 0
    perms = mode & 0o7777 if stat.S_ISREG(mode) else os.fstat(fd).st_mode & 0o7777
    wanted = perms if executable is None else _exec_bits(perms, executable)
    if stat.S_ISREG(mode) or wanted != perms:
        os.fchmod(fd, wanted)


def _exec_bits(perms: int, executable: bool) -> int:
    """``perms`` with the executable bits of a file git checks out as ``100755`` (one for each
    read bit, the owner's always: git reads the owner's) or ``100644`` (none)."""
    if not executable:
        return perms & ~0o111
    return perms | 0o100 | ((perms & 0o444) >> 2)


def _write_in(
    folder: int, name: str, data: bytes, durable: bool, executable: bool | None = None
) -> None:
    """Write ``name`` in the open ``folder`` atomically: a new temp file there, then a rename
    over ``name`` (the rename replaces a link itself, never its target)."""
    tmp = _temp_name(name)
    fd = os.open(tmp, _CREATE, 0o600, dir_fd=folder)
    try:
        try:
            _keep_mode(fd, folder, name, executable)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    if durable:
        os.fsync(folder)
