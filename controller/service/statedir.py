"""The controller's state directory and the lock that keeps it to one controller.

Two controllers writing the same journal and index would corrupt both, so the state
directory is held with an exclusive ``flock`` for the controller's whole life. The lock is
released by the kernel when the process dies, so a crash never leaves a stale lock; the lock
file also records who holds it so ``E_LOCKED`` can name the holder.

Out of reach (SPEC §15): an agent that can write the working tree (``.git`` included) must
not reach the controller's state (a forged job row, a journal deleted after a crash) or its
config (an approver added). :func:`refuse_reachable` refuses to start when either lies in the
watched tree, unless the config says ``demo: true``. The default state directory is outside
the repository (:func:`controller.settings.models.default_state_dir`).

Layout::

    lock            "pid=<pid> host=<host> since=<UTC time>" of the holder
    index.sqlite    history index (see controller.git.indexstore): a cache of git, safe to
                    delete (rebuilt from history)
    memory.sqlite   what history showed that a rewrite can erase: every content's authors,
                    approvals seen, versions withdrawn, first freezes, first starts (not a
                    cache: deleting it forgets erased history, as deleting executed.jsonl
                    would)
    journal/        the engine's action journal (see controller.execution.journal)
    runs/<plan id>/ remote mode: PLAN.yml and EXECUTION_LOG.md of a running plan (local
                    mode too for a run whose plan left the branch: Starting._left_job)
    clone/          remote mode: the controller's bare clone of remote.url
    objects.git/    local mode: the controller's own object store, filled only by fetching
                    from the repository (see controller.git.store): every object read is
                    named by its content
    executed.jsonl  every frozen hash this controller started (SPEC §15: at most once)
    commits         every commit this controller made (SPEC §15: it knows its own commits
                    without trusting a name; see :class:`OwnCommits`)
    commit.key      the key of the ``Controller-Seal:`` trailer on every commit this
                    controller makes (:class:`CommitSeal`): a copy of this directory (a
                    restored backup) knows the commits made after the copy by their seal
                    (``seal.key``, the engine's key for redacted values, is another key)
    index-lock      device and inode of the repository's index.lock while the controller
                    holds it: a crash leaves the lock, and the next controller removes it
                    only when it is that very file
    held.json       plans whose controller commits a rewrite of the branch erased: the
                    controller does not act on them until the commits are back (:class:`Holds`)
    pass-failed.json
                    while the controller's passes fail: the last failure's code, message and
                    remedy, since when (:class:`PassFailure`); removed by the next pass that
                    completes
    older-than-branch
                    written (durably) when the controller finds its record older than the
                    branch (commits it sealed after its record ends: a restored copy) and
                    removed once every run open on the branch has had its journal set aside
                    (``journal/<plan>/<hash>.jsonl.older-than-branch-<time>``): no journal of
                    a copy vouches for what ran after it (round 72,
                    :meth:`controller.service.starting.Starting._distrust_older_journals`)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from controller.errors import ConfigInvalid, Locked, PlangateError, StorageFailed
from controller.git.store import STORE_NAME
from controller.settings.credentials import COMMIT_KEY_NAME

#: The remedy of a state file that cannot be read.
UNREADABLE = "restore read access to the state directory, or move aside what is in the way there"

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo
    from controller.git.records import CommitRecord
    from controller.settings import Config

LOCK_NAME = "lock"
#: How long taking the lock waits while its noted holder is a dead process of this host: a
#: child it was forking still holds the inherited descriptor until it execs or exits (a
#: SIGKILLed daemon, its process group killed, and a tool's child in a session of its own
#: escaping that kill). A live holder, or one of another host, is ``E_LOCKED`` at once.
LOCK_SETTLE = 5.0
INDEX_NAME = "index.sqlite"


@dataclass
class StateDir:
    """Paths inside the state directory, and its single-controller lock."""

    path: Path
    _handle: IO[str] | None = field(default=None, repr=False)
    #: A reader without the lock (``status``, the MCP server): the files it would write
    #: (the index, the memory, the holds, recorded policies) are private copies here, so
    #: nothing it computes from the shared store reaches the controller's state (round 60).
    scratch: Path | None = field(default=None, repr=False)

    @property
    def _writes(self) -> Path:
        return self.scratch if self.scratch is not None else self.path

    @property
    def index_file(self) -> Path:
        return self._writes / INDEX_NAME

    @property
    def memory_file(self) -> Path:
        return self._writes / "memory.sqlite"

    @property
    def policies_dir(self) -> Path:
        """allowed_signers texts by their hash: each recorded policy's, and each pass's own
        reading of the operator's file (:func:`controller.settings.signersfile.pin_signers`)."""
        return self._writes / "policies"

    @property
    def index_lock_note(self) -> Path:
        return self.path / "index-lock"

    @property
    def ref_lock_note(self) -> Path:
        return self.path / "ref-lock"

    @property
    def journal_dir(self) -> Path:
        return self.path / "journal"

    @property
    def clone_dir(self) -> Path:
        return self.path / "clone"

    @property
    def store_dir(self) -> Path:
        return self.path / STORE_NAME

    @property
    def executed_file(self) -> Path:
        return self.path / "executed.jsonl"

    def executed(self) -> dict[str, dict[str, str]]:
        """Frozen hash -> {plan, start} of every run this controller published."""
        found: dict[str, dict[str, str]] = {}
        try:
            lines = self.executed_file.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return found
        except OSError as exc:
            raise StorageFailed(
                f"cannot read {self.executed_file}: {exc.strerror}",
                remedy=UNREADABLE,
            ) from None
        for line in lines:
            try:
                row = json.loads(line)
                found.setdefault(str(row["hash"]), {"plan": row["plan"], "start": row["start"]})
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a crash: the rest still counts
        return found

    def record_executed(self, plan_hash: str, plan_id: str, start: str) -> None:
        """Append (durably) that ``plan_hash`` started as ``plan_id`` in commit ``start``."""
        self.record_executed_many([(plan_hash, plan_id)], start)

    def record_executed_many(self, started: list[tuple[str, str]], start: str) -> None:
        """:meth:`record_executed` for each (hash, plan id) started in the commit ``start``:
        one write and one fsync for a batched commit's starts."""
        rows = "".join(
            json.dumps({"hash": plan_hash, "plan": plan_id, "start": start}) + "\n"
            for plan_hash, plan_id in started
        )
        with open(self.executed_file, "a", encoding="utf-8") as handle:
            handle.write(rows)
            handle.flush()
            os.fsync(handle.fileno())

    def holds_runs(self) -> bool:
        """Has a controller run anything with this directory (an ``executed.jsonl`` line, a
        journal entry)? Unreadable: yes (the caller then refuses rather than starts anew)."""
        try:
            if self.executed_file.is_file() and self.executed_file.stat().st_size > 0:
                return True
            return self.journal_dir.is_dir() and any(self.journal_dir.iterdir())
        except OSError:
            return True

    @property
    def commits_file(self) -> Path:
        return self.path / "commits"

    @property
    def commit_key_file(self) -> Path:
        return self.path / COMMIT_KEY_NAME

    @property
    def older_file(self) -> Path:
        return self.path / "older-than-branch"

    def mark_older_than_branch(self, note: dict[str, object]) -> None:
        """Durably note that this state is older than the branch (before the commits that
        show it are recorded: a crash between the two must not lose what they showed)."""
        from controller import fsutil

        fsutil.write_atomic(self.older_file, json.dumps(note, sort_keys=True) + "\n")

    def older_than_branch(self) -> bool:
        """Is the note there? Unreadable: yes (fails closed: journals are set aside)."""
        try:
            return self.older_file.exists() or self.older_file.is_symlink()
        except OSError:
            return True

    def clear_older_than_branch(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.older_file.unlink()

    @property
    def held_file(self) -> Path:
        return self._writes / "held.json"

    @property
    def refused_file(self) -> Path:
        return self.path / "refused.json"

    @property
    def pass_failed_file(self) -> Path:
        return self.path / PassFailure.NAME

    def run_dir(self, plan_id: str) -> Path:
        return self.path / "runs" / plan_id

    def ensure(self) -> StateDir:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageFailed(
                f"cannot create state directory {self.path}: {exc.strerror}",
                remedy="set state_dir to a writable folder",
            ) from None
        return self

    def read_only(self) -> StateDir:
        """This state as a reader without the lock sees it: the index, the memory and the
        holds copied (read-only) into a private folder, every other file read in place.
        :meth:`release` removes the copies."""
        scratch = Path(tempfile.mkdtemp(prefix="plangate-reader-"))
        for name in (INDEX_NAME, "memory.sqlite"):
            _copy_database(self.path / name, scratch / name)
        with contextlib.suppress(OSError):
            shutil.copyfile(self.path / "held.json", scratch / "held.json")
        return StateDir(self.path, scratch=scratch)

    def acquire(self) -> StateDir:
        """Take the exclusive lock or raise ``E_LOCKED`` naming the holder (after up to
        :data:`LOCK_SETTLE` while the noted holder is dead: :func:`_dead_holder`)."""
        self.ensure()
        handle = open(self.path / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115
        deadline = time.monotonic() + LOCK_SETTLE
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "an unknown process"
                if _dead_holder(holder) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                handle.close()
                raise Locked(f"state directory {self.path} is held by {holder}") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid={os.getpid()} host={socket.gethostname()}\n")
        handle.flush()
        self._handle = handle
        return self

    def holder(self) -> int | None:
        """The pid the lock file names while a live process holds the lock (the controller,
        for a reader such as ``status``); None when nobody holds it (a crashed holder's
        note stays in the file: the kernel released its lock). Asked without taking the
        lock: :func:`controller.execution.journal.held_by` reads the kernel's table."""
        from controller.execution.journal import held_by

        try:
            note = (self.path / LOCK_NAME).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        found = re.match(r"pid=(\d+) ", note)
        if found is None:
            return None
        pid = int(found.group(1))
        return pid if held_by([self.path / LOCK_NAME], pid) else None

    @property
    def locked(self) -> bool:
        """Does this process hold the state directory (the controller, not a reader)?"""
        return self._handle is not None

    def release(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> StateDir:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _dead_holder(note: str) -> bool:
    """Does the lock file's ``note`` name a process of this host that is gone (the lock is
    then held only by a descriptor it left to a child, for a moment)?"""
    found = re.fullmatch(r"pid=(\d+) host=(\S+)", note)
    if found is None or found.group(2) != socket.gethostname():
        return False
    try:
        os.kill(int(found.group(1)), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


#: Where plangate kept its state before it moved out of the repository.
OLD_DEFAULT = (".git", "plangate")


def finish_a_dead_controllers_index(config: Config, repo: GitRepo) -> bool:
    """Local mode, before a person's or an agent's commit into the shared working tree
    (``plangate approve``/``reject``/``abort``, MCP ``submit``): a controller SIGKILLed
    between its commit and its index write leaves git's ``index.lock``, and every such commit
    failed ``E_GIT`` ("Unable to create index.lock") until the controller started again
    (round 115's lab L, under load: Alice's abort right after the daemon's kill). When no
    process holds the state directory and its ``index-lock`` note names that very lock, the
    controller's writes are finished as its next start would (:meth:`WorkTree.recover_index`
    over that note: the lock removed, the index and the files it owed written where nobody
    edited them since). The state lock is taken only for that moment and its holder note is
    left as it was, so a controller starting meanwhile waits as for a dead holder
    (:data:`LOCK_SETTLE`). A live controller's lock, anyone else's lock, or a state directory
    this user cannot write is left alone. True when the lock was removed."""
    if config.remote is not None or repo.path.resolve() != config.repo_path().resolve():
        return False
    state = StateDir(config.state_path())
    note = state.index_lock_note
    if not (repo.git_dir / "index.lock").exists() or not note.exists():
        return False
    try:
        fd = os.open(state.path / LOCK_NAME, os.O_RDWR)
    except OSError:
        return False
    before = repo.index_lock_note
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # the controller runs: the lock and its writes are its own
        repo.index_lock_note = note
        try:
            return repo.recover_index()
        except (OSError, PlangateError):
            return False  # left as it was: the commit then fails E_GIT as git's own would
    finally:
        repo.index_lock_note = before
        os.close(fd)  # also releases the flock


def _copy_database(source: Path, target: Path) -> None:
    """A consistent copy of the sqlite database ``source`` (opened read-only: the lock's
    holder may be writing it); none when it is missing or unreadable (the reader then builds
    its view from git, in its copy)."""
    if not source.is_file():
        return
    # without a WAL file (no controller has it open) the file is whole: read as immutable,
    # so sqlite makes no -wal/-shm beside it (they would be the reader's, in the state dir)
    wal = source.with_name(source.name + "-wal").exists()
    try:
        src = sqlite3.connect(f"{source.as_uri()}?{'mode=ro' if wal else 'immutable=1'}", uri=True)
        try:
            dst = sqlite3.connect(str(target))
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
    except sqlite3.Error:
        target.unlink(missing_ok=True)


def refuse_reachable(config: Config) -> None:
    """E_CONFIG_INVALID when the state directory or the config file lies where an agent that
    writes the watched working tree can reach it: inside the tree, its ``.git`` (or the git
    directory a ``.git`` file points to), through a symlink or a ``..``. ``demo: true``
    allows it (a demo or a test bench, never production)."""
    if config.demo:
        return
    tree = config.repo_path()
    reachable = _writable_roots(tree)
    state = Path(os.path.realpath(config.state_path()))
    remedy = (
        "keep the controller's state and config outside any tree an agent can write "
        "(set state_dir, e.g. /var/lib/plangate; put plangate.yml in /etc/plangate), or "
        "set `demo: true` for a demo"
    )
    if config.state_dir is None and config.remote is None and tree.joinpath(*OLD_DEFAULT).is_dir():
        old = tree.joinpath(*OLD_DEFAULT)
        raise ConfigInvalid(
            f"{old} holds the state of an earlier plangate, inside the repository where an "
            "agent can reach it; the state directory now defaults to outside it",
            path="state_dir",
            remedy=f"stop the controller, then: mv {old} {state} (or set state_dir)",
        )
    for root in reachable:
        if _within(state, root):
            raise ConfigInvalid(
                f"state_dir {config.state_path()} lies inside the watched working tree "
                f"({root}), where an agent could rewrite the controller's journal and index",
                path="state_dir",
                remedy=remedy,
            )
        for key, path in _code_and_secrets(config):
            if _within(path, root):
                raise ConfigInvalid(
                    f"{key} {path} lies inside the watched working tree ({root}), where an "
                    "agent could change the code or the secrets the controller runs with "
                    "(round 21)",
                    path=key,
                    remedy="keep tools, python_path and the secrets file outside any tree an "
                    "agent can write (e.g. /opt/plangate/tools), or set `demo: true` for a demo",
                )
        if config.source is not None and _within(Path(os.path.realpath(config.source)), root):
            raise ConfigInvalid(
                f"the config {config.source} lies inside the watched working tree ({root}), "
                "where an agent could add itself as an approver",
                path="config",
                remedy=remedy,
            )


def _code_and_secrets(config: Config) -> Iterator[tuple[str, Path]]:
    """What the controller runs or reads secrets from: the python path, each exec tool's
    program and the files its argv names (from its working folder), the secrets file."""
    base = config.source.parent if config.source is not None else Path.cwd()

    def resolved(path: Path | str, folder: Path = base) -> Path:
        return Path(os.path.realpath(folder / path))

    for entry in config.python_path:
        yield "python_path", resolved(entry)
    if config.secrets.file is not None:
        yield "secrets.file", resolved(config.secrets.file)
    for name, spec in config.tools.items():
        # a working folder in the tree is fine (a tool that works on the repository); the
        # code it runs is not
        folder = resolved(spec.cwd) if spec.cwd is not None else base
        for index, arg in enumerate(spec.argv or ()):
            if "{" in arg or arg.startswith("-"):
                continue
            path = resolved(arg, folder)
            # the program, and every file (a script) its argv names; a folder is data
            if (index == 0 and (os.path.isabs(arg) or os.sep in arg)) or path.is_file():
                yield f"tools.{name}.argv", path


def _writable_roots(tree: Path) -> list[Path]:
    """The working tree and, when ``.git`` is a file (a linked worktree, a submodule), the
    git directory it names and that directory's common dir."""
    real = Path(os.path.realpath(tree))
    roots = [real]
    dotgit = real / ".git"
    if dotgit.is_file():
        try:
            line = dotgit.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return roots
        if line.startswith("gitdir:"):
            gitdir = Path(os.path.realpath(real / line[len("gitdir:") :].strip()))
            roots.append(gitdir)
            common = gitdir / "commondir"
            if common.is_file():
                text = common.read_text(encoding="utf-8", errors="replace").strip()
                roots.append(Path(os.path.realpath(gitdir / text)))
    return roots


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class OwnCommits:
    """The commits this controller made, so that a commit under its name that it did not make
    (an agent or a human using the controller's identity) is judged as anyone's commit: it
    cannot set a state only the controller sets, move the controller's clock or count as the
    controller's freeze (SPEC §15).

    One 40-hex id per line in ``<state_dir>/commits``, oldest first, appended and fsynced
    before the branch moves to the commit (:meth:`record`). It outlives the history index
    and the journals: after their loss the controller goes on from its own last record only
    while the newest commits it recorded for the plan are still on the branch (round 59).
    The first time a state directory has no such file (a new install, an upgrade, a lost
    state directory), the controller adopts every first-parent commit of the watched branch
    under its identity as its own (trust on first use: :meth:`adopt`), or, when a
    ``commit.key`` in place verifies some, only those (round 71), and records from then on.
    Without a record at all (read-only commands before any controller ran) the identity
    decides, as it did before.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._shas: set[str] | None = None
        #: ``<state_dir>/commits.trusted``: the commits adopted on trust (:meth:`on_trust`)
        self.trusted_path = path.with_name(f"{path.name}.trusted")
        self._trusted: set[str] | None = None

    @property
    def known(self) -> bool:
        """Has this state directory a record (adopted or made)?"""
        return self._shas is not None or self.path.exists()

    def load(self) -> set[str]:
        if self._shas is None:
            self._shas = set(_read_ids(self.path))
        return self._shas

    def __contains__(self, sha: object) -> bool:
        return sha in self.load()

    def ordered(self) -> list[str]:
        """The recorded commits, oldest first, as the file lists them."""
        return _read_ids(self.path)

    def adopt(self, shas: list[str], *, on_trust: bool = False) -> None:
        """Take ``shas`` (history made before this record existed) as this controller's;
        ``on_trust``: no key of this state directory verified them (trust on first use,
        ``--take-over``), noted first in ``commits.trusted`` (:meth:`on_trust`)."""
        from controller import fsutil

        if on_trust:
            fsutil.write_atomic(self.trusted_path, "".join(f"{sha}\n" for sha in reversed(shas)))
            self._trusted = set(shas)
        # oldest first, as :meth:`record` goes on (``shas`` come newest first from git log)
        fsutil.write_atomic(self.path, "".join(f"{sha}\n" for sha in reversed(shas)))
        self._shas = set(shas)

    def on_trust(self, sha: str) -> bool:
        """Was ``sha`` adopted on trust (its seal, if any, verified by no key this state
        directory holds)? Such a commit stands only as git alone reads it, its cause on the
        branch, whatever its seal line looks like (round 99, atk99d: after ``--take-over``
        the agent's forged ``complete`` with a copied seal read ``completed``, the tool never
        run). A record from before round 99 has no such file: nothing is noted."""
        if self._trusted is None:
            self._trusted = set(_read_ids(self.trusted_path))
        return sha in self._trusted

    def record(self, sha: str) -> None:
        """Durably note ``sha`` as made by this controller (before the branch moves to it)."""
        self.record_many([sha])

    def record_many(self, shas: list[str]) -> None:
        """:meth:`record` for each of ``shas`` (oldest first), one write and one fsync."""
        known = self.load()
        with open(self.path, "a", encoding="ascii") as handle:
            handle.write("".join(f"{sha}\n" for sha in shas))
            handle.flush()
            os.fsync(handle.fileno())
        known.update(shas)


def _read_ids(path: Path) -> list[str]:
    """The commit ids a record file lists, one per line, in order ([]: no file yet)."""
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageFailed(f"cannot read {path}: {exc.strerror}", remedy=UNREADABLE) from None
    return [line for line in text.split() if len(line) == 40]


class CommitSeal:
    """The ``Controller-Seal:`` trailer: an HMAC-SHA256, keyed by ``<state_dir>/commit.key``, of
    a controller commit's tree, parent and message (round 66, issue 11). Anyone can write a
    commit under the controller's identity and copy its trailers; only a holder of the key
    (this state directory, or a copy of it) can seal one. A state directory restored from a
    backup lacks, in ``commits``, what the controller made after the copy: those commits carry
    a seal this key verifies, so the controller knows them as its own again
    (:meth:`controller.service.core.ControllerCore._adopt_sealed`), while a stranger's commit
    under its name stays anyone's.

    ``commit.key``: 64 hex digits (lower case) on one line, made with the record (the first
    start) or on the first commit, mode 0600; anything else (empty, cut, raw bytes) is
    ``E_STORAGE`` (round 68). A record of sealed commits without it refuses to start
    (round 67: :meth:`controller.service.core.ControllerCore._require_commit_key`).
    """

    TRAILER = "Controller-Seal"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: bytes | None = None

    def key(self, *, create: bool = False) -> bytes | None:
        """The key; None when there is none (and ``create`` is False). A file that is not
        what the controller writes (64 hex digits, one line) is ``E_STORAGE`` (round 68: an
        empty or cut key was taken, and an empty HMAC key is anyone's)."""
        if self._key is None:
            try:
                self._key = _key_of(_read_key_file(self.path), self.path)
            except FileNotFoundError:
                if create:
                    self._key = self._create()
            except OSError as exc:
                raise StorageFailed(
                    f"cannot read {self.path}: {exc.strerror}", remedy=UNREADABLE
                ) from None
        return self._key

    def _create(self) -> bytes:
        from controller import fsutil

        key = os.urandom(32)
        fsutil.write_atomic(self.path, key.hex() + "\n")
        os.chmod(self.path, 0o600)
        return key

    def seal(self, tree: str, parent: str, message: str) -> str:
        """``message`` with its seal as the last trailer."""
        key = self.key(create=True)
        assert key is not None
        text = message.rstrip("\n")
        return f"{text}\n{self.TRAILER}: {_mac(key, tree, parent, text)}\n"

    def verify(self, tree: str, parent: str, message: str) -> bool:
        """Does ``message`` (a commit's, with its tree and first parent) end with a seal made
        with this key?"""
        key = self.key()
        text, _, last = message.rstrip("\n").rpartition("\n")
        name, _, mac = last.partition(": ")
        if key is None or name != self.TRAILER:
            return False
        return hmac.compare_digest(mac.strip(), _mac(key, tree, parent, text.rstrip("\n")))


#: What ``commit.key`` holds: 64 hex digits (32 random bytes), one line.
_KEY_TEXT = re.compile(rb"[0-9a-f]{64}\n?")

#: The remedy of a ``commit.key`` that is not a key the controller made.
KEY_REMEDY = (
    "restore commit.key from the same backup as the state directory (mode 0600); to start "
    "over knowingly with a new key, with the service stopped: "
    "umask 077; openssl rand -hex 32 > {path} (docs/operations.md, Restore)"
)


def _read_key_file(path: Path) -> bytes:
    """``commit.key``'s bytes, opened without blocking (round 69: a FIFO there hung ``run``
    and ``status`` for ever) and read only when it is a regular file; a symlink to one is
    followed (an operator may keep the key on a secrets mount)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StorageFailed(
                f"{path} is not a regular file: not a key this controller makes",
                remedy=KEY_REMEDY.format(path=path),
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(4096)  # a key is 65 bytes; more says only that it is none
    finally:
        os.close(fd)


def _key_of(text: bytes, path: Path) -> bytes:
    """The key ``text`` (a ``commit.key``'s bytes) holds, or ``E_STORAGE``."""
    if _KEY_TEXT.fullmatch(text) is None:
        raise StorageFailed(
            f"{path} is not a key this controller makes (64 hex digits, one line; it holds "
            f"{len(text)} byte(s)): an incomplete restore or a key written by hand",
            remedy=KEY_REMEDY.format(path=path),
        )
    return bytes.fromhex(text.decode("ascii").strip())


def _mac(key: bytes, tree: str, parent: str, text: str) -> str:
    return hmac.new(key, f"{tree}\n{parent}\n{text}".encode(), hashlib.sha256).hexdigest()


class Holds:
    """Plans the controller no longer acts on because a rewrite of the watched branch erased
    commits it made for them (SPEC §15: git history alone is the audit trail; a history
    that lost the controller's freeze, start, pause or abort of a plan no longer proves what
    an approval of it would follow).

    ``<state_dir>/held.json``: plan id -> ``{"commits": [the erased commits], "since": UTC
    time, "head": the rewritten tip first seen}``, replaced atomically. A hold ends when every
    erased commit is on the branch again (the branch was restored) or when the plan is gone
    from the branch (deleted: a plan added again under that name is a new plan, frozen
    anew, and an approval must follow that freeze).
    """

    #: The remedy when the file cannot be read.
    unreadable = (
        "restore the file from a backup, or delete it to release every plan held after a "
        "history rewrite (see docs/threat-model.md)"
    )

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held: dict[str, dict[str, object]] | None = None
        self._stat: tuple[int, int, int] | None = None

    def load(self) -> dict[str, dict[str, object]]:
        """The holds, read again whenever the file changed (a reader, ``plangate status``,
        may record one when it is the first to see a rewrite)."""
        try:
            st = self.path.stat()
            seen: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            seen = None
        if self._held is None or seen != self._stat:
            self._stat = seen
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                data = {}
            except (OSError, ValueError) as exc:
                raise StorageFailed(
                    f"cannot read {self.path}: {exc}", remedy=self.unreadable
                ) from None
            self._held = data if isinstance(data, dict) else {}
        return self._held

    def __contains__(self, plan_id: object) -> bool:
        return plan_id in self.load()

    def __bool__(self) -> bool:
        return bool(self.load())

    def get(self, plan_id: str) -> dict[str, object] | None:
        return self.load().get(plan_id)

    def hold(self, found: dict[str, list[str]], head: str, since: str) -> None:
        """Hold each plan of ``found`` (plan id -> erased commits), durably."""
        held = self.load()
        for plan_id, shas in found.items():
            entry = held.setdefault(plan_id, {"commits": [], "since": since, "head": head})
            known = list(entry.get("commits") or [])  # type: ignore[call-overload]
            entry["commits"] = known + [sha for sha in shas if sha not in known]
        self._save(held)

    def release(self, plan_ids: list[str]) -> None:
        held = self.load()
        for plan_id in plan_ids:
            held.pop(plan_id, None)
        self._save(held)

    def _save(self, held: dict[str, dict[str, object]]) -> None:
        from controller import fsutil

        fsutil.write_atomic(self.path, json.dumps(held, indent=1, sort_keys=True) + "\n")
        self._held, self._stat = None, None  # read back on the next look


class Refusals(Holds):
    """Plans whose controller commit the remote refused (its hook or policy declined the
    push: a forge's push protection matching something in a tool's output). The commit was
    taken off the controller's clone; the plan waits, and only it (round 40).

    ``<state_dir>/refused.json``: plan id -> ``{"event": the refused event ("start",
    "complete", ...), "reason": the remote's words (redacted), "since": UTC time,
    "commit": the refused commit}``, replaced atomically, written before the commit leaves
    the local branch (a restart still knows the outcome waits; the job row keeps the run,
    whose journal replays its outcome without acting again). An entry ends when a commit of
    the plan is published, or when the plan and its job are gone."""

    unreadable = (
        "restore the file from a backup, or delete it: each plan whose commit the remote "
        "refused is then tried again at once (docs/approvals.md, Remote mode)"
    )

    def refuse(self, plan_id: str, event: str, reason: str, commit: str, since: str) -> None:
        entries = self.load()
        before = entries.get(plan_id) or {}
        if before.get("event") == event:  # refused again: since the first refusal
            since = str(before.get("since") or since)
        entries[plan_id] = {"event": event, "reason": reason, "commit": commit, "since": since}
        self._save(entries)


def is_own_commit(config: Config, own: OwnCommits | None = None) -> Callable[[CommitRecord], bool]:
    """Is a commit this controller's? By its record of the commits it made (``own``, or the
    one in ``config``'s state directory); without a record (no controller ran yet) by the
    config's identity, as read-only commands decide (round 61: the readers of the record)."""
    record = own if own is not None else OwnCommits(config.state_path() / "commits")
    if record.known:
        return lambda commit: commit.sha in record
    email = config.identity.email.casefold()
    return lambda commit: commit.author.email.casefold() == email


class PassFailure:
    """Why the controller is not moving: the failure of its last pass, while its passes fail
    (an ``E_...`` error that stopped the pass, not a plan's own failure). ``status`` (text
    and ``--json``), MCP ``status`` and the page say it beside every plan (round 124,
    atk124d: while every ``run --once`` exited 2 ``E_GIT`` on a foreign ``index.lock``, the
    plan's row said ``executing`` and nothing else; the remedy was only on the pass's stderr).

    ``<state_dir>/pass-failed.json``: ``{"code": "E_...", "message", "remedy", "since": the
    first failed pass of this streak (UTC), "at": the last one, "passes": how many failed in
    a row, "pid": the controller's}``, replaced atomically by the state lock's holder after
    each failed pass and removed by the next pass that completes. The state directory is out
    of the agent's reach (SPEC §15), so nothing written into the working tree or ``.git``
    forges or clears it. A reader never fails on it: missing, unreadable, too large or of
    another shape reads as None (:meth:`read`)."""

    NAME = "pass-failed.json"
    #: The most bytes read of the file, and of each text kept in it.
    MAX_BYTES = 65_536
    MAX_TEXT = 4_000

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, code: str, message: str, remedy: str, now: str) -> dict[str, object]:
        """Note a failed pass (``now``: its UTC time), durably; the streak's start is kept."""
        from controller import fsutil

        before = self.read() or {}
        passes = before.get("passes")
        entry: dict[str, object] = {
            "code": code if _CODE.fullmatch(code) else "E_INTERNAL",
            "message": message[: self.MAX_TEXT],
            "remedy": remedy[: self.MAX_TEXT],
            "since": before.get("since") or now,
            "at": now,
            "passes": (passes if isinstance(passes, int) else 0) + 1,
            "pid": os.getpid(),
        }
        fsutil.write_atomic(self.path, json.dumps(entry, indent=1, sort_keys=True) + "\n")
        return entry

    def clear(self) -> None:
        """A pass completed: nothing to say any more."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def read(self) -> dict[str, object] | None:
        """The last failure, or None (no failure noted, or a file that is not the record)."""
        from controller import fsutil
        from controller.errors import PlangateError

        try:
            data = json.loads(fsutil.read_regular(self.path, self.MAX_BYTES)[: self.MAX_BYTES])
        except (OSError, ValueError, PlangateError):
            return None
        return _failure_of(data)


#: An error code as :mod:`controller.errors` spells them.
_CODE = re.compile(r"E_[A-Z][A-Z0-9_]{0,63}")
_FAILURE_TEXTS = ("message", "remedy", "since", "at")


def _failure_of(data: object) -> dict[str, object] | None:
    """``data`` as a :class:`PassFailure` record, or None when it is not of its shape."""
    if not isinstance(data, dict) or not isinstance(data.get("code"), str):
        return None
    if not _CODE.fullmatch(data["code"]):
        return None
    if not all(isinstance(data.get(key), str) for key in _FAILURE_TEXTS):
        return None
    passes = data.get("passes")
    if not isinstance(passes, int) or isinstance(passes, bool) or passes < 1:
        return None
    found: dict[str, object] = {key: data[key][: PassFailure.MAX_TEXT] for key in _FAILURE_TEXTS}
    return {"code": data["code"], **found, "passes": passes}


#: Statuses whose next step is the controller's: a plan in one (that no worker runs now)
#: waits on its passes.
CONTROLLERS_MOVE = ("approved", "executing")


def waits_on_passes(row: dict[str, object], failure: dict[str, object] | None) -> str | None:
    """What a status row's plan waits on while the controller's passes fail (``failure``):
    the failure, when its next step is the controller's and it waits on nothing else."""
    if failure is None or row.get("waiting") or row.get("running"):
        return None
    return pass_failed_waiting(failure) if row.get("status") in CONTROLLERS_MOVE else None


def pass_failed_waiting(failure: dict[str, object]) -> str:
    """What a plan that needs the controller's next step waits on while its passes fail."""
    return (
        f"{failure['code']}: the controller's passes fail since {failure['since']} "
        f"({failure['passes']} in a row): {failure['message']}; {failure['remedy']}"
    )
