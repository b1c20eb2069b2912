"""The working tree and its index (local mode): written only where plangate wrote.

After a commit made off-index, the same bytes are written into the working tree and only
those index entries are refreshed, so a human's staged or unstaged work is never staged,
committed or discarded.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from controller.fsutil import read_regular
from controller.git.base import git_failure
from controller.git.objects import _BLOB_MODE, Objects, blob_id
from controller.git.records import ZERO, Person

_EMPTY_TREE = "4b825dc642cb6eb9a060c54bf8d493dccc43e5b0"


class WorkTree(Objects):
    """Writing files and index entries; what the working tree holds."""

    def write_worktree(self, files: Mapping[str, bytes | None]) -> None:
        """Write ``files`` into the working tree (atomically and durably; None deletes)."""
        from controller.fsutil import write_atomic, write_atomic_many

        changed: list[tuple[Path, bytes]] = []
        for path, data in files.items():
            target = self.path / path
            if _through_link(self.path, path):
                continue  # never write through a link someone put in the tree (SPEC §15)
            if data is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_symlink() or not target.exists() or target.read_bytes() != data:
                    changed.append((target, data))  # replaces a link itself, never its target
        # root: the folders are opened without following a link swapped in meanwhile
        if len(changed) == 1:
            write_atomic(*changed[0], root=self.path)
        elif changed:  # a batched commit's files: their fsyncs together
            write_atomic_many(changed, root=self.path)

    def set_index_entries(self, files: Mapping[str, bytes | None]) -> None:
        """Point the index entries of ``files`` at these contents, leaving all others alone."""
        records = []
        for path, data in files.items():  # NUL-terminated: a path may hold a newline
            if data is None:
                records.append(f"0 {ZERO}\t{path}\0")
            else:
                records.append(f"{_BLOB_MODE:o} {self.store_blob(data)}\t{path}\0")
        data = "".join(records).encode("utf-8", "surrogateescape")
        # A human's `git add`/`commit` may hold index.lock for a moment: wait for it (bounded)
        # rather than leave the index disagreeing with the commit just made.
        index = self.git_dir / "index"
        lock_path = index.with_name("index.lock")
        for delay in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0):
            try:
                lock = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                time.sleep(delay)
                continue
            # Under the lock, as git does: git's work on a private copy of the index (a few
            # ms), then the copy written. Reading the index before taking the lock and
            # checking it after lost every attempt to a human polling `git status`, which
            # rewrites the index with fresh stat data each time (the demo, under load): the
            # index then disagreed with the commit just made.
            try:
                written = self._updated_index(_index_bytes(index), data)
                os.write(lock, written)  # no fsync: git's own index writes have none
            except BaseException:
                os.close(lock)
                lock_path.unlink(missing_ok=True)
                raise
            os.close(lock)
            os.replace(lock_path, index)
            return
        raise git_failure(
            ("update-index", "--index-info"),
            f"fatal: Unable to create '{lock_path}': File exists.",
        )

    def _updated_index(self, before: bytes | None, records: bytes) -> bytes:
        """The index ``before`` with ``records`` applied, by git, on a private copy dated 0.

        Writing an index makes git re-read, through the clean filter or ``process`` driver the
        repository's attributes select, every entry as recent as the index itself (its
        "racily clean" check). In a shared checkout the agent picks those programs and can
        keep an entry racy for good (a file dated 2100): the controller's own index update
        ran them as the controller (round 19). An index dated 0 has no racy entry, so git
        reads no file; the next git command in the checkout checks those entries itself."""
        with tempfile.TemporaryDirectory(prefix="plangate-index-") as folder:
            private = Path(folder) / "index"
            if before is not None:  # else no index yet: git starts an empty one
                private.write_bytes(before)
                os.utime(private, ns=(0, 0))
            result = self.run_raw(
                "update-index", "-z", "--index-info", input=records,
                env={"GIT_INDEX_FILE": str(private)},
            )  # fmt: skip
            if result.returncode != 0:
                stderr = result.stderr.decode("utf-8", "replace")
                raise git_failure(("update-index", "--index-info"), stderr)
            return private.read_bytes()

    def user(self, kind: str = "AUTHOR") -> Person:
        """The identity git would use for a new commit (``git var GIT_AUTHOR_IDENT``)."""
        ident = self.run("var", f"GIT_{kind}_IDENT").strip()
        name, _, rest = ident.partition(" <")
        return Person(name, rest.split(">", 1)[0])

    def worktree_changes(self, paths: Sequence[str]) -> tuple[set[str], set[str]]:
        """(modified tracked files, untracked files) under ``paths`` in the working tree.

        Not ``git status``: it reads working-tree files through the clean filters and
        ``process`` drivers a committed ``.gitattributes`` selects. Here git compares only
        trees with the index; the files themselves are hashed raw, in-process (a file git
        would call clean after an eol or filter conversion counts as modified: the safe side).
        """
        # --no-optional-locks: never take index.lock from a human's `git commit`.
        base = ("--no-optional-locks", "-c", "core.quotePath=false")
        entries = self.run(*base, "ls-files", "-s", "-z", "--", *paths).split("\0")
        modified = set(self._staged(base, paths))
        for entry in filter(None, entries):
            meta, _, path = entry.partition("\t")
            mode, sha, stage = meta.split(" ")
            if stage != "0" or self._worktree_id(path, mode) != sha:
                modified.add(path)
        others = self.run(*base, "ls-files", "-z", "--others", "--exclude-standard", "--", *paths)
        return modified, set(filter(None, others.split("\0")))

    def _staged(self, base: Sequence[str], paths: Sequence[str]) -> list[str]:
        """Paths under ``paths`` whose index entry differs from HEAD (tree against index)."""
        born = self.run_raw("rev-parse", "-q", "--verify", "HEAD").returncode == 0
        head = "HEAD" if born else _EMPTY_TREE
        out = self.run(
            *base, "diff-index", "--cached", "--no-renames", "--name-only", "-z", head, "--", *paths
        )
        return list(filter(None, out.split("\0")))

    def _worktree_id(self, path: str, mode: str) -> str | None:
        """The blob id of the working tree's ``path`` as it is on disk (None: not there)."""
        target = self.path / path
        try:
            if mode == "120000":
                return blob_id(os.fsencode(os.readlink(target)))
            if mode == "160000":  # a submodule: its checkout is not read here
                return None
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            return blob_id(handle.read())


def _index_bytes(index: Path) -> bytes | None:
    """The index file's bytes (None: none yet); never through a link put in its place."""
    try:
        return read_regular(index)
    except FileNotFoundError:
        return None


def _through_link(root: Path, path: str) -> bool:
    """Is a folder on the way to ``path`` (inside ``root``) a symlink, or not a folder?"""
    parts = PurePosixPath(path).parts
    here = root
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            return True
    return False
