"""Local mode: notice new or changed plans and any git ref change without polling.

Two kinds of watch, both inotify on Linux (no periodic wake-ups):

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
the kernel's event queue. On Linux the plans tree is watched by :class:`PlansTree`, one
inotify descriptor and one small entry per folder (watchdog kept a watch object, its
callbacks and two path maps per folder: 31 MB of the daemon's memory with 50,000 plans);
watchdog watches the refs, and a parent while the plans directory does not exist yet.

Every report is a call of ``on_change(reason)``; the daemon coalesces them into one
reconcile pass, so reporting the same change twice costs one cheap pass at most.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import struct
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
    return path.rpartition("/")[2] in _WATCHED_NAMES


#: The file names a change of which wakes a pass (a PLAN.json is converted).
_WATCHED_NAMES = frozenset((*PLAN_FILES, *SOURCE_FILES))


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


# inotify(7)
IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x8, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_TREE_MASK = (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE) | (
    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL-padded


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return None  # not glibc Linux: watchdog watches the tree
    calls = ("inotify_init1", "inotify_add_watch", "inotify_rm_watch")
    return libc if all(hasattr(libc, call) for call in calls) else None


class PlansTree:
    """The plans directory and every folder below it on one inotify descriptor, read by one
    thread. A folder costs an entry (descriptor -> path below the root); a folder created or
    moved in is watched, and the plan files already in it reported; a queue overflow
    re-walks the tree and wakes a pass. Reports go to :meth:`RepoWatcher.plan_changed`
    (absolute paths) as the watchdog handler's did; a plan file renamed into place from
    outside the tree is reported at once (watchdog saw a creation and waited)."""

    def __init__(self, root: Path, watcher: RepoWatcher, libc: ctypes.CDLL) -> None:
        self.root, self.watcher, self._libc = root, watcher, libc
        self._paths: dict[int, str] = {}  # descriptor -> folder below the root ("" itself)
        self._fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._run, name="plans-watch", daemon=True)

    def start(self) -> PlansTree:
        try:
            self._watch_tree("", report=False)
            if "" not in self._paths.values():
                raise OSError(ctypes.get_errno(), f"cannot watch {self.root}")
        except BaseException:
            self._close()
            raise
        self._thread.start()
        return self

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._close()

    def _close(self) -> None:
        for fd in (self._fd, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _watch_tree(self, rel: str, *, report: bool) -> None:
        """Watch ``rel`` and every folder below it (links never followed); ``report``: the
        plan files already there (written before the watch existed) are reported."""
        pending = [rel]
        while pending:
            folder = pending.pop()
            path = os.fsencode(self.root / folder) if folder else os.fsencode(self.root)
            wd = self._libc.inotify_add_watch(self._fd, path, _TREE_MASK)
            if wd < 0:
                continue  # gone already, or not a folder; the root is checked by start()
            self._paths[wd] = folder
            with contextlib.suppress(OSError), os.scandir(path) as entries:
                for entry in entries:  # one at a time: 50,000 entries held were 4 MB
                    name = os.fsdecode(entry.name)
                    sub = f"{folder}/{name}" if folder else name
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(sub)
                    elif report and is_plan_file(name):
                        self.watcher.plan_changed(str(self.root / sub), at_once=False)

    def _forget(self, rel: str) -> None:
        """A folder moved away: its watches (and its subfolders') go with it."""
        prefix = f"{rel}/"
        gone = [wd for wd, p in self._paths.items() if p == rel or p.startswith(prefix)]
        for wd in gone:
            del self._paths[wd]
            self._libc.inotify_rm_watch(self._fd, wd)

    def _run(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                data = os.read(self._fd, 1 << 16)
            except InterruptedError:
                continue
            except (OSError, ValueError):
                return  # closed under us: stopping
            try:
                self._dispatch(data)
            except Exception:  # a bug must not end the watch silently: a pass looks anyway
                log.exception("watch.failed")
                self.watcher.on_change(f"dir:{self.root}")

    def _dispatch(self, data: bytes) -> None:
        offset = 0
        while offset + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            raw = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
            offset += _EVENT.size + length
            self._event(wd, mask, os.fsdecode(raw))

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:  # events were lost: watch folders made meanwhile, and a
            self._watch_tree("", report=False)  # pass looks at every plan file (level-triggered)
            self.watcher.on_change(f"dir:{self.root}")
            return
        folder = self._paths.get(wd)
        if folder is None:
            return
        if mask & IN_IGNORED:
            del self._paths[wd]
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            if not folder:
                self.watcher.plan_changed(str(self.root), at_once=True)
            return
        if not mask & IN_ISDIR and name not in _WATCHED_NAMES:
            return  # most events of a busy tree: the controller's own temp files and logs
        rel = f"{folder}/{name}" if folder else name
        path = str(self.root / rel)
        if mask & IN_ISDIR:
            self._folder_event(mask, rel, path)
        elif mask & (IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO):
            self.watcher.plan_changed(path, at_once=True)  # complete: closed, gone, renamed
        elif mask & (IN_CREATE | IN_MODIFY):
            self.watcher.plan_changed(path, at_once=False)

    def _folder_event(self, mask: int, rel: str, path: str) -> None:
        if mask & IN_CREATE:
            self._watch_tree(rel, report=True)
        elif mask & IN_MOVED_TO:
            self._watch_tree(rel, report=True)
            self.watcher.plan_changed(path, at_once=True)
        elif mask & (IN_MOVED_FROM | IN_DELETE):
            if mask & IN_MOVED_FROM:
                self._forget(rel)
            self.watcher.plan_changed(path, at_once=True)


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
        self._plans_tree: PlansTree | None = None
        self._libc = _libc()
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
                    self._plans_watch = None
                recursive = target == self.plans_path
                if recursive and self._libc is not None:
                    self._plans_tree = PlansTree(target, self, self._libc).start()
                else:
                    self._plans_watch = self._observer.schedule(
                        _PlansHandler(self),
                        str(target),
                        recursive=recursive,
                        event_filter=PLAN_EVENTS,
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
        if self._plans_tree is not None:
            return self._plans_tree.root
        return None if self._plans_watch is None else Path(self._plans_watch.path)

    def plan_changed(self, path: str, *, at_once: bool) -> None:
        if at_once:
            self._debouncer.fire(path)
        else:
            self._debouncer.poke(path, self.quiet)

    def ref_changed(self, path: str) -> None:
        self.on_change(f"ref:{Path(path).name}")

    def stop(self) -> None:
        if self._plans_tree is not None:
            self._plans_tree.stop()
        self._debouncer.close()
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(timeout=5)
