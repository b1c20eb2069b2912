"""Commits: reading first-parent history, and writing a commit off-index.

Reading streams ``git log -z --raw`` into :class:`~controller.git.records.CommitRecord`
(never the whole output at once). Writing never goes through the shared index or working
tree: :meth:`Commits.commit_files` writes the new blobs, trees and commit as loose objects
in-process (``git commit-tree`` only when the commit must be signed or the identity needs
git's own cleaning) and moves the branch with a compare-and-swap ``git update-ref``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from controller.errors import GitError
from controller.git.base import RepoBase, git_failure
from controller.git.deadline import DEADLINES
from controller.git.guard import argv, cannot_run
from controller.git.objects import BATCH_LOOKUPS, Objects
from controller.git.records import (
    _RECORD,
    ZERO,
    CommitRecord,
    FileChange,
    Person,
    _dated_by_env,
    _log_format,
    _new_tag,
    _parse_chunk,
    _plain_ident,
    commit_object,
    parse_log,
)
from controller.git.refs import Refs
from controller.git.signing import Signing
from controller.git.store import NotTaken, check_object, commit_links, object_id
from controller.git.treediff import S_IFDIR, Entry, TreeError, diff_level, is_dir, read_entry
from controller.plan.names import same_path


class Commits(Objects, Refs, Signing):
    """First-parent history and the controller's commits."""

    #: Read each commit's signature key into its record (CommitRecord.signing_key): set where
    #: the policy names allowed_signers (see records._log_format for the cost).
    read_signatures = False
    #: The last commit :meth:`commit_files` wrote and its date (None: git's, from the
    #: environment), so the controller indexes its own commit at the time it carries.
    written: tuple[str, int | None] = ("", None)

    def first_parent_log(
        self,
        since: str | None,
        until: str,
        paths: Sequence[str],
        *,
        newest_first: bool = False,
        mentioning: Sequence[str] = (),
    ) -> Iterator[CommitRecord]:
        """Commits on ``until``'s first-parent line after ``since``, oldest first (or newest
        first: then each is yielded as soon as git has written it, while git walks on);
        with ``mentioning``, only those whose message holds one of these texts."""
        spec = f"{since}..{until}" if since else until
        order = [] if newest_first else ["--reverse"]  # --reverse makes git hold everything
        args = ["-c", "core.quotePath=false", "log", "--first-parent", *order, "-z", "--raw"]
        if mentioning:
            args += ["--fixed-strings", *(f"--grep={text}" for text in mentioning)]
        tag = _new_tag()
        args += [
            "--no-renames",
            "--no-abbrev",
            "--diff-merges=first-parent",
            _log_format(tag, self.read_signatures),
        ]
        args += ["--no-show-signature"]  # log.showSignature would mix verdicts into the records
        yield from self._stream_log([*args, spec, "--", *paths], tag)

    def log_mentioning(
        self, tips: Sequence[str], not_from: str, mentioning: Sequence[str]
    ) -> Iterator[CommitRecord]:
        """Commits reachable from ``tips`` (through every parent) and not from ``not_from``,
        whose message holds one of ``mentioning``, newest first: one ``git log --grep``."""
        if not tips:
            return
        tag = _new_tag()
        args = ["-c", "core.quotePath=false", "log", "-z", "--raw", "--fixed-strings"]
        args += [f"--grep={text}" for text in mentioning]
        args += ["--no-renames", "--no-abbrev", "--diff-merges=first-parent"]
        args += [_log_format(tag, self.read_signatures), "--no-show-signature"]
        yield from self._stream_log([*args, *tips, "--not", not_from, "--"], tag)

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
                    argv(args),
                    cwd=self.path,
                    env=self.guard.env(),
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    bufsize=0,  # raw reads: each returns what git has written so far
                )
            except OSError as exc:
                raise cannot_run(exc, self.path) from None
            assert proc.stdout is not None
            pending = b""
            try:
                while True:
                    with DEADLINES.bound(self.timeout, proc.kill, f"git {args[0]}"):
                        chunk = proc.stdout.read(1 << 20)  # what git wrote so far
                    if not chunk:
                        break
                    parts = (pending + chunk).split((_RECORD + tag).encode())
                    pending = parts.pop()  # the last record may not be complete yet
                    for part in parts:
                        record = _parse_chunk(part.decode("utf-8", "surrogateescape"), tag)
                        if record is not None:
                            yield self._certified(record)
            finally:  # also when the caller stops early: git then ends on a broken pipe
                proc.stdout.close()
                code = proc.wait()
            if code != 0:
                errors.seek(0)
                raise git_failure(args[2:4], errors.read().decode("utf-8", "replace"))
        record = _parse_chunk(pending.decode("utf-8", "surrogateescape"), tag)
        if record is not None:
            yield self._certified(record)

    def _certified(self, record: CommitRecord) -> CommitRecord:
        """``record``, its key named by its certificate when a certified key signed it (git's
        ``%GK`` names the certified key alone, which no line lists: round 30). Only such
        commits cost a read of the commit object; the certificate is parsed once."""
        if record.certified and record.signing_key:
            record.signing_key = self.signing_key_of(record.sha, record.signing_key)
        return record

    def range_log(self, exclude: str, include: str, paths: Sequence[str]) -> list[CommitRecord]:
        """Every commit reachable from ``include`` but not ``exclude`` (a merge's branch)."""
        return self._changes_log(f"{exclude}..{include}", paths)

    def lineage_log(self, exclude: str, include: str, paths: Sequence[str]) -> list[CommitRecord]:
        """:meth:`range_log` read for what came from what: every parent of a merge followed
        (``--full-history``: a merge that wrote content of its own differs from each parent,
        so it is listed), parents before their children (``--topo-order --reverse``)."""
        return self._changes_log(
            f"{exclude}..{include}", paths, "--full-history", "--topo-order", "--reverse"
        )

    def path_log(self, tip: str, paths: Sequence[str]) -> list[CommitRecord]:
        """Every commit in ``tip``'s whole history that changed ``paths`` (merges compared
        with their first parent)."""
        return self._changes_log(tip, paths)

    def merged_in(self, since: str | None, until: str, paths: Sequence[str]) -> list[CommitRecord]:
        """Every non-merge commit that changed ``paths`` on a branch merged into ``until``'s
        first-parent line after ``since``: reachable from ``until`` and not from ``since``,
        and not on the first-parent line itself. ``--full-history``: a side branch whose
        change the first parent also made (the merge is TREESAME to it) is never simplified
        away; and no later merge hides an earlier one's branch (one walk ``^first-parent
        side...`` for all merges at once subtracted every earlier merge's branch, which a
        later first parent reaches: round 5)."""
        line, merges = self._first_parent_line(since, until)
        if not merges:
            return []
        spec = f"{since}..{until}" if since else until
        if line is not None:  # a pass: a few commits, one path-limited walk of both sides
            found = self._changes_log(spec, paths, "--full-history", "--no-merges")
            return [record for record in found if record.sha not in line]
        line = set(self.run("rev-list", "--first-parent", spec).split())
        side = [s for s in self.run("rev-list", "--no-merges", spec).split() if s not in line]
        if not side:
            return []
        found = self._changes_log(
            "--stdin", paths, "--no-walk=unsorted", input="\n".join(side) + "\n"
        )
        return [record for record in found if record.changes]

    def merges_merged_in(
        self, since: str | None, until: str, paths: Sequence[str]
    ) -> list[CommitRecord]:
        """Every merge on a branch merged into ``until``'s first-parent line after ``since``
        (not on the line itself) that changed ``paths`` against its first parent, with those
        changes: what such a merge did not bring is its own writing, as on the line (round
        68). Read as :meth:`merged_in` reads the merged commits: no history simplification
        decides which merges are seen."""
        line, merges = self._first_parent_line(since, until)
        if not merges:
            return []
        spec = f"{since}..{until}" if since else until
        if line is None:
            line = set(self.run("rev-list", "--first-parent", spec).split())
        side = [s for s in self.run("rev-list", "--merges", spec).split() if s not in line]
        if not side:
            return []
        found = self._changes_log(
            "--stdin", paths, "--no-walk=unsorted", input="\n".join(side) + "\n"
        )
        return [record for record in found if record.changes]

    def merges_after(self, since: str | None, until: str) -> bool:
        """Whether ``until``'s first-parent line after ``since`` holds a merge (every merge
        after ``since`` lies on the branch one of them brought); a pass reads it from the
        object store."""
        return bool(self._first_parent_line(since, until)[1])

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of two commits (None: unrelated histories)."""
        result = self.run_raw("merge-base", one, other)
        out = result.stdout.decode().strip().split()
        return out[0] if result.returncode == 0 and out else None

    def merge_bases(self, one: str, other: str) -> list[str]:
        """Every best common ancestor of two commits (``merge-base --all``: a criss-cross has
        two or more, and git's merge joins them into a virtual base); [] when unrelated."""
        result = self.run_raw("merge-base", "--all", one, other)
        return result.stdout.decode().split() if result.returncode == 0 else []

    def merge_tree(self, parents: Sequence[str]) -> tuple[str, bool] | None:
        """(the tree git's merge machinery (ort, as ``git merge`` runs it by default) makes of
        merging ``parents[1:]`` into ``parents[0]``, whether it merged cleanly); None when git
        cannot merge them. An octopus is merged one branch at a time, as git's octopus does:
        each step's result is an unreferenced commit whose parents are the commits merged so
        far (fixed dates: the same merge names the same objects)."""
        ours, clean = parents[0], True
        when = "1000000000 +0000"
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        env |= {"GIT_AUTHOR_NAME": "plangate", "GIT_COMMITTER_NAME": "plangate"}
        env |= {"GIT_AUTHOR_EMAIL": "plangate@invalid", "GIT_COMMITTER_EMAIL": "plangate@invalid"}
        for step, theirs in enumerate(parents[1:], start=2):
            result = self.run_raw(
                "merge-tree", "--write-tree", "--no-messages", "--allow-unrelated-histories",
                ours, theirs, pins=_MERGE_PINS,
            )  # fmt: skip
            out = result.stdout.decode().split()
            if result.returncode not in (0, 1) or not out:
                return None
            clean = clean and result.returncode == 0
            if step == len(parents):
                return out[0], clean
            heads = [arg for sha in parents[:step] for arg in ("-p", sha)]
            made = self.run_raw(
                "commit-tree", "--no-gpg-sign", out[0], *heads,
                input=b"plangate: merge step\n", env=env,
            )  # fmt: skip
            if made.returncode != 0:
                return None
            ours = made.stdout.decode().strip()
        return None

    def file_merges(self, base: bytes, ours: bytes, theirs: bytes) -> list[bytes]:
        """What git's merge of one file (``base`` to ``ours`` and to ``theirs``) makes with no
        hand in it: its conflict settled for our side (``git merge -X ours``), for theirs
        (``-X theirs``) or by both (a ``merge=union`` attribute), as ``git merge-file`` gives
        them (git 2.39's ``merge-tree`` takes no ``-X``; a binary file gives none). Every
        line of each is one side's: unchanged lines are all three's."""
        made: list[bytes] = []
        with tempfile.TemporaryDirectory(prefix="plangate-merge-") as tmp:
            names = [Path(tmp, name) for name in ("ours", "base", "theirs")]
            for name, data in zip(names, (ours, base, theirs), strict=True):
                name.write_bytes(data)
            for favor in HANDS_OFF:
                result = self.run_raw("merge-file", "-p", "-q", favor, *map(str, names))
                if result.returncode == 0:
                    made.append(result.stdout)
        return made

    def changed_files(self, since: str | None, until: str) -> dict[str, str]:
        """Each file ``until`` changed or added since ``since`` (None: every file), with its
        blob there; no rename detection (a moved file is a new path: no rename limit and no
        pathspec decides what is seen). Deleted files are left out."""
        out = self.run_raw(
            "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--diff-filter=AMT", since or EMPTY_TREE, until,
        )  # fmt: skip
        if out.returncode != 0:
            why = out.stderr.decode("utf-8", "replace")
            raise git_failure(("diff-tree", since or EMPTY_TREE, until), why)
        fields = out.stdout.decode("utf-8", "surrogateescape").split("\0")
        found: dict[str, str] = {}
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.split()
            if len(parts) >= 4:
                found[path] = parts[3]
        return found

    def _first_parent_line(
        self, since: str | None, until: str
    ) -> tuple[set[str] | None, list[list[str]]]:
        """(the first-parent commits after ``since`` when read in-process, else None; the
        merges among them, each as [merge, first parent, other parents...]). A pass usually
        scans a commit or two: those are read from the object store (no git process on the
        approval's path); a longer range asks ``git rev-list``."""
        if since is not None:
            line: set[str] = set()
            found: list[list[str]] = []
            sha = until
            for _ in range(16):
                if sha == since:
                    return line, found
                line.add(sha)
                parents = [
                    raw[7:].decode()
                    for raw in self._object(sha).split(b"\n\n", 1)[0].split(b"\n")
                    if raw.startswith(b"parent ")
                ]
                if len(parents) >= 2:
                    found.append([sha, *parents])
                if not parents:
                    break
                sha = parents[0]
        spec = f"{since}..{until}" if since else until
        lines = self.run("rev-list", "--first-parent", "--merges", "--parents", spec).split("\n")
        return None, [shas for shas in (line.split() for line in lines) if len(shas) >= 3]

    def _changes_log(
        self, revisions: str, paths: Sequence[str], *options: str, input: str | None = None
    ) -> list[CommitRecord]:
        """``git log`` of ``revisions`` limited to ``paths``, with each commit's raw changes
        (merges compared with their first parent unless ``options`` say otherwise)."""
        tag = _new_tag()
        diff_merges = [] if "--no-merges" in options else ["--diff-merges=first-parent"]
        out = self.run(
            "-c",
            "core.quotePath=false",
            "log",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            *diff_merges,
            *options,
            "--no-show-signature",
            _log_format(tag, self.read_signatures),
            revisions,
            "--",
            *paths,
            input=None if input is None else input.encode(),
        )
        return [self._certified(record) for record in parse_log(out, tag)]

    def commit(self, sha: str) -> CommitRecord:
        tag = _new_tag()
        out = self.run(
            "log", "-1", "-z", "--no-show-signature", _log_format(tag, self.read_signatures), sha
        )
        return self._certified(next(parse_log(out, tag)))

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
        seal: Callable[[str, str], str] | None = None,
        old: str | None = None,
    ) -> str | None:
        """Commit ``files`` on top of ``parent`` and move ``branch`` there.

        Returns the new commit, or None when ``branch`` moved meanwhile (nothing changed).
        ``old``: what ``branch`` must point at for the move (default ``parent``; the zero id
        for a branch made by this very commit, so a refused commit leaves no branch behind).
        ``before_ref`` is called with the new commit before the branch moves (the controller
        records what it made before anyone can see it). ``seal`` (tree, message) gives the
        message to write once the tree is known (the controller's seal binds both).
        """
        with self.released_packs():  # kept from any repack until the branch names them
            with self.packing():  # a burst's hundreds of objects: one pack per store
                tree = self.tree_with(self._tree_of(parent), files)
            if seal is not None:
                message = seal(tree, message)
            committer = committer or author
            asked, sign = sign, sign or self.signs_commits()
            now = None if _dated_by_env() else int(time.time())
            if sign or not _plain_ident(author) or not _plain_ident(committer) or "\0" in message:
                # git signs, cleans the identity, or refuses the message (a NUL byte): never write
                # in-process a commit git would not write
                sha = self._commit_tree(
                    tree, parent, message, author, committer, sign, now, asked=asked
                )
                self.publish(b"commit", sha)
            else:
                sha = self._store(
                    b"commit", commit_object(tree, [parent], message, author, committer, now)
                )
            self.written = (sha, now)
            self.verify_written()  # before anyone's branch names what the shared store holds
            if before_ref is not None:
                before_ref(sha)
            if not self.update_ref(f"refs/heads/{branch}", sha, parent if old is None else old):
                return None
            if self.store is not None and parent in self._present:  # a whole parent: whole
                self.made_whole(sha, ref=f"refs/heads/{branch}", parent=parent)
            return sha

    def commit_time(self, sha: str) -> int:
        """When ``sha`` was committed: known without asking git for the commit
        :meth:`commit_files` just wrote."""
        written, at = self.written
        if written == sha and at is not None:
            return at
        return self.commit(sha).commit_time

    # --- a cold scan's history from raw trees (see controller.git.treediff) -------------

    def first_parent_changes(
        self,
        since: str | None,
        until: str,
        folder: str,
        on_changes: Callable[[list[FileChange]], None] | None = None,
        on_records: Callable[[list[CommitRecord]], None] | None = None,
        *,
        keep: bool = True,
    ) -> list[CommitRecord] | None:
        """What :meth:`first_parent_log` ``(since, until, history_paths(folder))`` yields
        (:func:`controller.git.planstate.history_paths`), oldest first, found from the raw
        trees: each version of the folder's tree is read once and only the bytes that differ
        from the version before are decoded; the entries beside the folders above it whose
        own name holds a backslash (round 79: a root file ``plans\\rt\\PLAN.yml``) from the
        listings the walk to the folder reads anyway. ``on_changes`` hears each
        commit's changes as they are found; ``on_records`` hears the records, complete and in
        order, a run at a time as they are read while the walk goes on (the rest at its end).
        None when the folder is no plain path or a tree is one git could read differently
        (the caller then asks ``git log``; ``on_records`` may have heard some records).
        ``keep`` False: the records are ``on_records``'s alone, the list returned is empty
        (a cold scan drops each once applied: perf83mem)."""
        if not _plain_folder(folder):
            return None
        chain = self._first_parent_chain(since, until)
        if not chain:
            return []
        records: list[CommitRecord] = []
        trees = [self._parent_tree(chain[0][2]), *(t for _, t, _ in chain)]
        rests: dict[str, bytes] = {}  # root tree -> what it holds outside the folder
        splits: dict[str, _Splits] = {}  # root tree -> its backslash names above the folder

        def hand_on(found: list[CommitRecord]) -> None:
            if keep:
                records.extend(found)
            if on_records is not None and found:
                on_records(found)

        def quiet(at: int) -> bool:
            before, after = trees[at], trees[at + 1]
            return before is not None and after is not None and rests[before] == rests[after]

        with _RecordReader(self) as reader:  # the records are read while the walk goes on
            try:
                self._changes_between(
                    trees,
                    folder,
                    on_changes,
                    lambda at, changes: reader.add(chain[at][0], changes, quiet(at)),
                    lambda: hand_on(reader.ready()),
                    rests,
                    splits,
                )
            except TreeError:
                return None
            hand_on(reader.rest())
        return records

    def folder_spellings(
        self, since: str | None, until: str, folder: str, *, merged: bool = False
    ) -> list[str]:
        """The other spellings of ``folder`` (the plans folder) the root trees of ``since..
        until``'s first-parent line (and the tree before it) hold at any level of its path,
        each one folder with it on some checkout (:func:`_spells`: ``PLANS``, ``plans.``,
        ``plans ``; round 84), as the paths ``git log`` is asked for beside it
        (:func:`controller.git.planstate.history_paths`): what the tree walk reads
        (:func:`_level`), found from the same trees. A name holding a backslash is not among
        them (its pathspec is a glob). None read where a tree cannot be. ``merged``: the root
        trees of EVERY commit of ``since..until`` (the merged branches' too), the paths the
        merged branches' walk asks (``Lifecycle.merged_authors``): every parent of a merge
        reads the plans folder's spellings as the first-parent line does (round 85: Bob's
        ``PLANS/pm/NOTES.md`` on a branch merged ``--no-ff`` made no writer)."""
        if folder in ("", "."):
            return []
        if merged:
            spec = f"{since}..{until}" if since else until
            current = set(self.run("log", "--no-show-signature", "--format=%T", spec).split())
        else:
            chain = self._first_parent_chain(since, until)
            if not chain:
                return []
            first = self._parent_tree(chain[0][2])
            current = {t for _, t, _ in chain} | ({first} if first else set())
        found: set[str] = set()
        above = ""
        for name in folder.encode("utf-8", "surrogateescape").split(b"/"):
            try:
                raws = self._raw_trees(current)
            except TreeError:
                break
            current = set()
            for raw in raws.values():
                pos = 0
                while pos < len(raw):
                    entry_name, entry, pos = read_entry(raw, pos)
                    if entry_name == name:
                        if is_dir(entry):
                            current.add(entry.sha.hex())
                    elif b"\\" not in entry_name and _spells(entry_name, name):
                        found.add(above + entry_name.decode("utf-8", "surrogateescape"))
            above += name.decode("utf-8", "surrogateescape") + "/"
        return sorted(found)

    def _first_parent_chain(self, since: str | None, until: str) -> list[tuple[str, str, str]]:
        """(commit, tree, first parent or "") of ``since..until``'s first parents, oldest first.
        A pass's few new commits are read in-process (:meth:`_walked_chain`), else ``git log``."""
        walked = self._walked_chain(since, until) if since else None
        if walked is not None:
            return walked
        spec = f"{since}..{until}" if since else until
        out = self.run("log", "--first-parent", "--no-show-signature", "--format=%H %T %P", spec)
        chain = []
        for line in reversed(out.splitlines()):
            sha, tree, *parents = line.split()
            chain.append((sha, tree, parents[0] if parents else ""))
        return chain

    def _walked_chain(self, since: str, until: str) -> list[tuple[str, str, str]] | None:
        """``since..until``'s first parents (see :meth:`_first_parent_chain`) read from the
        commit objects, following first parents from ``until`` to ``since``: what ``git log
        --first-parent since..until`` lists when ``since`` is on that line (a commit after it
        on the line is no ancestor of it). None, and git is asked, past
        :data:`WALKED_COMMITS` commits, when ``since`` is not met (a rewritten branch), on a
        shallow repository (git's parents there are not the object's) or an unreadable one.
        The guard's environment keeps git from replace refs and grafts as this reading is."""
        if not (_SHA1.fullmatch(since) and _SHA1.fullmatch(until)):
            return None
        if (self.common_dir / "shallow").exists() or (self.git_dir / "shallow").exists():
            return None
        chain: list[tuple[str, str, str]] = []
        sha = until
        try:
            while sha != since:
                if len(chain) >= WALKED_COMMITS:
                    return None
                kind, raw = self._typed_commit(sha)
                if kind != b"commit":
                    return None
                tree, parents = commit_links(raw)
                chain.append((sha, tree, parents[0] if parents else ""))
                if not parents:
                    return None  # ``since`` is not on the line
                sha = parents[0]
        except (GitError, NotTaken):
            return None
        return chain[::-1]

    def may_mention(self, since: str | None, until: str, text: str) -> bool:
        """Could ``git log --first-parent --fixed-strings --grep=<text> since..until`` list a
        commit? False only when the few new commits were read (:meth:`_walked_chain`) and no
        message holds the text's bytes, none in an ``encoding`` git would convert from (the
        pass's policy records: no process for a pass without one, issue 17)."""
        chain = self._walked_chain(since, until) if since else None
        if chain is None:
            return True
        needle = text.encode()
        for sha, _, _ in chain:
            try:
                raw = self._typed_commit(sha)[1]
            except GitError:
                return True
            header, _, message = raw.partition(b"\n\n")
            if needle in message or header.startswith(b"encoding ") or b"\nencoding " in header:
                return True
        return False

    def _typed_commit(self, sha: str) -> tuple[bytes, bytes]:
        """(type, content) of ``sha``; a kept object is taken for a commit only when it
        hashes to ``sha`` as one (objects of every kind are kept: :meth:`Objects._object`)."""
        kept = self._kept.get(sha)
        if kept is not None and object_id(b"commit", kept) == sha:
            return b"commit", kept
        return self._typed_object(sha)

    def _tree_named(self, commit: str) -> str | None:
        try:
            kind, raw = self._typed_commit(commit)
            return commit_links(raw)[0] if kind == b"commit" else None
        except (GitError, NotTaken):
            return None

    def _parent_tree(self, parent: str) -> str | None:
        """The root tree of the commit ``parent``: its object's ``tree`` line, as ``git
        rev-parse parent^{tree}`` answers (replace refs off: the guard)."""
        if not parent:
            return None
        return self._tree_named(parent) or self.run("rev-parse", f"{parent}^{{tree}}").strip()

    def _folder_entries(
        self,
        trees: Sequence[str | None],
        folder: str,
        rests: dict[str, bytes] | None = None,
        splits: dict[str, _Splits] | None = None,
    ) -> list[Entry | None]:
        """The folder's entry in each root tree (None where absent); ``rests`` hears, per
        root tree, a digest of everything it holds outside the folder (each level's tree
        without the entry on the folder's path), read from the same raw trees; ``splits``,
        per root tree, the entries of those levels whose own name holds a backslash."""
        current: list[Entry | None] = [
            Entry(S_IFDIR, bytes.fromhex(t)) if t else None for t in trees
        ]
        outside = [hashlib.sha1() for _ in trees]
        split: list[_Splits] = [() for _ in trees]
        below: dict[bytes, _Splits] = {}  # a folder's files, by its tree id
        above = b""
        for name in [] if folder == "." else folder.encode("utf-8", "surrogateescape").split(b"/"):
            ids = {e.sha.hex() for e in current if is_dir(e)}
            raws = self._raw_trees(ids)
            read = {sha: _level(raw, name, above) for sha, raw in raws.items()}
            for at, entry in enumerate(current):
                beside = read[entry.sha.hex()] if is_dir(entry) else None
                outside[at].update(beside[1] if beside is not None else b"-")
                split[at] += self._files_below(beside[2], below) if beside is not None else ()
            current = [read[e.sha.hex()][0] if is_dir(e) else None for e in current]
            above += name + b"/"
        for tree, digest, names in zip(trees, outside, split, strict=True):
            if tree is not None:
                if rests is not None:
                    rests[tree] = digest.digest()
                if splits is not None:
                    splits[tree] = names
        return current

    def _files_below(self, entries: _Splits, memo: dict[bytes, _Splits]) -> _Splits:
        """``entries`` with each folder replaced by the files below it, at any depth (``git
        log -- ':(glob)*\\\\*/**'`` lists them: a root folder ``plans\\rf`` IS ``plans/rf`` on
        git for Windows, its ``PLAN.yml`` that plan's file; round 79), each folder's tree read
        once (``memo``, by tree id)."""
        found: list[tuple[bytes, Entry]] = []
        for path, entry in entries:
            if not is_dir(entry):
                found.append((path, entry))
                continue
            if entry.sha not in memo:
                raw, inside, pos = self._raw_trees([entry.sha.hex()])[entry.sha.hex()], [], 0
                while pos < len(raw):
                    name, item, pos = read_entry(raw, pos)
                    inside.append((name, item))
                memo[entry.sha] = self._files_below(tuple(inside), memo)
            found += [(path + b"/" + rel, item) for rel, item in memo[entry.sha]]
        return tuple(found)

    def _raw_trees(self, ids: Iterable[str]) -> dict[str, bytes]:
        wanted = list(ids)
        if len(wanted) <= BATCH_LOOKUPS:  # a pass's few: the reader already running (kept:
            # the head's root tree is the next commit's base)
            try:
                return {sha: self._object(sha) for sha in wanted}
            except GitError:
                raise TreeError("a tree could not be read") from None  # git log reports it
        found = self.blobs(wanted, keep=False)  # each is read once
        if len(found) != len(set(wanted)):
            raise TreeError("a tree could not be read")  # git log reports it
        return found

    def _changes_between(
        self,
        trees: list[str | None],
        folder: str,
        on_changes: Callable[[list[FileChange]], None] | None,
        on_commit: Callable[[int, list[FileChange]], None] | None = None,
        on_chunk: Callable[[], None] | None = None,
        rests: dict[str, bytes] | None = None,
        splits: dict[str, _Splits] | None = None,
    ) -> list[list[FileChange]]:
        """Per commit (root ``trees[1:]``), the files changed under ``folder`` since the one
        before; ``on_commit`` hears the position and changes of each commit that changed
        some, in order; ``on_chunk`` is called after each :data:`CHUNK_COMMITS` commits. The
        folder's entry in each root tree is found by the stream's feeder, a chunk ahead."""
        top = b"" if folder == "." else folder.encode("utf-8", "surrogateescape")
        found: list[list[FileChange]] = []
        splits = {} if splits is None else splits
        resolve = functools.partial(self._folder_entries, folder=folder, rests=rests, splits=splits)
        with _TreeStream(self, trees, resolve) as stream:
            reader = _TreeReader(self)
            try:
                entries = stream.entries()
                before = next(entries)
                old, marks = (stream.next() if is_dir(before) else b""), [0]
                # Walked from no folder: every entry of every version was read by read_entry
                # once (when its bytes first differed), so a change's old side is provable
                # (_expand's `known`); a walk from a folder it never read proves nothing.
                exact = before is None
                while True:
                    tops: list[list[_TopOp]] = []  # each commit's changed entries, then read
                    for after in itertools.islice(entries, CHUNK_COMMITS):
                        if before == after:
                            tops.append([])
                            continue
                        new = stream.next() if is_dir(after) else b""
                        ops, marks = _top_ops(top, before, after, old, new, marks, exact)
                        tops.append(ops)
                        before, old = after, new
                    if not tops:
                        break
                    reader.prefetch(e for ops in tops for op in ops for e in op[1:3])
                    for ops in tops:
                        changes: list[FileChange] = []
                        for path, o, n, old_data, new_data, known, folder, here in ops:
                            _expand(
                                reader, path, o, n, changes, old_data, new_data, known, folder, here
                            )
                        at = len(found)
                        beside = _split_changes(
                            splits.get(trees[at] or ""), splits[trees[at + 1] or ""]
                        )
                        if beside:  # git log's order: the paths' bytes
                            changes = sorted(changes + beside, key=_path_key)
                        if on_changes is not None and changes:
                            on_changes(changes)
                        if on_commit is not None and changes:
                            on_commit(len(found), changes)
                        found.append(changes)
                    if on_chunk is not None:
                        on_chunk()
            finally:
                reader.close()
        return found

    def _records(self, shas: Sequence[str]) -> list[CommitRecord]:
        """The records (no changes) of ``shas``, in that order."""
        if not shas:
            return []
        tag = _new_tag()
        args = [
            "log",
            "--no-walk=unsorted",
            "-z",
            "--no-show-signature",
            _log_format(tag, self.read_signatures),
            "--stdin",
        ]
        result = self.run_raw(*args, input="".join(f"{s}\n" for s in shas).encode())
        if result.returncode != 0:
            raise git_failure(args, result.stderr.decode("utf-8", "replace"))
        records = [
            self._certified(record)
            for record in parse_log(result.stdout.decode("utf-8", "surrogateescape"), tag)
        ]
        if [r.sha for r in records] != list(shas):
            raise GitError("git log --no-walk did not return the commits asked for")
        return records


#: Commits whose changed folders are read from git in one exchange.
CHUNK_COMMITS = 256
#: Up to this many new first-parent commits (a pass's approval, a merge, the controller's
#: own commits) are read from their objects instead of asking ``git log`` (issue 17: each
#: process an approving pass spawns is milliseconds of its approval -> first action).
WALKED_COMMITS = 32
_SHA1 = re.compile(r"[0-9a-f]{40}")
#: git's empty tree (SHA-1): what a commit without parents changed files since
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: a simulated merge pairs renames as ``git merge`` does by default, whatever the
#: repository's configuration says
_MERGE_PINS = (("merge.renames", "true"), ("merge.renameLimit", "7000"))
#: How git settles a file's conflict without a hand: ``-X ours``, ``-X theirs``, ``merge=union``
#: (``git merge-file``'s names).
HANDS_OFF = ("--ours", "--theirs", "--union")
#: Commits whose records one ``git log --no-walk`` reads while a cold scan still walks.
RECORDS_CHUNK = 1000


class _RecordReader:
    """The records of the commits a walk finds, in the order found, with their changes: read
    in chunks by a background thread while the walk goes on (50,000 records took 1.2 s after
    it); :meth:`ready` hands on the chunks read so far without waiting, :meth:`rest` the
    others (fewer than a chunk are read at the end, in the caller's thread)."""

    def __init__(self, repo: Commits) -> None:
        self.repo = repo
        self.pending: list[tuple[str, list[FileChange]]] = []
        self.futures: list[Any] = []
        self.pool: Any = None
        #: commits whose root trees changed nothing outside the folder
        self.quiet: set[str] = set()

    def __enter__(self) -> _RecordReader:
        return self

    def add(self, sha: str, changes: list[FileChange], quiet: bool = False) -> None:
        self.pending.append((sha, changes))
        if quiet:
            self.quiet.add(sha)
        if len(self.pending) >= RECORDS_CHUNK:
            from concurrent.futures import ThreadPoolExecutor

            if self.pool is None:
                self.pool = ThreadPoolExecutor(1, thread_name_prefix="records")
            batch, self.pending = self.pending, []
            self.futures.append(self.pool.submit(self._read, batch))

    def _read(self, batch: list[tuple[str, list[FileChange]]]) -> list[CommitRecord]:
        records = self.repo._records([sha for sha, _ in batch])
        for record, (_, changes) in zip(records, batch, strict=True):
            record.changes = changes  # _records checked the order
            record.outside_quiet = record.sha in self.quiet
        return records

    def ready(self) -> list[CommitRecord]:
        """The records of the chunks read so far (in order), not handed on before."""
        found: list[CommitRecord] = []
        while self.futures and self.futures[0].done():
            found += self.futures.pop(0).result()
        return found

    def rest(self) -> list[CommitRecord]:
        """Every record not handed on yet, in order (waiting for them)."""
        found = [record for future in self.futures for record in future.result()]
        self.futures = []
        batch, self.pending = self.pending, []
        return found + (self._read(batch) if batch else [])

    def __exit__(self, *exc: object) -> None:
        for future in self.futures:
            future.cancel()
        if self.pool is not None:
            self.pool.shutdown(wait=True)


#: Folder versions kept in memory while walking (each one's entries are compared once).
TREE_CACHE = 20_000

#: (path, old entry, new entry, old tree bytes, new tree bytes, old side known, the new
#: side's folder id, the new side resolved) of an entry that differs (see :func:`_expand`)
_TopOp = tuple[bytes, "Entry | None", "Entry | None", bytes | None, bytes | None, bool, str, bool]


def _plain_folder(folder: str) -> bool:
    """A folder the tree walk finds exactly as git's pathspec does: no glob or magic."""
    if folder == ".":
        return True
    parts = folder.split("/")
    return not any(c in folder for c in "*?[]\\:!") and all(p not in ("", ".", "..") for p in parts)


#: A root tree's entries above the plans folder whose own name holds a backslash: (path, entry).
_Splits = tuple[tuple[bytes, Entry], ...]


def _level(raw: bytes, name: bytes, above: bytes) -> tuple[Entry | None, bytes, _Splits]:
    """One read of a raw tree on the way to the plans folder (the folder ``above``): its
    entry ``name`` (one at most: git fsck refuses duplicates), its bytes without it (what it
    holds beside it), and its entries whose own name holds a backslash (a folder's files are
    read by ``_files_below``, as ``git log -- ':(glob)*\\\\*/**'`` lists them): git
    for Windows writes such a file into the plans folder
    (:func:`controller.git.planstate.history_paths`)."""
    found, kept, split, pos = [], [], [], 0
    while pos < len(raw):
        start = pos
        entry_name, entry, pos = read_entry(raw, pos)
        if entry_name == name:
            found.append(entry)
            continue
        kept.append(raw[start:pos])
        if b"\\" in entry_name or _spells(entry_name, name):
            # a folder: its files, by :meth:`_files_below`; another spelling of the plans
            # folder's path (``PLANS/``, ``plans./``, ``plans /``: :func:`_spells`): its files
            # are the plans folder's on some checkout, their committers writers (rounds 83, 84)
            split.append((above + entry_name, entry))
    if len(found) > 1:
        raise TreeError("a tree names the plans folder twice")
    return (found[0] if found else None), b"".join(kept), tuple(split)


def _spells(entry_name: bytes, name: bytes) -> bool:
    """Is the entry ``entry_name`` (not ``name`` itself) one folder with ``name``, a part of
    the plans folder's path, on some checkout (:func:`controller.plan.names.same_path`: case,
    HFS+'s ignored code points, NTFS's trailing dots and blanks, an 8.3 short name; round
    84)? Read by the walk (:func:`_level`) and by ``git log``'s pathspecs alike
    (:meth:`Commits.folder_spellings`)."""
    if entry_name.lower() == name.lower():
        return True
    if entry_name.isascii() and not any(c in entry_name for c in (b"~", b":", b"\\")):
        # every root entry of every commit is asked: an ASCII name's fold is its lower case
        # without NTFS's trailing dots and blanks (:func:`controller.plan.names.fold`)
        return (entry_name.lower().rstrip(b". ") or entry_name) == name.lower()
    text = entry_name.decode("utf-8", "surrogateescape")
    return same_path(text, name.decode("utf-8", "surrogateescape"))


def _split_changes(before: _Splits | None, after: _Splits) -> list[FileChange]:
    """The changes between two root trees' :func:`_split_names` (a tree of no commit: none)."""
    if before == after:
        return []
    old, new = dict(before or ()), dict(after)
    changes = []
    for path in sorted(old.keys() | new.keys()):
        was, now = old.get(path), new.get(path)
        if was != now:
            mode = "%06o" % (now.mode if now is not None else 0)
            text = path.decode("utf-8", "surrogateescape")
            changes.append(FileChange(text, _hex(was), _hex(now), mode))
    return changes


def _path_key(change: FileChange) -> bytes:
    return change.path.encode("utf-8", "surrogateescape")


def _top_ops(
    top: bytes,
    before: Entry | None,
    after: Entry | None,
    old: bytes,
    new: bytes,
    marks: list[int],
    exact: bool = False,
) -> tuple[list[_TopOp], list[int]]:
    """The changed entries of the plans folder itself (or the folder, when it is added,
    removed or changes kind) between two commits; ``exact``: the walk read every entry of
    the folder's versions (see :func:`_expand`)."""
    if is_dir(before) and is_dir(after):
        ops, marks = diff_level(old, new, marks)
        here = after.sha.hex()  # the folder's own entry, the only one so named (_named)
        return [
            # a plan added is never judged by its parent's mode: no count of its name
            (
                _join(top, name),
                o,
                n,
                None,
                None,
                exact and o is not None and _sole(old, name, o),
                here,
                o is None and n is not None and _sole(new, name, n),  # an entry added
            )
            for name, o, n in ops
        ], marks
    if before is not None and after is not None and is_dir(before) != is_dir(after):
        sides = [(before, None), (None, after)]
        sides.sort(key=lambda side: is_dir(side[0] or side[1]))  # a file sorts before a folder
    else:
        sides = [(before, after)]
    known = exact and before is None  # no folder in the first parent: no file under it
    return [
        (top, o, n, old if is_dir(o) else None, new if is_dir(n) else None, known, "", True)
        for o, n in sides
    ], [0]


def _sole(raw: bytes, name: bytes, entry: Entry | None) -> bool:
    """Is ``entry`` (None: no entry) every entry named ``name`` in the raw tree ``raw``? Each
    entry so named spells `` <name>\0`` once, so no other one is there when that occurs
    exactly as often as ``entry`` accounts for (an id or another name spelling it only makes
    the answer no)."""
    return raw.count(b" " + name + b"\0") == (0 if entry is None else 1)


def _join(path: bytes, name: bytes) -> bytes:
    return path + b"/" + name if path else name


#: Folders below the plans folder a cold scan walks into (plan paths hold at most 32 parts).
MAX_TREE_DEPTH = 64


def _expand(
    reader: _TreeReader,
    path: bytes,
    old: Entry | None,
    new: Entry | None,
    out: list[FileChange],
    old_data: bytes | None = None,
    new_data: bytes | None = None,
    known: bool = False,
    folder: str = "",
    here: bool = False,
) -> None:
    """The file changes of one differing entry, recursing into folders (as ``-r`` does),
    down to :data:`MAX_TREE_DEPTH` folders: anything deeper is no plan (E_UNSAFE_PATH past
    32) and is reported as the folder itself changing (1,000 nested folders overflowed the
    stack on every pass).

    ``known``: ``old`` is what a plain parse of the first parent's trees finds at ``path``
    (:meth:`~controller.git.objects.Objects.mode_of`: the last entry of each name, the mode
    as stored), or no entry is there: each tree on the way was walked from no folder, every
    entry of it read by :func:`~controller.git.treediff.read_entry` once (modes canonical as
    stored, else the walk gives up), and the entry is the only one of its name
    (:func:`_sole`). Then the change carries the parent's mode (``old_mode``) and the
    lifecycle does not read the parent's 10,000-entry folder again to learn it (perf76).

    ``here``: ``new`` is the only entry so named at ``path`` in the new commit, through
    folders each the only one of its name from the plans folder down (found by
    :func:`_named`), each added by the commit (asked of added entries only: the count is a
    pass over the 333 KB folder); ``folder``: then the id of the folder holding ``path``. A
    file so added carries it (``FileChange.folder``): the lifecycle lists a new plan's
    folder by that id, not by asking git to find ``<commit>:<folder>`` through the
    10,000-entry plans folder (issue 17). (git's lookup stops early in a tree stored out of
    order, which fsck refuses; there the listing read is the folder's own, where git's
    lookup found none.)"""
    if path.count(b"/") >= MAX_TREE_DEPTH and (is_dir(old) or is_dir(new)):
        mode = "%06o" % (new.mode if new is not None else 0)
        out.append(FileChange(path.decode("utf-8", "surrogateescape"), _hex(old), _hex(new), mode))
        return
    if not is_dir(old) and not is_dir(new):
        mode = "%06o" % (new.mode if new is not None else 0)
        was = (f"{old.mode:06o}" if old is not None else "") if known else "?"
        held = folder if old is None and new is not None else ""  # a file added: its folder
        out.append(
            FileChange(
                path.decode("utf-8", "surrogateescape"), _hex(old), _hex(new), mode, was, held
            )
        )
        return
    if old_data is None:
        old_data = reader.get(old.sha) if old is not None else b""
    if new_data is None:
        new_data = reader.get(new.sha) if new is not None else b""
    ops, _ = diff_level(old_data, new_data)
    known = known and (old is None or is_dir(old))
    mine = new.sha.hex() if here and is_dir(new) else ""
    for name, o, n in ops:
        _expand(
            reader,
            _join(path, name),
            o,
            n,
            out,
            known=known and _sole(old_data, name, o),
            folder=mine,
            here=bool(mine) and o is None and n is not None and _sole(new_data, name, n),
        )


def _hex(entry: Entry | None) -> str | None:
    sha = entry.sha.hex() if entry is not None else ZERO
    return None if sha == ZERO else sha


def _widen(pipe: IO[bytes] | None) -> None:
    """A 1 MB pipe (Linux): a 333 KB tree in a few reads, not one per 64 KB."""
    import fcntl

    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)  # type: ignore[union-attr]


def _read_object(stream: IO[bytes], checked: Path | None = None) -> tuple[str, bytes]:
    """One ``cat-file --batch`` answer: (type, content); ``checked``: the object store nobody
    verified it came from (the content is hashed against the name git answered for)."""
    header = stream.readline().split()
    if len(header) != 3:
        raise TreeError("an object could not be read")  # git log reports it
    data = stream.read(int(header[2]))
    stream.read(1)  # the newline after the content
    if checked is not None:
        check_object(header[0].decode(), header[1], data, checked)
    return header[1].decode(), data


#: Root trees whose entry for the plans folder the stream's feeder finds in one exchange.
CHUNK_TREES = 2000


class _TreeStream:
    """The plans folder's versions, in order, from one ``cat-file --batch`` fed by a thread.

    The feeder finds the folder's entry in each root tree (``resolve``, a chunk of
    :data:`CHUNK_TREES` at a time, one chunk ahead of the walk: 50,000 root trees took 1-2 s
    before the walk began), hands the entries on (:meth:`entries`) and asks git for each
    new version of the folder."""

    def __init__(
        self,
        repo: RepoBase,
        trees: list[str | None],
        resolve: Callable[[list[str | None]], list[Entry | None]],
    ) -> None:
        import queue
        import threading

        self.timeout = repo.timeout
        self.checked = repo.objects_checked
        #: each chunk's entries, then None; or the error the feeder met
        self.found: queue.SimpleQueue[list[Entry | None] | BaseException | None] = (
            queue.SimpleQueue()
        )
        self.proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=repo.path,
            env=repo.guard.env(),  # no replace refs, hooks or secrets (controller.git.guard)
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        _widen(self.proc.stdout)
        self.feeder = threading.Thread(target=self._feed, args=(trees, resolve), daemon=True)
        self.feeder.start()

    def _feed(
        self, trees: list[str | None], resolve: Callable[[list[str | None]], list[Entry | None]]
    ) -> None:
        assert self.proc.stdin is not None
        chunks = [trees[i : i + CHUNK_TREES] for i in range(0, len(trees), CHUNK_TREES)]
        last: Entry | None = None
        first = True
        try:
            ahead = resolve(chunks[0]) if chunks else []
            for at in range(len(chunks)):
                entries = ahead
                self.found.put(entries)
                error = None
                try:  # the next chunk's entries while git reads this one's versions
                    ahead = resolve(chunks[at + 1]) if at + 1 < len(chunks) else []
                except BaseException as exc:  # raised once the walk is past this chunk
                    error = exc
                ids = []
                for entry in entries:  # each version once: the walk reads it where it changes
                    if is_dir(entry) and (first or entry != last):
                        ids.append(b"%s\n" % entry.sha.hex().encode())
                    last, first = entry, False
                for start in range(0, len(ids), 1000):
                    self.proc.stdin.write(b"".join(ids[start : start + 1000]))
                if error is not None:
                    raise error
            self.found.put(None)
        except BaseException as exc:  # the walk raises it (a TreeError: git log is asked)
            self.found.put(exc)
        finally:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def entries(self) -> Iterator[Entry | None]:
        """The folder's entry in each root tree, in order (None where absent)."""
        while True:
            part = self.found.get()  # the feeder's git calls are bounded by their timeout
            if part is None:
                return
            if isinstance(part, BaseException):
                raise part
            yield from part

    def next(self) -> bytes:
        assert self.proc.stdout is not None
        with DEADLINES.bound(self.timeout, self.proc.kill, "git cat-file --batch"):
            kind, data = _read_object(self.proc.stdout, self.checked)
        if kind != "tree":
            raise TreeError("the plans folder is no tree")
        return data

    def __enter__(self) -> _TreeStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()
        self.feeder.join()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


class _TreeReader:
    """Folders read on demand, many per exchange, from a persistent ``cat-file --batch``."""

    def __init__(self, repo: RepoBase) -> None:
        self.timeout = repo.timeout
        self.checked = repo.objects_checked
        self.proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=repo.path,
            env=repo.guard.env(),  # no replace refs, hooks or secrets (controller.git.guard)
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.cache: dict[bytes, bytes] = {}

    def prefetch(self, entries: Iterable[Entry | None]) -> None:
        wanted = list(
            dict.fromkeys(e.sha for e in entries if is_dir(e) and e.sha not in self.cache)
        )
        if len(self.cache) + len(wanted) > TREE_CACHE:
            self.cache.clear()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        for start in range(0, len(wanted), 1000):  # 41 KB of requests: within the pipe's buffer
            part = wanted[start : start + 1000]
            self.proc.stdin.write(b"".join(b"%s\n" % sha.hex().encode() for sha in part))
            self.proc.stdin.flush()
            for sha in part:
                with DEADLINES.bound(self.timeout, self.proc.kill, "git cat-file --batch"):
                    kind, data = _read_object(self.proc.stdout, self.checked)
                if kind != "tree":
                    raise TreeError("a folder entry names no tree")
                self.cache[sha] = data

    def get(self, sha: bytes) -> bytes:
        if sha not in self.cache:
            self.prefetch([Entry(S_IFDIR, sha)])
        return self.cache[sha]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
