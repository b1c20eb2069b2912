"""The repository handle every git concern builds on: opening it, running git, reading objects.

:class:`RepoBase` opens the repository with GitPython (refusing non-SHA-1 object formats),
holds the lock around GitPython's persistent ``cat-file`` processes and the caches the other
parts share, and runs the git CLI turning every failure into ``E_GIT`` with git's own message.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from controller.display import masked_url
from controller.errors import BlobTooLarge, GitError
from controller.git.deadline import DEADLINES
from controller.git.gitpython import git
from controller.git.guard import GitGuard, RemoteAuth, argv, cannot_run, owned_here
from controller.git.store import (
    MAX_PACKS,
    PACK_AT,
    check_object,
    ensure_store,
    pack_count,
    write_loose,
    write_pack,
)


def _quiet_config_parser_del(unraisable: Any, chained: Any = sys.unraisablehook) -> None:
    """GitPython builds a config parser for every ``includeIf "hasconfig:remote.*.url:..."``
    it meets by asking for the remotes, which reads the config again: the recursion fails
    inside the parser's constructor, and its ``__del__`` then raises ``AttributeError``
    (``_read_only``) as "Exception ignored" with a traceback on stderr at every command
    (round 83; a GitPython defect, its read otherwise falls back as documented). Only that
    one is dropped; any other goes to the hook that was there."""
    where = getattr(unraisable.object, "__qualname__", "")
    if where == "GitConfigParser.__del__" and isinstance(unraisable.exc_value, AttributeError):
        return
    chained(unraisable)


sys.unraisablehook = _quiet_config_parser_del


#: An object :meth:`RepoBase.packing` writes at its end: kind, bytes, into the shared store
#: too, the zlib level of a loose copy (None: by size, as the controller writes its own).
Pending = tuple[bytes, bytes, bool, "int | None"]


class _GuardedGit(git.Git):
    """GitPython's git runner, its children (the persistent ``cat-file``) under the guard."""

    guard: GitGuard | None = None

    def execute(self, command: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self.guard is not None:
            kwargs["env"] = {**self.guard.env_over_environ(), **(kwargs.get("env") or {})}
        return super().execute(command, **kwargs)


class _GuardedRepo(git.Repo):
    GitCommandWrapperType = _GuardedGit


class RepoBase:
    """One git repository (a working tree in local mode, a bare clone in remote mode).

    Every git child runs under :class:`~controller.git.guard.GitGuard`: the repository's own
    config chooses no program, key or trust anchor unless ``trust_repo_config`` (a person
    running plangate in their own clone), and git uses no transport unless one of those or
    ``fetches`` (the controller's own clone in remote mode)."""

    #: The longest one git command may take (``execution.git_timeout``): a git that hangs
    #: (on a FIFO or device in the repository, a stalled file system) fails the pass with
    #: ``E_GIT`` instead of stalling it for good.
    timeout: float = 300.0

    def __init__(
        self,
        path: Path,
        *,
        trust_repo_config: bool = False,
        fetches: bool = False,
        store: Path | None = None,
        auth: RemoteAuth | None = None,
    ) -> None:
        self.path = path
        #: the remote's credential (:func:`~controller.git.guard.remote_auth`): given to the
        #: calls that talk to the remote (``remote=True``) through their environment only
        self.auth = auth
        check_git_dir(path)  # before anything, git or GitPython, opens a file there
        owned_here(path)  # git's refusal of another user's repository, said as that
        try:
            self._repo = _GuardedRepo(path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(
                f"{path} is not a git repository",
                remedy="point `repo` at a git working tree (git init), or use remote mode",
            ) from None
        offline = not (trust_repo_config or fetches)
        self.guard = GitGuard.read(path, trust_repo_config=trust_repo_config, offline=offline)
        self.git_dir = Path(self._repo.git_dir)
        self.common_dir = Path(self._repo.common_dir)
        #: local mode's own object store (:mod:`controller.git.store`): every object is read
        #: from there; what this process writes goes to the shared store too
        self.store = store
        self._shared_objects: Path | None = None
        #: every object read is hashed against its name: a store nobody verified (local
        #: mode's shared ``.git/objects`` read by a person's plangate, the page, an audit);
        #: the controller's own store and its fetched clone hold only objects git named
        #: by their bytes (round 58)
        self.checks_objects = store is None and not fetches
        #: the controller's own clone in remote mode (fetches and pushes)
        self.fetches = fetches
        if self.checks_objects:  # every git child over that store: its graph never read
            self.guard = dataclasses.replace(self.guard, unverified=True)
        if store is not None:
            objects = ensure_store(store)
            self.guard = dataclasses.replace(self.guard, objects=str(objects))
            self._shared_objects = self.common_dir / "objects"
        cast(_GuardedGit, self._repo.git).guard = self.guard
        # the format git reads it in (SHA-1, no extension git refuses): checked by
        # GitGuard.read above (controller.git.guard.accepted)
        self.bare = self._repo.bare
        self._objects = self.common_dir / "objects" if store is None else store / "objects"
        self._lock = threading.RLock()
        self._trees: dict[str, dict[str, tuple[str, int]]] = {}
        #: (commit, top-level folder) -> its index, once asked often (Objects._big_index)
        self._indexes: dict[tuple[str, str], Any] = {}
        self._index_asks: dict[tuple[str, str], int] = {}
        #: commits and trees git was seen to read (a path git calls missing in one is absent)
        self._readable: set[str] = set()
        #: (object id, type) of ``<commit id>:<path>`` as git answered it (Objects._lookup)
        self._found: dict[str, tuple[str, str]] = {}
        #: objects this process wrote or read in a batch, by id (never stale), oldest first
        self._kept: dict[str, bytes] = {}
        self._kept_bytes = 0
        self._packed: tuple[tuple[int, int, int], dict[bytes, str]] | None = None
        self._must_sign: bool | None = None
        #: commits known whole in the controller's own store (fetched, or made here)
        self._present: dict[str, None] = {}
        #: a persistent reader of the shared store (local mode's quick intake)
        self._shared_reader: _GuardedGit | None = None
        #: entries of the big trees the intake took in lately (controller.git.store.Intake)
        self._intake_entries: dict[str, frozenset[bytes]] = {}
        #: objects the intake found shadowed in the shared store (the caller warns, clears)
        self.forged_shared: list[str] = []
        #: git's words on the last push the remote turned down as a lost race (Refs.push)
        self.push_lost = ""
        #: objects written into a store nobody verified, not yet read back
        self._unverified_writes: list[str] = []
        #: inside :meth:`packing`: objects to write at its end, by id: (kind, bytes, into
        #: the shared store too, the zlib level of a loose copy: None chooses by size)
        self._pending: dict[str, Pending] | None = None
        #: the ``.keep`` files of the packs written until a ref names their objects
        #: (:meth:`released_packs`)
        self._keeps: list[Path] = []
        self._holding = 0

    def close(self) -> None:
        with self._lock:
            self._repo.close()
            if self._shared_reader is not None:
                self._shared_reader.clear_cache()

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        pins: Sequence[tuple[str, str]] = (),
    ) -> str:
        """Run the git CLI here; raise ``E_GIT`` with git's message on failure."""
        result = self.run_raw(*args, input=input, env=env, pins=pins)
        if check and result.returncode != 0:
            raise git_failure(args, result.stderr.decode("utf-8", "replace"))
        return result.stdout.decode("utf-8", "surrogateescape")

    def run_raw(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        pins: Sequence[tuple[str, str]] = (),
        remote: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run git under the guard; ``pins``: config set after the guard's own (they win);
        ``remote``: a call that talks to the remote (fetch, push, ls-remote), the only ones
        given its credential (:attr:`auth`)."""
        full_env = self.guard.env(env, pins, auth=self.auth if remote else None)
        try:
            return subprocess.run(
                argv(args),
                cwd=self.path,
                input=input,
                env=full_env,
                capture_output=True,
                check=False,
                timeout=self.timeout,
            )
        except OSError as exc:
            raise cannot_run(exc, self.path) from None
        except subprocess.TimeoutExpired:
            check_git_dir(self.path)  # the likeliest cause, named
            raise GitError(
                f"{masked_url('git ' + ' '.join(args[:2]))} did not finish within "
                f"{self.timeout:g} s; it was "
                "stopped",
                remedy="see whether the repository's file system responds; raise "
                "execution.git_timeout if this repository needs longer",
            ) from None

    def _shared_git(self) -> _GuardedGit:
        """A persistent reader of the shared store (local mode with the controller's own
        store): its objects are read as they are there, never trusted unhashed."""
        if self._shared_reader is None:
            reader = _GuardedGit(str(self.path))
            reader.guard = dataclasses.replace(self.guard, objects=None, unverified=True)
            self._shared_reader = reader
        return self._shared_reader

    def _stop_shared(self) -> None:
        if self._shared_reader is not None:
            self._shared_reader.clear_cache()

    def _write_loose(
        self, sha: str, header: bytes, data: bytes, shared: bool, level: int | None = None
    ) -> None:
        body: list[bytes] = []  # compressed once, for either store
        if shared:
            self._before_unverified_write(sha)
        for objects in (self._objects, self._shared_objects if shared else None):
            if objects is not None:
                write_loose(objects, sha, header, data, body, level)

    @contextlib.contextmanager
    def packing(self) -> Iterator[None]:
        """Objects stored meanwhile are written at its end, together: a few as loose
        objects, from :data:`~controller.git.store.PACK_AT` on one pack per store (a
        burst's commit of a few hundred plans wrote two loose files per object, one per
        store: a third of its time, issue 17). Read back meanwhile from memory; nothing
        outside this process can name them before the end. An error drops them."""
        if self._pending is not None:
            yield
            return
        pending: dict[str, Pending] = {}
        self._pending = pending
        try:
            yield
        finally:
            self._pending = None
        self._write_pending(pending)

    def _write_pending(self, pending: Mapping[str, Pending]) -> None:
        if len(pending) < PACK_AT:
            for sha, (kind, data, shared, level) in pending.items():
                self._write_loose(sha, b"%s %d\0" % (kind, len(data)), data, shared, level)
            return
        shared_names = [sha for sha, (_, _, shared, _) in pending.items() if shared]
        if shared_names and (self._shared_objects is not None or self.checks_objects):
            self._unverified_writes.extend(self._unverified_among(shared_names))
        items = [(sha, kind, data) for sha, (kind, data, *_) in pending.items()]
        self._keeps.append(write_pack(self._objects, items))
        if self._shared_objects is not None:
            into = [(sha, kind, data) for sha, (kind, data, shared, _) in pending.items() if shared]
            if into:
                self._keeps.append(write_pack(self._shared_objects, into))
        if not self.checks_objects and pack_count(self._objects) > MAX_PACKS:
            self._roll_up_packs()

    @contextlib.contextmanager
    def released_packs(self) -> Iterator[None]:
        """The packs written meanwhile are kept (``pack-<id>.keep``, as ``git index-pack
        --keep`` keeps a pushed pack until receive-pack moves the refs) until its end, when
        a ref names their objects or nothing will. Until a ref names them their objects are
        unreachable, and a ``git repack -a -d`` or ``git gc`` the repository's owner runs
        meanwhile drops an unreachable pack whole: the branch would then name a commit whose
        tree is gone (round 97's lab, CI stop 54). A kept pack is left alone by both. A
        loose object needs no keep: only ``--prune=now`` removes a fresh one, which git
        documents as unsafe beside any writer."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
            if not self._holding:
                keeps, self._keeps = self._keeps, []
                for keep in keeps:
                    with contextlib.suppress(OSError):
                        keep.unlink()

    def _roll_up_packs(self) -> None:
        """Roll the controller's own store's small packs into fewer (git's geometric repack:
        whole packs combined, nothing pruned, the big pack of the first fetch left alone).
        The shared store's packs are its owner's ``git gc``'s, as its loose objects are."""
        git_dir = self.store if self.store is not None else self.common_dir
        result = self.run_raw("--git-dir", str(git_dir), "repack", "-d", "-q", "--geometric=2")
        if result.returncode != 0:  # more packs only cost lookups: the write stands
            from controller import logs

            error = result.stderr.decode("utf-8", "replace").strip()[-500:]
            logs.get_logger("plangate.git").warning("packs_not_rolled_up", error=error)

    def _before_unverified_write(self, sha: str) -> None:
        """``sha`` is about to go into a store nobody verified, where git keeps whatever
        already holds the name (a planted loose object or pack entry, round 60): a name
        already there is read back, hashed, by :meth:`verify_written`. A new name is ours
        once written (one header asked: reading back every object written, the 300 KB
        ``plans`` tree included, cost 11 ms a commit)."""
        if self._shared_objects is None and not self.checks_objects:
            return
        if self._in_unverified_store(sha):
            self._unverified_writes.append(sha)

    def _unverified_among(self, shas: Sequence[str]) -> list[str]:
        """The names of ``shas`` the store nobody verified already holds (to be read back,
        as :meth:`_before_unverified_write` notes one): one ``cat-file --batch-check`` for a
        burst's pack instead of a question per object. Every name when git cannot say."""
        guard = self.guard
        if self._shared_objects is not None:
            guard = dataclasses.replace(guard, objects=None, unverified=True)
        try:
            result = subprocess.run(
                ["git", "cat-file", "--batch-check"],
                cwd=self.path,
                input="".join(f"{sha}\n" for sha in shas).encode(),
                env=guard.env(),
                capture_output=True,
                check=False,
                timeout=self.timeout,
            )
        except (OSError, subprocess.TimeoutExpired):
            return list(shas)
        if result.returncode != 0:
            return list(shas)
        rows = [line.split() for line in result.stdout.splitlines()]
        return [row[0].decode() for row in rows if len(row) == 3]

    def _in_unverified_store(self, sha: str) -> bool:
        """Does the store nobody verified already hold a name (a header asked, no bytes)?"""
        reader = self._repo.git if self._shared_objects is None else self._shared_git()
        stop = self._stop_readers if self._shared_objects is None else self._stop_shared
        with self._lock, DEADLINES.bound(self.timeout, stop, "git cat-file"):
            try:
                reader.get_object_header(sha)
            except (ValueError, OSError):
                return False
        return True

    def _object(self, sha: str, limit: int | None = None) -> bytes:
        """An object's content; with ``limit``, a blob bigger than that is never read
        (BlobTooLarge: its size is asked first)."""
        return self._typed_object(sha, limit)[1]

    def _typed_object(self, sha: str, limit: int | None = None) -> tuple[bytes, bytes]:
        """(type, content) of an object, hashed against ``sha`` when :attr:`checks_objects`."""
        with self._lock, DEADLINES.bound(self.timeout, self._stop_readers, "git cat-file"):
            try:
                if limit is not None:
                    _, kind, size = self._repo.git.get_object_header(sha)
                    if size > limit and kind == b"blob":
                        raise BlobTooLarge(sha, size, limit)
                stream = self._repo.odb.stream(bytes.fromhex(sha))
                data = bytes(stream.read())
            except (ValueError, OSError):
                raise unreadable_object(sha) from None
        found: object = stream.type  # bytes from GitPython's cat-file (typed str)
        typed = found if isinstance(found, bytes) else str(found).encode()
        if self.checks_objects:
            check_object(sha, typed, data, self._objects)
        return typed, data

    @property
    def objects_checked(self) -> Path | None:
        """The object store whose objects are hashed against their names when read (None:
        the controller's own store or clone, which git filled by hashing every object)."""
        return self._objects if self.checks_objects else None

    def _stop_readers(self) -> None:
        """End GitPython's persistent ``cat-file`` children (a read waiting on one fails;
        the next read starts new ones)."""
        self._repo.git.clear_cache()


#: Git directory folders not walked for special files: object stores (git reads them through
#: ``cat-file``, whose commands the timeout bounds) and hooks (never run: the guard).
_NOT_WALKED = {"objects", "hooks", "lfs", "modules"}


def unreadable_object(sha: str) -> GitError:
    """``E_GIT`` for an object git's object store does not give back: missing, truncated or
    corrupt, or in a partial clone (``--filter``) whose remote cannot send it. What GitPython
    said then (a Python bytes repr, "Broken pipe", git's lazy fetch failing as "possible
    dubious ownership") named no cause (round 112, ``missing-object-misdiagnosed``)."""
    return GitError(
        f"cannot read object {sha}: git's object store does not hold it whole (missing, "
        "truncated or corrupt; in a partial clone, its remote could not send it)",
        remedy="check the repository (git fsck names what is broken); a partial clone "
        "(--filter) needs its remote to fetch what it lacks: git fetch, or clone again "
        "without --filter",
    )


def check_git_dir(path: Path) -> None:
    """Refuse a repository whose git directory holds a FIFO or a device outside the object
    store: git and this process read those files with a blocking ``open()``,
    and a FIFO there (``.git/config``, the index, a reflog, ``objects/info/alternates``)
    would stall every command for good; a device could feed it without end. Whoever can
    write the working tree of a shared checkout can write ``.git`` too. Read from the
    directory entries' types, without a ``stat`` each (a few hundred entries: well under a
    millisecond)."""
    git_dir = _git_dir_of(path)
    if git_dir is None:
        return
    found = _special_entry(git_dir, git_dir)
    if found is not None:
        raise GitError(
            f"{found} is not a regular file (a FIFO or a device): git would wait on it "
            "or read it without end; plangate reads nothing of this repository until it is gone",
            path=str(found),
            remedy=f"remove it (rm {found}); git recreates what it needs",
        )


def _git_dir_of(path: Path) -> Path | None:
    dot_git = path / ".git"
    if dot_git.is_dir():
        return dot_git
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path  # a bare repository (remote mode's clone)
    return None  # a linked worktree's .git file, or no repository: git says what it is


def _special_entry(folder: Path, top: Path, depth: int = 0) -> Path | None:
    import os

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    for entry in entries:
        if entry.is_symlink():
            continue
        if entry.is_dir():
            if depth == 0 and entry.name in _NOT_WALKED - {"objects"}:
                continue
            if depth == 0 and entry.name == "objects":
                found = _special_entry(Path(entry.path) / "info", top, 2)
            elif depth < 8:
                found = _special_entry(Path(entry.path), top, depth + 1)
            else:
                found = None
            if found is not None:
                return found
        elif not entry.is_file() and _blocks(entry):
            return Path(entry.path)
    return None


def _blocks(entry: Any) -> bool:
    """A FIFO or a device (a socket, such as git's own fsmonitor daemon's, opens to an
    error at once)."""
    import stat

    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def git_failure(args: Sequence[str], stderr: str) -> GitError:
    message = stderr.strip() or "git failed without a message"
    # a remote URL's password or query values never reach an error (round 26: the clone's
    # failure quoted the config's remote URL whole)
    return GitError(masked_url(f"git {' '.join(args[:2])}: {message}"))


def write_note(path: Path, data: bytes) -> None:
    """A controller's note in its state directory, replaced whole (a kill mid-write never
    leaves half of one; no fsync: a note only matters to the next start after a kill)."""
    temp = path.with_name(path.name + ".new")
    temp.write_bytes(data)
    os.replace(temp, path)
