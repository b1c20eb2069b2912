"""The controller's state directory and the lock that keeps it to one controller.

Two controllers writing the same journal and index would corrupt both, so the state
directory is held with an exclusive ``flock`` for the controller's whole life. The lock is
released by the kernel when the process dies, so a crash never leaves a stale lock; the lock
file also records who holds it so ``E_LOCKED`` can name the holder.

Layout (default ``<repo>/.git/plangate`` in local mode)::

    lock            "pid=<pid> host=<host> since=<UTC time>" of the holder
    index.sqlite    history index (see controller.git.indexstore)
    journal/        the engine's action journal (see controller.execution.journal)
    runs/<plan id>/ remote mode: PLAN.yml and EXECUTION_LOG.md of a running plan
    clone/          remote mode: the controller's bare clone of remote.url
    executed.jsonl  every frozen hash this controller started (SPEC §15: at most once)
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from controller.errors import Locked, PlangateError

LOCK_NAME = "lock"
INDEX_NAME = "index.sqlite"


@dataclass
class StateDir:
    """Paths inside the state directory, and its single-controller lock."""

    path: Path
    _handle: IO[str] | None = field(default=None, repr=False)

    @property
    def index_file(self) -> Path:
        return self.path / INDEX_NAME

    @property
    def journal_dir(self) -> Path:
        return self.path / "journal"

    @property
    def clone_dir(self) -> Path:
        return self.path / "clone"

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
            raise PlangateError(
                f"cannot read {self.executed_file}: {exc.strerror}",
                remedy="restore read access to the state directory",
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
        row = json.dumps({"hash": plan_hash, "plan": plan_id, "start": start}) + "\n"
        with open(self.executed_file, "a", encoding="utf-8") as handle:
            handle.write(row)
            handle.flush()
            os.fsync(handle.fileno())

    def run_dir(self, plan_id: str) -> Path:
        return self.path / "runs" / plan_id

    def ensure(self) -> StateDir:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PlangateError(
                f"cannot create state directory {self.path}: {exc.strerror}",
                remedy="set state_dir to a writable folder",
            ) from None
        return self

    def acquire(self) -> StateDir:
        """Take the exclusive lock or raise ``E_LOCKED`` naming the holder."""
        self.ensure()
        handle = open(self.path / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "an unknown process"
            handle.close()
            raise Locked(f"state directory {self.path} is held by {holder}") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid={os.getpid()} host={socket.gethostname()}\n")
        handle.flush()
        self._handle = handle
        return self

    def release(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> StateDir:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
