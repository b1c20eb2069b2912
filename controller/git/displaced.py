"""Bytes a controller commit displaced from the shared checkout (local mode), kept.

The controller commits only bytes it produced (its ``EXECUTION_LOG.md`` and ``execution:``
block, round 95: never a forgery left in the working tree). Before its write of a run's
record goes over a working-tree file or an index entry that holds something else than the
controller itself last left there (a person's or an agent's edit of the log, a staged edit,
a file replaced by a link or a FIFO, ``chmod 000``), those bytes are saved here, so that
nothing anyone wrote is lost (round 122, ``log-edit-overwritten``; docs/execution.md)::

    .git/plangate-displaced/<plan folder>/<UTC stamp>-<commit>/<file name>[.staged]

``<plan folder>`` is the plan's path as one folder name (:func:`folder_name`: ``/`` and
every byte outside ``[A-Za-z0-9._-]`` written ``%XX``), so no plan name can reach outside
this folder or make a name the file system refuses. The folders are made and opened one by
one without following a link; a symlink, FIFO, device or unreadable file is saved as a
note of what it was (``<file name>.note``), never its target or contents. Status rows name
every file saved for a plan (``displaced``) until a person removes them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import time
from pathlib import Path

from controller.errors import PlangateError

#: The folder, in the repository's git directory, that holds the displaced bytes.
FOLDER = "plangate-displaced"
#: The longest folder name :func:`folder_name` makes (file systems allow 255 bytes).
_MAX_NAME = 200
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def folder_name(plan_folder: str) -> str:
    """``plan_folder`` (``plans/x``) as one safe folder name (``plans%2Fx``): each byte of
    its UTF-8 outside ``[A-Za-z0-9._-]`` as ``%XX``, a name of dots alone escaped too; a long
    one cut and ended by a digest of the whole (one plan, one folder; never two)."""
    raw = plan_folder.encode("utf-8", "surrogateescape")
    name = "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in raw)
    if not name.strip("."):
        name = name.replace(".", "%2E") or "%"
    if len(name) > _MAX_NAME:
        name = name[: _MAX_NAME - 33] + "~" + hashlib.sha256(raw).hexdigest()[:32]
    return name


def stamp_name(commit: str, when: float | None = None) -> str:
    """The folder of one commit's displaced bytes: its UTC time and short id."""
    moment = time.gmtime(time.time() if when is None else when)
    return f"{time.strftime('%Y%m%dT%H%M%SZ', moment)}-{commit[:12]}"


def save(git_dir: Path, plan_folder: str, stamp: str, name: str, data: bytes) -> Path:
    """Write ``data`` as ``<git dir>/plangate-displaced/<plan folder>/<stamp>/<name>``
    (durably; the folders made and opened without following a link) and return its path.
    OSError when it cannot be written (a link or file in the way: ``ELOOP``)."""
    from controller.fsutil import write_atomic

    folder = git_dir / FOLDER / folder_name(plan_folder) / stamp
    _make_folders(git_dir, (FOLDER, folder_name(plan_folder), stamp))
    target = folder / name
    try:
        write_atomic(target, data, root=git_dir)
    except PlangateError as exc:  # a link swapped in meanwhile: never written through
        raise OSError(errno.ELOOP, str(exc), str(target)) from None
    return target


def _make_folders(root: Path, parts: tuple[str, ...]) -> None:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=fd)
            inner = os.open(part, flags, dir_fd=fd)  # ELOOP/ENOTDIR: a link or file there
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def listed(git_dir: Path, plan_folders: list[str], top: Path) -> dict[str, list[str]]:
    """The displaced files saved for each of ``plan_folders`` (only those with some), as
    paths relative to ``top`` (the working tree) where the git directory is inside it,
    oldest first. Nothing is read but the folders' names (no link followed)."""
    base = git_dir / FOLDER
    try:
        names = set(os.listdir(base)) if not base.is_symlink() else set()
    except OSError:
        return {}
    found: dict[str, list[str]] = {}
    for plan in plan_folders:
        name = folder_name(plan)
        if name not in names:
            continue
        files: list[str] = []
        folder = base / name
        try:
            if folder.is_symlink():
                continue
            for stamp in sorted(os.listdir(folder)):
                if (folder / stamp).is_symlink() or not (folder / stamp).is_dir():
                    continue
                for saved in sorted(os.listdir(folder / stamp)):
                    files.append(shown(folder / stamp / saved, top))
        except OSError:
            continue
        if files:
            found[plan] = files
    return found


def shown(path: Path, top: Path) -> str:
    try:
        return str(path.relative_to(top))
    except ValueError:
        return str(path)
