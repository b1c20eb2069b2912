"""The working tree and its index (local mode): written only where plangate wrote.

After a commit made off-index, the same bytes are written into the working tree and only
those index entries are refreshed, so a human's staged or unstaged work is never staged,
committed or discarded.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from controller.git.base import git_failure
from controller.git.objects import _BLOB_MODE, Objects
from controller.git.records import ZERO, Person


class WorkTree(Objects):
    """Writing files and index entries; what the working tree holds."""

    def write_worktree(self, files: Mapping[str, bytes | None]) -> None:
        """Write ``files`` into the working tree (atomically; None deletes)."""
        from controller.fsutil import write_atomic

        for path, data in files.items():
            target = self.path / path
            if data is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists() or target.read_bytes() != data:
                    write_atomic(target, data)

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
        for delay in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0):
            result = self.run_raw("update-index", "-z", "--index-info", input=data)
            if result.returncode == 0:
                return
            stderr = result.stderr.decode("utf-8", "replace")
            if "index.lock" not in stderr:
                break
            time.sleep(delay)
        raise git_failure(("update-index", "--index-info"), stderr)

    def user(self, kind: str = "AUTHOR") -> Person:
        """The identity git would use for a new commit (``git var GIT_AUTHOR_IDENT``)."""
        ident = self.run("var", f"GIT_{kind}_IDENT").strip()
        name, _, rest = ident.partition(" <")
        return Person(name, rest.split(">", 1)[0])

    def worktree_changes(self, paths: Sequence[str]) -> tuple[set[str], set[str]]:
        """(modified tracked files, untracked files) under ``paths`` in the working tree."""
        # --no-optional-locks: a status must never take index.lock from a human's `git commit`.
        out = self.run(
            "--no-optional-locks",
            "-c",
            "core.quotePath=false",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            *paths,
        )
        modified: set[str] = set()
        untracked: set[str] = set()
        for entry in out.split("\0"):
            if len(entry) > 3:
                (untracked if entry.startswith("??") else modified).add(entry[3:])
        return modified, untracked
