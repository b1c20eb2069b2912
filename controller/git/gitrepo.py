"""Everything plangate does with git, behind one class: the only GitPython importer.

Reading: first-parent history with the files each commit changed (one ``git log`` per
scan), blobs through GitPython's persistent ``cat-file --batch`` process, signatures through
``git verify-commit``.

Writing never goes through the shared index or working tree: :meth:`GitRepo.commit_files`
writes the new blobs, trees and commit as loose objects in-process (``git commit-tree`` only
when the commit must be signed or the identity needs git's own cleaning) and moves the
branch with a compare-and-swap ``git update-ref``. A human's staged or unstaged work is
therefore never staged, committed or discarded, a concurrent human commit makes the swap
fail (and the caller re-evaluates) instead of being lost, and hooks never run. With
``commit.gpgSign`` true in the git config the daemon sees (read once, when it opens the
repository) every commit is signed by ``git commit-tree -S`` with ``user.signingKey``;
``git commit-tree`` itself ignores that setting. In local mode
the caller then writes the same bytes into the working tree and refreshes those index
entries (:meth:`GitRepo.write_worktree`, :meth:`GitRepo.set_index_entries`).

The approval hot path never parses a big tree: a ``plans/`` folder of 10,000 plans is a
330 KB tree object. Reads ask git's persistent ``cat-file`` for ``<commit>:<path>``; a commit
that only replaces existing entries of a big tree patches their 20-byte ids in the raw
object, at offsets proven unique (see :func:`entry_offset`), and stores it with zlib level 0
(git reads any level; ``git gc`` recompresses).

Every git failure becomes ``E_GIT`` carrying git's own message.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import git

from controller.errors import GitError

ZERO = "0" * 40
_RECORD = "\x1e"
_HEADER_END = "\x1d"
_FIELD = "\x1f"
_FIELDS = ["%H", "%P", "%an", "%ae", "%at", "%cn", "%ce", "%ct", "%s", "%(trailers:only,unfold)"]
_TREE_MODE = 0o40000
_BLOB_MODE = 0o100644
_HEX40 = re.compile(rb"[0-9a-f]{40}")
#: A tree this big (bytes) has its changed entries patched in place instead of re-parsed.
BIG_TREE = 16 * 1024
#: Loose objects bigger than this are stored without compression (see the module docstring).
STORE_RAW_ABOVE = 64 * 1024
#: Characters git strips from the ends of a name or email ("crud"), or refuses inside one.
_CRUD = frozenset(" .,:;<>\"\\'") | {chr(c) for c in range(33)}
_IDENT_FORBIDDEN = frozenset("<>\n\0")
_GOOD_SSH = re.compile(r'Good "git" signature for (\S+) with')
_GOOD_GPG = re.compile(r"GOODSIG [0-9A-F]+ .*?<([^>]+)>|Good signature from \".*?<([^>]+)>")


@dataclass(frozen=True)
class Person:
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


@dataclass(frozen=True)
class FileChange:
    """One file a commit changed relative to its first parent (None: absent on that side)."""

    path: str
    old_blob: str | None
    new_blob: str | None


@dataclass
class CommitRecord:
    """A commit as history processing needs it: identities, times, trailers, changed files."""

    sha: str
    parents: tuple[str, ...]
    author: Person
    committer: Person
    author_time: int
    commit_time: int
    subject: str
    trailers: dict[str, str] = field(default_factory=dict)
    changes: list[FileChange] = field(default_factory=list)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


@dataclass(frozen=True)
class Signature:
    """What ``git verify-commit`` said about a commit."""

    valid: bool
    signer: str | None
    message: str


def parse_trailers(text: str) -> dict[str, str]:
    trailers: dict[str, str] = {}
    for line in text.split("\n"):  # not splitlines(): 0x1c-0x1e and U+2028 are no line ends
        key, sep, value = line.partition(":")
        if sep and key.strip():
            trailers.setdefault(key.strip(), value.strip())
    return trailers


def _log_format(tag: str) -> str:
    """``git log``'s format: each separator is followed by ``tag``, drawn at random for each
    run (:func:`_new_tag`). Names, subjects, trailers and file names may hold any control
    character, so a bare one could cut a commit in two or forge one; the tag they cannot."""
    record, field, end = (f"{sep}{tag}" for sep in (_RECORD, _FIELD, _HEADER_END))
    return f"--format={record}{field.join(_FIELDS)}{end}"


def _new_tag() -> str:
    return secrets.token_hex(8)


def _parse_header(header: str, tag: str) -> CommitRecord:
    sha, parents, an, ae, at, cn, ce, ct, subject, trailers = header.split(_FIELD + tag, 9)
    return CommitRecord(
        sha=sha,
        parents=tuple(parents.split()),
        author=Person(an, ae),
        committer=Person(cn, ce),
        author_time=int(at),
        commit_time=int(ct),
        subject=subject,
        trailers=parse_trailers(trailers),
    )


def _parse_raw(raw: str) -> list[FileChange]:
    """``-z --raw`` entries: ``:oldmode newmode old new STATUS\\0path\\0``."""
    changes = []
    parts = raw.lstrip("\n\0").split("\0")
    for meta, path in zip(parts[0::2], parts[1::2], strict=False):
        fields = meta.strip().split()
        if len(fields) < 5 or not meta.strip().startswith(":"):
            continue
        old, new = fields[2], fields[3]
        changes.append(FileChange(path, None if old == ZERO else old, None if new == ZERO else new))
    return changes


def parse_log(output: str, tag: str) -> Iterator[CommitRecord]:
    """The records of ``git log -z --raw`` run with ``_log_format(tag)``."""
    for chunk in output.split(_RECORD + tag):
        record = _parse_chunk(chunk, tag)
        if record is not None:
            yield record


def _parse_chunk(chunk: str, tag: str) -> CommitRecord | None:
    if not chunk.strip("\0\n"):
        return None
    header, _, raw = chunk.partition(_HEADER_END + tag)
    record = _parse_header(header.strip("\0\n"), tag)
    record.changes = _parse_raw(raw)
    return record


class GitRepo:
    """One git repository (a working tree in local mode, a bare clone in remote mode)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._repo = git.Repo(path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(
                f"{path} is not a git repository",
                remedy="point `repo` at a git working tree (git init), or use remote mode",
            ) from None
        self.git_dir = Path(self._repo.git_dir)
        self.common_dir = Path(self._repo.common_dir)
        fmt = self._repo.config_reader("repository").get_value("extensions", "objectformat", "")
        if str(fmt).lower() not in ("", "sha1"):
            raise GitError(
                f"{path} uses {fmt} object ids; plangate writes SHA-1 objects only",
                remedy="use a SHA-1 repository (the default of git init) for plans",
            )
        self.bare = self._repo.bare
        self._objects = self.common_dir / "objects"
        self._lock = threading.RLock()
        self._trees: dict[str, dict[str, tuple[str, int]]] = {}
        self._packed: tuple[tuple[int, int, int], dict[bytes, str]] | None = None
        self._must_sign: bool | None = None

    def close(self) -> None:
        with self._lock:
            self._repo.close()

    # --- running git ------------------------------------------------------------------

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> str:
        """Run the git CLI here; raise ``E_GIT`` with git's message on failure."""
        result = self.run_raw(*args, input=input, env=env)
        if check and result.returncode != 0:
            raise git_failure(args, result.stderr.decode("utf-8", "replace"))
        return result.stdout.decode("utf-8", "surrogateescape")

    def run_raw(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        try:
            return subprocess.run(
                ["git", *args],
                cwd=self.path,
                input=input,
                env=full_env,
                capture_output=True,
                check=False,
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror}", remedy="install git") from None

    # --- refs and health --------------------------------------------------------------

    def rev(self, ref: str) -> str | None:
        result = self.run_raw("rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        return result.stdout.decode().strip() or None if result.returncode == 0 else None

    def branch_head(self, branch: str) -> str | None:
        """The commit ``refs/heads/<branch>`` points at, read in-process when git's files
        allow (loose ref, then ``packed-refs``), else by ``git rev-parse``."""
        name = f"refs/heads/{branch}"
        return self._read_ref(name) or self.rev(name)

    def _read_ref(self, name: str) -> str | None:
        """A ref's commit from the files (None: absent, symbolic or unusual; ask git)."""
        if (self.common_dir / "reftable").exists():
            return None
        try:
            raw = (self.common_dir / name).read_bytes().strip()
        except FileNotFoundError:
            return self._packed_refs().get(name.encode())
        except OSError:
            return None
        return raw.decode() if _HEX40.fullmatch(raw) else None

    def _packed_refs(self) -> dict[bytes, str]:
        path = self.common_dir / "packed-refs"
        try:
            st = path.stat()
        except OSError:
            return {}
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._packed is None or self._packed[0] != key:
            try:
                data = path.read_bytes()
            except OSError:  # replaced or removed since the stat: let git answer
                return {}
            refs: dict[bytes, str] = {}
            for line in data.splitlines():
                sha, _, ref = line.partition(b" ")
                if _HEX40.fullmatch(sha):
                    refs[ref.strip()] = sha.decode()
            self._packed = (key, refs)
        return self._packed[1]

    def current_branch(self) -> str:
        """The checked-out branch; a detached HEAD is ``E_GIT``."""
        result = self.run_raw("symbolic-ref", "-q", "--short", "HEAD")
        if result.returncode != 0:
            raise GitError(
                f"{self.path}: HEAD is detached; plangate watches a branch",
                remedy="check out the watched branch (git switch main)",
            )
        return result.stdout.decode().strip()

    def check_health(self) -> None:
        """Refuse to write while git itself is busy or a crashed git left its lock."""
        for name, what, command in (
            ("MERGE_HEAD", "a merge", "git merge"),
            ("rebase-merge", "a rebase", "git rebase"),
            ("rebase-apply", "a rebase or am", "git rebase (or git am)"),
            ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick"),
            ("REVERT_HEAD", "a revert", "git revert"),
        ):
            if (self.git_dir / name).exists():
                raise GitError(
                    f"{self.path} is in the middle of {what}; plangate waits",
                    remedy=f"finish or abort it ({command} --continue / --abort)",
                )
        lock = self.git_dir / "index.lock"
        if _wait_gone(lock, LOCK_WAIT):
            raise GitError(
                f"fatal: Unable to create '{lock}': File exists. Another git process seems "
                "to be running in this repository, or a git process crashed",
                remedy=f"if no git process is running, remove {lock}",
            )

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if self._near_first_parent(ancestor, descendant):
            return True
        return self.run_raw("merge-base", "--is-ancestor", ancestor, descendant).returncode == 0

    def _near_first_parent(self, ancestor: str, commit: str, steps: int = 16) -> bool:
        """Is ``ancestor`` one of ``commit``'s last few first parents? (Read in-process: the
        usual case, a scan after a commit or two, needs no ``git merge-base``.)"""
        if not (_HEX40.fullmatch(ancestor.encode()) and _HEX40.fullmatch(commit.encode())):
            return False
        for _ in range(steps):
            if commit == ancestor:
                return True
            try:
                header = self._object(commit).split(b"\n\n", 1)[0]
            except GitError:
                return False
            parents = [line[7:] for line in header.split(b"\n") if line.startswith(b"parent ")]
            if not parents:
                return False
            commit = parents[0].decode()
        return False

    def update_ref(self, ref: str, new: str, old: str | None) -> bool:
        """Compare-and-swap a ref; False when it no longer points at ``old``."""
        args = ["update-ref", "-m", "plangate", ref, new]
        if old is not None:
            args.append(old)
        return self.run_raw(*args).returncode == 0

    # --- reading history --------------------------------------------------------------

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
                    env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
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
            f"{exclude}..{include}",
            "--",
            *paths,
        )
        return list(parse_log(out, tag))

    def commit(self, sha: str) -> CommitRecord:
        tag = _new_tag()
        out = self.run("log", "-1", "-z", "--no-show-signature", _log_format(tag), sha)
        return next(parse_log(out, tag))

    def blob(self, sha: str) -> bytes:
        return self._object(sha)

    def _object(self, sha: str) -> bytes:
        with self._lock:
            try:
                return bytes(self._repo.odb.stream(bytes.fromhex(sha)).read())
            except (ValueError, OSError) as exc:
                raise GitError(f"cannot read object {sha}: {exc}") from None

    def blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Many objects in one ``git cat-file --batch`` round trip (cold scans)."""
        if not shas:
            return {}
        out = self.run_raw("cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
        data, pos, found = out.stdout, 0, {}
        while pos < len(data):
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            pos = end + 1
            if len(header) < 3:  # "<sha> missing"
                continue
            size = int(header[2])
            found[header[0].decode()] = data[pos : pos + size]
            pos += size + 1
        return found

    def blob_sha(self, commit: str, path: str) -> str | None:
        """The blob of ``path`` in ``commit`` (None when it is not there)."""
        spec = f"{commit}:{path}"
        if _askable(spec):
            found = self._lookup(spec)
            return found[0] if found is not None and found[1] == "blob" else None
        sha, mode = self._tree_of(commit), _TREE_MODE  # a name git cannot be asked: walk
        for part in path.split("/"):
            if sha is None or mode != _TREE_MODE:
                return None
            entry = self._tree_entries(sha).get(part)
            if entry is None:
                return None
            sha, mode = entry
        return sha if (mode & 0o170000) in (0o100000, 0o120000) else None

    def _lookup(self, spec: str) -> tuple[str, str] | None:
        """(object id, type) of ``<tree-ish>:<path>``, resolved by git's persistent
        ``cat-file --batch-check`` (None when absent); ``spec`` must be :func:`_askable`."""
        with self._lock:
            try:
                sha, kind, _ = self._repo.git.get_object_header(spec)
            except ValueError:  # "<spec> missing"
                return None
            except OSError as exc:  # the persistent cat-file died
                raise GitError(f"cannot look up {spec}: {exc}") from None
        return _text(sha), _text(kind)

    def read_file(self, commit: str, path: str) -> bytes | None:
        blob = self.blob_sha(commit, path)
        return None if blob is None else self.blob(blob)

    def _tree_of(self, commit: str) -> str | None:
        first = self._object(commit).split(b"\n", 1)[0]
        return first[5:].decode() if first.startswith(b"tree ") else None

    def _tree_entries(self, tree: str) -> dict[str, tuple[str, int]]:
        """name -> (sha, mode) of a tree; trees are immutable, so parsed ones are cached."""
        cached = self._trees.get(tree)
        if cached is None:
            cached = parse_tree(self._object(tree))
            if len(self._trees) > 256:
                self._trees.clear()
            self._trees[tree] = cached
        return dict(cached)

    def ls_files(self, commit: str, paths: Sequence[str]) -> list[tuple[str, str]]:
        """(path, blob) of every file under ``paths`` in ``commit``."""
        out = self.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths)
        rows = []
        for line in out.split("\0"):
            if line:
                meta, _, path = line.partition("\t")
                rows.append((path, meta.split()[2]))
        return rows

    # --- writing ----------------------------------------------------------------------

    def store_blob(self, data: bytes) -> str:
        return self._store(b"blob", data)

    def _store(self, kind: bytes, data: bytes) -> str:
        """Write a loose object (as git does: temp file, then rename) and return its id."""
        header = b"%s %d\0" % (kind, len(data))
        digest = hashlib.sha1(header)
        digest.update(data)
        sha = digest.hexdigest()
        folder = self._objects / sha[:2]
        target = folder / sha[2:]
        if target.exists():
            # As git does: a fresh mtime keeps a concurrent `git gc --prune` off an old
            # unreachable object that our commit is about to reference.
            with contextlib.suppress(OSError):
                os.utime(target)
            return sha
        level = 0 if len(data) > STORE_RAW_ABOVE else 1
        packed = zlib.compressobj(level)
        body = packed.compress(header) + packed.compress(data) + packed.flush()
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body)
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha

    def tree_with(self, base_tree: str | None, files: Mapping[str, bytes | None]) -> str:
        """A new tree: ``base_tree`` with ``files`` written (None deletes), built in the odb."""
        return self._merged(base_tree, files) or self._store(b"tree", b"")

    def _merged(self, base_tree: str | None, files: Mapping[str, bytes | None]) -> str | None:
        """The id of ``base_tree`` with ``files`` applied; None when nothing is left (git has
        no empty folders)."""
        raw = self._object(base_tree) if base_tree else b""
        nested: dict[str, dict[str, bytes | None]] = {}
        changes: dict[str, tuple[str, int] | None] = {}
        for path, data in files.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested.setdefault(head, {})[rest] = data
            else:
                changes[head] = None if data is None else (self.store_blob(data), _BLOB_MODE)
        olds = {name: self._entry(base_tree, raw, name) for name in nested} if base_tree else {}
        for name, sub in nested.items():
            old = olds.get(name)
            sha = self._merged(old[0] if old and old[1] == _TREE_MODE else None, sub)
            changes[name] = None if sha is None else (sha, _TREE_MODE)
        if base_tree and len(raw) > BIG_TREE:
            patched = self._patch(base_tree, raw, changes, olds)
            if patched is not None:
                return self._store(b"tree", patched)
        entries = self._tree_entries(base_tree) if base_tree else {}
        for name, entry in changes.items():
            if entry is None:
                entries.pop(name, None)
            else:
                entries[name] = entry
        if not entries:
            return None
        # A parsed tree is in git's order and replacing an entry keeps its place: only new
        # names need the sort.
        sha = self._store(b"tree", serialize_tree(entries, presorted=_in_git_order(entries)))
        self._trees[sha] = dict(entries)
        return sha

    def _entry(self, tree: str, raw: bytes, name: str) -> tuple[str, int] | None:
        """(id, mode) of ``name`` in ``tree``, without parsing a big tree."""
        spec = f"{tree}:{name}"
        if len(raw) <= BIG_TREE or not _askable(spec):
            return self._tree_entries(tree).get(name)
        found = self._lookup(spec)
        if found is None:
            return None
        sha, kind = found
        if kind == "tree":
            return sha, _TREE_MODE
        return self._tree_entries(tree).get(name)  # a blob's mode is not in the answer

    def _patch(
        self,
        tree: str,
        raw: bytes,
        changes: Mapping[str, tuple[str, int] | None],
        olds: Mapping[str, tuple[str, int] | None],
    ) -> bytes | None:
        """``raw`` with the ids of existing entries replaced in place (same names, same
        modes); None when a change adds, removes or retypes an entry."""
        spliced = bytearray(raw)
        for name, entry in changes.items():
            if entry is None:
                return None
            old = olds[name] if name in olds else self._entry(tree, raw, name)
            if old is None or old[1] != entry[1]:
                return None
            at = entry_offset(raw, name, old[1], old[0])
            if at is None:
                return None
            spliced[at : at + 20] = bytes.fromhex(entry[0])
        return bytes(spliced)

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
    ) -> str | None:
        """Commit ``files`` on top of ``parent`` and move ``branch`` there.

        Returns the new commit, or None when ``branch`` moved meanwhile (nothing changed).
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
        return sha if self.update_ref(f"refs/heads/{branch}", sha, parent) else None

    def signs_commits(self) -> bool:
        """Is ``commit.gpgSign`` true for this repository? (Read once per open repository.)"""
        if self._must_sign is None:
            result = self.run_raw("config", "--type=bool", "--get", "commit.gpgSign")
            if result.returncode not in (0, 1):  # 1: not set; else not a boolean (git commit
                # refuses it too): never read a broken setting as "do not sign"
                raise GitError(
                    f"git config: {result.stderr.decode('utf-8', 'replace').strip()}",
                    path=str(self.path),
                    remedy="set commit.gpgSign to true or false (git config commit.gpgSign "
                    "true), then retry",
                )
            self._must_sign = result.stdout.strip() == b"true"
        return self._must_sign

    def _commit_tree(
        self, tree: str, parent: str, message: str, author: Person, committer: Person, sign: bool
    ) -> str:
        ident = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": committer.name,
            "GIT_COMMITTER_EMAIL": committer.email,
        }
        args = ["commit-tree", tree, "-p", parent, "-F", "-"]
        if sign:
            args.insert(1, "-S")
        return self.run(*args, input=message.encode(), env=ident).strip()

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

    @classmethod
    def containing(cls, path: Path) -> GitRepo:
        """The working tree that contains ``path``."""
        try:
            top = git.Repo(path, search_parent_directories=True).working_tree_dir
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(
                f"{path} is not inside a git working tree",
                remedy="run the command on a plan in a clone of the plans repo",
            ) from None
        return cls(Path(str(top)))

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

    # --- signatures -------------------------------------------------------------------

    def verify_commit(self, sha: str, allowed_signers: Path | None) -> Signature:
        args = ["verify-commit", "--raw", sha]
        if allowed_signers is not None:
            args = ["-c", f"gpg.ssh.allowedSignersFile={allowed_signers}", *args]
        result = self.run_raw(*args)
        text = (result.stderr + result.stdout).decode("utf-8", "replace").strip()
        match = _GOOD_SSH.search(text) or _GOOD_GPG.search(text)
        signer = next((g for g in match.groups() if g), None) if match else None
        first_line = text.splitlines()[0] if text else "no signature"
        return Signature(result.returncode == 0 and signer is not None, signer, first_line)

    # --- remotes ----------------------------------------------------------------------

    @classmethod
    def clone_bare(cls, url: str, target: Path, branch: str) -> GitRepo:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=target.parent))
        result = subprocess.run(
            ["git", "clone", "--bare", "-q", "--single-branch", "--branch", branch, url, str(tmp)],
            capture_output=True,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
        if result.returncode != 0:
            raise git_failure(("clone", url), result.stderr.decode("utf-8", "replace"))
        tmp.rename(target)
        return cls(target)

    def fetch(self, remote: str, branch: str) -> str:
        """Fetch ``branch`` into ``refs/remotes/<remote>/<branch>``; return its commit."""
        ref = f"refs/remotes/{remote}/{branch}"
        self.run("fetch", "-q", "--no-tags", remote, f"+refs/heads/{branch}:{ref}")
        sha = self.rev(ref)
        if sha is None:
            raise GitError(f"the remote has no branch {branch}")
        return sha

    def push(self, remote: str, branch: str) -> bool:
        """Push without force; False when the remote rejected it (it moved on)."""
        result = self.run_raw(
            "push", "-q", "--porcelain", remote, f"refs/heads/{branch}:refs/heads/{branch}"
        )
        if result.returncode == 0:
            return True
        text = (result.stdout + result.stderr).decode("utf-8", "replace")
        # A lost race: not a fast-forward any more, or another pusher held the ref's lock.
        lost = (
            "[rejected]",
            "non-fast-forward",
            "fetch first",
            "cannot lock ref",
            "failed to update ref",
        )
        if any(marker in text for marker in lost):
            return False
        raise git_failure(("push", remote, branch), text)


def blob_id(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (SHA-1 repositories)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def commit_object(
    tree: str, parents: Sequence[str], message: str, author: Person, committer: Person
) -> bytes:
    """A commit object as ``git commit-tree`` writes it (UTF-8, local time zone)."""
    now = int(time.time())
    offset = time.localtime(now).tm_gmtoff // 60
    zone = f"{'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines.append(f"author {author.name} <{author.email}> {now} {zone}")
    lines.append(f"committer {committer.name} <{committer.email}> {now} {zone}")
    return ("\n".join(lines) + "\n\n" + message).encode("utf-8")


def _plain_ident(person: Person) -> bool:
    """True when git would store ``person`` as given (else ``git commit-tree`` cleans it);
    a date forced through the environment also goes through git."""
    if "GIT_AUTHOR_DATE" in os.environ or "GIT_COMMITTER_DATE" in os.environ:
        return False
    for text in (person.name, person.email):
        if not text or text[0] in _CRUD or text[-1] in _CRUD:
            return False
        if any(c in _IDENT_FORBIDDEN for c in text):
            return False
    return True


def entry_offset(raw: bytes, name: str, mode: int, sha: str) -> int | None:
    """Where the 20-byte id of entry ``name`` sits in the raw tree ``raw``.

    The caller knows (from git) that the entry exists with this mode and id, so its bytes
    ``<mode> <name>\\0<id>`` occur in ``raw``; when they occur exactly once that occurrence
    is the entry. A second occurrence (only a hostile name such as ``140000 x`` beside
    ``x``, with the same content, can make one) falls back to a walk from the start.
    """
    needle = b"%o %s\0" % (mode, name.encode("utf-8", "surrogateescape"))
    full = needle + bytes.fromhex(sha)
    at = raw.find(full)
    if at < 0:
        return None
    if raw.find(full, at + 1) < 0:
        return at + len(needle)
    pos = 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        if raw[pos : nul + 1] == needle:
            return nul + 1
        pos = nul + 21
    return None


def parse_tree(data: bytes) -> dict[str, tuple[str, int]]:
    """A raw tree object: ``<octal mode> <name>\\0<20-byte sha>`` repeated."""
    entries: dict[str, tuple[str, int]] = {}
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries[name] = (data[nul + 1 : nul + 21].hex(), int(data[pos:space], 8))
        pos = nul + 21
    return entries


def _tree_key(name: str, mode: int) -> bytes:
    """git sorts a folder as ``name/``."""
    raw = name.encode("utf-8", "surrogateescape")
    return raw + b"/" if mode == _TREE_MODE else raw


def _in_git_order(entries: Mapping[str, tuple[str, int]]) -> bool:
    previous = b""
    for name, (_, mode) in entries.items():
        key = _tree_key(name, mode)
        if key < previous:
            return False
        previous = key
    return True


def serialize_tree(entries: Mapping[str, tuple[str, int]], *, presorted: bool = False) -> bytes:
    """The raw tree object, entries in git's order (a folder sorts as ``name/``)."""
    names = entries if presorted else sorted(entries, key=lambda n: _tree_key(n, entries[n][1]))
    return b"".join(
        b"%o %s\0%s"
        % (entries[n][1], n.encode("utf-8", "surrogateescape"), bytes.fromhex(entries[n][0]))
        for n in names
    )


#: How long a pass waits for a running git command (a human's commit) to release index.lock.
LOCK_WAIT = 0.5


def _wait_gone(path: Path, seconds: float) -> bool:
    """Poll until ``path`` is gone; True when it is still there after ``seconds``."""
    deadline = time.monotonic() + seconds
    delay = 0.001
    while path.exists():
        if time.monotonic() >= deadline:
            return True
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    return False


def _askable(spec: str) -> bool:
    """Does ``<tree-ish>:<path>`` reach ``cat-file --batch-check`` unchanged? One line, no
    carriage return (git strips a final one: ``x\\r`` would be read as ``x``), and UTF-8
    (GitPython encodes the line; a non-UTF-8 name is held as surrogate escapes)."""
    if "\n" in spec or "\r" in spec:
        return False
    try:
        spec.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def git_failure(args: Sequence[str], stderr: str) -> GitError:
    message = stderr.strip() or "git failed without a message"
    return GitError(f"git {' '.join(args[:2])}: {message}")
