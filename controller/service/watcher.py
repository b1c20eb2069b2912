"""Local mode: notice new or changed plans and any git ref change without polling.

Two kinds of watch, both through watchdog (inotify on Linux, no periodic wake-ups):

- the plans directory, recursively. Only ``PLAN.yml``/``PLAN.yaml`` matter. A plan is read
  once it is completely written: on close after writing, on a rename onto the name (an
  atomic ``os.replace`` from a temp file) or on deletion, the change is reported at once; a
  bare modification without a close (a writer that keeps the file open) is reported only
  after ``quiet`` seconds without further writes. Temp files and ``EXECUTION_LOG.md`` are
  ignored. When the plans directory does not exist yet, its nearest existing parent is
  watched until it appears.
- the repository's refs: ``HEAD``, ``packed-refs`` and everything under ``refs/`` of the
  git dir and the common dir (worktrees). git updates a ref by renaming ``<ref>.lock`` onto
  it, so ``git commit``, ``merge``, ``pull``, ``update-ref`` and a push into the repo are all
  seen the moment they complete; the lock files themselves are ignored.

Only change events are subscribed (close-after-write, create, modify, move, delete): the
controller reads every plan in a pass, and open/read events for 10,000 plans would overflow
the kernel's event queue. Every report is a call of ``on_change(reason)``; the daemon
coalesces them into one reconcile pass, so reporting the same change twice costs one cheap
pass at most.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from controller.errors import GitError
from controller.git.guard import guarded_env
from controller.logs import get_logger
from controller.plan.plans import PLAN_FILES, SOURCE_FILES

log = get_logger("plangate.watcher")

OnChange = Callable[[str], None]

# Only what signals a change. Opens and reads must not reach the queue: the controller reads
# every PLAN.yml in a pass, and with 10,000 plans those events alone overflow inotify's queue.
PLAN_EVENTS: list[type[FileSystemEvent]] = [
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]
REF_EVENTS: list[type[FileSystemEvent]] = [
    FileClosedEvent,
    FileCreatedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
]


class Debouncer:
    """Calls ``callback(key)`` once ``delay`` seconds pass without another poke for ``key``.

    One timer thread for all keys: a checkout or pull of a thousand plans pokes a thousand
    keys twice each (create, then modify), and a thread per poke cost the daemon more than
    the plans' freezing."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self._callback = callback
        self._due: dict[str, float] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._next: float | None = None  # the deadline the thread sleeps until
        self._closed = False

    def poke(self, key: str, delay: float) -> None:
        with self._cond:
            if self._closed:
                return
            due = time.monotonic() + delay
            self._due[key] = due
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="debouncer", daemon=True)
                self._thread.start()
            if self._next is None or due < self._next:
                self._cond.notify()

    def fire(self, key: str) -> None:
        """Report now and forget any pending report for ``key``."""
        self.cancel(key)
        self._callback(key)

    def cancel(self, key: str) -> None:
        with self._cond:
            self._due.pop(key, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                ready = self._wait_ready()
                if ready is None:
                    return
            for key in ready:
                self._callback(key)

    def _wait_ready(self) -> list[str] | None:
        """The keys due now, waiting for the first of them (None once closed)."""
        while not self._closed:
            now = time.monotonic()
            ready = [key for key, due in self._due.items() if due <= now]
            if ready:
                for key in ready:
                    del self._due[key]
                self._next = None
                return ready
            self._next = min(self._due.values(), default=None)
            self._cond.wait(None if self._next is None else self._next - now)
        return None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._due.clear()
            self._cond.notify()


def _text(path: bytes | str) -> str:
    return path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path


def is_plan_file(path: str) -> bool:
    return Path(path).name in (*PLAN_FILES, *SOURCE_FILES)  # a PLAN.json is converted


class _PlansHandler(FileSystemEventHandler):
    def __init__(self, watcher: RepoWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        src, dest = _text(event.src_path), _text(getattr(event, "dest_path", "") or "")
        if (
            isinstance(event, DirCreatedEvent | DirMovedEvent)
            and self.watcher.waiting_for_plans_dir
        ):
            self.watcher.rearm()
        if isinstance(event, DirMovedEvent | DirDeletedEvent):
            self.watcher.plan_changed(dest or src, at_once=True)
        elif isinstance(event, FileMovedEvent):
            for path in (src, dest):
                if is_plan_file(path):
                    self.watcher.plan_changed(path, at_once=True)
        elif not is_plan_file(src):
            return
        elif isinstance(event, FileClosedEvent | FileDeletedEvent):
            self.watcher.plan_changed(src, at_once=True)
        elif isinstance(event, FileCreatedEvent | FileModifiedEvent):
            self.watcher.plan_changed(src, at_once=False)


class _RefsHandler(FileSystemEventHandler):
    def __init__(self, watcher: RepoWatcher, roots: list[Path]) -> None:
        self.watcher = watcher
        self.roots = roots

    def _is_ref(self, path: str) -> bool:
        if not path or path.endswith(".lock"):
            return False
        p = Path(path)
        if p.name in ("HEAD", "packed-refs") and p.parent in self.roots:
            return True
        return any(p.is_relative_to(root / "refs") for root in self.roots)

    def on_any_event(self, event: FileSystemEvent) -> None:
        # An in-place write to a ref is finished by its close; git itself renames a lock file.
        if event.event_type in ("opened", "closed_no_write", "modified"):
            return
        paths = (_text(event.src_path), _text(getattr(event, "dest_path", "") or ""))
        for path in paths:
            if self._is_ref(path):
                self.watcher.ref_changed(path)
                return


def git_dirs(repo: Path) -> list[Path]:
    """The git dir and (for a worktree) the common dir that holds the shared refs."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir", "--git-common-dir"],
            cwd=repo,
            env=guarded_env(repo),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError) as exc:
        message = getattr(exc, "stderr", "") or str(exc)
        raise GitError(f"{repo} is not a git working tree: {message.strip()}") from None
    git_dir = Path(out[0])
    common = Path(out[1]) if Path(out[1]).is_absolute() else (repo / out[1])
    dirs = [git_dir.resolve(), common.resolve()]
    return list(dict.fromkeys(dirs))


class RepoWatcher:
    """Watches one local repo's plans directory and refs; reports through ``on_change``."""

    def __init__(
        self, repo: Path, plans_dir: str, on_change: OnChange, *, quiet: float = 0.5
    ) -> None:
        self.repo = repo.resolve()
        self.plans_path = self.repo / plans_dir
        self.on_change = on_change
        self.quiet = quiet
        self._observer: BaseObserver = Observer()
        self._debouncer = Debouncer(lambda key: self.on_change(f"file:{key}"))
        self._plans_watch: ObservedWatch | None = None
        self._arm_lock = threading.Lock()
        self.waiting_for_plans_dir = False

    def start(self) -> RepoWatcher:
        roots = git_dirs(self.repo)
        refs_handler = _RefsHandler(self, roots)
        for root in roots:
            self._observer.schedule(
                refs_handler, str(root), recursive=False, event_filter=REF_EVENTS
            )
            if (root / "refs").is_dir():
                self._observer.schedule(
                    refs_handler, str(root / "refs"), recursive=True, event_filter=REF_EVENTS
                )
        self.rearm()
        self._observer.start()
        log.info("watch.started", repo=str(self.repo), plans=str(self.plans_path))
        return self

    def rearm(self) -> None:
        """Watch the plans dir, or its nearest existing parent until it exists."""
        with self._arm_lock:
            # Loop: a deeper folder may appear between looking and watching, unseen.
            while (target := self._deepest_existing()) != self._watched_path():
                if self._plans_watch is not None:
                    self._observer.unschedule(self._plans_watch)
                recursive = target == self.plans_path
                self._plans_watch = self._observer.schedule(
                    _PlansHandler(self), str(target), recursive=recursive, event_filter=PLAN_EVENTS
                )
                self.waiting_for_plans_dir = not recursive
                if recursive:
                    self.on_change(f"dir:{target}")  # plans may have arrived with the folder

    def _deepest_existing(self) -> Path:
        target = self.plans_path
        while not target.is_dir() and target != self.repo:
            target = target.parent
        return target

    def _watched_path(self) -> Path | None:
        return None if self._plans_watch is None else Path(self._plans_watch.path)

    def plan_changed(self, path: str, *, at_once: bool) -> None:
        if at_once:
            self._debouncer.fire(path)
        else:
            self._debouncer.poke(path, self.quiet)

    def ref_changed(self, path: str) -> None:
        self.on_change(f"ref:{Path(path).name}")

    def stop(self) -> None:
        self._debouncer.close()
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(timeout=5)
