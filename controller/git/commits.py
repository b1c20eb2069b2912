"""Commits: reading first-parent history, and writing a commit off-index.

Reading streams ``git log -z --raw`` into :class:`~controller.git.records.CommitRecord`
(never the whole output at once). Writing never goes through the shared index or working
tree: :meth:`Commits.commit_files` writes the new blobs, trees and commit as loose objects
in-process (``git commit-tree`` only when the commit must be signed or the identity needs
git's own cleaning) and moves the branch with a compare-and-swap ``git update-ref``.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence

from controller.errors import GitError
from controller.git.base import git_failure
from controller.git.objects import Objects
from controller.git.records import (
    _RECORD,
    CommitRecord,
    Person,
    _log_format,
    _new_tag,
    _parse_chunk,
    _plain_ident,
    commit_object,
    parse_log,
)
from controller.git.refs import Refs
from controller.git.signing import Signing


class Commits(Objects, Refs, Signing):
    """First-parent history and the controller's commits."""

    def first_parent_log(
        self, since: str | None, until: str, paths: Sequence[str], *, newest_first: bool = False
    ) -> Iterator[CommitRecord]:
        """Commits on ``until``'s first-parent line after ``since``, oldest first (or newest
        first: then each is yielded as soon as git has written it, while git walks on)."""
        spec = f"{since}..{until}" if since else until
        order = [] if newest_first else ["--reverse"]  # --reverse makes git hold everything
        args = ["-c", "core.quotePath=false", "log", "--first-parent", *order, "-z", "--raw"]
        tag = _new_tag()
        args += ["--no-renames", "--no-abbrev", "--diff-merges=first-parent", _log_format(tag)]
        args += ["--no-show-signature"]  # log.showSignature would mix verdicts into the records
        yield from self._stream_log([*args, spec, "--", *paths], tag)

    def first_parent_count(self, since: str | None, until: str) -> int:
        """How many first-parent commits come after ``since`` up to ``until``."""
        spec = f"{since}..{until}" if since else until
        return int(self.run("rev-list", "--first-parent", "--count", spec).strip() or 0)

    def first_parent_at(self, since: str | None, until: str, skip: int) -> str | None:
        """The first-parent commit ``skip`` steps below ``until`` (not below ``since``)."""
        spec = f"{since}..{until}" if since else until
        found = self.run("rev-list", "--first-parent", f"--skip={skip}", "--max-count=1", spec)
        return found.strip() or None

    def _stream_log(self, args: Sequence[str], tag: str) -> Iterator[CommitRecord]:
        """Run ``git log`` and parse its records as they arrive (never the whole output)."""
        with tempfile.TemporaryFile() as errors:  # a file: a chatty stderr cannot block git
            try:
                proc = subprocess.Popen(
                    ["git", *args],
                    cwd=self.path,
                    env=self.guard.env(),
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    bufsize=0,  # raw reads: each returns what git has written so far
                )
            except OSError as exc:
                raise GitError(f"cannot run git: {exc.strerror}", remedy="install git") from None
            assert proc.stdout is not None
            pending = b""
            try:
                while chunk := proc.stdout.read(1 << 20):
                    parts = (pending + chunk).split((_RECORD + tag).encode())
                    pending = parts.pop()  # the last record may not be complete yet
                    for part in parts:
                        record = _parse_chunk(part.decode("utf-8", "surrogateescape"), tag)
                        if record is not None:
                            yield record
            finally:  # also when the caller stops early: git then ends on a broken pipe
                proc.stdout.close()
                code = proc.wait()
            if code != 0:
                errors.seek(0)
                raise git_failure(args[2:4], errors.read().decode("utf-8", "replace"))
        record = _parse_chunk(pending.decode("utf-8", "surrogateescape"), tag)
        if record is not None:
            yield record

    def range_log(self, exclude: str, include: str, paths: Sequence[str]) -> list[CommitRecord]:
        """Every commit reachable from ``include`` but not ``exclude`` (a merge's branch)."""
        return self._changes_log(f"{exclude}..{include}", paths)

    def path_log(self, tip: str, paths: Sequence[str]) -> list[CommitRecord]:
        """Every commit in ``tip``'s whole history that changed ``paths`` (merges compared
        with their first parent)."""
        return self._changes_log(tip, paths)

    def merged_in(self, since: str | None, until: str, paths: Sequence[str]) -> list[CommitRecord]:
        """Every non-merge commit that changed ``paths`` on a branch merged into ``until``'s
        first-parent line after ``since``: reachable from a merge's other parents and not
        from its first parent. ``--full-history``: a side branch whose change the first
        parent also made (the merge is TREESAME to it) is walked too."""
        spec = f"{since}..{until}" if since else until
        merges = self.run("rev-list", "--first-parent", "--merges", "--parents", spec).split("\n")
        revs: list[str] = []
        for line in merges:
            shas = line.split()
            if len(shas) >= 3:  # merge, first parent, other parents
                revs += [f"^{shas[1]}", *shas[2:]]
        if not revs:
            return []
        tag = _new_tag()
        out = self.run(
            "-c",
            "core.quotePath=false",
            "log",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            "--full-history",
            "--no-merges",
            "--no-show-signature",
            _log_format(tag),
            "--stdin",
            "--",
            *paths,
            input="\n".join(revs).encode() + b"\n",
        )
        return list(parse_log(out, tag))

    def _changes_log(self, revisions: str, paths: Sequence[str]) -> list[CommitRecord]:
        """``git log`` of ``revisions`` limited to ``paths``, with each commit's raw changes."""
        tag = _new_tag()
        out = self.run(
            "-c",
            "core.quotePath=false",
            "log",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            "--diff-merges=first-parent",
            "--no-show-signature",
            _log_format(tag),
            revisions,
            "--",
            *paths,
        )
        return list(parse_log(out, tag))

    def commit(self, sha: str) -> CommitRecord:
        tag = _new_tag()
        out = self.run("log", "-1", "-z", "--no-show-signature", _log_format(tag), sha)
        return next(parse_log(out, tag))

    def commit_files(
        self,
        *,
        branch: str,
        parent: str,
        files: Mapping[str, bytes | None],
        message: str,
        author: Person,
        committer: Person | None = None,
        sign: bool = False,
        before_ref: Callable[[str], None] | None = None,
    ) -> str | None:
        """Commit ``files`` on top of ``parent`` and move ``branch`` there.

        Returns the new commit, or None when ``branch`` moved meanwhile (nothing changed).
        ``before_ref`` is called with the new commit before the branch moves (the controller
        records what it made before anyone can see it).
        """
        tree = self.tree_with(self._tree_of(parent), files)
        committer = committer or author
        sign = sign or self.signs_commits()
        if sign or not _plain_ident(author) or not _plain_ident(committer) or "\0" in message:
            # git signs, cleans the identity, or refuses the message (a NUL byte): never write
            # in-process a commit git would not write
            sha = self._commit_tree(tree, parent, message, author, committer, sign)
        else:
            sha = self._store(b"commit", commit_object(tree, [parent], message, author, committer))
        if before_ref is not None:
            before_ref(sha)
        return sha if self.update_ref(f"refs/heads/{branch}", sha, parent) else None
