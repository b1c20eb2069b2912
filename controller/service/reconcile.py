"""The controller: one level-triggered, idempotent pass from git history to commits and jobs.

:meth:`Controller.reconcile` brings the branch up to date (remote mode: fetch and
fast-forward the controller's own bare clone), scans the new commits into the history index,
and then acts on every plan that needs it:

- a pending plan that is not frozen (or changed since) is frozen, or marked ``invalid`` with
  its ``validation.errors`` (local mode: also a PLAN.yml an agent wrote but did not commit);
- an approval request is verified by :func:`controller.approval.approvals.verify_approval`: refused
  -> ``approval: {status: refused, ...}`` and back to ``pending_approval``; valid ->
  ``approval: {...}``, status ``executing`` and a start commit (pushed, in remote mode), and
  a :class:`Job` for the engine;
- an abort of a plan that is not running is recorded.

:meth:`Controller.execute` runs a job with the engine and commits its outcome. Every commit
is made by :class:`controller.git.gitrepo.GitRepo.commit_files`: only the files plangate wrote,
as ``identity``, with trailers, compare-and-swap on the branch (and a non-forced push in
remote mode). When the branch moved meanwhile the pass is re-evaluated from the new history.

In local mode the engine writes PLAN.yml/EXECUTION_LOG.md in the working tree; in remote mode
in ``<state_dir>/runs/<plan id>/``. A human's uncommitted edits to a PLAN.yml the controller
must write are never touched: the plan waits, and ``status`` says why.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Container
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from controller.approval import approvals, policy
from controller.errors import GitError, PlangateError
from controller.git.gitrepo import (
    CommitRecord,
    FileChange,
    GitRepo,
    Person,
    blob_id,
    parse_trailers,
)
from controller.git.history import LOG_NAME, HistoryIndex, PlanState, build_request, is_text
from controller.plan import plans, yamlio
from controller.service import notify
from controller.service.statedir import StateDir
from controller.settings import Config

MAX_PASSES = 5
#: Where a refused approval leaves the plan: it needs a new approval from there.
_REFUSED_TO = {
    approvals.Transition.APPROVE: "pending_approval",
    approvals.Transition.GATE: "awaiting_approval",
    approvals.Transition.RESUME: "failed",
}
REMOTE = "origin"
_OUTCOME_STATUS = {
    "completed": ("completed", "complete"),
    "failed": ("failed", "fail"),
    "awaiting_approval": ("awaiting_approval", "await-approval"),
    "aborted": ("aborted", "abort"),
    "stopped": ("executing", "checkpoint"),
}


@dataclass
class Job:
    """An approved plan whose start commit is on the branch (pushed, in remote mode)."""

    plan_id: str
    plan_file: Path
    plan_hash: str
    approval: dict[str, Any]
    gate_approved: int | None = None
    resume: bool = False


class _Moved(Exception):
    """The branch moved under a commit: re-evaluate from the new history."""


class _Wait(Exception):
    """A human's uncommitted edits block a write to this plan."""


def _log() -> Any:
    import structlog

    return structlog.get_logger("plangate")


def iso(ts: int | float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Controller:
    """One controller over one plans repository; holds the state-directory lock if asked."""

    def __init__(self, config: Config, *, lock: bool = True) -> None:
        self.config = config
        self.state = StateDir(config.state_path()).ensure()
        if lock:
            self.state.acquire()
        self.identity = Person(config.identity.name, config.identity.email)
        self._lock = threading.RLock()
        #: Guards _running and _abort only: a worker starting a job must not wait for a pass.
        self._jobs_lock = threading.Lock()
        self._running: set[str] = set()
        self._abort: set[str] = set()
        self._dispatch: Callable[[Job], None] | None = None
        self._dispatched: set[str] = set()
        #: Plans whose run file no longer hashes to the approval: the file's stat when it
        #: was refused (the plan is offered again only once the file changes).
        self._refused_files: dict[str, tuple[int, int, int] | None] = {}
        self._waiting: dict[str, str] = {}
        self._repo: GitRepo | None = None
        self._index: HistoryIndex | None = None
        self._branch: str | None = None
        self._head = ""
        self._instance: str | None = None
        self._on_branch: set[str] = set()
        self._seen_rebuilds = 0
        self._scanner = UntrackedScanner(config.repo_path(), config.plans_dir)
        self.last_error: str | None = None
        self._notifier: Any = None
        #: Why the last status() could not read history (it then shows the index as it was).
        self.status_error: PlangateError | None = None
        self.log = _log()

    # --- plumbing -----------------------------------------------------------------------

    @property
    def repo(self) -> GitRepo:
        if self._repo is None:
            self._repo = self._open_repo()
        return self._repo

    def _open_repo(self) -> GitRepo:
        if self.config.remote is None:
            return GitRepo(self.config.repo_path())
        clone = self.state.clone_dir
        if clone.exists():
            return GitRepo(clone)
        repo = GitRepo.clone_bare(self.config.remote.url, clone, self.config.remote.branch)
        repo.run("remote", "set-url", REMOTE, self.config.remote.url)
        return repo

    @property
    def index(self) -> HistoryIndex:
        if self._index is None:
            self._index = HistoryIndex(
                self.state.index_file,
                plans_dir=self.config.plans_dir,
                controller_email=self.config.identity.email,
            )
        return self._index

    @property
    def branch(self) -> str:
        if self._branch is None:
            self._branch = self._watched_branch()
        return self._branch

    def _watched_branch(self) -> str:
        if self.config.remote is not None:
            return self.config.remote.branch
        current = self.repo.current_branch()
        remembered = self.index.meta("branch")
        if remembered and remembered != current:
            raise GitError(
                f"the working tree is on branch {current}, but plangate watches {remembered}",
                remedy=f"git switch {remembered} (or delete {self.state.index_file} to watch "
                f"{current})",
            )
        self.index.set_meta("branch", current)
        return current

    def instance_id(self) -> str:
        """This controller's id (random, kept in the state directory), e.g. ``host/3f2a9c1b``."""
        if self._instance is None:
            import secrets
            import socket

            found = self.index.meta("instance")
            if found is None:
                found = secrets.token_hex(4)
                self.index.set_meta("instance", found)
            self._instance = f"{socket.gethostname()}/{found}"
        return self._instance

    @property
    def notifier(self) -> Any:
        """The notify: sender for the config in force (a reload brings new URLs)."""
        from controller.execution.secrets import redact_text
        from controller.service.notify import Notifier

        if self._notifier is None or self._notifier.settings != self.config.notify:
            if self._notifier is not None:
                self._notifier.close(timeout=0)
            config = self.config
            self._notifier = Notifier(config.notify, lambda text: redact_text(config, text))
        return self._notifier

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.close()
        if self._index is not None:
            self._index.close()
        if self._repo is not None:
            self._repo.close()
        self.state.release()

    def head(self) -> str:
        sha = self.repo.branch_head(self.branch)
        if sha is None:
            raise GitError(f"branch {self.branch} has no commits yet", remedy="commit something")
        return sha

    def running(self) -> set[str]:
        with self._jobs_lock:
            return set(self._running)

    # --- the pass -----------------------------------------------------------------------

    def reconcile(self, dispatch: Callable[[Job], None] | None = None) -> list[Job]:
        """One idempotent pass; returns the jobs to run now (never plans in running()).

        With ``dispatch``, a plan that starts in this pass is handed to it the moment its
        start commit is on the branch and its file in place, before the pass refreshes the
        index and looks at other plans; such jobs are not returned again.
        """
        with self._lock:
            self._dispatch, self._dispatched = dispatch, set()
            try:
                for _ in range(MAX_PASSES):
                    try:
                        jobs = self._pass()
                        self.last_error = None
                        return jobs
                    except _Moved:
                        continue
                return []
            finally:
                self._dispatch = None

    def _pass(self) -> list[Job]:
        self._head = self._sync()
        self.index.scan(self.repo, self._head)
        untracked = self._untracked_plans()
        jobs: list[Job] = []
        for state in list(self.index.pending()):
            if state.plan_id in self.running():
                if state.abort_requested:
                    with self._jobs_lock:
                        self._abort.add(state.plan_id)
                continue
            job = self._act(state)
            if job is not None:
                jobs.append(job)
        for path in sorted(untracked):
            self._adopt(path)
        jobs += self._owned_jobs({j.plan_id for j in jobs} | self._dispatched)
        return jobs

    def _sync(self) -> str:
        if self.config.remote is None:
            self.repo.check_health()
            return self.head()
        remote_head = self.repo.fetch(REMOTE, self.branch)
        local = self.repo.rev(f"refs/heads/{self.branch}")
        if local == remote_head:
            return local
        if local is not None and self.repo.is_ancestor(remote_head, local):
            if self.repo.push(REMOTE, self.branch):  # our commit from before a crash
                return local
            raise _Moved
        # Fast-forward; or drop our unpushed commits after a rejected push (never published).
        self.repo.update_ref(f"refs/heads/{self.branch}", remote_head, None)
        return remote_head

    def _untracked_plans(self) -> set[str]:
        """Local mode: PLAN.yml files in the working tree that the branch does not hold."""
        if self.config.remote is None:
            return self._scanner.scan(self.index.plans.keys())  # a plan's id is its folder
        return set()

    # --- deciding -----------------------------------------------------------------------

    def _act(self, state: PlanState) -> Job | None:
        try:
            if self.config.remote is None:
                self._check_uncommitted(state, self._head)
            self._waiting.pop(state.plan_id, None)
            if state.request is not None:
                return self._decide(state)
            if state.abort_requested:
                return self._record_abort(state)
            if state.status == "pending_approval":
                self._freeze(state.file)
        except _Wait as wait:
            self._wait(state.plan_id, str(wait))
        except (GitError, _Moved):
            raise
        except PlangateError as exc:
            self._wait(state.plan_id, f"cannot write {state.file}: {exc}")
        return None

    def _wait(self, plan_id: str, reason: str) -> None:
        if self._waiting.get(plan_id) != reason:
            self.log.warning("plan_waiting", plan=plan_id, reason=reason)
        self._waiting[plan_id] = reason

    def _check_uncommitted(self, state: PlanState, head: str) -> None:
        """Wait when the working-tree PLAN.yml differs from HEAD by more than the engine's
        ``execution:`` block."""
        committed = self._read_committed(state.file, head)
        try:
            on_disk = (self.repo.path / state.file).read_text(encoding="utf-8")
        except OSError:
            return
        if committed is None or _without_execution(on_disk) != _without_execution(
            committed.decode("utf-8", "replace")
        ):
            raise _Wait(
                f"{state.file} has uncommitted edits; plangate will not overwrite them "
                "(commit or discard them)"
            )

    def _decide(self, state: PlanState) -> Job | None:
        request = build_request(
            state,
            self.repo,
            self._check_text(state.file),
            require_signed=self.config.approval.require_signed,
            allowed_signers=self.config.approval.allowed_signers,
            verified_at=int(time.time()),
        )
        decision = approvals.verify_approval(request, self.config.approval)
        record = decision.record(request, iso(request.commit_time))
        if not decision.valid:
            self.log.warning(
                "approval_refused",
                plan=state.plan_id,
                code=decision.code,
                reason=decision.message,
                commit=request.commit,
            )
            back = _REFUSED_TO.get(request.kind, "pending_approval")
            self._commit_plan(
                state.file,
                "refuse",
                _set_approval(record, back),
                request.current_hash,
                f"{decision.code}: {decision.message}",
            )
            return None
        return self._start(state, request, decision, record)

    def _start(
        self,
        state: PlanState,
        request: approvals.ApprovalRequest,
        decision: approvals.Decision,
        record: dict[str, Any],
    ) -> Job | None:
        expected = request.current_hash

        def mutate(text: str) -> str | None:
            facts = plans.validate_text(text, Path(state.file), self.config)
            if facts.status != "approved" or facts.hash != expected:
                return None  # changed meanwhile: the next pass decides again
            return _set_approval(record, "executing")(text)

        previous = self.index.jobs().get(state.plan_id, {})
        gate = previous.get("paused_gate") if request.kind is approvals.Transition.GATE else None
        plan_file = self._plan_path(state)
        job = Job(
            state.plan_id,
            plan_file,
            expected or "",
            record,
            gate_approved=gate,
            resume=request.kind is approvals.Transition.RESUME,
        )

        started: list[str] = []

        def remember(sha: str) -> None:  # before publishing: a crash must not orphan the run
            self.index.set_job(state.plan_id, {**_job_data(job), "start": sha})
            started.append(sha)

        def publish() -> None:  # on the branch, and the file the engine reads is in place
            self.log.info(
                "plan_started",
                plan=state.plan_id,
                hash=expected,
                commit=started[-1],
                approver=decision.approver,
            )
            if self._dispatch is not None:
                self._dispatch(job)
                self._dispatched.add(job.plan_id)

        sha = self._commit_plan(
            state.file,
            "start",
            mutate,
            expected,
            "",
            approved_by=decision.approver,
            approval_commit=request.commit,
            on_commit=remember,
            before_index=publish if self.config.remote is None else None,
        )
        if sha is None:
            return None
        if self.config.remote is not None:
            self._prepare_run_dir(state, sha)
            publish()
        return None if job.plan_id in self._dispatched else job

    def _plan_path(self, state: PlanState) -> Path:
        """Where the engine runs the plan: the working tree, or a run folder (remote)."""
        if self.config.remote is None:
            return self.repo.path / state.file
        return self.state.run_dir(state.plan_id) / PurePosixPath(state.file).name

    def _prepare_run_dir(self, state: PlanState, commit: str) -> None:
        """Remote mode: the run folder starts as the plan's files at the start commit."""
        if self.config.remote is None:
            return
        run_dir = self.state.run_dir(state.plan_id)
        run_dir.mkdir(parents=True, exist_ok=True)
        for name in (PurePosixPath(state.file).name, LOG_NAME):
            data = self.repo.read_file(commit, f"{state.plan_id}/{name}")
            if data is not None:
                (run_dir / name).write_bytes(data)

    def _check_text(self, file: str) -> Callable[[bytes], tuple[tuple[str, ...], str | None]]:
        def check(data: bytes) -> tuple[tuple[str, ...], str | None]:
            loaded = plans.validate_text(data.decode("utf-8", "replace"), Path(file), self.config)
            return tuple(p.code for p in loaded.problems), loaded.hash

        return check

    def _freeze(self, file: str, *, adopt: bool = False) -> None:
        event = {"name": "freeze"}

        def mutate(text: str) -> str | None:
            loaded = plans.validate_text(text, self.repo.path / file, self.config)
            if loaded.status != "pending_approval":
                return None
            facts = (
                policy.frozen_facts(str(PurePosixPath(file).parent), loaded.data, self.config)
                if loaded.valid
                else None
            )
            outcome = plans.freeze_text(loaded, facts=facts)
            if loaded.problems:
                event["name"] = "invalid"
                return _mark_invalid(loaded)
            return outcome.text if outcome.changed or adopt else None

        sha = self._commit_plan(file, event["name"], mutate, None, "", adopt=adopt, event_ref=event)
        if sha is not None:
            self.log.info(
                "plan_" + ("frozen" if event["name"] == "freeze" else "invalid"),
                plan=str(PurePosixPath(file).parent),
                commit=sha,
            )

    def _adopt(self, path: str) -> None:
        """Local mode: freeze (and commit) a pending PLAN.yml an agent wrote but did not commit."""
        file = self.repo.path / path
        if file.is_symlink() or not file.is_file():
            return  # never follow a link or block on a FIFO an agent left in the plans dir
        try:
            loaded = plans.load_plan(file, self.config)  # bounded by limits.max_plan_bytes
        except PlangateError:
            return
        if loaded.status == "pending_approval":
            try:
                self._freeze(path, adopt=True)
            except (GitError, _Moved):
                raise
            except PlangateError as exc:
                self._wait(str(PurePosixPath(path).parent), f"cannot adopt {path}: {exc}")

    def _record_abort(self, state: PlanState) -> Job | None:
        job = self._job_for(state)
        if job is not None:
            with self._jobs_lock:
                self._abort.add(state.plan_id)
            return job  # the engine stops before the next action and reports aborted

        def mutate(text: str) -> str:
            doc = yamlio.read_yaml(text, state.file)
            execution = dict(doc.data.get("execution") or {})
            execution.update(status="aborted", finished_at=plans.now_utc())
            return _set_status(yamlio.set_block(doc, "execution", execution), "aborted")

        self._commit_plan(state.file, "abort", mutate, state.hash, "aborted on request")
        self.index.set_job(state.plan_id, None)
        return None

    def _owned_jobs(self, already: set[str]) -> list[Job]:
        """Plans this controller started that are executing but not running (a restart)."""
        jobs = []
        for plan_id in self.index.jobs():
            state = self.index.plans.get(plan_id)
            if plan_id in already or plan_id in self.running() or state is None:
                continue
            if state.status == "executing":
                job = self._job_for(state)
                if job is not None and not self._still_refused(job):
                    jobs.append(job)
        return jobs

    def _still_refused(self, job: Job) -> bool:
        """Was this job's file refused by _still_approved, and is it unchanged since? (A pass
        would otherwise offer it again at once, and again after that refusal: a busy loop.)"""
        if job.plan_id not in self._refused_files:
            return False
        if self._refused_files[job.plan_id] == _stat_key(job.plan_file):
            return True
        del self._refused_files[job.plan_id]
        return False

    def _job_for(self, state: PlanState) -> Job | None:
        """The job this controller started for the plan, if its start commit is on the branch."""
        data = self.index.jobs().get(state.plan_id)
        if not data or (data.get("paused_gate") is not None and state.status != "executing"):
            return None
        if not self._published(data.get("start"), self._head or self.head()):
            self.index.set_job(state.plan_id, None)  # never published: another controller won
            return None
        plan_file = self._plan_path(state)
        if self.config.remote is not None and not plan_file.exists():
            self._prepare_run_dir(state, self._head or self.head())
        return Job(
            state.plan_id,
            plan_file,
            data["plan_hash"],
            data["approval"],
            data.get("gate_approved"),
            bool(data.get("resume")),
        )

    def _published(self, start: str | None, head: str) -> bool:
        """Is our start commit on the branch? (Cached: the branch only grows, unless it was
        rewritten, which rebuilds the index and drops the cache.)"""
        if self._seen_rebuilds != self.index.rebuilds:
            self._on_branch.clear()
            self._seen_rebuilds = self.index.rebuilds
        if not start:
            return False
        if start not in self._on_branch:
            if not self.repo.is_ancestor(start, head):
                return False
            self._on_branch.add(start)
        return True

    # --- committing ---------------------------------------------------------------------

    def _commit_plan(
        self,
        file: str,
        event: str,
        mutate: Callable[[str], str | None],
        plan_hash: str | None,
        body: str,
        *,
        approved_by: str | None = None,
        approval_commit: str | None = None,
        adopt: bool = False,
        extra: dict[str, bytes] | None = None,
        event_ref: dict[str, str] | None = None,
        on_commit: Callable[[str], None] | None = None,
        before_index: Callable[[], None] | None = None,
    ) -> str | None:
        head = self._head
        if adopt:
            base_text: str | None = (self.repo.path / file).read_text(encoding="utf-8")
        else:
            data = self._read_committed(file, head)
            base_text = None if data is None else data.decode("utf-8")
        if base_text is None:
            return None
        new_text = mutate(base_text)
        if new_text is None or (new_text == base_text and not adopt and not extra):
            return None
        if event_ref is not None:
            event = event_ref["name"]
        status = plans.validate_text(new_text, Path(file), self.config)
        plan_id = str(PurePosixPath(file).parent)
        message = self._message(
            event,
            plan_id,
            plan_hash or status.hash,
            status.status,
            body,
            approved_by,
            approval_commit,
        )
        files: dict[str, bytes | None] = {file: new_text.encode("utf-8"), **(extra or {})}
        sha = self._write(files, head, message, on_commit, before_index)
        self._notify(event, plan_id, plan_hash or status.hash, status, sha, body)
        return sha

    def _notify(
        self, event: str, plan_id: str, plan_hash: str | None, plan: Any, sha: str, body: str
    ) -> None:
        """Queue the notify: message for a commit just made (never waits for the network)."""
        name = notify.EVENTS.get(event)
        if event == "freeze" and plan.status == "pending_approval":
            name = "awaiting-approval"
        if name is None or (not self.config.notify.urls and not self.config.notify.url_env):
            return
        approval = plan.block("approval")
        policy_block = plan.block("frozen").get("policy")
        needs = ""
        if name == "awaiting-approval" and isinstance(policy_block, dict):
            needs = "needs " + policy.describe_record(policy_block)
        self.notifier.send(
            name,
            plan_id,
            hash=plan_hash,
            status=plan.status,
            commit=sha,
            by=approval.get("by") if isinstance(approval.get("by"), str) else None,
            missing=approval.get("missing") if name == "partial" else None,
            message=body or None,
            needs=needs or None,
            controller=self.instance_id(),
        )

    def _read_committed(self, file: str, head: str) -> bytes | None:
        """``file`` at ``head``; from the blob the index holds when it was scanned to there."""
        state = self.index.plans.get(str(PurePosixPath(file).parent))
        if (
            state is not None
            and state.file == file
            and state.blob is not None
            and self.index.meta("last_commit") == head
        ):
            return self.repo.blob(state.blob)
        return self.repo.read_file(head, file)

    def _message(
        self,
        event: str,
        plan_id: str,
        plan_hash: str | None,
        status: str | None,
        body: str,
        approved_by: str | None,
        approval_commit: str | None,
    ) -> str:
        from controller.execution.secrets import redact_text

        trailers = [
            f"Plan: {plan_id}",
            f"Plan-Hash: {plan_hash or 'none'}",
            f"Plan-Status: {status or 'unknown'}",
        ]
        if approved_by:
            trailers.append(f"Approved-By: {approved_by}")
        if approval_commit:
            trailers.append(f"Approval-Commit: {approval_commit}")
        # Two controllers making the same decision in the same second would otherwise create
        # byte-identical commits, and each would take the other's start commit for its own.
        trailers.append(f"Controller: {self.instance_id()}")
        text = f"plangate: {event} {plan_id}\n\n"
        if body:
            text += " ".join(body.split()) + "\n\n"
        # git refuses a NUL in a commit message (and reads a message only up to one): a tool's
        # stderr can hold one, so it is written as the escape plangate shows it as.
        text = (text + "\n".join(trailers) + "\n").replace("\0", "\\x00")
        return redact_text(self.config, text)

    def _write(
        self,
        files: dict[str, bytes | None],
        head: str,
        message: str,
        on_commit: Callable[[str], None] | None = None,
        before_index: Callable[[], None] | None = None,
    ) -> str:
        sha = self.repo.commit_files(
            branch=self.branch, parent=head, files=files, message=message, author=self.identity
        )
        if sha is None:
            raise _Moved
        if on_commit is not None:
            on_commit(sha)
        if self.config.remote is None:
            self.repo.write_worktree(files)
            if before_index is not None:
                before_index()
            self.repo.set_index_entries(files)
        elif not self.repo.push(REMOTE, self.branch):
            self.repo.update_ref(f"refs/heads/{self.branch}", head, sha)
            raise _Moved
        self._index_own_commit(sha, head, files, message)
        self._head = sha
        return sha

    def _index_own_commit(
        self, sha: str, parent: str, files: dict[str, bytes | None], message: str
    ) -> None:
        """Apply our own commit to the index without asking git what we just did."""
        if self.index.meta("last_commit") != parent:
            self.index.scan(self.repo, sha)
            return
        now = int(time.time())
        changes = [
            FileChange(
                path, self.repo.blob_sha(parent, path), None if data is None else blob_id(data)
            )
            for path, data in files.items()
        ]
        subject, _, rest = message.partition("\n")
        record = CommitRecord(
            sha,
            (parent,),
            self.identity,
            self.identity,
            now,
            now,
            subject,
            parse_trailers(rest),
            changes,
        )
        self.index.apply(self.repo, record)
        self.index.save(sha)

    # --- executing ----------------------------------------------------------------------

    def execute(self, job: Job, stop_requested: Callable[[], bool] = lambda: False) -> None:
        """Run the job with the engine and commit the outcome; safe from worker threads."""
        from controller.execution.executor import Engine, RunOutcome

        with self._jobs_lock:
            if job.plan_id in self._running:
                return
            self._running.add(job.plan_id)
        try:
            if not self._still_approved(job):
                return
            engine = Engine(self.config, state_dir=self.state.path)
            try:
                outcome = engine.run(
                    job.plan_file,
                    plan_id=job.plan_id,
                    approval=job.approval,
                    gate_approved=job.gate_approved,
                    resume=job.resume,
                    abort_requested=self._abort_check(job),
                    stop_requested=stop_requested,
                )
            except PlangateError as exc:
                outcome = RunOutcome("failed", exc, None)
            self._record_outcome(job, outcome)
        finally:
            with self._jobs_lock:
                self._running.discard(job.plan_id)
                self._abort.discard(job.plan_id)

    def _still_approved(self, job: Job) -> bool:
        """Does the file the engine will read still hash to what was approved? In local mode
        anyone with the working tree can rewrite PLAN.yml (and its frozen.hash) after the
        start commit; such a plan waits, untouched, instead of running unapproved content."""
        try:
            text = job.plan_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            found: str | None = f"unreadable ({exc})"
        else:
            found = plans.validate_text(text, job.plan_file, self.config).hash
        if found == job.plan_hash:
            return True
        with self._lock:
            self._refused_files[job.plan_id] = _stat_key(job.plan_file)
            self._wait(
                job.plan_id,
                f"E_PLAN_HASH_MISMATCH: {job.plan_file} hashes to {found}, but "
                f"{job.plan_hash} was approved; restore the committed file to run it",
            )
        return False

    def _abort_check(self, job: Job) -> Callable[[], bool]:
        last = [time.monotonic()]  # the pass that started the job has just read the branch

        def abort_requested() -> bool:
            if job.plan_id in self._abort:
                return True
            if self.config.remote is not None or time.monotonic() - last[0] < 1.0:
                return False
            last[0] = time.monotonic()
            return self._status_at_head(job) == "aborted"

        return abort_requested

    def _status_at_head(self, job: Job) -> str | None:
        with self._lock:
            state = self.index.plans.get(job.plan_id)
            if state is None:
                return None
            data = self.repo.read_file(self.head(), state.file)
        return (
            None
            if data is None
            else plans.validate_text(data.decode("utf-8", "replace"), Path(state.file)).status
        )

    def _record_outcome(self, job: Job, outcome: Any) -> None:
        status, event = _OUTCOME_STATUS.get(outcome.status, ("failed", "fail"))
        body = str(outcome.error) if outcome.error is not None else ""
        for _ in range(MAX_PASSES):
            with self._lock:
                try:
                    self._commit_outcome(job, status, event, body)
                except _Moved:
                    self._sync()
                    continue
                except _Wait as wait:
                    self._waiting[job.plan_id] = str(wait)
                    self.log.warning("plan_waiting", plan=job.plan_id, reason=str(wait))
                    return
                self._after_outcome(job, outcome, status)
                return
        # The branch kept moving: the job stays ours, and the next pass runs it again; the
        # journal makes that rerun report the same outcome without acting again.
        self.log.warning("outcome_not_committed", plan=job.plan_id, status=outcome.status)

    def _commit_outcome(self, job: Job, status: str, event: str, body: str) -> None:
        head = self._head = self._sync()
        self.index.scan(self.repo, head)
        state = self.index.plans.get(job.plan_id)
        if state is None:
            return
        run_text = job.plan_file.read_text(encoding="utf-8")
        execution = yamlio.read_yaml(run_text, str(job.plan_file)).data.get("execution")
        if self.config.remote is None:
            self._check_uncommitted(state, head)

        def mutate(text: str) -> str:
            text = yamlio.set_block(yamlio.read_yaml(text, state.file), "execution", execution)
            return _set_status(text, status)

        log_file = job.plan_file.with_name(LOG_NAME)
        extra = {f"{job.plan_id}/{LOG_NAME}": log_file.read_bytes()} if log_file.exists() else {}
        self._commit_plan(
            state.file,
            event,
            mutate,
            job.plan_hash,
            body,
            approved_by=str(job.approval.get("by") or "") or None,
            approval_commit=str(job.approval.get("commit") or "") or None,
            extra=extra,
        )

    def _after_outcome(self, job: Job, outcome: Any, status: str) -> None:
        self.log.info("plan_outcome", plan=job.plan_id, hash=job.plan_hash, status=outcome.status)
        if outcome.status == "awaiting_approval":
            self.index.set_job(job.plan_id, {**_job_data(job), "paused_gate": outcome.action})
        elif outcome.status != "stopped":
            self.index.set_job(job.plan_id, None)
            if self.config.remote is not None:
                shutil.rmtree(self.state.run_dir(job.plan_id), ignore_errors=True)

    def run_once(self) -> int:
        """Do all the work that needs no new input, then return 0 (``plangate run --once``)."""
        seen: dict[str, int] = {}
        for _ in range(1000):
            jobs = self.reconcile()
            jobs = [j for j in jobs if seen.get(j.plan_id, 0) < 3]
            if not jobs:
                return 0
            for job in jobs:
                seen[job.plan_id] = seen.get(job.plan_id, 0) + 1
                self.execute(job)
        return 0

    # --- reporting ----------------------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """Every plan the branch holds: status, hash, approver, last event, waiting reason."""
        with self._lock:
            try:
                self.index.scan(self.repo, self.head())
            except PlangateError as exc:
                self.last_error = str(exc)
                self.status_error = exc
            running, waiting = self.running(), dict(self._waiting)
            return [
                {
                    "plan": s.plan_id,
                    "file": s.file,
                    "status": s.status,
                    "file_status": s.file_status,
                    "hash": s.hash,
                    "frozen_hash": s.frozen_hash,
                    "approver": s.approver,
                    "last_event": s.last_event,
                    "last_commit": s.last_commit,
                    "running": s.plan_id in running,
                    "waiting": waiting.get(s.plan_id),
                    "notes": s.notes[-5:],
                }
                for s in sorted(self.index.plans.values(), key=lambda s: s.plan_id)
            ]


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _job_data(job: Job) -> dict[str, Any]:
    data = asdict(job)
    data["plan_file"] = str(job.plan_file)
    return data


def _without_execution(text: str) -> str:
    try:
        return yamlio.set_block(yamlio.read_yaml(text, "PLAN.yml"), "execution", None)
    except PlangateError:
        return text


def _set_status(text: str, status: str) -> str:
    return yamlio.set_scalar(yamlio.read_yaml(text, "PLAN.yml"), ("plan", "status"), status)


def _set_approval(record: dict[str, Any], status: str) -> Callable[[str], str | None]:
    def mutate(text: str) -> str | None:
        doc = yamlio.read_yaml(text, "PLAN.yml")
        plan = doc.data.get("plan") if isinstance(doc.data, dict) else None
        if not isinstance(plan, dict) or plan.get("status") != "approved":
            return None  # no longer an approval request: the next pass decides again
        return _set_status(yamlio.set_block(doc, "approval", record), status)

    return mutate


def _mark_invalid(loaded: plans.LoadedPlan) -> str:
    errors = [{"code": p.code, "message": p.message, "path": p.path} for p in loaded.problems]
    text = _set_status(loaded.text, "invalid")
    return yamlio.set_block(yamlio.read_yaml(text, "PLAN.yml"), "validation", {"errors": errors})


class UntrackedScanner:
    """Finds PLAN.yml files the branch does not hold without walking every plan folder.

    ``git status`` over 10,000 plan folders costs more than the whole approval budget, so
    only folders that are not plan folders (``plans/`` itself, grouping folders, new
    folders) are watched, and one is listed again only when its mtime changed: creating a
    folder or a file changes its parent's mtime.
    """

    def __init__(self, repo: Path, plans_dir: str) -> None:
        self.repo = repo
        self.root = plans_dir.strip("/") or "."
        self.mtimes: dict[str, int] = {}
        self.found: set[str] = set()
        self._children: dict[str, list[str]] = {}

    def scan(self, tracked_dirs: Container[str]) -> set[str]:
        pending = [self.root]
        seen: set[str] = set()
        while pending:
            folder = pending.pop()
            seen.add(folder)
            try:
                mtime = (self.repo / folder).stat().st_mtime_ns
            except OSError:
                continue
            if self.mtimes.get(folder) == mtime:
                pending += [d for d in self._children.get(folder, ()) if d not in tracked_dirs]
                continue
            self.mtimes[folder] = mtime
            pending += self._list(folder, tracked_dirs)
        self.mtimes = {k: v for k, v in self.mtimes.items() if k in seen}
        self.found = {f for f in self.found if (self.repo / f).is_file()}
        return {f for f in self.found if str(PurePosixPath(f).parent) not in tracked_dirs}

    def _list(self, folder: str, tracked_dirs: Container[str]) -> list[str]:
        subdirs: list[str] = []
        try:
            entries = list(os.scandir(self.repo / folder))
        except OSError:
            return subdirs
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder != "." else entry.name
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                subdirs.append(rel)
            elif entry.name in plans.PLAN_FILES and folder not in tracked_dirs and is_text(rel):
                self.found.add(rel)
        self._children[folder] = subdirs
        return [d for d in subdirs if d not in tracked_dirs]
