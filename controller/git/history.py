"""What the watched branch's history says about every plan, kept up to date incrementally.

The branch's first-parent history is read once: each scan looks only at the commits since
the last processed one, which is remembered in the state directory. If that commit is no
longer an ancestor of the branch (upstream history was rewritten) the index is rebuilt from
scratch instead of trusting stale state.

For each commit the scan finds the plan files it changed and applies the lifecycle (§4):
a controller commit (authored by ``identity.email``) sets the status; a human commit makes a
transition that :func:`controller.approval.approvals.classify` judges, so an illegal status is
ignored (and reported) and the plan keeps its *effective* status. It also keeps, per plan,
the identities (author and committer emails) of every commit that changed the plan's hashed
content, including commits a merge brought in through its second parent, so self-approval
is checked without walking history again.

Index format (``index.sqlite`` in the state directory)::

    meta(key TEXT PRIMARY KEY, value TEXT)   last_commit, branch, version
    plans(plan_id TEXT PRIMARY KEY, data TEXT)  one JSON PlanState per plan
    jobs(plan_id TEXT PRIMARY KEY, data TEXT)   plans this controller started (Controller)

Deleting the file is always safe: the next scan rebuilds it from history.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from controller.approval import approvals
from controller.approval.approvals import Transition
from controller.git.gitrepo import CommitRecord, FileChange, GitRepo
from controller.plan import hashing, yamlio
from controller.plan.plans import PLAN_FILES

INDEX_VERSION = "1"
LOG_NAME = "EXECUTION_LOG.md"
MAX_NOTES = 20
#: Plan versions read and parsed per background batch while ``git log`` still runs.
PREFETCH_BLOBS = 8000
PARALLEL_MIN = 4000
_OWNED_BLOCKS = ("approval", "execution")


@dataclass(frozen=True)
class BlobFacts:
    """What one version of a PLAN.yml says, as far as history processing needs."""

    status: str | None
    hash: str | None
    frozen_hash: str | None
    #: Digest of the controller-owned blocks (approval, execution): a human changing
    #: them is flagged by the audit.
    owned_digest: str
    parsed: bool


def facts_of(data: bytes) -> BlobFacts:
    try:
        doc = yamlio.read_yaml(data.decode("utf-8"), "PLAN.yml").data
    except Exception:
        return BlobFacts(None, None, None, "", False)
    if not isinstance(doc, dict):
        return BlobFacts(None, None, None, "", False)
    plan, frozen = doc.get("plan"), doc.get("frozen")
    status = plan.get("status") if isinstance(plan, dict) else None
    frozen_hash = frozen.get("hash") if isinstance(frozen, dict) else None
    try:
        digest = hashlib.sha256(
            json.dumps([doc.get(k) for k in _OWNED_BLOCKS], sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        plan_hash: str | None = hashing.plan_hash(doc)
    except (TypeError, ValueError, OverflowError):
        plan_hash, digest = None, ""
    return BlobFacts(
        status if isinstance(status, str) else None,
        plan_hash,
        frozen_hash if isinstance(frozen_hash, str) else None,
        digest,
        True,
    )


@dataclass
class PlanState:
    """The index's view of one plan at the last processed commit."""

    plan_id: str
    file: str
    blob: str | None = None
    #: Effective status: the file's status unless a human set it illegally.
    status: str | None = None
    file_status: str | None = None
    hash: str | None = None
    frozen_hash: str | None = None
    frozen_since: int | None = None
    changers: list[str] = field(default_factory=list)
    #: The open approval request: commit, kind, blob, author, committer, time, voided_by,
    #: changed_in_commit.
    request: dict[str, Any] | None = None
    #: plan_hash of the last valid approval (gate approvals and resumes must match it).
    approved_hash: str | None = None
    abort_requested: bool = False
    approver: str | None = None
    last_event: str = ""
    last_commit: str = ""
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.notes = [*self.notes, text][-MAX_NOTES:]
        self.last_event = text


@dataclass(frozen=True)
class HistoryEvent:
    """Something the audit (and logs) may want to know about one commit and one plan."""

    #: request | controller | illegal | owned-block-changed | log-changed |
    #: content-after-approval
    kind: str
    plan_id: str
    commit: CommitRecord
    before: PlanState | None
    after: PlanState | None
    detail: str = ""


EventSink = Callable[[HistoryEvent], None]


def plan_id_of(path: str, plans_dir: str) -> str | None:
    """``plans/x/PLAN.yml`` -> ``plans/x`` (None when not a plan file under plans_dir)."""
    pure = PurePosixPath(path)
    base = PurePosixPath(plans_dir)
    if pure.name not in (*PLAN_FILES, LOG_NAME) or base not in pure.parents:
        return None
    if not is_text(path):
        return None  # git allows any bytes in a name; a plan id must be text (see is_text)
    return str(pure.parent)


def is_text(path: str) -> bool:
    """Is ``path`` valid UTF-8? (git hands other bytes over as lone surrogates.) A folder
    name that is not is no plan: its id could not be stored, logged or put in a trailer,
    and one such folder pushed by anyone must not stop the controller for every plan."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class HistoryIndex:
    """The per-plan index, in memory, persisted to sqlite after each scan."""

    def __init__(self, path: Path | None, *, plans_dir: str, controller_email: str) -> None:
        self.plans_dir = plans_dir.strip("/") or "."
        self.controller_email = controller_email.lower()
        self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        # WAL: one fsync per durable commit instead of a rollback journal's several. The plan
        # index is a cache rebuilt from git, so its saves need not be fsynced (NORMAL);
        # set_job, which a crash must not lose, commits with FULL.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE IF NOT EXISTS plans(plan_id TEXT PRIMARY KEY, data TEXT);"
            "CREATE TABLE IF NOT EXISTS jobs(plan_id TEXT PRIMARY KEY, data TEXT);"
        )
        if self.meta("version") not in (None, INDEX_VERSION):
            self.reset()
        self._load()
        self._facts: dict[str, BlobFacts] = {}
        #: How many times a rewritten history forced a rebuild (callers drop their caches).
        self.rebuilds = 0

    # --- persistence ------------------------------------------------------------------

    def _load(self) -> None:
        """The plans as last saved (also after a scan failed part way through applying)."""
        self.plans: dict[str, PlanState] = {
            pid: PlanState(**json.loads(data))
            for pid, data in self._db.execute("SELECT plan_id, data FROM plans")
        }
        self._dirty: set[str] = set()
        #: Plans that may need the controller (see pending()); kept up to date on changes.
        self._attention = {pid for pid, state in self.plans.items() if _needs_attention(state)}

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    def reset(self) -> None:
        """Forget everything derived from history (jobs this controller owns are kept)."""
        self._db.execute("DELETE FROM plans")
        self._db.execute("DELETE FROM meta WHERE key='last_commit'")
        self.set_meta("version", INDEX_VERSION)
        self._db.commit()
        self.plans = {}
        self._dirty = set()
        self._attention = set()

    def save(self, last_commit: str) -> None:
        rows = [
            (pid, json.dumps(asdict(self.plans[pid]))) for pid in self._dirty if pid in self.plans
        ]
        gone = [(pid,) for pid in self._dirty if pid not in self.plans]
        self._db.executemany("INSERT OR REPLACE INTO plans VALUES(?, ?)", rows)
        self._db.executemany("DELETE FROM plans WHERE plan_id=?", gone)
        self.set_meta("last_commit", last_commit)
        self.set_meta("version", INDEX_VERSION)
        self._db.commit()
        self._refresh_attention()
        self._dirty.clear()

    def touch(self, plan_id: str) -> None:
        self._dirty.add(plan_id)

    def jobs(self) -> dict[str, dict[str, Any]]:
        return {pid: json.loads(d) for pid, d in self._db.execute("SELECT plan_id, data FROM jobs")}

    def set_job(self, plan_id: str, job: dict[str, Any] | None) -> None:
        self._db.commit()  # the safety level can only change outside a transaction
        self._db.execute("PRAGMA synchronous=FULL")
        try:
            if job is None:
                self._db.execute("DELETE FROM jobs WHERE plan_id=?", (plan_id,))
            else:
                row = (plan_id, json.dumps(job))
                self._db.execute("INSERT OR REPLACE INTO jobs VALUES(?, ?)", row)
            self._db.commit()
        finally:
            self._db.execute("PRAGMA synchronous=NORMAL")

    def close(self) -> None:
        self._db.close()

    # --- scanning ---------------------------------------------------------------------

    def facts(self, repo: GitRepo, blob: str | None) -> BlobFacts | None:
        if blob is None:
            return None
        found = self._facts.get(blob)
        if found is None:
            found = facts_of(repo.blob(blob))
            if len(self._facts) > 200_000:
                self._facts.clear()
            self._facts[blob] = found
        return found

    def scan(self, repo: GitRepo, head: str, sink: EventSink | None = None) -> int:
        """Process the commits since the last scan up to ``head``; return how many."""
        last = self.meta("last_commit")
        if last == head:
            return 0
        if last and not repo.is_ancestor(last, head):  # also False when `last` is gone
            self.reset()  # upstream history was rewritten: rebuild, never trust stale state
            self.rebuilds += 1
            last = None
        # git streams the commits newest first while it walks; the plan versions they name
        # are read and parsed in the background meanwhile, and the commits are applied oldest
        # first once all are in. A cold scan of a long history is mostly git's walk (two
        # versions of a big plans/ tree inflated and compared per plan commit), so it is cut
        # in two halves that two git processes walk at once.
        segments = _segments(repo, last, head) if last is None else [(last, head)]
        with _Prefetcher(self, repo) as prefetch:

            def collect(segment: tuple[str | None, str]) -> list[CommitRecord]:
                found = []
                for record in repo.first_parent_log(*segment, [self.plans_dir], newest_first=True):
                    found.append(record)
                    prefetch.add(record)
                return found

            if len(segments) == 1:
                parts = [collect(segments[0])]
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(len(segments), thread_name_prefix="scan") as pool:
                    parts = list(pool.map(collect, segments))
        records = [record for part in parts for record in reversed(part)]
        try:
            for record in records:
                self.apply(repo, record, sink)
        except BaseException:
            self._load()  # never half a scan in memory: the next one re-applies from `last`
            raise
        self.save(head)
        count = len(records)
        if last is None or count >= RELEASE_AFTER:
            del records, parts
            self._compact(reload=count >= RELEASE_AFTER)
        return count

    def _compact(self, *, reload: bool) -> None:
        """After a cold or long scan: keep only what later scans use, give the rest back.

        Only the facts of the versions the plans hold now are kept (the "before" side of
        their next change). After many commits the plans are also reloaded as saved, so
        they no longer sit scattered among the dead records (Python frees an arena of small
        objects only once all of it is dead): 10,000 plans after 40,000 plan commits, 191
        -> 148 MB RSS. (After few commits the reload would only add a second copy.)
        """
        current = {state.blob for state in self.plans.values()}
        self._facts = {blob: f for blob, f in self._facts.items() if blob in current}
        if reload:
            import gc

            self._load()
            gc.collect()
        _release_memory()

    def apply(self, repo: GitRepo, record: CommitRecord, sink: EventSink | None = None) -> None:
        """Apply one first-parent commit to the index."""
        by_controller = record.author.email.lower() == self.controller_email
        for change in record.changes:
            plan_id = plan_id_of(change.path, self.plans_dir)
            if plan_id is None:
                continue
            if PurePosixPath(change.path).name == LOG_NAME:
                if not by_controller and sink:
                    state = self.plans.get(plan_id)
                    sink(
                        HistoryEvent(
                            "log-changed",
                            plan_id,
                            record,
                            state,
                            state,
                            f"{LOG_NAME} changed by a commit not from the controller",
                        )
                    )
                continue
            self._apply_plan_change(repo, record, change, plan_id, by_controller, sink)

    def _apply_plan_change(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        plan_id: str,
        by_controller: bool,
        sink: EventSink | None,
    ) -> None:
        before = self.plans.get(plan_id)
        snapshot = PlanState(**asdict(before)) if before and sink else None
        new = self.facts(repo, change.new_blob)
        old = self.facts(repo, change.old_blob)
        self.touch(plan_id)
        if new is None:
            if before is not None and before.file == change.path:
                del self.plans[plan_id]
            return
        state = before or PlanState(plan_id, change.path)
        state.file = change.path
        content_changed = _content_changed(old, new, change)
        changers, evil = (
            self._changers(repo, record, change, new) if content_changed else (set(), False)
        )
        # Did the commit itself change what runs? A merge only if it is an "evil" merge;
        # a new plan's author is a changer, so self-approval covers that case.
        state_changed_here = evil if record.is_merge else content_changed and old is not None
        # The new version's facts first: event handlers (the audit) see the state after it.
        if content_changed and not by_controller:
            state.changers = sorted(set(state.changers) | changers)
        if new.frozen_hash != (old.frozen_hash if old else None) or state.frozen_since is None:
            state.frozen_since = record.commit_time if new.frozen_hash else None
        state.blob, state.file_status = change.new_blob, new.status
        state.hash, state.frozen_hash = new.hash, new.frozen_hash
        state.last_commit = record.sha
        self.plans[plan_id] = state
        if by_controller:
            self._controller_commit(state, record, old, new, sink, snapshot)
        else:
            self._human_commit(
                state, record, change, old, new, content_changed, state_changed_here, sink, snapshot
            )

    def _changers(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, new: BlobFacts
    ) -> tuple[set[str], bool]:
        """Identities that changed the hashed content here (or in the merged branch), and
        whether a merge commit itself changed it (an "evil" merge)."""
        own = {record.author.email.lower(), record.committer.email.lower()}
        if not record.is_merge:
            return own, False
        found: set[str] = set()
        evil = True
        for parent in record.parents[1:]:
            theirs = repo.blob_sha(parent, change.path)
            # Not evil when the result's hashed content is the merged branch's: a status,
            # frozen or comment change (or a clean 3-way merge with the controller's freeze
            # on the first parent) is not content the merger wrote.
            if theirs == change.new_blob or _same_hash(self.facts(repo, theirs), new):
                evil = False
            for commit in repo.range_log(record.parents[0], parent, [change.path]):
                if any(self._changed_content(repo, c) for c in commit.changes):
                    found |= {commit.author.email.lower(), commit.committer.email.lower()}
        found.discard(self.controller_email)
        return (found | own if evil else found), evil

    def _changed_content(self, repo: GitRepo, change: FileChange) -> bool:
        if PurePosixPath(change.path).name not in PLAN_FILES:
            return False
        return _content_changed(
            self.facts(repo, change.old_blob), self.facts(repo, change.new_blob), change
        )

    def _controller_commit(
        self,
        state: PlanState,
        record: CommitRecord,
        old: BlobFacts | None,
        new: BlobFacts,
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> None:
        if state.status == "approved" and new.status == "executing":
            state.approved_hash = new.hash
        state.status = new.status
        state.approver = record.trailers.get("Approved-By") or state.approver
        if new.status != "approved":
            state.request = None
        if new.status not in ("executing", "awaiting_approval"):
            state.abort_requested = False
        state.note(f"{record.sha[:12]} {record.subject}")
        if sink:
            sink(HistoryEvent("controller", state.plan_id, record, snapshot, state))

    def _human_commit(
        self,
        state: PlanState,
        record: CommitRecord,
        change: FileChange,
        old: BlobFacts | None,
        new: BlobFacts,
        content_changed: bool,
        changed_here: bool,
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> None:
        who = record.author.email
        if content_changed and state.request and state.request["commit"] != record.sha:
            state.request = {**state.request, "voided_by": record.sha}
        if content_changed and state.status in _APPROVED_STATES:
            self._emit(
                sink,
                "content-after-approval",
                state,
                record,
                snapshot,
                f"{who} changed the content of a {state.status} plan",
            )
        if old is not None and new.owned_digest != old.owned_digest and sink:
            self._emit(
                sink,
                "owned-block-changed",
                state,
                record,
                snapshot,
                f"{who} changed the controller-owned approval/execution blocks",
            )
        old_file_status = old.status if old else None
        if new.status == old_file_status:
            return
        transition = approvals.classify(state.status if old else None, new.status)
        if transition is Transition.NONE:
            return  # unreadable now: keep the effective status
        if transition is Transition.ILLEGAL:
            text = (
                f"E_ILLEGAL_TRANSITION: {who} set status {new.status} "
                f"(from {state.status or 'nothing'}) in {record.sha[:12]}; ignored"
            )
            state.note(text)
            self._emit(sink, "illegal", state, record, snapshot, text)
            return
        state.status = new.status
        if transition in (Transition.APPROVE, Transition.GATE, Transition.RESUME):
            state.request = {
                "commit": record.sha,
                "kind": transition.value,
                "blob": change.new_blob,
                "author": record.author.email,
                "committer": record.committer.email,
                "time": record.commit_time,
                "voided_by": None,
                "changed_in_commit": changed_here,
            }
            state.note(f"{record.sha[:12]} approval request ({transition.value}) by {who}")
            self._emit(sink, "request", state, record, snapshot, transition.value)
        elif transition is Transition.ABORT:
            state.abort_requested = True
            state.note(f"{record.sha[:12]} abort requested by {who}")
        else:
            state.note(f"{record.sha[:12]} {who} set status {new.status}")

    @staticmethod
    def _emit(
        sink: EventSink | None,
        kind: str,
        state: PlanState,
        record: CommitRecord,
        snapshot: PlanState | None,
        detail: str,
    ) -> None:
        if sink:
            sink(HistoryEvent(kind, state.plan_id, record, snapshot, state, detail))

    def pending(self) -> Iterator[PlanState]:
        """Plans the controller may have to act on (everything else is settled), by id."""
        self._refresh_attention()
        for plan_id in sorted(self._attention):
            yield self.plans[plan_id]

    def _refresh_attention(self) -> None:
        for plan_id in self._dirty:
            state = self.plans.get(plan_id)
            if state is not None and _needs_attention(state):
                self._attention.add(plan_id)
            else:
                self._attention.discard(plan_id)


#: A scan of this many commits (or any cold one) gives its transient memory back.
RELEASE_AFTER = 1000


def _release_memory() -> None:
    """Return freed heap memory to the system (glibc ``malloc_trim``): a cold scan's
    transient buffers would otherwise stay in the daemon's RSS for its whole life (10,000
    plans: 91 -> 79 MB). A no-op where there is no glibc."""
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


#: A cold scan of at least this many first-parent commits is walked in two halves at once.
SPLIT_MIN = 5000


def _segments(repo: GitRepo, last: str | None, head: str) -> list[tuple[str | None, str]]:
    """``last..head`` as ranges oldest first: two halves when long and two CPUs are there."""
    if (os.cpu_count() or 1) < 2:
        return [(last, head)]
    length = repo.first_parent_count(last, head)
    middle = repo.first_parent_at(last, head, length // 2) if length >= SPLIT_MIN else None
    if middle is None:
        return [(last, head)]
    return [(last, middle), (middle, head)]


class _Prefetcher:
    """Reads and parses, in one background thread, every plan version the scanned commits
    name, in batches of PREFETCH_BLOBS (one ``cat-file --batch`` and parallel parsing each),
    so that :meth:`HistoryIndex.apply` finds them all in the facts cache."""

    def __init__(self, index: HistoryIndex, repo: GitRepo) -> None:
        self.index, self.repo = index, repo
        self.wanted: list[str] = []
        self.seen: set[str] = set()
        self.commits = 0
        self.futures: list[Any] = []
        self.pool: Any = None
        self.lock = threading.Lock()  # add() is called from the scan's git readers

    def __enter__(self) -> _Prefetcher:
        return self

    def add(self, record: CommitRecord) -> None:
        with self.lock:
            self._add(record)

    def _add(self, record: CommitRecord) -> None:
        self.commits += 1
        for change in record.changes:
            if PurePosixPath(change.path).name not in PLAN_FILES:
                continue
            for blob in (change.old_blob, change.new_blob):
                if blob is not None and blob not in self.seen and blob not in self.index._facts:
                    self.seen.add(blob)
                    self.wanted.append(blob)
        if len(self.wanted) >= PREFETCH_BLOBS:
            self._submit()

    def _submit(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        if self.pool is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="prefetch")
        batch, self.wanted = self.wanted, []
        self.futures.append(self.pool.submit(self._read, batch))

    def _read(self, batch: list[str]) -> dict[str, BlobFacts]:
        found = self.repo.blobs(batch)
        return dict(zip(found, _all_facts(list(found.values())), strict=True))

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and self.wanted and self.commits > 1:
            self._submit()  # one commit's plans are read one by one by apply(), no batch
        try:
            for future in self.futures:
                if exc[0] is None:
                    self.index._facts.update(future.result())
                else:
                    future.cancel()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)


def _all_facts(blobs: list[bytes]) -> list[BlobFacts]:
    """Facts of many plan versions; a cold scan of a big history parses them in parallel
    child processes (``python -m controller.git.history``, fed marshalled blobs on stdin)."""
    workers = min(os.cpu_count() or 1, 8)
    if len(blobs) < PARALLEL_MIN or workers < 2:
        return [facts_of(b) for b in blobs]
    import marshal
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    size = -(-len(blobs) // workers)
    chunks = [blobs[i : i + size] for i in range(0, len(blobs), size)]

    def run(chunk: list[bytes]) -> list[BlobFacts]:
        proc = subprocess.run(
            [sys.executable, "-m", "controller.git.history"],
            input=marshal.dumps(chunk),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            return [facts_of(b) for b in chunk]
        return [BlobFacts(*row) for row in marshal.loads(proc.stdout)]

    with ThreadPoolExecutor(len(chunks)) as pool:
        return [facts for part in pool.map(run, chunks) for facts in part]


def _facts_worker() -> None:
    import marshal
    import sys

    rows = [tuple(asdict(facts_of(b)).values()) for b in marshal.loads(sys.stdin.buffer.read())]
    sys.stdout.buffer.write(marshal.dumps(rows))


_APPROVED_STATES = ("executing", "awaiting_approval", "completed", "failed", "aborted")


def _content_changed(old: BlobFacts | None, new: BlobFacts | None, change: FileChange) -> bool:
    if old is None or new is None:
        return True
    if old.hash is None or new.hash is None:
        return change.old_blob != change.new_blob  # unparseable: any byte counts
    return old.hash != new.hash


def _same_hash(a: BlobFacts | None, b: BlobFacts | None) -> bool:
    return a is not None and b is not None and a.hash is not None and a.hash == b.hash


def _needs_attention(state: PlanState) -> bool:
    if state.request is not None or state.abort_requested:
        return True
    if state.status == "pending_approval":
        return state.frozen_hash != state.hash or state.hash is None
    return state.status in ("executing", "approved")


def build_request(
    state: PlanState,
    repo: GitRepo,
    check: Callable[[bytes], tuple[tuple[str, ...], str | None]],
    *,
    require_signed: bool,
    allowed_signers: Path | None,
    verified_at: int | None = None,
) -> approvals.ApprovalRequest:
    """Gather the facts of the plan's open request for :func:`approvals.verify_approval`.

    ``check`` validates the plan text at the approving commit: (problem codes, hash).
    """
    req = state.request or {}
    problems, current_hash = check(repo.blob(req["blob"]))
    facts = facts_of(repo.blob(req["blob"]))
    signature = repo.verify_commit(req["commit"], allowed_signers) if require_signed else None
    return approvals.ApprovalRequest(
        plan_id=state.plan_id,
        commit=req["commit"],
        kind=Transition(req["kind"]),
        author_email=req["author"],
        committer_email=req["committer"],
        commit_time=int(req["time"]),
        problems=problems,
        current_hash=current_hash,
        frozen_hash=facts.frozen_hash,
        changed_in_commit=bool(req.get("changed_in_commit")),
        changers=frozenset(state.changers),
        frozen_since=state.frozen_since,
        approved_hash=state.approved_hash if req["kind"] != "approve" else None,
        signature_valid=signature.valid if signature else None,
        signer=signature.signer if signature else None,
        signature_message=signature.message if signature else "",
        voided_by=req.get("voided_by"),
        verified_at=verified_at,
    )


def changed_plan_ids(records: Iterable[CommitRecord], plans_dir: str) -> set[str]:
    return {
        pid
        for r in records
        for c in r.changes
        if (pid := plan_id_of(c.path, plans_dir)) is not None
    }


if __name__ == "__main__":
    _facts_worker()
